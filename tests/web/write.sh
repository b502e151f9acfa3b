#!/bin/sh
# feroce demo --web --web-write: POST /api/params changes a sender QP's CC parameters while it
# runs (validated as --param is, marked on the charts), and the demo still verifies every byte.
set -u
FEROCE=$1
. "$(dirname "$0")/../script_env.sh"
. "$(dirname "$0")/dashboard_port.sh"
"$FEROCE" demo --base 127.84.0.0 --rate 200M --duration 6s --web-hold 8s --web 127.0.0.1:0 --web-write >"$T/out" 2>"$T/err" &
pid=$!
dashboard_port "$pid"
$PY "$(dirname "$0")/web_check.py" "$port" "$T" demo write || { kill "$pid"; fail "web checks"; }
wait "$pid" || { cat "$T/out" "$T/err"; fail "demo exited $?"; }
grep -q "data verified: [1-9][0-9]* bytes, 0 errors" "$T/out" || { cat "$T/out"; fail "demo result"; }
grep "data verified" "$T/out"
