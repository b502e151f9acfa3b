#!/bin/sh
# The raw backend over AF_XDP, between two network namespaces joined by a veth pair:
#  1. feroce send -> feroce recv with --raw-backend xdp, path MTU 1024 over a link of MTU 1500
#     (the driver's native XDP hook) and 4096 over MTU 9000 (frames past a page: the generic
#     hook, multi-buffer): both ends report AF_XDP, every message arrives and every byte is
#     verified (the kernel's drops are reported); no XDP program is left on the interfaces when
#     the tools have exited; `auto` right after that (the queue just released) on AF_XDP too.
#  2. The fallback to AF_PACKET, with its reason on stderr: AF_XDP without the privilege to load
#     an XDP program (the tools run as nobody with CAP_NET_RAW only), on an interface with
#     two receive queues (AF_XDP serves one), and `auto` on interfaces with a kernel address.
#     The transfer is verified as well.
# Needs root (skipped otherwise) and a build with libxdp (the AF_XDP part is skipped without);
# the namespaces are removed on exit, failure included.
set -u
BIN=$1
PY=/usr/bin/python3
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
    echo "SKIP: needs root and iproute2 to create network namespaces"
    exit 77
fi
TAG=fx$$
NA=${TAG}a
NB=${TAG}b
D=$(mktemp -d)
PIDS=
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    ip netns del $NA 2>/dev/null
    ip netns del $NB 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A fresh pair of namespaces and veth a0 <-> b0 of link MTU $1 ($2: extra veth arguments).
make_pair() {
    ip netns del $NA 2>/dev/null
    ip netns del $NB 2>/dev/null
    ip netns add $NA && ip netns add $NB || return 1
    ip link add a0 netns $NA $2 type veth peer name b0 netns $NB $2 || return 1
    ip -n $NA link set a0 mtu "$1" up && ip -n $NB link set b0 mtu "$1" up || return 1
    ip netns exec $NA sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
    ip netns exec $NB sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
    return 0
}

# One transfer: $1 backend, $2 path MTU, $3 messages, $4 name of the run; $5 a command prefix
# for both tools (to drop privileges). Results in $D/$4.{recv,send}.{json,err}.
transfer() {
    ip netns exec $NA ${5:-} "$BIN" recv --backend raw --raw-backend "$1" --if a0 --bind 10.235.0.1 \
        --manual 1 --peer 10.235.0.2 --peer-qpn 256 --psn 0 --rkey 0x1000 --msg-size 64K \
        --mtu "$2" --count "$3" --timeout 60s --interval 0 --json \
        >"$D/$4.recv.json" 2>"$D/$4.recv.err" &
    RP=$!
    PIDS="$RP"
    sleep 0.5
    ip netns exec $NB ${5:-} "$BIN" send --backend raw --raw-backend "$1" --if b0 --bind 10.235.0.2 \
        --peer 10.235.0.1 --peer-qpn 17 --rkey 0x1000 --va 0x100000000 --msg-size 64K \
        --mtu "$2" --count "$3" --line-rate 2Gbps --json >"$D/$4.send.json" 2>"$D/$4.send.err"
    src=$?
    wait $RP
    rrc=$?
    PIDS=
    if [ $src != 0 ] || [ $rrc != 0 ]; then
        echo "$4: send exited $src, recv $rrc"
        cat "$D/$4.send.err" "$D/$4.recv.err" "$D/$4.send.json" "$D/$4.recv.json"
        return 1
    fi
    return 0
}

# Every message verified on both ends, and the path each end reports is $3; on failure, what
# each end said (why a backend was chosen or refused).
check() { # run name, messages, expected path prefix
    check_json "$@" && return 0
    echo "$1: sender's and receiver's stderr:"
    cat "$D/$1.send.err" "$D/$1.recv.err"
    return 1
}

check_json() {
    $PY - "$D/$1" "$2" "$3" <<'PYEOF'
import json, sys
base, n, want = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r, s = json.load(open(base + '.recv.json')), json.load(open(base + '.send.json'))
f = r['flows'][0]
print('%s: %s / %s, %d messages, %d bytes verified, %d verify errors; receiver: %d frames, '
      '%d dropped by the kernel, %d truncated' % (base.rsplit('/', 1)[1], s['raw']['backend'],
      r['raw']['backend'], f['msgs'], f['bytes'], f['verify_errors'], r['raw']['rx_frames'],
      r['raw']['rx_kernel_drops'], r['raw']['rx_trunc']))
assert r['ok'] and s['ok'], (r, s)
assert f['msgs'] == n and f['bytes'] == n * 65536 and f['verify_errors'] == 0, f
assert f['seq_errors'] == 0 and f['bad_icrc'] == 0, f
for side in (r, s):
    assert side['raw']['backend'].startswith(want), (want, side['raw'])
    assert side['raw']['tx_errors'] == 0 and side['raw']['rx_trunc'] == 0, side['raw']
# Kernel drops are legal (the transport retransmits): only reported, never part of the check,
# so a descheduled receiver on a loaded machine does not fail the test.
assert r['raw']['rx_frames'] > 0 and r['raw']['rx_kernel_drops'] >= 0, r['raw']
PYEOF
}

no_xdp_left() {
    for x in "$NA a0" "$NB b0"; do
        set -- $x
        if ip -n "$1" link show "$2" | grep -q 'xdp'; then
            echo "an XDP program was left on $2:"
            ip -n "$1" link show "$2"
            return 1
        fi
    done
    return 0
}

N=300
# 1. AF_XDP, native hook then generic hook with multi-buffer frames.
make_pair 1500 "" || exit 1
transfer xdp 1024 $N native || exit 1
if grep -q 'built without libxdp' "$D/native.recv.err"; then
    echo "SKIP: this feroce was built without libxdp (AF_XDP unavailable)"
    exit 77
fi
check native $N "af_xdp native" || exit 1
no_xdp_left || exit 1

make_pair 9000 "" || exit 1
transfer xdp 4096 $N generic || exit 1
check generic $N "af_xdp generic" || exit 1
no_xdp_left || exit 1

# auto picks AF_XDP here (one queue, no kernel address, no timestamps), started right after
# the last run: its receiver binds queue 0 of a0 as soon as the last one exited, while the
# kernel may still hold the queue for the closed socket (EBUSY: waited for, never a fallback).
transfer auto 4096 $N auto || exit 1
check auto $N "af_xdp" || exit 1
grep -h 'bound after' "$D/auto.recv.err" "$D/auto.send.err"

# auto on interfaces with a kernel address: AF_PACKET, and it says why.
ip -n $NA addr add 10.235.0.1/24 dev a0 && ip -n $NB addr add 10.235.0.2/24 dev b0 || exit 1
transfer auto 4096 $N autoaddr || exit 1
for side in recv send; do
    grep -H 'kernel IPv4 address; using AF_PACKET' "$D/autoaddr.$side.err" || {
        echo "auto fell back without saying why ($side)"
        exit 1
    }
done
check autoaddr $N "af_packet" || exit 1
ip -n $NA addr flush dev a0 && ip -n $NB addr flush dev b0 || exit 1

# 2. Fallbacks. Without the privilege to load an XDP program: AF_PACKET, and it says why.
if command -v setpriv >/dev/null 2>&1; then
    transfer xdp 4096 $N noprivs \
        "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+net_raw --ambient-caps=-all,+net_raw" ||
        exit 1
    grep -H 'AF_XDP on .* cannot be set up' "$D/noprivs.recv.err" "$D/noprivs.send.err" || {
        echo "no fallback message"
        exit 1
    }
    check noprivs $N "af_packet" || exit 1
else
    echo "setpriv not found: the unprivileged fallback is not checked"
fi

# Two receive queues: AF_XDP would see one of them.
make_pair 9000 "numrxqueues 2 numtxqueues 2" || exit 1
transfer xdp 4096 $N multiqueue || exit 1
grep -H 'several receive queues.*using AF_PACKET' "$D/multiqueue.recv.err" || {
    echo "no fallback message"
    exit 1
}
check multiqueue $N "af_packet" || exit 1
no_xdp_left || exit 1
echo "AF_XDP transfers verified; fallbacks to AF_PACKET verified"
