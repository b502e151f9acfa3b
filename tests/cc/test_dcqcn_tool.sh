#!/bin/sh
# feroce dcqcn: the golden-model tool. Expected rows are derived by hand in the comments.
set -eu
F=${1:?usage: test_dcqcn_tool.sh FEROCE_BINARY}
. "$(dirname "$0")/../script_env.sh"

# Emulated switch check (the SURF firmware cocotb test), SURF profile, 10 Gb/s: the sender paces 4096-byte
# packets at Rc. Window [0, 32 us) carries ~10 packets (> 5 Gb/s x 32 us = 160 000 bits): CNP at
# 32 000, alpha 1023, cut on the 4 us decrease grid at 36 000: Rc = 1.25e9 - 1.25e9 x 1023 >> 11
# = 625 610 352. Window [32, 64 us): 4 us at 10 G + 28 us at 5.005 G > 5 G: CNP at 64 000, cut at
# 68 000 with alpha still 1023 (first alpha update at 87 000): 625 610 352 - 312 499 702 =
# 313 110 650. Window [64, 96 us) stays below 5 Gb/s: no CNP at 96 000.
"$F" dcqcn --profile surf --monitor 32us:5G --until 20ms --csv "$T/a.csv"
grep -q '^32000,1250000000,1250000000,1023,0,0,cnp' "$T/a.csv" || fail "first CNP row"
grep -q '^36000,625610352,1250000000,1023,0,0,timer' "$T/a.csv" || fail "first cut"
grep -q '^64000,625610352,' "$T/a.csv" || fail "second CNP"
grep -q '^68000,313110650,1250000000,1023,0,0,timer' "$T/a.csv" || fail "second cut"
grep -q '^96000,' "$T/a.csv" && fail "no CNP expected at 96 us"
# later CNPs, with a smaller alpha, cut less than half, and Rc climbs back in between
awk -F, '!/^#/ && $1 > 100000 && $7 == "timer" && prev != "" && $2 < prev { r = $2 / prev; if (r <= 0.5005) bad = 1; n++ }
         !/^#/ { prev = $2 } END { exit !(n >= 10 && !bad) }' "$T/a.csv" || fail "later cuts"
# every parameter of the profile is echoed (11 for surf)
[ "$(grep -c '^# param ' "$T/a.csv")" = 11 ] || fail "parameter echo"
grep -q '^time_ns,Rc_Bps,Rt_Bps,alpha_1024,T,BC,event$' "$T/a.csv" || fail "column header"

# Deterministic: the same run twice gives the same bytes (stdout = --csv).
"$F" dcqcn --profile surf --monitor 32us:5G --until 20ms > "$T/b.csv"
cmp -s "$T/a.csv" "$T/b.csv" || fail "not deterministic"

# CNP file, ConnectX, nothing sent: CNPs at 0 and 500 ns (the first only sets alpha), rpg_gd = 1
# makes the cut the 50 % min_dec_fac bound: at 4000 Rc = 10 000 - 5000 = 5000 Mb/s, Rt stays
# 10 000; alpha ticks 1023 (CNP seen at 1000), 1018, 1013, then after the cut at 4000:
# floor(1019 x 1013 / 1024) = 1008.
printf '# CNP times\n0\n\n 500ns  # second\n' > "$T/cnp.txt"
"$F" dcqcn --cnp-file "$T/cnp.txt" --send-rate 0 --param rpg_gd=1 --until 5us > "$T/c.csv"
grep -q '^4000,5000,10000,1008,0,0,timer$' "$T/c.csv" || fail "ConnectX cut from a CNP file"
grep -q '^# param rpg_gd = 1 shift .*(set)' "$T/c.csv" || fail "set parameter not marked"
grep -q '^time_ns,Rc_Mbps,Rt_Mbps,alpha_1024,T,BC,event$' "$T/c.csv" || fail "ConnectX header"

# --cnp-every and --step: CNPs every 50 us; rows exactly every 10 us (21 rows for 0..200 us).
"$F" dcqcn --profile hpcc-ns3 --cnp-every 50us --until 200us --step 10us > "$T/d.csv"
[ "$(grep -vc '^#' "$T/d.csv")" = 22 ] || fail "--step rows"

# Errors: out-of-range value, unknown parameter for the profile, decreasing CNP file.
if "$F" dcqcn --param rpg_ai_rate=70000 --until 1ms > /dev/null 2> "$T/e"; then fail "accepted"; fi
grep -q 'rpg_ai_rate: 70000 out of range \[1, 65535\] Mb/s' "$T/e" || fail "range message"
if "$F" dcqcn --profile surf --param rpg_byte_reset=1 --until 1ms > /dev/null 2> "$T/e"; then
    fail "accepted a ConnectX-only parameter for surf"; fi
printf '10us\n5us\n' > "$T/bad.txt"
if "$F" dcqcn --cnp-file "$T/bad.txt" --until 1ms > /dev/null 2> "$T/e"; then fail "decreasing"; fi
grep -q 'must not decrease' "$T/e" || fail "decreasing message"
if "$F" dcqcn --profile nope --until 1ms > /dev/null 2>&1; then fail "bad profile"; fi
if "$F" dcqcn > /dev/null 2>&1; then fail "missing --until"; fi
echo "test_dcqcn_tool: ok"
