/* Detector-like frames (see include/feroce/frames.h). */
#include "feroce/frames.h"

#include <string.h>

#include "feroce/err.h"
#include "feroce/pattern.h"

static const uint8_t MAGIC[8] = {'F', 'E', 'D', 'A', 'Q', 'F', 'R', 'M'};

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t seed_of(uint32_t stream, uint64_t k)
{
    uint64_t s = (k + 1) * 0xD1342543DE82EF95ull ^ ((uint64_t)stream << 17) ^ 0x5DEECE66Dull;
    return s ? s : 1;
}

/* Writes the payload (out) or compares it (check); returns the first mismatch or len. */
static size_t payload(uint8_t *out, const uint8_t *check, size_t len, uint64_t seed, uint64_t *sum)
{
    uint64_t s = seed, h = 0xcbf29ce484222325ull;
    uint8_t w[8];
    for (size_t off = FE_DETFRAME_HDR; off < len; off += 8) {
        uint64_t v = xorshift(&s);
        put_le64(w, v);
        size_t n = len - off < 8 ? len - off : 8;
        if (check) {
            if (memcmp(check + off, w, n)) {
                for (size_t i = 0; i < n; i++)
                    if (check[off + i] != w[i]) return off + i;
            }
        } else {
            memcpy(out + off, w, n);
        }
        h = (h ^ v) * 0x100000001b3ull;
    }
    if (sum) *sum = h;
    return len;
}

static void header(uint8_t *h, size_t len, uint32_t stream, uint64_t k, uint64_t sum)
{
    memcpy(h, MAGIC, 8);
    put_le64(h + 8, k);
    put_le64(h + 16, (uint64_t)(uint32_t)len | ((uint64_t)stream << 32));
    put_le64(h + 24, sum);
}

void fe_detframe_fill(uint8_t *dst, size_t len, uint32_t stream, uint64_t k)
{
    if (len < FE_DETFRAME_HDR) return;
    uint64_t sum = 0;
    payload(dst, NULL, len, seed_of(stream, k), &sum);
    header(dst, len, stream, k, sum);
}

bool fe_detframe_is(const uint8_t *buf, size_t len)
{
    return len >= FE_DETFRAME_HDR && !memcmp(buf, MAGIC, 8);
}

size_t fe_detframe_check(const uint8_t *buf, size_t len, uint32_t stream, uint64_t k)
{
    if (len < FE_DETFRAME_HDR) return 0;
    uint64_t sum = 0;
    size_t bad = payload(NULL, buf, len, seed_of(stream, k), &sum);
    if (bad != len) return bad;
    uint8_t h[FE_DETFRAME_HDR];
    header(h, len, stream, k, sum);
    for (size_t i = 0; i < FE_DETFRAME_HDR; i++)
        if (h[i] != buf[i]) return i;
    return len;
}

int fe_data_pattern_parse(const char *s, enum fe_data_pattern *out)
{
    if (!strcmp(s, "counter"))
        *out = FE_PAT_COUNTER;
    else if (!strcmp(s, "frames"))
        *out = FE_PAT_FRAMES;
    else
        return FE_EINVAL;
    return 0;
}

const char *fe_data_pattern_name(enum fe_data_pattern p)
{
    return p == FE_PAT_FRAMES ? "frames" : "counter";
}

void fe_data_fill(enum fe_data_pattern p, uint8_t *dst, size_t len, uint32_t stream, uint64_t k)
{
    if (p == FE_PAT_FRAMES && len >= FE_DETFRAME_HDR)
        fe_detframe_fill(dst, len, stream, k);
    else
        fe_pattern_fill(dst, len, stream, k, 0);
}

size_t fe_data_check(const uint8_t *buf, size_t len, uint32_t stream, uint64_t k)
{
    if (fe_detframe_is(buf, len)) return fe_detframe_check(buf, len, stream, k);
    return fe_pattern_check(buf, len, stream, k, 0);
}
