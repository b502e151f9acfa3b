/* IPv4 header: parse (with checksum and fragment checks), build, RFC 1071 checksum. */
#include "feroce/wire.h"
#include "wire/bytes.h"

#include <string.h>

/* The one's-complement sum does not depend on byte order (RFC 1071): summed in native 32-bit
 * words, folded, and swapped to network order once at the end, instead of one load and swap
 * per 16-bit word (this runs on every received IPv4 frame). */
uint16_t fe_ipv4_checksum(const uint8_t *hdr, size_t hdr_len)
{
    uint64_t sum = 0;
    size_t i = 0;
    for (; i + 4 <= hdr_len; i += 4) {
        uint32_t w;
        memcpy(&w, hdr + i, 4);
        sum += w;
    }
    if (i + 2 <= hdr_len) {
        uint16_t w;
        memcpy(&w, hdr + i, 2);
        sum += w;
        i += 2;
    }
    if (i < hdr_len) { /* a lone last byte is the high half of a big-endian word */
        uint8_t w[2] = {hdr[i], 0};
        uint16_t v;
        memcpy(&v, w, 2);
        sum += v;
    }
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffffffu) + (sum >> 32);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    uint16_t c = (uint16_t)~sum, be;
    uint8_t b[2];
    memcpy(b, &c, 2);
    be = (uint16_t)(b[0] << 8 | b[1]); /* native order to the value of the big-endian bytes */
    return be;
}

/* Whether a 20-byte header (no options) sums to 0xFFFF in one's complement, i.e. its checksum
 * verifies: the common header without fe_ipv4_checksum's loops (this runs on every received
 * IPv4 frame). Native 32-bit words, as there; a zero sum is not all ones, so an all-zero header
 * fails as it does there. */
static inline bool sum20_is_ones(const uint8_t *p)
{
    /* Word by word: a 20-byte copy to the stack read back in words stalls store forwarding. */
    uint32_t w0, w1, w2, w3, w4;
    memcpy(&w0, p, 4);
    memcpy(&w1, p + 4, 4);
    memcpy(&w2, p + 8, 4);
    memcpy(&w3, p + 12, 4);
    memcpy(&w4, p + 16, 4);
    uint64_t s = (uint64_t)w0 + w1 + w2 + w3 + w4; /* < 2^35 */
    s = (s & 0xffffffffu) + (s >> 32);             /* < 2^32 + 8 */
    s = (s & 0xffffffffu) + (s >> 32);             /* < 2^32 */
    s = (s & 0xffff) + (s >> 16);                  /* < 2^17 */
    s = (s & 0xffff) + (s >> 16);                  /* <= 0xffff + 1 */
    s = (s & 0xffff) + (s >> 16);                  /* <= 0xffff */
    return s == 0xffff;
}

size_t fe_ipv4_parse(const uint8_t *p, size_t len, struct fe_ipv4 *h, enum fe_parse_reason *why)
{
    if (len < FE_IPV4_HDR_LEN) FE_REJECT(why, FE_PR_IP_SHORT);
    if (p[0] >> 4 != 4) FE_REJECT(why, FE_PR_IP_VERSION);
    uint8_t ihl = p[0] & 0x0f;
    if (ihl < 5) FE_REJECT(why, FE_PR_IP_IHL);
    size_t hlen = (size_t)ihl * 4;
    if (len < hlen) FE_REJECT(why, FE_PR_IP_SHORT);
    uint16_t total = fe_be16(p + 2);
    if (total < hlen || total > len) FE_REJECT(why, FE_PR_IP_LEN);
    uint16_t frag = fe_be16(p + 6);
    /* MF set or a non-zero offset: RoCE never fragments (it sends DF) and we never reassemble. */
    if (frag & 0x3fff) FE_REJECT(why, FE_PR_IP_FRAGMENT);
    if (!(hlen == FE_IPV4_HDR_LEN ? sum20_is_ones(p) : fe_ipv4_checksum(p, hlen) == 0))
        FE_REJECT(why, FE_PR_IP_CHECKSUM);
    h->ihl = ihl; /* every member assigned: no memset first (see fe_bth_parse) */
    h->dscp = p[1] >> 2;
    h->ecn = p[1] & 3;
    h->total_len = total;
    h->id = fe_be16(p + 4);
    h->frag = frag;
    h->ttl = p[8];
    h->protocol = p[9];
    h->checksum = fe_be16(p + 10);
    h->src = fe_be32(p + 12);
    h->dst = fe_be32(p + 16);
    if (why) *why = FE_PR_OK;
    return hlen;
}

/* Writes a 20-byte header (no options; ihl is ignored) and fills the checksum. */
size_t fe_ipv4_write(uint8_t *p, size_t cap, const struct fe_ipv4 *h)
{
    if (cap < FE_IPV4_HDR_LEN) return 0;
    p[0] = 0x45;
    p[1] = (uint8_t)((h->dscp & 0x3f) << 2 | (h->ecn & 3));
    fe_put16(p + 2, h->total_len);
    fe_put16(p + 4, h->id);
    fe_put16(p + 6, h->frag);
    p[8] = h->ttl;
    p[9] = h->protocol;
    fe_put16(p + 10, 0);
    fe_put32(p + 12, h->src);
    fe_put32(p + 16, h->dst);
    fe_put16(p + 10, fe_ipv4_checksum(p, FE_IPV4_HDR_LEN));
    return FE_IPV4_HDR_LEN;
}
