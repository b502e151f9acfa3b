/* UDP header. The checksum is not checked: RoCEv2 senders put 0 there and the ICRC covers it. */
#include "feroce/wire.h"
#include "wire/bytes.h"

size_t fe_udp_parse(const uint8_t *p, size_t len, struct fe_udp *h, enum fe_parse_reason *why)
{
    if (len < FE_UDP_HDR_LEN) FE_REJECT(why, FE_PR_UDP_SHORT);
    uint16_t ulen = fe_be16(p + 4);
    if (ulen < FE_UDP_HDR_LEN || ulen > len) FE_REJECT(why, FE_PR_UDP_LEN);
    h->sport = fe_be16(p);
    h->dport = fe_be16(p + 2);
    h->len = ulen;
    h->checksum = fe_be16(p + 6);
    if (why) *why = FE_PR_OK;
    return FE_UDP_HDR_LEN;
}

size_t fe_udp_write(uint8_t *p, size_t cap, const struct fe_udp *h)
{
    if (cap < FE_UDP_HDR_LEN) return 0;
    fe_put16(p, h->sport);
    fe_put16(p + 2, h->dport);
    fe_put16(p + 4, h->len);
    fe_put16(p + 6, h->checksum);
    return FE_UDP_HDR_LEN;
}
