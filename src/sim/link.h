/* Links: serialization, propagation, the frames on a wire, frame sizes (link.c). Inline: every
 * frame passes here at every hop. */
#ifndef FE_SIM_LINK_H
#define FE_SIM_LINK_H

#include "sim/state.h"
#include "sim/ns3_frame.h"

/* The global index of port p (in sim->ports: the same however the topology is cut), the rank of
 * its arrivals among those of the same nanosecond. */
static inline uint64_t sim_port_gid(const struct fe_sim *sim, const struct sim_port *p)
{
    return (uint64_t)(p - sim->ports);
}

/* The key of a frame's arrival at port `to` at t: before the other events of t, in port order
 * (fe_evq_arrival_key). */
static inline int sim_arrival_key(struct fe_sim *sim, const struct sim_port *to, uint64_t t,
                                  uint64_t *key)
{
    return fe_evq_arrival_key(&sim->q, t, sim_port_gid(sim, to), key);
}

/* The event word of a frame's arrival at port `to`. */
static inline uint64_t sim_arrive_event(const struct sim_port *to)
{
    return (uint64_t)(uintptr_t)to | (to->sw ? EV_ARRIVE : EV_ARRIVE_HOST);
}

/* The arrival event `ev` (EV_ARRIVE or EV_ARRIVE_HOST) of port `to`: takes the first frame off
 * its wire and schedules the next one's, with the same event word. Inline in both arms of the
 * dispatch. */
static inline __attribute__((always_inline)) struct sim_pkt *
sim_link_arrive(struct fe_sim *sim, struct sim_port *to, uint64_t ev)
{
    struct sim_pkt *pkt = to->wire_head;
    to->wire_head = pkt->next;
    if (!to->wire_head) {
        to->wire_tail = NULL;
    } else {
        /* the next frame's arrival reads its second line: ask for it now (in a large fabric it
         * has left the caches while on the wire) */
        __builtin_prefetch(&to->wire_head->next);
        if (sim->wire_heads_only && fe_evq_push_key(&sim->q, to->wire_head->wire_key, ev))
            sim_fail(sim);
    }
    pkt->next = NULL;
    return pkt;
}

/* Bytes a frame occupies on the wire: the frame, preamble and inter-frame gap. */
static inline uint32_t sim_wire_bytes(const struct fe_sim *sim, const struct sim_pkt *pkt)
{
    return pkt->frame_bytes + sim->ifg;
}
/* Nanoseconds to serialize `bytes` on port p (exact on average: the remainder is carried). */
static inline uint64_t sim_link_ser_ns(struct sim_port *p, uint32_t wire_bytes)
{
    /* Fixed point (2^-24 ns per byte) with the fraction carried to the next frame, so that
     * back-to-back frames run at the link rate whatever the rounding of one frame (relative
     * error < 1e-6 at 400 Gb/s), without a division per frame. */
    uint64_t fp = (uint64_t)wire_bytes * p->ser_fp_per_byte + p->ser_frac;
    p->ser_frac = fp & ((1u << 24) - 1);
    return fp >> 24;
}
/* a frame as HPCC's ns-3 times it (--ns3-compat): its Time, cut to whole nanoseconds */
uint64_t sim_link_ns3_ser_ns(uint64_t rate_bps, uint32_t wire_bytes);
/* sim_link_ns3_ser_ns on a port of ns-3 timing, for a size other than its last (link.c) */
uint64_t sim_link_ns3_ser_new(struct sim_port *p, uint32_t wire_bytes);
/* sim_link_ns3_ser_ns on a port of ns-3 timing: its floating point and 128-bit steps are costly
 * per frame, and a port sends few frame sizes (data one way, or ACKs), so the last size's time
 * is kept */
static inline uint64_t sim_link_ns3_ser_port(struct sim_port *p, uint32_t wire_bytes)
{
    return wire_bytes == p->ns3_ser_bytes ? p->ns3_ser_ns : sim_link_ns3_ser_new(p, wire_bytes);
}
/* The transmitter of p starts sending pkt, for ser nanoseconds (the frames sent are the ports'
 * tx_pkts, summed by fe_sim_stats). */
static inline void sim_link_start(struct fe_sim *sim, struct sim_port *p, const struct sim_pkt *pkt,
                                  uint64_t ser)
{
    p->busy_until = sim->now + ser;
    p->tx_pkts++;
    p->tx_bytes += pkt->frame_bytes;
}
/* pkt enters the wire toward `to` behind the frames on it, to arrive at the time of key (from
 * sim_arrival_key): the first frame's arrival is an event, the others wait for theirs (heap,
 * calendar). */
static inline __attribute__((always_inline)) void
sim_link_wire_put(struct fe_sim *sim, struct sim_port *to, struct sim_pkt *pkt, uint64_t key)
{
    pkt->next = NULL;
    if (to->wire_tail) {
        pkt->wire_key = key;
        to->wire_tail->next = pkt;
        to->wire_tail = pkt;
    } else {
        to->wire_head = to->wire_tail = pkt;
        if (fe_evq_push_key(&sim->q, key, sim_arrive_event(to))) sim_fail(sim);
    }
}
/* How a port's frames are sent (sim_link_set_mode). */
enum sim_link_mode {
    SIM_LINK_FAST,    /* inline, serialization in fixed point */
    SIM_LINK_NS3,     /* inline, serialization as HPCC's ns-3 times it (--ns3-compat) */
    SIM_LINK_GENERAL, /* sim_link_send_general: a lossy link, the wheel (an event per frame) */
    SIM_LINK_CUT,     /* sim_link_send_general: toward another partition (parallel.c) */
};
/* sim_link_send in every case. */
void sim_link_send_general(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt);
/* A frame onto the wire toward `to`, to arrive at t, as this queue takes them: only the wire's
 * first frame has an event (heap, calendar), or every frame (the wheel). Also the parallel
 * runtimes' way to file the frames that come from other parts. */
void sim_link_wire_file(struct fe_sim *sim, struct sim_port *to, uint64_t t, struct sim_pkt *pkt);
/* Starts sending pkt on port p now: the port is busy for its serialization, and the frame
 * arrives at the peer one propagation delay after its last bit (unless the link loses it).
 * Inline: every frame passes here at every hop, and a call costs as much as the work (the event
 * queue's slow paths make it save and restore registers). */
static inline __attribute__((always_inline)) void
sim_link_send(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    uint64_t ser;
    if (p->link_mode != SIM_LINK_FAST) {
        if (p->link_mode >= SIM_LINK_GENERAL) {
            sim_link_send_general(sim, p, pkt);
            return;
        }
        ser = sim_link_ns3_ser_port(p, sim_wire_bytes(sim, pkt));
    } else {
        ser = sim_link_ser_ns(p, sim_wire_bytes(sim, pkt));
    }
    sim_link_start(sim, p, pkt, ser);
    uint64_t key;
    if (sim_arrival_key(sim, p->peer, p->busy_until + p->delay_ns, &key)) sim_fail(sim);
    sim_link_wire_put(sim, p->peer, pkt, key);
}
/* fe_evq_keys_fn: the keys of the frames on the wires. */
void sim_link_wire_keys(void *sim, struct fe_evq *q);
/* Sets every port's link_mode (after the topology is built, and when the queue changes). */
void sim_link_set_mode(struct fe_sim *sim);
/* Sets ns3_lazy_txdone (switch.c) after the queue or the lookahead changed. */
void sim_set_lazy_txdone(struct fe_sim *sim);
/* Bytes of the frame that carries fp, as the scenario's frame model sizes it (host.frames). */
static inline uint32_t sim_frame_bytes(const struct fe_sim *sim, const struct fe_pkt *fp)
{
    uint64_t fb;
    if (sim->ns3_frames) {
        /* HPCC ns-3: data = its PPP header (14 bytes there, Ethernet-sized) + IPv4 + UDP +
         * SeqTs (48) + INT + payload; ACK/NAK = PPP + IPv4 + qbbHeader (12) + INT, padded to
         * 60 bytes */
        if (fp->payload_len && fp->bth.opcode != FE_OP_CNP)
            fb = (uint64_t)fp->payload_len + SIM_NS3_DATA_HDR_BYTES + sim->ns3_int_bytes;
        else
            fb = (12 + sim->ns3_int_bytes < 26 ? 26 : 12 + sim->ns3_int_bytes) + 34;
        return (uint32_t)fb; /* no minimum frame in their model */
    }
    uint8_t op = fp->bth.opcode;
    fb = sim->op_frame[op].fixed_bytes +
         (sim->op_frame[op].payload ? ((uint64_t)fp->payload_len + 3) & ~(uint64_t)3 : 0);
    if (fb < sim->min_frame_bytes) fb = sim->min_frame_bytes;
    return (uint32_t)fb;
}

#endif
