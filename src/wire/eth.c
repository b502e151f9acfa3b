/* Ethernet II with an optional 802.1Q tag (the tag carries the PCP that PFC acts on). */
#include "feroce/wire.h"
#include "wire/bytes.h"

#include <string.h>

size_t fe_eth_parse(const uint8_t *p, size_t len, struct fe_eth *h, enum fe_parse_reason *why)
{
    if (len < FE_ETH_HDR_LEN) FE_REJECT(why, FE_PR_ETH_SHORT);
    memset(h, 0, sizeof *h);
    memcpy(h->dst, p, 6);
    memcpy(h->src, p + 6, 6);
    uint16_t type = fe_be16(p + 12);
    size_t n = FE_ETH_HDR_LEN;
    if (type == FE_ETHERTYPE_VLAN) {
        if (len < FE_ETH_HDR_LEN + FE_VLAN_TAG_LEN) FE_REJECT(why, FE_PR_VLAN_SHORT);
        uint16_t tci = fe_be16(p + 14);
        h->has_vlan = true;
        h->pcp = (uint8_t)(tci >> 13);
        h->dei = (tci >> 12) & 1;
        h->vid = tci & 0x0fff;
        type = fe_be16(p + 16);
        n += FE_VLAN_TAG_LEN;
    }
    h->ethertype = type;
    if (why) *why = FE_PR_OK;
    return n;
}

size_t fe_eth_write(uint8_t *p, size_t cap, const struct fe_eth *h)
{
    size_t n = FE_ETH_HDR_LEN + (h->has_vlan ? FE_VLAN_TAG_LEN : 0);
    if (cap < n) return 0;
    memcpy(p, h->dst, 6);
    memcpy(p + 6, h->src, 6);
    uint8_t *t = p + 12;
    if (h->has_vlan) {
        fe_put16(t, FE_ETHERTYPE_VLAN);
        fe_put16(t + 2, (uint16_t)((h->pcp & 7) << 13 | (h->dei ? 1 : 0) << 12 | (h->vid & 0xfff)));
        t += FE_VLAN_TAG_LEN;
    }
    fe_put16(t, h->ethertype);
    return n;
}
