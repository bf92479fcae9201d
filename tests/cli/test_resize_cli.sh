#!/usr/bin/env bash
# CLI tests of resize, thumbnail and mipmaps: output sizes (read back with
# `vkimg stats --json`), mip levels to a {level} template (one file per level,
# none left when a level can't be written) and to one .ktx2 file (header fields
# read with od), and the usage errors.
#
#   test_resize_cli.sh /path/to/vkimg /path/to/source
#
# Prints "test_resize_cli: N passed, N failed"; exits 1 if any failed, 77
# (skipped) when there is no Vulkan device at all, unless VKIMG_REQUIRE_DEVICE=1.
set -u
. "$(dirname "$0")/lib.sh"

VK=${1:?usage: test_resize_cli.sh /path/to/vkimg /path/to/source}
SRC=${2:?usage: test_resize_cli.sh /path/to/vkimg /path/to/source}
case $VK in /*) ;; *) VK=$PWD/$VK ;; esac
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
[ -x "$VK" ] || { echo "test_resize_cli: $VK is not an executable" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-test-resize-cli.XXXXXX") || exit 1
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || exit 1

check() { check_run "$@"; }
rc=0
run() { # CMD...: sets $rc; stdout in $T/stdout, stderr in $T/stderr
  "$@" >"$T/stdout" 2>"$T/stderr"
  rc=$?
}
show() { printf '\n    stderr: %s' "$(head -c 600 "$T/stderr")"; }
expect_rc() { # NAME WANT
  if [ "$rc" -eq "$2" ]; then ok; else bad "$1: exit $rc, want $2$(show)"; fi
}
expect_err() { # NAME TEXT: stderr contains TEXT (case-insensitive)
  if grep -qiF -- "$2" "$T/stderr"; then ok; else bad "$1: stderr lacks '$2'$(show)"; fi
}
no_temp() { [ -z "$(find "$1" -name '.*.vkimg-*' 2>/dev/null)" ]; }
# The size of an image file as WxH (vkimg stats --json).
size_of() {
  "$VK" stats --json "$1" 2>/dev/null | sed -n 's/.*"width": \([0-9]*\), "height": \([0-9]*\).*/\1x\2/p'
}
expect_size() { # NAME FILE WxH
  local got
  got=$(size_of "$2")
  if [ "$got" = "$3" ]; then ok; else bad "$1: $2 is '${got:-unreadable}', want $3"; fi
}
# KTX2 header: identifier (12 bytes), then vkFormat, typeSize, pixelWidth,
# pixelHeight, pixelDepth, layerCount, faceCount, levelCount (uint32 LE).
ktx_id() { od -An -tx1 -N12 "$1" | tr -d ' \n'; }
ktx_fields() { od -An -tu4 -j12 -N32 "$1" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

# Is there a device at all?
if ! "$VK" devices >/dev/null 2>&1; then
  req=${VKIMG_REQUIRE_DEVICE:-}
  echo "test_resize_cli: no Vulkan device" >&2
  [ -n "$req" ] && [ "$req" != 0 ] && exit 1
  exit 77
fi

mkdir -p in
for f in landscape.png portrait.jpg logo-rgba.png gray16.png; do
  if [ -f "$SRC/images/$f" ]; then cp "$SRC/images/$f" in/; else bad "sample $SRC/images/$f is missing"; fi
done
L=in/landscape.png # 640x400 RGB
check "landscape.png is 640x400" [ "$(size_of $L)" = 640x400 ]

# ---------------------------------------------------------------- resize
# sizes as ImageMagick rounds them (29% of 640 is 185.6 -> 186; 100x100 fits 100x62.5 -> 63)
for c in "resize=50%:320x200" "resize=29%:186x116" "resize=x7:11x7" "resize=100x100:100x63" \
  "resize=100x100^:160x100" "resize=100x100!:100x100" "resize=1000x1000>:640x400" \
  "resize=10x10<:640x400" "resize=64:64x40" "resize=16x1!:16x1" "resize=1%:6x4"; do
  f=${c%:*} want=${c##*:}
  run "$VK" -i $L -o o.png -f "$f"
  expect_rc "-f $f" 0
  expect_size "-f $f" o.png "$want"
done
run "$VK" -i $L -o small.png -f "resize=8x5!:filter=box"
run "$VK" -i small.png -o o.png -f "resize=1600%:filter=nearest"
expect_rc "resize=1600%" 0
expect_size "resize=1600% of 8x5" o.png 128x80
run "$VK" -i $L -o o.png -f "resize=1000x1000>:filter=mitchell"
expect_rc "resize that leaves the image as it is" 0
run "$VK" compare $L o.png --fail 0
expect_rc "resize=1000x1000> leaves the pixels as they are (mitchell would blur)" 0
run "$VK" -i in/logo-rgba.png -o o.png -f "gray,resize=33x17!:filter=catrom:linear=true,blur=1"
expect_rc "gray,resize,blur on RGBA" 0
expect_size "gray,resize,blur on RGBA" o.png 33x17
run "$VK" -i $L -o o.png -f "resize=0x10"
expect_rc "resize=0x10 is a usage error" 2
run "$VK" -i $L -o o.png -f "resize"
expect_rc "resize without a size is a usage error" 2

# ---------------------------------------------------------------- thumbnail
for c in "thumbnail=256:256x160" "thumbnail=256x100:160x100" "thumbnail=96x:96x60" "thumbnail=x100:160x100" \
  "thumbnail=100x100:crop=centre:100x100" "thumbnail=1000>:640x400" "thumbnail=100<:640x400" \
  "thumbnail=50x50!:50x50" "thumbnail=1000:1000x625"; do
  f=${c%:*} want=${c##*:}
  run "$VK" -i $L -o o.png -f "$f"
  expect_rc "-f $f" 0
  expect_size "-f $f" o.png "$want"
done
# a JPEG shrunk on load (1/4 of 400x600 for a thumbnail 9x smaller): the size of the file's thumbnail
run "$VK" -i in/portrait.jpg -o o.png -f thumbnail=64
expect_rc "thumbnail=64 of a JPEG" 0
expect_size "thumbnail=64 of a 400x600 JPEG" o.png 43x64
run "$VK" -i in/portrait.jpg -o o.png -f thumbnail=64:fast=false
expect_size "thumbnail=64:fast=false of a 400x600 JPEG" o.png 43x64
run "$VK" -i in/portrait.jpg -o o.jpg -f "thumbnail=50x50:crop=centre"
expect_size "thumbnail crop=centre of a JPEG" o.jpg 50x50
run "$VK" -i in/logo-rgba.png -o o.png -f thumbnail=17
expect_size "thumbnail=17 of 256x256 RGBA" o.png 17x17
run "$VK" -i $L -o o.png -f thumbnail=50%
expect_rc "thumbnail=50% is a usage error (resize takes percentages)" 2

# ---------------------------------------------------------------- mipmaps
mkdir -p mip
run "$VK" -i $L -o 'mip/t_{level}.png' -f mipmaps
expect_rc "mipmaps to a {level} template" 0
k=0
for s in 640x400 320x200 160x100 80x50 40x25 20x12 10x6 5x3 2x1 1x1; do
  expect_size "mipmaps level $k" "mip/t_$k.png" "$s"
  k=$((k + 1))
done
check "no level past 1x1" [ ! -e mip/t_10.png ]
# level 0 is the input as it is (taken from the input, not written by the device)
run "$VK" compare $L mip/t_0.png --fail 0
expect_rc "mipmaps level 0 has the input's pixels" 0
check "no temporary file after the levels" no_temp mip

mkdir -p mip4
run "$VK" -i in/logo-rgba.png -o 'mip4/{stem}_{level}.png' -f mipmaps=levels=4:filter=lanczos3
expect_rc "mipmaps=levels=4:filter=lanczos3" 0
check "levels=4 writes 4 files" [ "$(ls mip4 | wc -l)" -eq 4 ]
expect_size "levels=4: level 3" mip4/logo-rgba_3.png 32x32
run "$VK" compare in/logo-rgba.png mip4/logo-rgba_0.png --fail 0
expect_rc "mipmaps level 0 of RGBA has the input's pixels" 0

run "$VK" -i $L -o t.ktx2 -f mipmaps
expect_rc "mipmaps to .ktx2" 0
check "the .ktx2 has the KTX 2.0 identifier" [ "$(ktx_id t.ktx2)" = ab4b5458203230bb0d0a1a0a ]
check "the .ktx2 header: R8G8B8_UNORM (23), 640x400, 10 levels" [ "$(ktx_fields t.ktx2)" = "23 1 640 400 0 0 1 10" ]
run "$VK" -i in/gray16.png -o g.ktx2 -f mipmaps=levels=4
expect_rc "16-bit gray mipmaps to .ktx2" 0
check "the .ktx2 header: R16_UNORM (70), 320x240, 4 levels" [ "$(ktx_fields g.ktx2)" = "70 2 320 240 0 0 1 4" ]
run "$VK" -i in/logo-rgba.png -o r.ktx2 -f resize=50%
expect_rc "one image to .ktx2" 0
check "one image: R8G8B8A8_UNORM (37), 128x128, 1 level" [ "$(ktx_fields r.ktx2)" = "37 1 128 128 0 0 1 1" ]

run "$VK" -i $L -o mip/plain.png -f mipmaps
expect_rc "mipmaps to one PNG is a usage error" 2
expect_err "mipmaps to one PNG says what to do" "{level}"
check "nothing written for it" [ ! -e mip/plain.png ]
run "$VK" -i $L -o 'mip/x_{level}.png' -f mipmaps,gray
expect_rc "mipmaps not last is a usage error" 2

# a level that can't be written: none of the levels stays
mkdir -p lv/0
run "$VK" -i $L -o 'lv/{level}/t.png' -f mipmaps
expect_rc "a level into a missing directory" 1
check "level 0 not written when level 1 failed" [ ! -e lv/0/t.png ]
check "no temporary file left" no_temp lv
# ... and the files that were there stay as they were
mkdir -p lv2/0 lv2/1 && echo old0 > lv2/0/t.png && echo old1 > lv2/1/t.png
run "$VK" -i $L -o 'lv2/{level}/t.png' -f mipmaps
expect_rc "a level into a missing directory, earlier levels existing" 1
check "existing level files untouched" [ "$(cat lv2/0/t.png)$(cat lv2/1/t.png)" = old0old1 ]
check "no temporary file left there" no_temp lv2

echo "test_resize_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
