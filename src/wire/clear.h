/* Clearing decoded structs member by member (private to src/wire). Why not memset: GCC turns
 * memsets of ~80 bytes and more into `rep stos`, whose start-up cost on AMD Zen is larger than
 * a whole header parse; member stores are a handful of plain moves. */
#ifndef FE_WIRE_CLEAR_H
#define FE_WIRE_CLEAR_H

#include "feroce/wire.h"

static inline void fe_pkt_clear_but_bth(struct fe_pkt *p)
{
    p->reth = (struct fe_reth){0};
    p->aeth = (struct fe_aeth){0};
    p->imm = 0;
    p->payload = NULL;
    p->payload_len = 0;
    p->ecn = p->dscp = p->pcp = p->icrc = 0;
    p->int_md = NULL;
    p->credit_bytes = 0;
}

static inline void fe_pkt_clear(struct fe_pkt *p)
{
    p->bth = (struct fe_bth){0};
    fe_pkt_clear_but_bth(p);
}

#endif
