#!/usr/bin/env bash
for f in .gl/*.deb; do dpkg -x $f / ; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_CACHE_HOME=/tmp/vkc
V=build-gpu/vkimg
b() { "$V" bench -f "$1" --size ${SIZE:-7680x4320} --channels ${CH:-3} --repeat 30 --json | python3 -c '
import json,sys
for l in sys.stdin:
    d=json.loads(l); o=d["ops"][-1]
    print("%-40s %-14s ch=%d %8.4f ms %6.1f%% copy  read-once %.4f ms  x%.2f  copy %.0f GB/s" % (d["pipeline"][:40], sys.argv[1], d["channels"], d["total_median_ms"], o["pct_of_copy"], d["read_input_ms"], d["total_median_ms"]/d["read_input_ms"], d["copy_ceiling_gbps"]))' "${TAG:-}"; }
b copy
b mipmaps; CH=4 b mipmaps; CH=1 b mipmaps; VKIMG_MIPMAPS_FUSED=0 TAG=perlevel b mipmaps
b "mipmaps=levels=6"; SIZE=8192x4096 b mipmaps; SIZE=8192x4096 CH=4 b mipmaps
b "resize=25%"; CH=4 b "resize=25%"; b thumbnail=256; b "resize=50%"
