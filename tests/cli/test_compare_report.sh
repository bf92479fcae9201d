#!/usr/bin/env bash
# `vkimg compare EXPECTED ACTUAL --report DIR` rendered in headless Chromium: the
# page is drawn (the screenshot is not blank), names the failing pair and every
# verdict, its images load (Chromium's DOM says they decoded to their sizes), and it
# needs no network (Chromium runs with networking features off; the HTML names no
# remote resource). Usage: test_compare_report.sh /path/to/vkimg SOURCE_DIR
# Skipped (77) without chromium or a Vulkan device.
set -u
. "$(dirname "$0")/lib.sh"
V=${1:?usage: test_compare_report.sh /path/to/vkimg SOURCE_DIR}
SRC=${2:?usage: test_compare_report.sh /path/to/vkimg SOURCE_DIR}
T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-compare-report.XXXXXX")
trap 'rm -rf "$T"' EXIT
check() { check_run "$@"; }
skip() {
    echo "$*: skipped" >&2
    [ "${VKIMG_REQUIRE_DEVICE:-0}" != 0 ] && exit 1
    exit 77
}
command -v chromium >/dev/null || skip "chromium not found (scripts/setup --test installs it)"
"$V" devices >/dev/null 2>&1 || skip "no Vulkan device"
chrome() { # chrome ARGS... (stdout: what chromium prints)
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --user-data-dir="$(mktemp -d "$T/profile.XXXXXX")" "$@" 2>"$T/chromium.err"
}

# ---- two directories of page screenshots: one the same, one changed, one missing, one new
mkdir -p "$T/expected/pages" "$T/actual/pages"
cp "$SRC/tests/visual/page.html" "$T/page.html"
sed -e 's/#38f,#f38/#3a8,#f83/' -e 's/0123456789/0123456780/' "$T/page.html" >"$T/page-block.html"
chrome --hide-scrollbars --window-size=640,400 --screenshot="$T/expected/pages/home.png" "file://$T/page.html" >/dev/null
chrome --hide-scrollbars --window-size=640,400 --screenshot="$T/actual/pages/home.png" "file://$T/page-block.html" >/dev/null
[ -s "$T/expected/pages/home.png" ] && [ -s "$T/actual/pages/home.png" ] ||
    { bad "chromium made no screenshots ($(tail -c 300 "$T/chromium.err"))"; echo "test_compare_report: $pass passed, $fail failed"; exit 1; }
cp "$T/expected/pages/home.png" "$T/expected/same.png"
cp "$T/expected/pages/home.png" "$T/actual/same.png"
cp "$T/expected/pages/home.png" "$T/expected/retired.png"
cp "$T/actual/pages/home.png" "$T/actual/brand-new.png"

"$V" compare "$T/expected" "$T/actual" --metric yiq --aa --report "$T/report" >"$T/out" 2>"$T/err"
check "compare --report: exit 2 (a failure and a missing file)" test $? -eq 2
check "report: index.html" test -s "$T/report/index.html"
check "report: no remote resource" bash -c "! grep -Eiq '(src|href|url)[=(][\"'\'']?(https?:)?//' '$T/report/index.html'"

# ---- the page as Chromium draws it
chrome --hide-scrollbars --window-size=1280,900 --screenshot="$T/shot.png" "file://$T/report/index.html" >/dev/null
check "report screenshot made" test -s "$T/shot.png"
"$V" stats "$T/shot.png" --json >"$T/shot.json" 2>/dev/null
check "report screenshot is not blank (stddev)" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['width'] == 1280 and d['height'] == 900
assert all(c['stddev'] > 0.05 for c in d['channels_stats'][:3]), [c['stddev'] for c in d['channels_stats']]
" "$T/shot.json"
# the DOM after the scripts ran and the images loaded
chrome --window-size=1280,900 --virtual-time-budget=3000 --dump-dom "file://$T/report/index.html" >"$T/dom.html"
check "DOM: the failing pair's name" grep -q "pages/home.png" "$T/dom.html"
for w in FAILURE PASS MISSING NEW; do
    check "DOM: verdict $w shown" grep -q ">$w<" "$T/dom.html"
done
check "DOM: the failing pair's section with expected, actual and difference" python3 -c "
import re, sys
dom = open(sys.argv[1]).read()
m = re.search(r'<div class=\"pair\" id=\"p(\d+)\">(.*?)</div>\s*(<div class=\"pair\"|<p class=\"sub\">)', dom, re.S)
assert m, 'no pair section'
sec = m.group(2)
assert 'pages/home.png' in sec
for what in ('expected', 'actual', 'difference'):
    assert 'alt=\"%s\"' % what in sec, what
assert 'type=\"range\"' in sec and 'flip' in sec
" "$T/dom.html"
# every image the report names exists in it (no broken image)
check "every image of the report is in DIR/img" python3 -c "
import os, re, sys
d = sys.argv[1]
srcs = re.findall(r'src=\"([^\"]+)\"', open(os.path.join(d, 'index.html')).read())
assert srcs and all(s.startswith('img/') and os.path.isfile(os.path.join(d, s)) for s in srcs), srcs
" "$T/report"
# the slider and the flip button work: run them in the page and dump the DOM
cat >"$T/report/probe.html" <<'EOF'
<!DOCTYPE html><html><body><iframe id="f" src="index.html" width="1200" height="800"></iframe>
<pre id="out"></pre><script>
document.getElementById('f').onload = function () {
  var w = this.contentWindow, d = w.document, t = d.querySelector('img.top');
  var i = t.id.slice(3);
  w.slide(i, 25); var a = t.style.clipPath;
  w.flip(i); var b = t.style.clipPath;
  w.show(false); var hidden = Array.prototype.filter.call(d.querySelectorAll('tr.ok'), function (r) { return r.style.display === 'none'; }).length;
  var imgs = Array.prototype.every.call(d.querySelectorAll('img'), function (im) { return im.complete && im.naturalWidth > 0; });
  document.getElementById('out').textContent = 'PROBE slide=' + a + ' flip=' + b + ' hidden=' + hidden + ' imgs=' + imgs;
};
</script></body></html>
EOF
chrome --allow-file-access-from-files --window-size=1280,900 --virtual-time-budget=5000 --dump-dom "file://$T/report/probe.html" >"$T/probe.html"
check "the slider clips the actual image" grep -q "PROBE slide=inset(0px 75% 0px 0px)" "$T/probe.html"
check "flip shows one whole image" grep -Eq "flip=inset\((0px 100% 0px 0px|0px)\)" "$T/probe.html"
check "the 'not passing' filter hides the passing rows" grep -q "hidden=[1-9]" "$T/probe.html"
check "every image decoded" grep -q "imgs=true" "$T/probe.html"
[ "$fail" -eq 0 ] || { sed 's/^/  /' "$T/probe.html" | grep PROBE >&2; }
echo "test_compare_report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
