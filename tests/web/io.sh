#!/bin/sh
# --web on the tools on real sockets: feroce switch, send (--web-write) and recv on loopback,
# each with its dashboard (tests/web/web_check.py: JSON, SSE, abuse; on send a live CC
# parameter change), promtool on each /metrics; the stream still verified end to end.
set -u
FEROCE=$1
. "$(dirname "$0")/../script_env.sh"
PROMTOOL=$(command -v promtool || true)
PFX=127.$((100 + $$ % 100)).$((($$ / 100) % 250))
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
# the address a tool prints on its stderr file $1
port_of() {
    for _ in $(seq 50); do
        p=$(sed -n 's|.*dashboard at http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$1")
        [ -n "$p" ] && echo "$p" && return 0
        sleep 0.1
    done
    cat "$1" >&2
    return 1
}
check() { # TOOL PORT [write]
    $PY "$(dirname "$0")/web_check.py" "$2" "$T" "$1" ${3:-} || fail "$1: web checks"
    if [ -n "$PROMTOOL" ]; then
        "$PROMTOOL" check metrics <"$T/metrics.txt" || fail "$1: promtool check metrics"
        echo "$1: promtool check metrics: ok"
    fi
}
"$FEROCE" switch --port $PFX.100:7001 --to $PFX.1:4791 --rate 200Mbps --ecn --duration 40s \
    --interval 0 --json --web 127.0.0.1:0 >"$T/switch.json" 2>"$T/switch.err" &
SWPID=$!
PIDS="$SWPID"
"$FEROCE" send --bind $PFX.2 --once --to $PFX.100:7001 --cc dcqcn --line-rate 400Mbps \
    --ack-timeout 100ms --json --web 127.0.0.1:0 --web-write --web-hold 30s \
    >"$T/send.json" 2>"$T/send.err" &
SPID=$!
PIDS="$PIDS $SPID"
sleep 0.3
"$FEROCE" recv --bind $PFX.1 --fe $PFX.2 --duration 30s --msg-size 32K --json \
    --web 127.0.0.1:0 --web-hold 30s >"$T/recv.json" 2>"$T/recv.err" &
RPID=$!
PIDS="$PIDS $RPID"
sw=$(port_of "$T/switch.err") || fail "switch: no dashboard"
se=$(port_of "$T/send.err") || fail "send: no dashboard"
rv=$(port_of "$T/recv.err") || fail "recv: no dashboard"
check switch "$sw"
check send "$se" write
check recv "$rv"
# the run ends (30 s: the three checks, floods included, take ~25 s in a sanitizer build on a
# loaded machine, and the last one needs the run still going), each tool says so and keeps
# serving: Ctrl-C ends it
for _ in $(seq 300); do
    grep -q "stays up" "$T/recv.err" && grep -q "stays up" "$T/send.err" && break
    sleep 0.1
done
kill -INT "$RPID" "$SPID"
wait "$RPID" || { cat "$T/recv.err"; fail "recv exited $?"; }
wait "$SPID" || { cat "$T/send.err"; fail "send exited $?"; }
kill -INT "$SWPID"
wait "$SWPID"
$PY - "$T" <<'PYEOF' || fail "results"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/send.json"))["flows"][0]
r = json.load(open(d + "/recv.json"))["flows"][0]
sw = json.load(open(d + "/switch.json"))
assert r["msgs"] == s["msgs"] > 0 and r["verify_errors"] == 0 and not s["error"], (s, r)
print("stream: %d messages sent and verified, %d CE marks at the switch"
      % (r["msgs"], sw["ports"][1]["marked"]))
PYEOF
