#!/bin/sh
# Event building on loopback: 4 front-ends (feroce send --eb-source), 3 builders (feroce
# builder) and, for the availability policy, the event manager (feroce evm), each its own
# process on its own loopback address. Both policies: every triggered event is built once, at
# the builder it was assigned to, and every recorded byte verifies (feroce eb-check); each
# front-end's report (--eb-report) agrees with the builders' records: every fragment it sent
# recorded, none dropped, none busy.
# Then round-robin with builder 2 never started: the front-ends start without it after
# --ring-timeout (2 s, from the first ring) and drop its events; builders 0 and 1 build every
# event of theirs, eb-check counts builder 2's events lost and the front-ends' drops agree.
# Then round-robin with builder 2 started 3 s after the others: the front-ends start without
# it, and when its ring comes it joins at an event E0 all of them agree on (JOIN/START): its
# events before E0 are lost (dropped by every front-end), from E0 on it builds every one of its
# events, and it ends with the front-ends.
# Then the join's other paths, builder 2 again late: a front-end that learns E0 only after its
# trigger passed it (its first STARTs ignored, test hook FEROCE_EB_IGNORE_START: resent every
# 100 ms), and a mixed start (two front-ends took builder 2's ring before they started, two
# started without it): the accounting closes, the events a front-end skipped incomplete, never
# missing or twice.
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
# addresses of this run's own (127.200-249.x.y, beside the 127.100-199 of the other loopback
# tests): another run of this test on the host, a second build's ctest, must not answer ours
NET=127.$((200 + ($$ % 25) * 2))
FES=$NET.1.1,$NET.1.2,$NET.1.3,$NET.1.4
SIZES=512-4K
fail() {
    echo "FAIL: $*"
    for f in "$D"/*.log; do echo "== $f"; tail -5 "$f"; done
    exit 1
}

# The builders' event timeout: an event still incomplete this long after its first fragment is
# given up. The ACK timeouts that a loaded machine (a sanitizer build on a shared host) causes
# delay fragments by tens of ms, and the test only checks that everything is built, never how
# fast: so a timeout far above any such delay, for every run.
EVENT_TIMEOUT=5s

start_builders() { # policy, manager option, builder ids...
    sp=$1
    sm=$2
    shift 2
    for b in "$@"; do
        "$BIN" builder --id $b --builders 3 --policy "$sp" $sm --fe $FES \
            --bind $NET.2.$((b + 1)) --events $K --frag-bytes $SIZES --out "$D/b$b.dat" \
            --event-timeout $EVENT_TIMEOUT --timeout 60s --interval 0 >"$D/b$b.log" 2>&1 &
        PIDS="$PIDS $!"
    done
}

# Front-ends 0-3 on $NET.SUBNET.(k+1): EVENTS at HZ, OPTIONS, then front-end k's own
# environment FEENVk and options FEOPTk where a case sets them.
start_front_ends() { # subnet, events, hz, timeout, options...
    fs=$1
    fn=$2
    fh=$3
    ft=$4
    shift 4
    for k in 0 1 2 3; do
        eval "fenv=\${FEENV$k:-} fopt=\${FEOPT$k:-}"
        # shellcheck disable=SC2086 # fenv and fopt are lists
        env $fenv "$BIN" send --eb-source $k --eb-builders 3 --events $fn --trigger-hz $fh \
            --bind $NET.$fs.$((k + 1)) --frag-bytes $SIZES --timeout $ft "$@" $fopt \
            --eb-report "$D/fe$k.rep" >"$D/fe$k.log" 2>&1 &
        PIDS="$PIDS $!"
    done
}

# eb-check of the three builders' records and the four front-ends' reports, into check.json.
check_all() { # case, events, policy, options...
    cn=$1
    ce=$2
    cp=$3
    shift 3
    "$BIN" eb-check --events $ce --sources 4 --policy "$cp" "$@" --frag-bytes $SIZES \
        --builder "$D/b0.dat" --builder "$D/b1.dat" --builder "$D/b2.dat" --report "$D/fe0.rep" \
        --report "$D/fe1.rep" --report "$D/fe2.rep" --report "$D/fe3.rep" --json >"$D/check.json" ||
        fail "$cn: eb-check: $(cat "$D/check.json")"
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
    # shellcheck disable=SC2086 # mgr is an option and its value, or nothing
    start_front_ends 1 $K 10000 60s $mgr
    start_builders "$pol" "$mgr" 0 1 2
    for p in $PIDS; do wait "$p" || fail "$pol: a process failed"; done
    PIDS=
    asg=
    [ "$pol" = availability ] && asg="--assignments $D/asg.bin"
    # shellcheck disable=SC2086 # asg is an option and its value, or nothing
    check_all "$pol" $K "$pol" $asg
    grep -q "\"built\":$K,\"incomplete\":0,\"lost\":0,\"busy\":0,\"missing\":0,\"twice\":0" \
        "$D/check.json" || fail "$pol: not every event built: $(cat "$D/check.json")"
    grep -q '"verify_errors":0' "$D/check.json" || fail "$pol: bytes did not verify"
    grep -q '"alive":true,"built":0,' "$D/check.json" && fail "$pol: a builder built nothing"
    grep -q '"source_errors":0,' "$D/check.json" || fail "$pol: a front-end's report disagrees"
    n=$(grep -o "\"triggered\":$K,\"sent\":$K,\"received\":$K,\"unreceived\":0,\"at_dead\":0,\"dropped\":0,\"undeliverable\":0,\"src_busy\":0,\"errors\":0}" \
        "$D/check.json" | wc -l)
    [ "$n" = 4 ] || fail "$pol: not every front-end's $K fragments sent and recorded"
    echo "ok: $pol: $(cat "$D/check.json")"
    tampered_report_fails "$asg"
}

# A front-end's report that says 5 of its fragments to builder 0 were dropped rather than sent
# (its own books still close) disagrees with builder 0's record: eb-check must fail.
tampered_report_fails() { # the assignments option
    command -v python3 >/dev/null 2>&1 || return 0
    python3 -c 'import struct,sys
b=bytearray(open(sys.argv[1],"rb").read())
s,d=struct.unpack_from(">QQ",b,32)
struct.pack_into(">QQ",b,32,s-5,d+5)
open(sys.argv[1],"wb").write(b)' "$D/fe2.rep" || fail "cannot tamper with a report"
    if "$BIN" eb-check --events $K --sources 4 --policy "$pol" $1 --frag-bytes $SIZES \
        --builder "$D/b0.dat" --builder "$D/b1.dat" --builder "$D/b2.dat" --report "$D/fe2.rep" \
        --json >"$D/tampered.json"; then
        fail "$pol: eb-check took a report that disagrees with the records"
    fi
    grep -q '"source_errors":1,' "$D/tampered.json" || fail "$pol: $(cat "$D/tampered.json")"
}

# Builder 2 never starts. Before front-ends started without a builder whose ring had not
# arrived, they waited for it until their --timeout (10 s here, which bounds the case) and failed.
missing_builder() {
    # addresses apart from the cases above: their builder 2 must not answer these front-ends
    NET=127.$((${NET#127.} + 1))
    FES=$NET.1.1,$NET.1.2,$NET.1.3,$NET.1.4
    rm -f "$D"/*.dat "$D"/*.idx "$D"/*.done "$D"/*.rep "$D"/*.log
    PIDS=
    start_front_ends 1 $K 10000 10s
    start_builders round-robin "" 0 1
    for p in $PIDS; do wait "$p" || fail "missing builder: a process failed"; done
    PIDS=
    for k in 0 1 2 3; do
        grep -q "starting without builder 2" "$D/fe$k.log" ||
            fail "missing builder: front-end $k did not say it started without builder 2"
    done
    check_all "missing builder" $K round-robin
    lost=$((K / 3))
    built=$((K - lost))
    grep -q "\"built\":$built,\"incomplete\":0,\"lost\":$lost,\"busy\":0,\"missing\":0,\"twice\":0" \
        "$D/check.json" || fail "missing builder: $(cat "$D/check.json")"
    grep -q '{"builder":2,"alive":false,"built":0,' "$D/check.json" ||
        fail "missing builder: builder 2 not seen missing: $(cat "$D/check.json")"
    grep -q '"source_errors":0,' "$D/check.json" || fail "missing builder: reports disagree"
    n=$(grep -o "\"dropped\":$lost,\"undeliverable\":0,\"src_busy\":0,\"errors\":0}" \
        "$D/check.json" | wc -l)
    [ "$n" = 4 ] || fail "missing builder: not every front-end dropped builder 2's $lost events"
    echo "ok: missing builder: $(cat "$D/check.json")"
}

# Builder 2 starts 3 s after the others: before JOIN/START it stayed down for the run, waited
# for its events from 0 until its --timeout (20 s here, which bounds the case) and failed, and
# eb-check found its events missing.
late_builder() {
    # addresses of its own: the cases above must not answer these front-ends
    FES=$NET.4.1,$NET.4.2,$NET.4.3,$NET.4.4
    KL=20000 # 4 s at 5 kHz: the late builder comes while the front-ends trigger
    rm -f "$D"/*.dat "$D"/*.idx "$D"/*.done "$D"/*.rep "$D"/*.log
    PIDS=
    start_front_ends 4 $KL 5000 30s
    for b in 0 1 2; do
        [ $b = 2 ] && sleep 3
        "$BIN" builder --id $b --builders 3 --policy round-robin --fe $FES \
            --bind $NET.5.$((b + 1)) --events $KL --frag-bytes $SIZES --out "$D/b$b.dat" \
            --event-timeout $EVENT_TIMEOUT --timeout 20s --interval 0 >"$D/b$b.log" 2>&1 &
        PIDS="$PIDS $!"
    done
    for p in $PIDS; do wait "$p" || fail "late builder: a process failed"; done
    PIDS=
    e0=$(grep -o '"first_event":[0-9]*' "$D/b2.dat.done" | cut -d: -f2)
    [ -n "$e0" ] && [ "$e0" -gt 2 ] && [ $((e0 % 3)) = 2 ] && [ "$e0" -lt $KL ] ||
        fail "late builder: its ring did not start at an event of its own: '$e0'"
    check_all "late builder" $KL round-robin
    lost=$(((e0 - 2) / 3))
    # a front-end that passed E0 before its START came dropped some of builder 2's events after
    # E0: incomplete there, and said so
    incomplete=0
    grep -q "passed already" "$D"/fe*.log && incomplete='[0-9]*'
    grep -q "\"incomplete\":$incomplete,\"lost\":$lost,\"busy\":0,\"missing\":0,\"twice\":0" \
        "$D/check.json" || fail "late builder: $(cat "$D/check.json")"
    grep -q "{\"builder\":2,\"alive\":true,\"built\":[1-9][0-9]*,[^}]*\"lost\":$lost}\],\"first_events\":\[0,0,$e0\]" \
        "$D/check.json" || fail "late builder: builder 2 did not build from $e0: $(cat "$D/check.json")"
    grep -q '"source_errors":0,' "$D/check.json" || fail "late builder: reports disagree"
    grep -q '"verify_errors":0' "$D/check.json" || fail "late builder: bytes did not verify"
    echo "ok: late builder (joined at event $e0): $(cat "$D/check.json")"
}

# The join's paths late_builder does not reach. Builder 2 starts DELAY after the others;
# front-end k runs with the environment FEENVk and the options FEOPTk; builder 2 gives up an
# event after 1 s (the events a front-end skipped are incomplete only once they time out).
join_run() { # case, delay
    FES=$NET.$JNET.1,$NET.$JNET.2,$NET.$JNET.3,$NET.$JNET.4
    KJ=12000 # 2.4 s at 5 kHz
    rm -f "$D"/*.dat "$D"/*.idx "$D"/*.done "$D"/*.rep "$D"/*.log
    PIDS=
    start_front_ends $JNET $KJ 5000 20s
    for b in 0 1 2; do
        et=$EVENT_TIMEOUT
        [ $b = 2 ] && sleep "$2" && et=1s
        "$BIN" builder --id $b --builders 3 --policy round-robin --fe $FES \
            --bind $NET.$((JNET + 1)).$((b + 1)) --events $KJ --frag-bytes $SIZES \
            --out "$D/b$b.dat" --event-timeout $et --timeout 20s --interval 0 >"$D/b$b.log" 2>&1 &
        PIDS="$PIDS $!"
    done
    for p in $PIDS; do wait "$p" || fail "$1: a process failed"; done
    PIDS=
    e0=$(grep -o '"first_event":[0-9]*' "$D/b2.dat.done" | cut -d: -f2)
    [ -n "$e0" ] && [ $((e0 % 3)) = 2 ] && [ "$e0" -lt $KJ ] ||
        fail "$1: builder 2's ring did not start at an event of its own: '$e0'"
    check_all "$1" $KJ round-robin
    grep -q '"missing":0,"twice":0' "$D/check.json" || fail "$1: $(cat "$D/check.json")"
    grep -q '"source_errors":0,' "$D/check.json" || fail "$1: reports disagree"
    grep -q '"verify_errors":0' "$D/check.json" || fail "$1: bytes did not verify"
    # Builders 0 and 1 build all theirs; builder 2 loses its events before E0, and an event of
    # its is incomplete when a front-end skipped it: each front-end drops a prefix of builder
    # 2's events (the lost ones, then those it passed before START), so builder 2's incomplete
    # events are the longest prefix beyond the lost.
    lost=$(((e0 - 2) / 3))
    maxdrop=0
    for d in $(grep -o '"dropped":[0-9]*' "$D/check.json" | cut -d: -f2); do
        [ "$d" -gt $maxdrop ] && maxdrop=$d
    done
    for b in 0 1; do
        grep -q "{\"builder\":$b,\"alive\":true,\"built\":[0-9]*,\"incomplete\":0,\"skipped\":0,\"lost\":0}" \
            "$D/check.json" || fail "$1: builder $b did not build all its events: $(cat "$D/check.json")"
    done
    grep -q "{\"builder\":2,\"alive\":true,\"built\":[1-9][0-9]*,\"incomplete\":$((maxdrop - lost)),[^}]*\"lost\":$lost}\],\"first_events\":\[0,0,$e0\]" \
        "$D/check.json" || fail "$1: builder 2 (E0 $e0, lost $lost, front-ends dropped up to $maxdrop): $(cat "$D/check.json")"
}

# A START that comes after the front-end passed E0: front-end 0 ignores builder 2's first 5
# STARTs (500 ms, twice the join margin), front-end 1 its first 2 (resent). Front-end 0's
# fragments of builder 2 from E0 up to where it learned E0 are dropped and counted, and those
# events incomplete at builder 2. Without the hook nothing here is lost twice: a front-end that
# did not count them (its report) or a builder that did not record them fails eb-check.
start_lost() {
    JNET=6
    FEENV0=FEROCE_EB_IGNORE_START=5 FEENV1=FEROCE_EB_IGNORE_START=2 FEENV2= FEENV3=
    FEOPT0="--ring-timeout 300ms" FEOPT1=$FEOPT0 FEOPT2=$FEOPT0 FEOPT3=$FEOPT0
    join_run "START lost" 1
    grep -q "START 5 ignored" "$D/fe0.log" && grep -q "START 2 ignored" "$D/fe1.log" ||
        fail "START lost: the test hook did not ignore the STARTs"
    grep -q "START 3 ignored" "$D/fe1.log" && fail "START lost: front-end 1 ignored a third START"
    grep -q "builder 2 starts at event $e0 (passed already" "$D/fe0.log" ||
        fail "START lost: front-end 0 did not pass E0 $e0 before its START"
    grep -q "builder 2 starts at event $e0" "$D/fe1.log" || fail "START lost: front-end 1 never took it"
    echo "ok: START lost (E0 $e0, front-end 0 passed it): $(cat "$D/check.json")"
}

# Mixed start: front-ends 0 and 1 start without builder 2 (ring timeout 300 ms), 2 and 3 wait
# for its ring (0: every ring) and so give it every event from its first: its ring must stay
# at its first event (their fragments may already be on the way), and front-ends 0 and 1,
# which passed it, drop the events between (incomplete at builder 2).
mixed_start() {
    JNET=8
    FEENV0= FEENV1= FEENV2= FEENV3=
    FEOPT0="--ring-timeout 300ms" FEOPT1=$FEOPT0 FEOPT2="--ring-timeout 0" FEOPT3=$FEOPT2
    join_run "mixed start" 1
    [ "$e0" = 2 ] || fail "mixed start: builder 2's ring moved to $e0 under on-time front-ends"
    for k in 0 1; do
        grep -q "builder 2's ring arrived after the start" "$D/fe$k.log" ||
            fail "mixed start: front-end $k did not start without builder 2"
    done
    for k in 2 3; do
        grep -q "arrived after the start\|starting without" "$D/fe$k.log" &&
            fail "mixed start: front-end $k started without builder 2"
    done
    echo "ok: mixed start: $(cat "$D/check.json")"
}

# a third argument runs only those cases (e.g. "start_lost mixed_start")
if [ -n "${3:-}" ]; then
    for c in $3; do $c; done
    exit 0
fi
run_policy round-robin
run_policy availability
missing_builder
late_builder
start_lost
mixed_start
exit 0
