#!/bin/sh
# feroce demo --web: the endpoints while the demo runs (tests/web/web_check.py), promtool on
# /metrics, and the demo's own result unchanged by all of it.
set -u
FEROCE=$1
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/dashboard_port.sh"
PROMTOOL=$(command -v promtool || true)
if [ -z "$PROMTOOL" ]; then
    echo "SKIP: promtool not found (Debian package 'prometheus'; scripts/deps.sh installs it)"
    exit 77
fi
# --web-hold: a slow (sanitizer) build's checks may outlast the 10 s run
"$FEROCE" demo --base 127.81.0.0 --rate 200M --duration 10s --web 127.0.0.1:0 --web-hold 60s >"$T/out" 2>"$T/err" &
pid=$!
dashboard_port "$pid"
$PY "$(dirname "$0")/web_check.py" "$port" "$T" || { kill "$pid"; fail "web checks"; }
"$PROMTOOL" check metrics <"$T/metrics.txt" || fail "promtool check metrics"
echo "promtool check metrics: ok"
for _ in $(seq 300); do
    grep -q "stays up" "$T/err" && break
    sleep 0.1
done
kill -INT "$pid"
wait "$pid" || { cat "$T/out" "$T/err"; fail "demo exited $?"; }
grep -q "data verified: [1-9][0-9]* bytes, 0 errors" "$T/out" || { cat "$T/out"; fail "demo result"; }
grep "data verified" "$T/out"
