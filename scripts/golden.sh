#!/bin/sh
# The simulator's golden set: a fixed list of scenarios whose results must not change when the
# code is restructured. Writes one JSON (wall-clock fields removed) and, for HPCC inputs, the
# fct.txt/pfc.txt of each run into OUTDIR; compare two such directories with 'diff -r'.
#   scripts/golden.sh FEROCE OUTDIR
set -eu
bin=$1
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
n=0
run() { # name, then feroce sim arguments
    name=$1
    shift
    "$bin" sim "$@" --json --no-progress 2>"$out/$name.err" | grep -v '"wall_s"' >"$out/$name.json"
    n=$((n + 1))
}
for s in advcam-pfc advcam-dcqcn incast3 incast3-nocc incast3-asym switch-check; do
    run "$s" "$s"
done
for cc in dcqcn-surf timely hpcc swift homa none; do
    run "incast3-$cc" incast3 --cc "$cc" --set flow.size=4MB
done
run advcam-dcqcn-mtu1024 advcam-dcqcn --set host.mtu=1024 --set link.delay=2us --set flow.size=5MB
run advcam-dcqcn-heap advcam-dcqcn --queue heap --set flow.size=5MB
run advcam-dcqcn-wheel advcam-dcqcn --queue wheel --set flow.size=5MB
run advcam-hpcc advcam-dcqcn --cc hpcc --set flow.size=5MB
run advcam-timely advcam-dcqcn --cc timely --set flow.size=5MB
run incast4-yaml "$src/tests/sim/data/incast4.yaml"
run incast4-yaml-seed7 "$src/tests/sim/data/incast4.yaml" --seed 7
for d in advcam-dcqcn advcam-hpcc25 advcam-pfc hpcc-sample; do
    cfg="$src/tests/sim/ns3/$d/config.txt"
    [ -f "$cfg" ] || continue
    run "hpcc-$d" --hpcc "$cfg" --ns3-compat --until 30ms --fct "$out/hpcc-$d.fct" \
        --pfc "$out/hpcc-$d.pfc"
done
run hpcc-data --hpcc "$src/tests/sim/data/hpcc/config.txt" --fct "$out/hpcc-data.fct" \
    --pfc "$out/hpcc-data.pfc"
if [ -f "$src/tests/sim/ns3roce/incast3-config.json" ]; then
    run ns3roce-incast3 --ns3-roce "$src/tests/sim/ns3roce/incast3-config.json" --until 20ms
fi
echo "golden: $n scenarios in $out"
