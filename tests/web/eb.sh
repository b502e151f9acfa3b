#!/bin/sh
# The event-building dashboard: `feroce demo --event-building --web` (every builder on one
# page), then `feroce builder --web` and `feroce evm --web` on their own; each checked while it
# runs (tests/web/eb_check.py: builder series grow, events/s and latency plausible) and with
# promtool; the demo's accounting still holds. With OUT and Chromium: the demo's page as
# headless Chromium draws it, saved to OUT (a test artifact; tests/web/png_check.py).
set -u
FEROCE=$1
OUT=${2:-}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/dashboard_port.sh"
PROMTOOL=$(command -v promtool || true)
if [ -z "$PROMTOOL" ]; then
    echo "SKIP: promtool not found (Debian package 'prometheus'; scripts/deps.sh installs it)"
    exit 77
fi
NET=127.$((150 + $$ % 100))
PIDS=""
# SIGINT first: the demo then kills the processes it started
trap 'kill -INT $PIDS 2>/dev/null; sleep 1; kill -9 $PIDS 2>/dev/null; rm -rf "$T"' EXIT
check() { # TOOL PORT BUILDERS
    $PY "$(dirname "$0")/eb_check.py" "$2" "$T" "$1" "$3" || return 1
    "$PROMTOOL" check metrics <"$T/metrics.txt" || { echo "$1: promtool check metrics"; return 1; }
    echo "$1: promtool check metrics: ok"
}
port_of() { # the address a tool prints on its stderr file $1
    for _ in $(seq 100); do
        p=$(sed -n 's|.*dashboard at http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$1")
        [ -n "$p" ] && echo "$p" && return 0
        sleep 0.1
    done
    cat "$1" >&2
    return 1
}
wait_hold() { # stderr file
    for _ in $(seq 300); do
        grep -q "stays up" "$1" && return 0
        sleep 0.1
    done
}

# 1. the demo: builder 2 slowed at 1 s and killed at 2 s of building
"$FEROCE" demo --event-building --events 20000 --trigger-hz 5000 --slow-at 1s --kill-at 2s \
    --base $NET --web 127.0.0.1:0 --web-hold 60s >"$T/out" 2>"$T/err" &
pid=$!
PIDS=$pid
dashboard_port "$pid"
check demo "$port" 3 || { kill -INT "$pid"; fail "demo: dashboard checks"; }
if [ -n "$OUT" ] && [ -n "$CHROMIUM" ] && command -v chromedriver >/dev/null; then
    sleep 1 # the slowed builder's kill on the charts
    $PY "$(dirname "$0")/browser.py" "http://127.0.0.1:$port/" "$OUT" --static --size 1400x900 &&
        $PY "$(dirname "$0")/png_check.py" "$OUT" 40000 || fail "demo: the page in the browser"
    echo "demo: screenshot $OUT"
elif [ -n "$OUT" ]; then
    echo "no chromium or chromedriver (Debian packages 'chromium', 'chromium-driver'): no screenshot"
fi
wait_hold "$T/err"
kill -INT "$pid"
wait "$pid" || { cat "$T/out" "$T/err"; fail "demo exited $?"; }
grep -q "accounting holds" "$T/out" || { cat "$T/out"; fail "demo accounting"; }
grep "accounting:" "$T/out"

# 2. builder and evm on their own: 2 front-ends, 2 builders, b0 and the manager served
K=30000
FES=$NET.1.1,$NET.1.2
MGR=$NET.3.1:17200
"$FEROCE" evm --builders 2 --frontends 2 --bind $MGR --events $K --interval 0 \
    --web 127.0.0.1:0 --web-hold 60s >"$T/evm.out" 2>"$T/evm.err" &
EPID=$!
PIDS="$PIDS $EPID"
"$FEROCE" builder --id 0 --builders 2 --manager $MGR --fe $FES --bind $NET.2.1 --events $K \
    --frag-bytes 1K-2K --interval 0 --web 127.0.0.1:0 --web-hold 60s >"$T/b0.out" 2>"$T/b0.err" &
BPID=$!
PIDS="$PIDS $BPID"
"$FEROCE" builder --id 1 --builders 2 --manager $MGR --fe $FES --bind $NET.2.2 --events $K \
    --frag-bytes 1K-2K --interval 0 >"$T/b1.out" 2>"$T/b1.err" &
PIDS="$PIDS $!"
for k in 0 1; do
    "$FEROCE" send --eb-source $k --eb-builders 2 --events $K --trigger-hz 5000 \
        --bind $NET.1.$((k + 1)) --frag-bytes 1K-2K --manager $MGR --timeout 60s \
        >"$T/fe$k.out" 2>&1 &
    PIDS="$PIDS $!"
done
eport=$(port_of "$T/evm.err") || fail "evm: no dashboard"
bport=$(port_of "$T/b0.err") || fail "builder: no dashboard"
check builder "$bport" 1 || fail "builder: dashboard checks"
check evm "$eport" 2 || fail "evm: dashboard checks"
# Ctrl-C ends the run, another the hold; a sanitizer build's report would be on stderr
kill -INT "$BPID" "$EPID"
sleep 0.5
kill -INT "$BPID" "$EPID" 2>/dev/null
wait "$BPID" "$EPID"
if grep -E "runtime error|Sanitizer" "$T/b0.err" "$T/evm.err"; then fail "sanitizer report"; fi
echo "builder, evm: ended on Ctrl-C"
