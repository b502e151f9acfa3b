/* Queue-pair settings and hints only the packet-level simulator uses: they model other
 * simulators' hosts (HPCC's ns-3) or serve a driver of thousands of QPs, and are not part of
 * the library's API about real QPs (include/feroce/qp.h). */
#ifndef FE_TRANSPORT_QP_SIM_H
#define FE_TRANSPORT_QP_SIM_H

#include "feroce/qp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fe_qp_sim_config {
    /* Notification point in ns-3 compatible mode: congestion (CE) is echoed in the next ACK's
     * BECN bit instead of answered with a CNP. */
    bool np_ecn_echo_on_ack;
    /* Responder: ACKs and NAKs carry the INT records (fe_pkt.int_md) of the latest data packet
     * that had them, as HPCC's receiver echoes the switches' telemetry to the sender. */
    bool int_echo;
    /* Bytes the pacer and the CC count around a data packet's payload: 0 = the real RoCEv2
     * frame (headers, pad, ICRC and the path's Ethernet/IP/UDP/FCS); else payload + this, for
     * frames sized as another model does (HPCC ns-3: 48). */
    uint32_t frame_overhead_bytes;
    /* HPCC ns-3's pacing of DCQCN (NULL: the token bucket). Its NIC fixes a QP's next send
     * when a packet leaves, that packet's gap at the rate of that moment, and a later rate change
     * does not move it (RdmaHw::UpdateNextAvail; its DCQCN never calls ChangeRate). The gap is
     * ns-3's: this function of the rate in b/s and the frame's bytes, in whole ns. */
    uint64_t (*ns3_gap_ns)(uint64_t rate_bps, uint32_t frame_bytes);
};

/* fe_qp_create with the simulator's settings (NULL: none, as fe_qp_create). */
struct fe_qp *fe_qp_create_sim(const struct fe_qp_config *cfg, const struct fe_qp_sim_config *sim,
                               uint64_t now_ns, int *err, const char **why_field);
/* fe_qp_create_sim in the memory alloc(user, bytes) gives once the configuration is checked, for
 * a driver that makes many QPs at once and gives them one block (bytes: fe_qp_memory_bytes(cfg);
 * 64-byte aligned, else FE_EINVAL, why "memory"), or, when it gives none, in a block of the QP's
 * own as fe_qp_create_sim makes it. In the caller's memory, fe_qp_destroy frees nothing: the
 * memory is the caller's to free after it. */
struct fe_qp *fe_qp_create_sim_alloc(void *(*alloc)(void *user, size_t bytes), void *user,
                                     const struct fe_qp_config *cfg,
                                     const struct fe_qp_sim_config *sim, uint64_t now_ns, int *err,
                                     const char **why_field);

/* A hint, no effect on the QP: starts loading into the CPU caches the state fe_qp_tx reads. A
 * driver that serves many QPs in turn calls it for the next one while it serves this one. */
void fe_qp_prefetch_tx(const struct fe_qp *qp);
/* The same for what fe_qp_rx reads when a data packet arrives (the responder's state). */
void fe_qp_prefetch_rx(const struct fe_qp *qp);

#endif
