/* IPv6 fixed header. Extension headers are not followed: RoCEv2 puts UDP right after it. */
#include "feroce/wire.h"
#include "wire/bytes.h"

#include <string.h>

size_t fe_ipv6_parse(const uint8_t *p, size_t len, struct fe_ipv6 *h, enum fe_parse_reason *why)
{
    if (len < FE_IPV6_HDR_LEN) FE_REJECT(why, FE_PR_IP_SHORT);
    uint32_t w0 = fe_be32(p);
    if (w0 >> 28 != 6) FE_REJECT(why, FE_PR_IP_VERSION);
    uint16_t plen = fe_be16(p + 4);
    /* plen 0 would be a jumbogram (hop-by-hop option), never RoCE. */
    if (plen == 0 || plen > len - FE_IPV6_HDR_LEN) FE_REJECT(why, FE_PR_IP_LEN);
    memset(h, 0, sizeof *h);
    uint8_t tc = (uint8_t)(w0 >> 20);
    h->dscp = tc >> 2;
    h->ecn = tc & 3;
    h->flow_label = w0 & 0xfffff;
    h->payload_len = plen;
    h->next_header = p[6];
    h->hop_limit = p[7];
    memcpy(h->src, p + 8, 16);
    memcpy(h->dst, p + 24, 16);
    if (why) *why = FE_PR_OK;
    return FE_IPV6_HDR_LEN;
}

size_t fe_ipv6_write(uint8_t *p, size_t cap, const struct fe_ipv6 *h)
{
    if (cap < FE_IPV6_HDR_LEN) return 0;
    uint32_t tc = (uint32_t)((h->dscp & 0x3f) << 2 | (h->ecn & 3));
    fe_put32(p, 6u << 28 | tc << 20 | (h->flow_label & 0xfffff));
    fe_put16(p + 4, h->payload_len);
    p[6] = h->next_header;
    p[7] = h->hop_limit;
    memcpy(p + 8, h->src, 16);
    memcpy(p + 24, h->dst, 16);
    return FE_IPV6_HDR_LEN;
}
