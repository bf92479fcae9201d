#!/usr/bin/env bash
# CLI tests of `vkimg compare` as a golden-image gate: --metric, --threshold, --aa,
# --ignore, --mask, --max-diff-pixels, --max-diff-ratio, --allow-size-mismatch, the
# identical-files shortcut, the JSON fields, directories (new, missing, failing,
# passing, errors, --fail-on-new, --json, --junit, --diff DIR, --report files) and
# --server (odiff's protocol). Exit codes: 0 PASS, 1 WARNING, 2 FAILURE, 3 size or
# channel mismatch, 4 error. Usage: test_compare_gate.sh /path/to/vkimg
# Prints "test_compare_gate: N passed, N failed"; exit 1 on failure, 77 without a
# Vulkan device or python3.
set -u
. "$(dirname "$0")/lib.sh"
V=${1:?usage: test_compare_gate.sh /path/to/vkimg}
T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-compare-gate.XXXXXX")
trap 'rm -rf "$T"' EXIT
check() { check_run "$@"; }
# py FILE EXPR: EXPR (python, on d = the JSON object in FILE, or L = its JSON lines) is true
py() {
    python3 -c "import json,sys
t=open(sys.argv[1]).read()
L=[json.loads(l) for l in t.splitlines() if l.strip()]
d=L[0] if L else None
sys.exit(0 if ($2) else 1)" "$1"
}
one_line_error() { [ "$(wc -l <"$T/err")" -ge 1 ] && grep -q '^vkimg: ' "$T/err"; }

if ! command -v python3 >/dev/null; then
    echo "python3 not found: skipped" >&2
    exit 77
fi
if ! "$V" devices >/dev/null 2>&1; then
    echo "no Vulkan device: skipped" >&2
    [ "${VKIMG_REQUIRE_DEVICE:-0}" != 0 ] && exit 1
    exit 77
fi

# ---- test images (PNG written by python: zlib, no other module)
python3 - "$T" <<'EOF'
import struct, sys, zlib, os
T = sys.argv[1]
def png(path, w, h, c, px):
    ct = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    raw = b''.join(b'\0' + bytes(px(x, y)[k] for x in range(w) for k in range(c)) for y in range(h))
    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    with open(os.path.join(T, path), 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, ct, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw, 9 if 'lvl9' in path else 1)) + chunk(b'IEND', b''))
def base(x, y):
    return ((x * 7 + y * 3) % 256, (x * 5) % 256, (y * 9) % 256, 255)
def block(x, y):  # a 4x3 block at (10, 8) changed
    return (255, 0, 0, 255) if 10 <= x <= 13 and 8 <= y <= 10 else base(x, y)
def faint(x, y):  # one level off everywhere (fails abs, passes yiq)
    r, g, b, a = base(x, y)
    return (r ^ 1, g, b, a)
png('a.png', 32, 24, 3, base)
png('a_lvl9.png', 32, 24, 3, base)           # the same pixels, other bytes
png('block.png', 32, 24, 3, block)
png('faint.png', 32, 24, 3, faint)
png('wide.png', 36, 24, 3, lambda x, y: base(x, y) if x < 32 else (0, 0, 0, 255))
png('a4.png', 32, 24, 4, base)                # RGBA, opaque: the same picture as a.png
png('g.png', 32, 24, 1, lambda x, y: (x * 8 % 256,) * 4)
png('mask.png', 32, 24, 1, lambda x, y: (255,) * 4 if 10 <= x <= 13 and 8 <= y <= 10 else (0,) * 4)
png('mask_small.png', 16, 16, 1, lambda x, y: (0,) * 4)
with open(os.path.join(T, 'broken.png'), 'wb') as f:
    f.write(b'\x89PNG\r\n\x1a\nnot really')
EOF
[ -s "$T/a.png" ] || { bad "making the test images"; echo "test_compare_gate: $pass passed, $fail failed"; exit 1; }
A=$T/a.png

# ---- identical files
run_expect 0 "identical files" -- compare "$A" "$A"
check "identical: said" grep -q "identical files" "$T/out"
check "identical: PASS" grep -qx "PASS" "$T/out"
run_expect 0 "identical --json" -- compare "$A" "$A" --json
check "identical --json" py "$T/out" 'd["identical"] is True and d["verdict"] == "PASS" and d["width"] == 32 and d["channels"] == 3 and d["ndiff"] == 0 and d["psnr"] is None'
run_expect 0 "identical, broken file: not decoded" -- compare "$T/broken.png" "$T/broken.png"
run_expect 0 "identical with --diff: decoded once, written" -- compare "$A" "$A" --diff "$T/d_ident.png"
check "identical --diff written" test -s "$T/d_ident.png"
run_expect 0 "same pixels, other bytes" -- compare "$A" "$T/a_lvl9.png" --json
check "same pixels, other bytes: decoded" py "$T/out" 'd["identical"] is False and d["mae"] == 0 and d["compared"] == 32 * 24'

# ---- --metric / --threshold / --aa
run_expect 2 "abs: one level off fails" -- compare "$A" "$T/faint.png"
run_expect 0 "yiq: one level off passes at 0.1" -- compare "$A" "$T/faint.png" --metric yiq
run_expect 2 "yiq: one level off fails at threshold 0" -- compare "$A" "$T/faint.png" --metric yiq --threshold 0
run_expect 2 "yiq: changed block" -- compare "$A" "$T/block.png" --metric yiq --json
check "yiq --json fields" py "$T/out" 'd["metric"] == "yiq" and abs(d["threshold"] - 0.1) < 1e-12 and d["aa"] is False and d["ndiff"] == 12 and d["naa"] == 0 and d["compared"] == 768 and d["ignored"] == 0 and d["outside"] == 0 and abs(d["diff_ratio"] - 12 / 768) < 1e-12 and d["mae"] is None and d["nfail"] == 12 and d["max_diff_pixels"] is None'
run_expect 2 "yiq --aa" -- compare "$A" "$T/block.png" --metric yiq --aa --json
check "yiq --aa: aa true, counts add up" py "$T/out" 'd["aa"] is True and d["ndiff"] + d["naa"] == 12'
run_expect 2 "yiq text" -- compare "$A" "$T/block.png" --metric yiq -t 0.3
check "yiq text: count" grep -q "12 pixels differ" "$T/out"
run_expect 0 "yiq: RGB vs RGBA of one picture" -- compare "$A" "$T/a4.png" --metric yiq
run_expect 3 "abs: RGB vs RGBA is a channel mismatch" -- compare "$A" "$T/a4.png"
run_expect 4 "--metric bogus" -- compare "$A" "$A" --metric mse
check "--metric bogus: one line" one_line_error
run_expect 4 "--threshold above 1" -- compare "$A" "$A" --metric yiq --threshold 1.5
run_expect 4 "--threshold without yiq" -- compare "$A" "$A" --threshold 0.2
run_expect 4 "--aa without yiq" -- compare "$A" "$A" --aa

# ---- --ignore / --mask
run_expect 0 "--ignore over the block" -- compare "$A" "$T/block.png" --ignore 10:8-13:10 --json
check "--ignore: ignored 12" py "$T/out" 'd["ignored"] == 12 and d["compared"] == 756 and d["nfail"] == 0'
run_expect 2 "--ignore missing a column" -- compare "$A" "$T/block.png" --ignore 10:8-12:10
run_expect 0 "--ignore repeated and listed" -- compare "$A" "$T/block.png" --metric yiq --ignore 10:8-11:10 --ignore 12:8-12:10,13:8-13:10
run_expect 0 "--ignore beyond the image is clipped" -- compare "$A" "$T/block.png" --ignore 5:5-1000:1000
for r in "10:8" "a:b-c:d" "10:8-9:10" "1:2-3:4;5" "1:2-3:4," "-1:0-2:2" "99999999999:0-1:1"; do
    run_expect 4 "--ignore '$r' refused" -- compare "$A" "$T/block.png" --ignore "$r"
done
check "--ignore refused: one line naming it" grep -q "^vkimg: compare: --ignore" "$T/err"
run_expect 0 "--mask over the block" -- compare "$A" "$T/block.png" --mask "$T/mask.png" --json
check "--mask: ignored 12" py "$T/out" 'd["ignored"] == 12'
run_expect 4 "--mask of another size" -- compare "$A" "$T/block.png" --mask "$T/mask_small.png"
check "--mask size: one line" grep -q "mask" "$T/err"
run_expect 4 "--mask missing" -- compare "$A" "$T/block.png" --mask "$T/nope.png"

# ---- budgets
run_expect 0 "--max-diff-pixels 12" -- compare "$A" "$T/block.png" --metric yiq --max-diff-pixels 12
run_expect 2 "--max-diff-pixels 11" -- compare "$A" "$T/block.png" --metric yiq --max-diff-pixels 11
run_expect 0 "--max-diff-ratio 0.02 (12/768 = 0.0156)" -- compare "$A" "$T/block.png" --max-diff-ratio 0.02 --json
check "--max-diff-ratio in JSON" py "$T/out" 'd["max_diff_ratio"] == 0.02 and d["verdict"] == "PASS"'
run_expect 2 "--max-diff-ratio 0.01" -- compare "$A" "$T/block.png" --max-diff-ratio 0.01
run_expect 4 "--max-diff-ratio 2" -- compare "$A" "$T/block.png" --max-diff-ratio 2
run_expect 4 "--max-diff-pixels -1" -- compare "$A" "$T/block.png" --max-diff-pixels -1
# idiff's options still rule without a budget
run_expect 1 "--fail 1 --warn 0: WARNING" -- compare "$A" "$T/block.png" --fail 1 --warn 0
run_expect 0 "--failpercent/--warnpercent 2" -- compare "$A" "$T/block.png" --failpercent 2 --warnpercent 2

# ---- sizes
run_expect 3 "sizes differ" -- compare "$A" "$T/wide.png"
run_expect 2 "--allow-size-mismatch" -- compare "$A" "$T/wide.png" --allow-size-mismatch --json
check "--allow-size-mismatch: outside counted" py "$T/out" 'd["outside"] == 4 * 24 and d["ndiff"] == 96 and d["width"] == 36 and d["size_b"] == [36, 24, 3]'
run_expect 0 "--allow-size-mismatch with a budget" -- compare "$A" "$T/wide.png" --allow-size-mismatch --max-diff-pixels 96
run_expect 3 "channels differ even with --allow-size-mismatch (abs)" -- compare "$A" "$T/g.png" --allow-size-mismatch

# ---- difference images (yiq: RGBA)
run_expect 2 "yiq --diff" -- compare "$A" "$T/block.png" --metric yiq --diff "$T/dy.png"
"$V" stats "$T/dy.png" --json >"$T/s" 2>/dev/null
check "yiq diff: 32x24 RGBA" py "$T/s" 'd["width"] == 32 and d["channels"] == 4'
# the picture over the second image's memory (one pair) and in its own (a directory's pair): the same pixels
mkdir -p "$T/dy-e" "$T/dy-a"
cp "$A" "$T/dy-e/x.png" && cp "$T/block.png" "$T/dy-a/x.png"
run_expect 2 "yiq --diff DIR" -- compare "$T/dy-e" "$T/dy-a" --metric yiq --diff "$T/dy-d"
run_expect 0 "yiq diff over B = in its own memory" -- compare "$T/dy.png" "$T/dy-d/x.png"
run_expect 2 "yiq --diff .bmp" -- compare "$A" "$T/block.png" --metric yiq --diff "$T/dy.bmp"
run_expect 0 "yiq diff .bmp = .png" -- compare "$T/dy.bmp" "$T/dy-d/x.png"
# a float format: the palette's colours, then floats (the same pixels within float rounding)
run_expect 2 "yiq --diff .hdr" -- compare "$A" "$T/block.png" --metric yiq --diff "$T/dy.hdr"
"$V" stats "$T/dy.hdr" --json >"$T/s" 2>/dev/null
check "yiq diff .hdr: 32x24, 3 channels" py "$T/s" 'd["width"] == 32 and d["height"] == 24 and d["channels"] == 3'

# ---- usage
run_expect 4 "a directory and a file" -- compare "$T" "$A"
run_expect 4 "--junit with two images" -- compare "$A" "$A" --junit "$T/j.xml"
run_expect 4 "--server with files" -- compare --server "$A" "$A"
run_expect 4 "three positionals" -- compare "$A" "$A" "$A"
"$V" compare --help >"$T/help" 2>&1
for o in --ignore --mask --max-diff-pixels --max-diff-ratio --metric --threshold --aa --allow-size-mismatch --fail-on-new --junit --report --server; do
    check "--help lists $o" grep -q -- "$o" "$T/help"
done

# ---- directories
E=$T/expected
Ac=$T/actual
mkdir -p "$E/sub dir" "$Ac/sub dir"
cp "$A" "$E/same.png" && cp "$A" "$Ac/same.png"
cp "$A" "$E/repacked.png" && cp "$T/a_lvl9.png" "$Ac/repacked.png"
cp "$A" "$E/sub dir/block.png" && cp "$T/block.png" "$Ac/sub dir/block.png"
cp "$A" "$E/gone.png"
cp "$A" "$Ac/new.png"
weird='q&<>"'"'"'x.png'
cp "$A" "$E/$weird" && cp "$T/faint.png" "$Ac/$weird"
cp "$A" "$E/notes.txt" # not an image: left out
run_expect 2 "directories: worst pair FAILURE" -- compare "$E" "$Ac"
check "directories: summary line" grep -q "^FAILURE: 6 pairs: 2 passed (1 identical files), 0 warnings, 2 failed, 0 size/channel mismatches, 0 errors; 1 new.*1 missing" "$T/out"
check "directories: new and missing said" grep -q "^NEW *new.png" "$T/out"
check "directories: missing said" grep -q "^MISSING *gone.png" "$T/out"
run_expect 2 "directories --json" -- compare "$E" "$Ac" --json
check "directories --json: objects in order, then the summary" py "$T/out" '[x.get("name") for x in L[:-1]] == ["gone.png", "new.png", "q&<>\"'"'"'x.png", "repacked.png", "same.png", "sub dir/block.png"] and [x["verdict"] for x in L[:-1]] == ["MISSING", "NEW", "FAILURE", "PASS", "PASS", "FAILURE"] and L[-1]["summary"]["pairs"] == 6 and L[-1]["summary"]["exit_code"] == 2 and L[-1]["summary"]["identical"] == 1 and L[-1]["summary"]["new"] == 1 and L[-1]["summary"]["missing"] == 1 and L[4]["identical"] is True and L[3]["identical"] is False'
rm "$E/gone.png" "$E/$weird" "$Ac/$weird" "$Ac/sub dir/block.png" "$E/sub dir/block.png"
run_expect 0 "directories: a new file passes" -- compare "$E" "$Ac"
run_expect 2 "directories: --fail-on-new" -- compare "$E" "$Ac" --fail-on-new --json
check "--fail-on-new: NEW exits 2" py "$T/out" 'L[0]["verdict"] == "NEW" and L[0]["exit_code"] == 2 and L[-1]["summary"]["fail_on_new"] is True'
rm "$Ac/new.png"
cp "$T/faint.png" "$Ac/same.png"
run_expect 1 "directories: worst pair WARNING" -- compare "$E" "$Ac" --fail 1 --warn 0
cp "$T/wide.png" "$Ac/same.png"
run_expect 3 "directories: worst pair MISMATCH" -- compare "$E" "$Ac"
cp "$T/broken.png" "$Ac/repacked.png"
run_expect 4 "directories: worst pair ERROR" -- compare "$E" "$Ac" --json
check "directories: error object and line" py "$T/out" 'any(x.get("verdict") == "ERROR" and "repacked.png" in x["error"] for x in L)'
check "directories: error on stderr names the file" grep -q "^vkimg: .*repacked.png" "$T/err"
run_expect 4 "directories: no images at all" -- compare "$T/sub-none-a" "$T/sub-none-b"
mkdir -p "$T/empty1" "$T/empty2"
run_expect 4 "directories: both empty" -- compare "$T/empty1" "$T/empty2"

# ---- directories: --diff DIR, --junit (escaped, parsed), --report files
rm -rf "$E" "$Ac"
mkdir -p "$E/s" "$Ac/s"
cp "$A" "$E/ok.png" && cp "$A" "$Ac/ok.png"
cp "$A" "$E/same-pixels.png" && cp "$T/a_lvl9.png" "$Ac/same-pixels.png" # other bytes: decoded, equal
cp "$A" "$E/s/bad.png" && cp "$T/block.png" "$Ac/s/bad.png"
cp "$A" "$E/$weird" && cp "$T/block.png" "$Ac/$weird"
cp "$A" "$E/only-e.png"
cp "$A" "$Ac/only-a.png"
run_expect 2 "directories --diff --junit --report" -- compare "$E" "$Ac" --metric yiq --diff "$T/diffs" --junit "$T/junit.xml" --report "$T/report"
check "--diff DIR: failing pair's image" test -s "$T/diffs/s/bad.png"
check "--diff DIR: odd name's image" test -s "$T/diffs/$weird"
check "--diff DIR: none for a passing pair" test ! -e "$T/diffs/ok.png"
check "--diff DIR: none for a pair of the same pixels in other bytes" test ! -e "$T/diffs/same-pixels.png"
check "--junit: valid XML, one testcase per pair, failures with metrics" python3 -c "
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
cases = {c.get('name'): c for c in r.iter('testcase')}
assert set(cases) == {'ok.png', 'same-pixels.png', 's/bad.png', sys.argv[2], 'only-e.png', 'only-a.png'}, cases
assert r.get('tests') == '6' and r.get('failures') == '3' and r.get('errors') == '0', r.attrib
f = cases['s/bad.png'].find('failure')
assert f is not None and f.get('type') == 'FAILURE' and '12 pixels differ' in f.get('message') and 'ndiff: 12' in f.text
assert cases[sys.argv[2]].find('failure') is not None
assert cases['only-e.png'].find('failure').get('type') == 'MISSING'
assert cases['only-a.png'].find('skipped') is not None
assert cases['ok.png'].find('failure') is None
assert cases['same-pixels.png'].find('failure') is None
" "$T/junit.xml" "$weird"
check "--report: index.html" test -s "$T/report/index.html"
check "--report: the failing pair's three images" test -s "$T/report/img/4-expected.png" -a -s "$T/report/img/4-actual.png" -a -s "$T/report/img/4-diff.png"
check "--report: no network resource" bash -c "! grep -Eiq '(src|href)=\"(https?:)?//' '$T/report/index.html'"
check "--report: the odd name escaped" grep -q 'q&amp;&lt;&gt;&quot;&#39;x.png' "$T/report/index.html"
check "--report: no temporary files left" bash -c "! ls -A '$T/report' '$T/report/img' '$T/diffs' | grep -q '\.tmp$'"
run_expect 4 "--diff DIR that is a file" -- compare "$E" "$Ac" --diff "$A"

# ---- --server
cat >"$T/req" <<EOF
{"requestId": 1, "base": "$A", "compare": "$T/block.png", "output": "$T/s1.png"}
{"requestId": 2, "base": "$A", "compare": "$A", "output": "$T/s2.png"}
this is not json
{"requestId": 3, "base": "$T/nope.png", "compare": "$A", "output": "$T/s3.png"}
{"requestId": 4, "base": "$A", "compare": "$T/block.png", "output": "$T/s4.png", "options": {"threshold": 0.3, "antialiasing": true, "ignoreRegions": [{"x1": 10, "y1": 8, "x2": 13, "y2": 9}], "captureDiffLines": true, "captureDiffCols": true}}
{"requestId": 5, "base": "$A", "compare": "$T/wide.png", "output": "$T/s5.png", "options": {"failOnLayoutDiff": true}}
{"requestId": 6, "base": "$A", "compare": "$T/wide.png", "output": "$T/s6.png"}
{"requestId": "seven", "base": "$A"}
{"requestId": 8, "base": "$A", "compare": "$A", "output": "$T/s8.png", "options": {"ignoreRegions": [{"x1": 1}]}}
{"requestId": 9, "base": "$A", "compare": "$A", "output": "$T/s9.png", "options": {"threshold": "high"}}
[1, 2

{"requestId": 10, "output": "$T/s10.png"}
EOF
python3 -c "print('{\"requestId\": 11, \"pad\": \"' + 'x' * 2000000 + '\"}')" >>"$T/req"
echo '{"requestId": 12, "base": "'"$A"'", "compare": "'"$T/faint.png"'", "output": "'"$T/s12.png"'", "options": {"threshold": 0}}' >>"$T/req"
printf '{"requestId": 13, "base": "%s", "compare": "%s", "output": "%s"}' "$A" "$T/block.png" "$T/s13.png" >>"$T/req" # no newline at EOF
"$V" compare --server <"$T/req" >"$T/srv" 2>"$T/srverr"
check "--server: exit 0 at EOF" test $? -eq 0
check "--server: one answer per line" py "$T/srv" '
len(L) == 16 and L[0] == {"ready": True} and
L[1] == {"requestId": 1, "match": False, "reason": "pixel-diff", "diffCount": 12, "diffPercentage": 1.56} and
L[2] == {"requestId": 2, "match": True} and
"error" in L[3] and "requestId" not in L[3] and
L[4]["requestId"] == 3 and L[4]["error"].startswith("Could not load base image: ") and
L[5]["diffCount"] == 4 and L[5]["diffLines"] == [10] and L[5]["diffCols"] == [10, 11, 12, 13] and
L[6] == {"requestId": 5, "match": False, "reason": "layout-diff"} and
L[7]["diffCount"] == 96 and L[7]["diffPercentage"] == 11.11 and
L[8] == {"error": "requestId must be an integer"} and
L[9]["requestId"] == 8 and "y1" in L[9]["error"] and
L[10]["requestId"] == 9 and "threshold" in L[10]["error"] and
"Invalid JSON" in L[11]["error"] and
L[12]["requestId"] == 10 and "base" in L[12]["error"] and
"too long" in L[13]["error"] and
L[14]["requestId"] == 12 and L[14]["diffCount"] == 768'
check "--server: the last line without a newline is answered" bash -c "tail -c 200 '$T/srv' | grep -q '\"requestId\":13'"
check "--server: diff images only where pixels differ" test -s "$T/s1.png" -a ! -e "$T/s2.png" -a -s "$T/s4.png"
# buffers (odiff's compareBuffers): the line, then the two files' bytes
{
    printf '{"requestId": 21, "type": "buffer", "baseLength": %d, "baseFormat": "png", "compareLength": %d, "compareFormat": "png", "output": "%s"}\n' \
        "$(stat -c %s "$A")" "$(stat -c %s "$T/block.png")" "$T/s21.png"
    cat "$A" "$T/block.png"
    echo '{"requestId": 22, "base": "'"$A"'", "compare": "'"$A"'", "output": "'"$T/s22.png"'"}'
} | "$V" compare --server >"$T/srv2" 2>&1
check "--server: buffer requests" py "$T/srv2" 'L[1]["requestId"] == 21 and L[1]["diffCount"] == 12 and L[2] == {"requestId": 22, "match": True}'
"$V" compare --server </dev/null >"$T/srv3" 2>&1
check "--server: empty input: ready, exit 0" test $? -eq 0 -a "$(cat "$T/srv3")" = '{"ready":true}'

echo "test_compare_gate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
