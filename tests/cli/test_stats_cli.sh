#!/usr/bin/env bash
# CLI tests of `vkimg stats` and `vkimg compare`: output, JSON, exit codes
# (compare: 0 PASS, 1 WARNING, 2 FAILURE, 3 size/channel mismatch, 4 error),
# difference images. Usage: test_stats_cli.sh /path/to/vkimg
# Prints "test_stats_cli: N passed, N failed"; exit 1 on failure, 77 when
# there is no Vulkan device.
set -u
. "$(dirname "$0")/lib.sh"
V=${1:?usage: test_stats_cli.sh /path/to/vkimg}
T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-stats-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
check() { check_run "$@"; }
have_python=0
command -v python3 >/dev/null 2>&1 && have_python=1
json_ok() { # json_ok FILE PYTHON-EXPR-ON-d (grep fallback: FIELD)
    if [ $have_python = 1 ]; then
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"
    else
        grep -q "\"version\": 1" "$1"
    fi
}

# ---- test images: binary PNM written here, converted with `vkimg -f copy`
byte() { printf "\\$(printf %03o "$1")"; }
ppm() { # ppm W H SEED > file (RGB 8-bit)
    local w=$1 h=$2 s=$3 n=$(($1 * $2 * 3)) i
    printf 'P6\n%d %d\n255\n' "$w" "$h"
    for ((i = 0; i < n; i++)); do byte $(((i * 37 + s * 11 + (i / 7) * 13) % 256)); done
}
pgm() { # pgm W H > file (gray 8-bit)
    local n=$(($1 * $2)) i
    printf 'P5\n%d %d\n255\n' "$1" "$2"
    for ((i = 0; i < n; i++)); do byte $(((i * 53 + 5) % 256)); done
}
ppm16() { # the 8-bit ppm W H SEED as 16 bits (v * 257)
    local w=$1 h=$2 s=$3 n=$(($1 * $2 * 3)) i v
    printf 'P6\n%d %d\n65535\n' "$w" "$h"
    for ((i = 0; i < n; i++)); do
        v=$(((i * 37 + s * 11 + (i / 7) * 13) % 256))
        byte "$v"
        byte "$v"
    done
}
ppm 24 16 1 >"$T/a.ppm"
ppm 20 16 1 >"$T/small.ppm"
pgm 24 16 >"$T/g.pgm"
ppm16 24 16 1 >"$T/a16.ppm"

if ! "$V" devices >/dev/null 2>&1; then
    echo "no Vulkan device: skipped" >&2
    exit 77
fi
"$V" -i "$T/a.ppm" -o "$T/a.png" -f copy -q &&
    "$V" -i "$T/a.png" -o "$T/b.png" -f blur=1 -q &&
    "$V" -i "$T/small.ppm" -o "$T/small.png" -f copy -q &&
    "$V" -i "$T/g.pgm" -o "$T/g.png" -f copy -q &&
    "$V" -i "$T/a16.ppm" -o "$T/a16.png" -f copy -q
if [ $? -ne 0 ] || [ ! -s "$T/b.png" ] || [ ! -s "$T/a16.png" ]; then
    bad "making the test images with vkimg -f copy / blur=1"
    echo "test_stats_cli: $pass passed, $fail failed"
    exit 1
fi

# ---- stats
run_expect 0 "stats text" -- stats "$T/a.png"
check "stats text: size line" grep -q "24 x 16, 3 channels, 8-bit (u8)" "$T/out"
check "stats text: units said" grep -q "raw 8-bit sample values" "$T/out"
check "stats text: channel rows" grep -qE "^B +[0-9]+ +[0-9]+ +[0-9]+ " "$T/out"
run_expect 0 "stats --json" -- stats "$T/a.png" --json
check "stats --json: schema" json_ok "$T/out" \
    'd["version"] == 1 and d["width"] == 24 and d["height"] == 16 and d["channels"] == 3 and d["format"] == "u8" and len(d["channels_stats"]) == 3 and all(k in d["channels_stats"][0] for k in ("min", "max", "sum", "mean", "stddev")) and "histogram" not in d["channels_stats"][0] and isinstance(d["channels_stats"][0]["sum"], int)'
run_expect 0 "stats --json --histogram" -- stats "$T/a.png" --json --histogram
check "stats --json --histogram: 256 bins summing to the pixels" json_ok "$T/out" \
    'all(len(c["histogram"]) == 256 and sum(c["histogram"]) == 24 * 16 for c in d["channels_stats"])'
run_expect 0 "stats --histogram text" -- stats "$T/a.png" --histogram
check "stats --histogram text" grep -q "histogram 256 bins" "$T/out"
run_expect 0 "stats 16-bit" -- stats "$T/a16.png" --json
check "stats 16-bit: u16" json_ok "$T/out" 'd["format"] == "u16" and d["channels_stats"][0]["max"] > 255'
# the 16-bit copy (v * 257) has the same normalized mean as the 8-bit one
"$V" stats "$T/a.png" --json >"$T/s8" 2>/dev/null
check "stats: u8 and u16 (v*257) give the same normalized mean" json_ok "$T/out" \
    "abs(d['channels_stats'][1]['mean'] - json.load(open('$T/s8'))['channels_stats'][1]['mean']) < 1e-12"
run_expect 0 "stats --timing" -- stats "$T/a.png" --timing
check "stats --timing on stderr" grep -q "total" "$T/err"
run_expect 0 "stats --validate" -- stats "$T/g.png" --validate
run_expect 2 "stats without input" -- stats
run_expect 2 "stats unknown option" -- stats "$T/a.png" --bogus
run_expect 2 "stats two inputs" -- stats "$T/a.png" "$T/b.png"
run_expect 1 "stats missing file" -- stats "$T/nope.png"
check "stats missing file: one-line message" grep -q "^vkimg: " "$T/err"

# ---- compare: exit codes
run_expect 0 "compare identical" -- compare "$T/a.png" "$T/a.png"
check "compare identical: PASS" grep -qx "PASS" "$T/out"
check "compare identical: PSNR inf" grep -q "Peak SNR = inf" "$T/out"
run_expect 0 "compare u8 vs u16 of the same picture" -- compare "$T/a.png" "$T/a16.png"
run_expect 2 "compare blurred (default thresholds)" -- compare "$T/a.png" "$T/b.png"
check "compare blurred: FAILURE" grep -qx "FAILURE" "$T/out"
run_expect 1 "compare blurred, only warn" -- compare "$T/a.png" "$T/b.png" --fail 1 --warn 1e-6
check "compare warn: WARNING" grep -qx "WARNING" "$T/out"
run_expect 0 "compare blurred, percents 100" -- compare "$T/a.png" "$T/b.png" --failpercent 100 --warnpercent 100
run_expect 2 "compare blurred, hardfail" -- compare "$T/a.png" "$T/b.png" --failpercent 100 --warnpercent 100 --hardfail 0.001
run_expect 1 "compare blurred, hardwarn" -- compare "$T/a.png" "$T/b.png" --failpercent 100 --warnpercent 100 --hardwarn 0.001
run_expect 3 "compare different sizes" -- compare "$T/a.png" "$T/small.png"
check "compare mismatch: both sizes in the message" grep -q "24x16.*20x16" "$T/err"
run_expect 3 "compare different channels" -- compare "$T/a.png" "$T/g.png"
run_expect 3 "compare mismatch --json" -- compare "$T/a.png" "$T/small.png" --json
check "compare mismatch --json" json_ok "$T/out" 'd["verdict"] == "MISMATCH" and d["exit_code"] == 3'
run_expect 4 "compare missing file" -- compare "$T/a.png" "$T/nope.png"
run_expect 4 "compare one image" -- compare "$T/a.png"
run_expect 4 "compare unknown option" -- compare "$T/a.png" "$T/b.png" --bogus
run_expect 4 "compare bad number" -- compare "$T/a.png" "$T/b.png" --fail abc
run_expect 4 "compare bad percent" -- compare "$T/a.png" "$T/b.png" --failpercent 101
run_expect 4 "compare --diff-on-fail without --diff" -- compare "$T/a.png" "$T/b.png" --diff-on-fail
run_expect 4 "compare --diff unknown extension" -- compare "$T/a.png" "$T/b.png" --diff "$T/d.xyz"
run_expect 4 "compare --diff into a missing directory" -- compare "$T/a.png" "$T/b.png" --diff "$T/no/dir/d.png"

# ---- compare: JSON, SSIM, timing
run_expect 0 "compare identical --json --ssim" -- compare "$T/a.png" "$T/a.png" --json --ssim
check "compare --json identical" json_ok "$T/out" \
    'd["version"] == 1 and d["verdict"] == "PASS" and d["exit_code"] == 0 and d["psnr"] is None and d["mae"] == 0 and abs(d["ssim"] - 1) < 1e-6 and d["diff"] is None'
run_expect 2 "compare --json blurred" -- compare "$T/a.png" "$T/b.png" --json
check "compare --json blurred" json_ok "$T/out" \
    'd["verdict"] == "FAILURE" and d["exit_code"] == 2 and d["nfail"] > 0 and 0 < d["pct_fail"] <= 100 and d["psnr"] > 0 and d["max_error"] > 0 and d["ssim"] is None and d["hardfail"] is None'
run_expect 2 "compare --ssim --timing" -- compare "$T/a.png" "$T/b.png" --ssim --timing
check "compare --ssim prints SSIM" grep -q "SSIM = 0\." "$T/out"
check "compare --timing on stderr" grep -q "ssim (GPU)" "$T/err"
run_expect 0 "compare --validate" -- compare "$T/a.png" "$T/a.png" --validate --ssim

# ---- difference images
run_expect 2 "compare --diff" -- compare "$T/a.png" "$T/b.png" --diff "$T/d1.png" --scale 4
check "--diff writes the file" test -s "$T/d1.png"
run_expect 0 "stats of the diff image" -- stats "$T/d1.png" --json
check "diff image: 24x16x3 u8" json_ok "$T/out" 'd["width"] == 24 and d["channels"] == 3 and d["format"] == "u8" and d["channels_stats"][0]["max"] > 0'
run_expect 0 "compare identical --diff" -- compare "$T/a.png" "$T/a.png" --diff "$T/d0.png"
run_expect 0 "identical diff is all zero" -- stats "$T/d0.png" --json
check "identical diff: max 0" json_ok "$T/out" 'all(c["max"] == 0 for c in d["channels_stats"])'
run_expect 0 "--diff-on-fail when passing" -- compare "$T/a.png" "$T/a.png" --diff "$T/d2.png" --diff-on-fail
check "--diff-on-fail: no file when passing" test ! -e "$T/d2.png"
run_expect 1 "--diff-on-fail on a warning" -- compare "$T/a.png" "$T/b.png" --fail 1 --diff "$T/d3.png" --diff-on-fail
check "--diff-on-fail: no file on a warning" test ! -e "$T/d3.png"
run_expect 2 "--diff-on-fail when failing" -- compare "$T/a.png" "$T/b.png" --diff "$T/d4.png" --diff-on-fail
check "--diff-on-fail: file when failing" test -s "$T/d4.png"
run_expect 3 "--diff on a mismatch" -- compare "$T/a.png" "$T/small.png" --diff "$T/d5.png"
check "no diff file after a mismatch" test ! -e "$T/d5.png"
run_expect 4 "--diff with a missing input" -- compare "$T/a.png" "$T/nope.png" --diff "$T/d6.png"
check "no diff file after an error" test ! -e "$T/d6.png"
# nothing but the files named above is left in the directory (no temporaries)
extra=$(cd "$T" && ls -A | grep -vxE 'a\.ppm|small\.ppm|g\.pgm|a16\.ppm|a\.png|b\.png|small\.png|g\.png|a16\.png|d[014]\.png|out|err|s8')
check "no stray files ($extra)" test -z "$extra"

echo "test_stats_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
