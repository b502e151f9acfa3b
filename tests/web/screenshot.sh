#!/bin/sh
# The dashboard as a browser draws it: headless Chromium's screenshot of `feroce demo --web
# --web-write` mid-run, with a parameter change posted 4 s in (its mark on the charts, the
# changed value in the parameter table), kept as OUT (a test artifact) and checked to be a real
# picture (tests/web/png_check.py).
set -u
FEROCE=$1
OUT=$2
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/dashboard_port.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP: chromium not found (Debian package 'chromium')"
    exit 77
fi
"$FEROCE" demo --rate 200M --duration 30s --web 127.0.0.1:0 --web-hold 20s --web-write \
    >"$T/out" 2>"$T/err" &
pid=$!
dashboard_port "$pid"
sleep 4
$PY -c "import urllib.request as u; u.urlopen(u.Request('http://127.0.0.1:$port/api/params', data=b'flow=all&set=rpg_ai_rate=10', method='POST'), timeout=5)" ||
    { kill "$pid"; fail "POST /api/params"; }
sleep 4 # the page draws the run so far from /api/history, then follows the stream
# Chromium takes its picture soon after the page's load event; the page's own requests
# (/api/history) may not be answered by then on a loaded machine: a blank picture is taken
# again, three times at most.
ok=""
for _ in 1 2 3; do
    rm -f "$OUT"
    HOME=$T timeout 90 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$T/chromium" --window-size=1400,1700 --timeout=6000 \
        --screenshot="$OUT" "http://127.0.0.1:$port/" >"$T/chromium.log" 2>&1
    [ -s "$OUT" ] && $PY "$(dirname "$0")/png_check.py" "$OUT" 40000 && ok=1 && break
    echo "the picture is blank or missing: again"
done
# Ctrl-C ends the run, another the hold
for _ in 1 2 3 4 5; do
    kill -INT "$pid" 2>/dev/null || break
    sleep 1
done
wait "$pid"
[ -s "$OUT" ] || { tail "$T/chromium.log"; fail "no screenshot"; }
[ -n "$ok" ] || fail "screenshot check"
