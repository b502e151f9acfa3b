/* feroce verbs-recv: the DAQ receiver for servers with an RDMA NIC (ConnectX, Soft-RoCE).
 *
 * Host side of the side channel towards one or more front-ends (FPGA boards or `feroce send`):
 * per flow one RC QP and a ring of message slots in one registered region; the front-end is
 * told the QP's number, first PSN, rkey, address and IP (OPEN_QP), answers with its own QPN,
 * the QP goes INIT -> RTR -> RTS, and MODIFY_QP_RTS plus a tx-meta datagram start the stream.
 * Every WRITE with immediate (a doorbell, include/feroce/pattern.h) completes a receive: its
 * immediate must be the next doorbell's message number, and every message up to it is then
 * verified byte for byte against the counter pattern, optionally recorded, and its receive
 * re-posted. Receives are posted only for slots already consumed, so a receiver that falls
 * behind makes the sender wait (RNR NAK) instead of overwriting data. */
#include "tools/cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feroce/err.h"
#include "feroce/frames.h"
#include "feroce/pattern.h"
#include "feroce/sidechannel.h"
#include "io/txmeta.h"
#include "io/verbs.h"
#include "tools/verbs_opts.h"

#define MAX_FES       16
#define MAX_FLOWS     (MAX_FES * FE_SC_MAX_QPS)
#define MAX_LIST      16
#define MAX_RECV_WQES 1024
#define CQ_BATCH      32
#define REC_MAGIC     0x4D524546u /* "FERM" little-endian */
#define MAX_MSG_BYTES (1u << 31)
#define START_SENDS   10 /* tx-meta starts before a silent front-end fails (as recv's default) */

struct flow {
    unsigned idx;
    uint32_t fe_ip;
    uint16_t fe_port;
    struct ibv_qp *qp;
    struct fe_sc_host sc;
    struct fe_txmeta_resend start; /* the tx-meta start, resent until data shows */
    bool connected, started, done, failed, data_seen;
    /* stream description */
    uint32_t size;
    uint64_t count;
    uint32_t imm_every;
    uint64_t nslots; /* 0: one slot per message */
    uint8_t *ring;
    uint64_t ring_va, ring_bytes;
    uint32_t recv_wqes;
    /* progress */
    uint64_t next_k; /* first message not yet verified */
    uint64_t msgs, bytes, doorbells;
    uint64_t imm_out_of_order, len_errors, data_errors, cqe_errors;
    uint64_t first_ns, last_ns;
    uint64_t report_bytes; /* at the last periodic line */
    uint64_t last_settle_ns;
};

struct opts {
    const char *fe[MAX_FES];
    unsigned n_fe;
    unsigned qps;
    struct fe_verbs_opts dev;
    uint16_t reply_port;
    uint64_t sizes[MAX_LIST], counts[MAX_LIST], imm_every[MAX_LIST];
    unsigned n_sizes, n_counts, n_imm;
    uint64_t slots;
    int64_t psn; /* < 0: random */
    uint64_t gap_ns;
    bool no_start, event, quiet;
    int check; /* enum check */
    uint8_t min_rnr_timer;
    int cpu; /* -1 none, -2 auto */
    const char *record;
    uint64_t timeout_ns, duration_ns, interval_ns;
};

/* How messages are verified: the counter pattern, detector frames, whichever a message
 * carries (frames are recognised by their magic), or not at all. */
enum check { CHECK_NONE, CHECK_COUNTER, CHECK_FRAMES, CHECK_AUTO };

static const char usage[] =
    "usage: feroce verbs-recv --fe IP[:PORT] [--fe IP[:PORT] ...] [OPTIONS]\n"
    "The DAQ receiver on an RDMA NIC (ConnectX, Soft-RoCE): opens RC QPs on front-ends through\n"
    "the side channel, receives their RDMA WRITE streams into a registered ring, verifies every\n"
    "byte against the counter pattern and reports per-flow throughput. Exit code 0 when every\n"
    "flow received its count with no error and its QP is still RTS.\n"
    "  --fe IP[:PORT]       a front-end (side channel port, default 17185); repeatable (16)\n"
    "  --qps N              flows (QPs) per front-end, default 1, at most 16\n" FE_VERBS_USAGE
    "  --reply-port N       local UDP port for side channel replies (default 17186)\n"
    "  --size LIST          message bytes, e.g. 1,4097,1M (default 64K); flow i takes entry\n"
    "                       i mod the list length (so do --count and --imm-every)\n"
    "  --count LIST         messages per flow (default 1000; 0 = until stopped)\n"
    "  --imm-every LIST     doorbell period M: message k is a WRITE with immediate k when\n"
    "                       (k+1) mod M == 0 or it is the last; default 1 (every message);\n"
    "                       0 = plain WRITEs only, verified once the ring has settled\n"
    "  --slots N            ring slots per flow: message k lands in slot k mod N (the sender\n"
    "                       must use the same N; default 64, as feroce send); 0 = one slot per\n"
    "                       message (no wrap, needs a finite --count)\n"
    "  --psn N              first PSN of every flow (default random; 0xfffff0 wraps at once)\n"
    "  --gap DURATION       gap between messages asked of the front-end (default 0)\n"
    "  --no-start           no tx-meta start datagram (the front-end streams by itself)\n"
    "  --min-rnr-timer N    IB RNR timer code sent when no receive is posted (default 1)\n"
    "  --event              sleep on a completion channel instead of busy-polling the CQ\n"
    "  --cpu N|auto         pin to CPU N, or to the CPUs of the device's NUMA node\n"
    "  --record FILE        write every verified message to FILE: per message a 32-byte\n"
    "                       little-endian header (u32 magic 'FERM', u32 flow, u32 stream id,\n"
    "                       u32 bytes, u64 message number, u64 receive time ns) then the data\n"
    "  --pattern P          counter, frames (feroce send --pattern) or auto (default: each\n"
    "                       message as it looks)\n"
    "  --no-verify          count without checking the data\n"
    "  --timeout DURATION   fail when nothing arrives for this long (default 10s; 0 = never)\n"
    "  --duration DURATION  stop after this long (default: when every flow has its count)\n"
    "  --interval DURATION  per-flow throughput lines (default 1s; 0 = none)\n"
    "  --quiet              final summary only\n";

static int parse_list(const char *s, uint64_t *out, unsigned *n, bool size, const char *what)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LIST) {
            fprintf(stderr, "feroce verbs-recv: at most %d %s values\n", MAX_LIST, what);
            return -1;
        }
        if ((size ? fe_parse_size_bytes(t, &out[*n], what) : fe_parse_u64(t, &out[*n], what)))
            return -1;
        (*n)++;
    }
    return *n ? 0 : -1;
}

static int parse_ipv4(const char *s, uint32_t *ip)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1) return -1;
    *ip = ntohl(a.s_addr);
    return 0;
}

static int parse_fe(const char *s, uint32_t *ip, uint16_t *port)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *colon = strchr(buf, ':');
    *port = FE_SC_PORT;
    if (colon) {
        *colon = 0;
        uint64_t p;
        if (fe_parse_u64(colon + 1, &p, "front-end port") || !p || p > 65535) return -1;
        *port = (uint16_t)p;
    }
    return parse_ipv4(buf, ip);
}

static const char *ipstr(uint32_t ip, char *buf)
{
    snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
    return buf;
}

static int fe_arg(const char *val, void *p)
{
    struct opts *o = p;
    if (o->n_fe == MAX_FES) {
        fprintf(stderr, "feroce verbs-recv: at most %d front-ends\n", MAX_FES);
        return -1;
    }
    o->fe[o->n_fe++] = val;
    return 0;
}

static int size_opt(const char *val, void *p)
{
    struct opts *o = p;
    return parse_list(val, o->sizes, &o->n_sizes, true, "--size");
}

static int count_opt(const char *val, void *p)
{
    struct opts *o = p;
    return parse_list(val, o->counts, &o->n_counts, false, "--count");
}

static int imm_opt(const char *val, void *p)
{
    struct opts *o = p;
    return parse_list(val, o->imm_every, &o->n_imm, false, "--imm-every");
}

/* --cpu N, or auto: the CPUs of the device's NUMA node */
static int cpu_opt(const char *val, void *p)
{
    int *cpu = p;
    uint64_t v;
    if (!strcmp(val, "auto")) {
        *cpu = -2;
        return 0;
    }
    if (fe_parse_u64(val, &v, "--cpu") || v > 4095) return -1;
    *cpu = (int)v;
    return 0;
}

static int pattern_opt(const char *val, void *p)
{
    int *check = p;
    if (!strcmp(val, "counter"))
        *check = CHECK_COUNTER;
    else if (!strcmp(val, "frames"))
        *check = CHECK_FRAMES;
    else if (!strcmp(val, "auto"))
        *check = CHECK_AUTO;
    else {
        fprintf(stderr, "feroce verbs-recv: --pattern is counter, frames or auto\n");
        return -1;
    }
    return 0;
}

static void default_opts(struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->qps = 1;
    fe_verbs_opts_default(&o->dev);
    o->reply_port = FE_SC_REPLY_PORT;
    o->sizes[0] = 65536;
    o->n_sizes = 1;
    o->counts[0] = 1000;
    o->n_counts = 1;
    o->imm_every[0] = 1;
    o->n_imm = 1;
    o->slots = 64;
    o->psn = -1;
    o->check = CHECK_AUTO;
    o->min_rnr_timer = 1;
    o->cpu = -1;
    o->timeout_ns = 10000000000ull;
    o->interval_ns = 1000000000ull;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    default_opts(o);
    struct fe_opt dev[FE_VERBS_OPTS_N + 1];
    fe_verbs_opts_table(dev, &o->dev, "verbs-recv");
    const struct fe_opt opts[] = {
        {FE_OPT_FN_("--fe", fe_arg, o)},
        {FE_OPT_UINT_("--qps", o->qps), .min = 1, .max = FE_SC_MAX_QPS},
        {FE_OPT_UINT_("--reply-port", o->reply_port), .min = 1, .max = 65535},
        {FE_OPT_FN_("--size", size_opt, o)},
        {FE_OPT_FN_("--count", count_opt, o)},
        {FE_OPT_FN_("--imm-every", imm_opt, o)},
        {FE_OPT_UINT_("--slots", o->slots)},
        {FE_OPT_UINT_("--psn", o->psn), .max = 0xFFFFFF},
        {FE_OPT_TIME_("--gap", o->gap_ns), .max = UINT32_MAX},
        {FE_OPT_FLAG_("--no-start", o->no_start)},
        {FE_OPT_UINT_("--min-rnr-timer", o->min_rnr_timer), .max = 31},
        {FE_OPT_FLAG_("--event", o->event)},
        {FE_OPT_FN_("--cpu", cpu_opt, &o->cpu)},
        {FE_OPT_STR_("--record", o->record)},
        {FE_OPT_SET_("--no-verify", o->check, CHECK_NONE)},
        {FE_OPT_FN_("--pattern", pattern_opt, &o->check)},
        {FE_OPT_TIME_("--timeout", o->timeout_ns)},
        {FE_OPT_TIME_("--duration", o->duration_ns)},
        {FE_OPT_TIME_("--interval", o->interval_ns)},
        {FE_OPT_FLAG_("--quiet", o->quiet)},
        {0},
    };
    const struct fe_opt *const tables[] = {dev, opts, NULL};
    const struct fe_cli cli = {.cmd = "verbs-recv", .tables = tables, .getopt_usage = usage};
    int first = fe_cli_parse(&cli, argc, argv);
    if (first < 0) return -1;
    if (first < argc || !o->n_fe) {
        fprintf(stderr, "feroce verbs-recv: %s\n%s",
                o->n_fe ? "unexpected argument" : "at least one --fe is needed", usage);
        return -1;
    }
    return 0;
}

/* ---- per-flow stream logic ---- */

/* The message number of the next doorbell at or after next_k. */
static uint64_t next_doorbell(const struct flow *f)
{
    uint64_t m = f->imm_every;
    uint64_t d = f->next_k + (m - 1 - f->next_k % m);
    if (f->count && d >= f->count) d = f->count - 1;
    return d;
}

static uint8_t *slot_of(const struct flow *f, uint64_t k)
{
    return f->ring + fe_stream_offset(k, f->size, f->nslots);
}

static FILE *g_rec;
static bool g_rec_failed;   /* a write to the record failed: it stopped there */
static uint64_t g_rec_lost; /* messages consumed since, not in the record */
static int g_check;
static uint8_t *g_scratch; /* one message, to show what a wrong byte should have been */

static bool is_frames(const uint8_t *buf, size_t len)
{
    if (len < FE_DETFRAME_HDR) return false; /* short frames streams carry the counter */
    return g_check == CHECK_FRAMES || (g_check == CHECK_AUTO && fe_detframe_is(buf, len));
}

/* len when message k of `stream` is right, else the index of its first wrong byte. */
static size_t check_msg(const uint8_t *buf, size_t len, uint32_t stream, uint64_t k)
{
    return is_frames(buf, len) ? fe_detframe_check(buf, len, stream, k)
                               : fe_pattern_check(buf, len, stream, k, 0);
}

static void record(const struct flow *f, uint64_t k, const uint8_t *data, uint64_t now_ns)
{
    uint32_t h32[4] = {REC_MAGIC, f->idx, f->sc.remote.qpn, f->size};
    uint64_t h64[2] = {k, now_ns};
    /* the header is little-endian on every host feroce runs on (x86-64, aarch64) */
    if (fwrite(h32, sizeof h32, 1, g_rec) != 1 || fwrite(h64, sizeof h64, 1, g_rec) != 1 ||
        fwrite(data, 1, f->size, g_rec) != f->size) {
        fprintf(stderr, "feroce verbs-recv: recording failed: %s\n", strerror(errno));
        fclose(g_rec);
        g_rec = NULL;
        g_rec_failed = true;
        g_rec_lost++;
    }
}

/* Verifies (and records) messages next_k .. through. */
static void consume(struct flow *f, uint64_t through, uint64_t now_ns)
{
    for (uint64_t k = f->next_k; k <= through; k++) {
        const uint8_t *p = slot_of(f, k);
        if (g_check != CHECK_NONE) {
            size_t bad = check_msg(p, f->size, f->sc.remote.qpn, k);
            if (bad != f->size) {
                if (f->data_errors++ < 5) {
                    fe_data_fill(is_frames(p, f->size) ? FE_PAT_FRAMES : FE_PAT_COUNTER, g_scratch,
                                 f->size, f->sc.remote.qpn, k);
                    uint8_t want = g_scratch[bad];
                    fprintf(stderr,
                            "flow %u: message %" PRIu64 " byte %zu is 0x%02x, expected 0x%02x\n",
                            f->idx, k, bad, p[bad], want);
                }
            }
        }
        if (g_rec)
            record(f, k, p, now_ns);
        else if (g_rec_failed)
            g_rec_lost++;
        f->msgs++;
        f->bytes += f->size;
    }
    f->next_k = through + 1;
    f->last_ns = now_ns;
    if (f->count && f->next_k >= f->count) f->done = true;
}

static int post_recvs(struct flow *f, unsigned n)
{
    struct ibv_recv_wr wr, *bad;
    for (unsigned i = 0; i < n; i++) {
        memset(&wr, 0, sizeof wr);
        wr.wr_id = f->idx;
        wr.num_sge = 0; /* a WRITE with immediate places no data through the receive */
        int rc = ibv_post_recv(f->qp, &wr, &bad);
        if (rc) {
            fprintf(stderr, "flow %u: ibv_post_recv: %s\n", f->idx, strerror(rc));
            return -1;
        }
    }
    return 0;
}

static void on_wc(struct flow *flows, unsigned nflows, const struct ibv_wc *wc, uint64_t now_ns)
{
    if (wc->wr_id >= nflows) return;
    struct flow *f = &flows[wc->wr_id];
    if (wc->status != IBV_WC_SUCCESS) {
        if (f->cqe_errors++ < 5)
            fprintf(stderr, "flow %u: completion error %s (vendor 0x%x)\n", f->idx,
                    ibv_wc_status_str(wc->status), wc->vendor_err);
        f->failed = true;
        return;
    }
    if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc->wc_flags & IBV_WC_WITH_IMM)) {
        f->cqe_errors++;
        fprintf(stderr, "flow %u: unexpected completion opcode %d\n", f->idx, wc->opcode);
        return;
    }
    uint32_t imm = ntohl(wc->imm_data);
    if (!f->imm_every) { /* a stream announced without immediates has one */
        f->imm_out_of_order++;
        post_recvs(f, 1);
        return;
    }
    uint64_t d = next_doorbell(f);
    if (imm != (uint32_t)d) {
        /* Out of order or unexpected: take the sender's word for where it is when that lies
         * within the ring ahead of us (the pattern check then says whether the data agrees);
         * an immediate from the past or from beyond the ring names nothing we can check. */
        if (f->imm_out_of_order++ < 5)
            fprintf(stderr, "flow %u: immediate %u, expected %u\n", f->idx, imm, (uint32_t)d);
        uint64_t ahead = (uint32_t)(imm - (uint32_t)f->next_k);
        uint64_t room = f->nslots ? f->nslots : f->count - f->next_k;
        if (f->count && f->count - f->next_k < room) room = f->count - f->next_k;
        if (ahead >= room) {
            post_recvs(f, 1);
            return;
        }
        d = f->next_k + ahead;
    }
    if (wc->byte_len != f->size) f->len_errors++;
    f->doorbells++;
    consume(f, d, now_ns);
    if (!f->done || f->count == 0) post_recvs(f, 1);
}

/* Plain-WRITE streams have no completion: the ring is checked until it holds the final
 * messages (no wrap: all of them; with slots: the last nslots). */
static void settle_check(struct flow *f, uint64_t now_ns)
{
    if (f->imm_every || f->done || !f->started || !f->count) return;
    if (now_ns - f->last_settle_ns < 100000000ull) return;
    f->last_settle_ns = now_ns;
    uint64_t first = (f->nslots && f->count > f->nslots) ? f->count - f->nslots : 0;
    for (uint64_t k = first; k < f->count; k++)
        if (check_msg(slot_of(f, k), f->size, f->sc.remote.qpn, k) != f->size) return;
    f->next_k = first;
    f->msgs = first; /* overwritten messages were never observable */
    f->bytes = first * f->size;
    consume(f, f->count - 1, now_ns);
}

/* One receiver run: the device, the flows, their ring, CQ and side-channel socket, and what
 * the loop carries from one turn to the next. */
struct vrecv {
    struct opts o;
    struct fe_verbs_dev dev;
    uint32_t mtu, psn;
    struct flow *flows;
    unsigned nflows;
    uint8_t *mem;
    size_t mem_bytes;
    struct ibv_mr *mr;
    struct ibv_comp_channel *ch; /* --event */
    struct ibv_cq *cq;
    int sock;
    uint64_t t_start, last_progress, next_report, last_total, next_sc_rx;
    bool all_done;
};

/* Opens the device and pins before touching the ring, so that its pages come from the
 * device's node. */
static int open_device(struct vrecv *v)
{
    char desc[160], ipb[16];
    if (fe_verbs_opts_open("verbs-recv", &v->o.dev, &v->dev, &v->mtu)) return -1;
    int cpu = v->o.cpu;
    int prc =
        fe_verbs_pin(cpu >= 0 ? cpu : -1, cpu == -2 ? v->dev.numa_node : -1, desc, sizeof desc);
    if (prc) fprintf(stderr, "feroce verbs-recv: pinning failed (%s)\n", fe_strerror(prc));
    if (!v->o.quiet)
        printf("verbs-recv: %s port %u GID %d (%s), MTU %u, NUMA node %d, %s, %s\n", v->dev.name,
               v->dev.port, v->dev.gid_index, ipstr(v->dev.ip4, ipb), v->mtu, v->dev.numa_node,
               desc, v->o.event ? "event mode" : "busy-polling");
    return 0;
}

/* Flow i's stream (its list entries), checked, and the ring and receives it needs. */
static int describe_flow(struct vrecv *v, unsigned i)
{
    const struct opts *o = &v->o;
    struct flow *f = &v->flows[i];
    f->idx = i;
    if (parse_fe(o->fe[i / o->qps], &f->fe_ip, &f->fe_port)) {
        fprintf(stderr, "feroce verbs-recv: invalid --fe '%s'\n", o->fe[i / o->qps]);
        return -1;
    }
    uint64_t size = o->sizes[i % o->n_sizes], m = o->imm_every[i % o->n_imm];
    f->count = o->counts[i % o->n_counts];
    if (size == 0 || size > MAX_MSG_BYTES || m > UINT32_MAX) {
        fprintf(stderr, "feroce verbs-recv: flow %u: message size must be 1..%u bytes\n", i,
                MAX_MSG_BYTES);
        return -1;
    }
    f->size = (uint32_t)size;
    f->imm_every = (uint32_t)m;
    f->nslots = o->slots;
    if (!f->nslots && !f->count) {
        fprintf(stderr, "feroce verbs-recv: an unbounded stream (--count 0) needs --slots\n");
        return -1;
    }
    if (f->nslots && f->imm_every && f->nslots < 2ull * f->imm_every) {
        fprintf(stderr, "feroce verbs-recv: --slots must be at least 2 x --imm-every\n");
        return -1;
    }
    if (!f->imm_every && !f->count) {
        fprintf(stderr, "feroce verbs-recv: --imm-every 0 needs a finite --count\n");
        return -1;
    }
    f->ring_bytes = (f->nslots ? f->nslots : f->count) * f->size;
    f->ring_bytes = (f->ring_bytes + 4095) & ~4095ull;
    /* A receive stands for a doorbell the sender may complete ahead of us: at most
     * (slots / M) - 1 of them, so that a slot is never rewritten before it is verified. */
    uint64_t w = 0;
    if (f->imm_every) {
        uint64_t bells = f->count ? (f->count + f->imm_every - 1) / f->imm_every : UINT64_MAX;
        w = f->nslots ? f->nslots / f->imm_every - 1 : bells;
        if (w > MAX_RECV_WQES) w = MAX_RECV_WQES;
    }
    f->recv_wqes = (uint32_t)w;
    v->mem_bytes += f->ring_bytes;
    return 0;
}

/* All receive completions share one CQ: keep the receives within what the device allows
 * (rxe: 32767 CQEs), fewer per flow if need be (backpressure comes sooner, nothing else).
 * Returns the receives in all, or -1. */
static long fit_receives(struct vrecv *v)
{
    struct ibv_device_attr da;
    int rc = ibv_query_device(v->dev.ctx, &da);
    if (rc) { /* returns its errno */
        fprintf(stderr, "feroce verbs-recv: ibv_query_device(%s): %s\n", v->dev.name, strerror(rc));
        return -1;
    }
    unsigned cq_max = da.max_cqe > 16 ? (unsigned)da.max_cqe - 16 : 1;
    unsigned max_wr = da.max_qp_wr > 0 ? (unsigned)da.max_qp_wr : 1;
    unsigned want = 0, total = 0;
    for (unsigned i = 0; i < v->nflows; i++) want += v->flows[i].recv_wqes;
    for (unsigned i = 0; i < v->nflows; i++) {
        struct flow *f = &v->flows[i];
        uint64_t w = f->recv_wqes;
        if (want > cq_max) w = w * cq_max / want;
        if (w > max_wr) w = max_wr;
        if (f->recv_wqes && !w) w = 1;
        f->recv_wqes = (uint32_t)w;
        total += f->recv_wqes;
    }
    if (total > cq_max) {
        fprintf(stderr, "feroce verbs-recv: %u flows need more completions than %s's CQ holds\n",
                v->nflows, v->dev.name);
        return -1;
    }
    return total;
}

/* The flows, the first PSN, and the scratch message for showing wrong bytes. */
static int describe_flows(struct vrecv *v)
{
    const struct opts *o = &v->o;
    v->nflows = o->n_fe * o->qps;
    v->flows = calloc(v->nflows, sizeof *v->flows);
    if (!v->flows) return -1;
    v->psn = o->psn >= 0 ? (uint32_t)o->psn : (uint32_t)(fe_wall_ns() * 2654435761u) & 0xFFFFFF;
    uint32_t max_size = 1;
    for (unsigned i = 0; i < v->nflows; i++) {
        if (describe_flow(v, i)) return -1;
        if (v->flows[i].size > max_size) max_size = v->flows[i].size;
    }
    g_check = o->check;
    return (g_scratch = malloc(max_size)) ? 0 : -1;
}

/* The ring (every flow's slots in one registered region), the CQ and the reply socket. */
static int open_resources(struct vrecv *v, unsigned total_wqes)
{
    v->mem = mmap(NULL, v->mem_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v->mem == MAP_FAILED) {
        fprintf(stderr, "feroce verbs-recv: cannot map %zu bytes of ring\n", v->mem_bytes);
        return -1;
    }
    memset(v->mem, 0, v->mem_bytes); /* first touch on our node; and no stale pattern */
    v->mr = ibv_reg_mr(v->dev.pd, v->mem, v->mem_bytes,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!v->mr) {
        fprintf(stderr, "feroce verbs-recv: ibv_reg_mr(%zu bytes): %s (memlock limit?)\n",
                v->mem_bytes, strerror(errno));
        return -1;
    }
    if (v->o.event && !(v->ch = ibv_create_comp_channel(v->dev.ctx))) {
        fprintf(stderr, "feroce verbs-recv: ibv_create_comp_channel: %s\n", strerror(errno));
        return -1;
    }
    v->cq = ibv_create_cq(v->dev.ctx, (int)(total_wqes + 16), NULL, v->ch, 0);
    if (!v->cq) {
        fprintf(stderr, "feroce verbs-recv: ibv_create_cq: %s\n", strerror(errno));
        return -1;
    }
    int rc = v->ch ? ibv_req_notify_cq(v->cq, 0) : 0;
    if (rc) { /* returns its errno */
        fprintf(stderr, "feroce verbs-recv: ibv_req_notify_cq: %s\n", strerror(rc));
        return -1;
    }
    v->sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(v->o.reply_port)};
    if (v->sock < 0 || bind(v->sock, (struct sockaddr *)&sa, sizeof sa)) {
        fprintf(stderr, "feroce verbs-recv: UDP port %u: %s\n", v->o.reply_port, strerror(errno));
        return -1;
    }
    return 0;
}

/* What the front-end is told in OPEN_QP, and the stream a tx-meta asks of it. */
static void host_config(const struct vrecv *v, const struct flow *f, struct fe_sc_host_config *hc)
{
    fe_sc_host_config_default(hc);
    hc->fe_ip = f->fe_ip;
    hc->fe_port = f->fe_port;
    hc->reply_port = v->o.reply_port;
    hc->local.qpn = f->qp->qp_num;
    hc->local.psn = v->psn;
    hc->local.rkey = v->mr->rkey;
    hc->local.va = f->ring_va;
    hc->local.ip = v->dev.ip4;
    if (v->o.no_start) return;
    hc->start.valid = true;
    hc->start.start = true;
    hc->start.write = true;
    hc->start.immediate = f->imm_every != 0;
    hc->start.msg_len_bytes = f->size;
    hc->start.msg_count = (uint32_t)(f->count > UINT32_MAX ? 0 : f->count);
    hc->start.gap = (uint32_t)v->o.gap_ns;
}

/* Flow i's QP with its receives posted, and its OPEN_QP under way. */
static int open_flow(struct vrecv *v, unsigned i, uint8_t *ring)
{
    char ipb[16];
    struct flow *f = &v->flows[i];
    f->ring = ring;
    f->ring_va = (uint64_t)(uintptr_t)ring;
    struct ibv_qp_init_attr qa;
    memset(&qa, 0, sizeof qa);
    qa.send_cq = v->cq;
    qa.recv_cq = v->cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = 1;
    qa.cap.max_recv_wr = f->recv_wqes ? f->recv_wqes : 1;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    f->qp = ibv_create_qp(v->dev.pd, &qa);
    if (!f->qp ||
        fe_verbs_qp_init(f->qp, &v->dev, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE)) {
        fprintf(stderr, "feroce verbs-recv: flow %u: cannot create the QP: %s\n", i,
                strerror(errno));
        return -1;
    }
    if (post_recvs(f, f->recv_wqes)) return -1;
    struct fe_sc_host_config hc;
    host_config(v, f, &hc);
    if (fe_sc_host_init(&f->sc, &hc) || fe_sc_host_open(&f->sc, v->t_start)) return -1;
    if (!v->o.quiet)
        printf("flow %u: QP %u, PSN 0x%06x, %u B x %" PRIu64 ", doorbell every %u, ring %" PRIu64
               " B at 0x%" PRIx64 " rkey 0x%x, front-end %s:%u\n",
               i, f->qp->qp_num, v->psn, f->size, f->count, f->imm_every, f->ring_bytes, f->ring_va,
               v->mr->rkey, ipstr(f->fe_ip, ipb), f->fe_port);
    return 0;
}

/* Everything up to the first side-channel datagram, and the record file. */
static int setup_receiver(struct vrecv *v)
{
    long total_wqes;
    if (describe_flows(v) || (total_wqes = fit_receives(v)) < 0 ||
        open_resources(v, (unsigned)total_wqes))
        return -1;
    uint8_t *p = v->mem;
    v->t_start = fe_wall_ns();
    for (unsigned i = 0; i < v->nflows; i++) {
        if (open_flow(v, i, p)) return -1;
        p += v->flows[i].ring_bytes;
    }
    fflush(stdout);
    g_rec_failed = false;
    g_rec_lost = 0;
    if (v->o.record && !(g_rec = fopen(v->o.record, "wb"))) {
        fprintf(stderr, "feroce verbs-recv: %s: %s\n", v->o.record, strerror(errno));
        return -1;
    }
    return 0;
}

static void sc_send(const struct vrecv *v, const struct flow *f, const uint8_t *msg)
{
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(f->fe_port), .sin_addr.s_addr = htonl(f->fe_ip)};
    if (sendto(v->sock, msg, FE_SC_MSG_LEN, 0, (struct sockaddr *)&to, sizeof to) < 0)
        fprintf(stderr, "flow %u: side channel send: %s\n", f->idx, strerror(errno));
}

/* Whether the stream has reached the flow's ring: a completion, or a byte other than zero at
 * its start (the ring starts zeroed; the counter pattern and detector frames put non-zero bytes
 * in the first 8 of a message; a stream of zeros shows by its completions only). */
static bool check_data_seen(struct flow *f)
{
    if (f->data_seen) return true;
    const volatile uint8_t *p = f->ring; /* written by the NIC, not by this program */
    uint64_t n = f->ring_bytes < 256 ? f->ring_bytes : 256;
    bool any = f->doorbells || f->imm_out_of_order || f->cqe_errors;
    for (uint64_t j = 0; !any && j < n; j++) any = p[j] != 0;
    f->data_seen = any;
    return any;
}

/* A front-end acknowledges no tx-meta start (the firmware neither): a lost one would stall the
 * flow for good, so it goes again (txmeta.c) until the stream's data shows, and never after it
 * (the firmware starts a transfer that has ended all over again). */
static void start_watch(struct flow *f, uint64_t now)
{
    bool awaited = !f->done && !check_data_seen(f);
    uint64_t first_wait = f->sc.cfg.retry_timeout_ns + 8ull * f->sc.cfg.start.gap;
    if (fe_txmeta_start_watch(&f->start, &f->sc, awaited, first_wait, START_SENDS, now) !=
        FE_TXMETA_GIVE_UP)
        return;
    char ipb[16];
    fprintf(stderr,
            "flow %u: front-end %s:%u sent nothing after %u tx-meta starts (it does not "
            "acknowledge them)\n",
            f->idx, ipstr(f->fe_ip, ipb), f->fe_port, f->start.sends);
    f->failed = true;
}

/* Side channel out: every flow's due datagrams; a flow whose side channel failed fails. */
static void sc_output(struct vrecv *v, uint64_t now)
{
    for (unsigned i = 0; i < v->nflows; i++) {
        struct flow *f = &v->flows[i];
        uint8_t msg[FE_SC_MSG_LEN];
        start_watch(f, now);
        while (fe_sc_host_poll_tx(&f->sc, now, msg)) sc_send(v, f, msg);
        if (f->sc.state == FE_SC_H_FAILED && !f->failed) {
            fprintf(stderr, "flow %u: side channel failed (%s)\n", i,
                    f->sc.timed_out ? "no answer" : fe_sc_ack_name(f->sc.fail_ack));
            f->failed = true;
        }
    }
}

/* The front-end's QPN is known: RTR/RTS before telling it to send. */
static void connect_flow(struct vrecv *v, struct flow *f)
{
    char err[256];
    struct fe_verbs_peer peer = {.qpn = f->sc.remote.qpn,
                                 .ip4 = f->fe_ip,
                                 .rq_psn = v->psn,
                                 .sq_psn = v->psn,
                                 .mtu_bytes = v->mtu,
                                 .min_rnr_timer = v->o.min_rnr_timer,
                                 .timeout = 14,
                                 .retry_cnt = 7,
                                 .rnr_retry = 7};
    if (fe_verbs_qp_connect(f->qp, &v->dev, &peer, err, sizeof err)) {
        fprintf(stderr, "flow %u: %s\n", f->idx, err);
        f->failed = true;
        fe_cli_signals = 1;
    }
    f->connected = true;
    if (!v->o.quiet) printf("flow %u: connected to front-end QP %u\n", f->idx, f->sc.remote.qpn);
}

/* A side-channel datagram for the flow whose QP it names. */
static void sc_deliver(struct vrecv *v, uint64_t now, const struct fe_sc_msg *m,
                       const struct sockaddr_in *from)
{
    enum fe_sc_reason why;
    for (unsigned i = 0; i < v->nflows; i++) {
        struct flow *f = &v->flows[i];
        if (f->qp->qp_num != m->rem.qpn) continue;
        fe_sc_host_input_msg(&f->sc, now, m, ntohl(from->sin_addr.s_addr), ntohs(from->sin_port),
                             &why);
        if (f->sc.state == FE_SC_H_MODIFYING && !f->connected) connect_flow(v, f);
        if (f->sc.state == FE_SC_H_RTS && !f->started) {
            f->started = true;
            f->first_ns = f->last_ns = now;
        }
        return;
    }
}

/* Side channel in: a system call, so at most every millisecond when busy-polling. */
static void sc_input(struct vrecv *v, uint64_t now)
{
    for (bool sc_due = v->ch || now >= v->next_sc_rx; sc_due;) {
        v->next_sc_rx = now + 1000000;
        uint8_t buf[256];
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(v->sock, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        if (n < 0) break;
        struct fe_sc_msg m;
        enum fe_sc_reason why;
        if (fe_sc_decode(buf, (size_t)n, &m, &why)) {
            fprintf(stderr, "side channel: refused a datagram (%s)\n", fe_sc_reason_name(why));
            continue;
        }
        sc_deliver(v, now, &m, &from);
    }
}

/* Every completion there is: -1 when the CQ failed. */
static int poll_completions(struct vrecv *v, uint64_t *now)
{
    struct ibv_wc wc[CQ_BATCH];
    int n;
    while ((n = ibv_poll_cq(v->cq, CQ_BATCH, wc)) > 0) {
        *now = fe_wall_ns();
        for (int i = 0; i < n; i++) on_wc(v->flows, v->nflows, &wc[i], *now);
    }
    if (n < 0) {
        fprintf(stderr, "feroce verbs-recv: ibv_poll_cq failed\n");
        return -1;
    }
    return 0;
}

/* Settles plain-WRITE flows and sees whether to stop: every flow done, one failed, nothing
 * arrived for --timeout, or --duration is over. */
static bool should_stop(struct vrecv *v, uint64_t now)
{
    uint64_t total = 0;
    bool any_failed = false;
    v->all_done = true;
    for (unsigned i = 0; i < v->nflows; i++) {
        settle_check(&v->flows[i], now);
        total += v->flows[i].bytes;
        v->all_done &= v->flows[i].done;
        any_failed |= v->flows[i].failed;
    }
    if (v->all_done || any_failed) return true;
    if (total != v->last_total) {
        v->last_total = total;
        v->last_progress = now;
    }
    if (v->o.timeout_ns && now - v->last_progress > v->o.timeout_ns) {
        fprintf(stderr, "feroce verbs-recv: nothing for %.1f s, giving up\n",
                (double)v->o.timeout_ns / 1e9);
        return true;
    }
    return v->o.duration_ns && now - v->t_start > v->o.duration_ns;
}

static void print_progress(struct vrecv *v, uint64_t now)
{
    double dt = (double)(v->o.interval_ns) / 1e9;
    for (unsigned i = 0; !v->o.quiet && i < v->nflows; i++) {
        struct flow *f = &v->flows[i];
        printf("t=%.1fs flow %u: %.3f Gb/s, %" PRIu64 " messages, %" PRIu64 " errors\n",
               (double)(now - v->t_start) / 1e9, i,
               (double)(f->bytes - f->report_bytes) * 8 / dt / 1e9, f->msgs,
               f->data_errors + f->len_errors + f->imm_out_of_order + f->cqe_errors);
        f->report_bytes = f->bytes;
    }
    fflush(stdout);
    v->next_report += v->o.interval_ns;
    if (v->next_report < now) v->next_report = now + v->o.interval_ns;
}

/* --event: sleep until a completion, a datagram or the next deadline. */
static void wait_event(struct vrecv *v, uint64_t now)
{
    uint64_t wake = v->next_report;
    for (unsigned i = 0; i < v->nflows; i++) {
        uint64_t d = fe_sc_host_next_deadline(&v->flows[i].sc);
        if (d < wake) wake = d;
        d = fe_txmeta_resend_deadline(&v->flows[i].start);
        if (d < wake) wake = d;
    }
    int ms = wake <= now ? 0 : (int)((wake - now) / 1000000 + 1);
    if (ms > 100) ms = 100; /* settle checks and the timeout */
    struct pollfd pf[2] = {{.fd = v->ch->fd, .events = POLLIN}, {.fd = v->sock, .events = POLLIN}};
    if (poll(pf, 2, ms) > 0 && (pf[0].revents & POLLIN)) {
        struct ibv_cq *ecq;
        void *ectx;
        if (!ibv_get_cq_event(v->ch, &ecq, &ectx)) {
            ibv_ack_cq_events(ecq, 1);
            ibv_req_notify_cq(ecq, 0); /* re-arm, then the loop polls it empty */
        }
    }
}

static void run_loop(struct vrecv *v)
{
    fe_cli_catch_stop_signals();
    v->last_progress = v->t_start;
    v->next_report = v->t_start + v->o.interval_ns;
    while (!fe_cli_signals) {
        uint64_t now = fe_wall_ns();
        sc_output(v, now);
        sc_input(v, now);
        if (poll_completions(v, &now) || should_stop(v, now)) break;
        if (v->o.interval_ns && now >= v->next_report) print_progress(v, now);
        if (v->ch) wait_event(v, now);
    }
}

/* The record's last buffered messages are written now: a failure here loses them too. */
static void close_record(void)
{
    if (g_rec && (ferror(g_rec) | fclose(g_rec))) {
        fprintf(stderr, "feroce verbs-recv: recording failed: %s (the record's end is missing)\n",
                strerror(errno));
        g_rec_failed = true;
    }
    g_rec = NULL;
}

/* Flow i's line; false when it has errors or its QP left RTS. */
static bool print_flow(const struct vrecv *v, unsigned i, uint64_t *sum_bytes, uint64_t *sum_err)
{
    char ipb[16];
    const struct flow *f = &v->flows[i];
    enum ibv_qp_state st = fe_verbs_qp_state(f->qp);
    uint64_t errs = f->data_errors + f->len_errors + f->imm_out_of_order + f->cqe_errors;
    double secs = f->last_ns > f->first_ns ? (double)(f->last_ns - f->first_ns) / 1e9 : 0;
    printf("flow %u: fe=%s fe_qpn=%u qpn=%u size=%u msgs=%" PRIu64 " bytes=%" PRIu64
           " doorbells=%" PRIu64 " imm_out_of_order=%" PRIu64 " len_errors=%" PRIu64
           " data_errors=%" PRIu64 " cqe_errors=%" PRIu64 " qp_state=%s gbps=%.3f%s\n",
           i, ipstr(f->fe_ip, ipb), f->sc.remote.qpn, f->qp->qp_num, f->size, f->msgs, f->bytes,
           f->doorbells, f->imm_out_of_order, f->len_errors, f->data_errors, f->cqe_errors,
           fe_verbs_qp_state_name(st), secs > 0 ? (double)f->bytes * 8 / secs / 1e9 : 0.0,
           f->done ? "" : " INCOMPLETE");
    *sum_bytes += f->bytes;
    *sum_err += errs;
    return errs == 0 && st == IBV_QPS_RTS && !f->failed;
}

/* Every flow's line and the verdict: 0 when every flow has its count, whole and verified. */
static int print_summary(const struct vrecv *v)
{
    uint64_t sum_bytes = 0, sum_err = 0;
    bool ok = v->all_done && !g_rec_failed;
    for (unsigned i = 0; i < v->nflows; i++) ok &= print_flow(v, i, &sum_bytes, &sum_err);
    if (g_rec_lost)
        printf("verbs-recv: the record misses at least the last %" PRIu64
               " messages (a write failed)\n",
               g_rec_lost);
    else if (g_rec_failed)
        printf("verbs-recv: the record's end is missing (its last write failed)\n");
    printf("verbs-recv: %s: %" PRIu64 " bytes %s in %u flows, %" PRIu64 " errors\n",
           ok ? "OK" : "FAILED", sum_bytes, v->o.check != CHECK_NONE ? "verified" : "received",
           v->nflows, sum_err);
    return ok ? 0 : 1;
}

/* One turn of closing: sends what is due, takes one answer; false when none is pending. */
static bool close_turn(struct vrecv *v)
{
    bool pending = false;
    uint64_t now = fe_wall_ns();
    for (unsigned i = 0; i < v->nflows; i++) {
        uint8_t msg[FE_SC_MSG_LEN];
        struct flow *f = &v->flows[i];
        if (f->sc.state != FE_SC_H_CLOSING) continue;
        pending = true;
        while (fe_sc_host_poll_tx(&f->sc, now, msg)) {
            struct sockaddr_in to = {.sin_family = AF_INET,
                                     .sin_port = htons(f->fe_port),
                                     .sin_addr.s_addr = htonl(f->fe_ip)};
            sendto(v->sock, msg, sizeof msg, 0, (struct sockaddr *)&to, sizeof to);
        }
    }
    if (!pending) return false;
    uint8_t buf[256];
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    struct pollfd pf = {.fd = v->sock, .events = POLLIN};
    if (poll(&pf, 1, 20) <= 0) return true;
    ssize_t n = recvfrom(v->sock, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
    struct fe_sc_msg m;
    enum fe_sc_reason why;
    if (n < 0 || fe_sc_decode(buf, (size_t)n, &m, &why)) return true;
    for (unsigned i = 0; i < v->nflows; i++)
        if (v->flows[i].qp->qp_num == m.rem.qpn)
            fe_sc_host_input_msg(&v->flows[i].sc, now, &m, ntohl(from.sin_addr.s_addr),
                                 ntohs(from.sin_port), &why);
    return true;
}

/* Free the front-ends' QPs (best effort: a second, then give up). */
static void close_front_ends(struct vrecv *v)
{
    for (unsigned i = 0; i < v->nflows; i++)
        if (v->flows[i].sc.state == FE_SC_H_RTS || v->flows[i].sc.state == FE_SC_H_MODIFYING)
            fe_sc_host_close(&v->flows[i].sc, fe_wall_ns());
    for (uint64_t end = fe_wall_ns() + 1000000000ull; fe_wall_ns() < end;)
        if (!close_turn(v)) break;
}

static void free_receiver(struct vrecv *v)
{
    if (g_rec) fclose(g_rec);
    g_rec = NULL;
    free(g_scratch);
    g_scratch = NULL;
    if (v->flows)
        for (unsigned i = 0; i < v->nflows; i++)
            if (v->flows[i].qp) ibv_destroy_qp(v->flows[i].qp);
    if (v->cq) ibv_destroy_cq(v->cq);
    if (v->ch) ibv_destroy_comp_channel(v->ch);
    if (v->mr) ibv_dereg_mr(v->mr);
    if (v->mem != MAP_FAILED) munmap(v->mem, v->mem_bytes);
    if (v->sock >= 0) close(v->sock);
    free(v->flows);
    fe_verbs_close(&v->dev);
}

static int run(int argc, char **argv)
{
    struct vrecv v = {.mem = MAP_FAILED, .sock = -1};
    if (parse_opts(argc, argv, &v.o)) return 2;
    if (open_device(&v)) return 1;
    int rc = 1;
    if (!setup_receiver(&v)) {
        run_loop(&v);
        close_record();
        rc = print_summary(&v);
        close_front_ends(&v);
    }
    free_receiver(&v);
    fflush(stdout);
    return rc;
}

const struct fe_cmd fe_cmd_verbs_recv = {
    "verbs-recv", "DAQ receiver on an RDMA NIC (libibverbs): side channel, verify, record", usage,
    run};
