#!/usr/bin/env bash
# Batch processing through the CLI: globs, directories, @lists, stdin lists,
# templates, collisions, shards (every input exactly once across N), a failing
# file does not stop the others, --fail-fast, --skip-existing, progress only on
# a TTY, JSON lines parse, and outputs do not depend on the thread count nor on
# the device (--device all). ctest also runs it with VKIMG_SPLIT_QUEUES=1 (the
# transfer-queue path of exec).
#   test_batch.sh /path/to/vkimg /path/to/source
set -u
. "$(dirname "$0")/lib.sh"
vk=$1 src=$2
check() { check_eval "$@"; }

need_device "$vk"
t=$(mktemp -d /tmp/vkimg-batch.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/in/sub" "$t/out"
# 7 small inputs (tiny PNGs made by vkimg itself from the samples)
n=0
for s in landscape logo-rgba gray16; do
  for f in "blur=1" copy; do
    n=$((n + 1))
    "$vk" -q -i "$src/images/$s.png" -o "$t/in/img$n.png" -f "$f" || bad "making input $n"
  done
done
"$vk" -q -i "$src/images/portrait.jpg" -o "$t/in/sub/deep.png" -f gray || bad "making sub/deep.png"
ninputs=6

# glob + directory output
"$vk" -q -i "$t/in/*.png" -o "$t/out/" -f gray
check "glob -> dir exit 0" '[ $? -eq 0 ]'
check "glob -> dir wrote $ninputs files" '[ $(ls "$t/out" | wc -l) -eq $ninputs ]'

# template with {stem} {ext} {index}; extension converts
rm -rf "$t/out"/*
"$vk" -q -i "$t/in" -o "$t/out/{stem}_{index}.jpg" -f gray
check "dir -> template exit 0" '[ $? -eq 0 ]'
check "template names" '[ -f "$t/out/img1_0.jpg" ] && [ -f "$t/out/img6_5.jpg" ]'
check "template output is JPEG" '[ "$(head -c 3 "$t/out/img1_0.jpg" | od -An -tx1 | tr -d " ")" = ffd8ff ]'
rm -rf "$t/out"/*
"$vk" -q -r -i "$t/in" -o "$t/out/{stem}.png" -f copy
check "--recursive finds sub/deep.png" '[ -f "$t/out/deep.png" ] && [ $(ls "$t/out" | wc -l) -eq $((ninputs + 1)) ]'

# a directory scan takes every Netpbm extension (.pbm .pgm .ppm .pnm .pam) and
# leaves other files alone; into a directory, a format vkimg does not write
# becomes {stem}.png (a .bmp, a .webp, a .tif and a .tiff stay as they are)
mkdir -p "$t/pnm" "$t/pnmout"
printf 'P4\n8 2\n\x5a\xa5' > "$t/pnm/a.pbm"
printf 'P5\n2 1\n255\n\x01\x02' > "$t/pnm/b.pgm"
printf 'P6\n1 1\n255\n\x01\x02\x03' > "$t/pnm/c.ppm"
printf 'P5\n1 1\n255\n\x07' > "$t/pnm/d.pnm"
printf 'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n\x01\x02\x03\x04' > "$t/pnm/e.pam"
printf 'not an image\n' > "$t/pnm/notes.txt"
"$vk" -q -i "$src/images/landscape.png" -o "$t/pnm/f.bmp" -f "resize=8x" || bad "making f.bmp"
"$vk" -q -i "$src/images/landscape.png" -o "$t/pnm/g.webp" -f "resize=8x" || bad "making g.webp"
"$vk" -q -i "$src/images/landscape.png" -o "$t/pnm/h.tif" -f "resize=8x" || bad "making h.tif"
"$vk" -q -i "$src/images/gray16.png" -o "$t/pnm/i.tiff" -f "resize=8x" || bad "making i.tiff"
"$vk" -q -i "$t/pnm" -o "$t/pnmout/" -f copy
check "Netpbm directory scan: exit 0" '[ $? -eq 0 ]'
check "Netpbm directory scan: the 9 images, not the text; PNG where vkimg writes no such format" \
  '[ "$(cd "$t/pnmout" && ls | tr "\n" " ")" = "a.png b.png c.png d.png e.png f.bmp g.webp h.tif i.tiff " ]'
check "the WebP written as WebP" '[ "$(head -c 4 "$t/pnmout/g.webp")$(tail -c +9 "$t/pnmout/g.webp" | head -c 4)" = RIFFWEBP ]'
check "the TIFFs written as TIFF, the 16-bit one as such" \
  '[ "$(head -c 4 "$t/pnmout/h.tif" | od -An -tx1 | tr -d " ")" = 49492a00 ] && "$vk" compare -q "$t/pnm/i.tiff" "$t/pnmout/i.tiff"'
check "the PAM's RGBA pixel written as an RGBA PNG of 1x1" \
  '[ "$(od -An -tx1 -j16 -N10 "$t/pnmout/e.png" | tr -d " \n")" = 00000001000000010806 ]'

# collisions are found before any work
rm -rf "$t/out"/*
err=$("$vk" -i "$t/in/img1.png" -i "$t/in/sub/deep.png" -i "$t/in/img2.png" -o "$t/out/same.png" -f gray 2>&1)
check "several inputs to one file: exit 2" '[ $? -eq 2 ]'
err=$("$vk" -i "$t/in/*.png" -o "$t/out/x.png" -f gray 2>&1)
check "glob to one file: exit 2" '[ $? -eq 2 ]'
err=$("$vk" -i "$t/in/img1.png" -i "$t/in/sub/../img1.png" -o "$t/out/{name}" -f gray 2>&1)
check "collision: exit 2" '[ $? -eq 2 ]'
check "collision message names both inputs" 'printf "%s" "$err" | grep -q "both map to output"'
check "nothing written after a collision" '[ -z "$(ls "$t/out")" ]'

# @list and stdin list
printf '%s\n' "$t/in/img1.png" "# a comment" "" "$t/in/img2.png" > "$t/list.txt"
"$vk" -q -i "@$t/list.txt" -o "$t/out/" -f gray
check "@list: 2 outputs" '[ $(ls "$t/out" | wc -l) -eq 2 ]'
rm -rf "$t/out"/*
ls "$t"/in/*.png | "$vk" -q -i - -o "$t/out/" -f gray
check "stdin list: $ninputs outputs" '[ $(ls "$t/out" | wc -l) -eq $ninputs ]'
# an image piped in where paths are read: a usage error that says so, nothing written
rm -rf "$t/out"/*
rc=0; "$vk" -i - -o "$t/out/" -f gray < "$t/in/img1.png" 2> "$t/err.txt" || rc=$?
check "image bytes on stdin: exit 2" '[ $rc -eq 2 ]'
check "image bytes on stdin: says so" 'grep -q "holds binary data, not paths" "$t/err.txt"'
check "image bytes on stdin: nothing written" '[ -z "$(ls "$t/out")" ]'
cp "$t/in/img1.png" "$t/bin-list.txt"
rc=0; "$vk" -i "@$t/bin-list.txt" -o "$t/out/" -f gray 2> "$t/err.txt" || rc=$?
check "image as @LIST: exit 2, says so" '[ $rc -eq 2 ] && grep -q "bin-list.txt: holds binary data" "$t/err.txt"'

# shards: every input exactly once over N, stable under reordering
for N in 1 3 4; do
  rm -rf "$t/out"/*
  for K in $(seq 1 $N); do "$vk" -q -i "$t/in/*.png" -o "$t/out/{stem}.$K.png" -f copy --shard $K/$N || true; done
  check "shards $N cover every input once" '[ $(ls "$t/out" | wc -l) -eq $ninputs ] && [ $(ls "$t/out" | sed "s/\..*//" | sort -u | wc -l) -eq $ninputs ]'
done
rm -rf "$t/out"/*
ls "$t"/in/*.png | sort -r | "$vk" -q -i - -o "$t/out/{stem}.{index}.png" -f copy --shard 2/3 || true
a=$(ls "$t/out" | sed 's/\..*//' | sort)
rm -rf "$t/out"/*
ls "$t"/in/*.png | "$vk" -q -i - -o "$t/out/{stem}.{index}.png" -f copy --shard 2/3 || true
b=$(ls "$t/out" | sed 's/\..*//' | sort)
check "shard membership independent of list order" '[ "$a" = "$b" ]'
"$vk" -i "$t/in/*.png" -o "$t/out/" -f copy --shard 4/3 >/dev/null 2>&1
check "--shard 4/3 is a usage error" '[ $? -eq 2 ]'
# the README's GNU parallel line: 4 shards, every input processed exactly once
rm -rf "$t/out"/*
if command -v parallel >/dev/null && command -v python3 >/dev/null; then
  jl=$(parallel -q --will-cite "$vk" -i "$t/in/*.png" -o "$t/out/" -f copy --json --shard {}/4 ::: 1 2 3 4 2>/dev/null)
  check "GNU parallel --shard {}/4: every input exactly once" 'printf "%s\n" "$jl" | python3 -c "
import collections, glob, json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
files = collections.Counter(r[\"input\"] for r in rows if \"input\" in r)
assert sorted(files) == sorted(glob.glob(\"$t/in/*.png\")) and set(files.values()) == {1}, files
"'
fi

# a bad file: reported, the others still done, exit 1; --fail-fast stops
rm -rf "$t/out"/*
mkdir -p "$t/mixed" && cp "$t"/in/img*.png "$t/mixed/" && echo "not an image" > "$t/mixed/img0.png"
out=$("$vk" -i "$t/mixed/*.png" -o "$t/out/" -f gray --threads 1 --json 2>"$t/err")
rc=$?
check "batch with a bad file exits 1" '[ $rc -eq 1 ]'
check "the good files were written" '[ $(ls "$t/out" | wc -l) -eq $ninputs ]'
check "no output for the bad file" '[ ! -e "$t/out/img0.png" ]'
check "the bad file is named on stderr" 'grep -q "img0.png" "$t/err"'
check "JSON: one line per file + summary" '[ $(printf "%s\n" "$out" | wc -l) -eq $((ninputs + 2)) ]'
check "python3 is installed (scripts/setup --test installs it)" 'command -v python3 >/dev/null'
check "GNU parallel is installed (scripts/setup --test installs it)" 'command -v parallel >/dev/null'
if command -v python3 >/dev/null; then
  check "JSON lines parse" 'printf "%s\n" "$out" | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
s = rows[-1][\"summary\"]
assert s[\"failed\"] == 1 and s[\"ok\"] == $ninputs, s
assert sum(r[\"status\"] == \"error\" for r in rows[:-1]) == 1
assert all(\"input\" in r and \"output\" in r for r in rows[:-1])
assert all((r[\"device\"] is None) == (r[\"status\"] == \"error\") for r in rows[:-1]), rows
"'
fi
rm -rf "$t/out"/*
# the batch takes the largest files first: make the bad one the largest
{ echo "not an image"; head -c 2000000 /dev/zero; } > "$t/mixed/img0.png"
"$vk" -q -i "$t/mixed/*.png" -o "$t/out/" -f gray --threads 1 --fail-fast 2>/dev/null
check "--fail-fast exits 1" '[ $? -eq 1 ]'
check "--fail-fast stops at the first failure (the largest file goes first)" '[ $(ls "$t/out" | wc -l) -eq 0 ]'

# --skip-existing leaves existing outputs alone
rm -rf "$t/out"/*
echo keep > "$t/out/img1.png"
"$vk" -q -i "$t/in/*.png" -o "$t/out/" -f gray --skip-existing
check "--skip-existing exit 0" '[ $? -eq 0 ]'
check "--skip-existing kept the file" '[ "$(cat "$t/out/img1.png")" = keep ]'

# progress: never when stderr is not a TTY; forced with --progress
err=$("$vk" -i "$t/in/*.png" -o "$t/out/{stem}.p.png" -f gray 2>&1 >/dev/null)
check "no progress line when stderr is not a TTY" '! printf "%s" "$err" | grep -q "MP/s"'
err=$("$vk" -i "$t/in/*.png" -o "$t/out/{stem}.q.png" -f gray --progress 2>&1 >/dev/null)
check "--progress forces it" 'printf "%s" "$err" | grep -q "MP/s"'

# same bytes whatever the thread count
mkdir -p "$t/o1" "$t/o4"
"$vk" -q -i "$t/in/*.png" -o "$t/o1/" -f "gray,blur=1.5" --threads 1
"$vk" -q -i "$t/in/*.png" -o "$t/o4/" -f "gray,blur=1.5" --threads 4 --gpu-inflight 3
check "deterministic across thread counts" 'diff -r "$t/o1" "$t/o4" >/dev/null'

# which queues: with VKIMG_SPLIT_QUEUES=1 the copies get their own submissions
if [ "${VKIMG_SPLIT_QUEUES:-0}" != 0 ]; then
  err=$("$vk" -v -i "$t/in/img1.png" -o "$t/out/v.png" -f gray 2>&1 >/dev/null)
  check "VKIMG_SPLIT_QUEUES=1: -v says the copies are on their own queue or submissions" \
    'printf "%s" "$err" | grep -Eq "queues: .*(VKIMG_SPLIT_QUEUES|transfer family)"'
fi

# --device all: every GPU, or the CPU devices (lavapipe) where there is none;
# the same bytes as the default device, and JSON says which device ran a file
want=$("$vk" devices | awk '
  /^[0-9]+: / { i = $1; sub(/:/, "", i); i += 0; n = i + 1 }
  /^   type / { type[i] = $2 " " $3; usable[i] = 1 }
  /not usable by vkimg/ { usable[i] = 0 }
  END {
    for (k = 0; k < n; k++) gpu += usable[k] && type[k] ~ /GPU/
    for (k = 0; k < n; k++) if (usable[k] && (type[k] ~ /GPU/) == (gpu > 0)) { printf "%s%d", sep, k; sep = "," }
  }')
mkdir -p "$t/oall"
out=$("$vk" -v -i "$t/in/*.png" -o "$t/oall/" -f "gray,blur=1.5" --device all --threads 4 --gpu-inflight 3 --json \
  2>"$t/err")
check "--device all exit 0" '[ $? -eq 0 ]'
check "--device all: the bytes of the default device" 'diff -r "$t/o1" "$t/oall" >/dev/null'
check "--device all uses devices $want" 'grep -q "device all: [0-9]* device(s) ($want)" "$t/err"'
if command -v python3 >/dev/null; then
  check "--device all: JSON names a device of $want for each file" 'printf "%s\n" "$out" | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin][:-1]
assert len(rows) == $ninputs and all(r[\"status\"] == \"ok\" for r in rows), rows
assert all(r[\"device\"] in [$want] for r in rows), rows
"'
fi
rm -rf "$t/out"/*
err=$("$vk" -i "$t/in/*.png" -o "$t/out/" -f gray --device bogus 2>&1)
check "--device bogus: exit 1 (a device error)" '[ $? -eq 1 ]'
check "--device bogus: said once, naming it" '[ $(printf "%s\n" "$err" | grep -c "device bogus: no usable device") -eq 1 ]'
check "--device bogus: nothing written" '[ -z "$(ls "$t/out")" ]'

# --no-cache: no pipeline cache written; without it one file appears
XDG_CACHE_HOME="$t/cache1" "$vk" -q -i "$t/in/img1.png" -o "$t/out/nc.png" -f gray --no-cache
check "--no-cache writes no pipeline cache" '[ ! -d "$t/cache1/vkimg" ]'
XDG_CACHE_HOME="$t/cache2" "$vk" -q -i "$t/in/img1.png" -o "$t/out/c.png" -f gray
check "the pipeline cache is written by default" '[ $(ls "$t/cache2/vkimg" | wc -l) -eq 1 ]'

# shrink-on-load: a JPEG decoded at 1/2..1/8 for a first thumbnail, whole with fast=false;
# the output's size is the geometry's of the file's size either way
if command -v python3 >/dev/null; then
  for f in "thumbnail=64" "thumbnail=64:fast=false" "resize=10%" "gray,resize=10%"; do
    out=$("$vk" -i "$src/images/portrait.jpg" -o "$t/out/sol.png" -f "$f" --json 2>&1)
    check "shrink-on-load $f exit 0" '[ $? -eq 0 ]'
    check "shrink-on-load $f: decoded size in the JSON" 'printf "%s\n" "$out" | F="$f" python3 -c "
import json, os, sys
r = json.loads(sys.stdin.readline())
shrunk = \"decoded_width\" in r
want = os.environ[\"F\"] in (\"thumbnail=64\", \"resize=10%\")
assert shrunk == want, r
if shrunk:
    assert r[\"decoded_width\"] * 8 >= r[\"width\"] and r[\"decoded_width\"] < r[\"width\"], r
"'
  done
  "$vk" -q -i "$src/images/portrait.jpg" -o "$t/out/sol1.png" -f "thumbnail=64"
  "$vk" -q -i "$src/images/portrait.jpg" -o "$t/out/sol2.png" -f "thumbnail=64:fast=false"
  size() { "$vk" stats "$1" --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["width"], r["height"])'; }
  check "shrink-on-load: the size of the exact thumbnail" '[ "$(size "$t/out/sol1.png")" = "43 64" ] && [ "$(size "$t/out/sol2.png")" = "43 64" ]'
  "$vk" compare "$t/out/sol1.png" "$t/out/sol2.png" --fail 0.05 --warn 0.05 >/dev/null
  check "shrink-on-load: within 0.05 of the exact thumbnail everywhere" '[ $? -eq 0 ]'
fi

# --jpeg-stages: JPEG's transform stages on the device (and its Huffman coding)
# give the same files as libjpeg-turbo doing them all (JPEG in and out, PNG out; a
# pipeline between)
if [ -f "$src/images/portrait.jpg" ]; then
  mkdir -p "$t/js"
  for f in copy "blur=2,gray"; do
    for ext in jpg png; do
      "$vk" -q -i "$src/images/portrait.jpg" -o "$t/js/host.$ext" -f "$f" --jpeg-stages host
      for where in transforms device; do
        "$vk" -q -i "$src/images/portrait.jpg" -o "$t/js/dev.$ext" -f "$f" --jpeg-stages $where
        check "--jpeg-stages $where = host ($f -> $ext)" 'cmp -s "$t/js/host.$ext" "$t/js/dev.$ext"'
      done
    done
  done
  "$vk" -vv -i "$src/images/portrait.jpg" -o "$t/js/dev.png" -f copy --jpeg-stages device 2>"$t/js/log"
  check "--jpeg-stages device: the device decodes the Huffman codes" \
    'grep -q "JPEG Huffman decoding: .* errors 0x0" "$t/js/log" && ! grep -q "the Huffman codes on the host" "$t/js/log"'
  # where the device does not synchronize in the rounds given, the host decodes the file: the same file
  "$vk" -q -i "$src/images/portrait.jpg" -o "$t/js/host.png" -f copy
  VKIMG_JPEG_SYNC_ROUNDS=2 VKIMG_JPEG_SYNC_BITS=64 "$vk" -vv -i "$src/images/portrait.jpg" -o "$t/js/dev.png" \
    -f copy --jpeg-stages device 2>"$t/js/log"
  check "--jpeg-stages device, not synchronized: decoded on the host, the same file" \
    '[ $? -eq 0 ] && grep -q "did not synchronize.*the Huffman codes on the host" "$t/js/log" && cmp -s "$t/js/host.png" "$t/js/dev.png"'
  # where the coded data would not fit the device's buffer for it, the same: the same file
  "$vk" -q -i "$src/images/portrait.jpg" -o "$t/js/host.jpg" -f "blur=2" --jpeg-stages host
  VKIMG_JPEG_CODED_MAX=100 "$vk" -vv -i "$src/images/portrait.jpg" -o "$t/js/dev.jpg" -f "blur=2" \
    --jpeg-stages device 2>"$t/js/log"
  check "--jpeg-stages device, coded data over its buffer: coded on the host, the same file" \
    '[ $? -eq 0 ] && grep -q "larger than the 100 bytes.*the Huffman codes on the host" "$t/js/log" && cmp -s "$t/js/host.jpg" "$t/js/dev.jpg"'
  "$vk" -q -i "$src/images/portrait.jpg" -o "$t/js/x.jpg" --jpeg-stages gpu 2>"$t/js/err"
  check "--jpeg-stages gpu: exit 2" '[ $? -eq 2 ] && grep -q "expected auto, host, transforms or device" "$t/js/err"'
fi

echo "test_batch: $pass passed, $fail failed"
[ $fail -eq 0 ]
