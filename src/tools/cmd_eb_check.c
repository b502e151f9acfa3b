/* feroce eb-check: the accounting of an event-building run on the wire. It reads the builders'
 * event indexes (fe_eb_index_reader) and data files, and the manager's assignment record (its
 * chunks as 64-byte TABLE messages, fe_eb_msg_decode), and gives every triggered event exactly
 * one final state in a ledger (fe_eb_ledger): built or incomplete as a builder recorded it (its
 * bytes verified against the pattern), lost when its builder died before recording it (no
 * FILE.done) or before it joined (a round-robin builder started late: the first_event its
 * FILE.done names), busy when no chunk assigned it. Anything else is missing; anything recorded
 * twice, at a builder it was not assigned to, or not verifying, is an error. With the front-ends'
 * reports (feroce send --eb-report, fe_eb_report_decode) it also holds each front-end's counts
 * against the builders' records: every event it triggered sent, dropped or busy once, no builder
 * holding more of its fragments than it sent, and every fragment it sent that no builder
 * recorded belonging to an event recorded without it or lost. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli.h"
#include "tools/eb_wire.h"

#define C_MAX_B    256
#define C_NO_OWNER 0xFFFFu
#define C_MAX_FILE (1ull << 36)
#define C_MAX_REP  4096

static const char usage[] =
    "usage: feroce eb-check --events K --sources N --builder FILE... [OPTIONS]\n"
    "The accounting of an event-building run: every triggered event must end in exactly one\n"
    "state: built (complete, once, at the builder it was assigned to), incomplete (missing\n"
    "sources), lost (its builder died before recording it: no FILE.done; or it came before\n"
    "the first event of a builder that joined late, the first_event of its FILE.done), or\n"
    "busy (no chunk assigned it). Every recorded byte is verified against the pattern.\n"
    "\n"
    "  --events K              events the front-ends triggered (0..K-1)\n"
    "  --sources N             front-ends\n"
    "  --builder FILE          a builder's --out (FILE, FILE.idx, FILE.done), in builder id\n"
    "                          order; repeatable\n"
    "  --earlier FILE          the --out of an earlier run of the next --builder, killed and\n"
    "                          restarted with another --out: its records count as that\n"
    "                          builder's, and that builder's unrecorded events before the\n"
    "                          restart's first record are lost; repeatable\n"
    "  --policy availability|round-robin   (availability needs --assignments)\n"
    "  --assignments FILE      the manager's --record\n"
    "  --frag-bytes N|MIN-MAX  as the front-ends (4K)\n"
    "  --report FILE           a front-end's --eb-report, to hold its counts against the\n"
    "                          builders' records; repeatable\n"
    "  --json\n"
    "\n"
    "Exit status 0 when nothing is missing, nothing came twice, every byte verified and every\n"
    "front-end's report agrees.\n";

struct c_opts {
    uint64_t events;
    uint32_t n_sources;
    const char *builder[C_MAX_B];
    unsigned n_builders;
    const char *earlier[C_MAX_B]; /* an earlier (killed) run of each builder, or NULL */
    uint8_t policy;
    const char *assignments;
    struct fe_ebw_sizes sizes;
    bool json;
    const char *report[C_MAX_REP];
    unsigned n_reports;
};

struct c_builder {
    bool alive, cut_short;
    bool restarted;        /* an earlier run of it (--earlier) left records too */
    uint64_t restart_from; /* restarted: the first event its last run recorded */
    uint64_t first_event;  /* where its ring started (round-robin, joined late): its events
                            * before were dropped by the front-ends */
    uint64_t built, incomplete, skipped, lost, records;
};

/* A front-end's report and what the builders' records say of its fragments. */
struct c_source {
    struct fe_eb_report r;
    uint64_t sent, received, dropped, undeliverable;
    uint64_t unreceived; /* sent to a live builder, not in its record (late, or lost on the wire) */
    uint64_t at_dead;    /* sent to a builder that died, not in its record */
    uint64_t errors;
};

struct checker {
    struct c_opts o;
    struct fe_eb_ledger *l;
    uint16_t *owner;
    struct c_builder b[C_MAX_B];
    uint64_t assigned[C_MAX_B]; /* triggered events assigned to each builder */
    uint64_t in_range[C_MAX_B]; /* records of triggered events at each builder */
    uint64_t *arrived;          /* [source * n_builders + builder]: fragments recorded */
    struct c_source **src;      /* [source]: its report, NULL without one */
    uint64_t source_errors;
    uint64_t verified_bytes, verify_errors, wrong_builder, conflicts, bad_files, beyond;
    uint64_t busy_unassigned;
};

static int builder_opt(const char *val, void *p)
{
    struct c_opts *o = p;
    if (o->n_builders >= C_MAX_B) {
        fprintf(stderr, "feroce eb-check: at most %d builders\n", C_MAX_B);
        return -1;
    }
    o->builder[o->n_builders++] = val;
    return 0;
}

/* --earlier FILE belongs to the --builder that follows it */
static int earlier_opt(const char *val, void *p)
{
    struct c_opts *o = p;
    if (o->n_builders >= C_MAX_B || o->earlier[o->n_builders]) {
        fprintf(stderr, "feroce eb-check: --earlier: one per builder, before its --builder\n");
        return -1;
    }
    o->earlier[o->n_builders] = val;
    return 0;
}

static int report_opt(const char *val, void *p)
{
    struct c_opts *o = p;
    if (o->n_reports >= C_MAX_REP) {
        fprintf(stderr, "feroce eb-check: at most %d reports\n", C_MAX_REP);
        return -1;
    }
    o->report[o->n_reports++] = val;
    return 0;
}

static int parse(int argc, char **argv, struct c_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sizes = (struct fe_ebw_sizes){4096, 4096};
    const struct fe_opt opts[] = {
        {FE_OPT_UINT_("--events", o->events), .min = 1, .max = 1ull << 32,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--sources", o->n_sources, FE_EB_MAX_SOURCES), .min = 1,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_FN_("--builder", builder_opt, o)},
        {FE_OPT_FN_("--earlier", earlier_opt, o)},
        {FE_OPT_FN_("--policy", fe_ebw_policy_opt, &o->policy), .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_STR_("--assignments", o->assignments)},
        {FE_OPT_FN_("--frag-bytes", fe_ebw_sizes_opt, &o->sizes)},
        {FE_OPT_FN_("--report", report_opt, o)},
        {FE_OPT_FLAG_("--json", o->json)},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {.cmd = "eb-check", .tables = tables};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    const char *why = NULL;
    if (!o->events || !o->n_sources || !o->n_builders)
        why = "--events, --sources and at least one --builder are needed";
    else if (o->n_builders < C_MAX_B && o->earlier[o->n_builders])
        why = "--earlier names the builder that follows it: a --builder is needed after it";
    else if (o->policy == FE_EB_POLICY_TABLES && !o->assignments)
        why = "the availability policy needs --assignments (the manager's --record)";
    if (!why) return 0;
    fprintf(stderr, "feroce eb-check: %s\n", why);
    return -1;
}

/* The whole file in memory (NULL and a message when it cannot be read). */
static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_size > C_MAX_FILE) {
        fprintf(stderr, "feroce eb-check: cannot read %s: %s\n", path,
                fd < 0 ? strerror(errno) : "too large");
        if (fd >= 0) close(fd);
        return NULL;
    }
    uint8_t *buf = malloc(st.st_size ? (size_t)st.st_size : 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    *len = got;
    return buf;
}

/* ---- who was each event assigned to ---- */

static void assign_rr(struct checker *c)
{
    for (uint64_t e = 0; e < c->o.events; e++) c->owner[e] = (uint16_t)(e % c->o.n_builders);
}

static void assign_run(struct checker *c, uint64_t first, const struct fe_eb_run *r)
{
    for (uint64_t e = first; e < first + r->count && e < c->o.events; e++) {
        if (r->builder >= c->o.n_builders) {
            c->conflicts++;
        } else if (c->owner[e] != C_NO_OWNER && c->owner[e] != r->builder) {
            c->conflicts++; /* chunks are append-only: one event, one builder */
        } else {
            c->owner[e] = r->builder;
        }
    }
}

static int assign_tables(struct checker *c)
{
    size_t len;
    uint8_t *buf = slurp(c->o.assignments, &len);
    if (!buf) return -1;
    int rc = 0;
    if (len % FE_EB_MSG_LEN) {
        fprintf(stderr, "feroce eb-check: %s: not a whole number of 64-byte chunks\n",
                c->o.assignments);
        rc = -1;
    }
    for (size_t off = 0; !rc && off + FE_EB_MSG_LEN <= len; off += FE_EB_MSG_LEN) {
        struct fe_eb_msg m;
        enum fe_eb_msg_reason why;
        if (fe_eb_msg_decode(buf + off, FE_EB_MSG_LEN, &m, &why) || m.type != FE_EB_MSG_TABLE) {
            fprintf(stderr, "feroce eb-check: %s: chunk at byte %zu refused (%s)\n",
                    c->o.assignments, off,
                    why != FE_EB_M_OK ? fe_eb_msg_reason_name(why) : "not a table");
            rc = -1;
            break;
        }
        uint64_t e = m.u.table.first_event;
        for (unsigned i = 0; i < m.u.table.n_runs; i++) {
            assign_run(c, e, &m.u.table.run[i]);
            e += m.u.table.run[i].count;
        }
    }
    free(buf);
    return rc;
}

/* ---- what each builder recorded ---- */

/* As fe_ebw_match_event (the arrived fragments in source order, each its source's pattern and
 * length), counting each source's fragment recorded at builder b. */
static uint32_t match_sources(struct checker *c, unsigned b, const uint8_t *buf, size_t len,
                              uint64_t event, size_t *used)
{
    size_t pos = 0;
    uint32_t n = 0;
    for (uint32_t s = 0; s < c->o.n_sources && pos < len; s++) {
        uint32_t f = fe_ebw_frag_bytes(&c->o.sizes, event, s);
        if (f > len - pos || fe_ebw_check(buf + pos, f, s, event) != f) continue;
        pos += f;
        n++;
        if (c->arrived) c->arrived[(size_t)s * c->o.n_builders + b]++;
    }
    *used = pos;
    return n;
}

static void verify_event(struct checker *c, unsigned b, const struct fe_eb_index_rec *r,
                         const uint8_t *data, size_t data_len)
{
    if (r->offset > data_len || r->bytes > data_len - r->offset) {
        c->verify_errors++; /* the index names bytes the data file does not hold */
        return;
    }
    size_t used;
    uint32_t n = match_sources(c, b, data + r->offset, r->bytes, r->event, &used);
    if (n != r->n_arrived || used != r->bytes || r->n_expected != c->o.n_sources)
        c->verify_errors++;
    else
        c->verified_bytes += r->bytes;
}

static void take_record(struct checker *c, unsigned b, const struct fe_eb_index_rec *r,
                        const uint8_t *data, size_t data_len)
{
    struct c_builder *cb = &c->b[b];
    cb->records++;
    if (r->event >= c->o.events) {
        c->beyond++;
        return;
    }
    if (r->builder != b || c->owner[r->event] != b) c->wrong_builder++;
    c->in_range[b]++;
    verify_event(c, b, r, data, data_len);
    enum fe_eb_final st = r->state == FE_EB_BUILT ? FE_EB_BUILT : FE_EB_INCOMPLETE;
    if (fe_eb_ledger_record(c->l, r->event, st, b, r->n_expected - r->n_arrived) == 0) {
        if (st == FE_EB_BUILT)
            cb->built++;
        else if (r->n_arrived == 0)
            cb->skipped++;
        else
            cb->incomplete++;
    }
}

/* The builder's summary line in FILE.done: the first event of its ring ("first_event", 0 when
 * absent: a builder that predates late joins started at the first event). */
static int read_done(struct checker *c, unsigned b, const char *path)
{
    size_t len = 0;
    uint8_t *buf = slurp(path, &len);
    if (!buf) return -1;
    char line[2048];
    size_t n = len < sizeof line - 1 ? len : sizeof line - 1;
    memcpy(line, buf, n);
    line[n] = 0;
    free(buf);
    const char *key = strstr(line, "\"first_event\":");
    if (!key) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(key + strlen("\"first_event\":"), &end, 10);
    if (errno || (*end != ',' && *end != '}')) {
        fprintf(stderr, "feroce eb-check: %s: unreadable first_event\n", path);
        return -1;
    }
    c->b[b].first_event = v;
    return 0;
}

/* One run's records of builder b (its --out base); alive: it left FILE.done. */
static int read_records(struct checker *c, unsigned b, const char *base, bool alive)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.idx", base);
    /* a builder that never came up left no record: it built nothing, its events are lost */
    if (!alive && access(path, F_OK) != 0 && access(base, F_OK) != 0) return 0;
    size_t ilen = 0, dlen = 0;
    uint8_t *idx = slurp(path, &ilen), *data = idx ? slurp(base, &dlen) : NULL;
    int rc = -1;
    struct fe_eb_index_reader rd;
    if (!data) goto out;
    int r = fe_eb_index_reader_init(&rd, idx, ilen);
    struct fe_eb_index_rec rec;
    while (r == 0 && (r = fe_eb_index_reader_next(&rd, &rec)) == 1) {
        if (rec.event < c->b[b].restart_from) c->b[b].restart_from = rec.event;
        take_record(c, b, &rec, data, dlen);
        r = 0;
    }
    /* a builder killed while writing may leave half a record: not an error for a dead one */
    if (r == FE_ETRUNC && !alive) {
        c->b[b].cut_short = true;
        r = 0;
    }
    if (r < 0)
        fprintf(stderr, "feroce eb-check: %s: index refused after %" PRIu64 " records (%s)\n", path,
                rd.records, fe_eb_index_reason_name(rd.why));
    else
        rc = 0;
out:
    free(idx);
    free(data);
    return rc;
}

/* Builder b: its earlier run's records (--earlier: killed, it may have been cut short), then
 * its last run's, whose first record says where the restart took over. */
static int read_builder(struct checker *c, unsigned b)
{
    const char *base = c->o.builder[b];
    char path[4096];
    int rc = 0;
    if (c->o.earlier[b]) {
        c->b[b].restarted = true;
        if (read_records(c, b, c->o.earlier[b], false)) rc = -1;
    }
    c->b[b].restart_from = UINT64_MAX;
    snprintf(path, sizeof path, "%s.done", base);
    c->b[b].alive = access(path, F_OK) == 0;
    if (c->b[b].alive && read_done(c, b, path)) return -1;
    if (read_records(c, b, base, c->b[b].alive)) rc = -1;
    return rc;
}

/* ---- the events nobody recorded ---- */

static void settle(struct checker *c)
{
    for (uint64_t e = 0; e < c->o.events; e++) {
        if (fe_eb_ledger_state(c->l, e) != FE_EB_NONE) continue;
        uint16_t b = c->owner[e];
        if (b == C_NO_OWNER) {
            fe_eb_ledger_record(c->l, e, FE_EB_BUSY, 0, c->o.n_sources);
            c->busy_unassigned++;
        } else if (!c->b[b].alive || e < c->b[b].first_event ||
                   (c->b[b].restarted && e < c->b[b].restart_from)) {
            /* it died with the event, or was not in the readout yet (joined later), or its
             * earlier run died with it (restarted: before the new run's first record) */
            fe_eb_ledger_record(c->l, e, FE_EB_LOST, b, c->o.n_sources);
            c->b[b].lost++;
        }
    }
}

/* ---- the front-ends' reports ---- */

static int read_report(struct checker *c, const char *path)
{
    size_t len = 0;
    uint8_t *buf = slurp(path, &len);
    if (!buf) return -1;
    struct c_source *x = calloc(1, sizeof *x);
    enum fe_eb_report_reason why = FE_EB_R_OK;
    const char *err = NULL;
    if (!x)
        err = "out of memory";
    else if (fe_eb_report_decode(buf, len, &x->r, &why))
        err = fe_eb_report_reason_name(why);
    else if (x->r.source >= c->o.n_sources)
        err = "source beyond --sources";
    else if (c->src[x->r.source])
        err = "a second report for this source";
    else if (x->r.n_builders != c->o.n_builders)
        err = "another builder count";
    free(buf);
    if (err) {
        fprintf(stderr, "feroce eb-check: %s: report refused (%s)\n", path, err);
        free(x);
        return -1;
    }
    c->src[x->r.source] = x;
    return 0;
}

/* The reports, and room to count each source's fragments at each builder. */
static int read_reports(struct checker *c)
{
    if (!c->o.n_reports) return 0;
    c->src = calloc(c->o.n_sources, sizeof *c->src);
    c->arrived = calloc((size_t)c->o.n_sources * c->o.n_builders, sizeof *c->arrived);
    if (!c->src || !c->arrived) {
        fprintf(stderr, "feroce eb-check: out of memory for the reports\n");
        return -1;
    }
    int rc = 0;
    for (unsigned i = 0; i < c->o.n_reports; i++)
        if (read_report(c, c->o.report[i])) rc = -1;
    return rc;
}

/* One front-end's fragments to builder b against b's record: it cannot hold more than were
 * sent, the front-end cannot have handled more of b's events than b was assigned, and each
 * fragment sent but not recorded, dropped or undeliverable belongs to an event b recorded
 * without this source, or lost. */
static void check_source_builder(struct checker *c, unsigned s, unsigned b)
{
    struct c_source *x = c->src[s];
    const struct fe_eb_report_builder *rb = &x->r.b[b];
    uint64_t arrived = c->arrived[(size_t)s * c->o.n_builders + b];
    uint64_t without = c->in_range[b] - arrived; /* b's records missing this source */
    x->sent += rb->sent;
    x->received += arrived;
    x->dropped += rb->dropped;
    x->undeliverable += rb->undeliverable;
    if (arrived > rb->sent) {
        x->errors++;
        return;
    }
    uint64_t gone = rb->sent - arrived;
    if (c->b[b].alive)
        x->unreceived += gone;
    else
        x->at_dead += gone;
    if (rb->sent + rb->dropped + rb->undeliverable > c->assigned[b]) x->errors++;
    if (gone + rb->dropped + rb->undeliverable > without + c->b[b].lost) x->errors++;
}

/* Every event the front-end triggered: busy, or its fragment sent, dropped or undeliverable,
 * exactly once; the run's events; an event no chunk assigned is busy at every front-end. */
static void check_source(struct checker *c, unsigned s, uint64_t unassigned)
{
    struct c_source *x = c->src[s];
    for (unsigned b = 0; b < c->o.n_builders; b++) check_source_builder(c, s, b);
    uint64_t handled = x->r.busy + x->sent + x->dropped + x->undeliverable;
    if (x->r.triggered != c->o.events || handled != x->r.triggered || x->r.busy < unassigned)
        x->errors++;
    if (x->errors) c->source_errors++;
}

static void check_sources(struct checker *c, uint64_t unassigned)
{
    if (!c->o.n_reports) return;
    for (uint64_t e = 0; e < c->o.events; e++)
        if (c->owner[e] != C_NO_OWNER) c->assigned[c->owner[e]]++;
    for (unsigned s = 0; s < c->o.n_sources; s++)
        if (c->src[s]) check_source(c, s, unassigned);
}

static void print_sources_json(const struct checker *c)
{
    printf(",\"source_errors\":%" PRIu64 ",\"sources\":[", c->source_errors);
    bool first = true;
    for (unsigned s = 0; c->src && s < c->o.n_sources; s++) {
        const struct c_source *x = c->src[s];
        if (!x) continue;
        printf("%s{\"source\":%u,\"triggered\":%" PRIu64 ",\"sent\":%" PRIu64
               ",\"received\":%" PRIu64 ",\"unreceived\":%" PRIu64 ",\"at_dead\":%" PRIu64
               ",\"dropped\":%" PRIu64 ",\"undeliverable\":%" PRIu64 ",\"src_busy\":%" PRIu64
               ",\"errors\":%" PRIu64 "}",
               first ? "" : ",", s, x->r.triggered, x->sent, x->received, x->unreceived, x->at_dead,
               x->dropped, x->undeliverable, x->r.busy, x->errors);
        first = false;
    }
    printf("]");
}

static void print_sources_text(const struct checker *c)
{
    for (unsigned s = 0; c->src && s < c->o.n_sources; s++) {
        const struct c_source *x = c->src[s];
        if (!x) continue;
        printf("  source %u: %" PRIu64 " triggered = %" PRIu64 " sent + %" PRIu64
               " dropped (builder down) + %" PRIu64 " undeliverable + %" PRIu64
               " busy; sent = %" PRIu64 " recorded + %" PRIu64 " with a dead builder + %" PRIu64
               " not recorded by a live one%s\n",
               s, x->r.triggered, x->sent, x->dropped, x->undeliverable, x->r.busy, x->received,
               x->at_dead, x->unreceived, x->errors ? "; DISAGREES WITH THE RECORDS" : "");
    }
}

static bool report(const struct checker *c)
{
    struct fe_eb_ledger_report r;
    bool ok = fe_eb_ledger_check(c->l, &r);
    ok = ok && !c->verify_errors && !c->wrong_builder && !c->conflicts && !c->beyond &&
         !c->bad_files && !c->source_errors;
    if (c->o.json) {
        printf("{\"triggered\":%" PRIu64 ",\"built\":%" PRIu64 ",\"incomplete\":%" PRIu64
               ",\"lost\":%" PRIu64 ",\"busy\":%" PRIu64 ",\"missing\":%" PRIu64
               ",\"twice\":%" PRIu64 ",\"wrong_builder\":%" PRIu64 ",\"conflicts\":%" PRIu64
               ",\"verified_bytes\":%" PRIu64 ",\"verify_errors\":%" PRIu64 ",\"builders\":[",
               r.events, r.count[FE_EB_BUILT], r.count[FE_EB_INCOMPLETE], r.count[FE_EB_LOST],
               r.count[FE_EB_BUSY], r.count[FE_EB_NONE], r.twice, c->wrong_builder, c->conflicts,
               c->verified_bytes, c->verify_errors);
        for (unsigned b = 0; b < c->o.n_builders; b++)
            printf("%s{\"builder\":%u,\"alive\":%s,\"built\":%" PRIu64 ",\"incomplete\":%" PRIu64
                   ",\"skipped\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
                   b ? "," : "", b, c->b[b].alive ? "true" : "false", c->b[b].built,
                   c->b[b].incomplete, c->b[b].skipped, c->b[b].lost);
        /* where each builder's ring started: after 0, it joined late (round-robin) */
        printf("],\"first_events\":[");
        for (unsigned b = 0; b < c->o.n_builders; b++)
            printf("%s%" PRIu64, b ? "," : "", c->b[b].first_event);
        printf("]");
        print_sources_json(c);
        printf(",\"ok\":%s}\n", ok ? "true" : "false");
        return ok;
    }
    printf("accounting: %" PRIu64 " triggered = %" PRIu64 " built + %" PRIu64
           " incomplete + %" PRIu64 " lost + %" PRIu64 " busy; missing %" PRIu64 ", twice %" PRIu64
           "\n",
           r.events, r.count[FE_EB_BUILT], r.count[FE_EB_INCOMPLETE], r.count[FE_EB_LOST],
           r.count[FE_EB_BUSY], r.count[FE_EB_NONE], r.twice);
    for (unsigned b = 0; b < c->o.n_builders; b++)
        printf("  builder %u (%s%s): built %" PRIu64 ", incomplete %" PRIu64 " (+%" PRIu64
               " never reached), lost %" PRIu64 "%s\n",
               b, c->b[b].alive ? "finished" : "died", c->b[b].cut_short ? ", index cut short" : "",
               c->b[b].built, c->b[b].incomplete, c->b[b].skipped, c->b[b].lost,
               c->b[b].first_event ? " (joined late: lost counts its events before its start)"
                                   : "");
    print_sources_text(c);
    if (r.count[FE_EB_NONE])
        printf("  first missing event: %" PRIu64 " (assigned to builder %u, which finished)\n",
               r.first_missing, c->owner[r.first_missing]);
    if (c->wrong_builder || c->conflicts || c->beyond)
        printf("  errors: %" PRIu64 " recorded at a builder they were not assigned to, %" PRIu64
               " conflicting assignments, %" PRIu64 " beyond the triggered events\n",
               c->wrong_builder, c->conflicts, c->beyond);
    if (c->bad_files)
        printf("  errors: %" PRIu64 " builder records could not be read (above)\n", c->bad_files);
    printf("data verified: %" PRIu64 " bytes, %" PRIu64 " errors\n", c->verified_bytes,
           c->verify_errors);
    printf("%s\n", ok ? "accounting holds" : "ACCOUNTING FAILED");
    return ok;
}

static int run(int argc, char **argv)
{
    struct checker *c = calloc(1, sizeof *c);
    if (!c) return 1;
    int rc = 2;
    if (parse(argc, argv, &c->o) == 0) {
        rc = 1;
        c->owner = malloc(c->o.events * sizeof *c->owner);
        if (!c->owner || fe_eb_ledger_create(&c->l, 0, c->o.events) != 0)
            fprintf(stderr, "feroce eb-check: out of memory for %" PRIu64 " events\n", c->o.events);
        else {
            memset(c->owner, 0xFF, c->o.events * sizeof *c->owner);
            int e = c->o.policy == FE_EB_POLICY_RR ? (assign_rr(c), 0) : assign_tables(c);
            if (!e) e = read_reports(c);
            for (unsigned b = 0; !e && b < c->o.n_builders; b++)
                if (read_builder(c, b)) c->bad_files++;
            if (!e) {
                settle(c);
                check_sources(c, c->busy_unassigned);
                rc = report(c) ? 0 : 1;
            }
        }
    }
    fe_eb_ledger_destroy(c->l);
    for (unsigned s = 0; c->src && s < c->o.n_sources; s++) free(c->src[s]);
    free(c->src);
    free(c->arrived);
    free(c->owner);
    free(c);
    return rc;
}

const struct fe_cmd fe_cmd_eb_check = {
    "eb-check", "event-building accounting: every event built, incomplete, lost or busy, once",
    usage, run};
