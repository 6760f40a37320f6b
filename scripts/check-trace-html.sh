#!/bin/sh
# Checks the HTML timeline of cosock-trace in a real browser: headless
# Chromium renders the page made from the known trace of
# spec/support/trace_gen.lua, and pixels of the screenshot are compared with
# what the trace holds, by the layout rule of doc/tracing.md ("The layout"):
# the pixel where task k's row and its turn from t1 to t2 must be has the
# running colour, a wait has its kind's colour, a pixel where the task does
# not run does not, a wake arrow crosses the row between waker and woken,
# the filter box keeps the rows it names. Then a 10,000-task trace renders
# (its last task found by the filter, its first turn where it must be).
# The controls (buttons, wheel, drag, keys, filter, hover) are driven by a
# script in a copy of the page, and the view they leave is checked.
# Prints each check, then "N passed, N failed"; exits non-zero on a failure.
#   scripts/check-trace-html.sh [--images DIR]
#     --images DIR  also keep the screenshots the guide shows (doc/img/)
# Needs chromium and python3-pil (scripts/install-deps.sh --browser).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
images=
while [ $# -gt 0 ]; do
	case "$1" in
	--images) [ $# -ge 2 ] || { echo "usage: scripts/check-trace-html.sh [--images DIR]" >&2; exit 2; }
		images=$2; shift ;;
	*) echo "usage: scripts/check-trace-html.sh [--images DIR]" >&2; exit 2 ;;
	esac
	shift
done
"$top/scripts/install-deps.sh" --browser
lua=${LUA:-lua5.3}
chromium=${CHROMIUM:-chromium}
python=/usr/bin/python3   # Debian's, where python3-pil is
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$top"
export LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;"

# Renders URL at WxH into PNG. --virtual-time-budget lets the page's script
# finish before the picture is taken.
shot() {
	"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
		--user-data-dir="$tmp/profile" --virtual-time-budget=5000 --window-size="$2" \
		--screenshot="$3" "$1" > "$tmp/chromium.log" 2>&1 ||
		{ cat "$tmp/chromium.log" >&2; echo "check-trace-html: chromium failed on $1" >&2; exit 1; }
	[ -s "$3" ] || { cat "$tmp/chromium.log" >&2; echo "check-trace-html: no screenshot of $1" >&2; exit 1; }
}

"$lua" spec/support/trace_gen.lua small "$tmp/small.trace"
"$lua" bin/cosock-trace "$tmp/small.trace" -o "$tmp/small.html" > "$tmp/summary.txt"
url="file://$tmp/small.html"
shot "$url#arrows=0" 1000,400 "$tmp/spans.png"
shot "$url" 1000,400 "$tmp/arrows.png"
shot "$url#filter=work" 1000,400 "$tmp/filter.png"

# The controls, driven in the browser by a script added to a copy of the
# page: each step's effect on the view, as the status line says it.
cat > "$tmp/drive.js" <<'JS'
window.addEventListener("load", function () {
  var log = [], c = document.querySelector("canvas"), i = 0;
  function st() { return document.getElementById("status").textContent; }
  function wheel(dy) { c.dispatchEvent(new WheelEvent("wheel", { deltaY: dy, clientX: 504, clientY: 100, bubbles: true, cancelable: true })); }
  function key(k) { window.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true })); }
  function click(id) { document.getElementById(id).click(); }
  var steps = [
    ["zoom-in-button", function () { click("zin"); }],
    ["later-button", function () { click("right"); }],
    ["zoom-out-button", function () { click("zout"); }],
    ["fit-button", function () { click("fit"); }],
    ["wheel-at-0.4s", function () { wheel(-350); }],
    ["drag-100px-left", function () {
      c.dispatchEvent(new MouseEvent("mousedown", { clientX: 500, clientY: 100, bubbles: true }));
      window.dispatchEvent(new MouseEvent("mousemove", { clientX: 400, clientY: 100, bubbles: true }));
      window.dispatchEvent(new MouseEvent("mouseup", { bubbles: true })); }],
    ["key-0", function () { key("0"); }],
    ["hover-#1-at-0.4s", function () { window.dispatchEvent(new MouseEvent("mousemove", { clientX: 504, clientY: 36 + 40 + 8, bubbles: true })); }],
    ["key-minus", function () { key("-"); }],
    ["filter-#3", function () { var f = document.getElementById("filter"); f.value = "#3 "; f.dispatchEvent(new Event("input")); }],
  ];
  function next() {
    if (i > 0) log.push(steps[i - 1][0] + ": " + st());
    if (i === steps.length) {
      log.push("tip: " + document.getElementById("tip").textContent.replace(/\n/g, " | "));
      var p = document.createElement("pre"); p.id = "log"; p.textContent = log.join("\n"); document.body.appendChild(p);
      return;
    }
    try { steps[i][1](); } catch (e) { log.push("error: " + e); }
    i++; setTimeout(next, 100);
  }
  next();
});
JS
sed 's|</body>|<script src="drive.js"></script></body>|' "$tmp/small.html" > "$tmp/drive.html"
"$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" --virtual-time-budget=5000 \
	--window-size=1000,400 --dump-dom "file://$tmp/drive.html" > "$tmp/drive-dom.html" 2> "$tmp/chromium.log" || true
cat > "$tmp/drive-expected" <<'EXPECTED'
zoom-in-button: view 250.0 ms – 750.0 ms
later-button: view 375.0 ms – 875.0 ms
zoom-out-button: view 125.0 ms – 1.125 s
fit-button: view 0 – 1.000 s
wheel-at-0.4s: view 201.4 ms – 698.0 ms
drag-100px-left: view 262.7 ms – 759.3 ms
key-0: view 0 – 1.000 s
hover-#1-at-0.4s: view 0 – 1.000 s
key-minus: view -500.0 ms – 1.500 s
filter-#3: 1 of 3 tasks
tip: #1 server | waiting on recv (fd 7) | 0.100000 s → 0.700000 s  (600.0 ms) | ended by: close by #3 worker (fd 7) at 0.700000 s
EXPECTED

start=$(date +%s)
"$lua" spec/support/trace_gen.lua big "$tmp/big.trace" 10000
"$lua" bin/cosock-trace "$tmp/big.trace" -o "$tmp/big.html" --top 3 > "$tmp/big-summary.txt"
# The last task, by its label "#10000 task-10000", in a view of 0.5 ms
# around its first turn (spawned at 10 s, running from +0.1 to +0.3 ms).
shot "file://$tmp/big.html#filter=%2310000%20task&view=10.0,10.0005" 1200,600 "$tmp/big.png"
"$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" --virtual-time-budget=5000 \
	--window-size=1200,600 --dump-dom "file://$tmp/big.html" > "$tmp/big-dom.html" 2> "$tmp/chromium.log" || true
big_time=$(( $(date +%s) - start ))

# The checks: each "PNG WIDTH row T expected what", rows counted from 0 in
# view (-1: the loop's row), T seconds since the trace's start, expected a
# colour, "not:COLOUR" or "dark". The page's layout rule: the toolbar 36 px,
# the time axis 22 px, the loop's row at 22..38 and task rows of 16 px from
# 40 in the canvas; x = 180 + T / duration * (WIDTH - 190).
RUN="#1a9850" READY="#f1c40f" RECV="#3b7dd8" SEND="#8dc3f2" SLEEP="#b8b8b8" CHRECV="#e67e22"
RAISED="#e3001b" POLL="#c9d6e3" WHITE="#ffffff"
cat > "$tmp/checks" <<EOF
spans 1000 1.0 0 0.05 $RUN #1 server runs 0.01-0.1
spans 1000 1.0 0 0.40 $RECV #1 server waits on recv 0.1-0.7
spans 1000 1.0 0 0.40 not:$RUN #1 server does not run at 0.4
spans 1000 1.0 0 0.75 $RUN #1 server runs 0.7-0.8
spans 1000 1.0 0 0.90 $WHITE #1 server has ended at 0.9 (the row's background)
spans 1000 1.0 1 0.05 $READY #2 client ready 0-0.1 (woken at spawn)
spans 1000 1.0 1 0.20 $RUN #2 client runs 0.1-0.3
spans 1000 1.0 1 0.40 $SLEEP #2 client sleeps 0.3-0.5
spans 1000 1.0 1 0.55 $RUN #2 client runs 0.5-0.6
spans 1000 1.0 1 0.75 $SEND #2 client waits on send 0.6-0.9
spans 1000 1.0 1 0.95 $RUN #2 client runs 0.9-1.0
spans 1000 1.0 2 0.05 $WHITE #3 worker is not spawned yet at 0.05
spans 1000 1.0 2 0.20 $READY #3 worker ready 0.1-0.3
spans 1000 1.0 2 0.35 $RUN #3 worker runs 0.3-0.4
spans 1000 1.0 2 0.50 $CHRECV #3 worker waits on channel-recv 0.4-0.6
spans 1000 1.0 2 0.50 not:$RUN #3 worker does not run at 0.5
spans 1000 1.0 2 0.62 $RUN #3 worker runs 0.6-0.7
spans 1000 1.0 2 0.7005 $RAISED #3 worker raised at 0.7 (the end mark)
spans 1000 1.0 -1 0.45 $POLL the loop sleeps in a poll 0.4-0.5
spans 1000 1.0 1 0.70 $SEND without arrows, #2 client's row at 0.7 is its wait
arrows 1000 1.0 1 0.70 dark the wake at 0.7 from #3 worker to #1 server crosses #2 client's row
arrows 1000 1.0 1 0.55 $RUN #2 client's turn at 0.55 is not under an arrow
filter 1000 1.0 0 0.35 $RUN filtered on "work": #3 worker is the first row
filter 1000 1.0 1 0.25 $WHITE filtered on "work": no second row
big 1200 0.0005 0 0.0002 $RUN 10,000 tasks: #10000 task-10000 runs 10.0001-10.0003
big 1200 0.0005 0 0.0004 not:$RUN 10,000 tasks: #10000 task-10000 does not run after its first turn
EOF
"$python" - "$tmp" "$tmp/checks" <<'PY'
import sys
from PIL import Image
tmp, checks = sys.argv[1], sys.argv[2]
images, passed, failed = {}, 0, 0
def rgb(h):
    return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))
def close(a, b):
    return all(abs(x - y) <= 6 for x, y in zip(a, b))
for line in open(checks):
    png, width, dur, row, t, expected, *what = line.split()
    width, dur, row, t = int(width), float(dur), int(row), float(t)
    if png not in images:
        images[png] = Image.open("%s/%s.png" % (tmp, png)).convert("RGB")
    x = int(180 + t / dur * (width - 190))
    y = 36 + (22 + 8 if row < 0 else 40 + 16 * row + 8)
    got = images[png].getpixel((x, y))
    if expected == "dark":
        ok = max(got) < 100
    elif expected.startswith("not:"):
        ok = not close(got, rgb(expected[4:]))
    else:
        ok = close(got, rgb(expected))
    print("%s %s (%d, %d) is #%02x%02x%02x, expected %s: %s" % (
        "ok  " if ok else "FAIL", png, x, y, got[0], got[1], got[2], expected, " ".join(what)))
    passed, failed = passed + ok, failed + (not ok)
open("%s/result" % tmp, "w").write("%d %d\n" % (passed, failed))
PY
read -r passed failed < "$tmp/result"

# The summary of the known trace names the chain of wakes; the big page
# drew (the script sets data-rendered on <body>).
if grep -q -F '2 wakes, 0.600000 s to 0.700000 s: #2 client -send-> #3 worker -close-> #1 server' "$tmp/summary.txt"; then
	echo "ok   the summary names the chain client -> worker -> server"; passed=$((passed + 1))
else
	cat "$tmp/summary.txt"; echo "FAIL the summary does not name the chain"; failed=$((failed + 1))
fi
draw=$(sed -n 's/.*data-draw-ms="\([0-9.]*\)".*/\1/p' "$tmp/big-dom.html" | head -n 1)
if grep -q 'data-rendered="1"' "$tmp/big-dom.html" && grep -q '10000 of 10000 tasks' "$tmp/big-dom.html"; then
	echo "ok   the 10,000-task page drew all its rows' data (first draw ${draw} ms; $(wc -c < "$tmp/big.html") bytes; generate, summarize, render and shoot: ${big_time} s)"
	passed=$((passed + 1))
else
	echo "FAIL the 10,000-task page did not draw"; failed=$((failed + 1))
fi

while IFS= read -r want; do
	step=${want%%: *}
	got=$(grep -F "$step: " "$tmp/drive-dom.html" | head -n 1)
	case "$got" in
	*"${want#*: }"*) echo "ok   $want"; passed=$((passed + 1)) ;;
	*) echo "FAIL $want (the page says: ${got:-nothing})"; failed=$((failed + 1)) ;;
	esac
done < "$tmp/drive-expected"

if [ -n "$images" ]; then
	mkdir -p "$images"
	shot "$url" 900,200 "$images/trace-timeline.png"
	shot "$url#tip=0.4,0" 900,220 "$images/trace-hover.png"
	shot "file://$tmp/big.html#view=2,2.5&top=1990" 900,300 "$images/trace-10000.png"
	echo "check-trace-html: wrote $images/trace-timeline.png, trace-hover.png, trace-10000.png"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
