#!/bin/sh
# Event building across network namespaces: 4 front-ends, 3 builders and the event manager,
# each a separate process in its own namespace, joined by veth pairs to a bridge this test
# creates (availability policy, UDP backend on kernel addresses). Builder 1 is killed with
# SIGKILL mid-run. The accounting must hold (feroce eb-check): nothing missing, nothing twice,
# the lost events all the dead builder's, the other builders' events all built, every
# recorded byte verifies, and each front-end's report (--eb-report) agrees with the records:
# every fragment it sent to a live builder recorded there, the others with the dead one or
# dropped for it. With 256 slots the dead builder's credits (S - reserve) exceed a
# front-end's queue to it (64 fragments), so that queue fills and holds the front-end's trigger,
# and with it the fragments for the live builders, until the front-end declares the builder
# down (silent for --builder-timeout, 150 ms here) and drops its fragments: no front-end's
# trigger may be held longer than MAX_STALL_MS, the detection and what it holds up elsewhere
# (waiting instead for the QP's retries to give up held it 500 to 600 ms). The builders' event
# timeout (1 s) outlasts that: the live builders' events stay complete. Needs root (skipped otherwise, or where namespaces cannot be made);
# the namespaces are removed on exit, failure included, and every process started is killed.
set -u
BIN=$1
K=${2:-12000}
TAG=eb$$
. "$(dirname "$0")/netns_lib.sh"
netns_test_begin 9000
netns_attach ${TAG}m 9000 addr 233 || fail "namespace setup" # 10.233.0.1
for k in 0 1 2 3; do netns_attach ${TAG}f$k 9000 addr 233 || fail "namespace setup"; done # .2 .. .5
for b in 0 1 2; do netns_attach ${TAG}b$b 9000 addr 233 || fail "namespace setup"; done   # .6 .. .8
MGR=10.233.0.1:17200
FES=10.233.0.2,10.233.0.3,10.233.0.4,10.233.0.5
SIZES=512-4K
MAX_STALL_MS=350
ip netns exec ${TAG}m "$BIN" evm --builders 3 --frontends 4 --bind $MGR --events $K \
    --record "$D/asg.bin" --interval 0 --slots 256 >"$D/evm.log" 2>&1 &
PIDS="$PIDS $!"
for k in 0 1 2 3; do
    ip netns exec ${TAG}f$k "$BIN" send --eb-source $k --eb-builders 3 --events $K \
        --trigger-hz 6000 --bind 10.233.0.$((k + 2)) --frag-bytes $SIZES --manager $MGR \
        --timeout 90s --builder-timeout 150ms --json --eb-report "$D/fe$k.rep" >"$D/fe$k.log" 2>&1 &
    PIDS="$PIDS $!"
done
for b in 0 1 2; do
    ip netns exec ${TAG}b$b "$BIN" builder --id $b --builders 3 --policy availability \
        --manager $MGR --fe $FES --bind 10.233.0.$((b + 6)) --events $K --frag-bytes $SIZES \
        --out "$D/b$b.dat" --slots 256 --event-timeout 1s --timeout 90s --interval 0 >"$D/b$b.log" 2>&1 &
    eval "B$b=$!"
    PIDS="$PIDS $!"
done
# mid-run: once builder 1 has recorded some events
i=0
while [ $i -lt 300 ]; do
    [ "$(stat -c %s "$D/b1.dat.idx" 2>/dev/null || echo 0)" -gt 16000 ] && break
    sleep 0.02
    i=$((i + 1))
done
kill -9 $B1 || fail "builder 1 ended before it could be killed"
rc=0
for p in $PIDS; do
    [ "$p" = "$B1" ] && { wait "$p" 2>/dev/null; continue; }
    wait "$p" || rc=1
done
PIDS=
[ $rc = 0 ] || fail "a process other than the killed builder failed"
"$BIN" eb-check --events $K --sources 4 --policy availability --assignments "$D/asg.bin" \
    --frag-bytes $SIZES --builder "$D/b0.dat" --builder "$D/b1.dat" --builder "$D/b2.dat" \
    --report "$D/fe0.rep" --report "$D/fe1.rep" --report "$D/fe2.rep" --report "$D/fe3.rep" \
    --json >"$D/check.json" || fail "eb-check: $(cat "$D/check.json")"
J=$(cat "$D/check.json")
echo "$J" | grep -q '"missing":0,"twice":0' || fail "missing or twice: $J"
echo "$J" | grep -q '"verify_errors":0' || fail "bytes did not verify: $J"
echo "$J" | grep -q '{"builder":1,"alive":false' || fail "builder 1 not seen dead: $J"
echo "$J" | grep -Eq '"builder":[02],"alive":true,"built":[0-9]+,"incomplete":0,"skipped":0,"lost":0' ||
    fail "a surviving builder lost or left events incomplete: $J"
lost=$(echo "$J" | sed 's/.*"lost":\([0-9]*\),"busy".*/\1/')
lost1=$(echo "$J" | sed 's/.*"builder":1,[^}]*"lost":\([0-9]*\)}.*/\1/')
[ "$lost" = "$lost1" ] || fail "lost events not all the dead builder's: $J"
echo "$J" | grep -q '"source_errors":0,' || fail "a front-end's report disagrees: $J"
n=$(echo "$J" | grep -o "\"triggered\":$K,\"sent\":[0-9]*,\"received\":[0-9]*,\"unreceived\":0," | wc -l)
[ "$n" = 4 ] || fail "a front-end's fragment to a live builder went unrecorded: $J"
for k in 0 1 2 3; do
    stall=$(sed -n 's/.*"max_stall_ns":\([0-9]*\).*/\1/p' "$D/fe$k.log")
    [ -n "$stall" ] || fail "front-end $k: no summary"
    [ "$stall" -le $((MAX_STALL_MS * 1000000)) ] ||
        fail "front-end $k held its trigger $((stall / 1000000)) ms (over $MAX_STALL_MS ms)"
    echo "front-end $k: longest hold $((stall / 1000000)) ms"
done
echo "ok: $J"
exit 0
