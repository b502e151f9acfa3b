/* IPv4 header: parse (with checksum and fragment checks), build, RFC 1071 checksum. */
#include "feroce/wire.h"
#include "wire/bytes.h"

#include <string.h>

uint16_t fe_ipv4_checksum(const uint8_t *hdr, size_t hdr_len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < hdr_len; i += 2) sum += fe_be16(hdr + i);
    if (hdr_len & 1) sum += (uint32_t)hdr[hdr_len - 1] << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
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
    if (fe_ipv4_checksum(p, hlen) != 0) FE_REJECT(why, FE_PR_IP_CHECKSUM);
    memset(h, 0, sizeof *h);
    h->ihl = ihl;
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
