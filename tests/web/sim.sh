#!/bin/sh
# feroce sim --web: the simulation streamed at 0.2 x real time (web_check.py: JSON, SSE, abuse,
# read-only POST; promtool on /metrics), the simulator's results the same as without --web,
# the finished run served whole, the history of a run in 2 parts the same as one thread's; then --replay of the trace it wrote, and a malformed trace
# refused with its line.
set -u
FEROCE=$1
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/dashboard_port.sh"
PROMTOOL=$(command -v promtool || true)
SIM="sim incast3 --no-progress --trace-interval 1ms"
# run_ended SECONDS WHAT: waits for the run started as $pid to say on $T/err that it ended and its
# dashboard stays up; fails (killing it) after SECONDS
run_ended() {
    for _ in $(seq $(($1 * 10))); do
        grep -q "stays up" "$T/err" && return 0
        sleep 0.1
    done
    kill "$pid"
    cat "$T/err"
    fail "$2 did not end"
}
"$FEROCE" $SIM --trace "$T/trace.csv" --web 127.0.0.1:0 --web-speed 0.2 --web-hold 30s \
    >"$T/out" 2>"$T/err" &
pid=$!
dashboard_port "$pid"
$PY "$(dirname "$0")/web_check.py" "$port" "$T" sim || { kill "$pid"; fail "web checks"; }
if [ -n "$PROMTOOL" ]; then
    "$PROMTOOL" check metrics <"$T/metrics.txt" || { kill "$pid"; fail "promtool check metrics"; }
    echo "promtool check metrics: ok"
fi
# the run ends (1.57 s simulated: about 8 s), then the whole of it stays served
run_ended 15 "the run"
$PY - "$port" <<'PYEOF' || { kill "$pid"; fail "finished run"; }
import json, sys, urllib.request
h = json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/history" % sys.argv[1], timeout=10))
s = h["samples"]
t = [x["t_s"] for x in s]
alpha = [f["alpha"] for x in s for f in x["flows"] if f["alpha"] >= 0]
q = max(x["switch"]["q_bytes"] for x in s)
if len(s) < 1000 or t[0] > 0.002 or t[-1] < 1.56 or t != sorted(t):
    sys.exit("history: %d samples, %.4f .. %.4f s" % (len(s), t[0], t[-1]))
if not alpha or max(alpha) > 1 or min(alpha) < 0 or q <= 0:
    sys.exit("implausible: alpha %r, max queue %d" % (alpha[:3], q))
print("finished run: %d samples, %.3f .. %.3f s simulated, alpha in [%.3f, %.3f], queue up to %d B"
      % (len(s), t[0], t[-1], min(alpha), max(alpha), q))
PYEOF
kill -INT "$pid"
wait "$pid" || { cat "$T/err"; fail "sim --web exited $?"; }
"$FEROCE" $SIM >"$T/plain" || fail "sim without --web"
grep -v wall "$T/out" >"$T/a"
grep -v wall "$T/plain" >"$T/b"
cmp -s "$T/a" "$T/b" || { diff "$T/a" "$T/b" | head; fail "--web changed the simulation's results"; }
echo "results identical with and without --web"

# In parts (--threads 2) the dashboard's samples are taken between fe_sim_run calls, every
# part's thread stopped: the history served is the one thread's, byte for byte, here at an
# interval off the 1 us windows.
FT128="$(dirname "$0")/../../bench/fattree-128.yaml"
history_of() { # threads: the finished run's /api/history into $T/hist.$1
    : >"$T/err" # emptied here: the background shell opens it later, and the last run's port is in it
    "$FEROCE" sim "$FT128" --until 150us --trace-interval 7300ns --threads "$1" --no-progress \
        --web 127.0.0.1:0 --web-speed max --web-hold 60s >/dev/null 2>"$T/err" &
    pid=$!
    dashboard_port "$pid"
    run_ended 60 "--threads $1"
    [ "$1" = 1 ] || grep -q "^parallel: $1 parts" "$T/err" || { kill "$pid"; cat "$T/err"; fail "not in parts"; }
    $PY -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(
"http://127.0.0.1:%s/api/history" % sys.argv[1], timeout=10).read())' "$port" >"$T/hist.$1" ||
        { kill "$pid"; fail "--threads $1: history"; }
    kill -INT "$pid"
    wait "$pid" || { cat "$T/err"; fail "--threads $1 --web exited $?"; }
}
history_of 1
history_of 2
[ "$(wc -c <"$T/hist.1")" -gt 10000 ] || fail "history too short: $(head -c 200 "$T/hist.1")"
cmp -s "$T/hist.1" "$T/hist.2" || fail "--web history differs between 1 and 2 threads"
echo "--web in 2 parts: the history of one thread, $(wc -c <"$T/hist.1") bytes"

: >"$T/err"
"$FEROCE" sim --replay "$T/trace.csv" --web 127.0.0.1:0 --web-hold 30s >"$T/out" 2>"$T/err" &
pid=$!
dashboard_port "$pid"
$PY - "$port" <<'PYEOF' || { kill "$pid"; fail "replay"; }
import json, sys, urllib.request
base = "http://127.0.0.1:%s" % sys.argv[1]
st = json.load(urllib.request.urlopen(base + "/api/state", timeout=10))
h = json.load(urllib.request.urlopen(base + "/api/history", timeout=10))["samples"]
rx = sum(f["rx_bytes"] for f in h[-1]["flows"])
if not st["run"]["description"].startswith("replay of") or len(h) < 1000 or abs(rx - 1.8e9) > 0.02e9:
    sys.exit("replay: %r, %d samples, %d bytes" % (st["run"], len(h), rx))
print("replay: %d samples, %.3f GB integrated from the trace's throughput" % (len(h), rx / 1e9))
PYEOF
kill -INT "$pid"
wait "$pid" || fail "replay exited $?"
head -1 "$T/trace.csv" >"$T/bad.csv"
echo "0.000,1,2" >>"$T/bad.csv"
"$FEROCE" sim --replay "$T/bad.csv" --web 127.0.0.1:0 2>"$T/err" && fail "a malformed trace was accepted"
grep -q "bad.csv:2: 3 values where the header has" "$T/err" || { cat "$T/err"; fail "message"; }
cat "$T/err"
