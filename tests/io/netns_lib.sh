# Sourced by the event-building tests across network namespaces: a hub namespace holding a
# bridge, and namespaces joined to it by veth pairs. The caller sets TAG (a prefix of its own,
# with $$ in it) and removes the namespaces it made on exit: NETNS_MADE lists them.
NETNS_MADE=
NETNS_HOST=1

# The hub: namespace ${TAG}hub with bridge br0 of MTU $1 (9000 when not given). Fails when
# namespaces cannot be made here (the caller then skips).
netns_hub() {
    ip netns add ${TAG}hub || return 1
    NETNS_MADE="$NETNS_MADE ${TAG}hub"
    ip -n ${TAG}hub link add br0 mtu "${1:-9000}" type bridge || return 1
    ip -n ${TAG}hub link set br0 up
}

# Namespace $1 with eth0 on the bridge (link MTU $2, 9000 when not given); $3 "addr": the kernel
# address 10.$4.0.N/24 on eth0, else none (the raw backend answers ARP for its own address).
# The N-th namespace attached is host N (NETNS_HOST counts them).
netns_attach() {
    ip netns add "$1" || return 1
    NETNS_MADE="$NETNS_MADE $1"
    mtu=${2:-9000}
    ip link add eth0 netns "$1" mtu "$mtu" type veth peer name "p$NETNS_HOST" netns ${TAG}hub \
        mtu "$mtu" || return 1
    ip -n ${TAG}hub link set "p$NETNS_HOST" master br0 up || return 1
    if [ "${3:-}" = addr ]; then
        ip -n "$1" addr add "10.$4.0.$NETNS_HOST/24" dev eth0 || return 1
    else
        ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
    fi
    ip -n "$1" link set eth0 up && ip -n "$1" link set lo up || return 1
    NETNS_HOST=$((NETNS_HOST + 1))
}

netns_remove_all() {
    for n in $NETNS_MADE; do ip netns del "$n" 2>/dev/null; done
    NETNS_MADE=
}

# The frame of such a test: after `set -u`, BIN and TAG, `netns_test_begin MTU` skips (exit 77)
# without root and iproute2 or where namespaces cannot be made, else gives a work folder D, a
# list PIDS of processes killed on exit, fail() (the logs' tails, then exit 1) and the hub of
# that MTU; on exit, failure included, every namespace made is removed.
netns_test_begin() {
    if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
        echo "SKIP: needs root and iproute2 to create network namespaces"
        exit 77
    fi
    D=$(mktemp -d)
    PIDS=
    trap netns_test_end EXIT
    trap 'exit 1' INT TERM
    if ! netns_hub "$1" 2>"$D/err"; then
        echo "SKIP: cannot create network namespaces here: $(cat "$D/err")"
        exit 77
    fi
}

netns_test_end() {
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    netns_remove_all
    rm -rf "$D"
}

fail() {
    echo "FAIL: $*"
    for f in "$D"/*.log; do echo "== $f"; tail -6 "$f"; done
    exit 1
}
