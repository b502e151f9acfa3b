#!/bin/sh
# feroce send (front-end role) and feroce recv (host role) over loopback: the side channel in
# both roles over real sockets (a CLOSE_QP for an unknown QP is answered NO_QP, junk is ignored),
# then a stream: every message arrives once, verified, and the sender saw every completion.
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

"$BIN" send --bind $FE --once --line-rate 2Gbps --json >"$D/send.json" 2>"$D/send.err" &
SPID=$!
sleep 0.3

# side channel by hand: junk, a truncated message, a CLOSE_QP of a QP that does not exist
$PY - "$FE" "$HOST" <<'PYEOF'
import socket, struct, sys
fe, host = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((host, 17186))
s.settimeout(2.0)
def qi(qpn, psn, rkey, va, ip):
    return struct.pack('>LLLQL', qpn, psn, rkey, va, ip)
ipn = lambda a: struct.unpack('>L', socket.inet_aton(a))[0]
close = struct.pack('>B', 1 | (4 << 1)) + qi(0x33, 0, 0, 0, ipn(host)) + qi(999, 0, 0, 0, ipn(fe)) \
    + struct.pack('>HBLLL', 17186, 0, 0, 0, 0)
assert len(close) == 64
s.sendto(b'\x00' * 10, (fe, 17185))            # junk: refused, no answer
s.sendto(close[:63], (fe, 17185))              # truncated: refused, no answer
s.sendto(close + b'\x00', (fe, 17185))         # oversized: refused, no answer
s.sendto(close, (fe, 17185))                   # the real one
data, addr = s.recvfrom(256)
assert len(data) == 64, len(data)
flags = data[0]
assert flags & 1 and (flags >> 1) & 7 == 4, hex(flags)       # answers CLOSE_QP
assert (flags >> 4) & 1 and (flags >> 5) & 7 == 2, hex(flags)  # ack valid, NO_QP
loc_qpn, = struct.unpack('>L', data[1:5])
rem_qpn, = struct.unpack('>L', data[25:29])
assert loc_qpn == 999 and rem_qpn == 0x33, (loc_qpn, rem_qpn)
try:
    extra = s.recvfrom(256)
    raise SystemExit('unexpected second reply %r' % (extra,))
except socket.timeout:
    pass
print('side channel: CLOSE_QP of an unknown QP answered NO_QP; junk ignored')
PYEOF

"$BIN" recv --bind $HOST --fe $FE --count 3000 --msg-size 16K --timeout 60s --json \
    >"$D/recv.json" 2>"$D/recv.err" || { cat "$D/recv.err" "$D/recv.json"; exit 1; }
wait "$SPID" || { echo "feroce send failed"; cat "$D/send.err" "$D/send.json"; exit 1; }
SPID=
$PY - "$D/send.json" "$D/recv.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert r['ok'] and s['ok'], (s, r)
rf, sf = r['flows'], s['flows']
assert len(rf) == 1 and len(sf) == 1, (rf, sf)
assert rf[0]['msgs'] == 3000 and rf[0]['verify_errors'] == 0 and rf[0]['seq_errors'] == 0, rf
assert rf[0]['side_channel'] == 'closed', rf
assert sf[0]['msgs'] == 3000 and not sf[0]['error'], sf
assert sf[0]['qpn'] == rf[0]['peer_qpn'] == 256 and sf[0]['peer_qpn'] == rf[0]['qpn'], (sf, rf)
print('stream: 3000 messages of 16 KiB verified; sender completed all 3000')
PYEOF

# pair NAME "SEND OPTIONS" "RECV OPTIONS": one more stream, both ends' JSON in $D/NAME.{send,recv}
pair() {
    "$BIN" send --bind $FE --once --line-rate 2Gbps $2 --json >"$D/$1.send" 2>"$D/$1.serr" &
    SPID=$!
    sleep 0.3
    "$BIN" recv --bind $HOST --fe $FE --msg-size 16K --timeout 60s $3 --json \
        >"$D/$1.recv" 2>"$D/$1.rerr" || { cat "$D/$1.rerr" "$D/$1.recv" "$D/$1.serr"; exit 1; }
    wait "$SPID" || { echo "feroce send failed"; cat "$D/$1.serr" "$D/$1.send"; exit 1; }
    SPID=
}

# check NAME COUNT: both ends ok, COUNT messages verified once on each; prints the sender's flow
check() {
    $PY - "$D/$1.send" "$D/$1.recv" "$2" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); n = int(sys.argv[3])
assert r['ok'] and s['ok'], (s, r)
rf, sf = r['flows'][0], s['flows'][0]
assert rf['msgs'] == n and rf['verify_errors'] == 0 and rf['seq_errors'] == 0, rf
assert sf['msgs'] == n and not sf['error'], sf
print(json.dumps(sf))
PYEOF
}

# Injected loss, every 23rd data packet, retransmissions included: Go-Back-N must finish even
# when a go-back window is a multiple of 23 packets (the hook drops a PSN at most once; purely
# periodic loss failed here about one run in five with "retry exceeded"), and every byte still
# arrives once, verified.
pair drop "--drop-every 23" "--count 400"
check drop 400 | $PY -c "
import json, sys; sf = json.load(sys.stdin)
assert sf['dropped_on_purpose'] >= 400 * 4 // 23, sf   # 16 KiB = 4+ packets per message
assert sf['retx_pkts'] > 0, sf
print('with every 23rd packet dropped: %d drops, %d retransmitted packets, 400 messages verified'
      % (sf['dropped_on_purpose'], sf['retx_pkts']))"

# Doorbells every 4th message (and on the last; 401 is not a multiple of 4), with a slow
# consumer: each immediate completes the messages before it, credits count doorbells, nothing
# is lost or overwritten.
pair bells "--imm-every 4 --slots 16" "--count 401 --slots 16 --imm-every 4 --consume-rate 200Mbps"
check bells 401 | $PY -c "
import json, sys; sf = json.load(sys.stdin)
print('doorbells every 4th message, consumer at 200 Mb/s: 401 messages verified, %d RNR NAKs'
      % sf['rnr_naks'])"

# --record appends every consumed message, whole, in order
pair rec "" "--count 20 --record $D/rec.bin"
check rec 20 >/dev/null
[ "$(wc -c < "$D/rec.bin")" -eq $((20 * 16384)) ] || { echo "record: $(wc -c < "$D/rec.bin") bytes"; exit 1; }
echo "record: 20 messages of 16 KiB in the file"

# A record that cannot be written (a full disk): every message is still received and verified,
# the receiver says how many the record misses, and exits 1 (it used to exit 0 without a word).
if [ -w /dev/full ]; then
    "$BIN" send --bind $FE --once --line-rate 2Gbps --json >"$D/full.send" 2>"$D/full.serr" &
    SPID=$!
    sleep 0.3
    if "$BIN" recv --bind $HOST --fe $FE --msg-size 16K --timeout 60s --count 50 \
        --record /dev/full --json >"$D/full.recv" 2>"$D/full.rerr"; then
        echo "recv --record /dev/full exited 0"
        exit 1
    fi
    wait "$SPID" || { echo "feroce send failed"; cat "$D/full.serr"; exit 1; }
    SPID=
    grep -q "recording to /dev/full failed (No space left on device): 50 received messages are not in it" \
        "$D/full.rerr" || { echo "record failure: $(cat "$D/full.rerr")"; exit 1; }
    $PY - "$D/full.recv" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1])); f = r['flows'][0]
assert not r['ok'] and f['msgs'] == 50 and f['verify_errors'] == 0 and f['record_lost'] == 50, r
print('record on a full disk: 50 messages verified, 50 missing from the record, exit status 1')
PYEOF
fi
