/* Ports: a transmitter, its output queues (one per priority) and the ingress accounting of what
 * it receives, and the nodes that own them. */
#ifndef FE_SIM_PORT_H
#define FE_SIM_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/red.h"
#include "feroce/sim.h"
#include "sim/pkt.h"

struct fe_sim;

/* Output queue of one priority. */
struct sim_queue {
    struct sim_pkt *head, *tail;
    uint64_t bytes;
};

/* Ingress accounting of one (port, priority) at a switch. */
struct sim_ingress {
    uint64_t reserve_used, shared_used, hdrm_used;
    bool xoff; /* we told the peer to pause this priority */
};

/* One priority of a port, in one cache line: its output queue, and the accounting of the frames
 * that arrive on the port (a port sends one way what it receives the other: data out, their
 * ACKs in). */
struct sim_tc {
    _Alignas(64) struct sim_queue q;
    struct sim_ingress in;
};
_Static_assert(sizeof(struct sim_tc) == 64, "a priority is one cache line");

struct sim_node;

/* Hot fields first, by cache line: what every frame through the port touches (the transmitter,
 * the owner, the flags), then the counters, the queues' totals and the frames on the wire toward
 * it, then one line per priority (sim_tc); the control queue, the marking parameters, the pause
 * state and statistics after them. */
struct sim_port {
    /* line 1: the transmitter and the owner */
    _Alignas(64) struct sim_port *peer;
    struct sim_switch *sw; /* the switch of this port, NULL at a host */
    struct sim_host *host; /* the host of this port, NULL at a switch */
    uint64_t busy_until;   /* end of the frame being serialized */
    union {
        struct {
            uint64_t ser_fp_per_byte; /* serialization time of a byte in 2^-24 ns */
            uint64_t ser_frac;        /* fraction of a ns carried to the next frame (2^-24 ns) */
        };
        /* ns-3 timing (SIM_LINK_NS3, link.c): the last frame size and its time, as a port
         * sends few sizes */
        struct {
            uint64_t ns3_ser_bytes;
            uint64_t ns3_ser_ns;
        };
    };
    uint64_t delay_ns;
    uint16_t index;
    bool txdone_pending;
    bool pause_ev_pending;
    bool ctrl_pending; /* ctrl has frames */
    uint8_t nonempty;  /* bit p: queue p has frames */
    uint8_t paused;    /* bit p: our transmitter must not send priority p */
    uint8_t link_mode; /* enum sim_link_mode (sim_link_set_mode) */
    /* line 2: sending, and the frames on the wire toward this port, in arrival order (link.c) */
    uint64_t mark_above_bytes; /* egress marking (RED) above this queue length: red.kmin_bytes,
                                * or UINT64_MAX when the port does not mark (ecn.c) */
    /* (counters apart: the compiler would pair adjacent ones in vector adds) */
    uint64_t tx_pkts;
    uint64_t loss32; /* loss probability in 2^-32 units (0 = none) */
    uint64_t tx_bytes;
    uint64_t queue_bytes;
    struct sim_pkt *wire_head, *wire_tail;
    uint64_t max_queue_bytes;
    /* lines 3-10 */
    struct sim_tc tc[FE_SIM_PRIOS];
    struct sim_queue ctrl; /* PFC frames: strict priority over everything */
    struct fe_red red;     /* egress marking on this port (when mark_above_bytes is set) */
    bool refresh_pending;
    uint8_t qdiscs; /* SIM_QD_*: the egress disciplines this port runs (qdisc.h) */
    uint64_t headroom_bytes;
    uint64_t paused_until[FE_SIM_PRIOS]; /* QUANTA mode */
    uint64_t paused_since;               /* start of the current pause (any priority) */
    struct sim_node *node;
    uint64_t rate_bps;
    /* ns-3 timing, sim->ns3_lazy_txdone (switch.c): the key of the transmit-complete event of
     * the frame on the wire, taken when it started and not pushed (yet) */
    bool txdone_reserved;
    uint64_t txdone_key;
    uint64_t rng[4]; /* its random stream (sim_rng_seed_ports) */
    /* stats */
    uint64_t pause_tx, resume_tx, pause_rx, paused_ns, ecn_marks, drops;
};

struct sim_switch;
struct sim_host;

struct sim_node {
    uint32_t id;
    bool is_switch;
    uint32_t n_ports;
    struct sim_port *ports;
    struct sim_switch *sw;
    struct sim_host *host;
};

/* A port's output queues, one per priority. */
static inline void sim_port_enqueue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    struct sim_queue *q = &p->tc[pkt->prio].q;
    pkt->next = NULL;
    if (q->tail)
        q->tail->next = pkt;
    else
        q->head = pkt;
    q->tail = pkt;
    q->bytes += pkt->frame_bytes;
    p->nonempty |= (uint8_t)(1u << pkt->prio);
    p->queue_bytes += pkt->frame_bytes;
    if (p->queue_bytes > p->max_queue_bytes) p->max_queue_bytes = p->queue_bytes;
    (void)sim;
}
/* The priority a port serves first among those in mask (not 0): the highest PCP. */
static inline uint8_t sim_top_prio(uint8_t mask)
{
    return (uint8_t)(31 - __builtin_clz((unsigned)mask));
}
static inline struct sim_pkt *sim_port_dequeue(struct sim_port *p, uint8_t prio)
{
    struct sim_queue *q = &p->tc[prio].q;
    struct sim_pkt *pkt = q->head;
    q->head = pkt->next;
    if (!q->head) {
        q->tail = NULL;
        p->nonempty &= (uint8_t) ~(1u << prio);
    } else {
        /* the next dequeue reads the new head's second line: in a deep queue it is cold */
        __builtin_prefetch(&q->head->next);
    }
    q->bytes -= pkt->frame_bytes;
    p->queue_bytes -= pkt->frame_bytes;
    pkt->next = NULL;
    return pkt;
}
/* Sends the next eligible frame if the transmitter is free. */
void sim_port_kick(struct fe_sim *sim, struct sim_port *p);
void sim_port_tx_done(struct fe_sim *sim, struct sim_port *p);
void sim_switch_receive(struct fe_sim *sim, struct sim_port *in, struct sim_pkt *pkt);
/* Transmitter free or a pause lifted: the port's owner (its switch or its host) sends the next
 * frame if any. */
void sim_host_kick(struct fe_sim *sim, struct sim_host *h);
static inline void sim_wake_port_owner(struct fe_sim *sim, struct sim_port *p)
{
    if (p->sw)
        sim_port_kick(sim, p);
    else
        sim_host_kick(sim, p->host);
}

#endif
