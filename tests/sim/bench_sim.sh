#!/bin/sh
# feroce bench sim --quick runs, and its --ns3 PROGRAM part against a stand-in for HPCC ns-3's
# third (which is not in Debian): it is run in a copy of the HPCC files, its fct.txt is checked
# against the files' flows, and a failing or short run is an error, not a ratio.
set -eu
BIN=$1
NS3=$2/advcam-dcqcn
. "$(dirname "$0")/../script_env.sh"

# The stand-in: one fct.txt line per flow of FLOW_FILE ("src dst pg dport size start_s"), into
# FCT_OUTPUT_FILE, both named by the config in the working directory, as third.cc does;
# FAKE_FLOWS cuts the list, FAKE_EXIT fails the run.
cat > "$T/third" <<'SH'
#!/bin/sh
[ -n "${FAKE_EXIT:-}" ] && exit "$FAKE_EXIT"
flow=$(awk '$1 == "FLOW_FILE" { print $2 }' "$1")
fct=$(awk '$1 == "FCT_OUTPUT_FILE" { print $2 }' "$1")
awk -v n="${FAKE_FLOWS:-1000}" 'NR > 1 && NR - 1 <= n {
    printf "0b000501 0b000001 10000 100 %s %d 2000000 1000000\n", $5, $6 * 1e9 }' "$flow" > "$fct"
echo "fake ns-3 ran in $(pwd)"
SH
chmod +x "$T/third"
mkdir "$T/tmp"

TMPDIR=$T/tmp $BIN bench sim --quick --ns3 "$T/third" --ns3-files "$NS3" > "$T/out" ||
    fail "bench sim --quick --ns3"
grep -q "^advcam-dcqcn from HPCC ns-3's files" "$T/out" || fail "no HPCC files section"
grep -q "(ns-3) .* 8/8 flows done" "$T/out" || fail "ns-3 line: $(grep ns-3 "$T/out")"
grep -q "HPCC ns-3 / feroce, measured in this run: x[0-9]" "$T/out" || fail "no measured ratio"
grep -q "pairs, each ns-3 run / the feroce run on these files just before it: x[0-9.]*; median x[0-9]" "$T/out" ||
    fail "no paired ratio: $(grep pairs "$T/out")"
grep -q "^fat-tree" "$T/out" || fail "fat-tree section"
[ -z "$(ls "$T/tmp")" ] || fail "ns-3's directory left behind: $(ls "$T/tmp")"
# the copy is ns-3's working directory, never the source tree
[ ! -e "$NS3/fct.txt" ] || fail "ns-3 wrote into $NS3"

# ns-3 completed fewer flows than the files hold: not the same run
if TMPDIR=$T/tmp FAKE_FLOWS=7 $BIN bench sim --quick --ns3 "$T/third" --ns3-files "$NS3" \
    > /dev/null 2> "$T/err"; then
    fail "a short ns-3 run was accepted"
fi
grep -q "ns-3 completed 7 flows .* not the same run" "$T/err" || fail "short run: $(cat "$T/err")"
# ns-3 failed: its status, and where its output is
if TMPDIR=$T/tmp FAKE_EXIT=3 $BIN bench sim --quick --ns3 "$T/third" --ns3-files "$NS3" \
    > /dev/null 2> "$T/err"; then
    fail "a failed ns-3 run was accepted"
fi
grep -q "failed (exit status 3); its output is in" "$T/err" || fail "exit status: $(cat "$T/err")"
# a missing program or missing files: refused before any run, status 2
rc=0
$BIN bench sim --ns3 "$T/nonexistent" --ns3-files "$NS3" > "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 2 ] && [ ! -s "$T/out" ] || fail "missing program: status $rc"
grep -q "nonexistent: No such file" "$T/err" || fail "missing program: $(cat "$T/err")"
rc=0
$BIN bench sim --ns3 "$T/third" --ns3-files "$T/none" > "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 2 ] && [ ! -s "$T/out" ] || fail "missing files: status $rc"
grep -q "none/config.txt" "$T/err" || fail "missing files: $(cat "$T/err")"
echo "bench sim: ok"
