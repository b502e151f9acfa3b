#!/bin/sh
# Backpressure without loss: a receiver whose consumer takes 1/10 of what the sender offers.
# Receive buffers come back only as the consumer takes messages, so the sender meets RNR NAKs
# and its throughput follows the consumer; nothing is lost, everything is verified.
set -eu
BIN=$1
PY=/usr/bin/python3
D=$(mktemp -d)
# loopback addresses of this run only: concurrent test runs must not collide
PFX=127.$((100 + $$ % 100)).$((($$ / 100) % 250))
FE=$PFX.2
HOST=$PFX.1
cleanup() {
    [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null
    [ -n "${RPID:-}" ] && kill "$RPID" 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT INT TERM

# The time (ns) process $1 spent runnable but waiting for a CPU (/proc/PID/schedstat) and its
# lifetime, sampled until it exits: on a loaded machine the consumer cannot take 40 Mb/s while
# it waits.
cpu_wait_ns() {
    t0=$(date +%s%N)
    last=0
    while [ -e "/proc/$1/schedstat" ]; do
        v=$(cut -d' ' -f2 "/proc/$1/schedstat" 2>/dev/null) || v=
        [ -n "$v" ] && last=$v
        sleep 0.02
    done
    echo "$last $(($(date +%s%N) - t0))"
}

"$BIN" send --bind $FE --once --line-rate 400Mbps --ack-timeout 100ms --json >"$D/send.json" 2>"$D/send.err" &
SPID=$!
cpu_wait_ns $SPID >"$D/send.wait" &
sleep 0.3
"$BIN" recv --bind $HOST --fe $FE --count 600 --msg-size 16K --consume-rate 40Mbps --timeout 60s \
    --json >"$D/recv.json" 2>"$D/recv.err" &
RPID=$!
cpu_wait_ns $RPID >"$D/recv.wait" &
wait "$RPID" || { cat "$D/recv.err" "$D/recv.json"; exit 1; }
RPID=
wait "$SPID" || { cat "$D/send.err" "$D/send.json"; exit 1; }
SPID=
wait
$PY - "$D/send.json" "$D/recv.json" "$(cat "$D/send.wait")" "$(cat "$D/recv.wait")" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))['flows'][0]; r = json.load(open(sys.argv[2]))['flows'][0]
def waited(arg):  # the share of its life a process spent waiting for a CPU
    w, life = (int(v) for v in arg.split())
    return min(1.0, w / life) if life > 0 else 0.0
offered, consumer = 0.4, 0.04  # Gb/s (the sender's line rate counts headers: a bit above)
# The rate the consumer could reach: its limit over the share of the run in which the slower
# of the two processes had a CPU when it asked for one.
starved = max(waited(sys.argv[3]), waited(sys.argv[4]))
reachable = consumer * (1 - starved)
print('sender %.1f Mb/s, consumer %.1f Mb/s (offered %.0f, consumer limit %.0f, reachable %.1f: '
      '%.0f %% of the time waiting for a CPU): %d RNR NAKs, %d messages verified' %
      (s['gbps'] * 1e3, r['gbps'] * 1e3, offered * 1e3, consumer * 1e3, reachable * 1e3,
       starved * 100, r['rnr_naks'], r['msgs']))
assert r['msgs'] == s['msgs'] == 600 and r['verify_errors'] == 0 and r['seq_errors'] == 0, (s, r)
assert not s['error'] and not r['qp_error']
assert r['rnr_naks'] > 0 and s['rnr_naks'] > 0, 'no backpressure seen'
assert s['gbps'] <= 1.15 * consumer, 'the sender outran the consumer'
assert s['gbps'] >= 0.5 * reachable, 'the sender did not keep up with the consumer'
PYEOF
