#!/bin/sh
# fpgrad --report in a real browser, headless Chromium (skipped where none
# is installed): the page opens from the disk with no network, its table
# sorts by a column (index.html?sort=K, as a click on the header does),
# and it renders to a picture.
#
# make check runs it from the build directory with srcdir set; FPGRAD
# names another binary, FPKIT_BROWSER another browser.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"
need_python

browser=${FPKIT_BROWSER:-}
for b in chromium chromium-browser google-chrome google-chrome-stable; do
    [ -n "$browser" ] && break
    if command -v "$b" >/dev/null 2>&1; then browser=$b; fi
done
if [ -z "$browser" ]; then
    echo "check_report_browser: no headless Chromium here (Debian package chromium)"
    exit 77
fi
# headless, no network, its profile in $tmp
headless() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --no-first-run --user-data-dir="$tmp/profile" --proxy-server=127.0.0.1:9 \
        --proxy-bypass-list='<-loopback>' "$@" 2>"$tmp/browser.err"
}

good report --quiet --report "$tmp/rep" "$srcdir/tests/data/sample"
page="file://$tmp/rep/index.html"

# Sorted by fp16's zero % (column 7), descending: the order of the JSON's
# underflow fractions, ties in the table's order; by step (column 1).
for sort in -7 1; do
    if headless --dump-dom "$page?sort=$sort" >"$tmp/dom$sort.html" &&
        python3 - "$tmp/dom$sort.html" "$tmp/rep/fpgrad.json" "$sort" <<'PYEOF'
import json, re, sys
dom, report, sort = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), int(sys.argv[3])
body = dom[dom.index("<tbody>"):dom.index("</tbody>")]
rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
got = [(r[0], r[1]) for r in rows]
tensors = [(t["name"], str(t["step"]), t["formats"]["fp16"]["underflow_frac"] or 0, t["step"])
           for t in report["tensors"]]
if sort == -7:
    want = sorted(tensors, key=lambda t: -t[2])   # stable: ties keep the table's order
else:
    want = sorted(tensors, key=lambda t: t[3])
assert len(got) == len(tensors) == 128, len(got)
assert got == [(t[0], t[1]) for t in want], (got[:5], [(t[0], t[1]) for t in want][:5])
PYEOF
    then ok; else bad "sort=$sort: the table is not in that order: $(tail -n 3 "$tmp/browser.err")"; fi
done

# It renders: a picture of the page, not blank.
if headless --window-size=1280,1400 --screenshot="$tmp/shot.png" "$page" &&
    python3 - "$tmp/shot.png" <<'PYEOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", d[16:24]) == (1280, 1400)
assert len(d) > 30000, len(d)   # text, a table and plots, not a white page
PYEOF
then ok; else bad "screenshot: $(tail -n 3 "$tmp/browser.err")"; fi
summary
