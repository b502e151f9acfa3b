#!/bin/sh
# pgo-train.sh FEROCE GEN_DIR USE_DIR SRC_DIR [GCOV_DUMP]: the training run of a PGO build
# (CMakeLists.txt, FEROCE_PGO). FEROCE is the instrumented binary built in GEN_DIR; running it
# writes one .gcda profile per object, next to the object in GEN_DIR. The optimized build in
# USE_DIR has the same tree layout and gcc's -fprofile-use reads each object's profile next to
# that object, so the profiles are copied to the same relative paths there.
# USE_DIR/pgo-profile.stamp, which every optimized object depends on, is touched only when a
# profile changed: a rebuild after a touch (or a change that leaves the training's counts as
# they were) recompiles nothing more. With gcov-dump (GCOV_DUMP) profiles are compared by their
# counts, not their bytes: the header's stamp is the compile time, and the "ior" counters
# record pointer values (for alignment), which address-space randomisation changes every run.
set -eu
bin=$1 gen=$2 use=$3 src=$4 dump=${5:-}
# profiles accumulate across runs of the instrumented binary: start from none
find "$gen" -name '*.gcda' -exec rm -f {} +
# The workload, a few seconds: what `feroce bench sim` times, shortened. The simulator's
# per-packet path is the same in every scenario; these two cover the heap (advcam, 16 ports) and
# the timing wheel (fat-tree, 512 ports), PFC, ECN marking, DCQCN with CNPs, and 32512 QPs.
"$bin" sim advcam-dcqcn --set host.mtu=1024 --set link.delay=2us --set flow.size=11MB \
    --set flow.msg=1000 --no-progress --json >/dev/null
# (--threads 1: the instrumented build counts without atomic updates, and the fat-tree's default
# is a thread per core)
"$bin" sim "$src/bench/fattree-128.yaml" --threads 1 --until 300us --no-progress --json >/dev/null
# --ns3-compat on HPCC's files: ns-3 timing and frames, XOFF/XON, congestion on ACKs (code the
# two runs above never reach, which would otherwise be laid out as cold)
"$bin" sim --hpcc "$src/tests/sim/ns3/advcam-dcqcn/config.txt" --ns3-compat --until 40ms \
    --fct /dev/null --pfc /dev/null --no-progress --json >/dev/null
# the receive codec: whole frames decoded and their ICRC verified at 64 B, 1 KB and 4 KB (not in
# the simulator; left out, gcc lays it out from no profile and it ran slower than without PGO)
"$bin" bench icrc --time-ms 10 --reps 1 >/dev/null

counts() {
    "$dump" -l "$1" | sed 's/^[^:]*://' |
        awk '/^stamp / { next }
             /COUNTERS ior/ { print; ior = 1; next } ior && /^ *[0-9]+:/ { next } { ior = 0; print }'
}
same() {
    [ -e "$2" ] || return 1
    if [ -n "$dump" ]; then
        [ "$(counts "$1")" = "$(counts "$2")" ]
    else
        cmp -s "$1" "$2"
    fi
}
changed=$(cd "$gen" && find . -name '*.gcda' | while read -r f; do
    if ! same "$f" "$use/$f"; then
        mkdir -p "$(dirname "$use/$f")" && cp "$f" "$use/$f" && echo "$f"
    fi
done)
if [ -n "$changed" ] || [ ! -e "$use/pgo-profile.stamp" ]; then
    touch "$use/pgo-profile.stamp"
fi
touch "$use/pgo-train.stamp"
