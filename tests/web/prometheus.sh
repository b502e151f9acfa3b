#!/bin/sh
# A real Prometheus scrapes `feroce demo --web` every second; its query API must then hold
# every flow's received bytes, growing, with the target up.
set -u
FEROCE=$1
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/dashboard_port.sh"
PROM=$(command -v prometheus || true)
if [ -z "$PROM" ]; then
    echo "SKIP: prometheus not found (Debian package 'prometheus')"
    exit 77
fi
"$FEROCE" demo --base 127.83.0.0 --rate 200M --duration 30s --senders 2 --web 127.0.0.1:0 --web-hold 30s \
    >"$T/out" 2>"$T/err" &
pid=$!
dashboard_port "$pid"
pport=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$T/prometheus.yml" <<EOC
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: feroce
    static_configs: [{targets: ['127.0.0.1:$port']}]
EOC
"$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$pport" >"$T/prom.log" 2>&1 &
ppid=$!
stop() { kill "$ppid" 2>/dev/null; kill -INT "$pid" 2>/dev/null; sleep 1; kill -INT "$pid" 2>/dev/null; }
$PY - "$pport" <<'EOP' || { stop; tail -5 "$T/prom.log"; fail "prometheus query"; }
import json, sys, time, urllib.parse, urllib.request
base = "http://127.0.0.1:%s/api/v1/query?query=" % sys.argv[1]
def q(expr):
    with urllib.request.urlopen(base + urllib.parse.quote(expr), timeout=5) as r:
        return json.loads(r.read())["data"]["result"]
deadline = time.time() + 60
while time.time() < deadline:
    try:
        up = q('up{job="feroce"}')
        rate = q('rate(feroce_flow_received_bytes_total[5s])')
        if up and up[0]["value"][1] == "1" and len(rate) == 2 and all(float(r["value"][1]) > 0 for r in rate):
            print("prometheus: target up; received bytes/s per flow: " +
                  ", ".join("%s=%.0f" % (r["metric"]["flow"], float(r["value"][1])) for r in rate))
            sys.exit(0)
    except OSError:
        pass  # not listening yet
    time.sleep(1)
sys.exit("no growing feroce_flow_received_bytes_total for both flows within 60 s")
EOP
stop
wait "$pid" 2>/dev/null
echo "ok"
