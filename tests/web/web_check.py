"""Drives a running `feroce demo|sim|send|recv|switch --web`: JSON, SSE, 404, 405, a huge
header, garbage, 1000 connections (the demo's rate must not move), and POST /api/params (refused read-only; applied, validated
and marked with `write`).
usage: web_check.py PORT OUTDIR [TOOL [write]] (writes OUTDIR/metrics.txt for promtool)."""
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

PORT = int(sys.argv[1])
OUT = sys.argv[2]
TOOL = sys.argv[3] if len(sys.argv) > 3 else "demo"
WRITE = len(sys.argv) > 4 and sys.argv[4] == "write"
BASE = "http://127.0.0.1:%d" % PORT


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def get(path, timeout=5):
    with urllib.request.urlopen(BASE + path, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read()


def state():
    st, ctype, body = get("/api/state")
    if st != 200 or not ctype.startswith("application/json"):
        fail("/api/state: %d %s" % (st, ctype))
    return json.loads(body)


def moved(f):
    return f["rx_bytes"] if f["rx_bytes"] is not None else f["tx_bytes"]


def rx_total(s):
    return sum(moved(f) for f in s["sample"]["flows"])


def wait_first_sample():
    for _ in range(100):
        s = state()
        if s["sample"] and rx_total(s) > 0:
            return s
        time.sleep(0.1)
    fail("no sample with data in 10 s")


def check_state():
    a = wait_first_sample()
    run = a["run"]
    if run["tool"] != TOOL or run["flows"] != len(a["sample"]["flows"]):
        fail("/api/state run description: %r" % run)
    time.sleep(0.5)
    b = state()
    if rx_total(b) <= rx_total(a) or b["sample"]["seq"] <= a["sample"]["seq"]:
        fail("counters did not grow: %d -> %d" % (rx_total(a), rx_total(b)))
    print("state: rx bytes %d -> %d, seq %d -> %d" % (rx_total(a), rx_total(b),
          a["sample"]["seq"], b["sample"]["seq"]))


def check_params():
    p = json.loads(get("/api/params")[2])
    if p["writable"] != WRITE or not p["qps"] or (not p["qps"][0]["params"] and WRITE):
        fail("/api/params: %r" % p)
    print("params: %d QPs, %d parameters each" % (len(p["qps"]), len(p["qps"][0]["params"])))
    return p


def post(path, body):
    req = urllib.request.Request(BASE + path, data=body.encode(), method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def check_write(p):
    """Read-only: 403. --web-write: a valid change is applied and marked, a bad one refused
    with the command line's message and nothing changed."""
    if not p["qps"][0]["params"]:  # no CC (recv, switch): nothing to set
        st, text = post("/api/params", "flow=1&set=x=1")
        if st != 403:
            fail("POST /api/params without CC, read-only: %d" % st)
        print("no CC parameters; POST /api/params -> 403")
        return
    name = p["qps"][0]["params"][0]["name"]
    old = p["qps"][0]["params"][0]["value"]
    new = p["qps"][0]["params"][0]["default"] * 2 or 1
    st, text = post("/api/params", "flow=1&set=%s=%g" % (name, new))
    if not WRITE:
        if st != 403:
            fail("read-only POST /api/params answered %d" % st)
        print("read-only: POST /api/params -> 403")
        return
    if st != 200 or json.loads(text)["qps"][0]["params"][0]["value"] != new:
        fail("POST %s=%g: %d %s" % (name, new, st, text))
    st, text = post("/api/params", "flow=1&set=%s=-1e30" % name)
    if st != 400 or not text.strip():
        fail("an out-of-range value: %d %r" % (st, text))
    st2, text2 = post("/api/params", "flow=1&set=no_such_param=1")
    st3, _ = post("/api/params", "garbage\x00%zz")
    st4, _ = post("/api/params", "flow=99&set=%s=1" % name)
    st5, _ = post("/api/params", "flow=1&set=%s=1&pad=%s" % (name, "x" * 5000))
    if (st2, st3, st4, st5) != (400, 400, 400, 413):
        fail("bad POSTs: %d %d %d %d" % (st2, st3, st4, st5))
    q = json.loads(get("/api/params")[2])
    if q["qps"][0]["params"][0]["value"] != new or (len(q["qps"]) > 1 and q["qps"][1]["params"][0]["value"] != old):
        fail("the change did not stick to flow 1 only: %r" % q["qps"][:2])
    marks = state()["marks"]
    if not marks or marks[-1]["flow"] != 1 or name not in marks[-1]["text"]:
        fail("no mark for the change: %r" % marks)
    print("write: %s %g -> %g applied and marked at t=%.3f s; out of range refused: %s" % (name, old, new, marks[-1]["t_s"], text.strip()))


def check_stream():
    with urllib.request.urlopen(BASE + "/api/stream", timeout=5) as r:
        if not r.headers.get("Content-Type", "").startswith("text/event-stream"):
            fail("/api/stream content type")
        seqs = []
        while len(seqs) < 3:
            line = r.readline().decode()
            if not line:
                fail("stream ended early")
            if line.startswith("data: "):
                seqs.append(json.loads(line[6:])["seq"])
    if seqs != sorted(set(seqs)):
        fail("stream events out of order: %r" % seqs)
    print("stream: events %r" % seqs)


def check_errors():
    try:
        get("/no/such/path")
        fail("unknown path answered 200")
    except urllib.error.HTTPError as e:
        if e.code != 404:
            fail("unknown path: %d" % e.code)
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    big = "GET /api/state HTTP/1.1\r\nHost: x\r\nX-Big: " + "a" * 200000 + "\r\n\r\n"
    try:
        s.sendall(big.encode())
    except OSError:
        pass  # the server closed the connection while we were still sending: refused
    try:
        reply = s.recv(200).decode(errors="replace")
    except OSError:
        reply = ""
    s.close()
    if reply.startswith("HTTP/1.1 200"):
        fail("a 200 KB header was accepted")
    print("huge header: %s" % (reply.split("\r\n")[0] or "connection closed"))
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.sendall(b"\x00\x16\x03garbage \xff\xfe\r\n\r\n")
    try:
        reply = s.recv(200).decode(errors="replace")
    except OSError:
        reply = ""
    s.close()
    if reply.startswith("HTTP/1.1 200"):
        fail("garbage was answered 200")
    print("garbage request: %s" % (reply.split("\r\n")[0] or "connection closed"))
    try:
        urllib.request.urlopen(urllib.request.Request(BASE + "/api/state", method="DELETE"), timeout=5)
        fail("DELETE answered 200")
    except urllib.error.HTTPError as e:
        if e.code != 405:
            fail("DELETE: %d" % e.code)


def rate_bps(seconds):
    """The data path's rate from the tool's own counters over about `seconds`, timed by the
    samples' own clock (a reply delayed by the flood would otherwise skew it)."""
    a = state()["sample"]
    time.sleep(seconds)
    b = state()["sample"]
    dt = b["t_s"] - a["t_s"]
    return (sum(moved(f) for f in b["flows"]) - sum(moved(f) for f in a["flows"])) * 8 / dt \
        if dt > 0 else 0


def flood(n=1000):
    """n connections at once, each held a second: the server answers or refuses them, stays
    up, and the data path's rate (demo: bottleneck-bound, so steady) does not move."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 256)), hard))
    ok = [0]
    lock = threading.Lock()

    def one():
        try:
            c = socket.create_connection(("127.0.0.1", PORT), timeout=5)
            c.sendall(b"GET /api/state HTTP/1.0\r\n\r\n")
            if c.recv(12).startswith(b"HTTP/1.1 200"):
                with lock:
                    ok[0] += 1
            time.sleep(1.0)  # hold the connection
            c.close()
        except OSError:
            pass

    steady = TOOL == "demo" and not WRITE
    before = rate_bps(1.0) if steady else 0
    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts:
        t.start()
    during = rate_bps(1.0) if steady else 0
    for t in ts:
        t.join()
    state()  # still serving
    print("flood: %d concurrent connections, %d answered 200, server still up" % (n, ok[0]))
    if steady:
        print("flood: data path %.1f Mb/s before, %.1f Mb/s during" % (before / 1e6, during / 1e6))
        if during < 0.9 * before:
            fail("the flood moved the data path's rate: %.1f -> %.1f Mb/s" %
                 (before / 1e6, during / 1e6))


def stuck_streams(n=4):
    """Clients that ask for the stream and never read it: the server must not care."""
    out = []
    for _ in range(n):
        c = socket.socket()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        c.connect(("127.0.0.1", PORT))
        c.sendall(b"GET /api/stream HTTP/1.1\r\nHost: x\r\n\r\n")
        out.append(c)
    return out


stuck = stuck_streams()
check_state()
flood()  # early, while the run streams
check_write(check_params())
check_stream()
check_errors()
st, ctype, body = get("/metrics")
if not ctype.startswith("text/plain; version=0.0.4"):
    fail("/metrics content type: " + ctype)
open(OUT + "/metrics.txt", "wb").write(body)
st, ctype, body = get("/")
if b"uPlot.min.js" not in body or len(get("/uPlot.min.js")[2]) < 10000:
    fail("the page or its charting library is missing")
print("page and uPlot served")
for c in stuck:
    c.close()
print("%d stuck stream clients did not stop the server" % len(stuck))
