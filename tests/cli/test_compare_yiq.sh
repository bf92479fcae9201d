#!/usr/bin/env bash
# `vkimg compare --metric yiq` counts the same pixels as pixelmatch 7.2.0 (npm), with
# and without --aa (pixelmatch's includeAA false / true), at thresholds 0, 0.05, 0.1
# and 0.3, on real pairs: screenshots of a page of text, boxes and lines rendered by
# headless Chromium (tests/visual/page.html) and the same page shifted by a fraction
# of a pixel (anti-aliasing differences everywhere), with a changed block, and both;
# and RGBA screenshots with transparency (tests/visual/alpha.html on a transparent
# background: pixelmatch blends those against its checkerboard), shifted and with a
# changed translucent shape.
# Usage: test_compare_yiq.sh /path/to/vkimg SOURCE_DIR
# Needs chromium, node and pixelmatch + pngjs in SOURCE_DIR/build/npm (scripts/setup
# --test installs them; VKIMG_NPM_DIR overrides the place); skipped (77) without.
set -u
. "$(dirname "$0")/lib.sh"
V=${1:?usage: test_compare_yiq.sh /path/to/vkimg SOURCE_DIR}
SRC=${2:?usage: test_compare_yiq.sh /path/to/vkimg SOURCE_DIR}
NM=${VKIMG_NPM_DIR:-$SRC/build/npm}/node_modules
T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-compare-yiq.XXXXXX")
trap 'rm -rf "$T"' EXIT
skip() {
    echo "$*: skipped" >&2
    [ "${VKIMG_REQUIRE_DEVICE:-0}" != 0 ] && exit 1 # CI: everything must be there
    exit 77
}
command -v chromium >/dev/null || skip "chromium not found (scripts/setup --test installs it)"
command -v node >/dev/null || skip "node not found"
[ -f "$NM/pixelmatch/package.json" ] && [ -d "$NM/pngjs" ] || skip "pixelmatch/pngjs not in $NM (scripts/setup --test)"
grep -q '"version": "7.2.0"' "$NM/pixelmatch/package.json" || skip "$NM/pixelmatch is not 7.2.0"
"$V" devices >/dev/null 2>&1 || skip "no Vulkan device"

# ---- the pages and their screenshots
cp "$SRC/tests/visual/page.html" "$SRC/tests/visual/alpha.html" "$T/"
shift_css='body{transform:translate(.4px,.3px)}</style>'
sed "s|</style>|$shift_css|" "$T/page.html" >"$T/page-shift.html"
sed -e 's/#38f,#f38/#3a8,#f83/' -e 's/0123456789/0123456780/' "$T/page.html" >"$T/page-block.html"
sed -e 's/#38f,#f38/#3a8,#f83/' -e 's/0123456789/0123456780/' "$T/page-shift.html" >"$T/page-both.html"
sed "s|</style>|$shift_css|" "$T/alpha.html" >"$T/alpha-shift.html"
sed 's/rgba(220,40,60,.7)/rgba(220,40,60,.55)/' "$T/alpha.html" >"$T/alpha-shape.html"
shot() { # shot PAGE OUT [chromium flags]
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --user-data-dir="$(mktemp -d "$T/profile.XXXXXX")" \
        --hide-scrollbars --window-size=640,400 "${@:3}" --screenshot="$2" "file://$1" >"$T/chromium.log" 2>&1
    [ -s "$2" ] || { bad "chromium made no screenshot of $1 ($(tail -c 300 "$T/chromium.log"))"; return 1; }
}
transparent=--default-background-color=00000000
for p in page page-shift page-block page-both; do shot "$T/$p.html" "$T/$p.png" || exit 1; done
for p in alpha alpha-shift alpha-shape; do shot "$T/$p.html" "$T/$p.png" $transparent || exit 1; done
"$V" stats "$T/alpha.png" --json >"$T/s.json" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['channels_stats']; sys.exit(0 if d['channels'] == 4 and c[3]['min'] == 0 and c[3]['max'] > 0 and 0 < c[3]['mean'] < 1 else 1)" "$T/s.json" &&
    ok || bad "alpha.png is not RGBA with transparent and translucent pixels"

# ---- vkimg's counts against pixelmatch's
TS=0,0.05,0.1,0.3
pairs="page:page-shift page:page-block page:page-both alpha:alpha-shift alpha:alpha-shape"
summary=""
for pr in $pairs; do
    a=$T/${pr%%:*}.png b=$T/${pr#*:}.png
    if ! node "$SRC/tests/visual/pixelmatch-count.mjs" "$NM" "$a" "$b" "$TS" >"$T/pm.json" 2>"$T/pm.err"; then
        bad "pixelmatch on $pr: $(head -c 300 "$T/pm.err")"
        continue
    fi
    for t in ${TS//,/ }; do
        for aa in false true; do
            flag=
            [ $aa = true ] && flag=--aa
            "$V" compare "$a" "$b" --metric yiq --threshold "$t" $flag --json >"$T/v.json" 2>"$T/v.err"
            rc=$?
            got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ndiff'])" "$T/v.json" 2>/dev/null)
            want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$T/pm.json" "$t,$aa")
            wrc=2
            [ "$want" = 0 ] && wrc=0
            if [ "$got" = "$want" ] && [ $rc -eq $wrc ]; then ok; else
                bad "$pr threshold $t aa $aa: vkimg $got (exit $rc), pixelmatch $want ($(head -c 200 "$T/v.err"))"
            fi
            summary+="$pr t=$t aa=$aa: $want"$'\n'
        done
    done
done
# some of the pairs must really exercise the thresholds and the detector
python3 - "$summary" <<'EOF' && ok || bad "the pairs are too easy: $summary"
import sys
n = {}
for line in sys.argv[1].strip().splitlines():
    k, v = line.rsplit(': ', 1)
    n[k] = int(v)
assert n['page:page-shift t=0.1 aa=false'] > n['page:page-shift t=0.1 aa=true'] > 0   # anti-aliasing found
assert n['page:page-shift t=0 aa=false'] > n['page:page-shift t=0.3 aa=false'] > 0     # thresholds matter
assert n['alpha:alpha-shift t=0.1 aa=false'] > 0 and n['alpha:alpha-shape t=0.05 aa=true'] > 0
EOF
echo "$summary" | sed 's/^/  /' | head -40
echo "test_compare_yiq: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
