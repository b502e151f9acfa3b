/* The transport's view of a packet: BTH onward, parsed and written in one place. */
#include "feroce/err.h"
#include "feroce/wire.h"
#include "wire/bytes.h"
#include "wire/clear.h"

#include <limits.h>
#include <string.h>

#define REJECT(why, reason)                                                                        \
    do {                                                                                           \
        if (why) *(why) = (reason);                                                                \
        return FE_EPARSE;                                                                          \
    } while (0)

void fe_cnp_build(struct fe_pkt *out, uint32_t dqpn, uint8_t dscp, uint8_t pcp)
{
    *out = (struct fe_pkt){
        .bth = {.opcode = FE_OP_CNP, .becn = true, .pkey = FE_PKEY_DEFAULT, .dqpn = dqpn},
        .payload_len = FE_CNP_PAD_LEN,
        .ecn = FE_ECN_NOT_ECT,
        .dscp = dscp,
        .pcp = pcp};
}

int fe_pkt_parse(const uint8_t *p, size_t len, struct fe_pkt *pkt, enum fe_parse_reason *why)
{
    enum fe_parse_reason r;
    /* The BTH is cleared only when it is short: otherwise fe_bth_parse assigns all of it, and
     * fewer stores let the parse run beside the ICRC (fe_frame_decode). */
    fe_pkt_clear_but_bth(pkt);
    if (len < FE_BTH_LEN) pkt->bth = (struct fe_bth){0};
    if (!fe_bth_parse(p, len, &pkt->bth, &r)) REJECT(why, r);
    unsigned f = fe_opcode_flags(pkt->bth.opcode);
    if (!(f & FE_OPF_KNOWN)) REJECT(why, FE_PR_OPCODE);
    size_t hdr = fe_pkt_hdr_len(pkt->bth.opcode);
    if (len < hdr) REJECT(why, FE_PR_EXT_SHORT);
    if (len < hdr + FE_ICRC_LEN) REJECT(why, FE_PR_ICRC_SHORT);

    /* Extension headers in IBA order: RETH, AtomicETH, AETH, AtomicAckETH, ImmDt/IETH. */
    const uint8_t *q = p + FE_BTH_LEN;
    if (f & FE_OPF_RETH) q += fe_reth_parse(q, FE_RETH_LEN, &pkt->reth, NULL);
    if (f & FE_OPF_ATOMIC) {
        pkt->reth.va = fe_be64(q);
        pkt->reth.rkey = fe_be32(q + 8);
        pkt->reth.dma_len = 8;
        q += FE_ATOMICETH_LEN;
    }
    if (f & FE_OPF_AETH) q += fe_aeth_parse(q, FE_AETH_LEN, &pkt->aeth, NULL);
    if (f & FE_OPF_ATOMIC_ACK) q += FE_ATOMICACKETH_LEN;
    if (f & (FE_OPF_IMM | FE_OPF_IETH)) {
        pkt->imm = fe_be32(q);
        q += FE_IMMDT_LEN;
    }

    size_t rest = len - hdr - FE_ICRC_LEN; /* payload + pad */
    uint8_t pad = pkt->bth.padcnt;
    if (f & FE_OPF_CNP) {
        if (rest != FE_CNP_PAD_LEN) REJECT(why, FE_PR_CNP_LEN);
        if (pad) REJECT(why, FE_PR_PAD);
        pkt->payload = q;
        pkt->payload_len = FE_CNP_PAD_LEN;
    } else if (f & FE_OPF_PAYLOAD) {
        /* Payload + pad is a whole number of 4-byte words (IBA 9.2.2, PadCnt). */
        if (pad > rest || rest % 4 != 0) REJECT(why, FE_PR_PAD);
        if (rest - pad > UINT32_MAX) REJECT(why, FE_PR_IP_LEN);
        pkt->payload = q;
        pkt->payload_len = (uint32_t)(rest - pad);
    } else {
        if (rest) REJECT(why, FE_PR_PAYLOAD);
        if (pad) REJECT(why, FE_PR_PAD);
    }
    if (why) *why = FE_PR_OK;
    return 0;
}

size_t fe_pkt_wire_len(const struct fe_pkt *pkt)
{
    unsigned f = fe_opcode_flags(pkt->bth.opcode);
    size_t body;
    if (f & FE_OPF_CNP)
        body = FE_CNP_PAD_LEN;
    else if (f & FE_OPF_PAYLOAD)
        body = ((size_t)pkt->payload_len + 3) & ~(size_t)3;
    else
        body = 0;
    return fe_pkt_hdr_len(pkt->bth.opcode) + body + FE_ICRC_LEN;
}

int fe_pkt_write(uint8_t *p, size_t cap, const struct fe_pkt *pkt)
{
    unsigned f = fe_opcode_flags(pkt->bth.opcode);
    if (!(f & FE_OPF_KNOWN)) return FE_EINVAL;
    if (!(f & (FE_OPF_PAYLOAD | FE_OPF_CNP)) && pkt->payload_len) return FE_EINVAL;
    if ((f & FE_OPF_CNP) && pkt->payload_len && pkt->payload_len != FE_CNP_PAD_LEN)
        return FE_EINVAL;
    size_t n = fe_pkt_wire_len(pkt);
    if (n > INT_MAX) return FE_EINVAL;
    if (cap < n) return FE_ENOSPC;

    struct fe_bth bth = pkt->bth;
    uint32_t plen = (f & FE_OPF_CNP) ? FE_CNP_PAD_LEN : pkt->payload_len;
    bth.padcnt = (f & FE_OPF_CNP) ? 0 : (uint8_t)((4 - (plen & 3)) & 3);
    uint8_t *q = p + fe_bth_write(p, cap, &bth);
    if (f & FE_OPF_RETH) q += fe_reth_write(q, FE_RETH_LEN, &pkt->reth);
    if (f & FE_OPF_ATOMIC) {
        memset(q, 0, FE_ATOMICETH_LEN); /* swap/add and compare operands: never sent by feroce */
        fe_put64(q, pkt->reth.va);
        fe_put32(q + 8, pkt->reth.rkey);
        q += FE_ATOMICETH_LEN;
    }
    if (f & FE_OPF_AETH) q += fe_aeth_write(q, FE_AETH_LEN, &pkt->aeth);
    if (f & FE_OPF_ATOMIC_ACK) {
        memset(q, 0, FE_ATOMICACKETH_LEN);
        q += FE_ATOMICACKETH_LEN;
    }
    if (f & (FE_OPF_IMM | FE_OPF_IETH)) {
        fe_put32(q, pkt->imm);
        q += FE_IMMDT_LEN;
    }
    if (plen) {
        if (pkt->payload && pkt->payload_len)
            memmove(q, pkt->payload, plen); /* memmove: the payload may already sit in place */
        else
            memset(q, 0, plen);
        q += plen;
    }
    while ((size_t)(q - p) < n - FE_ICRC_LEN) *q++ = 0; /* pad */
    memset(q, 0, FE_ICRC_LEN);
    return (int)n;
}
