#!/bin/sh
# feroce switch in the firmware paper's threshold mode: no ECN marking; when a sender's
# throughput over a window exceeds the threshold the switch forges a CNP to its QP (learned
# from the receiver's ACKs). The sender's DCQCN must receive every forged CNP and slow down;
# the data still arrives verified.
set -eu
BIN=$1
PY=/usr/bin/python3
D=$(mktemp -d)
PFX=127.$((100 + $$ % 100)).$((($$ / 100) % 250))
cleanup() { for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done; rm -rf "$D"; }
trap cleanup EXIT INT TERM
"$BIN" switch --port $PFX.100:7001 --to $PFX.1:4791 --rate 1Gbps --threshold 200Mbps \
    --window 1ms --duration 30s --interval 0 --json >"$D/switch.json" &
SWPID=$!
PIDS="$SWPID"
"$BIN" send --bind $PFX.2 --once --to $PFX.100:7001 --cc dcqcn --line-rate 1Gbps \
    --ack-timeout 100ms --json >"$D/send.json" &
SPID=$!
PIDS="$PIDS $SPID"
sleep 0.3
"$BIN" recv --bind $PFX.1 --fe $PFX.2 --duration 3s --msg-size 32K --json >"$D/recv.json"
wait "$SPID"
kill -TERM "$SWPID" # it prints its counters as it exits
wait "$SWPID" || true
$PY - "$D" <<'PYEOF'
import json, sys
d = sys.argv[1]
sw = json.load(open(d + '/switch.json')); s = json.load(open(d + '/send.json'))['flows'][0]
r = json.load(open(d + '/recv.json'))['flows'][0]
forged = sw['ports'][0]['cnps_forged']
print('switch forged %d CNPs; the sender got %d; %d messages verified' % (forged, s['cnps'], r['msgs']))
assert forged > 0 and s['cnps'] == forged, (forged, s['cnps'])
assert sw['ports'][1]['marked'] == 0
assert r['msgs'] == s['msgs'] > 0 and r['verify_errors'] == 0 and not s['error'], (s, r)
PYEOF
