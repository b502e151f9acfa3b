#!/bin/sh
# The simulator over MPI (src/sim/parallel_mpi.c, feroce sim --mpi): the golden set's scenarios
# (scripts/golden.sh; short runs where the golden run is long) under mpirun with 2 processes,
# some with 3, oversubscribed on a small machine, give the results of the 1-thread run byte for
# byte (the wall-clock field removed). Each MPI run must really run in parts: its stderr line
# "mpi: N parts" is checked. What MPI cannot run is refused, on rank 0 only.
set -eu
BIN=$1
DATA=$2  # tests/sim/data
NS3=$3   # tests/sim/ns3 (HPCC configs)
ROCE=$4  # tests/sim/ns3roce
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/mpi_same.sh"

command -v mpirun >/dev/null 2>&1 || fail "no mpirun (scripts/deps.sh installs openmpi-bin)"
# Open MPI refuses root without these two; --oversubscribe lets 2-3 processes share fewer
# cores, unbound; shared memory and self only (no network needed), without CMA's single copy
# (containers forbid process_vm_readv); stdin from /dev/null (each run's)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none"
MPIRUN="$MPIRUN --bind-to none"
# The ASan build's LeakSanitizer: Open MPI does not free all it allocates by MPI_Finalize.
# mpi_lsan.supp suppresses the leaks whose stacks pass through Open MPI's libraries only; those
# libraries have no frame pointers, so the stacks are unwound the slow way to reach them, and
# Open MPI's components stay loaded to the end (their frames keep names). Without ASan, unused.
# Only for the MPI runs: the slow unwinding would slow the 1-thread references down too.
SUPP="$(cd "$(dirname "$0")" && pwd)/mpi_lsan.supp"
MPIRUN="env OMPI_MCA_mca_base_component_disable_dlclose=1
    LSAN_OPTIONS=suppressions=$SUPP:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS} $MPIRUN"

printf 'sw 0\nA 1\nB 1\nC 1\n' >"$T/incast3.part2"
printf 'sw 0\nA 1\nB 2\n' >"$T/incast3.part3"
printf 'sw 0\na 1\nb 1\nc 1\nd 1\n' >"$T/incast4.part2"
printf 'sw 0\na 1\nb 1\nc 2\nd 2\n' >"$T/incast4.part3"

n=0
# name, process count, partition file or "-" (automatic), then feroce sim arguments
check() {
    c_name=$1
    c_np=$2
    c_part=$3
    shift 3
    MPI_CMD="$MPIRUN -np $c_np"
    mpi_same "$c_name" "$T" "$c_np" "$c_part" "$@"
    n=$((n + 1))
}

printf 'sw 0\nfe 1\nrx 1\n' >"$T/switch-check.part2"

# the golden set (scripts/golden.sh), in its order. A window is the smallest link delay (1 us
# here) and each costs two collectives, slow when processes share busy cores: the runs are cut by
# --until (where a run is cut changes nothing: docs/sim.md) at 0.5 ms instead of running 5-35 ms
# to the end; two run to the end with 100 KB flows (the completions' actions at grid points).
check advcam-pfc 2 - advcam-pfc --until 500us
check advcam-dcqcn 2 - advcam-dcqcn --set flow.size=100KB
check incast3 2 "$T/incast3.part2" incast3 --until 500us
check incast3-nocc 3 "$T/incast3.part3" incast3-nocc --until 500us
check incast3-asym 2 "$T/incast3.part2" incast3-asym --until 500us
check switch-check 2 "$T/switch-check.part2" switch-check --until 500us
for cc in dcqcn-surf timely hpcc swift homa none; do
    check "incast3-$cc" 2 "$T/incast3.part2" incast3 --cc "$cc" --set flow.size=4MB --until 500us
done
check advcam-dcqcn-mtu1024 2 - advcam-dcqcn --set host.mtu=1024 --set link.delay=2us --until 500us
check advcam-dcqcn-heap 2 - advcam-dcqcn --queue heap --until 500us
check advcam-dcqcn-wheel 2 - advcam-dcqcn --queue wheel --until 500us
check advcam-hpcc 3 - advcam-dcqcn --cc hpcc --set flow.size=100KB
check advcam-timely 2 - advcam-dcqcn --cc timely --until 500us
check incast4-yaml 3 "$T/incast4.part3" "$DATA/incast4.yaml" --until 500us
check incast4-yaml-seed7 2 "$T/incast4.part2" "$DATA/incast4.yaml" --seed 7 --until 500us
# The golden set's HPCC input in feroce timing (a star: cut at its hosts) and HPCC's advcam in
# feroce timing, cut so that PFC frames of one nanosecond arrive in different parts: the PFC log
# and the FCT file too (every rank keeps its part's PFC lines, rank 0 merges and writes them).
# The golden set's ns-3 inputs take ns-3 timing: refused, below.
printf '0 0\n1 1\n2 1\n' >"$T/star5.part2"
printf '0 0\n1 0\n2 1\n3 1\n4 0\n5 1\n6 1\n7 1\n8 1\n9 0\n10 0\n11 0\n12 0\n' >"$T/advcam-hpcc.part2"
printf '0 0\n1 0\n2 1\n3 2\n4 0\n5 1\n6 1\n7 2\n8 2\n9 1\n10 2\n11 0\n12 0\n' >"$T/advcam-hpcc.part3"
MPI_FILES="fct pfc"
check hpcc-data 2 "$T/star5.part2" --hpcc "$DATA/hpcc/config.txt"
for np in 2 3; do
    check "hpcc-advcam-pfc-$np" $np "$T/advcam-hpcc.part$np" --hpcc "$NS3/advcam-pfc/config.txt" --until 3ms
    [ "$(wc -l <"$T/hpcc-advcam-pfc-$np.m.pfc")" -gt 100 ] || fail "hpcc-advcam-pfc: too few PFC lines"
done
MPI_FILES=
check ns3roce-incast3 2 "$T/star5.part2" --ns3-roce "$ROCE/incast3-config.json" --until 2ms

# what MPI cannot run is refused, by rank 0 alone, and the run fails
refused() {
    name=$1
    what=$2
    shift 2
    $MPIRUN -np 2 "$BIN" sim "$@" --mpi --no-progress </dev/null >"$T/$name.out" 2>"$T/$name.err" &&
        fail "$name: ran over MPI"
    grep -q "^feroce sim: --mpi: $what" "$T/$name.err" || fail "$name: $(cat "$T/$name.err")"
    [ "$(grep -c "feroce sim" "$T/$name.err")" = 1 ] || fail "$name: $(cat "$T/$name.err")"
}
refused eb "event building" advcam-eb --set eb.events=200
refused ns3 "ns-3 timing" advcam-pfc --ns3-compat
refused trace "--trace and --plot" advcam-pfc --trace "$T/trace.csv"
refused one-part "the partition cuts no link" incast3
"$BIN" sim incast3 --mpi --no-progress >/dev/null 2>"$T/nompirun.err" && fail "--mpi ran without mpirun"
grep -q "not started by mpirun" "$T/nompirun.err" || fail "--mpi without mpirun: $(cat "$T/nompirun.err")"
# a rank that fails (the test hook FEROCE_SIM_MPI_FAIL=RANK,WINDOW: out of memory for the frames
# it sends at the end of that window; window 0: its set-up) stops the run on every rank at the
# next collective, without MPI_Abort: rank 0 alone names the rank and why, the run fails
failing() {
    name=$1
    np=$2
    hook=$3
    what=$4
    shift 4
    FEROCE_SIM_MPI_FAIL=$hook $MPIRUN -np "$np" "$BIN" sim "$@" --mpi --json --no-progress \
        </dev/null >"$T/$name.out" 2>"$T/$name.err" && fail "$name: the failure went unnoticed"
    grep -q "^feroce sim: --mpi: $what" "$T/$name.err" || fail "$name: $(cat "$T/$name.err")"
    [ "$(grep -c "feroce sim" "$T/$name.err")" = 1 ] || fail "$name: $(cat "$T/$name.err")"
    ! grep -qi "MPI_ABORT" "$T/$name.err" || fail "$name: aborted: $(cat "$T/$name.err")"
}
failing fail-window 2 1,40 "rank 1 failed (simulated time [0-9]* ns): out of memory for the frames to send" \
    incast3 --partition "$T/incast3.part2" --until 500us
failing fail-window3 3 2,7 "rank 2 failed (simulated time [0-9]* ns): out of memory for the frames to send" \
    advcam-dcqcn --set flow.size=100KB
failing fail-rank0 2 0,3 "rank 0 failed" advcam-dcqcn --set flow.size=100KB
failing fail-setup 3 1,0 "rank 1 failed: out of memory setting up" incast3 --partition "$T/incast3.part3"

# libmpi is the MPI module's alone (feroce-mpi.so, loaded for --mpi): a missing module is named
if command -v ldd >/dev/null 2>&1 && ldd "$BIN" | grep -q libmpi; then fail "$BIN links libmpi"; fi
FEROCE_MPI_MODULE="$T/none.so" $MPIRUN -np 2 "$BIN" sim incast3 --mpi --no-progress </dev/null \
    >/dev/null 2>"$T/nomodule.err" && fail "--mpi ran without its module"
grep -q "cannot load the MPI module $T/none.so" "$T/nomodule.err" ||
    fail "--mpi without its module: $(cat "$T/nomodule.err")"
echo "mpi_sim: $n scenarios identical under mpirun and on one thread"
