/* feroce dcqcn --profile surf in clock cycles: the SURF RoCEv2Dcqcn cycle model driven by the
 * firmware's registers and CNP drive cycles (src/cc/surf_rp.c). */
#ifndef FE_TOOLS_DCQCN_SURF_H
#define FE_TOOLS_DCQCN_SURF_H

/* True when argv asks for the cycle model (--regs, --reg, --cnp-cycles, --until-cycle, --events,
 * --axil, --egress, --clock-hz). */
int fe_dcqcn_surf_wanted(int argc, char **argv);
/* Runs it; argv[0] is "dcqcn". Returns the exit code. */
int fe_dcqcn_surf_main(int argc, char **argv);

/* Its usage, appended to `feroce dcqcn --help`. */
#define FE_DCQCN_SURF_USAGE                                                                        \
    "Cycle model of the SURF firmware (RoCEv2Dcqcn), in clock cycles:\n"                           \
    "  feroce dcqcn --profile surf [--regs FILE]... [--reg ADDR=VALUE]... [--clock-hz N]\n"        \
    "               [--line-rate R] [--cnp-cycles FILE] --until-cycle N\n"                         \
    "               [--events | --axil | --egress [--egress-frame B]] [--window K] [--csv F]\n"    \
    "  --regs FILE      register writes, one per line: '0x004 = 6000000', or the 'programmed\n"    \
    "                   read 0x004 = ...' lines of a golden *_regs.txt; '#' starts a comment\n"    \
    "  --reg A=V        one register write (repeatable, after the --regs files); 0x000 is\n"       \
    "                   alphaG | dec_gain<<10 | F<<14 | clamp<<22, 0x014 is rateDec |\n"           \
    "                   alphaUpd<<16 (cycles), 0x024 bit 0 is the bypass\n"                        \
    "  --clock-hz N     clock (default 156250000); register defaults are rounded to it\n"          \
    "  --line-rate R    LINE_RATE_G as a bit rate (default 10G = 1.25e9 B/s)\n"                    \
    "  --cnp-cycles F   CNP drive cycles D, one per line, non-decreasing ('#' comments): cnp\n"    \
    "                   is raised right after edge D for one cycle; cnpRe fires at D+4\n"          \
    "  --until-cycle N  run length in cycles (required)\n"                                         \
    "  --events         CSV cycle,Rc,Rt,alpha,timeStage: the reset state at cycle 0, then one\n"   \
    "                   row per change, at the first edge where the new value is visible\n"        \
    "                   (the default output)\n"                                                    \
    "  --axil           CSV of AXI-Lite reads of 0x018, 0x01C and 0x020 issued at k*K, k*K+4,\n"   \
    "                   k*K+8 (k >= 1; each returns the value at issue + 1), as the golden\n"      \
    "                   *_axil_trace.csv; --window K (default 156)\n"                              \
    "  --egress         CSV win_start_cycle,win_cycles,bytes,beats: the token bucket's egress\n"   \
    "                   for a saturated input of single-beat frames of --egress-frame B bytes\n"   \
    "                   (1 to 32, default 32), per window of K cycles (--window), as *_tput.csv\n" \
    "  --csv FILE       write the CSV to FILE instead of stdout\n"

#endif
