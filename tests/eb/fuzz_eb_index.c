/* libFuzzer target: the event-index reader. Properties: no crash or UB; it stops at the first
 * bad record with a reason and stays stopped; every record it returns re-encodes to the same
 * 32 bytes, follows the previous one's data, and has consistent counts and state. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fe_eb_index_reader rd;
    int rc = fe_eb_index_reader_init(&rd, data, size);
    if (rc < 0) {
        CHECK(rd.why > FE_EB_I_OK && rd.why < FE_EB_I_MAX);
        return 0;
    }
    uint8_t hdr[FE_EB_INDEX_HEADER_BYTES];
    fe_eb_index_header(hdr);
    CHECK(memcmp(hdr, data, sizeof hdr) == 0);
    uint64_t next = 0;
    struct fe_eb_index_rec r;
    while ((rc = fe_eb_index_reader_next(&rd, &r)) == 1) {
        uint8_t out[FE_EB_INDEX_RECORD_BYTES];
        CHECK(fe_eb_index_encode(out, &r) == 0);
        CHECK(memcmp(out, data + rd.pos - FE_EB_INDEX_RECORD_BYTES, sizeof out) == 0);
        CHECK(r.offset == next);
        next = r.offset + r.bytes;
        CHECK(r.n_arrived <= r.n_expected && r.n_expected);
        CHECK((r.state == FE_EB_BUILT) == (r.n_arrived == r.n_expected));
    }
    if (rc == 0) {
        CHECK(size == FE_EB_INDEX_HEADER_BYTES + rd.records * FE_EB_INDEX_RECORD_BYTES);
    } else {
        CHECK(rd.why > FE_EB_I_OK && rd.why < FE_EB_I_MAX);
        CHECK(fe_eb_index_reader_next(&rd, &r) == rc);
    }
    return 0;
}
