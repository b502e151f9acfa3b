/* InfiniBand transport headers carried by RoCEv2: BTH, RETH, AETH. */
#include "feroce/wire.h"
#include "wire/bytes.h"

#include <string.h>

size_t fe_bth_parse(const uint8_t *p, size_t len, struct fe_bth *h, enum fe_parse_reason *why)
{
    if (len < FE_BTH_LEN) FE_REJECT(why, FE_PR_BTH_SHORT);
    /* Every member is assigned below: no memset first (stores are what a frame's parse waits
     * on while the ICRC runs, see fe_frame_decode). */
    h->opcode = p[0];
    h->se = p[1] >> 7;
    h->migreq = (p[1] >> 6) & 1;
    h->padcnt = (p[1] >> 4) & 3;
    h->tver = p[1] & 0x0f;
    h->pkey = fe_be16(p + 2);
    h->fecn = p[4] >> 7;
    h->becn = (p[4] >> 6) & 1;
    h->resv6 = p[4] & 0x3f;
    h->dqpn = fe_be24(p + 5);
    h->ackreq = p[8] >> 7;
    h->resv7 = p[8] & 0x7f;
    h->psn = fe_be24(p + 9);
    /* Only version 0 exists; a receiver must drop others (IBA C9-?: "TVer shall be 0"). */
    if (h->tver != 0) FE_REJECT(why, FE_PR_BTH_TVER);
    if (why) *why = FE_PR_OK;
    return FE_BTH_LEN;
}

size_t fe_bth_write(uint8_t *p, size_t cap, const struct fe_bth *h)
{
    if (cap < FE_BTH_LEN) return 0;
    p[0] = h->opcode;
    p[1] = (uint8_t)((h->se ? 0x80 : 0) | (h->migreq ? 0x40 : 0) | (h->padcnt & 3) << 4 |
                     (h->tver & 0x0f));
    fe_put16(p + 2, h->pkey);
    p[4] = (uint8_t)((h->fecn ? 0x80 : 0) | (h->becn ? 0x40 : 0) | (h->resv6 & 0x3f));
    fe_put24(p + 5, h->dqpn & 0xffffff);
    p[8] = (uint8_t)((h->ackreq ? 0x80 : 0) | (h->resv7 & 0x7f));
    fe_put24(p + 9, h->psn & FE_PSN_MASK);
    return FE_BTH_LEN;
}

size_t fe_reth_parse(const uint8_t *p, size_t len, struct fe_reth *h, enum fe_parse_reason *why)
{
    if (len < FE_RETH_LEN) FE_REJECT(why, FE_PR_EXT_SHORT);
    h->va = fe_be64(p);
    h->rkey = fe_be32(p + 8);
    h->dma_len = fe_be32(p + 12);
    if (why) *why = FE_PR_OK;
    return FE_RETH_LEN;
}

size_t fe_reth_write(uint8_t *p, size_t cap, const struct fe_reth *h)
{
    if (cap < FE_RETH_LEN) return 0;
    fe_put64(p, h->va);
    fe_put32(p + 8, h->rkey);
    fe_put32(p + 12, h->dma_len);
    return FE_RETH_LEN;
}

size_t fe_aeth_parse(const uint8_t *p, size_t len, struct fe_aeth *h, enum fe_parse_reason *why)
{
    if (len < FE_AETH_LEN) FE_REJECT(why, FE_PR_EXT_SHORT);
    h->syndrome = p[0];
    h->msn = fe_be24(p + 1);
    if (why) *why = FE_PR_OK;
    return FE_AETH_LEN;
}

size_t fe_aeth_write(uint8_t *p, size_t cap, const struct fe_aeth *h)
{
    if (cap < FE_AETH_LEN) return 0;
    p[0] = h->syndrome;
    fe_put24(p + 1, h->msn & 0xffffff);
    return FE_AETH_LEN;
}
