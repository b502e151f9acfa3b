#!/bin/sh
# The event-building demo, short, on both policies: builder 2 slowed, killed (SIGKILL) and
# restarted. It fails unless its accounting holds (the killed run's records given to eb-check
# with --earlier) and every byte verifies; the killed builder must be restarted, and under
# round-robin it must rejoin (join at E0) and build again. (Under availability the manager does
# not take a restarted builder up yet: docs/event-building.md.)
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
fail() {
    echo "FAIL: $*"
    cat "$T/out"
    exit 1
}
for pol in availability round-robin; do
    # 4 s of triggers: the first live line (1 s) starts the kill's clock, so the kill (0.5 s
    # later) and the restart (0.5 s after it) fall inside the run
    "$BIN" demo --event-building --policy $pol --events 20000 --trigger-hz 5000 --slow-at 300ms \
        --kill-at 500ms --restart-after 500ms >"$T/out" 2>&1 || fail "$pol: the demo failed"
    grep -q "accounting holds" "$T/out" || fail "$pol: the accounting does not hold"
    grep -q -- "-- builder 2 killed (SIGKILL)" "$T/out" || fail "$pol: builder 2 was not killed"
    grep -q -- "-- builder 2 restarted" "$T/out" || fail "$pol: builder 2 was not restarted"
    echo "ok: $pol: $(grep "^accounting:" "$T/out")"
done
# round-robin: the restarted builder joined at E0 and built events again
grep -q "b2 *[1-9][0-9]* .*REJOINED" "$T/out" || fail "round-robin: builder 2 did not build again"
grep -q "joined late" "$T/out" || fail "round-robin: eb-check did not see the join"
exit 0
