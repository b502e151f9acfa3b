/* feroce dcqcn --profile surf in clock cycles: the SURF RoCEv2Dcqcn cycle model driven by the
 * firmware's registers and CNP drive cycles (src/cc/surf_rp.c). */
#ifndef FE_TOOLS_DCQCN_SURF_H
#define FE_TOOLS_DCQCN_SURF_H

/* True when argv asks for the cycle model (--regs, --reg, --cnp-cycles, --until-cycle, --events,
 * --axil, --egress, --clock-hz). */
int fe_dcqcn_surf_wanted(int argc, char **argv);
/* Runs it; argv[0] is "dcqcn". Returns the exit code. */
int fe_dcqcn_surf_main(int argc, char **argv);

extern const char fe_dcqcn_surf_usage[];

#endif
