#!/bin/sh
# feroce dcqcn --profile surf in cycles against the SURF VHDL's golden traces (tests/cc/surf-golden,
# cases a-e): the change events bit for bit (values and cycles) and the firmware's AXI-Lite view.
set -eu
F=${1:?usage: surf_golden.sh FEROCE_BINARY}
D="$(dirname "$0")/surf-golden"
. "$(dirname "$0")/../script_env.sh"

run_len() {
    case $1 in a | e) echo 468750 ;; b) echo 1875000 ;; c) echo 1562500 ;; d) echo 781250 ;; esac
}

for c in a b c d e; do
    n=$(run_len $c)
    args="--profile surf --regs $D/$c/${c}_regs.txt --cnp-cycles $D/$c/${c}_cnp_schedule.txt --until-cycle $n"
    # shellcheck disable=SC2086
    "$F" dcqcn $args --events > "$T/$c.csv"
    cut -d, -f1-5 "$D/$c/${c}_events.csv" > "$T/$c.want"
    cmp -s "$T/$c.want" "$T/$c.csv" || { diff "$T/$c.want" "$T/$c.csv" | head -20; fail "case $c: events"; }
    # The golden AXI-Lite trace stops where the testbench's final readback begins: compare its rows.
    gzip -dc "$D/$c/${c}_axil_trace.csv.gz" > "$T/$c.axil.want"
    # shellcheck disable=SC2086
    "$F" dcqcn $args --axil | head -n "$(wc -l < "$T/$c.axil.want")" > "$T/$c.axil"
    cmp -s "$T/$c.axil.want" "$T/$c.axil" || { diff "$T/$c.axil.want" "$T/$c.axil" | head -20; fail "case $c: AXI-Lite trace"; }
done

# Token-bucket egress, saturated 32-byte single-beat frames, bytes per 156-cycle window: case a
# (3 ms: 1248 B per window at Rc = L after a 1120 B start, 608/640 after the cut, then 928/960),
# and the first 0.5 ms of b (down to Rmin) and e (bypass), window for window.
gzip -dc "$D/a/a_tput.csv.gz" > "$T/a.tput.want"
"$F" dcqcn --profile surf --cnp-cycles "$D/a/a_cnp_schedule.txt" --until-cycle 468750 --egress > "$T/a.tput"
cmp -s "$T/a.tput.want" "$T/a.tput" || { diff "$T/a.tput.want" "$T/a.tput" | head; fail "case a: egress"; }
for c in b e; do
    "$F" dcqcn --profile surf --regs "$D/$c/${c}_regs.txt" --cnp-cycles "$D/$c/${c}_cnp_schedule.txt" \
        --until-cycle 78125 --egress > "$T/$c.tput"
    cmp -s "$D/$c/${c}_tput_first0p5ms.csv" "$T/$c.tput" || fail "case $c: egress"
done
# The README's averages: 8 B/clk at L (every window after the first), 4.003905 B/clk after the
# cut (windows 15 to 1511), 6.001960 after the first recovery (windows 1513 on).
awk -F, 'NR > 2 && NR <= 15 && $3 != 1248 { bad = 1 }
         NR > 16 && NR <= 1512 { s1 += $3; n1++ } NR > 1514 { s2 += $3; n2++ }
         END { r1 = s1 / n1 / 156; r2 = s2 / n2 / 156
               if (bad || r1 < 4.0038 || r1 > 4.0040 || r2 < 6.0018 || r2 > 6.0021) exit 1 }' "$T/a.tput" \
    || fail "egress averages"

# --reg after --regs, the same packing: case d's 0x000 and 0x014 given by hand.
"$F" dcqcn --profile surf --reg 0x000=0x0040CBFC --reg 0x014=409600469 --reg 0x010=312500 \
    --cnp-cycles "$D/d/d_cnp_schedule.txt" --until-cycle 781250 > "$T/d2.csv"
cmp -s "$T/d.want" "$T/d2.csv" || fail "--reg (events are the default output)"

# Outside input is refused with the line named.
printf '0x004 = 6000000\n0x030 = 1\n' > "$T/bad.txt"
if "$F" dcqcn --profile surf --regs "$T/bad.txt" --until-cycle 10 2> "$T/err"; then fail "DECERR address accepted"; fi
grep -q "bad.txt:2: no register at 0x030" "$T/err" || fail "error names the line: $(cat "$T/err")"
if "$F" dcqcn --profile surf --reg 0x018=5 --until-cycle 10 2> "$T/err"; then fail "read-only write accepted"; fi
grep -q "read-only" "$T/err" || fail "read-only message"
if "$F" dcqcn --profile surf --reg 0x004=4294967296 --until-cycle 10 2> "$T/err"; then fail "33-bit value accepted"; fi
printf '100\n50\n' > "$T/cnp.txt"
if "$F" dcqcn --profile surf --cnp-cycles "$T/cnp.txt" --until-cycle 10 2> "$T/err"; then fail "decreasing CNPs accepted"; fi
grep -q "cnp.txt:2:" "$T/err" || fail "CNP error names the line"
if "$F" dcqcn --profile connectx --regs "$T/bad.txt" --until-cycle 10 2> /dev/null; then fail "cycle options need --profile surf"; fi
echo "surf golden: 5 cases, events, AXI-Lite traces and egress identical"
