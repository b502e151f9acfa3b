#!/bin/sh
# Soak: feroce send -> feroce switch -> feroce recv over loopback, with loss, reordering,
# duplication and corruption injected by the switch, and the sender killed (SIGKILL: a crash or
# a power cycle) partway and started again; the receiver gives the silent connection up and
# opens a new one on the restarted front-end (recv --reconnect), as a DAQ host must.
# Pass: every message the receiver consumed arrived once, in order, byte-verified, on both
# connections; every completion of the second sender is a consumed message and vice versa, and
# every completion the first one reported before its death was consumed; every corrupted packet
# was caught by the ICRC and counted; the resident memory of each process stays flat after its
# warm-up. Prints the figures.
# Usage: soak.sh FEROCE [SECONDS]   30 s by default (the CI run); e.g. 600 for a long soak.
set -eu
BIN=$1
SECS=${2:-30}
PY=/usr/bin/python3
D=$(mktemp -d)
# loopback addresses of this run only: concurrent test runs must not collide
A=$((100 + $$ % 100))
B=$((($$ / 100) % 250))
PFX=127.$A.$B
SEED=$$
# the receiver's data socket ($PFX.1:4791) in /proc/net/udp, whose last column counts the
# datagrams the kernel dropped for want of room: a corrupted packet dropped there never reaches
# the ICRC check
UDP_KEY=$(printf '%02X%02X%02X%02X:12B7' 1 "$B" "$A" 127)
cleanup() {
    for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
    rm -rf "$D"
}
trap cleanup EXIT INT TERM

# VmRSS of each process once a second: "seconds name kB"; the receiver's socket drops
sample_rss() {
    t=0
    while :; do
        awk -v k="$UDP_KEY" '$2 == k {print $NF}' /proc/net/udp >>"$D/drops.txt" 2>/dev/null || true
        for np in $RSS_PROCS; do
            name=${np%%:*}
            pid=${np#*:}
            kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
            [ -n "$kb" ] && echo "$t $name $kb" >>"$D/rss.txt"
        done
        sleep 1
        t=$((t + 1))
        [ -f "$D/rss.procs" ] && RSS_PROCS=$(cat "$D/rss.procs")
    done
}

echo "soak: ${SECS} s, seed $SEED, switch: loss 0.5 %, reorder 0.5 %, dup 0.5 %, corrupt 0.5 %"
"$BIN" switch --port $PFX.100:7001 --to $PFX.1:4791 --loss 0.005 --reorder 0.005 --dup 0.005 \
    --corrupt 0.005 --seed $SEED --interval 0 --json >"$D/switch.json" 2>"$D/switch.err" &
SWPID=$!
PIDS="$SWPID"
# The senders' retransmit timer backs off to 200 ms at most, far below --reconnect: only the
# kill makes a silence the receiver takes for a lost front-end. The first one prints a live
# line every 200 ms: the completions it reported before it was killed.
SEND="--to $PFX.100:7001 --line-rate 500Mbps --ack-timeout 20ms --ack-timeout-max 200ms"
# shellcheck disable=SC2086 # $SEND is a list of options
"$BIN" send --bind $PFX.2 $SEND --interval 200ms >"$D/send1.txt" 2>&1 &
S1=$!
PIDS="$PIDS $S1"
sleep 0.3
"$BIN" recv --bind $PFX.1 --fe $PFX.2 --duration "${SECS}s" --timeout "$((SECS + 120))s" \
    --reconnect 3s --msg-size 16K --json >"$D/recv.json" 2>"$D/recv.err" &
RPID=$!
PIDS="$PIDS $RPID"
RSS_PROCS="switch:$SWPID recv:$RPID send1:$S1"
sample_rss &
SAMPLER=$!
PIDS="$PIDS $SAMPLER"

KILL_AT=$((SECS * 45 / 100))
sleep "$KILL_AT"
kill -KILL "$S1"
wait "$S1" 2>/dev/null || true
echo "sender killed at ${KILL_AT} s; restarting it 1 s later"
sleep 1
echo "switch:$SWPID recv:$RPID" >"$D/rss.procs"
# shellcheck disable=SC2086
"$BIN" send --bind $PFX.2 $SEND --once --json >"$D/send2.json" 2>"$D/send2.err" &
S2=$!
PIDS="$PIDS $S2"
echo "switch:$SWPID recv:$RPID send2:$S2" >"$D/rss.procs"

rc=0
wait "$RPID" || rc=$?
wait "$S2" || { echo "the second sender failed"; cat "$D/send2.err"; rc=1; }
kill "$SAMPLER" 2>/dev/null || true
kill -TERM "$SWPID" # it prints its counters as it exits
wait "$SWPID" || true
if [ $rc != 0 ]; then
    echo "feroce recv exited $rc"
    cat "$D/recv.err" "$D/recv.json" "$D/send2.err"
fi

$PY - "$D" "$rc" <<'PYEOF'
import json, os, re, sys
d, rc = sys.argv[1], int(sys.argv[2])
sw = json.load(open(d + '/switch.json'))['ports'][1]
r = json.load(open(d + '/recv.json'))
rf = r['flows'][0]
s2 = json.load(open(d + '/send2.json'))
s2f = s2['flows'][0]
# the first sender's live lines: completions so far ("msgs N") and retransmissions per second
done1, retx1 = 0, 0
for line in open(d + '/send1.txt'):
    m = re.search(r'retx (\d+) .* msgs (\d+)', line)
    if m:
        retx1 += int(m.group(1))
        done1 = int(m.group(2))
drops = [int(x) for x in open(d + '/drops.txt').read().split()] if os.path.exists(d + '/drops.txt') else []
sock_drops = max(drops) if drops else 0
conn1 = rf['prev_msgs']
conn2 = rf['msgs'] - conn1

print('messages: %d consumed and verified (%d on the first connection, %d on the second), '
      '%.3f GB' % (rf['msgs'], conn1, conn2, rf['bytes'] / 1e9))
print('senders: the first reported %d completions before it was killed, the second %d '
      '(%d posted); retransmitted packets: %d + %d' % (done1, s2f['msgs'], s2f['posted'],
                                                       retx1, s2f['retx_pkts']))
print('injected by the switch: %d drops, %d reordered, %d duplicated, %d corrupted (of %d packets)'
      % (sw['drops_loss'], sw['reordered'], sw['duplicated'], sw['corrupted'], sw['tx_pkts']))
print('detected by the receiver: %d bad ICRC, %d duplicate PSNs, %d out-of-order PSNs, '
      '%d sequence NAKs; %d verify errors, %d sequence errors; %d reconnect(s); '
      '%d datagrams dropped by the kernel at its socket'
      % (rf['bad_icrc'], rf['dup_pkts'], rf['ooo_pkts'], rf['seq_naks'], rf['verify_errors'],
         rf['seq_errors'], rf['reconnects'], sock_drops))

# resident memory: after a warm-up (a fifth of the process's samples, at least 5 s) it may
# not grow by more than max(1 MiB, 2 %)
rss = {}
for line in open(d + '/rss.txt'):
    t, name, kb = line.split()
    rss.setdefault(name, []).append(int(kb))
bad = []
for name in ('switch', 'recv', 'send1', 'send2'):
    v = rss.get(name, [])
    if len(v) < 3:
        print('RSS %-6s: %d samples (too few to judge)' % (name, len(v)))
        continue
    w = min(max(5, len(v) // 5), len(v) - 1)
    base = v[w]
    # The second sender streams only once the receiver has reconnected (--reconnect 3s after
    # the kill, later on a loaded machine): its first samples may be idle, its buffers touched
    # after them. It runs the same code as the first, whose level after its warm-up (over more
    # messages) is the reference it may reach.
    if name == 'send2' and len(rss.get('send1', [])) >= 3:
        base = max(base, max(rss['send1']))
    grow = v[-1] - base
    limit = max(1024, base // 50)
    print('RSS %-6s: start %d KiB, after warm-up (%d s) %d KiB, end %d KiB, max %d KiB: %+d KiB'
          % (name, v[0], w, v[w], v[-1], max(v), grow))
    if grow > limit:
        bad.append('%s grew by %d KiB after its warm-up (limit %d)' % (name, grow, limit))

assert rc == 0 and r['ok'], 'the receiver failed'
assert s2['ok'] and not s2f['error'], s2f
assert rf['verify_errors'] == 0 and rf['seq_errors'] == 0, rf      # once, in order, verified
assert rf['reconnects'] == 1 and not rf['reconnecting'], rf
assert conn1 > 0 and conn2 > 0, (conn1, conn2)
assert s2f['msgs'] == s2f['posted'] == conn2, (s2f, conn2)          # no completion lost or extra
assert done1 <= conn1, (done1, conn1)                              # what it completed arrived
assert sw['drops_loss'] > 0 and sw['reordered'] > 0 and sw['duplicated'] > 0, sw
# every corrupted packet that reached the receiver was caught: all of them, unless the kernel
# dropped some on the way (a loaded machine)
missed = sw['corrupted'] - rf['bad_icrc']
assert sw['corrupted'] > 0 and 0 <= missed <= sock_drops, (sw['corrupted'], rf['bad_icrc'], sock_drops)
assert rf['dup_pkts'] > 0, rf
assert not bad, bad
print('soak passed')
PYEOF
