#!/bin/sh
# A process that cannot open its socket says which address and why, and exits non-zero: DAQ
# scripts start dozens of them and the reason must be in the log, not "I/O error".
# - feroce recv, then feroce builder, on the address:port a running feroce recv holds:
#   "address already in use"
# - feroce recv and feroce send on an address this host does not have (192.0.2.1, TEST-NET-1):
#   "cannot assign requested address"
# - the raw backend on an interface that does not exist: "no such interface"
# - a CPU that does not exist: the event loop says which CPU
# - feroce sim --web on the address:port the running recv's dashboard holds, and on 192.0.2.1
set -u
BIN=$1
D=$(mktemp -d)
HOLDER=
cleanup() {
    [ -n "$HOLDER" ] && kill -9 "$HOLDER" 2>/dev/null && wait "$HOLDER" 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# an address and port of this run's own (127.250-254.x.1, beside the ranges of the other
# loopback tests), so parallel runs on the host do not collide
A=127.$((250 + $$ % 5)).$(($$ / 5 % 250 + 1)).1
P=$((20000 + $$ % 20000))
fail() {
    echo "FAIL: $*"
    for f in "$D"/*.log; do echo "== $f"; tail -5 "$f"; done
    exit 1
}

# expect NAME TEXT CMD...: CMD exits non-zero within 10 s and its stderr has TEXT
expect() {
    name=$1
    text=$2
    shift 2
    timeout 10 "$@" >"$D/$name.out" 2>"$D/$name.log"
    rc=$?
    [ $rc -ne 0 ] || fail "$name: exit code 0"
    [ $rc -ne 124 ] || fail "$name: still running after 10 s (it opened?)"
    grep -qF "$text" "$D/$name.log" || fail "$name: stderr lacks '$text'"
    echo "ok: $name: $(head -1 "$D/$name.log")"
}

W=$((P + 2)) # the holder's dashboard
"$BIN" recv --fe $A:17185 --bind $A:$P --duration 60s --timeout 60s --quiet --web $A:$W \
    >"$D/holder.out" 2>"$D/holder.log" &
HOLDER=$!
i=0
until ss -Huan 2>/dev/null | grep -qF " $A:$P " && ss -Htln 2>/dev/null | grep -qF " $A:$W "; do
    i=$((i + 1))
    [ $i -lt 100 ] || fail "the first recv never bound $A:$P"
    kill -0 $HOLDER 2>/dev/null || fail "the first recv exited"
    command -v ss >/dev/null || { sleep 2; break; } # no ss: give it time
    sleep 0.1
done

expect recv_in_use "feroce recv: cannot open the data socket on $A:$P: address already in use" \
    "$BIN" recv --fe $A:17185 --bind $A:$P --duration 1s --quiet
expect builder_in_use "feroce builder: cannot open the data socket on $A:$P: address already in use" \
    "$BIN" builder --id 0 --builders 1 --policy round-robin --fe $A --bind $A:$P --events 1 \
    --out "$D/b.dat" --interval 0
expect recv_not_here "feroce recv: cannot open the data socket on 192.0.2.1:$P: cannot assign requested address (not an address of this host)" \
    "$BIN" recv --fe $A:17185 --bind 192.0.2.1:$P --duration 1s --quiet
expect send_not_here "feroce send: cannot open the data socket on 192.0.2.1:4791: cannot assign requested address" \
    "$BIN" send --bind 192.0.2.1 --duration 1s --quiet
expect raw_no_if "feroce recv: cannot open the data interface fe-none0: no such interface" \
    "$BIN" recv --backend raw --if fe-none0 --bind 10.0.0.1 --fe 10.0.0.2 --duration 1s --quiet
expect no_cpu "feroce recv: event loop: CPU 1000 is not one this process may run on" \
    "$BIN" recv --fe $A:17185 --bind $A:$((P + 1)) --cpu 1000 --duration 1s --quiet
expect web_in_use "feroce sim: --web $A:$W: cannot listen there: address already in use" \
    "$BIN" sim advcam-dcqcn --set flow.size=1MB --no-progress --web $A:$W
expect web_not_here "feroce sim: --web 192.0.2.1:$W: cannot listen there: cannot assign requested address" \
    "$BIN" sim advcam-dcqcn --set flow.size=1MB --no-progress --web 192.0.2.1:$W
kill -0 $HOLDER 2>/dev/null || fail "the first recv did not survive the others"
echo "PASS"
