#!/usr/bin/env bash
# Metadata through the CLI: real JPEG and PNG files with each EXIF orientation
# (1..8, in both byte orders), an EXIF block without the tag, none at all, and
# ICC profiles (one over a JPEG APP2 segment's 65519 bytes), made by
# tests/cli/meta_tool.c, run through `vkimg -f copy` and checked by it:
#   default           upright pixels (the reference of the orientations), the
#                     orientation written as 1, EXIF and ICC otherwise byte for byte;
#   --no-auto-orient  the stored pixels, the tag and the blocks as they were;
#   --strip           upright pixels, neither EXIF nor ICC written;
# one file at a time and as batches (-i glob or directory, -o template), PNG
# eXIf before and after IDAT, 16-bit PNG, JPEG outputs (also in place), and a
# pipeline that sees the upright image; WebP outputs (lossless and lossy) and
# inputs (the tag read from its EXIF chunk); TIFF outputs and inputs keep the ICC profile. Usage: test_meta_cli.sh /path/to/vkimg /path/to/vkimg_meta_tool
# Prints "test_meta_cli: N passed, N failed"; exit 1 on failure, 77 when there
# is no Vulkan device.
set -u
. "$(dirname "$0")/lib.sh"
V=${1:?usage: test_meta_cli.sh /path/to/vkimg /path/to/vkimg_meta_tool}
M=${2:?usage: test_meta_cli.sh /path/to/vkimg /path/to/vkimg_meta_tool}
check() { check_run "$@"; }

need_device "$V"
T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-meta-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/in" "$T/out" "$T/b1" "$T/b2" "$T/b3"

# The inputs: NAME KIND W H C BITS ORIENT ORDER ICC SEED (37 x 23: the sides show
# every swap and mirror). ORIENT 0: no EXIF; 9: EXIF without the orientation tag.
cases=()
for o in 1 2 3 4 5 6 7 8; do
    order=II
    [ $((o % 2)) -eq 0 ] && order=MM
    cases+=("j$o jpg 37 23 3 8 $o $order $((o * 1000 + 300)) $o")
done
cases+=("j0 jpg 37 23 3 8 0 II 0 20" "j9 jpg 23 37 1 8 9 MM 3000 21" "jbig jpg 40 31 3 8 6 II 70000 22")
for o in 1 5 6 8; do
    cases+=("p$o png 29 17 4 8 $o MM 2048 $((30 + o))")
done
cases+=("plate7 png-late 29 17 3 8 7 II 1500 40" "p16 png 31 19 1 16 3 II 900 41" "p0 png 29 17 2 8 0 II 0 42")

made=0
for c in "${cases[@]}"; do
    set -- $c
    ext=png
    [ "$2" = jpg ] && ext=jpg
    if "$M" make "$T/in/$1.$ext" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}"; then made=$((made + 1)); else
        bad "making $1.$ext"
    fi
done
check "made ${#cases[@]} inputs" [ "$made" -eq "${#cases[@]}" ]

# meta_check NAME OUT MODE: the tool's check of OUT against the input NAME
meta_check() {
    local name=$1 out=$2 mode=$3 c
    for c in "${cases[@]}"; do
        set -- $c
        if [ "$1" = "$name" ]; then
            local ext=png
            [ "$2" = jpg ] && ext=jpg
            "$M" check "$T/in/$name.$ext" "$out" "$7" "$8" "$9" "${10}" "$mode"
            return
        fi
    done
    echo "no case $name" >&2
    return 1
}

# one file at a time (a few: every file goes through the batches below, the same
# code): default, --no-auto-orient, --strip, both
for name in j6 j9 j0 jbig p5 plate7 p16; do
    ext=png
    [ "${name:0:1}" = j ] && ext=jpg
    in="$T/in/$name.$ext"
    if "$V" -q -i "$in" -o "$T/out/$name.png" -f copy; then
        check "$name: upright, orientation 1, EXIF/ICC kept" meta_check "$name" "$T/out/$name.png" auto
    else bad "$name: vkimg failed"; fi
    if "$V" -q -i "$in" -o "$T/out/$name.noauto.png" -f copy --no-auto-orient; then
        check "$name --no-auto-orient: stored pixels and tag" meta_check "$name" "$T/out/$name.noauto.png" noauto
    else bad "$name --no-auto-orient: vkimg failed"; fi
    if "$V" -q -i "$in" -o "$T/out/$name.strip.png" -f copy --strip; then
        check "$name --strip: upright, no EXIF/ICC" meta_check "$name" "$T/out/$name.strip.png" strip
    else bad "$name --strip: vkimg failed"; fi
done
for name in j6 p8; do
    ext=png
    [ "${name:0:1}" = j ] && ext=jpg
    if "$V" -q -i "$T/in/$name.$ext" -o "$T/out/$name.sn.png" -f copy --strip --no-auto-orient; then
        check "$name --strip --no-auto-orient" meta_check "$name" "$T/out/$name.sn.png" strip-noauto
    else bad "$name --strip --no-auto-orient: vkimg failed"; fi
done

# a JPEG output carries them too (pixels re-encoded: closest to the upright input of
# all the orientations)
for name in j6 jbig j0; do
    if "$V" -q -i "$T/in/$name.jpg" -o "$T/out/$name.out.jpg" -f copy; then
        check "$name -> JPEG: upright, orientation 1, EXIF/ICC kept" meta_check "$name" "$T/out/$name.out.jpg" \
            auto-lossy
    else bad "$name -> JPEG: vkimg failed"; fi
done
# WebP: lossless outputs hold the upright pixels exactly, lossy ones nearly; both the
# EXIF (orientation 1) and the ICC profile (ICCP, 70000 bytes for jbig) as they were
for name in j6 jbig p5; do
    ext=png
    [ "${name:0:1}" = j ] && ext=jpg
    if "$V" -q -i "$T/in/$name.$ext" -o "$T/out/$name.ll.webp" -f copy --lossless; then
        check "$name -> lossless WebP: upright, orientation 1, EXIF/ICC kept" meta_check "$name" \
            "$T/out/$name.ll.webp" auto
    else bad "$name -> lossless WebP: vkimg failed"; fi
done
if "$V" -q -i "$T/in/j6.jpg" -o "$T/out/j6.webp" -f copy; then
    check "j6 -> lossy WebP: upright, orientation 1, EXIF/ICC kept" meta_check j6 "$T/out/j6.webp" auto-lossy
else bad "j6 -> lossy WebP: vkimg failed"; fi
# ... and as inputs: the stored pixels and tag written losslessly, then read back
# as the other inputs are (the orientation applied on load, or kept; JPEGs: a PNG's
# profile name has no place in WebP)
for name in j3 j6 j8; do
    if "$V" -q -i "$T/in/$name.jpg" -o "$T/in-$name.webp" -f copy --lossless --no-auto-orient &&
        "$V" -q -i "$T/in-$name.webp" -o "$T/out/$name.fromwebp.png" -f copy &&
        "$V" -q -i "$T/in-$name.webp" -o "$T/out/$name.fromwebp.noauto.png" -f copy --no-auto-orient; then
        check "$name as WebP input: upright, orientation 1, EXIF/ICC kept" meta_check "$name" \
            "$T/out/$name.fromwebp.png" auto
        check "$name as WebP input --no-auto-orient: stored pixels and tag" meta_check "$name" \
            "$T/out/$name.fromwebp.noauto.png" noauto
    else bad "$name as WebP input: vkimg failed"; fi
done
# a GRAY profile does not describe WebP's RGB: left out of a gray image's WebP
if "$V" -q -i "$T/in/j9.jpg" -o "$T/out/j9.webp" -f copy; then
    check "gray -> WebP (RGB): the GRAY profile left out" [ "$("$M" icc "$T/out/j9.webp")" = "0 -" ]
else bad "gray -> WebP: vkimg failed"; fi

# TIFF outputs keep the ICC profile (tag 34675; the EXIF goes into the file's own IFDs,
# which test_tiff_io reads back with libtiff), TIFF inputs give it back; the gray image's
# GRAY profile fits its gray TIFF
for name in j6 jbig j9; do
    if "$V" -q -i "$T/in/$name.jpg" -o "$T/out/$name.tif" -f copy &&
        "$V" -q -i "$T/out/$name.tif" -o "$T/out/$name.fromtif.png" -f copy &&
        "$V" -q -i "$T/out/$name.tif" -o "$T/out/$name.fromtif.jpg" -f copy; then
        want_ps=$("$M" iptc "$T/in/$name.jpg")
        check "$name -> TIFF: the Photoshop resources kept (${want_ps%% *} bytes)" \
            [ "$("$M" iptc "$T/out/$name.tif")" = "$want_ps" -a "${want_ps%% *}" -gt 0 ]
        check "$name -> TIFF -> JPEG: the Photoshop resources kept" [ "$("$M" iptc "$T/out/$name.fromtif.jpg")" = "$want_ps" ]
        want=$("$M" icc "$T/in/$name.jpg")
        check "$name -> TIFF: the ICC profile kept ($want)" [ "$("$M" icc "$T/out/$name.tif")" = "$want" ]
        check "$name -> TIFF -> PNG: the ICC profile kept" [ "$("$M" icc "$T/out/$name.fromtif.png")" = "$want" ]
        read -r xn xh xo <<<"$("$M" xmp "$T/in/$name.jpg")"
        [ "$xo" = 0 ] || xo=1
        check "$name -> TIFF: the XMP kept, tiff:Orientation $xo ($xn bytes)" \
            [ "$("$M" xmp "$T/out/$name.tif")" = "$xn $xh $xo" -a "$xn" -gt 0 ]
        check "$name -> TIFF -> PNG: the XMP kept" [ "$("$M" xmp "$T/out/$name.fromtif.png")" = "$xn $xh $xo" ]
        check "$name -> TIFF: the upright pixels, exactly" "$V" compare -q "$T/out/$name.tif" "$T/out/$name.fromtif.png"
    else bad "$name -> TIFF: vkimg failed"; fi
done
# --no-auto-orient into a TIFF: the stored pixels and the orientation as tag 274, which
# reading the TIFF applies: the same upright image as the JPEG's
if "$V" -q -i "$T/in/j6.jpg" -o "$T/out/j6.noauto.tif" -f copy --no-auto-orient &&
    "$V" -q -i "$T/out/j6.noauto.tif" -o "$T/out/j6.noauto.fromtif.png" -f copy &&
    "$V" -q -i "$T/out/j6.noauto.tif" -o "$T/out/j6.noauto.stored.png" -f copy --no-auto-orient; then
    check "j6 -> TIFF --no-auto-orient -> PNG: upright, as the JPEG's" \
        "$V" compare -q "$T/out/j6.noauto.fromtif.png" "$T/out/j6.tif"
    check "j6 -> TIFF --no-auto-orient: the stored pixels" "$V" compare -q "$T/out/j6.noauto.stored.png" "$T/out/j6.noauto.png"
    check "j6 -> TIFF --no-auto-orient: the XMP as it was" [ "$("$M" xmp "$T/out/j6.noauto.tif")" = "$("$M" xmp "$T/in/j6.jpg")" ]
else bad "j6 -> TIFF --no-auto-orient: vkimg failed"; fi
if "$V" -q -i "$T/in/j6.jpg" -o "$T/out/j6.strip.tif" -f copy --strip; then
    check "--strip: a TIFF without the profile" [ "$("$M" icc "$T/out/j6.strip.tif")" = "0 -" ]
    check "--strip: a TIFF without the XMP" [ "$("$M" xmp "$T/out/j6.strip.tif" | cut -d' ' -f1)" = 0 ]
    check "--strip: a TIFF without the Photoshop resources" [ "$("$M" iptc "$T/out/j6.strip.tif" | cut -d' ' -f1)" = 0 ]
else bad "--strip TIFF: vkimg failed"; fi

# the file itself as the output (atomic replace): the tag it had is now 1
cp "$T/in/j5.jpg" "$T/j5.copy.jpg"
if "$V" -q -i "$T/j5.copy.jpg" -o "$T/j5.copy.jpg" -f copy; then
    check "in place: upright, orientation 1" meta_check j5 "$T/j5.copy.jpg" auto-lossy
else bad "in place: vkimg failed"; fi

# a profile is kept only where it describes the output's colour space (PNG and ICC
# allow no other): j1's RGB profile goes with gray's one channel, j9's GRAY one stays
for ext in png jpg; do
    if "$V" -q -i "$T/in/j1.jpg" -o "$T/out/j1.gray.$ext" -f gray &&
        "$V" -q -i "$T/in/j1.jpg" -o "$T/out/j1.rgb.$ext" -f copy &&
        "$V" -q -i "$T/in/j9.jpg" -o "$T/out/j9.gray.$ext" -f gray; then
        check "gray -> $ext: the RGB profile left out" [ "$("$M" icc "$T/out/j1.gray.$ext")" = "0 -" ]
        check "copy -> $ext: the RGB profile kept" [ "$("$M" icc "$T/out/j1.rgb.$ext")" = "1300 RGB " ]
        check "gray of gray -> $ext: the GRAY profile kept" [ "$("$M" icc "$T/out/j9.gray.$ext")" = "3000 GRAY" ]
    else bad "profile of another colour space -> $ext: vkimg failed"; fi
done

# the pipeline sees the upright image: orientation 6 is a quarter turn clockwise,
# out(x, y) = in(y, h-1-x), and its transpose in(x, h-1-y) is the stored image flipped
same() { "$V" compare "$1" "$2" >/dev/null 2>&1; }
differ() { ! same "$@"; }
if "$V" -q -i "$T/in/j6.jpg" -o "$T/out/j6.t.png" -f transpose &&
    "$V" -q -i "$T/in/j6.jpg" -o "$T/out/j6.flip.png" -f flip --no-auto-orient &&
    "$V" -q -i "$T/in/j6.jpg" -o "$T/out/j6.flop.png" -f flop --no-auto-orient; then
    check "orientation before the pipeline: transpose of upright 6 = flip of stored" \
        same "$T/out/j6.t.png" "$T/out/j6.flip.png"
    check "... and not the stored image flopped" differ "$T/out/j6.t.png" "$T/out/j6.flop.png"
else bad "pipeline after the orientation: vkimg failed"; fi

# batches of every input: a glob and a directory in, a template out; each mode
"$V" -q -i "$T/in/*.jpg" -o "$T/b1/{stem}.png" -f copy &&
    "$V" -q -i "$T/in/*.png" -o "$T/b1/{stem}.png" -f copy --threads 2
check "batch: exit 0" [ $? -eq 0 ]
"$V" -q -i "$T/in" -o "$T/b2/{stem}.png" -f copy --no-auto-orient
check "batch --no-auto-orient: exit 0" [ $? -eq 0 ]
"$V" -q -i "$T/in" -o "$T/b3/{stem}.png" -f copy --strip --threads 3
check "batch --strip: exit 0" [ $? -eq 0 ]
for c in "${cases[@]}"; do
    set -- $c
    check "batch: $1" meta_check "$1" "$T/b1/$1.png" auto
    check "batch --no-auto-orient: $1" meta_check "$1" "$T/b2/$1.png" noauto
    check "batch --strip: $1" meta_check "$1" "$T/b3/$1.png" strip
done

echo "test_meta_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
