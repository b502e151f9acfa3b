#!/bin/sh
# feroce sim --hpcc ... --ns3-compat against the HPCC ns-3 simulator itself: per-flow throughput
# (size / FCT from fct.txt) within 5 % of what ns-3 measured on the same files (0.1 % for PFC
# alone), HPCC's standalone_fct exactly, and PFC PAUSEs and RESUMEs received per node
# (advcam-pfc) within 1 % (they are equal: feroce reproduces its pfc.txt line for line).
#
# The ns-3 figures are data: tests/sim/ns3/*/ns3-fct*.txt and advcam-pfc/ns3-pfc-count.txt are
# the outputs of alibaba-edu/High-Precision-Congestion-Control at commit
# 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be (simulation/, ns-3.17), scratch/third.cc compiled with
# g++ 12.2 -O2 -std=c++14 (no waf; modules core network bridge mpi internet config-store stats
# tools point-to-point applications), run on 2026-11-22 as
#     cd tests/sim/ns3/NAME && third config.txt            (fct.txt -> ns3-fct.txt)
# and for advcam-dcqcn, whose RED marking is random, five runs
#     NS_GLOBAL_VALUE="RngRun=R" third config.txt           (R = 1..5 -> ns3-fct-runR.txt)
# ns3-pfc-count.txt counts the lines of advcam-pfc's pfc.txt per "node node_type ifindex":
# PAUSEs then RESUMEs received. See tests/sim/ns3/README.md and docs/sim.md.
#
# Deterministic scenarios are compared flow by flow. advcam-dcqcn is compared as the mean over
# feroce seeds 1..3 against the mean over the five ns-3 runs: one run's per-flow share wanders by
# +-10 % in either simulator (RED marking is random), the means do not.
set -eu
BIN=$1
DIR=$2
. "$(dirname "$0")/../script_env.sh"

run() { # scenario seed
    $BIN sim --hpcc "$DIR/$1/config.txt" --ns3-compat --seed "$2" --fct "$T/$1-$2.fct" \
        --pfc "$T/$1-$2.pfc" --no-progress > "$T/$1-$2.out" || {
        cat "$T/$1-$2.out" >&2
        echo "FAIL: feroce sim on $1" >&2
        exit 1
    }
}
for s in hpcc-sample advcam-pfc advcam-hpcc25; do run $s 1; done
for seed in 1 2 3; do run advcam-dcqcn $seed; done

$PY - "$DIR" "$T" <<'PY'
import os, sys
d, t = sys.argv[1], sys.argv[2]

alone = {}  # (scenario, flow) -> standalone_fct_ns of every file read: must agree exactly

def gbps(path, name):
    """fct.txt: sip dip sport dport size start fct standalone -> {(src, dst, sport): Gb/s}"""
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) < 8:
            continue
        key = ((int(f[0], 16) >> 8) & 0xFFFF, (int(f[1], 16) >> 8) & 0xFFFF, int(f[2]))
        out[key] = int(f[4]) * 8 / int(f[6])
        alone.setdefault((name, key), set()).add(int(f[7]))
    return out

def mean(runs):
    keys = set(runs[0])
    for r in runs:
        if set(r) != keys:
            sys.exit("FAIL: runs completed different flows")
    return {k: sum(r[k] for r in runs) / len(runs) for k in keys}

# (scenario, ns-3 outputs, feroce seeds, tolerance): 5 % is the contract; PFC alone (no CC, no
# randomness) reproduces ns-3's fct.txt exactly, so a regression in frame sizes or timing, or
# in the pause cycles, shows there
cases = [
    ("hpcc-sample", ["ns3-fct.txt"], [1], 0.05),
    ("advcam-pfc", ["ns3-fct.txt"], [1], 0.001),
    ("advcam-hpcc25", ["ns3-fct.txt"], [1], 0.05),
    ("advcam-dcqcn", ["ns3-fct-run%d.txt" % r for r in range(1, 6)], [1, 2, 3], 0.05),
]
bad = 0
print("%-14s %-14s %10s %10s %7s" % ("scenario", "flow", "ns-3 Gb/s", "feroce", "diff"))
for name, refs, seeds, tol in cases:
    ns3 = mean([gbps(os.path.join(d, name, r), name) for r in refs])
    fer = mean([gbps(os.path.join(t, "%s-%d.fct" % (name, s)), name) for s in seeds])
    if set(ns3) != set(fer):
        print("FAIL: %s: flows completed: ns-3 %d, feroce %d" % (name, len(ns3), len(fer)))
        bad += 1
        continue
    for k in sorted(ns3):
        diff = fer[k] / ns3[k] - 1
        flag = "" if abs(diff) <= tol else "  <-- more than %g %%" % (tol * 100)
        bad += bool(flag)
        print("%-14s %-14s %10.3f %10.3f %+6.1f%%%s" %
              (name, "%d->%d:%d" % k, ns3[k], fer[k], diff * 100, flag))

# HPCC's standalone_fct (its formula, from the pair's RTT) is reproduced to the nanosecond
for (name, key), v in sorted(alone.items()):
    if len(v) != 1:
        print("FAIL: %s %s: standalone_fct differs: %s" % (name, key, sorted(v)))
        bad += 1

# PFC: PAUSE and RESUME frames received per node (hosts and switches), no drops. Before
# --ns3-compat timed frames as ns-3 does (whole ns each, transmitter busy until its
# transmit-complete event, its MMU's carving) they were 12 % apart: the pause cycles depend on it
ref = {}
for line in open(os.path.join(d, "advcam-pfc", "ns3-pfc-count.txt")):
    node, typ, ifx, pauses, resumes = map(int, line.split())
    ref[(node, "PAUSEs")], ref[(node, "RESUMEs")] = pauses, resumes
got = {}
for line in open(os.path.join(t, "advcam-pfc-1.pfc")):
    f = line.split()
    k = (int(f[1]), "PAUSEs" if f[4] == "1" else "RESUMEs")
    got[k] = got.get(k, 0) + 1
for k in sorted(ref, key=lambda k: (k[1], k[0])):
    r = got.get(k, 0) / ref[k]
    flag = "" if 0.99 <= r <= 1.01 else "  <-- more than 1 %"
    bad += bool(flag)
    print("advcam-pfc     %-7s at %-4d %8d %10d %+6.1f%%%s" %
          (k[1], k[0], ref[k], got.get(k, 0), (r - 1) * 100, flag))
if set(got) - set(ref):
    print("FAIL: feroce paused or resumed nodes ns-3 did not: %s" % sorted(set(got) - set(ref)))
    bad += 1
out = open(os.path.join(t, "advcam-pfc-1.out")).read()
if "drops 0 " not in out:
    print("FAIL: advcam-pfc dropped frames")
    bad += 1
sys.exit(1 if bad else 0)
PY
