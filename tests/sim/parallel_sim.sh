#!/bin/sh
# Parallel simulation (src/sim/parallel.c): scenarios of the golden set (and a slice of the
# 128-host fat-tree) at 1, 2 and 3 threads give the same results, byte for byte. Each parallel
# run must really run in parts: its stderr line "parallel: N parts" is checked. One-switch
# scenarios are cut at their hosts' links by partition files (the automatic partition keeps hosts
# with their switch, which leaves one part).
set -eu
BIN=$1
DATA=$2
BENCH=$3 # the bench directory (fattree-128.yaml)
. "$(dirname "$0")/../script_env.sh"

printf 'sw 0\nA 1\nB 2\n' >"$T/incast3.part2"
printf 'sw 0\nA 1\nB 1\nC 1\n' >"$T/incast3.part1"
printf 'sw 0\na 1\nb 1\nc 2\nd 2\n' >"$T/incast4.part"

n=0
# name, thread counts or partition files (space-separated), then feroce sim arguments
check() {
    name=$1
    shift
    "$BIN" sim "$@" --threads 1 --json --no-progress 2>"$T/$name.err1" |
        grep -v '"wall_s"' >"$T/$name.1.json" || fail "$name: 1 thread"
    for t in 2 3; do
        "$BIN" sim "$@" --threads $t --json --no-progress 2>"$T/$name.err$t" |
            grep -v '"wall_s"' >"$T/$name.$t.json" || fail "$name: $t threads"
        grep -q "^parallel: $t parts" "$T/$name.err$t" ||
            fail "$name: $t threads did not run in $t parts: $(cat "$T/$name.err$t")"
        cmp -s "$T/$name.1.json" "$T/$name.$t.json" ||
            fail "$name: $t threads differ from 1: $(diff "$T/$name.1.json" "$T/$name.$t.json" | head -5)"
    done
    n=$((n + 1))
}
# with a partition file: 1 thread, then the file's parts
check_file() {
    name=$1
    file=$2
    parts=$3
    shift 3
    "$BIN" sim "$@" --threads 1 --json --no-progress 2>/dev/null | grep -v '"wall_s"' \
        >"$T/$name.1.json" || fail "$name: 1 thread"
    "$BIN" sim "$@" --partition "$file" --json --no-progress 2>"$T/$name.errp" |
        grep -v '"wall_s"' >"$T/$name.p.json" || fail "$name: partition"
    grep -q "^parallel: $parts parts" "$T/$name.errp" ||
        fail "$name: did not run in $parts parts: $(cat "$T/$name.errp")"
    cmp -s "$T/$name.1.json" "$T/$name.p.json" ||
        fail "$name: partitioned differs: $(diff "$T/$name.1.json" "$T/$name.p.json" | head -5)"
    n=$((n + 1))
}

# Runs to the end (every flow done: the completions' actions at the grid's points) and runs cut
# by --until (where a run is cut changes nothing). A window is the smallest link delay (1 us), a
# barrier each: these small fabrics have few events per window, so the runs are short.
TO_END="--set flow.size=1MB"
check advcam-dcqcn advcam-dcqcn $TO_END
check advcam-pfc advcam-pfc $TO_END
check advcam-hpcc advcam-dcqcn --cc hpcc $TO_END
check advcam-timely advcam-dcqcn --cc timely $TO_END
check advcam-mtu1024 advcam-dcqcn --set host.mtu=1024 --set link.delay=2us $TO_END
check_file incast3 "$T/incast3.part2" 3 incast3 --set flow.size=300KB
check_file incast3-nocc "$T/incast3.part1" 2 incast3-nocc --set flow.size=300KB
check advcam-cut advcam-dcqcn --until 3ms
check_file incast4 "$T/incast4.part" 3 "$DATA/incast4.yaml" --until 2ms
check_file incast4-seed7 "$T/incast4.part" 3 "$DATA/incast4.yaml" --seed 7 --until 2ms
check fattree-128 "$BENCH/fattree-128.yaml" --until 50us

# what cannot run in parts says why and runs on one thread
"$BIN" sim advcam-eb --set eb.events=200 --threads 2 --no-progress >/dev/null 2>"$T/eb.err" ||
    fail "advcam-eb --threads 2"
grep -q "running on one thread: event building" "$T/eb.err" || fail "advcam-eb: $(cat "$T/eb.err")"
"$BIN" sim incast3 --threads 2 --no-progress >/dev/null 2>"$T/i3.err" || fail "incast3 --threads 2"
grep -q "running on one thread: the partition cuts no link" "$T/i3.err" || fail "incast3: $(cat "$T/i3.err")"
echo "parallel_sim: $n scenarios identical at 1, 2 and 3 threads (or their partition files)"
