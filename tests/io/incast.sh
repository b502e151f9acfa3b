#!/bin/sh
# The end-to-end incast on loopback (feroce demo, real sockets): 3 senders with DCQCN into an
# ECN-marking bottleneck. Checks: shares within 10 % of each other, aggregate >= 90 % of the
# bottleneck, every byte verified, no work request lost, DCQCN keeps the queue well below what
# the senders' windows would fill; then the same with 2 % random loss: still everything
# verified and no QP in error.
# The bottleneck is 1 Gb/s when one core here carries >= 1.6 Gb/s through the emulated fabric
# (enough headroom, measured in the optimised build); on a slower (or busy, or sanitizer) build
# it is scaled down with 2.5 x headroom and the same ratios are asserted. (Shares 10-22 % apart
# at 0.5 Gb/s, in gcc and sanitizer builds alike, came from DCQCN's increase timer, which the
# demo used to scale to 6 ms there: with it at most 1.5 ms they stay within ~5 %.)
# Functional checks must hold on every run; the timing-dependent ones (shares, aggregate, queue)
# get a second run when the first misses them, and fail if that one misses them too.
set -eu
BIN=$1
PY=/usr/bin/python3
DUR=${FEROCE_INCAST_SECONDS:-10}
# loopback addresses of this run only: concurrent test runs must not collide
N1=$((100 + $$ % 100))
N2=$((($$ / 100) % 83))
cap=$("$BIN" demo --probe --json --base 127.$N1.$((N2 * 3)).0 | $PY -c 'import json,sys; print(json.load(sys.stdin)["capacity_gbps"])')
headroom() { $PY -c "print(1.6 if $1 >= 1e9 else 2.5)"; }
rate=$($PY -c "
c = float('$cap')
for r in (1e9, 5e8, 2e8, 1e8):
    if r * (1.6 if r >= 1e9 else 2.5) <= c * 1e9: print(int(r)); break
else: print(int(5e7))")
echo "one core carries $cap Gb/s here: bottleneck $rate b/s"
[ "$rate" = 1000000000 ] || echo "NOTE: scaled down from 1 Gb/s (slow or busy machine)"

incast() {
    out=$("$BIN" demo --rate "$rate" --duration "${DUR}s" --json --base 127.$N1.$((N2 * 3 + 1)).0) || return 1
    echo "$out"
    $PY - "$out" "$rate" <<'PYEOF'
import json, sys
d = json.loads(sys.argv[1]); rate = float(sys.argv[2])
g = [f['gbps'] for f in d['flows']]
assert len(g) == 3, g
spread = (max(g) - min(g)) / max(g)
agg = d['aggregate_gbps'] * 1e9 / rate
print('shares %s Gb/s, spread %.1f %%, aggregate %.1f %% of the bottleneck, Jain %.4f'
      % (['%.3f' % x for x in g], 100 * spread, 100 * agg, d['jain']))
print('queue mean %d KiB of %d KiB of windows; %d CE marks' % (d['qavg_bytes'] // 1024, d['windows_bytes'] // 1024, d['marked']))
assert d['errors'] == 0 and d['verified_bytes'] > 0, 'verification'
assert d['lost_wrs'] == 0, 'lost work requests'
assert not d['qp_error'], 'a QP failed'
assert d['drops_full'] == 0, 'tail drops'
for f in d['flows']:
    assert f['msgs'] == f['posted'] == f['sent_msgs'], f   # every WR completed on both sides
    assert f['cnps'] > 0, 'no CNP reached a sender'
assert d['marked'] > 0
# timing-dependent: the machine must give the one thread its core in time
if spread > 0.10: print('shares differ by more than 10 %'); sys.exit(2)
if agg < 0.90: print('aggregate below 90 % of the bottleneck'); sys.exit(2)
if d['qavg_bytes'] >= 0.5 * d['windows_bytes']: print('DCQCN did not keep the queue short'); sys.exit(2)
PYEOF
}
set +e
incast
rc=$?
if [ $rc = 2 ]; then
    echo "retrying once: a timing-dependent criterion was missed (busy machine?)"
    incast
    rc=$?
fi
if [ $rc = 2 ]; then
    # Not enforced when one core does not carry the headroom times the bottleneck: the machine
    # got busier than when the rate was chosen, or was already too busy then for the lowest
    # rate (verification and lost requests were checked).
    cap2=$("$BIN" demo --probe --json --base 127.$N1.$((N2 * 3)).0 | $PY -c 'import json,sys; print(json.load(sys.stdin)["capacity_gbps"])')
    if [ "$($PY -c "print(int(min(float('$cap'), float('$cap2')) * 1e9 < $(headroom "$rate") * $rate))")" = 1 ]; then
        echo "NOTE: timing criteria not enforced: this machine is busy (one core carried $cap Gb/s, now $cap2 Gb/s)"
        rc=0
    fi
fi
set -e
[ $rc = 0 ] || exit 1

out=$("$BIN" demo --rate "$rate" --duration "${DUR}s" --loss 0.02 --json --base 127.$N1.$((N2 * 3 + 2)).0)
echo "$out"
$PY - "$out" <<'PYEOF'
import json, sys
d = json.loads(sys.argv[1])
print('with 2 %% loss: %d injected drops, %d retransmitted packets, %d bytes verified'
      % (d['drops_loss'], d['retx_pkts'], d['verified_bytes']))
assert d['drops_loss'] > 0 and d['retx_pkts'] > 0
assert d['errors'] == 0 and d['verified_bytes'] > 0, 'verification'
assert d['lost_wrs'] == 0, 'lost work requests'
assert not d['qp_error'], 'a QP failed'
for f in d['flows']:
    assert f['msgs'] == f['posted'] == f['sent_msgs'], f
PYEOF
