/* The event index: a 16-byte header, then one 32-byte record per event written to the data
 * file, big-endian. The reader validates every field (fuzzed: tests/eb/fuzz_eb_index.c). */
#include <string.h>

#include "eb/bytes.h"
#include "feroce/eb.h"

static const uint8_t magic[7] = {'F', 'E', 'E', 'B', 'I', 'D', 'X'};
#define INDEX_VERSION 1

const char *fe_eb_index_reason_name(int r)
{
    static const char *const names[FE_EB_I_MAX] = {
        [FE_EB_I_OK] = "ok",
        [FE_EB_I_SHORT] = "truncated",
        [FE_EB_I_MAGIC] = "not an event index",
        [FE_EB_I_VERSION] = "version or record size",
        [FE_EB_I_STATE] = "state",
        [FE_EB_I_COUNTS] = "source counts",
        [FE_EB_I_OFFSET] = "offset",
        [FE_EB_I_RESERVED] = "reserved bytes",
    };
    return r >= 0 && r < FE_EB_I_MAX ? names[r] : "unknown";
}

void fe_eb_index_header(uint8_t out[FE_EB_INDEX_HEADER_BYTES])
{
    memset(out, 0, FE_EB_INDEX_HEADER_BYTES);
    memcpy(out, magic, sizeof magic);
    out[7] = INDEX_VERSION;
    eb_put32(out + 8, FE_EB_INDEX_RECORD_BYTES);
}

static enum fe_eb_index_reason check_rec(const struct fe_eb_index_rec *r)
{
    if (!r->n_expected || r->n_arrived > r->n_expected) return FE_EB_I_COUNTS;
    if (r->state == FE_EB_BUILT) return r->n_arrived == r->n_expected ? FE_EB_I_OK : FE_EB_I_STATE;
    if (r->state == FE_EB_INCOMPLETE)
        return r->n_arrived < r->n_expected ? FE_EB_I_OK : FE_EB_I_STATE;
    return FE_EB_I_STATE;
}

int fe_eb_index_encode(uint8_t out[FE_EB_INDEX_RECORD_BYTES], const struct fe_eb_index_rec *r)
{
    if (check_rec(r) != FE_EB_I_OK || r->offset > UINT64_MAX - r->bytes) return FE_EINVAL;
    memset(out, 0, FE_EB_INDEX_RECORD_BYTES);
    eb_put64(out, r->event);
    eb_put64(out + 8, r->offset);
    eb_put32(out + 16, r->bytes);
    eb_put16(out + 20, r->n_arrived);
    eb_put16(out + 22, r->n_expected);
    eb_put16(out + 24, r->builder);
    out[26] = r->state;
    return 0;
}

static int stop(struct fe_eb_index_reader *rd, enum fe_eb_index_reason why)
{
    rd->why = why;
    rd->pos = rd->len; /* stays stopped */
    return why == FE_EB_I_SHORT ? FE_ETRUNC : FE_EPARSE;
}

int fe_eb_index_reader_init(struct fe_eb_index_reader *rd, const uint8_t *buf, size_t len)
{
    memset(rd, 0, sizeof *rd);
    rd->buf = buf;
    rd->len = len;
    if (!buf || len < FE_EB_INDEX_HEADER_BYTES) return stop(rd, FE_EB_I_SHORT);
    if (memcmp(buf, magic, sizeof magic)) return stop(rd, FE_EB_I_MAGIC);
    if (buf[7] != INDEX_VERSION || eb_get32(buf + 8) != FE_EB_INDEX_RECORD_BYTES)
        return stop(rd, FE_EB_I_VERSION);
    if (eb_get32(buf + 12)) return stop(rd, FE_EB_I_RESERVED);
    rd->pos = FE_EB_INDEX_HEADER_BYTES;
    return 0;
}

int fe_eb_index_reader_next(struct fe_eb_index_reader *rd, struct fe_eb_index_rec *out)
{
    if (rd->why != FE_EB_I_OK) return rd->why == FE_EB_I_SHORT ? FE_ETRUNC : FE_EPARSE;
    if (rd->pos == rd->len) return 0;
    if (rd->len - rd->pos < FE_EB_INDEX_RECORD_BYTES) return stop(rd, FE_EB_I_SHORT);
    const uint8_t *p = rd->buf + rd->pos;
    struct fe_eb_index_rec r = {
        .event = eb_get64(p),
        .offset = eb_get64(p + 8),
        .bytes = eb_get32(p + 16),
        .n_arrived = eb_get16(p + 20),
        .n_expected = eb_get16(p + 22),
        .builder = eb_get16(p + 24),
        .state = p[26],
    };
    for (int i = 27; i < FE_EB_INDEX_RECORD_BYTES; i++)
        if (p[i]) return stop(rd, FE_EB_I_RESERVED);
    enum fe_eb_index_reason why = check_rec(&r);
    if (why != FE_EB_I_OK) return stop(rd, why);
    if (r.offset != rd->next_offset || r.offset > UINT64_MAX - r.bytes)
        return stop(rd, FE_EB_I_OFFSET);
    rd->next_offset = r.offset + r.bytes;
    rd->pos += FE_EB_INDEX_RECORD_BYTES;
    rd->records++;
    *out = r;
    return 1;
}
