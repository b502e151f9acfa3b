/* A front-end's report: its counts of what it did with each triggered event, read by
 * feroce eb-check. Big-endian, fixed size; the decoder validates every field (fuzzed:
 * tests/eb/fuzz_eb_report.c). */
#include <string.h>

#include "eb/bytes.h"
#include "feroce/eb.h"

static const uint8_t magic[7] = {'F', 'E', 'E', 'B', 'S', 'R', 'C'};
#define REPORT_VERSION 1

const char *fe_eb_report_reason_name(int r)
{
    static const char *const names[FE_EB_R_MAX] = {
        [FE_EB_R_OK] = "ok",
        [FE_EB_R_SHORT] = "truncated",
        [FE_EB_R_LONG] = "bytes after the last record",
        [FE_EB_R_MAGIC] = "not a front-end report",
        [FE_EB_R_VERSION] = "version or record size",
        [FE_EB_R_BUILDERS] = "builder count",
        [FE_EB_R_COUNTS] = "more events counted than triggered",
        [FE_EB_R_RESERVED] = "reserved bytes",
    };
    return r >= 0 && r < FE_EB_R_MAX ? names[r] : "unknown";
}

size_t fe_eb_report_bytes(uint16_t n_builders)
{
    return FE_EB_REPORT_HEADER_BYTES + (size_t)n_builders * FE_EB_REPORT_BUILDER_BYTES;
}

/* Adds v to *sum; false past limit (so no sum of counts can wrap). */
static bool add_within(uint64_t *sum, uint64_t v, uint64_t limit)
{
    if (v > limit - *sum) return false;
    *sum += v;
    return true;
}

static enum fe_eb_report_reason check_counts(const struct fe_eb_report *r)
{
    if (!r->n_builders || r->n_builders > FE_EB_REPORT_MAX_BUILDERS) return FE_EB_R_BUILDERS;
    uint64_t sum = 0;
    bool ok = add_within(&sum, r->busy, r->triggered);
    for (unsigned i = 0; ok && i < r->n_builders; i++) {
        const struct fe_eb_report_builder *b = &r->b[i];
        ok = add_within(&sum, b->sent, r->triggered) &&
             add_within(&sum, b->dropped, r->triggered) &&
             add_within(&sum, b->undeliverable, r->triggered);
    }
    return ok ? FE_EB_R_OK : FE_EB_R_COUNTS;
}

int fe_eb_report_encode(uint8_t *out, size_t cap, const struct fe_eb_report *r)
{
    if (check_counts(r) != FE_EB_R_OK) return FE_EINVAL;
    size_t len = fe_eb_report_bytes(r->n_builders);
    if (cap < len) return FE_ENOSPC;
    memset(out, 0, len);
    memcpy(out, magic, sizeof magic);
    out[7] = REPORT_VERSION;
    eb_put16(out + 8, r->source);
    eb_put16(out + 10, r->n_builders);
    eb_put32(out + 12, FE_EB_REPORT_BUILDER_BYTES);
    eb_put64(out + 16, r->triggered);
    eb_put64(out + 24, r->busy);
    for (unsigned i = 0; i < r->n_builders; i++) {
        uint8_t *p = out + fe_eb_report_bytes((uint16_t)i);
        eb_put64(p, r->b[i].sent);
        eb_put64(p + 8, r->b[i].dropped);
        eb_put64(p + 16, r->b[i].undeliverable);
    }
    return 0;
}

static int refuse(enum fe_eb_report_reason r, enum fe_eb_report_reason *why)
{
    *why = r;
    return r == FE_EB_R_SHORT ? FE_ETRUNC : FE_EPARSE;
}

static enum fe_eb_report_reason check_header(const uint8_t *buf, size_t len)
{
    if (!buf || len < FE_EB_REPORT_HEADER_BYTES) return FE_EB_R_SHORT;
    if (memcmp(buf, magic, sizeof magic)) return FE_EB_R_MAGIC;
    if (buf[7] != REPORT_VERSION || eb_get32(buf + 12) != FE_EB_REPORT_BUILDER_BYTES)
        return FE_EB_R_VERSION;
    uint16_t n = eb_get16(buf + 10);
    if (!n || n > FE_EB_REPORT_MAX_BUILDERS) return FE_EB_R_BUILDERS;
    if (len < fe_eb_report_bytes(n)) return FE_EB_R_SHORT;
    if (len > fe_eb_report_bytes(n)) return FE_EB_R_LONG;
    return FE_EB_R_OK;
}

int fe_eb_report_decode(const uint8_t *buf, size_t len, struct fe_eb_report *r,
                        enum fe_eb_report_reason *why)
{
    *why = check_header(buf, len);
    if (*why != FE_EB_R_OK) return refuse(*why, why);
    struct fe_eb_report d = {
        .source = eb_get16(buf + 8),
        .n_builders = eb_get16(buf + 10),
        .triggered = eb_get64(buf + 16),
        .busy = eb_get64(buf + 24),
    };
    for (unsigned i = 0; i < d.n_builders; i++) {
        const uint8_t *p = buf + fe_eb_report_bytes((uint16_t)i);
        for (int k = 24; k < FE_EB_REPORT_BUILDER_BYTES; k++)
            if (p[k]) return refuse(FE_EB_R_RESERVED, why);
        d.b[i] = (struct fe_eb_report_builder){eb_get64(p), eb_get64(p + 8), eb_get64(p + 16)};
    }
    enum fe_eb_report_reason c = check_counts(&d);
    if (c != FE_EB_R_OK) return refuse(c, why);
    *r = d;
    return 0;
}
