/* libFuzzer target: the perftest exchange's decoders (src/io/perftest.c), which read what an
 * ib_write_bw peer sends over TCP. The input's first bytes are taken as each message in turn
 * (zero-padded when short). Properties, beyond no crash or UB:
 *  - key: accepted exactly when the 108 bytes are 23 ':'-terminated hex fields of 1..width
 *    digits then a NUL; a refused key leaves the output untouched; an accepted one re-encodes,
 *    decodes back to the same fields, and re-encodes to the very input when the input was in
 *    the canonical form (lowercase, full widths); QPN and PSN fit 24 bits;
 *  - version: accepted exactly when "DIGITS[.DIGITS]" then a NUL; the value is finite, not
 *    negative, and strtod's reading of the same text; refused leaves it untouched;
 *  - MTU: 0 (invalid) or 256..4096, a power of two, and then it re-encodes to the input;
 *  - report: decodes and re-encodes to the very input (doubles bit for bit). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "io/perftest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

static const unsigned key_width[23] = {4, 4, 6, 6, 8, 16, 2, 2, 2, 2, 2, 2,
                                       2, 2, 2, 2, 2, 2,  2, 2, 2, 2, 8};

static bool is_hex(uint8_t c, bool lower_only)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (!lower_only && c >= 'A' && c <= 'F');
}

/* The key grammar of perftest.h, written out again: full widths and lowercase when canonical,
 * 1..width digits of either case otherwise. */
static bool key_matches(const uint8_t *in, bool canonical)
{
    size_t i = 0;
    for (int f = 0; f < 23; f++) {
        unsigned n = 0;
        while (i < FE_PT_KEY_LEN && is_hex(in[i], canonical)) i++, n++;
        if (n == 0 || n > key_width[f] || (canonical && n != key_width[f])) return false;
        if (i == FE_PT_KEY_LEN || in[i] != ':') return false;
        i++;
    }
    return i < FE_PT_KEY_LEN && in[i] == 0;
}

static void check_key(const uint8_t *in)
{
    struct fe_pt_dest d, before;
    memset(&d, 0xA5, sizeof d);
    before = d;
    int rc = fe_pt_key_decode(in, &d);
    CHECK(rc == 0 || rc == FE_EPARSE);
    CHECK((rc == 0) == key_matches(in, false));
    if (rc) {
        CHECK(!memcmp(&d, &before, sizeof d));
        return;
    }
    CHECK(d.qpn <= 0xFFFFFF && d.psn <= 0xFFFFFF);
    uint8_t out[FE_PT_KEY_LEN];
    CHECK(fe_pt_key_encode(out, &d) == 0);
    CHECK(key_matches(out, true));
    CHECK((memcmp(out, in, FE_PT_KEY_LEN) == 0) == key_matches(in, true));
    struct fe_pt_dest again;
    memset(&again, 0x5A, sizeof again);
    CHECK(fe_pt_key_decode(out, &again) == 0);
    CHECK(!memcmp(&again, &d, sizeof d));
}

static bool version_matches(const uint8_t *in)
{
    size_t i = 0;
    while (i < FE_PT_VERSION_LEN && in[i] >= '0' && in[i] <= '9') i++;
    if (i == 0) return false;
    if (i < FE_PT_VERSION_LEN && in[i] == '.')
        for (i++; i < FE_PT_VERSION_LEN && in[i] >= '0' && in[i] <= '9';) i++;
    return i < FE_PT_VERSION_LEN && in[i] == 0;
}

static void check_version(const uint8_t *in)
{
    double v = -42.0;
    int rc = fe_pt_version_decode(in, &v);
    CHECK(rc == 0 || rc == FE_EPARSE);
    CHECK((rc == 0) == version_matches(in));
    if (rc) {
        CHECK(v == -42.0);
        return;
    }
    CHECK(isfinite(v) && v >= 0 && v < 1e16);
    double ref = strtod((const char *)in, NULL); /* in holds its NUL: version_matches */
    CHECK(fabs(v - ref) <= 1e-12 * (ref > 1 ? ref : 1));
}

static void check_mtu(const uint8_t *in)
{
    uint32_t mtu = fe_pt_mtu_decode(in);
    bool valid = in[0] >= '1' && in[0] <= '5' && in[1] == 0;
    CHECK((mtu != 0) == valid);
    if (!mtu) return;
    CHECK(mtu >= 256 && mtu <= 4096 && !(mtu & (mtu - 1)));
    uint8_t out[FE_PT_MTU_LEN];
    CHECK(fe_pt_mtu_encode(mtu, out) == 0);
    CHECK(!memcmp(out, in, FE_PT_MTU_LEN));
}

static void check_report(const uint8_t *in)
{
    struct fe_pt_report r;
    fe_pt_report_decode(in, &r);
    uint64_t size = 0;
    for (int i = 0; i < 8; i++) size = size << 8 | in[i];
    CHECK(r.size_bytes == size);
    uint8_t out[FE_PT_REPORT_LEN];
    fe_pt_report_encode(out, &r);
    CHECK(!memcmp(out, in, FE_PT_REPORT_LEN));
}

/* The encoders' own output is what a peer of feroce reads: it must decode. */
static void check_own_messages(void)
{
    uint8_t v[FE_PT_VERSION_LEN];
    double version = 0;
    fe_pt_version_encode(v);
    CHECK(fe_pt_version_decode(v, &version) == 0 && version >= FE_PT_MIN_VERSION);
    for (uint32_t mtu = 256; mtu <= 4096; mtu *= 2) {
        uint8_t m[FE_PT_MTU_LEN];
        CHECK(fe_pt_mtu_encode(mtu, m) == 0 && fe_pt_mtu_decode(m) == mtu);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool own_checked;
    if (!own_checked) {
        check_own_messages();
        own_checked = true;
    }
    uint8_t in[FE_PT_KEY_LEN]; /* the longest message */
    memset(in, 0, sizeof in);
    memcpy(in, data, size < sizeof in ? size : sizeof in);
    check_key(in);
    check_version(in);
    check_mtu(in);
    check_report(in);
    return 0;
}
