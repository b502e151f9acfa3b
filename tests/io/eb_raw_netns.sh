#!/bin/sh
# Event building on the raw Ethernet backend, as front-end boards and DAQ servers run it: 4
# front-ends (feroce send --eb-source), 3 builders and the event manager (feroce evm), each its
# own process in its own network namespace, joined by veth pairs to a bridge. The interfaces
# carry no kernel address: every process builds whole frames and answers ARP itself, and the
# side channel and the event-building messages (ring, announce, progress, tables) go through
# the raw endpoint's UDP hook, the same messages as on UDP. Availability policy, twice: on
# AF_PACKET (--raw-backend packet), then with --raw-backend auto, which must pick AF_XDP here
# (one receive queue, no kernel address). Each run: every process reports the path it used,
# every event is built once at the builder assigned, nothing incomplete, lost, busy, missing or
# twice, every recorded byte verifies (feroce eb-check), and no XDP program is left behind.
# Frames dropped on the way (a receiver's ring full while it waits for a core on a loaded
# machine, the bridge's backlog) are legal: the transport retransmits them, and the builders'
# event timeout (10 s) outlasts that recovery, so that every event is built rather than declared
# incomplete. The run's retransmissions and kernel drops are printed.
# Needs root (skipped otherwise, or where namespaces cannot be made); the namespaces are removed
# on exit, failure included, and every process started is killed.
set -u
BIN=$1
K=${2:-3000}
TAG=er$$
. "$(dirname "$0")/netns_lib.sh"
netns_test_begin 1500
# Link MTU 1500 (veth's native XDP hook), path MTU 1024. No kernel addresses.
netns_attach ${TAG}m 1500 || fail "namespace setup" # 10.236.0.1
for k in 0 1 2 3; do netns_attach ${TAG}f$k 1500 || fail "namespace setup"; done # .2 .. .5
for b in 0 1 2; do netns_attach ${TAG}b$b 1500 || fail "namespace setup"; done   # .6 .. .8
NET=10.236.0
MGR=$NET.1:17200
FES=$NET.2,$NET.3,$NET.4,$NET.5
SIZES=512-4K

run_path() { # --raw-backend value, the path every process must report (prefix)
    RAW="--backend raw --if eth0 --raw-backend $1"
    rm -f "$D"/*
    PIDS=
    ip netns exec ${TAG}m "$BIN" evm $RAW --builders 3 --frontends 4 --bind $MGR --events $K \
        --record "$D/asg.bin" --interval 0 --timeout 40s >"$D/evm.log" 2>&1 &
    PIDS="$PIDS $!"
    for k in 0 1 2 3; do
        ip netns exec ${TAG}f$k "$BIN" send $RAW --eb-source $k --eb-builders 3 --events $K \
            --trigger-hz 5000 --bind $NET.$((k + 2)) --mtu 1024 --frag-bytes $SIZES \
            --manager $MGR --timeout 40s >"$D/fe$k.log" 2>&1 &
        PIDS="$PIDS $!"
    done
    for b in 0 1 2; do
        ip netns exec ${TAG}b$b "$BIN" builder $RAW --id $b --builders 3 --policy availability \
            --manager $MGR --fe $FES --bind $NET.$((b + 6)) --mtu 1024 --events $K \
            --frag-bytes $SIZES --out "$D/b$b.dat" --event-timeout 10s --timeout 40s --interval 0 \
            >"$D/b$b.log" 2>&1 &
        PIDS="$PIDS $!"
    done
    for p in $PIDS; do wait "$p" || fail "$1: a process failed"; done
    PIDS=
    paths=
    for f in evm fe0 fe1 fe2 fe3 b0 b1 b2; do
        got=$(sed -n 's/.* raw: \([^,]*\),.*/\1/p' "$D/$f.log")
        case "$got" in
        "$2"*) ;;
        *) fail "$1: $f used '$got', not $2" ;;
        esac
        paths="$paths $f=$(echo "$got" | tr ' ' '_')"
    done
    echo "$1:$paths"
    "$BIN" eb-check --events $K --sources 4 --policy availability --assignments "$D/asg.bin" \
        --frag-bytes $SIZES --builder "$D/b0.dat" --builder "$D/b1.dat" --builder "$D/b2.dat" \
        --json >"$D/check.json" || fail "$1: eb-check: $(cat "$D/check.json")"
    J=$(cat "$D/check.json")
    echo "$J" | grep -q "\"built\":$K,\"incomplete\":0,\"lost\":0,\"busy\":0,\"missing\":0,\"twice\":0" ||
        fail "$1: not every event built once: $J"
    echo "$J" | grep -q '"verify_errors":0' || fail "$1: bytes did not verify: $J"
    echo "$J" | grep -q '"alive":true,"built":0,' && fail "$1: a builder built nothing: $J"
    for n in ${TAG}m ${TAG}f0 ${TAG}f1 ${TAG}f2 ${TAG}f3 ${TAG}b0 ${TAG}b1 ${TAG}b2; do
        ! ip -n $n link show eth0 2>/dev/null | grep -q xdp || fail "$1: an XDP program was left in $n"
    done
    retx=$(cat "$D"/fe*.log | sed -n 's/.*retransmitted \([0-9]*\) packets.*/\1/p' | awk '{s += $1} END {print s + 0}')
    drops=$(cat "$D"/*.log | sed -n 's/.* \([0-9]*\) dropped by the kernel.*/\1/p' | awk '{s += $1} END {print s + 0}')
    echo "ok: $1: $retx packets retransmitted, $drops frames dropped by the kernel: $J"
}

run_path packet af_packet
# A build without libxdp is AF_PACKET under auto, silently: ask for AF_XDP by name to tell.
if ip netns exec ${TAG}m "$BIN" evm --backend raw --if eth0 --raw-backend xdp --bind $MGR \
    --builders 1 --frontends 1 --timeout 10ms --quiet 2>&1 | grep -q 'built without libxdp'; then
    echo "AF_XDP not checked: this feroce was built without libxdp"
    exit 0
fi
run_path auto af_xdp
exit 0
