#!/bin/sh
# feroce sim --ns3-roce end to end: a 3-to-1 incast written as ns3-roce JSON (tests/sim/ns3roce)
# runs to completion without drops; background flows do not hold the run; multicast flows are
# refused with a clear message, or skipped on request; bad input names the file and JSON path.
set -eu
BIN=$1
DATA=$2
. "$(dirname "$0")/../script_env.sh"

$BIN sim --help | grep -q -- "--ns3-roce CONFIG" || fail "--help"
if ! $BIN sim --ns3-roce "$DATA/incast3-config.json" --json > "$T/r.json" 2> "$T/e.txt"; then
  if grep -q "without JSON support" "$T/e.txt"; then
    echo "SKIP: feroce built without libjson-c (libjson-c-dev)"
    exit 77
  fi
  cat "$T/e.txt" >&2
  fail "incast3 run"
fi
$PY - "$T/r.json" <<'PY' || fail "incast3 results"
import json, sys
r = json.load(open(sys.argv[1]))
fl = r["flows"]
assert len(fl) == 4, len(fl)
fg, bg = fl[:3], fl[3]
# the three foreground writes complete; the 1 GB background flow does not hold the run
assert all(f["finish_ns"] > 0 and f["rx_bytes"] == 3000000 for f in fg), fg
assert bg["rx_bytes"] < bg["bytes"], bg
last = max(f["finish_ns"] for f in fg)
assert last <= r["sim_time_ns"] <= last + 20000, (last, r["sim_time_ns"])
# lossless with PFC, DCQCN reacts to ECN (CNPs), the receiver link is well used:
# 3 x 3 MB in about 9 ms: 7.5 Gb/s or more of payload at 10 Gb/s (1000-byte packets, whose
# frames carry 8 % of headers and gaps)
assert r["drops"]["total"] == 0, r["drops"]
assert r["cnps"] > 0 and r["ecn_marks"] > 0
assert 3 * 3e6 * 8 / (last / 1e9) > 7.5e9, last
assert r["seed"] == 7
PY
grep -q "ignored: ns3::RdmaHw::NackInterval" "$T/e.txt" || fail "ignored attributes note"

# a multicast flow: refused by default with a message naming file, flow and the way out
cp "$DATA"/incast3-config.json "$DATA"/incast3-topology.json "$T/"
$PY - "$DATA/incast3-flows.json" "$T/incast3-flows.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["flows"].append({"path": "ns3::AgFlowMcastPhase", "enable": True, "start_time": 0.0,
                   "in_background": False, "attributes": {"MulticastRootCount": 2}})
json.dump(d, open(sys.argv[2], "w"))
PY
if $BIN sim --ns3-roce "$T/incast3-config.json" > /dev/null 2> "$T/m.txt"; then
  fail "multicast flow accepted"
fi
grep -q "incast3-flows.json: flows\[5\]: ns3::AgFlowMcastPhase (multicast) cannot be simulated" \
  "$T/m.txt" || { cat "$T/m.txt" >&2; fail "multicast message"; }
grep -q -- "--skip-unsupported-flows" "$T/m.txt" || fail "multicast message: the option"
$BIN sim --ns3-roce "$T/incast3-config.json" --skip-unsupported-flows --json > "$T/s.json" \
  2> "$T/s.txt" || fail "--skip-unsupported-flows"
grep -q "skipping ns3::AgFlowMcastPhase" "$T/s.txt" || fail "skip warning"
$PY -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["flows"]) == 4' "$T/s.json" ||
  fail "skip: flows"

# simulator_stop_time is honoured (seconds)
sed 's/"simulator_stop_time": 0/"simulator_stop_time": 0.002/' "$DATA/incast3-config.json" \
  > "$T/incast3-config.json"
$BIN sim --ns3-roce "$T/incast3-config.json" --skip-unsupported-flows --json > "$T/st.json" \
  2> /dev/null || fail "stop time run"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["sim_time_ns"] == 2000000' \
  "$T/st.json" || fail "stop time"

# bad input: file and JSON path in the message
sed 's/"bandwidth": 10e9, "latency": 1e-6, "error_rate": 0.0},/"bandwidth": "fast", "latency": 1e-6},/' \
  "$DATA/incast3-topology.json" > "$T/incast3-topology.json"
if $BIN sim --ns3-roce "$T/incast3-config.json" > /dev/null 2> "$T/b.txt"; then
  fail "bad bandwidth accepted"
fi
grep -q "incast3-topology.json: links\[0\].bandwidth: not a number" "$T/b.txt" ||
  { cat "$T/b.txt" >&2; fail "bad bandwidth message"; }
$BIN sim --ns3-roce "$T/missing.json" > /dev/null 2> "$T/n.txt" && fail "missing file"
grep -q "missing.json: cannot open" "$T/n.txt" || fail "missing file message"
echo "ns3roce_cli: ok"
