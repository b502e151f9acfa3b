#!/bin/sh
# The dashboard as a browser draws it: `feroce demo --web --web-write` mid-run, with a parameter
# change posted 4 s in, loaded by headless Chromium driven through chromedriver
# (tests/web/browser.py): every panel must receive data in the page (point counts grow, values
# in range, CNPs seen, the change's mark on the charts); the screenshot, taken once the charts
# hold data, is kept as OUT (a test artifact) and checked to be a real picture
# (tests/web/png_check.py).
set -u
FEROCE=$1
OUT=$2
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/dashboard_port.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ] || ! command -v chromedriver >/dev/null; then
    echo "SKIP: chromium or chromedriver not found (Debian packages 'chromium', 'chromium-driver')"
    exit 77
fi
"$FEROCE" demo --base 127.82.0.0 --rate 200M --duration 30s --web 127.0.0.1:0 --web-hold 20s --web-write \
    >"$T/out" 2>"$T/err" &
pid=$!
dashboard_port "$pid"
sleep 4
$PY -c "import urllib.request as u; u.urlopen(u.Request('http://127.0.0.1:$port/api/params', data=b'flow=all&set=rpg_ai_rate=10', method='POST'), timeout=5)" ||
    { kill "$pid"; fail "POST /api/params"; }
sleep 1
ok=""
$PY "$(dirname "$0")/browser.py" "http://127.0.0.1:$port/" "$OUT" --marks 1 &&
    $PY "$(dirname "$0")/png_check.py" "$OUT" 40000 && ok=1
# Ctrl-C ends the run, another the hold
for _ in 1 2 3 4 5; do
    kill -INT "$pid" 2>/dev/null || break
    sleep 1
done
wait "$pid"
[ -s "$OUT" ] || fail "no screenshot"
[ -n "$ok" ] || fail "screenshot check"
