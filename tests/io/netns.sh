#!/bin/sh
# The incast across network namespaces with the raw Ethernet backend: three front-ends
# (feroce send), an L2 switch with a shaped, ECN-marking bottleneck port (feroce switch) and a
# DAQ receiver (feroce recv), each in its own namespace, joined by veth pairs this test creates.
# Whole frames built by feroce (Ethernet/IPv4/UDP/BTH.../ICRC); ARP, the side channel and the
# data all go through the switch. The interfaces carry no kernel address: feroce answers ARP
# (and ICMP echo, checked first against a kernel that pings a front-end). Then a sender that
# starts before ARP resolved its peer must lose nothing: no retransmission, no timeout.
# Checks as on loopback: shares within 10 %, aggregate >= 90 % of the bottleneck, every byte
# verified, no lost work request. The timing-dependent two get a second run when missed, and are
# not enforced on a machine measured too busy to hold rates across five processes. Needs root (skipped otherwise); all traffic stays in the
# namespaces created here, which are removed on exit, failure included.
set -u
BIN=$1
PY=/usr/bin/python3
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
    echo "SKIP: needs root and iproute2 to create network namespaces"
    exit 77
fi
TAG=fe$$
NS_SW=${TAG}sw
NS_RX=${TAG}rx
D=$(mktemp -d)
PIDS=
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    for n in $NS_SW $NS_RX ${TAG}s1 ${TAG}s2 ${TAG}s3 ${TAG}pg ${TAG}pf; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! ip netns add $NS_SW 2>"$D/err"; then
    echo "SKIP: cannot create network namespaces here: $(cat "$D/err")"
    exit 77
fi
ip netns add $NS_RX || exit 1
setup_ns() { # namespace, its interface name, the switch-side name
    ip link add "$2" netns "$1" type veth peer name "$3" netns $NS_SW || return 1
    ip -n "$1" link set "$2" mtu 9000 up || return 1
    ip -n $NS_SW link set "$3" mtu 9000 up || return 1
    ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
    return 0
}
ip netns exec $NS_SW sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
setup_ns $NS_RX eth0 swr || exit 1
for i in 1 2 3; do
    ip netns add ${TAG}s$i || exit 1
    setup_ns ${TAG}s$i eth0 sw$i || exit 1
done

# First, as a board does: a front-end answers ARP and ICMP echo for its own address. A kernel
# with an address on the other end of a veth pings it.
ip netns add ${TAG}pg || exit 1
ip netns add ${TAG}pf || exit 1
ip link add pg0 netns ${TAG}pg type veth peer name pf0 netns ${TAG}pf || exit 1
ip -n ${TAG}pg addr add 10.232.0.1/24 dev pg0 && ip -n ${TAG}pg link set pg0 up || exit 1
ip -n ${TAG}pf link set pf0 up || exit 1
ip netns exec ${TAG}pf "$BIN" send --backend raw --if pf0 --bind 10.232.0.2 --quiet \
    --interval 0 >"$D/pf.out" 2>&1 &
PF=$!
PIDS="$PIDS $PF"
sleep 0.3
ip netns exec ${TAG}pg $PY - <<'PYEOF' || exit 1
import socket, struct, time
def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(1.0)
got = 0
for seq in range(1, 4):
    payload = b'feroce-ping-%d' % seq
    hdr = struct.pack('!BBHHH', 8, 0, 0, 0x4242, seq)
    pkt = struct.pack('!BBHHH', 8, 0, csum(hdr + payload), 0x4242, seq) + payload
    s.sendto(pkt, ('10.232.0.2', 0))
    end = time.time() + 1.0
    while time.time() < end:
        try:
            data, addr = s.recvfrom(2048)
        except socket.timeout:
            break
        ihl = (data[0] & 15) * 4
        icmp = data[ihl:]
        if addr[0] == '10.232.0.2' and icmp[0] == 0 and struct.unpack('!HH', icmp[4:8]) == (0x4242, seq) \
                and icmp[8:] == payload and csum(icmp) == 0:
            got += 1
            break
print('ICMP echo: %d of 3 answered by the front-end (ARP resolved by the kernel against it)' % got)
assert got == 3
PYEOF
kill $PF 2>/dev/null
wait $PF 2>/dev/null
PIDS=
ip netns del ${TAG}pg
ip netns del ${TAG}pf

# A new peer's first frames arrive: a sender with a manual peer starts before it knows the
# receiver's MAC. Until ARP answers its QP must hold what it would send (frames without a
# destination would be lost and come back only as retransmissions, or after an ACK timeout).
ip netns add ${TAG}pg || exit 1
ip netns add ${TAG}pf || exit 1
ip link add pg0 netns ${TAG}pg type veth peer name pf0 netns ${TAG}pf || exit 1
ip -n ${TAG}pg link set pg0 mtu 9000 up && ip -n ${TAG}pf link set pf0 mtu 9000 up || exit 1
ip netns exec ${TAG}pg "$BIN" recv --backend raw --if pg0 --bind 10.232.0.1 --manual 1 \
    --peer 10.232.0.2 --peer-qpn 256 --psn 0 --rkey 0x1000 --msg-size 4K --count 20 --timeout 20s --json \
    >"$D/arp_recv.json" 2>"$D/arp_recv.err" &
PF=$!
PIDS="$PIDS $PF"
sleep 0.3
ip netns exec ${TAG}pf "$BIN" send --backend raw --if pf0 --bind 10.232.0.2 --peer 10.232.0.1 \
    --peer-qpn 17 --rkey 0x1000 --va 0x100000000 --msg-size 4K --count 20 --line-rate 100Mbps \
    --ack-timeout 1s --json >"$D/arp_send.json" 2>"$D/arp_send.err" ||
    { cat "$D/arp_send.err" "$D/arp_send.json"; exit 1; }
wait $PF || { cat "$D/arp_recv.err" "$D/arp_recv.json"; exit 1; }
PIDS=
ip netns del ${TAG}pg
ip netns del ${TAG}pf
$PY - "$D" <<'PYEOF' || exit 1
import json, sys
s = json.load(open(sys.argv[1] + '/arp_send.json'))['flows'][0]
r = json.load(open(sys.argv[1] + '/arp_recv.json'))['flows'][0]
print('new peer: %d messages verified; sender: %d retransmitted packets, %d timeouts, %d sequence '
      'NAKs' % (r['msgs'], s['retx_pkts'], s['timeouts'], s['seq_naks']))
assert r['msgs'] == s['msgs'] == 20 and r['verify_errors'] == 0 and r['seq_errors'] == 0, (s, r)
assert s['retx_pkts'] == 0 and s['timeouts'] == 0 and s['seq_naks'] == 0, \
    'frames sent before ARP answered were lost'
PYEOF

# The bottleneck: 1 Gb/s when this machine carries it (a third of what one core carries
# through the loopback fabric), else 500 or 200 Mb/s (DCQCN's integer Mb/s steps get coarse
# below); the stream and DCQCN settings are the demo's for that rate.
cap=$("$BIN" demo --probe --json --base 127.$((100 + $$ % 100)).$((($$ / 100) % 250)).0 | $PY -c 'import json,sys; print(json.load(sys.stdin)["capacity_gbps"])')
eval "$($PY - "$cap" <<'PYEOF'
import os, sys
cap = float(sys.argv[1]) * 1e9
rate = next((r for r in (1e9, 5e8) if r <= cap / 3), 2e8)
if os.environ.get('FEROCE_NETNS_RATE'): rate = float(os.environ['FEROCE_NETNS_RATE'])
Bps = rate / 8
msg = 65536
while msg > 4096 and msg > Bps * 0.002: msg //= 2
# Five processes share the cores: each wakes up milliseconds late now and then, so bursts,
# RED thresholds and windows get twice the demo's time (a sender catches up 4 ms at once).
burst = int(min(max(Bps * 0.004, 8192), 262144))
replay = int(max(Bps * 0.016, 4 * msg))
queue = 3 * replay + 64 * 4096
kmin, kmax = int(max(Bps * 0.004, 16384)), int(max(Bps * 0.016, 65536))
r = rate / 1e9
params = 'dce_tcp_rtt=%d,rpg_time_reset=%d,rpg_ai_rate=%d,rpg_hai_rate=%d' % (
    min(max(100 / r, 1), 131071), min(max(3000 / r, 1), 1500), max(5 * r, 1), max(50 * r, 1))
ato = int(50e6 + 2 * queue * 8e9 / rate)
print('RATE=%d MSG=%d BURST=%d REPLAY=%d QUEUE=%d KMIN=%d KMAX=%d PARAMS=%s ATO=%dns'
      % (rate, msg, burst, replay, queue, kmin, kmax, params, ato))
PYEOF
)"
echo "one core carries $cap Gb/s here: bottleneck $RATE b/s, messages $MSG B"
DUR=${FEROCE_NETNS_SECONDS:-10}

run_once() {
    ip netns exec $NS_SW "$BIN" switch --backend raw --if sw1 --if sw2 --if sw3 --if swr \
        --bottleneck swr --rate "$RATE" --queue "$QUEUE" --ecn --kmin "$KMIN" --kmax "$KMAX" \
        --pmax 0.2 --duration $((DUR + 20))s --interval 0 --json >"$D/switch.json" 2>"$D/switch.err" &
    PIDS="$PIDS $!"
    for i in 1 2 3; do
        ip netns exec ${TAG}s$i "$BIN" send --backend raw --if eth0 --bind 10.231.0.$((i + 1)) \
            --once --line-rate "$RATE" --cc dcqcn --param "$PARAMS" --replay "$REPLAY" \
            --burst "$BURST" --ack-timeout "$ATO" --json >"$D/send$i.json" 2>"$D/send$i.err" &
        PIDS="$PIDS $!"
    done
    sleep 0.5
    ip netns exec $NS_RX "$BIN" recv --backend raw --if eth0 --bind 10.231.0.1 \
        --fe 10.231.0.2 --fe 10.231.0.3 --fe 10.231.0.4 --msg-size "$MSG" --duration ${DUR}s \
        --warmup $((DUR / 3))s \
        --timeout $((DUR + 30))s --json >"$D/recv.json" 2>"$D/recv.err"
    rrc=$?
    fail=0
    for i in 1 2 3; do
        p=$(echo $PIDS | cut -d' ' -f$((i + 1)))
        wait "$p" || { echo "sender $i failed:"; cat "$D/send$i.err"; fail=1; }
    done
    kill "$(echo $PIDS | cut -d' ' -f1)" 2>/dev/null
    wait "$(echo $PIDS | cut -d' ' -f1)" 2>/dev/null
    PIDS=
    cat "$D/recv.err" "$D/recv.json" "$D/switch.json"
    [ $rrc = 0 ] || { echo "feroce recv failed ($rrc)"; return 1; }
    [ $fail = 0 ] || return 1
    $PY - "$D" "$RATE" <<'PYEOF'
import json, sys
d, rate = sys.argv[1], float(sys.argv[2])
r = json.load(open(d + '/recv.json'))
sends = [json.load(open('%s/send%d.json' % (d, i))) for i in (1, 2, 3)]
sw = json.load(open(d + '/switch.json'))
flows = r['flows']
assert len(flows) == 3, flows
g = [f['gbps'] for f in flows]
spread = (max(g) - min(g)) / max(g)
agg = sum(g) * 1e9 / rate
bn = [p for p in sw['ports'] if p['name'] == 'swr'][0]
print('shares %s Gb/s, spread %.1f %%, aggregate %.1f %% of the bottleneck; switch: %d CE marks, '
      '%d drops' % (['%.3f' % x for x in g], 100 * spread, 100 * agg, bn['marked'], bn['drops_full']))
for f in flows:
    assert f['verify_errors'] == 0 and f['seq_errors'] == 0 and not f['qp_error'], f
    assert f['msgs'] > 0 and f['side_channel'] == 'closed', f
by_qpn = {s['flows'][0]['peer_qpn']: s['flows'][0] for s in sends}
for f in flows:
    s = by_qpn[f['qpn']]
    assert s['msgs'] == s['posted'] == f['msgs'], (s, f)   # no lost work request
    assert not s['error'], s
assert bn['marked'] > 0, 'no ECN marking at the bottleneck'
print('netns incast: every byte verified, no lost work request')
if spread > 0.10 or agg < 0.90:
    print('shares differ by more than 10 %' if spread > 0.10 else 'aggregate below 90 % of the bottleneck')
    sys.exit(2)
PYEOF
}

# Functional checks must hold on every run; the shares and the aggregate depend on five
# processes getting the cores in time, so a busy machine gets a second run (and fails if the
# second one misses them too).
run_once
rc=$?
if [ $rc = 2 ]; then
    echo "retrying once: the timing-dependent criteria were missed"
    run_once
    rc=$?
fi
if [ $rc = 2 ]; then
    # Five processes that do not get a core for milliseconds at a time cannot hold the rates;
    # what such a machine still proves (every byte, no lost request) was checked above. Busy =
    # one core carried under 1.5 Gb/s before or after the runs (other work came and went).
    cap2=$("$BIN" demo --probe --json --base 127.$((100 + $$ % 100)).$((($$ / 100) % 250)).0 | $PY -c 'import json,sys; print(json.load(sys.stdin)["capacity_gbps"])')
    if [ "$($PY -c "print(int(min(float('$cap'), float('$cap2')) < 1.5))")" = 1 ]; then
        echo "NOTE: shares/aggregate not enforced: this machine is busy (one core carried $cap then $cap2 Gb/s)"
        rc=0
    fi
fi
exit $rc
