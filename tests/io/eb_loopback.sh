#!/bin/sh
# Event building on loopback: 4 front-ends (feroce send --eb-source), 3 builders (feroce
# builder) and, for the availability policy, the event manager (feroce evm), each its own
# process on its own loopback address. Both policies: every triggered event is built once, at
# the builder it was assigned to, and every recorded byte verifies (feroce eb-check).
set -u
BIN=$1
K=${2:-3000}
D=$(mktemp -d)
PIDS=
cleanup() {
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
NET=127.77
FES=$NET.1.1,$NET.1.2,$NET.1.3,$NET.1.4
SIZES=512-4K
fail() {
    echo "FAIL: $*"
    for f in "$D"/*.log; do echo "== $f"; tail -5 "$f"; done
    exit 1
}

run_policy() { # policy
    pol=$1
    PIDS=
    mgr=
    if [ "$pol" = availability ]; then
        "$BIN" evm --builders 3 --frontends 4 --bind $NET.3.1:17200 --events $K \
            --record "$D/asg.bin" --interval 0 >"$D/evm.log" 2>&1 &
        PIDS="$PIDS $!"
        mgr="--manager $NET.3.1:17200"
    fi
    for k in 0 1 2 3; do
        "$BIN" send --eb-source $k --eb-builders 3 --events $K --trigger-hz 10000 \
            --bind $NET.1.$((k + 1)) --frag-bytes $SIZES $mgr --timeout 60s >"$D/fe$k.log" 2>&1 &
        PIDS="$PIDS $!"
    done
    for b in 0 1 2; do
        "$BIN" builder --id $b --builders 3 --policy "$pol" $mgr --fe $FES \
            --bind $NET.2.$((b + 1)) --events $K --frag-bytes $SIZES --out "$D/b$b.dat" \
            --timeout 60s --interval 0 >"$D/b$b.log" 2>&1 &
        PIDS="$PIDS $!"
    done
    for p in $PIDS; do wait "$p" || fail "$pol: a process failed"; done
    PIDS=
    asg=
    [ "$pol" = availability ] && asg="--assignments $D/asg.bin"
    "$BIN" eb-check --events $K --sources 4 --policy "$pol" $asg --frag-bytes $SIZES \
        --builder "$D/b0.dat" --builder "$D/b1.dat" --builder "$D/b2.dat" --json >"$D/check.json" ||
        fail "$pol: eb-check: $(cat "$D/check.json")"
    grep -q "\"built\":$K,\"incomplete\":0,\"lost\":0,\"busy\":0,\"missing\":0,\"twice\":0" \
        "$D/check.json" || fail "$pol: not every event built: $(cat "$D/check.json")"
    grep -q '"verify_errors":0' "$D/check.json" || fail "$pol: bytes did not verify"
    grep -q '"alive":true,"built":0,' "$D/check.json" && fail "$pol: a builder built nothing"
    echo "ok: $pol: $(cat "$D/check.json")"
}

run_policy round-robin
run_policy availability
exit 0
