#!/bin/sh
# Parallel simulation (src/sim/parallel.c): every scenario of the golden set (scripts/golden.sh),
# and a slice of the 128-host fat-tree, at 1, 2 and 3 threads gives the same results, byte for
# byte: the JSON, the HPCC files (--fct, --pfc: written by every run) and, for some, the trace
# (--trace). Each parallel run must really run in parts: its stderr line "parallel: N parts" is
# checked. One-switch scenarios are cut at their hosts' links by partition files of 2 and 3
# parts (the automatic partition keeps hosts with their switch, which leaves one part). Long
# scenarios run shorter (smaller flows, or --until: where a run stops changes nothing).
#
# What stays on one thread, run with --threads 2 to check that it says why:
#   hpcc-advcam-dcqcn, hpcc-advcam-hpcc25, hpcc-advcam-pfc, hpcc-hpcc-sample (--ns3-compat):
#     ns-3 timing orders frame arrivals with every other event in one FIFO, as ns-3's scheduler
#     does, which a part cannot reproduce (their inputs without --ns3-compat run in parts here);
#   advcam-eb (not in the golden set): event building's control messages are not frames;
#   --pfc with a link without delay: its frames can arrive at FIFO ranks no part can place.
set -eu
BIN=$1
DATA=$2
BENCH=$3 # the bench directory (fattree-128.yaml)
. "$(dirname "$0")/../script_env.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# partition files, NAME.cut2 and NAME.cut3 (2 and 3 parts), one "NODE PART" line per node
cut() {
    printf "$2" >"$T/$1.cut2"
    printf "$3" >"$T/$1.cut3"
}
cut incast3 'sw 0\nA 1\nB 1\nC 1\n' 'sw 0\nA 1\nB 2\n'
cut switch-check 'sw 0\nfe 1\n' 'sw 0\nfe 1\nrx 2\n'
cut incast4 'sw 0\na 1\nb 1\n' 'sw 0\na 1\nb 1\nc 2\nd 2\n'
cut star5 '0 0\n1 1\n2 1\n' '0 0\n1 1\n2 1\n3 2\n4 2\n' # a switch 0, hosts 1..4
# HPCC's advcam: each cut splits same-nanosecond PFC frames between parts (hosts 8 | 9 of switch
# 3, switches 3 | 4), whose lines the parts' logs must merge in the sequential run's order
cut advcam-hpcc '0 0\n1 0\n2 1\n3 1\n4 0\n5 1\n6 1\n7 1\n8 1\n9 0\n10 0\n11 0\n12 0\n' \
    '0 0\n1 0\n2 1\n3 2\n4 0\n5 1\n6 1\n7 2\n8 2\n9 1\n10 2\n11 0\n12 0\n'

n=0
TRACE= # a trace interval: the runs also write --trace, compared too
# name, tag (1, 2, 3), then feroce sim arguments: the run's JSON and files as $T/name.tag.*
run() {
    name=$1
    tag=$2
    shift 2
    set -- "$@" --fct "$T/$name.$tag.fct" --pfc "$T/$name.$tag.pfc"
    if [ -n "$TRACE" ]; then set -- "$@" --trace "$T/$name.$tag.csv" --trace-interval "$TRACE"; fi
    "$BIN" sim "$@" --json --no-progress 2>"$T/$name.$tag.err" |
        grep -v '"wall_s"' >"$T/$name.$tag.json" || fail "$name ($tag): $(cat "$T/$name.$tag.err")"
}
# the run tagged t against the one-thread run: in t parts, the same outputs
same() {
    name=$1
    t=$2
    grep -q "^parallel: $t parts" "$T/$name.$t.err" ||
        fail "$name: did not run in $t parts: $(cat "$T/$name.$t.err")"
    for x in json fct pfc ${TRACE:+csv}; do
        cmp -s "$T/$name.1.$x" "$T/$name.$t.$x" ||
            fail "$name: $x of $t parts differs: $(diff "$T/$name.1.$x" "$T/$name.$t.$x" | head -5)"
    done
}
# name, then feroce sim arguments: 1, 2 and 3 threads (the automatic partition)
check() {
    name=$1
    shift
    run "$name" 1 "$@" --threads 1
    for t in 2 3; do
        run "$name" $t "$@" --threads $t
        same "$name" $t
    done
    n=$((n + 1))
}
# name, partition files' NAME (cut above), then feroce sim arguments: 1 thread, then its cuts
check_cut() {
    name=$1
    parts=$2
    shift 2
    run "$name" 1 "$@" --threads 1
    for t in 2 3; do
        run "$name" $t "$@" --partition "$T/$parts.cut$t"
        same "$name" $t
    done
    n=$((n + 1))
}

# Runs to the end (every flow done: the completions' actions at the grid's points) and runs cut
# by --until. A window is the smallest link delay (1 us), a barrier each: these small fabrics
# have few events per window, so the runs are short. The golden set's names, in its order.
TO_END="--set flow.size=1MB"
check advcam-pfc advcam-pfc $TO_END
TRACE=20us
check advcam-dcqcn advcam-dcqcn $TO_END
TRACE=
check_cut incast3 incast3 incast3 --set flow.size=300KB
check_cut incast3-nocc incast3 incast3-nocc --set flow.size=300KB
check_cut incast3-asym incast3 incast3-asym --until 2ms
check_cut switch-check switch-check switch-check --until 1ms
for cc in dcqcn-surf timely hpcc swift homa none; do
    check_cut "incast3-$cc" incast3 incast3 --cc "$cc" --set flow.size=300KB
done
check advcam-dcqcn-mtu1024 advcam-dcqcn --set host.mtu=1024 --set link.delay=2us $TO_END
check advcam-dcqcn-heap advcam-dcqcn --queue heap $TO_END
check advcam-dcqcn-wheel advcam-dcqcn --queue wheel $TO_END
TRACE=20us
check advcam-hpcc advcam-dcqcn --cc hpcc $TO_END
TRACE=
check advcam-timely advcam-dcqcn --cc timely $TO_END
check_cut incast4-yaml incast4 "$DATA/incast4.yaml" --until 2ms
check_cut incast4-yaml-seed7 incast4 "$DATA/incast4.yaml" --seed 7 --until 2ms
# the HPCC inputs: with --ns3-compat on one thread (below); feroce's own timing in parts, PFC
# lines of one nanosecond in several parts
check_cut hpcc-advcam-pfc advcam-hpcc --hpcc "$SRC/tests/sim/ns3/advcam-pfc/config.txt" --until 3ms
check_cut hpcc-data star5 --hpcc "$DATA/hpcc/config.txt"
check_cut ns3roce-incast3 star5 --ns3-roce "$SRC/tests/sim/ns3roce/incast3-config.json" --until 2ms
# beyond the golden set: a run cut by --until, and a fat-tree slice
check advcam-cut advcam-dcqcn --until 3ms
check fattree-128 "$BENCH/fattree-128.yaml" --until 50us

# what cannot run in parts says why and runs on one thread
one_thread() {
    name=$1
    why=$2
    shift 2
    "$BIN" sim "$@" --threads 2 --no-progress >/dev/null 2>"$T/$name.err" ||
        fail "$name --threads 2: $(cat "$T/$name.err")"
    grep -q "running on one thread: $why" "$T/$name.err" || fail "$name: $(cat "$T/$name.err")"
}
one_thread advcam-eb "event building" advcam-eb --set eb.events=200
one_thread incast3-auto "the partition cuts no link" incast3 --until 100us
one_thread pfc-0delay "the PFC log" advcam-pfc --set link.delay=0 --until 100us --pfc "$T/0.pfc"
for d in advcam-dcqcn advcam-hpcc25 advcam-pfc hpcc-sample; do
    one_thread "hpcc-$d" "ns-3 timing" --hpcc "$SRC/tests/sim/ns3/$d/config.txt" --ns3-compat \
        --until 1ms --fct "$T/$d.fct" --pfc "$T/$d.pfc"
done
echo "parallel_sim: $n scenarios identical at 1, 2 and 3 threads (or their partition files)"
