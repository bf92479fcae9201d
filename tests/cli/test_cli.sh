#!/usr/bin/env bash
# CLI tests of the built binary: exit codes, messages, outputs, and that a failure
# leaves no output and no temporary file behind (and an existing output untouched).
#
#   test_cli.sh /path/to/vkimg /path/to/source
#
# Prints "test_cli: N passed, N failed"; exits 1 if any failed, 77 (skipped) when
# there is no Vulkan device at all, unless VKIMG_REQUIRE_DEVICE=1 (then 1).
set -u
. "$(dirname "$0")/lib.sh"

VK=${1:?usage: test_cli.sh /path/to/vkimg /path/to/source}
SRC=${2:?usage: test_cli.sh /path/to/vkimg /path/to/source}
case $VK in /*) ;; *) VK=$PWD/$VK ;; esac
[ -x "$VK" ] || { echo "test_cli: $VK is not an executable" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-test-cli.XXXXXX") || exit 1
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || exit 1

check() { check_run "$@"; }
# run CMD...: runs it, sets $rc; stdout in $T/stdout, stderr in $T/stderr
rc=0
run() {
  "$@" >"$T/stdout" 2>"$T/stderr"
  rc=$?
}
show() { # the captured stderr, for failure messages
  printf '\n    stderr: %s' "$(head -c 800 "$T/stderr" | sed '2,$s/^/            /')"
}
expect_rc() { # NAME WANT
  if [ "$rc" -eq "$2" ]; then ok; else bad "$1: exit $rc, want $2$(show)"; fi
}
has() { grep -qiF -- "$2" "$1"; }
expect_err() { # NAME TEXT: stderr contains TEXT (case-insensitive)
  if has "$T/stderr" "$2"; then ok; else bad "$1: stderr lacks '$2'$(show)"; fi
}
expect_out() { # NAME TEXT: stdout contains TEXT (case-insensitive)
  if has "$T/stdout" "$2"; then ok; else bad "$1: stdout lacks '$2'$(printf '\n    stdout: %s' "$(head -c 800 "$T/stdout")")"; fi
}
# stderr lines that are vkimg's (lavapipe prints a conformance warning of its own)
vkimg_lines() { grep -v '^WARNING: lavapipe' "$T/stderr" | grep -c '^vkimg: '; }
magic() { od -An -tx1 -N"$2" "$1" 2>/dev/null | tr -d ' \n'; }
is_png() { [ -s "$1" ] && [ "$(magic "$1" 8)" = 89504e470d0a1a0a ]; }
is_jpeg() { [ -s "$1" ] && [ "$(magic "$1" 3)" = ffd8ff ]; }
png_byte() { od -An -tu1 -j"$2" -N1 "$1" | tr -d ' '; } # IHDR: 24 = bit depth, 25 = colour type
no_temp() { [ -z "$(find "$1" -maxdepth 1 -name '.*.vkimg-*' 2>/dev/null)" ]; }

# ---------------------------------------------------------------- no device needed
NODEV=(env VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent)

run "${NODEV[@]}" "$VK" --version
expect_rc "--version without a device" 0
check "--version prints 'vkimg X.Y.Z'" grep -Eq '^vkimg [0-9]+\.[0-9]+\.[0-9]+' "$T/stdout"
run "${NODEV[@]}" "$VK" --help
expect_rc "--help without a device" 0
expect_out "--help shows the usage" "usage:"
expect_out "--help lists --timing" "--timing"
run "${NODEV[@]}" "$VK" ops
expect_rc "ops without a device" 0
expect_out "ops lists gray" "gray"
expect_out "ops lists blur" "blur"
run "${NODEV[@]}" "$VK" ops blur
expect_rc "ops blur" 0
expect_out "ops blur lists sigma" "sigma"
expect_out "ops blur lists radius" "radius"
run "${NODEV[@]}" "$VK" ops blr
expect_rc "ops of an unknown op" 2
expect_err "ops of an unknown op names it" "blr"
run "${NODEV[@]}" "$VK"
expect_rc "no arguments" 2
run "${NODEV[@]}" "$VK" devices
check "devices without a device fails with a message" [ "$rc" -ne 0 ]
check "devices without a device says so in one 'vkimg:' line" [ "$(vkimg_lines)" = 1 ]

# ---------------------------------------------------------------- device check
run "$VK" devices
if [ "$rc" -ne 0 ]; then
  if [ "$rc" -ne 1 ] || ! has "$T/stderr" "vulkan"; then
    bad "vkimg devices crashed or failed oddly (exit $rc)$(show)"
  elif [ "${VKIMG_REQUIRE_DEVICE:-0}" != 0 ]; then
    bad "no Vulkan device and VKIMG_REQUIRE_DEVICE=1$(show)"
  else
    echo "test_cli: no Vulkan device: skipped ($(head -1 "$T/stderr"))"
    exit 77
  fi
  echo "test_cli: $pass passed, $fail failed"
  exit 1
fi
check "devices prints a device with its name" grep -Eq '^[0-9]+: [^ ].*[^ ]' "$T/stdout"
check "devices marks the default device" grep -q '\[default\]' "$T/stdout"

# ---------------------------------------------------------------- inputs
mkdir -p in o
for f in landscape.png portrait.jpg logo-rgba.png gray16.png; do
  if [ -f "$SRC/images/$f" ]; then
    cp "$SRC/images/$f" in/
  else
    bad "sample $SRC/images/$f is missing (scripts/make-images makes it)"
  fi
done
P="gray,blur=sigma=2.5"
IN=in/landscape.png
[ -f "$IN" ] || { echo "test_cli: $pass passed, $((fail + 1)) failed"; exit 1; }

# ---------------------------------------------------------------- success
run "$VK" -i "$IN" -o o/land.png -f "$P"
expect_rc "gray,blur on landscape.png" 0
check "output is a PNG" is_png o/land.png
check "gray of RGB is an 8-bit gray PNG" [ "$(png_byte o/land.png 24)/$(png_byte o/land.png 25)" = 8/0 ]
check "no temporary file after success" no_temp o
check "nothing on stdout without -v/--timing" [ ! -s "$T/stdout" ]
run "$VK" -i o/land.png -o o/land2.png -f blur=sigma=1
expect_rc "the output decodes (processed again)" 0

run "$VK" -i in/portrait.jpg -o o/portrait.jpg -f "$P"
expect_rc "JPEG in, JPEG out" 0
check "JPEG output is a JPEG" is_jpeg o/portrait.jpg
run "$VK" -i in/logo-rgba.png -o o/logo.png -f "$P"
expect_rc "RGBA in" 0
check "gray of RGBA is gray+alpha" [ "$(png_byte o/logo.png 25)" = 4 ]
# an opaque RGBA PNG to JPEG: the decoder leaves the alpha out (the file drops
# it) and the JPEG has the bytes of the same image without alpha
if command -v python3 >/dev/null; then
  python3 - in/opaque-rgba.png in/opaque-rgb.png <<'PY'
import struct, sys, zlib
w, h = 97, 61
def png(path, c):
    rows = b"".join(b"\0" + bytes(v for x in range(w) for v in
                    ((x * 7 + y * 3) % 256, (x * y) % 256, (x ^ y) * 5 % 256, 255)[:c]) for y in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6 if c == 4 else 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
png(sys.argv[1], 4)
png(sys.argv[2], 3)
PY
  for p in blur=3 gray,blur=2; do
    run "$VK" -v -v -i in/opaque-rgba.png -o o/opaque-rgba.jpg -f "$p"
    expect_rc "opaque RGBA PNG to JPEG, $p" 0
    if "$VK" devices 2>/dev/null | grep -A1 '\[default\]' | grep -q 'type CPU'; then
      check "opaque RGBA to JPEG, $p: the alpha is left out (-v -v)" has "$T/stderr" "alpha is all at the maximum: decoded without it"
    fi
    run "$VK" -i in/opaque-rgb.png -o o/opaque-rgb.jpg -f "$p"
    check "opaque RGBA to JPEG, $p: the bytes of the image without alpha" cmp -s o/opaque-rgba.jpg o/opaque-rgb.jpg
  done
fi
# RGBA with transparency to JPEG: composited over black and the alpha dropped (the
# flatten op, as vips and sharp write it): the bytes of the image the pipeline
# with flatten makes, written as JPEG. flatten goes before the ops that give the
# same flattened before or after (copy, gray, blur: then blurred as RGB), after the
# others (thumbnail); both orders within 1 LSB. flatten=white differs
for p in copy:first blur=2:first thumbnail=64:last gray:first; do
  f=${p%:*}
  run "$VK" -i in/logo-rgba.png -o o/alpha.jpg -f "$f"
  expect_rc "RGBA to JPEG, $f" 0
  if [ "${p#*:}" = first ]; then q="flatten,$f"; else q="$f,flatten"; fi
  run "$VK" -i in/logo-rgba.png -o o/flat.png -f "$q"
  run "$VK" -i o/flat.png -o o/flat.jpg
  check "RGBA to JPEG, $f: flattened onto black ($q)" cmp -s o/alpha.jpg o/flat.jpg
  run "$VK" -i in/logo-rgba.png -o o/flat2.png -f "$f,flatten"
  run "$VK" compare o/flat.png o/flat2.png --fail 0.004 --warn 0.004 --hardfail 0.004
  expect_rc "RGBA to JPEG, $f: flatten first or last, within 1 LSB" 0
done
run "$VK" -i in/logo-rgba.png -o o/alpha.jpg -f blur=2 --timing
check "RGBA to JPEG, blur: flatten runs first (--timing)" \
  eval '[ "$(grep -o -E "^ *(flatten|blur) \(GPU\)" "$T/stderr" | tr -s " " | tr "\n" /)" = " flatten (GPU)/ blur (GPU)/" ]'
run "$VK" -i in/logo-rgba.png -o o/white.jpg -f "thumbnail=64,flatten=white"
check "flatten=white is not black" eval '! cmp -s o/white.jpg o/alpha.jpg'
run "$VK" -i in/logo-rgba.png -o o/alpha.hdr
expect_rc "RGBA to Radiance HDR (flattened)" 0
run "$VK" -i in/logo-rgba.png -o o/x.png -f "flatten=#ff000080"
expect_rc "flatten with a background that is not opaque" 2
check "flatten's refusal names the op" has "$T/stderr" "flatten"
run "$VK" -i in/gray16.png -o o/gray16.png -f "blur=sigma=2.5"
expect_rc "16-bit gray in" 0
check "16-bit PNG stays 16-bit" [ "$(png_byte o/gray16.png 24)" = 16 ]

# output equal to input (atomic replace)
cp "$IN" o/same.png
run "$VK" -i o/same.png -o o/same.png -f "$P"
expect_rc "output may equal input" 0
check "the input was replaced by the result" cmp -s o/same.png o/land.png
check "no temporary file after in-place write" no_temp o

# -F with comments gives the same bytes as -f
printf '# the main job, as a pipeline file\n\ngray,   # to gray first\n  blur = sigma=2.5  # then blur\n# end\n' >pipe.txt
run "$VK" -i "$IN" -o o/fromfile.png -F pipe.txt
expect_rc "-F FILE with comments" 0
check "-F output equals -f output" cmp -s o/fromfile.png o/land.png

# --timing
run "$VK" -i "$IN" -o o/timing.png -f "$P" --timing
expect_rc "--timing" 0
cat "$T/stdout" "$T/stderr" >timing.txt
for w in decode upload gray blur readback encode total; do
  check "--timing has a '$w' line with a time" grep -Eqi "$w.*[0-9]+(\.[0-9]+)? *ms" timing.txt
done

# -v, -q, --validate, --device, --quality
run "$VK" -i "$IN" -o o/v.png -f "$P" -v
expect_rc "-v" 0
check "-v says something on stderr" [ -s "$T/stderr" ]
run "$VK" -i "$IN" -o o/q.png -f "$P" -q
expect_rc "-q" 0
quiet_ok() { [ ! -s "$T/stdout" ] && [ "$(vkimg_lines)" = 0 ]; }
check "-q prints nothing of its own" quiet_ok
run "$VK" -i "$IN" -o o/val.png -f "$P" --validate
expect_rc "--validate" 0
check "--validate gives the same bytes" cmp -s o/val.png o/land.png
# the first image's kernels are created while it decodes (vkimg_prepare), on the
# host's cores; VKIMG_PREPARE=0 leaves them to the run: the same bytes either way
run "$VK" -i "$IN" -o o/prep.png -f "$P" -v -v
expect_rc "-v -v" 0
check "the kernels are created ahead of the run (-v -v says 'prepare: ')" has "$T/stderr" "prepare: "
check "the same bytes with the kernels made ahead" cmp -s o/prep.png o/land.png
VKIMG_PREPARE=0 run "$VK" -i "$IN" -o o/noprep.png -f "$P" -vv
expect_rc "VKIMG_PREPARE=0 (-vv as -v -v)" 0
check "-vv: as verbose as -v -v (the memory it allocates)" has "$T/stderr" "memory allocated"
check "VKIMG_PREPARE=0: nothing made ahead" bash -c '! grep -qF "prepare: " "$1"' _ "$T/stderr"
check "VKIMG_PREPARE=0: the same bytes" cmp -s o/noprep.png o/land.png
run "$VK" -i "$IN" -o o/dev0.png -f "$P" --device 0
expect_rc "--device 0" 0
if "$VK" devices 2>/dev/null | grep -qi 'type cpu'; then
  run "$VK" -i "$IN" -o o/devcpu.png -f "$P" --device cpu
  expect_rc "--device cpu" 0
fi
run "$VK" -i "$IN" -o o/q10.jpg -f "$P" --quality 10
expect_rc "--quality 10" 0
run "$VK" -i "$IN" -o o/q95.jpg -f "$P" --quality 95
expect_rc "--quality 95" 0
check "--quality 10 is smaller than --quality 95" [ "$(stat -c %s o/q10.jpg)" -lt "$(stat -c %s o/q95.jpg)" ]
# WebP: lossy at --quality, --lossless the same pixels (RGBA with its alpha), and as an input
run "$VK" -i "$IN" -o o/q10.webp -f "$P" --quality 10
expect_rc "WebP --quality 10" 0
run "$VK" -i "$IN" -o o/q95.webp -f "$P" --quality 95
expect_rc "WebP --quality 95" 0
check "WebP --quality 10 is smaller than --quality 95" [ "$(stat -c %s o/q10.webp)" -lt "$(stat -c %s o/q95.webp)" ]
run "$VK" -i in/logo-rgba.png -o o/logo.webp -f copy --lossless
expect_rc "WebP --lossless" 0
check "WebP --lossless: the RGBA pixels exactly" "$VK" compare -q in/logo-rgba.png o/logo.webp
run "$VK" -i o/logo.webp -o o/logo-webp.png -f "$P"
expect_rc "a WebP input" 0
run "$VK" -i in/logo-rgba.png -o o/logo-png.png -f "$P"
check "a WebP input: the pipeline's pixels as from the PNG it holds" "$VK" compare -q o/logo-png.png o/logo-webp.png
# TIFF: written losslessly (RGBA, 16-bit gray, a float result), read back the same, and as an input
run "$VK" -i in/logo-rgba.png -o o/logo.tif -f copy
expect_rc "TIFF output (RGBA)" 0
check "TIFF output: 'II*' and the RGBA pixels exactly" bash -c '[ "$(head -c 4 "$1" | od -An -tx1 | tr -d " ")" = 49492a00 ] &&
  "$2" compare -q "$3" "$1"' _ o/logo.tif "$VK" in/logo-rgba.png
run "$VK" -i o/logo.tif -o o/logo-tif.png -f "$P"
expect_rc "a TIFF input" 0
check "a TIFF input: the pipeline's pixels as from the PNG it holds" "$VK" compare -q o/logo-png.png o/logo-tif.png
run "$VK" -i in/gray16.png -o o/gray16.tiff -f "blur=sigma=2.5"
expect_rc "TIFF output (16-bit gray, .tiff)" 0
run "$VK" -i o/gray16.tiff -o o/gray16-tif.png -f copy
check "TIFF keeps 16 bits: the same pixels as the 16-bit PNG" "$VK" compare -q o/gray16.png o/gray16-tif.png
run "$VK" -i in/logo-rgba.png -o o/logo-none.tif -f copy --tiff-compression none
expect_rc "--tiff-compression none" 0
check "--tiff-compression none: the same pixels, a larger file than Deflate's" bash -c '"$1" compare -q "$2" "$3" &&
  [ "$(stat -c %s "$3")" -gt "$(stat -c %s "$4")" ]' _ "$VK" in/logo-rgba.png o/logo-none.tif o/logo.tif

# ---------------------------------------------------------------- failures
# fails NAME WANT OUT ARGS...: vkimg ARGS... must exit WANT with its error in one
# "vkimg: " line on stderr (pipeline errors: plus the pipeline and a caret line),
# create no OUT and leave no temporary file in OUT's directory. With
# KEEP=1 in the environment, OUT exists beforehand and must be untouched.
fails() {
  local name=$1 want=$2 out=$3
  shift 3
  local dir
  dir=$(dirname "$out")
  if [ "${KEEP:-0}" = 1 ] && [ -d "$dir" ]; then
    printf 'precious\n' >"$out"
  fi
  run "$VK" "$@"
  expect_rc "$name" "$want"
  local first
  first=$(grep -v '^WARNING: lavapipe' "$T/stderr" | head -1)
  if [[ $first == "vkimg: "* ]] && [ "$(vkimg_lines)" = 1 ]; then ok; else bad "$name: not one 'vkimg: ' line on stderr$(show)"; fi
  if [ "${KEEP:-0}" = 1 ] && [ -d "$dir" ]; then
    if [ "$(cat "$out" 2>/dev/null)" = precious ]; then ok; else bad "$name: the existing output was changed"; fi
  else
    if [ ! -e "$out" ]; then ok; else bad "$name: left $out"; fi
  fi
  if no_temp "$dir"; then ok; else bad "$name: left a temporary file: $(find "$dir" -maxdepth 1 -name '.*.vkimg-*')"; fi
}

# usage errors: 2
fails "unknown op" 2 o/e.png -i "$IN" -o o/e.png -f "gray,blr=2"
expect_err "unknown op: message" "unknown op"
expect_err "unknown op: suggestion" "did you mean"
expect_err "unknown op: suggests blur" "blur"
pl=$(grep -F 'gray,blr=2' "$T/stderr" | grep -v '^vkimg:' | head -1)
cl=$(grep -E '^[[:space:]]*\^$' "$T/stderr" | head -1)
pre=${pl%%blr*}
check "unknown op: the pipeline is shown" [ -n "$pl" ]
caret_ok() { [ -n "$cl" ] && [ "${#pre}" -eq $((${#cl} - 1)) ]; }
check "unknown op: a caret line under 'blr'" caret_ok
KEEP=1 fails "unknown op, existing output" 2 o/keep.png -i "$IN" -o o/keep.png -f "gray,blr=2"
fails "empty pipeline" 2 o/e.png -i "$IN" -o o/e.png -f ""
fails "blank pipeline" 2 o/e.png -i "$IN" -o o/e.png -f "  "
fails "pipeline of commas" 2 o/e.png -i "$IN" -o o/e.png -f ","
fails "unknown op option" 2 o/e.png -i "$IN" -o o/e.png -f "blur=sigmaa=2"
fails "out-of-range op value" 2 o/e.png -i "$IN" -o o/e.png -f "blur=sigma=-1"
expect_err "out-of-range op value: names the option" "sigma"
fails "non-numeric op value" 2 o/e.png -i "$IN" -o o/e.png -f "blur=sigma=abc"
printf '# nothing but comments\n\n   # here\n' >empty-pipe.txt
fails "-F file with only comments" 2 o/e.png -i "$IN" -o o/e.png -F empty-pipe.txt
fails "-F file missing" 1 o/e.png -i "$IN" -o o/e.png -F no-such-pipe.txt
expect_err "-F file missing: names the file" "no-such-pipe.txt"
fails "unknown option" 2 o/e.png -i "$IN" -o o/e.png -f "$P" --frobnicate
expect_err "unknown option: names it" "--frobnicate"
fails "-vx: not a repeated flag" 2 o/e.png -i "$IN" -o o/e.png -f "$P" -vx
fails "-oo: an option that takes a value does not repeat in one word" 2 o/e.png -i "$IN" -oo o/e.png -f "$P"
expect_err "-oo: names it" "-oo"
fails "--quality 0" 2 o/e.jpg -i "$IN" -o o/e.jpg -f "$P" --quality 0
fails "--quality 101" 2 o/e.jpg -i "$IN" -o o/e.jpg -f "$P" --quality 101
fails "--quality abc" 2 o/e.jpg -i "$IN" -o o/e.jpg -f "$P" --quality abc
fails "--lossless takes no value" 2 o/e.webp -i "$IN" -o o/e.webp -f "$P" --lossless=1
fails "--tiff-compression lzw" 2 o/e.tif -i "$IN" -o o/e.tif -f "$P" --tiff-compression lzw
fails "--max-pixels 0" 2 o/e.png -i "$IN" -o o/e.png -f "$P" --max-pixels 0
fails "option without its value" 2 o/e.png -i "$IN" -o o/e.png -f
fails "missing -i" 2 o/e.png -o o/e.png -f "$P"
fails "missing -o" 2 o/e.png -i "$IN" -f "$P"
# no -f/-F: a conversion (the pipeline `copy`)
run "$VK" -i in/logo-rgba.png -o o/conv.tif
expect_rc "no -f: a conversion" 0
check "no -f: the pixels copied" "$VK" compare -q in/logo-rgba.png o/conv.tif
fails "unknown output extension" 2 o/e.xyz -i "$IN" -o o/e.xyz -f "$P"
expect_err "unknown output extension: names it" "xyz"
fails "output without extension" 2 o/noext -i "$IN" -o o/noext -f "$P"

# runtime errors: 1
fails "missing input file" 1 o/e.png -i in/nothere.png -o o/e.png -f "$P"
expect_err "missing input file: names the file" "nothere.png"
: >in/empty.png
fails "zero-byte input" 1 o/e.png -i in/empty.png -o o/e.png -f "$P"
expect_err "zero-byte input: names the file" "empty.png"
printf 'this is not an image\n' >in/x.png
fails "text file named .png" 1 o/e.png -i in/x.png -o o/e.png -f "$P"
expect_err "text file named .png: names the file" "x.png"
head -c 3000 "$IN" >in/trunc.png
fails "truncated PNG" 1 o/e.png -i in/trunc.png -o o/e.png -f "$P"
expect_err "truncated PNG: names the file" "trunc.png"
KEEP=1 fails "truncated PNG, existing output" 1 o/keep.png -i in/trunc.png -o o/keep.png -f "$P"
# a PNG whose IHDR claims 100000x100000 RGB (valid CRCs): refused before decoding
MK=$(dirname "$VK")/vkimg-mkimages
if [ -x "$MK" ]; then
  "$MK" --bomb in/bomb.png || bad "vkimg-mkimages --bomb failed"
else
  printf '\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x01\x86\xa0\x00\x01\x86\xa0\x08\x02\x00\x00\x00\x27\x30\x9c\x9f\x00\x00\x00\x0bIDAT\x78\x01\x01\x00\x00\xff\xff\x00\x00\x00\x01\x89\xd6\xae\x5f\x00\x00\x00\x00IEND\xae\x42\x60\x82' >in/bomb.png
fi
check "the bomb is 68 bytes" [ "$(stat -c %s in/bomb.png 2>/dev/null)" = 68 ]
fails "100000x100000 PNG header" 1 o/e.png -i in/bomb.png -o o/e.png -f "$P"
expect_err "100000x100000 PNG: mentions the limit" "limit"
expect_err "100000x100000 PNG: mentions pixels" "pixels"
expect_err "100000x100000 PNG: names the file" "bomb.png"
KEEP=1 fails "100000x100000 PNG, existing output" 1 o/keep.png -i in/bomb.png -o o/keep.png -f "$P"
fails "--max-pixels below the image" 1 o/e.png -i "$IN" -o o/e.png -f "$P" --max-pixels 1000
expect_err "--max-pixels below the image: mentions the limit" "limit"
fails "output directory does not exist" 1 nodir/e.png -i "$IN" -o nodir/e.png -f "$P"
check "the missing output directory was not created" [ ! -e nodir ]
expect_err "output directory does not exist: names it" "nodir"
mkdir -p ro
chmod 555 ro
if [ -w ro ]; then
  echo "test_cli: running as root: the read-only directory case is not checked"
else
  fails "read-only output directory" 1 ro/e.png -i "$IN" -o ro/e.png -f "$P"
fi
chmod 755 ro
fails "--device that matches nothing" 1 o/e.png -i "$IN" -o o/e.png -f "$P" --device no-such-device-xyz
expect_err "--device that matches nothing: names it" "no-such-device-xyz"

# ---------------------------------------------------------------- batches
mkdir -p batch
run "$VK" -i in/landscape.png -i in/portrait.jpg -i in/logo-rgba.png -i in/gray16.png -o batch/ -f "$P"
expect_rc "batch into a directory" 0
for f in landscape.png portrait.jpg logo-rgba.png gray16.png; do
  check "batch wrote $f" [ -s "batch/$f" ]
done
check "batch output equals the single-file output" cmp -s batch/landscape.png o/land.png
check "no temporary file after a batch" no_temp batch
mkdir -p in2
cp in/landscape.png in2/landscape.png
fails "two inputs mapping to one output" 2 o/landscape.png -i in/landscape.png -i in2/landscape.png -o 'o/{stem}.png' -f "$P"

echo "test_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
