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

run_recv() { # name, extra options...
    name=$1
    shift
    "$BIN" recv --bind $HOST --slots 4 --msg-size 4K --count $COUNT --timeout 90s --interval 0 \
        --json "$@" >"$D/$name.json" 2>"$D/$name.err" &
    rp=$!
    peak_rss $rp >"$D/$name.rss" &
    mp=$!
    wait $rp || { echo "feroce recv ($name) failed"; head -c 3000 "$D/$name.json";
                  cat "$D/$name.err"; exit 1; }
    wait $mp
}

T0=$(date +%s.%N)
run_recv one --fe "$(fe_addr 0)",qps=1
# shellcheck disable=SC2086
run_recv all $FES
T1=$(date +%s.%N)
# shellcheck disable=SC2086
run_recv slow $FES --consume-rate 40Mbps --rnr-timer 14
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
