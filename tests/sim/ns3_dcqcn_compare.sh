#!/bin/sh
# DCQCN under --ns3-compat against HPCC ns-3, from its stored outputs (tests/sim/ns3/README.md):
# the AdvCam parking lot with 2 us links (advcam-dcqcn) and 1 us links (advcam-dcqcn-1us), five
# ns-3 runs (RngRun 1..5) against feroce seeds 1..5. For each scenario:
# - aggregate goodput (all bytes / first start to last completion) of every seed within 0.5 % of
#   the ns-3 run of the same number;
# - ECN-marked packets and CNPs (ACKs with the congestion flag) summed over the five runs within
#   3 % (ns3-ecn-count.txt: counted in the receiver's ns-3 trace);
# - the per-flow goodput (size / FCT) of the 40 flows of each side: deciles 10 .. 90 % within
#   2 %, the slowest and the fastest flow within 4 % (a single flow of 40 each).
set -eu
BIN=$1
DIR=$2
. "$(dirname "$0")/../script_env.sh"

for sc in advcam-dcqcn advcam-dcqcn-1us; do
    for seed in 1 2 3 4 5; do
        $BIN sim --hpcc "$DIR/$sc/config.txt" --ns3-compat --seed $seed \
            --fct "$T/$sc-$seed.fct" --pfc "$T/$sc-$seed.pfc" --no-progress \
            > "$T/$sc-$seed.out" || {
            cat "$T/$sc-$seed.out" >&2
            fail "feroce sim on $sc seed $seed"
        }
    done
done

$PY - "$DIR" "$T" <<'PY'
import os, re, sys
d, t = sys.argv[1], sys.argv[2]

def flows(path):
    """fct.txt: sip dip sport dport size start fct standalone -> [(size, start, fct)]"""
    out = []
    for line in open(path):
        f = line.split()
        if len(f) >= 8:
            out.append((int(f[4]), int(f[5]), int(f[6])))
    return out

def aggregate(fl):
    t0 = min(s for _, s, _ in fl)
    t1 = max(s + c for _, s, c in fl)
    return sum(b for b, _, _ in fl) * 8 / (t1 - t0)

def quantile(v, q):
    v = sorted(v)
    i = q * (len(v) - 1)
    lo = int(i)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)

bad = 0
def check(what, ref, got, tol):
    global bad
    diff = got / ref - 1
    flag = "" if abs(diff) <= tol else "  <-- more than %g %%" % (tol * 100)
    bad += bool(flag)
    print("%-18s %-24s %12.4f %12.4f %+7.2f%%%s" % (sc, what, ref, got, diff * 100, flag))

print("%-18s %-24s %12s %12s %8s" % ("scenario", "figure", "ns-3", "feroce", "diff"))
for sc in ("advcam-dcqcn", "advcam-dcqcn-1us"):
    ns3 = [flows(os.path.join(d, sc, "ns3-fct-run%d.txt" % r)) for r in range(1, 6)]
    fer = [flows(os.path.join(t, "%s-%d.fct" % (sc, s))) for s in range(1, 6)]
    if any(len(f) != len(n) for f, n in zip(fer, ns3)):
        print("FAIL: %s: flows completed differ" % sc)
        bad += 1
        continue
    for r in range(5):
        check("aggregate Gb/s, seed %d" % (r + 1), aggregate(ns3[r]), aggregate(fer[r]), 0.005)
    marks = cnps = 0
    for s in range(1, 6):
        out = open(os.path.join(t, "%s-%d.out" % (sc, s))).read()
        m = re.search(r"ECN marks (\d+); CNPs (\d+)", out)
        marks += int(m.group(1))
        cnps += int(m.group(2))
    ref = [list(map(int, l.split())) for l in open(os.path.join(d, sc, "ns3-ecn-count.txt"))
           if not l.startswith("#")]
    check("ECN-marked packets", sum(r[2] for r in ref), marks, 0.03)
    check("CNPs", sum(r[3] for r in ref), cnps, 0.03)
    gn = [b * 8 / c for fl in ns3 for b, _, c in fl]
    gf = [b * 8 / c for fl in fer for b, _, c in fl]
    for q in (0, .1, .2, .3, .4, .5, .6, .7, .8, .9, 1):
        check("flow Gb/s, quantile %3d %%" % (q * 100), quantile(gn, q), quantile(gf, q),
              0.02 if 0 < q < 1 else 0.04)
sys.exit(1 if bad else 0)
PY
