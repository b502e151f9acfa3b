#!/bin/sh
# feroce recv (host role) against a model of the Lite-RoCEv2 firmware's side channel
# (fw_model.py: replies from port 0x8765, RTS on OPEN, ERROR to a MODIFY after it, firmware-style
# NO_QP): OPEN -> stream -> CLOSE completes, every message verified, no front-end QP left open;
# an exhausted pool is reported at once as NO_QP, not after retries.
set -eu
BIN=$1
PY=/usr/bin/python3
HERE=$(dirname "$0")
. "$HERE/fw_lib.sh"
cleanup() {
    [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null
    fw_cleanup
}
trap cleanup EXIT INT TERM

# 1. the whole life of a QP against the firmware's rules
model "$D/fw1.json"
rc=0
"$BIN" recv --bind $HOST --fe $FE --count 2000 --msg-size 8K --timeout 30s --json \
    >"$D/recv1.json" 2>"$D/recv1.err" || rc=$?
stop_model
$PY - "$D/fw1.json" "$D/recv1.json" "$rc" "$D/recv1.err" <<'PYEOF'
import json, sys
fw = json.load(open(sys.argv[1]))
rc = int(sys.argv[3])
err = open(sys.argv[4]).read()
try:
    r = json.load(open(sys.argv[2]))
except ValueError:
    r = {}
print("firmware model:", fw)
assert rc == 0 and r.get("ok"), f"recv failed (exit {rc}): {err}"
assert fw["allocated"] == 1, f"{fw['allocated']} QPs taken from the front-end's pool for one"
assert fw["open"] == [], f"QPs left open on the front-end: {fw['open']}"
assert fw["streams"] == 1 and fw["senders_ok"], fw
assert fw["undeliverable"] == 0, "a request asked for replies on port 0"
print("OPEN (reply from 0x8765) -> MODIFY answered ERROR, taken as RTS -> stream -> CLOSE: ok")
PYEOF

# 2. no QP left on the board: a clear NO_QP failure, at once
model "$D/fw2.json" --pool 0
rc=0
start=$(date +%s%N)
"$BIN" recv --bind $HOST --fe $FE --count 10 --timeout 30s >"$D/recv2.out" 2>"$D/recv2.err" || rc=$?
end=$(date +%s%N)
stop_model
ms=$(((end - start) / 1000000))
if [ "$rc" = 0 ] || ! grep -q "NO_QP" "$D/recv2.err" "$D/recv2.out"; then
    echo "FAIL: an exhausted pool must fail with NO_QP (exit $rc):"
    cat "$D/recv2.err" "$D/recv2.out"
    exit 1
fi
if [ "$ms" -gt 3000 ]; then
    echo "FAIL: the NO_QP answer took ${ms} ms to be recognised (retries instead of the reply?)"
    exit 1
fi
echo "pool exhausted: NO_QP reported after ${ms} ms, exit $rc: ok"
# 3. feroce send playing the firmware (--sc-mode firmware): the same host works against it
"$BIN" send --bind $FE --sc-mode firmware --once --line-rate 2Gbps --json >"$D/send3.json" \
    2>"$D/send3.err" &
SPID=$!
sleep 0.3
rc=0
"$BIN" recv --bind $HOST --fe $FE --count 500 --msg-size 8K --timeout 30s --json \
    >"$D/recv3.json" 2>"$D/recv3.err" || rc=$?
wait "$SPID" || { echo "FAIL: feroce send --sc-mode firmware"; cat "$D/send3.err"; exit 1; }
SPID=
if [ "$rc" != 0 ]; then
    echo "FAIL: recv against feroce send --sc-mode firmware (exit $rc)"
    cat "$D/recv3.err" "$D/recv3.json"
    exit 1
fi
echo "feroce send --sc-mode firmware: OPEN -> MODIFY answered ERROR -> stream -> CLOSE: ok"
echo "io_firmware: OK"
