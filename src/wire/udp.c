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

/* One's-complement sum of big-endian 16-bit words (odd tail padded with zero), unfolded. */
static uint64_t sum16(const uint8_t *p, size_t n, uint64_t acc)
{
    size_t i = 0;
    for (; i + 1 < n; i += 2) acc += fe_be16(p + i);
    if (n & 1) acc += (uint32_t)p[n - 1] << 8;
    return acc;
}

uint16_t fe_udp_checksum(const uint8_t *ip, const uint8_t *udp, size_t udp_len)
{
    uint64_t acc;
    if ((ip[0] >> 4) == 6)
        acc = sum16(ip + 8, 32, 0); /* source and destination addresses */
    else
        acc = sum16(ip + 12, 8, 0);
    acc += (uint32_t)udp_len + FE_IPPROTO_UDP; /* pseudo-header length (fits 16 bits) and proto */
    acc = sum16(udp, 6, acc);                  /* the header without its checksum field */
    acc = sum16(udp + 8, udp_len - 8, acc);
    while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
    uint16_t c = (uint16_t)~acc;
    return c ? c : 0xffff; /* 0 means "no checksum" on the wire */
}
