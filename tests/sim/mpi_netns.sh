#!/bin/sh
# The simulator over MPI across two "hosts": two network namespaces joined by a veth pair, one
# rank in each, talking over Open MPI's TCP transport only (btl self,tcp on the veth). mpirun
# runs in the first namespace, which holds rank 0; the second rank's daemon (orted) is started
# by Open MPI's rsh launcher through an agent script that runs it in the second namespace
# (ip netns exec) instead of ssh-ing to a host. The hostfile names the hosts by their veth
# addresses: mpirun sees the first as its own, the second as remote. Each run must give the
# 1-thread results byte for byte (the wall-clock field removed), as tests/sim/mpi_sim.sh checks
# on one host. Needs root, iproute2 and mpirun (exit 77: skipped otherwise); every namespace,
# and every process left in them, is removed on exit, failure included.
set -u
BIN=$1
DATA=$2  # tests/sim/data
BENCH=$3 # bench (the fat-tree)
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
    echo "SKIP: needs root and iproute2 to create network namespaces"
    exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: no mpirun (scripts/deps.sh installs openmpi-bin)"
    exit 77
fi
TAG=fm$$
NS_A=${TAG}a
NS_B=${TAG}b
IP_A=10.234.0.1
IP_B=10.234.0.2
IF=fm0
D=$(mktemp -d)
# the namespaces' processes (mpirun, the remote orted, the ranks) first, then the namespaces
cleanup() {
    for n in $NS_A $NS_B; do
        pids=$(ip netns pids "$n" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    done
    for n in $NS_A $NS_B; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
. "$(dirname "$0")/mpi_same.sh"

if ! ip netns add $NS_A 2>"$D/err"; then
    echo "SKIP: cannot create network namespaces here: $(cat "$D/err")"
    exit 77
fi
ip netns add $NS_B || fail "ip netns add $NS_B"
ip link add $IF netns $NS_A type veth peer name $IF netns $NS_B || fail "veth pair"
for x in "$NS_A $IP_A" "$NS_B $IP_B"; do
    set -- $x
    ip -n "$1" addr add "$2/24" dev $IF && ip -n "$1" link set $IF up &&
        ip -n "$1" link set lo up || fail "addresses in $1"
done

# The rsh agent: Open MPI runs `AGENT HOST COMMAND...` as it would `ssh HOST COMMAND...`; the
# command is a shell command line (orted and its options), run in the host's namespace.
cat >"$D/agent" <<EOF
#!/bin/sh
host=\$1
shift
case \$host in
$IP_A) ns=$NS_A ;;
$IP_B) ns=$NS_B ;;
*) echo "mpi_netns agent: unknown host \$host" >&2; exit 1 ;;
esac
echo "\$host" >>"$D/agent.log"
exec ip netns exec "\$ns" sh -c "\$*"
EOF
chmod +x "$D/agent"
printf '%s slots=1\n%s slots=1\n' $IP_A $IP_B >"$D/hosts"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# TCP on the veth only, for the runtime's own messages (oob) and MPI's (btl); no tree spawn
# (the remote daemon would launch others itself, through the same agent); unbound; as
# tests/sim/mpi_sim.sh, LeakSanitizer's suppressions of Open MPI's own leaks (ASan build only).
# The agent's environment, hence the remote daemon's and rank's, is mpirun's.
SUPP="$(cd "$(dirname "$0")" && pwd)/mpi_lsan.supp"
MPIRUN="env OMPI_MCA_mca_base_component_disable_dlclose=1
    LSAN_OPTIONS=suppressions=$SUPP:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}
    ip netns exec $NS_A timeout 300 mpirun -np 2 --hostfile $D/hosts --bind-to none
    --mca plm_rsh_agent $D/agent --mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include $IF
    --mca btl self,tcp --mca btl_tcp_if_include $IF"

# first: one rank in each namespace (the namespace each rank's process is in)
$MPIRUN sh -c 'echo "$OMPI_COMM_WORLD_RANK $(readlink /proc/self/ns/net)"' </dev/null \
    >"$D/where" 2>"$D/where.err" || fail "mpirun across the namespaces: $(cat "$D/where.err")"
for x in "0 $NS_A" "1 $NS_B"; do
    set -- $x
    ns=$(ip netns exec "$2" readlink /proc/self/ns/net)
    grep -Fqx "$1 $ns" "$D/where" || fail "rank $1 is not in $2 ($ns): $(cat "$D/where")"
done
grep -Fqx "$IP_B" "$D/agent.log" || fail "the agent did not start $IP_B: $(cat "$D/agent.log")"

n=0
# name, partition file or "-" (automatic), then feroce sim arguments
MPI_CMD=$MPIRUN
check() {
    c_name=$1
    c_part=$2
    shift 2
    mpi_same "$c_name" "$D" 2 "$c_part" "$@"
    n=$((n + 1))
}
printf 'sw 0\nA 1\nB 1\nC 1\n' >"$D/incast3.part2"
printf 'sw 0\na 1\nb 1\nc 1\nd 1\n' >"$D/incast4.part2"
check incast3 "$D/incast3.part2" incast3 --until 300us
check advcam-dcqcn - advcam-dcqcn --set flow.size=100KB
check incast4-yaml "$D/incast4.part2" "$DATA/incast4.yaml" --until 300us
check fattree-128 - "$BENCH/fattree-128.yaml" --until 100us
echo "mpi_netns: $n scenarios identical across two namespaces over TCP and on one thread"
