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

# trace and plot
$BIN sim advcam-pfc --set flow.size=1MB --trace "$T/t.csv" --trace-interval 200us \
    --plot "$T/t.svg" > /dev/null
head -1 "$T/t.csv" | grep -q "^time_us,f0_gbps,f0_rate_gbps" || fail "trace header"
[ "$(wc -l < "$T/t.csv")" -gt 10 ] || fail "trace rows"
grep -q "<svg" "$T/t.svg" && grep -q "polyline" "$T/t.svg" || fail "plot"

# --ns3-compat: no CNPs (congestion rides on ACKs), pauses XOFF/XON
$BIN sim advcam-dcqcn --set flow.size=2MB --ns3-compat --json > "$T/n.json"
$PY - "$T/n.json" <<'PY' || fail "ns3-compat"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["cnps"] == 0 and r["ecn_marks"] > 0 and r["drops"]["total"] == 0
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
$BIN sim --hpcc "$T/hpcc/config.txt" --fct "$T/f2.txt" --until 2.0005s > /dev/null
[ -f "$T/f2.txt" ] || fail "--fct"
echo "cli_sim: ok"
