/* SURF RoCEv2Dcqcn (slaclab/surf, ethernet/RoCEv2/rtl) as a cycle model: the firmware's DCQCN
 * rate limiter with its registers, its input latency, its engine periods (I+3, I+2, I+3 cycles),
 * its same-edge ordering and absorption windows, and its integer rounding, bit for bit.
 *
 * Sans-I/O and event-driven: inputs are clock-cycle numbers (rising edge n of the 156.25 MHz
 * clock), never a clock read; fe_surf_run_until() jumps from one edge where something happens to
 * the next, so a run costs per event, not per cycle. "The value at cycle n" is the register value
 * visible at edge n, before that edge updates it; a write at edge n is visible at n+1.
 *
 * The rules are those of docs/dcqcn.md (section "SURF cycle model"), checked against the VHDL
 * simulated under GHDL (tests/cc/surf-golden). */
#ifndef FEROCE_SURF_H
#define FEROCE_SURF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FE_SURF_CLOCK_HZ      156250000u  /* CLK_FREQ_G */
#define FE_SURF_LINE_RATE_BPS 1250000000u /* LINE_RATE_G, bytes per second */
#define FE_SURF_CNP_LATENCY   4u          /* drive after edge D -> cnpRe at edge D+4 */

/* Register addresses (AXI-Lite, byte addresses). */
enum fe_surf_addr {
    FE_SURF_REG_CTRL = 0x000,      /* [9:0] alphaG, [13:10] dec_gain, [21:14] F, [22] clamp */
    FE_SURF_REG_RAI = 0x004,       /* B/s */
    FE_SURF_REG_RHAI = 0x008,      /* B/s */
    FE_SURF_REG_RMIN = 0x00C,      /* B/s */
    FE_SURF_REG_INC_IVL = 0x010,   /* rateIncInterval, cycles */
    FE_SURF_REG_DEC_ALPHA = 0x014, /* [15:0] rateDecInterval, [31:16] alphaUpdInterval */
    FE_SURF_REG_RC = 0x018,        /* read-only */
    FE_SURF_REG_RT = 0x01C,        /* read-only */
    FE_SURF_REG_STATUS = 0x020,    /* [9:0] alpha, [10] cnpCntRst (rw), [26:11] cnpCnt */
    FE_SURF_REG_BYPASS = 0x024,    /* [0] dcqcnBypass */
};

/* AXI-Lite responses. */
enum fe_surf_resp { FE_SURF_OKAY = 0, FE_SURF_DECERR = 3 };

/* The register file, decoded into fields (what the RTL's r.* hold). */
struct fe_surf_regs {
    uint32_t alpha_g;      /* 10 bits: 1 - g in Q0.10 */
    uint32_t dec_gain;     /* 4 bits */
    uint32_t stage_f;      /* 8 bits: timeStageThreshold F */
    uint32_t clamp;        /* 1 bit: clampTgtRate */
    uint32_t rai_Bps;      /* 32 bits */
    uint32_t rhai_Bps;     /* 32 bits */
    uint32_t rmin_Bps;     /* 32 bits */
    uint32_t inc_cycles;   /* 32 bits: rateIncInterval */
    uint32_t dec_cycles;   /* 16 bits: rateDecInterval */
    uint32_t alpha_cycles; /* 16 bits: alphaUpdInterval */
    uint32_t bypass;       /* 1 bit */
    uint32_t cnt_rst;      /* 1 bit: cnpCntRst, holds the CNP counter at 0 */
};

/* The visible state at one cycle. */
struct fe_surf_state {
    uint32_t rc_Bps, rt_Bps;
    uint32_t alpha; /* Q0.10 */
    uint32_t stage; /* timeStage, 8 bits */
};

/* Called once per edge at which Rc, Rt, alpha or timeStage changes; `cycle` is the first edge at
 * which the new values are visible. */
typedef void (*fe_surf_change_fn)(void *ctx, uint64_t cycle, const struct fe_surf_state *s);

#define FE_SURF_CNP_QUEUE 8

struct fe_surf {
    struct fe_surf_regs reg;
    uint32_t line_Bps;
    uint64_t now; /* edges before `now` are done: the state is the one visible at `now` */

    struct fe_surf_state s;
    bool dflag, aflag; /* decrease / alpha pending */
    bool started;      /* the engines run from the first accepted CNP on */
    uint16_t cnt;      /* cnpCnt, counter output */
    uint16_t cnt_old;  /* its value before the last change (0x020 lags it by one cycle) */
    uint64_t cnt_at;   /* first cycle at which `cnt` is visible */

    /* Engine schedule (edge numbers; UINT64_MAX = none). */
    uint64_t dec_sample, alpha_sample, inc_step;
    uint64_t dec_calc_at, dec_write_at, alpha_write_at, inc_write_at, treset_at;
    uint64_t dec_product;
    uint32_t dec_rc, dec_rt, alpha_new, inc_rc, inc_rt;

    /* CNP rising edges waiting to be seen. */
    uint64_t cnp_edge[FE_SURF_CNP_QUEUE];
    unsigned cnp_head, cnp_n;
    uint64_t last_drive; /* UINT64_MAX before the first */
    uint64_t cnps_seen;  /* cnpRe pulses (not wrapped) */

    fe_surf_change_fn on_change;
    void *ctx;
};

/* Register defaults after reset for a clock and line rate: REG_INIT_C (intervals of 4 us,
 * 55 us and 1.5 ms rounded to cycles). */
void fe_surf_regs_default(struct fe_surf_regs *r, uint32_t clock_hz);

/* Reset state: the registers `r` (NULL = defaults at FE_SURF_CLOCK_HZ), Rc = Rt = line rate,
 * alpha 1023, cycle 0. */
void fe_surf_init(struct fe_surf *m, const struct fe_surf_regs *r, uint32_t line_Bps);
void fe_surf_set_change_fn(struct fe_surf *m, fe_surf_change_fn fn, void *ctx);

/* AXI-Lite at the current cycle. A read returns the value visible at m->now; a write lands in
 * the register file at once (the engines use the new intervals from their next period). Read-only
 * fields ignore writes, as the RTL does; other addresses answer DECERR and change nothing. */
enum fe_surf_resp fe_surf_axil_read(const struct fe_surf *m, uint32_t addr, uint32_t *val);
enum fe_surf_resp fe_surf_axil_write(struct fe_surf *m, uint32_t addr, uint32_t val);
/* The packings of 0x000 and 0x014. */
uint32_t fe_surf_pack_ctrl(const struct fe_surf_regs *r);
uint32_t fe_surf_pack_intervals(const struct fe_surf_regs *r);

/* `cnp` raised for one cycle right after edge `drive_cycle`. Drives must not decrease, and
 * drive_cycle + FE_SURF_CNP_LATENCY must not be before m->now; a drive at most one cycle after
 * the previous one extends that pulse (no new rising edge). Returns 0, or -1 (out of order, or
 * the queue is full: run the model forward first). */
int fe_surf_cnp_drive(struct fe_surf *m, uint64_t drive_cycle);

/* Advance to `cycle`: process every edge before it. Calls on_change for each change. */
void fe_surf_run_until(struct fe_surf *m, uint64_t cycle);
/* The next edge at which something is scheduled (UINT64_MAX when idle). */
uint64_t fe_surf_next_event(const struct fe_surf *m);

/* One line of a register file: `0x004 = 6000000`, `0x004=0x5B8D80` (as --reg takes it), or the
 * `programmed read 0x004 = 0x005B8D80 = 6000000 ...` lines of the golden *_regs.txt (a readback of
 * the programmed value: read-only registers in it are skipped). '#' starts a comment. */
struct fe_surf_reg_write {
    uint32_t addr, value;
};
/* Returns 1 with *w set for a write, 0 for a line that writes nothing (blank, comment, the
 * other readback lines of *_regs.txt), -1 with a message in err (no address, an address with no
 * register, a write to a read-only register, a value that does not fit 32 bits, trailing text). */
int fe_surf_parse_reg_line(const char *line, struct fe_surf_reg_write *w, char *err, size_t errlen);

/* Egress token bucket (RoCEv2TokenBucket/TokenCalc): byte_per_clk in Q16.16 for a rate,
 * floor(Rc * round(2^48 / clock) / 2^32). */
uint32_t fe_surf_token_rate_q16(uint32_t rc_Bps, uint32_t clock_hz);

/* The egress token bucket for a saturated input of single-beat frames (at most 32 bytes):
 * a Q16.16 count that adds byte_per_clk every cycle from the end of reset (edge
 * FE_SURF_RESET_CYCLES), saturating at 1 MiB; a waiting frame leaves when the count holds its
 * size (subtracted on that edge), the first one without tokens; byte_per_clk follows Rc two
 * cycles late; the beat is on the output two edges after its release. */
#define FE_SURF_RESET_CYCLES   16u
#define FE_SURF_EGRESS_LATENCY 2u
#define FE_SURF_TOKEN_LAG      2u

struct fe_surf_bucket {
    uint64_t count_q16;
    uint32_t frame_bytes;
    bool started;
};

void fe_surf_bucket_init(struct fe_surf_bucket *b, uint32_t frame_bytes);
/* One edge with the token rate of that edge; returns true if a frame is released at it. */
bool fe_surf_bucket_edge(struct fe_surf_bucket *b, uint32_t rate_q16);

#ifdef __cplusplus
}
#endif
#endif
