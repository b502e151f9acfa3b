/* libFuzzer target: the front-end report decoder (what feroce eb-check reads from each
 * front-end). Properties: no crash or UB; a refusal names a reason and writes nothing; an
 * accepted report is exactly as long as its builder count says, re-encodes to the same bytes,
 * and counts no more events than were triggered. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

static uint8_t out[FE_EB_REPORT_HEADER_BYTES + FE_EB_REPORT_MAX_BUILDERS * 32];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fe_eb_report r;
    memset(&r, 0xA5, sizeof r);
    enum fe_eb_report_reason why;
    int rc = fe_eb_report_decode(data, size, &r, &why);
    if (rc != 0) {
        CHECK(why > FE_EB_R_OK && why < FE_EB_R_MAX);
        CHECK(rc == (why == FE_EB_R_SHORT ? FE_ETRUNC : FE_EPARSE));
        CHECK(r.source == 0xA5A5); /* nothing written */
        return 0;
    }
    CHECK(r.n_builders >= 1 && r.n_builders <= FE_EB_REPORT_MAX_BUILDERS);
    CHECK(size == fe_eb_report_bytes(r.n_builders));
    uint64_t left = r.triggered;
    CHECK(r.busy <= left);
    left -= r.busy;
    for (unsigned i = 0; i < r.n_builders; i++) {
        const struct fe_eb_report_builder *b = &r.b[i];
        CHECK(b->sent <= left);
        left -= b->sent;
        CHECK(b->dropped <= left);
        left -= b->dropped;
        CHECK(b->undeliverable <= left);
        left -= b->undeliverable;
    }
    CHECK(fe_eb_report_encode(out, sizeof out, &r) == 0);
    CHECK(memcmp(out, data, size) == 0);
    return 0;
}
