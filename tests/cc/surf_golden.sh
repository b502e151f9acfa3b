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
echo "surf golden: 5 cases, events and AXI-Lite traces identical"
