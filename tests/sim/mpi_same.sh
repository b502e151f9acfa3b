# Sourced by the MPI tests (mpi_sim.sh, mpi_netns.sh), with BIN and fail() defined.
# mpi_same NAME DIR NP PART ARGS...: `feroce sim ARGS` on one thread and under $MPI_CMD (mpirun,
# its options and its process count NP) give the same JSON, byte for byte (the wall-clock field
# removed), and the MPI run really ran in NP parts (its stderr line "mpi: NP parts"); PART, a
# partition file or "-" (automatic), is passed as --partition. Outputs go to DIR/NAME.*.
mpi_same() {
    name=$1
    dir=$2
    np=$3
    part=$4
    shift 4
    "$BIN" sim "$@" --threads 1 --json --no-progress 2>"$dir/$name.err1" | grep -v '"wall_s"' \
        >"$dir/$name.1.json" || fail "$name: 1 thread: $(cat "$dir/$name.err1")"
    [ "$part" = - ] || set -- "$@" --partition "$part"
    $MPI_CMD "$BIN" sim "$@" --mpi --json --no-progress </dev/null 2>"$dir/$name.errm" |
        grep -v '"wall_s"' >"$dir/$name.m.json" || fail "$name: MPI, $np processes: $(cat "$dir/$name.errm")"
    grep -q "^mpi: $np parts" "$dir/$name.errm" ||
        fail "$name: the MPI run did not run in $np parts: $(cat "$dir/$name.errm")"
    cmp -s "$dir/$name.1.json" "$dir/$name.m.json" ||
        fail "$name: $np processes differ from 1 thread: $(diff "$dir/$name.1.json" "$dir/$name.m.json" | head -5)"
}
