#!/usr/bin/env bash
# Smoke test of `vkimg bench` (not a timed test): it runs every kind of op on a
# small random image with validation on, and its JSON has the documented fields
# with positive times and a positive copy ceiling.
set -u
. "$(dirname "$0")/lib.sh"
vk=$1
check() { check_eval "$@"; }

need_device "$vk"
out=$("$vk" bench -f "gray,blur=2,boxblur=3,threshold=otsu,normalize,equalize" --size 97x61 --channels 4 --repeat 3 --validate --json 2>/tmp/vkimg-bench-err.$$)
rc=$?
check "bench exits 0 (stderr: $(cat /tmp/vkimg-bench-err.$$))" '[ $rc -eq 0 ]'
rm -f /tmp/vkimg-bench-err.$$
for f in '"version": 1' '"copy_ceiling_gbps"' '"ops": \[' '"name": "gray"' '"name": "blur"' '"name": "boxblur"' \
         '"pct_of_copy"' '"pipeline_create_ms"' '"staging_h2d_gbps"' '"upload_gbps"'; do
  check "bench JSON has $f" 'printf "%s" "$out" | grep -q "$f"'
done
check "copy ceiling positive" 'printf "%s" "$out" | grep -Eq "\"copy_ceiling_gbps\": [0-9]*\.?[0-9]*[1-9]"'
check "every op has a positive median" '! printf "%s" "$out" | grep -q "\"median_ms\": 0.000000"'
if command -v python3 >/dev/null; then
  check "bench JSON parses" 'printf "%s" "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); assert len(d[\"ops\"]) == 6"'
fi
text=$("$vk" bench -f blur=1 --size 33x17 --repeat 2 2>&1)
check "bench text has the table header" 'printf "%s" "$text" | grep -q "% of copy"'
"$vk" bench -f "blr=1" --size 8x8 >/dev/null 2>&1
check "bench with a bad pipeline exits 2" '[ $? -eq 2 ]'
"$vk" bench -f blur --size 0x8 >/dev/null 2>&1
check "bench with a bad size exits 2" '[ $? -eq 2 ]'
echo "test_bench: $pass passed, $fail failed"
[ $fail -eq 0 ]
