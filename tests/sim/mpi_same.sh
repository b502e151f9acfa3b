# Sourced by the MPI tests (mpi_sim.sh, mpi_netns.sh), with BIN and fail() defined.
# mpi_same NAME DIR NP PART ARGS...: `feroce sim ARGS` on one thread and under $MPI_CMD (mpirun,
# its options and its process count NP) give the same JSON, byte for byte (the wall-clock field
# removed), and the MPI run really ran in NP parts (its stderr line "mpi: NP parts"); PART, a
# partition file or "-" (automatic), is passed as --partition. With MPI_FILES="fct pfc" (or one
# of them) both runs also write those files, compared too. Outputs go to DIR/NAME.*.
mpi_same() {
    name=$1
    dir=$2
    np=$3
    part=$4
    shift 4
    files1=""
    filesm=""
    for x in ${MPI_FILES:-}; do
        rm -f "$dir/$name.1.$x" "$dir/$name.m.$x"
        files1="$files1 --$x $dir/$name.1.$x"
        filesm="$filesm --$x $dir/$name.m.$x"
    done
    # shellcheck disable=SC2086 # the files' options, paths without spaces (mktemp)
    "$BIN" sim "$@" $files1 --threads 1 --json --no-progress 2>"$dir/$name.err1" |
        grep -v '"wall_s"' >"$dir/$name.1.json" || fail "$name: 1 thread: $(cat "$dir/$name.err1")"
    [ "$part" = - ] || set -- "$@" --partition "$part"
    # shellcheck disable=SC2086
    $MPI_CMD "$BIN" sim "$@" $filesm --mpi --json --no-progress </dev/null 2>"$dir/$name.errm" |
        grep -v '"wall_s"' >"$dir/$name.m.json" || fail "$name: MPI, $np processes: $(cat "$dir/$name.errm")"
    grep -q "^mpi: $np parts" "$dir/$name.errm" ||
        fail "$name: the MPI run did not run in $np parts: $(cat "$dir/$name.errm")"
    for x in json ${MPI_FILES:-}; do
        cmp -s "$dir/$name.1.$x" "$dir/$name.m.$x" ||
            fail "$name: $x of $np processes differs from 1 thread: $(diff "$dir/$name.1.$x" "$dir/$name.m.$x" | head -5)"
    done
}
