"""Drives a running event-building dashboard (`feroce demo --event-building`, `builder`, `evm`
with --web): /api/state describes builders and no flows, the stream's builder series grow with
plausible values, /api/history holds them, /metrics has the feroce_eb_ families.
usage: eb_check.py PORT OUTDIR TOOL N_BUILDERS (writes OUTDIR/metrics.txt for promtool)."""
import json
import sys
import time
import urllib.request

PORT, OUT, TOOL, NB = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
BASE = "http://127.0.0.1:%d" % PORT
BUILDS = TOOL != "evm"  # the manager sees no built events or latencies


def fail(msg):
    print("FAIL: %s: %s" % (TOOL, msg), file=sys.stderr)
    sys.exit(1)


def get(path):
    with urllib.request.urlopen(BASE + path, timeout=5) as r:
        return r.read()


def state():
    return json.loads(get("/api/state"))


def stream(seconds):
    """The samples the stream sends in `seconds`."""
    out = []
    with urllib.request.urlopen(BASE + "/api/stream", timeout=5) as r:
        end = time.time() + seconds
        while time.time() < end:
            line = r.readline()
            if not line:
                break
            if line.startswith(b"data:"):
                out.append(json.loads(line[5:]))
    return out


def built(s):
    return sum(b["built"] or 0 for b in s["builders"])


def wait_building():
    for _ in range(200):
        st = state()
        s = st["sample"]
        if s and s.get("builders") and (not BUILDS or built(s) > 0):
            return st
        time.sleep(0.1)
    fail("no builder sample with built events in 20 s")


def check_state(st):
    run = st["run"]
    if run["tool"] != TOOL or run["builders"] != NB or run["flows"] != 0:
        fail("/api/state run: %r" % run)
    if len(st["sample"]["builders"]) != NB:
        fail("builders in the sample: %r" % st["sample"])


def check_stream():
    samples = stream(1.5)
    if len(samples) < 10:
        fail("%d samples in 1.5 s (20 a second expected)" % len(samples))
    a, b = samples[0], samples[-1]
    dt = b["t_s"] - a["t_s"]
    live = [i for i in range(NB) if b["builders"][i]["up"]]
    if not live:
        fail("no builder up")
    for i in live:
        x, y = a["builders"][i], b["builders"][i]
        if y["slots"] is not None and not 0 <= y["slots_used"] <= y["slots"]:
            fail("b%d slots: %r" % (i, y))
        if not BUILDS:
            continue
        rate = (y["built"] - x["built"]) / dt
        lat = [s["builders"][i]["latency_p50_s"] for s in samples]
        lat = [v for v in lat if v is not None]
        # an event whose fragments all came in one batch of the builder's loop has 0 latency
        if not rate > 0 or not lat or not all(0 <= v < 10 for v in lat) or not max(lat) > 0:
            fail("b%d: %.0f events/s, latency %r" % (i, rate, lat[-5:]))
        p99 = y["latency_p99_s"]
        print("%s: b%d %.0f events/s, latency p50 %.2f ms%s, %s of %s slots" % (
            TOOL, i, rate, lat[-1] * 1e3, "" if p99 is None else " p99 %.2f ms" % (p99 * 1e3),
            y["slots_used"], y["slots"]))
    print("%s: %d samples in %.1f s, builders up: %s, busy %s" % (
        TOOL, len(samples), dt, live, b.get("busy_events")))


def check_history():
    h = json.loads(get("/api/history"))["samples"]
    if len(h) < 20 or any(len(s.get("builders", [])) != NB for s in h):
        fail("/api/history: %d samples, builders %r" % (len(h), h[-1].get("builders")))


def check_metrics():
    m = get("/metrics").decode()
    open(OUT + "/metrics.txt", "w").write(m)
    need = ["feroce_eb_builder_up{builder=", "feroce_eb_slots_used{builder="]
    if BUILDS:
        need += ["feroce_eb_built_events_total{builder=", "feroce_eb_build_latency_p50_seconds"]
    for n in need:
        if n not in m:
            fail("/metrics lacks %s" % n)


st = wait_building()
check_state(st)
check_stream()
check_history()
check_metrics()
print("%s: event-building dashboard: ok" % TOOL)
