#!/bin/sh
# The orchestration overhead of `feroce sweep run`: N points of about 0.1 s of CPU each
# (advcam-dcqcn, 130 MB per flow, one seed per point); prints the parent's CPU time against the
# runs'. The issue's target: under 2 % for 1000 points. A benchmark, not a test: run it on an
# idle machine.   usage: overhead.sh FEROCE [N=1000] [FLOW_SIZE=130MB] [WORKERS]
set -eu
FEROCE=$1
N=${2:-1000}
SIZE=${3:-130MB}
T=$(mktemp -d /tmp/feroce-sweep-overhead-XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
cat >"$T/o.yaml" <<EOF
scenario: advcam-dcqcn
set: {flow.size: $SIZE}
seeds: $N
EOF
"$FEROCE" sweep run "$T/o.yaml" --no-progress ${4:+-j $4}
sqlite3 "$T/o.db" "SELECT printf('per point: %.3f s CPU, %.3f s wall (mean)', avg(cpu_s), avg(wall_s)) FROM runs" 2>/dev/null || true
