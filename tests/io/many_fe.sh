#!/bin/sh
# Many front-ends: one feroce recv with N_FE front-ends x 4 QPs (feroce send processes on
# loopback, 127.x addresses), each QP paced so that the whole fits on two shared cores.
#  1. a stream of COUNT messages per QP: every message verified; the receiver's RSS per QP
#     (VmRSS of this receiver minus that of a one-QP receiver, over the extra QPs), aggregate
#     throughput and Jain's fairness over the QPs' rates;
#  2. a slow consumer (--consume-rate) under all of them: RNR NAKs push back, and still no
#     message is lost or repeated and no QP fails.
# usage: many_fe.sh FEROCE [N_FE (256)] [COUNT (20)]
set -eu
BIN=$1
N_FE=${2:-256}
COUNT=${3:-20}
QPS=4
PY=/usr/bin/python3
D=$(mktemp -d)
A=$((100 + $$ % 100))
HOST=127.$A.0.1
PIDS=
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$D"; }
trap cleanup EXIT INT TERM

fe_addr() { echo "127.$A.$((1 + $1 / 200)).$((1 + $1 % 200))"; }

# each QP at 2 Mb/s: 1024 QPs offer at most 2 Gb/s; the receiver takes what one core can
k=0
FES=
while [ $k -lt "$N_FE" ]; do
    a=$(fe_addr $k)
    "$BIN" send --bind "$a" --slots 4 --line-rate 2Mbps --ack-timeout 200ms --interval 0 --quiet \
        >/dev/null 2>"$D/send$k.err" &
    PIDS="$PIDS $!"
    FES="$FES --fe $a,qps=$QPS"
    k=$((k + 1))
done
sleep 1

# samples VmRSS (kB) of a process every 50 ms until it exits; prints the largest
peak_rss() {
    m=0
    while [ -e /proc/$1/status ]; do
        r=$(awk '/^VmRSS/ {print $2}' /proc/$1/status 2>/dev/null || echo 0)
        [ -n "$r" ] && [ "$r" -gt "$m" ] && m=$r
        sleep 0.05
    done
    echo $m
}

run_recv() { # name, timeout, extra options...
    name=$1
    tmo=$2
    shift 2
    "$BIN" recv --bind $HOST --slots 4 --msg-size 4K --count $COUNT --timeout "$tmo" --interval 0 \
        --json "$@" >"$D/$name.json" 2>"$D/$name.err" &
    rp=$!
    peak_rss $rp >"$D/$name.rss" &
    mp=$!
    wait $rp || { echo "feroce recv ($name) failed"; why_failed "$D/$name.json";
                  cat "$D/$name.err"; exit 1; }
    wait $mp
}

# the flows that failed, by cause: the first ones of a report of 1024 flows are most often fine
why_failed() {
    $PY - "$1" "$COUNT" <<'PYEOF' || head -c 3000 "$1"
import collections, json, sys
r, count = json.load(open(sys.argv[1])), int(sys.argv[2])
f = r['flows']
bad = [x for x in f if x['msgs'] != count or x['verify_errors'] or x['seq_errors'] or
       x['qp_error'] or x['side_channel'] == 'failed' or x['reconnecting']]
print('%d of %d flows failed; side channel states %s; refused %s; %.1f s' %
      (len(bad), len(f), dict(collections.Counter(x['side_channel'] for x in f)), r['refused'],
       r['total']['seconds']))
for x in bad[:8]:
    print(json.dumps(x))
PYEOF
}

T0=$(date +%s.%N)
run_recv one 90s --fe "$(fe_addr 0)",qps=1
# shellcheck disable=SC2086
run_recv all 90s $FES
T1=$(date +%s.%N)
# The consumer comes back to a QP every QPS x 4 KiB at 40 Mb/s (0.84 s with 1024 QPs); RNR NAKs
# ask the senders to wait about a quarter of that (IB timer code, 10 us units). A timer of a
# millisecond or so made the 1024 senders retry (and the receiver refuse) hundreds of times per
# message: on a loaded machine the receiver then read its socket too seldom, a sender whose
# retransmissions were all dropped there for 8 s gave its QP up (retry exceeded), and the run
# failed at --timeout with that front-end's messages missing. The consumer alone needs 17 s for
# 1024 x 20 messages; under ASan beside other work the phase took up to 65 s: 150 s to finish.
RNR=$($PY -c 'import sys
t = [65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
     1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152]
want_10us = int(sys.argv[1]) * 4096 * 8 / 40e6 / 4 * 1e5
print(max([c for c in range(1, 32) if t[c] <= want_10us] or [1]))' $((N_FE * QPS)))
# shellcheck disable=SC2086
run_recv slow 150s $FES --consume-rate 40Mbps --rnr-timer "$RNR"
T2=$(date +%s.%N)

$PY - "$D" "$N_FE" "$QPS" "$COUNT" "$T0" "$T1" "$T2" <<'PYEOF'
import json, sys
d, nfe, qps, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n = nfe * qps
rss = lambda name: int(open('%s/%s.rss' % (d, name)).read())
for name in ('all', 'slow'):
    r = json.load(open('%s/%s.json' % (d, name)))
    f = r['flows']
    assert len(f) == n and r['ok'], name
    bad = [x for x in f if x['msgs'] != count or x['verify_errors'] or x['seq_errors'] or
           x['qp_error']]
    assert not bad, '%s: %d flows lost, repeated or failed: %s' % (name, len(bad), bad[:2])
    rates = [x['gbps'] for x in f]
    jain = sum(rates) ** 2 / (len(rates) * sum(v * v for v in rates)) if any(rates) else 0
    secs = r['total']['seconds']
    print('%s: %d QPs on %d front-ends, %d messages each, all verified; %.1f Mb/s aggregate '
          'over %.1f s; Jain fairness %.3f; RNR NAKs %d; duplicates %d' %
          (name, n, nfe, count, r['total']['bytes'] * 8 / secs / 1e6, secs, jain,
           sum(x['rnr_naks'] for x in f), sum(x['dup_pkts'] for x in f)))
    if name == 'slow':
        assert sum(x['rnr_naks'] for x in f) > 0, 'the slow consumer did not push back'
one, allq = rss('one'), rss('all')
print('receiver VmRSS: %d kB with 1 QP, %d kB with %d QPs: %.1f kB per QP (ring 16 KiB incl.)' %
      (one, allq, n, (allq - one) / (n - 1)))
PYEOF
for k in $PIDS; do kill -INT "$k" 2>/dev/null || true; done
PIDS=
