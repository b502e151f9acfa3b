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
cleanup() { [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT INT TERM
"$BIN" send --bind $FE --once --line-rate 400Mbps --ack-timeout 100ms --json >"$D/send.json" 2>"$D/send.err" &
SPID=$!
sleep 0.3
"$BIN" recv --bind $HOST --fe $FE --count 600 --msg-size 16K --consume-rate 40Mbps --timeout 60s \
    --json >"$D/recv.json" 2>"$D/recv.err" || { cat "$D/recv.err" "$D/recv.json"; exit 1; }
wait "$SPID" || { cat "$D/send.err" "$D/send.json"; exit 1; }
SPID=
$PY - "$D/send.json" "$D/recv.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))['flows'][0]; r = json.load(open(sys.argv[2]))['flows'][0]
offered, consumer = 0.4, 0.04  # Gb/s (the sender's line rate counts headers: a bit above)
print('sender %.1f Mb/s, consumer %.1f Mb/s (offered %.0f, consumer limit %.0f): %d RNR NAKs, '
      '%d messages verified' % (s['gbps'] * 1e3, r['gbps'] * 1e3, offered * 1e3, consumer * 1e3,
                                r['rnr_naks'], r['msgs']))
assert r['msgs'] == s['msgs'] == 600 and r['verify_errors'] == 0 and r['seq_errors'] == 0, (s, r)
assert not s['error'] and not r['qp_error']
assert r['rnr_naks'] > 0 and s['rnr_naks'] > 0, 'no backpressure seen'
assert s['gbps'] <= 1.15 * consumer, 'the sender outran the consumer'
assert s['gbps'] >= 0.5 * consumer, 'the sender did not keep up with the consumer'
PYEOF
