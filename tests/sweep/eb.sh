#!/bin/sh
# feroce sweep on event building: a tiny advcam-eb campaign (both policies, two trigger rates,
# b0 slowed from 2 ms) whose stored eb_ metrics equal those of `feroce sim --json` for the same
# settings, availability's p99 below round-robin's, the eb_ columns in --where/CSV/plots, NULL
# for a scenario without event building, and databases made before the eb_ columns: resumed
# (no event building) or refused with a message (event building, points stored).
set -eu
FEROCE=$1
command -v sqlite3 >/dev/null || { echo "sweep_eb: needs the sqlite3 program (Debian: sqlite3)"; exit 77; }
T=$(mktemp -d /tmp/feroce-sweep-eb-XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail() { echo "sweep_eb: FAIL: $*" >&2; exit 1; }
q() { sqlite3 "$T/eb.db" "$1"; }

cat >"$T/eb.yaml" <<'YAML'
scenario: advcam-eb
set: {eb.events: 300, eb.slow_at: 2ms}
grid:
  eb.policy: [round-robin, availability]
  eb.rate_hz: [20000, 30000]
seeds: [1]
YAML
"$FEROCE" sweep run "$T/eb.yaml" --no-progress >/dev/null || fail "the campaign"
[ "$(q "SELECT count(*) FROM runs WHERE status = 'ok' AND eb_triggered = 300")" = 4 ] ||
  fail "4 ok runs of 300 events"

# the first value of KEY in the event_building object (before the per-builder entries)
eb_json() { sed -n '/"event_building"/,/"builders"/p' "$1" | grep -o "\"$2\": [0-9]*" | head -1 | sed 's/.*: //'; }
for pol in round-robin availability; do
  for rate in 20000 30000; do
    "$FEROCE" sim advcam-eb --set eb.events=300 --set eb.slow_at=2ms --set eb.policy=$pol \
      --set eb.rate_hz=$rate --seed 1 --json --no-progress >"$T/sim.json" || fail "feroce sim $pol $rate"
    row="eb_policy = '$pol' AND eb_rate_hz = $rate"
    for m in triggered built incomplete lost busy rnr_naks p50 p99 max; do
      col=eb_$m
      case $m in p50 | p99 | max) col=eb_latency_$m ;; esac
      want=$(eb_json "$T/sim.json" "$m")
      got=$(q "SELECT $col FROM runs WHERE $row")
      [ -n "$want" ] && [ "$got" = "$want" ] || fail "$pol $rate: $col $got, feroce sim $want"
    done
  done
done
for rate in 20000 30000; do
  rr=$(q "SELECT eb_latency_p99 FROM runs WHERE eb_policy = 'round-robin' AND eb_rate_hz = $rate")
  av=$(q "SELECT eb_latency_p99 FROM runs WHERE eb_policy = 'availability' AND eb_rate_hz = $rate")
  [ "$av" -lt "$rr" ] || fail "$rate Hz: availability's p99 $av not below round-robin's $rr"
done
# round-robin gives the slow builder its quarter; availability less
[ "$(q "SELECT count(*) FROM runs WHERE eb_policy = 'round-robin' AND eb_min_built_share = 0.25")" = 2 ] ||
  fail "round-robin's shares"
[ "$(q "SELECT count(*) FROM runs WHERE eb_policy = 'availability' AND eb_min_built_share < 0.25
        AND eb_min_builder_throughput < eb_max_builder_throughput AND eb_peak_slots <= 16")" = 2 ] ||
  fail "availability's shares"

# the eb_ columns in reports
"$FEROCE" sweep report "$T/eb.yaml" --where 'eb_latency_p99 < 5ms and eb_incomplete = 0' \
  --sort 'eb_latency_p99 desc' --columns eb_policy,eb_rate_hz,eb_latency_p99 >"$T/rep" || fail "report"
grep -q "(2 rows)" "$T/rep" && ! grep -q round-robin "$T/rep" || fail "the filter: $(cat "$T/rep")"
"$FEROCE" sweep report "$T/eb.db" | head -1 | grep -q "eb_latency_p99" || fail "the default table"
"$FEROCE" sweep report "$T/eb.db" --csv "$T/eb.csv" || fail "csv"
head -1 "$T/eb.csv" | grep -q "eb_latency_p99" || fail "no eb_latency_p99 in the CSV"
if command -v gnuplot >/dev/null; then
  "$FEROCE" sweep report "$T/eb.db" --plot "$T/p99.svg" --metric 'eb_latency_p99 / 1000' \
    --x eb_rate_hz --y eb_policy --lines || fail "plot"
  grep -q "<svg" "$T/p99.svg" || fail "plot file"
fi

# no event building: NULL, not 0
cat >"$T/net.yaml" <<'YAML'
scenario: advcam-dcqcn
set: {flow.size: 500KB}
grid:
  link.delay: [1us]
YAML
"$FEROCE" sweep run "$T/net.yaml" --no-progress >/dev/null || fail "the campaign without event building"
[ "$(sqlite3 "$T/net.db" "SELECT count(*) FROM runs WHERE status = 'ok' AND eb_triggered IS NULL
      AND eb_built IS NULL AND eb_latency_p99 IS NULL AND eb_min_built_share IS NULL")" = 1 ] ||
  fail "eb_ metrics not NULL without event building"

# A database as made before the eb_ columns existed.
drop_eb_columns() {
  for c in $(sqlite3 "$1" "SELECT name FROM pragma_table_info('runs') WHERE name LIKE 'eb\_%' ESCAPE '\\'"); do
    sqlite3 "$1" "ALTER TABLE runs DROP COLUMN $c"
  done
  [ "$(sqlite3 "$1" "SELECT count(*) FROM pragma_table_info('runs') WHERE name LIKE 'eb\_%' ESCAPE '\\'")" = 0 ] ||
    fail "could not drop the eb_ columns"
}
# without event building it resumes: the columns are added, the stored point kept
drop_eb_columns "$T/net.db"
sed -i 's/\[1us\]/[1us, 2us]/' "$T/net.yaml"
"$FEROCE" sweep run "$T/net.yaml" --no-progress >"$T/out" || fail "resume of an older database"
grep -q "1 stored before, 1 run" "$T/out" || fail "resume: $(cat "$T/out")"
[ "$(sqlite3 "$T/net.db" "SELECT count(*) FROM runs WHERE status = 'ok' AND eb_built IS NULL")" = 2 ] ||
  fail "the resumed database"
# with event building and points stored it is refused, and left as it was
drop_eb_columns "$T/eb.db"
if "$FEROCE" sweep run "$T/eb.yaml" --no-progress >/dev/null 2>"$T/err"; then
  fail "an older database of an event-building campaign was resumed"
fi
grep -q "older feroce without the event-building metrics" "$T/err" || fail "the message: $(cat "$T/err")"
[ "$(q "SELECT count(*) FROM pragma_table_info('runs') WHERE name LIKE 'eb\_%' ESCAPE '\\'")" = 0 ] ||
  fail "the refused database was changed"
echo "sweep_eb: ok"
