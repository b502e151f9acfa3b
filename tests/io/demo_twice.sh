#!/bin/sh
# Two demos at once on their default addresses (two users on one machine, or ctest -j): the
# second finds the first's loopback addresses in use and takes the next free ones; both must
# run to the end with every byte verified. The same for the event-building demo.
set -eu
BIN=$1
T=$(mktemp -d)
trap 'kill $p1 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
"$BIN" demo --duration 3s --rate 100Mbps --json >"$T/a.json" 2>"$T/a.err" &
p1=$!
sleep 0.5
"$BIN" demo --duration 1s --rate 100Mbps --json >"$T/b.json" 2>"$T/b.err"
wait $p1
for r in a b; do
    grep -q '"ok":true' "$T/$r.json" || { echo "demo $r failed:"; cat "$T/$r.json" "$T/$r.err"; exit 1; }
done
grep -q "in use" "$T/a.err" "$T/b.err" || { echo "no demo moved to free addresses"; exit 1; }
"$BIN" demo --event-building --events 4000 --trigger-hz 2000 --kill-at 0 >"$T/c.out" 2>&1 &
p1=$!
sleep 0.5
"$BIN" demo --event-building --events 2000 --trigger-hz 2000 --kill-at 0 >"$T/d.out" 2>&1
wait $p1
for r in c d; do
    grep -q "accounting holds" "$T/$r.out" || { echo "eb demo $r failed:"; cat "$T/$r.out"; exit 1; }
done
grep -q "in use" "$T/c.out" "$T/d.out" || { echo "no eb demo moved to free addresses"; exit 1; }
echo "two demos and two event-building demos ran side by side"
