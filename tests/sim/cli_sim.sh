#!/bin/sh
# feroce sim end to end: built-ins, JSON, traces and plots, YAML and HPCC files, error messages.
set -eu
BIN=$1
DATA=$2
. "$(dirname "$0")/../script_env.sh"

$BIN sim --list | grep -q advcam-dcqcn || fail "--list"
$BIN sim --help | grep -q -- "--ns3-compat" || fail "--help"

# a built-in, shortened, as JSON: every flow done, no drops
$BIN sim incast3 --set flow.size=3MB --json --no-progress > "$T/i3.json"
$PY - "$T/i3.json" <<'PY' || fail "incast3 JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["finished"] and r["drops"]["total"] == 0, r["drops"]
assert len(r["flows"]) == 3 and all(f["finish_ns"] > 0 for f in r["flows"])
assert r["window"]["aggregate_bps"] > 1e9 and r["cnps"] > 0
PY

# event building: the built-in under both policies, as JSON and text, and a bad key
$BIN sim --list | grep -q advcam-eb || fail "--list: advcam-eb"
for p in round-robin availability; do
    $BIN sim advcam-eb --set eb.policy=$p --set eb.events=2000 --json --no-progress > "$T/eb-$p.json"
done
$PY - "$T/eb-round-robin.json" "$T/eb-availability.json" <<'PY' || fail "advcam-eb JSON"
import json, sys
rr, av = (json.load(open(p))["event_building"] for p in sys.argv[1:3])
for e in (rr, av):
    assert e["ledger_ok"] and e["triggered"] == 2000, e
    assert e["built"] + e["incomplete"] + e["lost"] + e["busy"] == 2000, e
    assert len(e["builders"]) == 4 and all("gbps" in b and "built" in b for b in e["builders"])
assert rr["policy"] == "round-robin" and av["policy"] == "availability"
assert av["incomplete"] == 0 and av["latency_ns"]["p99"] < 1e6, av["latency_ns"]
assert rr["latency_ns"]["p99"] > 20 * av["latency_ns"]["p99"], (rr["latency_ns"], av["latency_ns"])
PY
$BIN sim advcam-eb --set eb.events=500 --no-progress | grep -q "ledger ok" || fail "advcam-eb text"
$BIN sim advcam-eb --set eb.policy=best 2> "$T/eb.err" > /dev/null && fail "eb.policy=best accepted"
grep -q "round-robin or availability" "$T/eb.err" || fail "eb.policy error: $(cat "$T/eb.err")"

# trace and plot
$BIN sim advcam-pfc --set flow.size=1MB --trace "$T/t.csv" --trace-interval 200us \
    --plot "$T/t.svg" > /dev/null
head -1 "$T/t.csv" | grep -q "^time_us,f0_gbps,f0_rate_gbps" || fail "trace header"
[ "$(wc -l < "$T/t.csv")" -gt 10 ] || fail "trace rows"
grep -q "<svg" "$T/t.svg" && grep -q "polyline" "$T/t.svg" || fail "plot"
# PNG through gnuplot (scripts/deps.sh installs gnuplot-nox); a name that is neither, or a PNG
# without gnuplot, is refused before the run
if command -v gnuplot > /dev/null; then
    $BIN sim advcam-pfc --set flow.size=1MB --trace-interval 200us --plot "$T/t.png" > /dev/null ||
        fail "PNG plot"
    $PY - "$T/t.png" <<'PY' || fail "PNG plot: not a 960 x 760 PNG"
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR", b[:16]
assert struct.unpack(">II", b[16:24]) == (960, 760), struct.unpack(">II", b[16:24])
PY
else
    echo "note: no gnuplot here, PNG plot not drawn" >&2
fi
set +e
out=$($BIN sim advcam-pfc --plot "$T/t.jpg" 2>&1); rc=$?
echo "$out" | grep -q "must end in .svg or .png" && [ $rc = 2 ] || fail "--plot FILE.jpg: $out"
out=$(PATH=/nonexistent $BIN sim advcam-pfc --plot "$T/t2.png" 2>&1); rc=$?
echo "$out" | grep -q "needs gnuplot" && [ $rc = 2 ] && [ ! -e "$T/t2.png" ] ||
    fail "--plot FILE.png without gnuplot: $out"
set -e

# --ns3-compat: congestion rides on ACKs, each flagged ACK counted as a CNP (no CNP frames:
# every CNP is a marked packet's ACK), pauses XOFF/XON
$BIN sim advcam-dcqcn --set flow.size=2MB --ns3-compat --json > "$T/n.json"
$PY - "$T/n.json" <<'PY' || fail "ns3-compat"
import json, sys
r = json.load(open(sys.argv[1]))
assert 0 < r["cnps"] <= r["ecn_marks"] and r["drops"]["total"] == 0
assert sum(f["cnps"] for f in r["flows"]) == r["cnps"]
PY

# --cc and --param
$BIN sim incast3 --set flow.size=2MB --cc dcqcn --param rpg_ai_rate=20 > /dev/null || fail "--cc"
$BIN sim incast3 --cc nosuch 2>&1 | grep -q "unknown congestion control" || fail "--cc nosuch"
$BIN sim incast3 --param rpg_nope=1 2>&1 | grep -q "rpg_nope" || fail "--param"

# a YAML file, and its errors with file:line
$BIN sim "$DATA/incast4.yaml" | grep -q "scenario incast4" || fail "yaml"
printf 'hosts: [a]\nswitch:\n  buffer: lots\n' > "$T/bad.yaml"
$BIN sim "$T/bad.yaml" 2>&1 | grep -q "bad.yaml:3: switch.buffer: 'lots' is not a size" \
    || fail "yaml error line"
$BIN sim nosuch 2>&1 | grep -q "unknown built-in scenario" || fail "unknown scenario"

# HPCC files: fct.txt and pfc.txt where the config says (next to it)
cp -r "$DATA/hpcc" "$T/hpcc"
$BIN sim --hpcc "$T/hpcc/config.txt" > "$T/h.txt"
[ "$(wc -l < "$T/hpcc/fct.txt")" -eq 3 ] || fail "fct.txt"
[ -f "$T/hpcc/pfc.txt" ] || fail "pfc.txt"
grep -q "^HPCC outputs: flow completions in $T/hpcc/fct.txt, PFC events in $T/hpcc/pfc.txt$" "$T/h.txt" ||
    fail "where the HPCC outputs went: $(tail -1 "$T/h.txt")"
if [ -w /dev/full ]; then
    $BIN sim --hpcc "$T/hpcc/config.txt" --fct /dev/full > "$T/full.txt" 2> "$T/full.err" &&
        fail "a failed write of fct.txt exits 0"
    grep -q "cannot write /dev/full" "$T/full.err" || fail "failed write: $(cat "$T/full.err")"
    $BIN sim incast3 --until 20ms --trace /dev/full --no-progress > /dev/null 2> "$T/full.err" &&
        fail "a failed write of the trace exits 0"
    grep -q "cannot write /dev/full" "$T/full.err" || fail "failed trace: $(cat "$T/full.err")"
    $BIN sim incast3 --until 5ms --json > /dev/full 2> "$T/full.err" &&
        fail "a report that did not reach stdout exits 0"
    grep -q "feroce sim: writing the output failed: No space left on device" "$T/full.err" ||
        fail "failed stdout: $(cat "$T/full.err")"
fi
$BIN sim --hpcc "$T/hpcc/config.txt" --fct "$T/f2.txt" --until 2.0005s > /dev/null
[ -f "$T/f2.txt" ] || fail "--fct"
echo "cli_sim: ok"
