#!/usr/bin/env bash
# Every SPIR-V module vkimg embeds (build/spv/*.spv: the shaders and their variants, as
# optimized) is valid for Vulkan 1.2 and 1.3 by spirv-val, and none has an
# OpTypeSampledImage of Dim Buffer (a usamplerBuffer): SPIR-V 1.6 forbids it, and the
# validation layer under a Vulkan 1.4 driver (lavapipe 25) warned of it in every run of the
# texel passes, where Vulkan 1.3 drivers said nothing. spirv-val and spirv-dis come with
# spirv-tools (a dependency of glslang-tools).
#   test_spirv.sh SPV_DIR
set -uo pipefail
dir=$1
for t in spirv-val spirv-dis; do
  command -v $t >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
shopt -s nullglob
mods=()
for m in "$dir"/*.spv; do
  case $m in *.glslang.spv) ;; *) mods+=("$m") ;; esac # (glslang's output before spirv-opt)
done
pass=0 fail=0
for m in "${mods[@]}"; do
  for env in vulkan1.2 vulkan1.3; do
    if out=$(spirv-val --target-env $env "$m" 2>&1) && [ -z "$out" ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "FAIL: $(basename "$m") for $env: $out"
    fi
  done
  # the ids of the buffer image types, then any sampled image made of one
  bad=$(spirv-dis --raw-id "$m" | awk '
    $2 == "=" && $3 == "OpTypeImage" && $5 == "Buffer" { buf[$1] = 1 }
    $2 == "=" && $3 == "OpTypeSampledImage" && ($4 in buf) { print $1 }')
  if [ -z "$bad" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: $(basename "$m"): OpTypeSampledImage of a buffer image ($bad)"
  fi
done
[ $((pass + fail)) -gt 0 ] || { echo "FAIL: no modules in $dir"; exit 1; }
echo "test_spirv: $pass passed, $fail failed (${#mods[@]} modules)"
[ $fail = 0 ]
