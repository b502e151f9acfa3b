#!/bin/sh
# A lost tx-meta start. The side channel acknowledges no tx-meta, so the host (feroce recv)
# sends its start again until the stream's first packet arrives:
#  1. against the firmware model (fw_model.py --drop-tx-meta 1): the first start is lost, the
#     second starts the one transfer (a third would be ignored while it runs), every message
#     verified, the QP closed;
#  2. against feroce send through a side-channel relay that loses the first tx-meta start and
#     repeats every later one: the stream starts once and completes, every message verified;
#  3. against the model losing every start: recv gives up with a clear message after its
#     side-channel tries instead of waiting for ever.
set -eu
BIN=$1
PY=/usr/bin/python3
HERE=$(dirname "$0")
. "$HERE/fw_lib.sh"
RELAY=$PFX.3
PIDS=
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    fw_cleanup
}
trap cleanup EXIT INT TERM

# 1. the firmware model loses the first start
model "$D/fw1.json" --drop-tx-meta 1
rc=0
"$BIN" recv --bind $HOST --fe $FE --count 300 --msg-size 8K --timeout 20s --json \
    >"$D/recv1.json" 2>"$D/recv1.err" || rc=$?
stop_model
$PY - "$D/fw1.json" "$D/recv1.json" "$rc" "$D/recv1.err" <<'PYEOF'
import json, sys
fw = json.load(open(sys.argv[1]))
rc, err = int(sys.argv[3]), open(sys.argv[4]).read()
try:
    r = json.load(open(sys.argv[2]))
except ValueError:
    r = {}
print("firmware model:", fw)
assert rc == 0 and r.get("ok"), f"recv failed (exit {rc}) after a lost tx-meta start: {err}"
f = r["flows"][0]
assert f["msgs"] == 300 and f["verify_errors"] == 0, f
assert fw["tx_meta_dropped"] == 1 and fw["tx_meta_starts"] >= 2, fw
assert fw["streams"] == 1 and fw["senders_ok"], fw
assert fw["open"] == [], fw
print("1. firmware model: first start lost, resent, %d starts, one transfer, 300 messages "
      "verified" % fw["tx_meta_starts"])
PYEOF

# 2. feroce send behind a relay that loses the first start and repeats the others
"$BIN" send --bind $FE --once --line-rate 2Gbps --json >"$D/send2.json" 2>"$D/send2.err" &
SPID=$!
$PY - $RELAY $FE $HOST "$D/relay.json" <<'PYEOF' &
import json, select, signal, socket, sys
relay, fe, host, out = sys.argv[1:5]
st = {"starts": 0, "dropped": 0, "repeated": 0}
def done(*_):
    json.dump(st, open(out, "w"))
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
to_fe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # host -> relay:17185 -> fe
to_fe.bind((relay, 17185))
to_host = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # fe -> relay:17186 -> host
to_host.bind((relay, 17186))
while True:
    ready, _, _ = select.select([to_fe, to_host], [], [], 0.2)
    for s in ready:
        b, _ = s.recvfrom(2048)
        if s is to_host:
            to_fe.sendto(b, (host, 17186))
            continue
        if len(b) >= 64 and b[51] & 3 == 3:  # tx-meta start
            st["starts"] += 1
            if st["starts"] == 1:
                st["dropped"] += 1
                continue
            to_host.sendto(b, (fe, 17185))
            st["repeated"] += 1
        to_host.sendto(b, (fe, 17185))
PYEOF
RLPID=$!
PIDS="$SPID $RLPID"
sleep 0.3
rc=0
"$BIN" recv --bind $HOST --fe $RELAY --count 300 --msg-size 8K --timeout 20s --json \
    >"$D/recv2.json" 2>"$D/recv2.err" || rc=$?
src=0
wait "$SPID" || src=$?
kill -TERM "$RLPID"
wait "$RLPID" || true
PIDS=
$PY - "$D/relay.json" "$D/recv2.json" "$rc" "$D/recv2.err" "$src" "$D/send2.err" <<'PYEOF'
import json, sys
st = json.load(open(sys.argv[1]))
rc, err, src = int(sys.argv[3]), open(sys.argv[4]).read(), int(sys.argv[5])
try:
    r = json.load(open(sys.argv[2]))
except ValueError:
    r = {}
print("relay:", st)
assert rc == 0 and r.get("ok"), f"recv failed (exit {rc}) after a lost tx-meta start: {err}"
assert src == 0, "feroce send failed: " + open(sys.argv[6]).read()
f = r["flows"][0]
assert f["msgs"] == 300 and f["verify_errors"] == 0 and f["seq_errors"] == 0, f
assert st["dropped"] == 1 and st["starts"] >= 2, st
print("2. feroce send: first start lost, %d resent (each twice), one stream, 300 messages "
      "verified" % (st["starts"] - 1))
PYEOF

# 3. every start lost: a clear failure, not a hang
model "$D/fw3.json" --drop-tx-meta 1000
rc=0
start=$(date +%s)
"$BIN" recv --bind $HOST --fe $FE --count 10 --timeout 60s >"$D/recv3.out" 2>"$D/recv3.err" ||
    rc=$?
end=$(date +%s)
stop_model
if [ "$rc" = 0 ] || ! grep -q "no packet after .* tx-meta starts" "$D/recv3.err"; then
    echo "FAIL: a front-end that never streams must fail with a clear message (exit $rc):"
    cat "$D/recv3.err" "$D/recv3.out"
    exit 1
fi
if [ $((end - start)) -gt 30 ]; then
    echo "FAIL: giving up took $((end - start)) s"
    exit 1
fi
grep -h "tx-meta" "$D/recv3.err"
$PY -c 'import json,sys; s=json.load(open(sys.argv[1])); print("firmware model:", s); assert s["open"] == [], s' \
    "$D/fw3.json"
echo "3. every start lost: recv gave up after $((end - start)) s, the QP closed: ok"
echo "io_txmeta_loss: OK"
