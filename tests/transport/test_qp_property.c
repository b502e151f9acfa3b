/* Property test: a requester QP and a responder QP joined by an in-memory channel that drops,
 * duplicates, reorders, corrupts and CE-marks packets with seeded probabilities (each 0..10 %).
 * Random message kinds (WRITE, WRITE_IMM, SEND, SEND_IMM), sizes (0 .. 2 MiB, mostly small),
 * MTUs, replay rings, ACK policies, start PSNs (often across the 2^24 wrap), receive-buffer
 * pressure (RNR) and congestion control. Every packet goes through the wire codec
 * (fe_frame_encode FE_FRAME_BTH / fe_frame_decode with ICRC verification), so a corrupted packet
 * is one whose bits were flipped on the wire.
 *
 * Checked: every message completes exactly once, in order, successfully, on both sides; the
 * responder executed each exactly once (rx_msgs); its memory equals a shadow copy byte for
 * byte; guard bytes around the region and every receive buffer are intact; receive completions
 * carry the right immediate and length; both QPs end idle.
 *
 * Default: 5 seeds x 20 000 messages. `--long` or FEROCE_LONG=1: 200 seeds. `--seed N` and
 * `--msgs N` reproduce one run. */
#include "qp_util.h"

#include <inttypes.h>
#include <stdio.h>

#define REGION     (4u << 20)
#define GUARD      4096 /* around the region */
#define RB_GUARD   64   /* around each receive buffer */
#define SRC_BYTES  (8u << 20)
#define GUARD_BYTE 0xA5

/* ---- seeded random numbers (splitmix64) ---- */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}
static double rnd_unit(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}
static bool chance(double p)
{
    return p > 0 && rnd_unit() < p;
}

/* ---- the channel: frames in flight, ordered by arrival time ---- */
struct frame {
    uint64_t at, seq;
    uint32_t len;
    uint8_t ecn;
    uint8_t data[];
};

struct chan {
    struct frame **heap;
    size_t n, cap;
    uint64_t seq;
};

/* Frames are recycled through a free list: no allocation per packet (ASan makes it slow). */
static struct frame **g_pool;
static size_t g_pool_n, g_pool_cap;

static struct frame *frame_get(void)
{
    if (g_pool_n) return g_pool[--g_pool_n];
    struct frame *f = malloc(sizeof *f + FE_MAX_FRAME_LEN);
    assert_non_null(f);
    return f;
}

static void frame_put(struct frame *f)
{
    if (g_pool_n == g_pool_cap) {
        g_pool_cap = g_pool_cap ? 2 * g_pool_cap : 256;
        g_pool = realloc(g_pool, g_pool_cap * sizeof *g_pool);
        assert_non_null(g_pool);
    }
    g_pool[g_pool_n++] = f;
}

static void pool_free(void)
{
    for (size_t i = 0; i < g_pool_n; i++) free(g_pool[i]);
    free(g_pool);
    g_pool = NULL;
    g_pool_n = g_pool_cap = 0;
}

static bool earlier(const struct frame *a, const struct frame *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void chan_push(struct chan *c, struct frame *f)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->heap = realloc(c->heap, c->cap * sizeof *c->heap);
        assert_non_null(c->heap);
    }
    f->seq = c->seq++;
    size_t i = c->n++;
    while (i && earlier(f, c->heap[(i - 1) / 2])) {
        c->heap[i] = c->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    c->heap[i] = f;
}

static struct frame *chan_pop(struct chan *c)
{
    struct frame *top = c->heap[0], *last = c->heap[--c->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct frame *best = last;
        if (l < c->n && earlier(c->heap[l], best)) m = l, best = c->heap[l];
        if (r < c->n && earlier(c->heap[r], best)) m = r;
        if (m == i) break;
        c->heap[i] = c->heap[m];
        i = m;
    }
    if (c->n) c->heap[i] = last;
    return top;
}

static uint64_t chan_next(const struct chan *c)
{
    return c->n ? c->heap[0]->at : FE_NO_DEADLINE;
}

static void chan_free(struct chan *c)
{
    for (size_t i = 0; i < c->n; i++) frame_put(c->heap[i]);
    free(c->heap);
}

/* ---- one run ---- */
struct impair {
    double drop, dup, reorder, corrupt, ce;
};

struct msg {
    enum fe_wr_op op;
    uint32_t len;
    uint32_t src_off;
    uint32_t dst_off; /* WRITE */
};

struct recvbuf {
    uint8_t *mem; /* GUARD + len + GUARD */
    uint32_t len;
    uint32_t msg; /* the message that will consume it */
};

struct run {
    uint64_t seed;
    uint32_t nmsgs;
    struct impair im;
    struct fe_qp_config ca, cb;
    const char *cc;
    uint32_t nrev; /* WRITEs the responder sends back at the same time (0: one direction) */
    uint32_t rq_target;
    uint64_t refill_ns;
    /* stats */
    uint64_t frames, dropped, duplicated, reordered, corrupted, marked;
};

static const uint8_t *g_src;

static uint32_t pick_len(void)
{
    uint64_t r = rnd_below(10000);
    if (r < 5500) return (uint32_t)rnd_below(65);               /* 55 %: 0..64 B */
    if (r < 9000) return (uint32_t)(65 + rnd_below(4032));      /* 35 %: ..4 KiB */
    if (r < 9950) return (uint32_t)(4097 + rnd_below(28672));   /* 9.5 %: ..32 KiB */
    if (r < 9995) return (uint32_t)(32769 + rnd_below(491520)); /* 0.45 %: ..512 KiB */
    return (uint32_t)(524289 + rnd_below(1572864));             /* 0.05 %: ..2 MiB */
}

static void emit(struct run *r, struct chan *c, const struct fe_pkt *p, uint64_t now,
                 const struct fe_path *path)
{
    r->frames++;
    if (chance(r->im.drop)) {
        r->dropped++;
        return;
    }
    int copies = chance(r->im.dup) ? 2 : 1;
    if (copies == 2) r->duplicated++;
    for (int k = 0; k < copies; k++) {
        struct frame *f = frame_get();
        int n = fe_frame_encode(f->data, FE_MAX_FRAME_LEN, FE_FRAME_BTH, path, 0, p);
        assert_true(n > 0);
        f->len = (uint32_t)n;
        f->ecn = p->ecn;
        if (p->ecn != FE_ECN_NOT_ECT && chance(r->im.ce)) {
            f->ecn = FE_ECN_CE;
            r->marked++;
        }
        if (chance(r->im.corrupt)) {
            int bits = 1 + (int)rnd_below(3);
            for (int b = 0; b < bits; b++) {
                uint64_t pos = rnd_below((uint64_t)f->len * 8);
                f->data[pos / 8] ^= (uint8_t)(1u << (pos % 8));
            }
            r->corrupted++;
        }
        f->at = now + 1000;
        if (chance(r->im.reorder)) {
            f->at += 1 + rnd_below(20000);
            r->reordered++;
        }
        chan_push(c, f);
    }
}

static void deliver(struct fe_qp *qp, const struct frame *f, uint64_t now)
{
    struct fe_frame fr;
    enum fe_parse_reason why;
    if (fe_frame_decode(f->data, f->len, FE_FRAME_BTH, true, &fr, &why, NULL) < 0) return;
    fr.pkt.ecn = f->ecn; /* what the IP header would have said */
    fe_qp_rx(qp, now, &fr.pkt);
}

static uint8_t g_guard[GUARD];

static bool guard_ok(const uint8_t *p, size_t n)
{
    for (; n > GUARD; n -= GUARD, p += GUARD)
        if (memcmp(p, g_guard, GUARD)) return false;
    return memcmp(p, g_guard, n) == 0;
}

static void run_one(struct run *r)
{
    struct msg *m = calloc(r->nmsgs, sizeof *m);
    uint32_t *consumers = calloc(r->nmsgs, sizeof *consumers);
    uint32_t nconsumers = 0;
    uint8_t *arena = malloc(REGION + 2 * GUARD), *shadow = malloc(REGION);
    assert_true(m && consumers && arena && shadow);
    memset(arena, GUARD_BYTE, REGION + 2 * GUARD);
    memcpy(shadow, arena + GUARD, REGION);

    for (uint32_t i = 0; i < r->nmsgs; i++) {
        m[i].op = (enum fe_wr_op)rnd_below(4);
        m[i].len = pick_len();
        m[i].src_off = (uint32_t)rnd_below(SRC_BYTES - m[i].len + 1);
        m[i].dst_off = (uint32_t)rnd_below(REGION - m[i].len + 1);
        if (m[i].op != FE_WR_WRITE) consumers[nconsumers++] = i;
    }

    /* reverse traffic: WRITEs from B into a region on A, sharing the wire with B's ACKs */
    struct msg *m2 = calloc(r->nrev ? r->nrev : 1, sizeof *m2);
    uint8_t *arena2 = malloc(REGION + 2 * GUARD), *shadow2 = malloc(REGION);
    assert_true(m2 && arena2 && shadow2);
    memset(arena2, GUARD_BYTE, REGION + 2 * GUARD);
    memcpy(shadow2, arena2 + GUARD, REGION);
    for (uint32_t i = 0; i < r->nrev; i++) {
        m2[i].op = FE_WR_WRITE;
        m2[i].len = pick_len();
        m2[i].src_off = (uint32_t)rnd_below(SRC_BYTES - m2[i].len + 1);
        m2[i].dst_off = (uint32_t)rnd_below(REGION - m2[i].len + 1);
    }
    uint32_t posted2 = 0, done2 = 0;

    struct fe_qp *a = tq_create(&r->ca, 0), *b = tq_create(&r->cb, 0);
    struct fe_mr mr = {.rkey = RKEY_B, .va = VA_B, .len = REGION, .base = arena + GUARD};
    assert_int_equal(fe_qp_reg_mr(b, &mr), 0);
    struct fe_mr mr2 = {.rkey = RKEY_B, .va = VA_B, .len = REGION, .base = arena2 + GUARD};
    assert_int_equal(fe_qp_reg_mr(a, &mr2), 0);

    struct recvbuf *rb = calloc(nconsumers ? nconsumers : 1, sizeof *rb);
    uint32_t rb_posted = 0, rb_done = 0;
    uint32_t posted = 0, done = 0;
    struct chan ab = {0}, ba = {0};
    uint64_t now = 0, next_refill = 0, stuck = 0;
    uint64_t time_limit = 600ull * 1000000000ull; /* simulated */

    while (done < r->nmsgs || rb_done < nconsumers || done2 < r->nrev) {
        /* post sends while the SQ takes them */
        while (posted < r->nmsgs) {
            const struct msg *x = &m[posted];
            struct fe_wr w = {.op = x->op,
                              .cookie = posted,
                              .data = g_src + x->src_off,
                              .len = x->len,
                              .remote_offset = x->dst_off,
                              .imm = (uint32_t)(posted * 2654435761u)};
            int rc = fe_qp_post_send(a, &w);
            if (rc == FE_ENOSPC) break;
            assert_int_equal(rc, 0);
            if (x->op == FE_WR_WRITE || x->op == FE_WR_WRITE_IMM)
                memcpy(shadow + x->dst_off, g_src + x->src_off, x->len);
            posted++;
        }
        while (posted2 < r->nrev) {
            const struct msg *x = &m2[posted2];
            struct fe_wr w = {.op = x->op,
                              .cookie = posted2,
                              .data = g_src + x->src_off,
                              .len = x->len,
                              .remote_offset = x->dst_off};
            int rc = fe_qp_post_send(b, &w);
            if (rc == FE_ENOSPC) break;
            assert_int_equal(rc, 0);
            memcpy(shadow2 + x->dst_off, g_src + x->src_off, x->len);
            posted2++;
        }
        /* receive buffers, sized for the message that will take each, posted in bursts */
        if (now >= next_refill) {
            while (rb_posted < nconsumers && rb_posted - rb_done < r->rq_target) {
                struct recvbuf *x = &rb[rb_posted];
                x->msg = consumers[rb_posted];
                x->len = m[x->msg].len;
                x->mem = malloc((size_t)x->len + 2 * RB_GUARD);
                assert_non_null(x->mem);
                memset(x->mem, GUARD_BYTE, (size_t)x->len + 2 * RB_GUARD);
                assert_int_equal(fe_qp_post_recv(b, rb_posted, x->mem + RB_GUARD, x->len), 0);
                rb_posted++;
            }
            next_refill = now + r->refill_ns;
        }
        /* transmit */
        struct fe_pkt p;
        while (fe_qp_tx(a, now, &p)) emit(r, &ab, &p, now, &r->ca.path);
        while (fe_qp_tx(b, now, &p)) emit(r, &ba, &p, now, &r->cb.path);

        /* completions */
        struct fe_cqe cq[64];
        int n;
        while ((n = fe_qp_poll_cq(a, cq, 64)) > 0) {
            for (int i = 0; i < n; i++) {
                if (cq[i].status != FE_WC_SUCCESS || cq[i].cookie != done)
                    fail_msg("seed %" PRIu64 ": requester completion %" PRIu64
                             " status %s, want %u",
                             r->seed, cq[i].cookie, fe_wc_status_name(cq[i].status), done);
                assert_int_equal(cq[i].byte_len, m[done].len);
                done++;
            }
        }
        while ((n = fe_qp_poll_cq(b, cq, 64)) > 0) {
            for (int i = 0; i < n; i++) {
                if (cq[i].opcode == FE_WC_RDMA_WRITE) { /* B's own WRITE to A */
                    if (cq[i].status != FE_WC_SUCCESS || cq[i].cookie != done2)
                        fail_msg("seed %" PRIu64 ": reverse completion %" PRIu64
                                 " status %s, want %u",
                                 r->seed, cq[i].cookie, fe_wc_status_name(cq[i].status), done2);
                    assert_int_equal(cq[i].byte_len, m2[done2].len);
                    done2++;
                    continue;
                }
                if (cq[i].status != FE_WC_SUCCESS || cq[i].cookie != rb_done)
                    fail_msg("seed %" PRIu64 ": receive completion %" PRIu64 " status %s, want %u",
                             r->seed, cq[i].cookie, fe_wc_status_name(cq[i].status), rb_done);
                struct recvbuf *x = &rb[rb_done];
                const struct msg *y = &m[x->msg];
                assert_int_equal(cq[i].byte_len, y->len);
                bool wimm = y->op == FE_WR_WRITE_IMM;
                assert_int_equal(cq[i].opcode, wimm ? FE_WC_RECV_RDMA_WITH_IMM : FE_WC_RECV);
                bool has_imm = y->op != FE_WR_SEND;
                assert_int_equal(cq[i].has_imm, has_imm);
                if (has_imm) assert_int_equal(cq[i].imm, (uint32_t)(x->msg * 2654435761u));
                assert_true(guard_ok(x->mem, RB_GUARD));
                assert_true(guard_ok(x->mem + RB_GUARD + x->len, RB_GUARD));
                if (!wimm)
                    assert_true(memcmp(x->mem + RB_GUARD, g_src + y->src_off, y->len) == 0);
                else
                    assert_true(guard_ok(x->mem + RB_GUARD, x->len)); /* WRITE_IMM: untouched */
                free(x->mem);
                x->mem = NULL;
                rb_done++;
            }
        }
        assert_int_equal(fe_qp_state(a), FE_QPS_RTS);
        assert_int_equal(fe_qp_state(b), FE_QPS_RTS);
        if (done == r->nmsgs && rb_done == nconsumers && done2 == r->nrev) break;

        /* advance to the next event */
        uint64_t t = chan_next(&ab), u = chan_next(&ba);
        if (u < t) t = u;
        u = fe_qp_next_deadline(a);
        if (u < t) t = u;
        u = fe_qp_next_deadline(b);
        if (u < t) t = u;
        /* a refill is an event only when it would post something */
        if (r->refill_ns && rb_posted < nconsumers && rb_posted - rb_done < r->rq_target &&
            next_refill < t)
            t = next_refill;
        if (t == FE_NO_DEADLINE)
            fail_msg("seed %" PRIu64 ": deadlock at %u/%u", r->seed, done, r->nmsgs);
        if (t > now) {
            now = t;
            stuck = 0;
        } else if (++stuck > 100000) {
            fail_msg("seed %" PRIu64 ": no progress at t=%" PRIu64, r->seed, now);
        }
        if (now > time_limit) fail_msg("seed %" PRIu64 ": too slow (simulated)", r->seed);
        while (chan_next(&ab) <= now) {
            struct frame *f = chan_pop(&ab);
            deliver(b, f, now);
            frame_put(f);
        }
        while (chan_next(&ba) <= now) {
            struct frame *f = chan_pop(&ba);
            deliver(a, f, now);
            frame_put(f);
        }
        if (fe_qp_next_deadline(a) <= now) fe_qp_handle_expiry(a, now);
        if (fe_qp_next_deadline(b) <= now) fe_qp_handle_expiry(b, now);
    }

    /* exactly once, byte-exact, nothing outside touched */
    const struct fe_qp_counters *ka = fe_qp_counters(a), *kb = fe_qp_counters(b);
    assert_int_equal(ka->tx_msgs_completed, r->nmsgs);
    assert_int_equal(kb->rx_msgs, r->nmsgs);
    assert_true(guard_ok(arena, GUARD));
    assert_true(guard_ok(arena + GUARD + REGION, GUARD));
    if (memcmp(arena + GUARD, shadow, REGION) != 0) {
        size_t i = 0;
        while (arena[GUARD + i] == shadow[i]) i++;
        fail_msg("seed %" PRIu64 ": responder memory differs at offset %zu", r->seed, i);
    }
    assert_int_equal(fe_qp_counters(a)->rx_msgs, r->nrev);
    assert_true(guard_ok(arena2, GUARD));
    assert_true(guard_ok(arena2 + GUARD + REGION, GUARD));
    if (memcmp(arena2 + GUARD, shadow2, REGION) != 0)
        fail_msg("seed %" PRIu64 ": reverse memory differs", r->seed);
    struct fe_qp_psns pa, pb;
    fe_qp_psns(a, &pa);
    fe_qp_psns(b, &pb);
    assert_int_equal(pa.una_psn, pa.next_psn);
    assert_int_equal(pa.next_psn, pb.expected_psn);
    assert_int_equal(pa.inflight_bytes, 0);
    assert_int_equal(pb.next_psn, pa.expected_psn);
    assert_int_equal(pb.una_psn, pb.next_psn);

    printf("seed %3" PRIu64
           " rev %5u mtu %4u ring %3u ackreq %4u ack %4u cc %-5s drop %.3f dup %.3f "
           "reo %.3f cor %.3f ce %.3f | pkts %7" PRIu64 " retx %6" PRIu64 " nak %5" PRIu64
           " rnr %4" PRIu64 " to %4" PRIu64 " dup %5" PRIu64 " ooo %6" PRIu64 " icrc %5" PRIu64
           " cnp %4" PRIu64 " t %.1f ms\n",
           r->seed, r->nrev, r->ca.mtu_bytes, (unsigned)(r->ca.replay_bytes / r->ca.mtu_bytes),
           r->ca.ackreq_every, r->cb.ack_every, r->cc, r->im.drop, r->im.dup, r->im.reorder,
           r->im.corrupt, r->im.ce, ka->tx_pkts, ka->retx_pkts, ka->rx_naks[0], ka->rx_rnr_naks,
           ka->timeouts, kb->rx_dup_pkts, kb->rx_ooo_pkts, kb->rx_bad_icrc, kb->tx_cnps,
           (double)now / 1e6);

    chan_free(&ab);
    chan_free(&ba);
    for (uint32_t i = rb_done; i < rb_posted; i++) free(rb[i].mem);
    free(rb);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
    free(m);
    free(consumers);
    free(arena);
    free(shadow);
    free(m2);
    free(arena2);
    free(shadow2);
}

static void setup_run(struct run *r, uint64_t seed, uint32_t nmsgs)
{
    memset(r, 0, sizeof *r);
    r->seed = seed;
    r->nmsgs = nmsgs;
    rng_state = seed * 0x2545F4914F6CDD1Dull + 1;
    /* seed 1 is a clean channel; the others draw every impairment in 0..10 % */
    if (seed != 1) {
        r->im.drop = rnd_unit() * 0.10;
        r->im.dup = rnd_unit() * 0.10;
        r->im.reorder = rnd_unit() * 0.10;
        r->im.corrupt = rnd_unit() * 0.10;
        r->im.ce = rnd_unit() * 0.10;
    }
    tq_config(&r->ca, false);
    tq_config(&r->cb, true);
    uint32_t mtu = 256u << rnd_below(5);
    r->ca.mtu_bytes = r->cb.mtu_bytes = mtu;
    static const uint16_t every[] = {1, 4, 32, 1000};
    r->ca.ackreq_every = every[rnd_below(4)];
    r->cb.ack_every = every[rnd_below(4)];
    r->ca.replay_bytes = (uint64_t)mtu * (2 + rnd_below(31));
    r->ca.sq_depth = 1 + (uint32_t)rnd_below(128);
    r->ca.ack_timeout_ns = 30000 + rnd_below(170000);
    r->ca.retry_cnt = FE_RETRY_INFINITE; /* 20 % loss can exhaust any finite budget */
    r->ca.rnr_retry = 7;
    r->cb.min_rnr_timer = (uint8_t)(1 + rnd_below(3));
    uint32_t psn = rnd_below(2) ? (uint32_t)(FE_PSN_MASK - rnd_below(2000))
                                : (uint32_t)rnd_below(FE_PSN_MASK + 1);
    r->ca.sq_psn = r->cb.rq_psn = psn;
    r->ca.pacer_burst_bytes = 0; /* line-rate pacing, one frame of burst */
    r->cc = "none";
    if (rnd_below(2) && fe_cc_find("dcqcn")) {
        r->cc = "dcqcn";
        r->ca.cc_algo = fe_cc_find("dcqcn");
    }
    r->rq_target = 1 + (uint32_t)rnd_below(16);
    /* every third seed: the responder also sends WRITEs back (ACKs and data share its wire) */
    if (seed % 3 == 0) {
        r->nrev = nmsgs / 4;
        r->cb.mtu_bytes = mtu;
        r->cb.replay_bytes = (uint64_t)mtu * (2 + rnd_below(31));
        r->cb.ackreq_every = every[rnd_below(4)];
        r->ca.ack_every = every[rnd_below(4)];
        r->cb.sq_depth = 1 + (uint32_t)rnd_below(128);
        r->cb.ack_timeout_ns = 30000 + rnd_below(170000);
        r->cb.retry_cnt = FE_RETRY_INFINITE;
        r->cb.pacer_burst_bytes = 0;
        uint32_t psn2 = (uint32_t)(FE_PSN_MASK - rnd_below(3000));
        r->cb.sq_psn = r->ca.rq_psn = psn2;
    }
    r->refill_ns = rnd_below(2) ? 0 : 1000 + rnd_below(50000);
}

static uint64_t g_seed_first = 1, g_nseeds = 5;
static uint32_t g_msgs = 20000;

static void test_property(void **state)
{
    (void)state;
    uint8_t *src = malloc(SRC_BYTES);
    assert_non_null(src);
    rng_state = 42;
    for (uint32_t i = 0; i < SRC_BYTES; i += 8) {
        uint64_t v = rnd();
        memcpy(src + i, &v, 8);
    }
    g_src = src;
    memset(g_guard, GUARD_BYTE, sizeof g_guard);
    uint64_t total = 0;
    for (uint64_t s = g_seed_first; s < g_seed_first + g_nseeds; s++) {
        struct run r;
        setup_run(&r, s, g_msgs);
        run_one(&r);
        total += r.nmsgs;
        fflush(stdout);
    }
    pool_free();
    printf("%" PRIu64 " messages over %" PRIu64 " seeds: all completed exactly once\n", total,
           g_nseeds);
    free(src);
}

int main(int argc, char **argv)
{
    const char *env = getenv("FEROCE_LONG");
    bool long_run = env && *env && strcmp(env, "0") != 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--long")) {
            long_run = true;
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            g_seed_first = strtoull(argv[++i], NULL, 0);
            g_nseeds = 1;
        } else if (!strcmp(argv[i], "--msgs") && i + 1 < argc) {
            g_msgs = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else {
            fprintf(stderr, "usage: %s [--long] [--seed N] [--msgs N]\n", argv[0]);
            return 2;
        }
    }
    if (long_run && g_nseeds != 1) g_nseeds = 200;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_property)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
