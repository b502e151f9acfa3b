/* SURF RoCEv2Dcqcn cycle model (see include/feroce/surf.h). One function per edge does what the
 * RTL does at that edge: it reads the values visible at the edge, computes every write, and
 * applies them together with the RTL's priorities (an increase result is overwritten by a
 * decrease result on the same edge, a flag clear wins over a set, bypass forces the line rate
 * last). Between edges where something is scheduled nothing changes, so the run jumps. */
#include "feroce/surf.h"

#include <stdio.h>
#include <string.h>

#define NONE UINT64_MAX

void fe_surf_regs_default(struct fe_surf_regs *r, uint32_t clock_hz)
{
    memset(r, 0, sizeof *r);
    r->alpha_g = 1020;
    r->dec_gain = 1;
    r->stage_f = 5;
    r->rai_Bps = 6000000;
    r->rhai_Bps = 12000000;
    r->rmin_Bps = 10000000;
    /* REG_INIT_C rounds 1.5 ms, 4 us and 55 us to cycles (234375, 625, 8594 at 156.25 MHz) */
    r->inc_cycles = (uint32_t)(((uint64_t)clock_hz * 3 + 1000) / 2000);
    r->dec_cycles = (uint32_t)((((uint64_t)clock_hz * 4 + 500000) / 1000000) & 0xffff);
    r->alpha_cycles = (uint32_t)((((uint64_t)clock_hz * 55 + 500000) / 1000000) & 0xffff);
}

void fe_surf_init(struct fe_surf *m, const struct fe_surf_regs *r, uint32_t line_Bps)
{
    memset(m, 0, sizeof *m);
    if (r)
        m->reg = *r;
    else
        fe_surf_regs_default(&m->reg, FE_SURF_CLOCK_HZ);
    m->line_Bps = line_Bps;
    m->s.rc_Bps = m->s.rt_Bps = line_Bps;
    m->s.alpha = 1023;
    m->dec_sample = m->alpha_sample = m->inc_step = NONE;
    m->dec_calc_at = m->dec_write_at = m->alpha_write_at = m->inc_write_at = NONE;
    m->treset_at = NONE;
    m->last_drive = NONE;
}

void fe_surf_set_change_fn(struct fe_surf *m, fe_surf_change_fn fn, void *ctx)
{
    m->on_change = fn;
    m->ctx = ctx;
}

uint32_t fe_surf_pack_ctrl(const struct fe_surf_regs *r)
{
    return (r->alpha_g & 0x3ff) | (r->dec_gain & 0xf) << 10 | (r->stage_f & 0xff) << 14 |
           (r->clamp & 1) << 22;
}

uint32_t fe_surf_pack_intervals(const struct fe_surf_regs *r)
{
    return (r->dec_cycles & 0xffff) | (r->alpha_cycles & 0xffff) << 16;
}

/* cnpCnt as register 0x020 shows it: the counter output of the cycle before. */
static uint32_t status_cnt(const struct fe_surf *m)
{
    return m->now > m->cnt_at ? m->cnt : m->cnt_old;
}

enum fe_surf_resp fe_surf_axil_read(const struct fe_surf *m, uint32_t addr, uint32_t *val)
{
    const struct fe_surf_regs *r = &m->reg;
    switch (addr) {
    case FE_SURF_REG_CTRL:
        *val = fe_surf_pack_ctrl(r);
        break;
    case FE_SURF_REG_RAI:
        *val = r->rai_Bps;
        break;
    case FE_SURF_REG_RHAI:
        *val = r->rhai_Bps;
        break;
    case FE_SURF_REG_RMIN:
        *val = r->rmin_Bps;
        break;
    case FE_SURF_REG_INC_IVL:
        *val = r->inc_cycles;
        break;
    case FE_SURF_REG_DEC_ALPHA:
        *val = fe_surf_pack_intervals(r);
        break;
    case FE_SURF_REG_RC:
        *val = m->s.rc_Bps;
        break;
    case FE_SURF_REG_RT:
        *val = m->s.rt_Bps;
        break;
    case FE_SURF_REG_STATUS:
        *val = (m->s.alpha & 0x3ff) | (r->cnt_rst & 1) << 10 | (status_cnt(m) & 0xffff) << 11;
        break;
    case FE_SURF_REG_BYPASS:
        *val = r->bypass & 1;
        break;
    default:
        *val = 0;
        return FE_SURF_DECERR;
    }
    return FE_SURF_OKAY;
}

static void hold_counter(struct fe_surf *m)
{
    if (m->cnt) {
        m->cnt_old = m->cnt;
        m->cnt = 0;
        m->cnt_at = m->now + 1;
    }
}

enum fe_surf_resp fe_surf_axil_write(struct fe_surf *m, uint32_t addr, uint32_t val)
{
    struct fe_surf_regs *r = &m->reg;
    switch (addr) {
    case FE_SURF_REG_CTRL:
        r->alpha_g = val & 0x3ff;
        r->dec_gain = val >> 10 & 0xf;
        r->stage_f = val >> 14 & 0xff;
        r->clamp = val >> 22 & 1;
        break;
    case FE_SURF_REG_RAI:
        r->rai_Bps = val;
        break;
    case FE_SURF_REG_RHAI:
        r->rhai_Bps = val;
        break;
    case FE_SURF_REG_RMIN:
        r->rmin_Bps = val;
        break;
    case FE_SURF_REG_INC_IVL:
        r->inc_cycles = val;
        break;
    case FE_SURF_REG_DEC_ALPHA:
        r->dec_cycles = val & 0xffff;
        r->alpha_cycles = val >> 16;
        break;
    case FE_SURF_REG_RC:
    case FE_SURF_REG_RT:
        break;
    case FE_SURF_REG_STATUS:
        r->cnt_rst = val >> 10 & 1;
        if (r->cnt_rst) hold_counter(m);
        break;
    case FE_SURF_REG_BYPASS:
        r->bypass = val & 1;
        break;
    default:
        return FE_SURF_DECERR;
    }
    return FE_SURF_OKAY;
}

int fe_surf_cnp_drive(struct fe_surf *m, uint64_t drive_cycle)
{
    uint64_t edge = drive_cycle + FE_SURF_CNP_LATENCY;
    if (drive_cycle > UINT64_MAX - 16 || edge < m->now) return -1;
    if (m->last_drive != NONE) {
        if (drive_cycle < m->last_drive) return -1;
        if (drive_cycle <= m->last_drive + 1) { /* cnp still high: no rising edge */
            m->last_drive = drive_cycle;
            return 0;
        }
    }
    if (m->cnp_n == FE_SURF_CNP_QUEUE) return -1;
    m->cnp_edge[(m->cnp_head + m->cnp_n++) % FE_SURF_CNP_QUEUE] = edge;
    m->last_drive = drive_cycle;
    return 0;
}

static uint64_t dec_period(const struct fe_surf *m)
{
    return (uint64_t)m->reg.dec_cycles + 3;
}
static uint64_t alpha_period(const struct fe_surf *m)
{
    return (uint64_t)m->reg.alpha_cycles + 2;
}
static uint64_t inc_period(const struct fe_surf *m)
{
    return (uint64_t)m->reg.inc_cycles + 3;
}

/* The timer never exceeds an interval of 2^32 - 1: no increase step ever. */
static uint64_t inc_first(const struct fe_surf *m, uint64_t reset_edge)
{
    return m->reg.inc_cycles == UINT32_MAX ? NONE : reset_edge + inc_period(m);
}

/* A decrease sample with the pending flag clear does nothing, so the decrease engine is only an
 * event while the flag is set; its phase is kept by stepping whole periods. */
static uint64_t next_dec_sample(const struct fe_surf *m)
{
    if (!m->dflag || m->dec_sample == NONE) return NONE;
    uint64_t u = m->dec_sample, p = dec_period(m);
    if (u < m->now) u += (m->now - u + p - 1) / p * p;
    return u;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint64_t fe_surf_next_event(const struct fe_surf *m)
{
    uint64_t t = next_dec_sample(m);
    t = min_u64(t, m->dec_calc_at);
    t = min_u64(t, m->dec_write_at);
    t = min_u64(t, m->alpha_sample);
    t = min_u64(t, m->alpha_write_at);
    t = min_u64(t, m->inc_step);
    t = min_u64(t, m->inc_write_at);
    t = min_u64(t, m->treset_at);
    if (m->cnp_n) t = min_u64(t, m->cnp_edge[m->cnp_head]);
    return t;
}

/* What one edge writes, applied at its end. */
struct edge_writes {
    struct fe_surf_state s;
    bool dflag_set, dflag_clr, aflag_set, aflag_clr;
};

static uint32_t alpha_step(uint32_t alpha, uint32_t g, bool cnp)
{
    uint32_t a = (uint32_t)(((uint64_t)alpha * g + 512) >> 10);
    if (cnp) a += 1024 - g;
    return a & 0x3ff;
}

static void count_cnp(struct fe_surf *m, uint64_t n)
{
    m->cnps_seen++;
    if (m->reg.cnt_rst) return;
    m->cnt_old = m->cnt;
    m->cnt = (uint16_t)(m->cnt + 1);
    m->cnt_at = n + 1;
}

static void start_engines(struct fe_surf *m, uint64_t n)
{
    m->started = true;
    m->dec_sample = n + dec_period(m);
    m->alpha_sample = n + alpha_period(m) + 1;
    m->inc_step = inc_first(m, n + 1);
}

/* cnpRe at edge n: count it; unless bypassed, flag a decrease and an alpha update (the first CNP
 * only forces alpha to 1023 and starts the engines) and reset the increase timer at n+1. */
static void take_cnp(struct fe_surf *m, uint64_t n, struct edge_writes *w)
{
    m->cnp_head = (m->cnp_head + 1) % FE_SURF_CNP_QUEUE;
    m->cnp_n--;
    count_cnp(m, n);
    if (m->reg.bypass) return;
    if (!m->started) {
        start_engines(m, n);
        w->s.alpha = 1023;
    } else {
        w->aflag_set = true;
    }
    w->dflag_set = true;
    m->treset_at = n + 1;
}

/* The timer reset pulse: lost on the transition and step edges (the timer already exceeds the
 * interval), where the step goes ahead. */
static void reset_timer(struct fe_surf *m, uint64_t n, struct edge_writes *w)
{
    m->treset_at = NONE;
    if (m->inc_step != NONE && (n + 1 == m->inc_step || n == m->inc_step)) return;
    w->s.stage = 0;
    m->inc_step = inc_first(m, n);
}

static void sample_decrease(struct fe_surf *m, uint64_t n)
{
    m->dec_sample = n + dec_period(m);
    if (!m->dflag) return;
    const struct fe_surf_state *v = &m->s;
    m->dec_rt = m->reg.clamp || v->stage ? v->rc_Bps : v->rt_Bps;
    m->dec_product = (uint64_t)v->rc_Bps * v->alpha;
    m->dec_calc_at = n + 1;
}

/* Rc_new from the Rc visible one edge after the sample, 32-bit unsigned as in the RTL. */
static void compute_decrease(struct fe_surf *m, uint64_t n)
{
    m->dec_calc_at = NONE;
    uint32_t cut = (uint32_t)(m->dec_product >> (m->reg.dec_gain + 10));
    uint32_t rc = m->s.rc_Bps - cut;
    m->dec_rc = rc < m->reg.rmin_Bps ? m->reg.rmin_Bps : rc;
    m->dec_write_at = n + 1;
}

static void sample_alpha(struct fe_surf *m, uint64_t n)
{
    m->alpha_new = alpha_step(m->s.alpha, m->reg.alpha_g, m->aflag);
    m->alpha_write_at = n + 1;
    m->alpha_sample = n + alpha_period(m);
}

static uint32_t add_sat(uint32_t rt, uint32_t inc, uint32_t line)
{
    uint64_t s = (uint64_t)rt + inc;
    return s > line ? line : (uint32_t)s;
}

/* Fast recovery below F-1, one additive step at F-1, hyper steps above (8-bit compare). */
static void step_increase(struct fe_surf *m, uint64_t n, struct edge_writes *w)
{
    const struct fe_surf_state *v = &m->s;
    uint8_t ts = (uint8_t)v->stage, f1 = (uint8_t)(m->reg.stage_f - 1);
    uint32_t rt = v->rt_Bps;
    if (ts == f1)
        rt = add_sat(rt, m->reg.rai_Bps, m->line_Bps);
    else if (ts > f1)
        rt = add_sat(rt, m->reg.rhai_Bps, m->line_Bps);
    if (ts <= f1) w->s.stage = (uint8_t)(ts + 1);
    m->inc_rt = rt;
    m->inc_rc = v->rc_Bps / 2 + rt / 2;
    m->inc_write_at = n + 1;
    m->inc_step = n + inc_period(m);
}

static void apply_writes(struct fe_surf *m, uint64_t n, struct edge_writes *w)
{
    if (w->dflag_clr)
        m->dflag = false;
    else if (w->dflag_set)
        m->dflag = true;
    if (w->aflag_clr)
        m->aflag = false;
    else if (w->aflag_set)
        m->aflag = true;
    if (m->reg.bypass) w->s.rc_Bps = w->s.rt_Bps = m->line_Bps;
    bool changed = memcmp(&w->s, &m->s, sizeof w->s) != 0;
    m->s = w->s;
    if (changed && m->on_change) m->on_change(m->ctx, n + 1, &m->s);
}

static void process_edge(struct fe_surf *m, uint64_t n)
{
    struct edge_writes w = {.s = m->s};
    if (m->inc_write_at == n) {
        w.s.rc_Bps = m->inc_rc;
        w.s.rt_Bps = m->inc_rt;
        m->inc_write_at = NONE;
    }
    if (m->dec_write_at == n) { /* overwrites an increase result of the same edge */
        w.s.rc_Bps = m->dec_rc;
        w.s.rt_Bps = m->dec_rt;
        w.dflag_clr = true;
        m->dec_write_at = NONE;
    }
    if (m->dec_calc_at == n) compute_decrease(m, n);
    if (next_dec_sample(m) == n) sample_decrease(m, n);
    if (m->alpha_write_at == n) {
        w.s.alpha = m->alpha_new;
        w.aflag_clr = true;
        m->alpha_write_at = NONE;
    }
    if (m->alpha_sample == n) sample_alpha(m, n);
    if (m->treset_at == n) reset_timer(m, n, &w);
    if (m->inc_step == n) step_increase(m, n, &w);
    if (m->cnp_n && m->cnp_edge[m->cnp_head] == n) take_cnp(m, n, &w);
    apply_writes(m, n, &w);
}

void fe_surf_run_until(struct fe_surf *m, uint64_t cycle)
{
    while (m->now < cycle) {
        uint64_t n = fe_surf_next_event(m);
        if (n >= cycle) break;
        m->now = n;
        process_edge(m, n);
        m->now = n + 1;
    }
    if (m->now < cycle) m->now = cycle;
}

uint32_t fe_surf_token_rate_q16(uint32_t rc_Bps, uint32_t clock_hz)
{
    /* bytes per clock in Q16.16 per B/s, scaled by 2^32: 1801440 at 156.25 MHz */
    uint64_t k = ((1ull << 48) + clock_hz / 2) / clock_hz;
    return (uint32_t)(((uint64_t)rc_Bps * k) >> 32);
}

void fe_surf_bucket_init(struct fe_surf_bucket *b, uint32_t frame_bytes)
{
    memset(b, 0, sizeof *b);
    b->frame_bytes = frame_bytes;
}

bool fe_surf_bucket_edge(struct fe_surf_bucket *b, uint32_t rate_q16)
{
    const uint64_t cap = 1ull << 36, size = (uint64_t)b->frame_bytes << 16;
    bool release = !b->started || b->count_q16 >= size;
    uint64_t c = b->count_q16 + rate_q16;
    if (release && b->started) c -= size; /* the first frame after reset costs no tokens */
    b->started = true;
    b->count_q16 = c > cap ? cap : c;
    return release;
}

/* ---- register file lines (outside input: every malformed line is refused, with the reason) */

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* A 32-bit number: decimal digits, or 0x and hex digits. */
static const char *parse_u32(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    int base = 10, digits = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    for (;; s++, digits++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            break;
        v = v * (uint64_t)base + (uint64_t)d;
        if (v > UINT32_MAX) return NULL;
    }
    if (!digits) return NULL;
    *out = (uint32_t)v;
    return s;
}

static bool has_register(uint32_t addr)
{
    return addr <= FE_SURF_REG_BYPASS && addr % 4 == 0;
}

static bool is_read_only(uint32_t addr)
{
    return addr == FE_SURF_REG_RC || addr == FE_SURF_REG_RT;
}

static bool starts_with(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

enum line_form { FORM_PLAIN, FORM_READBACK, FORM_WRITE };

/* In the golden forms the value may be repeated (readback "= DECIMAL", write "(0xHEX)"): the
 * copies must agree. */
static const char *check_copy(const char *p, uint32_t value)
{
    uint32_t again;
    bool paren = *p == '(';
    if (*p != '=' && !(paren && p[1] == '0')) return p;
    const char *q = parse_u32(skip_blanks(p + 1), &again);
    if (!q || again != value || (paren && *q != ')')) return NULL;
    return skip_blanks(q + paren);
}

static bool golden_tail(const char *p)
{
    return !*p || starts_with(p, "(bit31") || starts_with(p, "issued") || starts_with(p, "done");
}

static int bad_value(const char *v, char *err, size_t errlen)
{
    snprintf(err, errlen, "expected a 32-bit value (decimal or 0x hex) at '%.40s'", v);
    return -1;
}

/* "ADDR = VALUE", then in the golden forms the copies of the value and their free text. */
static int parse_assignment(const char *s, enum line_form form, struct fe_surf_reg_write *w,
                            char *err, size_t errlen)
{
    uint32_t addr, value;
    const char *p = parse_u32(s, &addr);
    if (!p) {
        snprintf(err, errlen, "expected a register address (e.g. 0x004) at '%.40s'", s);
        return -1;
    }
    if (!has_register(addr)) {
        snprintf(err, errlen, "no register at 0x%03X (DECERR): registers are 0x000-0x024, every 4",
                 addr);
        return -1;
    }
    p = skip_blanks(p);
    if (*p != '=') {
        snprintf(err, errlen, "expected '=' after the address 0x%03X", addr);
        return -1;
    }
    const char *v = skip_blanks(p + 1);
    p = parse_u32(v, &value);
    if (!p) return bad_value(v, err, errlen);
    p = skip_blanks(p);
    if (form != FORM_PLAIN && !(p = check_copy(p, value))) {
        snprintf(err, errlen, "the two values given for 0x%03X disagree", addr);
        return -1;
    }
    if (form == FORM_PLAIN ? *p != 0 : !golden_tail(p)) {
        snprintf(err, errlen, "unexpected text after the value: '%.40s'", p);
        return -1;
    }
    if (is_read_only(addr)) {
        if (form == FORM_READBACK) return 0;
        snprintf(err, errlen, "0x%03X is read-only (%s)", addr,
                 addr == FE_SURF_REG_RC ? "Rc" : "Rt");
        return -1;
    }
    w->addr = addr;
    w->value = value;
    return 1;
}

int fe_surf_parse_reg_line(const char *line, struct fe_surf_reg_write *w, char *err, size_t errlen)
{
    char buf[256];
    size_t n = strcspn(line, "#\r\n");
    if (n >= sizeof buf) {
        snprintf(err, errlen, "line longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    memcpy(buf, line, n);
    buf[n] = 0;
    while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t')) buf[--n] = 0;
    const char *s = skip_blanks(buf);
    if (!*s) return 0;
    if (starts_with(s, "programmed read "))
        return parse_assignment(skip_blanks(s + 16), FORM_READBACK, w, err, errlen);
    if (starts_with(s, "write "))
        return parse_assignment(skip_blanks(s + 6), FORM_WRITE, w, err, errlen);
    if (starts_with(s, "default read ") || starts_with(s, "final read ") ||
        starts_with(s, "config complete"))
        return 0;
    return parse_assignment(s, FORM_PLAIN, w, err, errlen);
}
