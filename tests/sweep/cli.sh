#!/bin/sh
# feroce sweep end to end: the issue's minimal campaign as written, an unknown key refused
# before anything runs, kill -9 halfway then a rerun giving the same database as an
# uninterrupted run, report filters/sorts/CSV, and plots (when gnuplot is there).
set -eu
FEROCE=$1
command -v sqlite3 >/dev/null || { echo "sweep_cli: needs the sqlite3 program (Debian: sqlite3)"; exit 77; }
T=$(mktemp -d /tmp/feroce-sweep-cli-XXXXXX)
PID=""
cleanup() {
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() { echo "sweep_cli: FAIL: $*" >&2; exit 1; }

# The runs and flows tables without the wall-clock columns.
dump() {
  cols=$(sqlite3 "$1" "SELECT group_concat('\"' || name || '\"') FROM pragma_table_info('runs') WHERE name NOT IN ('wall_s', 'cpu_s')")
  sqlite3 "$1" "SELECT $cols FROM runs ORDER BY id; SELECT * FROM flows ORDER BY run_id, flow"
}

cat >"$T/min.yaml" <<'EOF'
scenario: advcam-dcqcn
set: {flow.size: 2MB}
grid:
  link.delay: [1us, 2us]
  host.mtu: [1024, 4096]
seeds: 1
EOF
"$FEROCE" sweep run "$T/min.yaml" --no-progress >"$T/out" || fail "the minimal campaign"
[ -f "$T/min.db" ] || fail "no min.db beside the campaign"
[ "$(sqlite3 "$T/min.db" "SELECT count(*) FROM runs WHERE status = 'ok'")" = 4 ] || fail "4 ok runs"
[ "$(sqlite3 "$T/min.db" "SELECT count(*) FROM flows")" = 32 ] || fail "32 flows"
sqlite3 "$T/min.db" "SELECT value FROM campaign WHERE key = 'feroce_version'" | grep -q . || fail "version"
# the point's metrics are feroce sim's for the same settings
"$FEROCE" sim advcam-dcqcn --set flow.size=2MB --set link.delay=2us --set host.mtu=1024 --seed 1 \
  --json --no-progress >"$T/sim.json"
cnps=$(sqlite3 "$T/min.db" "SELECT cnps FROM runs WHERE link_delay = 2000 AND host_mtu = 1024")
grep -q "\"cnps\": $cnps," "$T/sim.json" || fail "cnps $cnps differ from feroce sim's"
# a second run runs nothing
"$FEROCE" sweep run "$T/min.yaml" --no-progress | grep -q "4 stored before, 0 run" || fail "rerun"

# refused before anything runs
printf 'scenario: advcam-dcqcn\ngrid:\n  link.delay: [1us, 2us]\n  host.mtuu: [1024]\n' >"$T/bad.yaml"
if "$FEROCE" sweep run "$T/bad.yaml" 2>"$T/err"; then fail "an unknown key was accepted"; fi
grep -q "host.mtuu" "$T/err" || fail "the message does not name the key: $(cat "$T/err")"
[ ! -f "$T/bad.db" ] || fail "a database was made for a refused campaign"

# report
"$FEROCE" sweep report "$T/min.yaml" --where 'jain >= 0.995 and peak_queue < 1.46MB' \
  --sort 'peak_queue desc' >"$T/rep" || fail "report"
grep -q "(2 rows)" "$T/rep" || fail "the filter: $(cat "$T/rep")"
"$FEROCE" sweep report "$T/min.db" --csv "$T/runs.csv" || fail "csv"
[ "$(wc -l <"$T/runs.csv")" = 5 ] || fail "csv rows"
if "$FEROCE" sweep report "$T/min.db" --where "jain > 1; DROP TABLE runs" 2>/dev/null; then
  fail "a bad filter was accepted"
fi
if command -v gnuplot >/dev/null; then
  "$FEROCE" sweep report "$T/min.db" --plot "$T/h.png" --metric jain --x link_delay --y host_mtu || fail "heatmap"
  "$FEROCE" sweep report "$T/min.db" --plot "$T/l.svg" --metric peak_queue --x link_delay --y host_mtu --lines || fail "lines"
  [ -s "$T/h.png" ] && grep -q "<svg" "$T/l.svg" || fail "plot files"
fi

# kill -9 halfway, rerun: the same database as an uninterrupted run
cat >"$T/long.yaml" <<'EOF'
scenario: advcam-dcqcn
set: {flow.size: 60MB}
grid:
  red.kmax: [100KB, 200KB, 400KB]
  rpg_ai_rate: [20, 40, 80]
seeds: 1
EOF
cp "$T/long.yaml" "$T/whole.yaml"
"$FEROCE" sweep run "$T/whole.yaml" -j 2 --no-progress >/dev/null || fail "uninterrupted run"
"$FEROCE" sweep run "$T/long.yaml" -j 2 --no-progress >/dev/null 2>&1 &
PID=$!
n=0
for _ in $(seq 1 600); do
  n=$(sqlite3 "$T/long.db" "SELECT count(*) FROM runs" 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 3 ] && break
  sleep 0.05
done
kill -9 "$PID" 2>/dev/null || true # on a fast machine it may have ended already (noted below)
wait "$PID" 2>/dev/null || true
PID=""
n=$(sqlite3 "$T/long.db" "SELECT count(*) FROM runs")
[ "$n" -lt 9 ] || echo "sweep_cli: note: the campaign ended before the kill"
sleep 0.3 # the workers die with their parent (PR_SET_PDEATHSIG)
"$FEROCE" sweep run "$T/long.yaml" -j 2 --no-progress >"$T/resume" || fail "resume"
grep -q "$n stored before" "$T/resume" || fail "resume: $(cat "$T/resume")"
dump "$T/whole.db" >"$T/whole.txt"
dump "$T/long.db" >"$T/long.txt"
cmp -s "$T/whole.txt" "$T/long.txt" || fail "the resumed database differs from the uninterrupted one"
echo "sweep_cli: ok (killed after $n of 9 points, resumed to the same database)"
