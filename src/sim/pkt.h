/* Frames: the descriptor every packet of the simulator travels in (pool.c allocates them). */
#ifndef FE_SIM_PKT_H
#define FE_SIM_PKT_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/qp.h"

enum pkt_kind { PKT_ROCE = 0, PKT_PFC = 1, PKT_TEST = 2 };

#define PFC_FRAME_BYTES 64 /* MAC control frame, FCS included */
#define IFG_BYTES       20 /* preamble + SFD + inter-frame gap */

struct sim_port;

/* Two cache lines. The fe_pkt comes first: its headers up to the payload pointer fill the first
 * line, which only the hosts read; the second holds the rest of it (payload length, ECN, INT) and
 * the simulator's own fields, everything a switch reads. Fields that are never live together
 * share storage: the wire key (on a wire) and the owner (in a host's port queue), and the
 * per-kind fields. A frame's INT records, when INT is on, are stored right after it
 * (sim_pkt_int). */
struct sim_pkt {
    _Alignas(64) struct fe_pkt pkt;
    struct sim_pkt *next; /* queue link / on the wire / free list */
    union {
        uint64_t wire_key;    /* on the wire, behind another frame: its event key */
        struct sim_qp *owner; /* in a host's port queue: the QP whose packet waits out a pause */
    };
    /* RoCE and test frames: routed by destination at every switch (sim_route) */
    uint32_t dst;            /* destination node */
    uint32_t hash;           /* ECMP hash */
    union {                  /* by kind */
        uint32_t flow;       /* PKT_ROCE: flow index */
        uint64_t tag;        /* PKT_TEST: the caller's value */
        struct {             /* PKT_PFC */
            uint16_t quanta; /* 0 = resume */
            uint8_t prio;
        } pfc;
    };
    uint32_t frame_bytes; /* frame on the wire, FCS included (buffer accounting) */
    uint16_t in_port;     /* queued at a switch: its ingress port there, or SIM_NO_INGRESS */
    uint8_t prio;         /* traffic class / PFC priority */
    uint8_t kind;         /* enum pkt_kind */
};
_Static_assert(sizeof(struct sim_pkt) == 128, "a frame is two cache lines");

/* in_port of a frame made by a switch (CNP monitor): not in that switch's buffer */
#define SIM_NO_INGRESS UINT16_MAX

/* A frame's ECN codepoint is ECT: the switches may mark it. */
static inline bool sim_pkt_ect(const struct sim_pkt *pkt)
{
    return pkt->pkt.ecn == FE_ECN_ECT0 || pkt->pkt.ecn == FE_ECN_ECT1;
}

#endif
