#!/bin/sh
# Forged RDMA WRITEs at a live stream (see docs/security.md). feroce send streams to feroce recv
# on loopback (random rkeys; the first PSN given so the test knows where the stream's PSNs lie)
# while tests/io/forge.c sends forged WRITE ONLY packets with a valid ICRC at recv's data port:
#  1. from another address inside --allow, right QPN, rkeys guessed (the old defaults 0x1000..,
#     random), VAs inside and outside the ring, PSNs across the stream's whole window: refused
#     by the source check, every one;
#  2. from an address outside --allow: refused by the allow-list, every one (and side-channel
#     replies from outside it and from a host that is not the front-end);
#  3. (root) spoofed with the sender's own address and port through a raw socket: PSNs just
#     behind the stream (duplicates: acknowledged, never executed) and just beyond its end (out
#     of sequence: dropped, NAKed), never the exact PSN expected;
# and the stream completes with every message verified, no rkey or range refusal reached, no QP
# error. Then the exact expected PSN on idle QPs: a wrong rkey, a VA below the ring and one
# straddling its end are refused by the responder (NAK remote access, QP to error, as RC does)
# and nothing is written.
set -eu
BIN=$1
FORGE=$2
PY=/usr/bin/python3
D=$(mktemp -d)
PFX=127.$((100 + $$ % 100)).$((($$ / 100) % 250))
HOST=$PFX.2
FE=$PFX.3
OTHER=$PFX.9  # inside --allow, not the peer
OUTSIDE=$PFX.77 # outside --allow
PIDS=
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$D"; }
trap cleanup EXIT INT TERM

COUNT=3000
PSN=$($PY -c 'import random; print(random.randrange(1 << 20, (1 << 24) - (1 << 20)))')
"$BIN" send --bind $FE --once --line-rate 40Mbps --interval 100ms >"$D/send.out" 2>"$D/send.err" &
SPID=$!
PIDS="$SPID"
sleep 0.3
"$BIN" recv --bind $HOST --fe $FE --allow $PFX.0/28 --count $COUNT --msg-size 4K --psn $PSN \
    --timeout 60s --interval 0 --json >"$D/recv.json" 2>"$D/recv.err" &
RPID=$!
PIDS="$PIDS $RPID"
# the stream runs (its QP has executed packets: its peer is pinned) before anything is forged
i=0
until grep -q 'msgs [1-9]' "$D/send.out"; do
    i=$((i + 1))
    [ $i -lt 300 ] || { echo "the stream did not start"; cat "$D/send.out" "$D/recv.err"; exit 1; }
    sleep 0.1
done

VAS=0x100000000,0x100001000,0xfffff000,0x200000000,0x0
# 1: every PSN of the stream's window, spread over it
"$FORGE" --to $HOST:4791 --from $OTHER --qpn 17 --psn $PSN --n 150 --rkeys 0x1000,0x1001,0x1002 \
    --vas $VAS >"$D/n1a"
"$FORGE" --to $HOST:4791 --from $OTHER --qpn 17 --psn $((PSN + 1500)) --n 150 --rkeys random \
    --vas $VAS >"$D/n1b"
# 2
"$FORGE" --to $HOST:4791 --from $OUTSIDE --qpn 17 --psn $((PSN + 100)) --n 100 --rkeys random \
    >"$D/n2"
# side-channel replies at recv's reply port: 5 from outside --allow, 5 from a non-front-end
$PY - $HOST $OUTSIDE $OTHER <<'PYEOF'
import socket, sys
for src in sys.argv[2:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    for _ in range(5):
        s.sendto(b'\x21' + b'\x00' * 63, (sys.argv[1], 17186))
PYEOF
# 3: the sender's address and port, PSNs outside the window the stream passes through
SPOOF=0
if [ "$(id -u)" = 0 ]; then
    "$FORGE" --to $HOST:4791 --spoof $FE:4791 --qpn 17 --psn $((PSN - 200)) --n 200 \
        --rkeys 0x1000,0x1001 --vas $VAS >"$D/n3a"
    "$FORGE" --to $HOST:4791 --spoof $FE:4791 --qpn 17 --psn $((PSN + COUNT + 1)) --n 100 \
        --rkeys random --vas $VAS >"$D/n3b"
    SPOOF=1
fi
wait $RPID || { echo "feroce recv failed"; cat "$D/recv.err" "$D/recv.json"; exit 1; }
wait $SPID || { echo "feroce send failed"; cat "$D/send.err" "$D/send.out"; exit 1; }
PIDS=

$PY - "$D" $SPOOF <<'PYEOF'
import json, sys, os
d, spoof = sys.argv[1], sys.argv[2] == '1'
n = lambda f: int(open(os.path.join(d, f)).read()) if os.path.exists(os.path.join(d, f)) else 0
r = json.load(open(d + '/recv.json'))
rf, fl = r['refused'], r['flows'][0]
other, outside, dup, ooo = n('n1a') + n('n1b'), n('n2'), n('n3a'), n('n3b')
print('forged: %d from another address, %d from outside --allow, %d spoofed duplicates, '
      '%d spoofed beyond the stream' % (other, outside, dup, ooo))
print('recv refused:', rf)
print('stream: %d messages verified, %d verify errors, qp_error %s' %
      (fl['msgs'], fl['verify_errors'], fl['qp_error']))
assert r['ok'] and fl['msgs'] == 3000 and not fl['qp_error'], 'the stream did not complete'
assert rf['source'] == other, 'source refusals %d != %d sent' % (rf['source'], other)
assert rf['allow'] == outside, 'allow-list refusals %d != %d sent' % (rf['allow'], outside)
if spoof:
    # the stream's own retransmissions (after the NAKs the forged packets provoke) add to these
    assert rf['dup_psn'] >= dup, 'duplicates counted %d < %d sent' % (rf['dup_psn'], dup)
    assert rf['ooo_psn'] >= ooo, 'out of sequence counted %d < %d sent' % (rf['ooo_psn'], ooo)
assert rf['sc_allow'] == 5 and rf['sc_other'] >= 5, 'side-channel refusals'
assert rf['bad_rkey'] == 0 and rf['bad_access'] == 0, 'a forged packet reached the rkey check'
print('every forged packet refused and counted; none executed')
PYEOF

# The exact PSN expected, on idle QPs (manual peers at $FE; the forger sends from $FE's address
# while no sender runs). QP 17: a wrong rkey; QP 18: its rkey, a VA below its ring; QP 19: its
# rkey, a write straddling the end of its ring (4 slots x 4 KiB).
RKEY=0x5eed0000
"$BIN" recv --bind $HOST --manual 3 --peer $FE --peer-qpn 100 --psn $PSN --rkey $RKEY \
    --slots 4 --msg-size 4K --count 1 --timeout 2s --drain 100ms --interval 0 --json \
    >"$D/idle.json" 2>"$D/idle.err" &
RPID=$!
PIDS="$RPID"
sleep 0.3
RING=16384
"$FORGE" --to $HOST:4791 --from $FE --qpn 17 --psn $PSN --n 1 --rkeys 0x5eed0100 >/dev/null
"$FORGE" --to $HOST:4791 --from $FE --qpn 18 --psn $PSN --n 1 --rkeys $((RKEY + 1)) \
    --vas $((0x100000000 + RING - 4096)) >/dev/null
"$FORGE" --to $HOST:4791 --from $FE --qpn 19 --psn $PSN --n 1 --rkeys $((RKEY + 2)) \
    --vas $((0x100000000 + 3 * RING - 100)) --len 4096 >/dev/null
wait $RPID || true
PIDS=
$PY - "$D/idle.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
f = r['flows']
print('exact PSN: bad_rkey %d (qp_error %s), below the ring %d (qp_error %s), '
      'across its end %d (qp_error %s); messages %d' %
      (f[0]['bad_rkey'], f[0]['qp_error'], f[1]['bad_access'], f[1]['qp_error'],
       f[2]['bad_access'], f[2]['qp_error'], sum(x['msgs'] for x in f)))
assert f[0]['bad_rkey'] == 1 and f[0]['qp_error']
assert f[1]['bad_access'] == 1 and f[1]['qp_error']
assert f[2]['bad_access'] == 1 and f[2]['qp_error']
assert sum(x['msgs'] for x in f) == 0 and sum(x['bytes'] for x in f) == 0
print('an exact PSN with a wrong key or range breaks the QP (RC), writes nothing')
PYEOF
