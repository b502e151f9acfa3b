/* Priority flow control (IEEE 802.1Qbb) per ingress port and priority.
 *
 * A switch sends PAUSE out of the ingress port whose (port, priority) passed its threshold and
 * RESUME when it drained; the frame waits only for the frame in progress on that port (MAC
 * control frames go first), then travels the link. The receiving transmitter stops that
 * priority after the frame it is sending. In QUANTA mode a PAUSE holds for its quanta
 * (512 bit times each) as a timer, as real NICs and switches implement it; the pausing side
 * refreshes it at half its duration while congested and sends quanta 0 to resume. In XOFF/XON
 * mode (the ns-3 simulators) a PAUSE holds until the RESUME.
 *
 * Headroom per (port, lossless priority) covers every byte that can still arrive after the
 * decision to pause: a maximum frame already on the pausing side's wire ahead of the PAUSE, the
 * PAUSE itself, a propagation delay, the frame the peer is sending when the PAUSE lands, and a
 * propagation delay for the last bit of that frame: 2 x rate x delay + 2 x max frame + PFC frame
 * (the ns-3 simulators use 3 x rate x delay, less than one 4 KB frame at 10 Gb/s and 1 us). */
#include "sim/sim_internal.h"

static uint32_t max_frame_wire(const struct fe_sim *sim)
{
    return sim->max_frame_bytes + sim->ifg;
}

uint64_t sim_pfc_headroom(const struct fe_sim *sim, const struct sim_port *p)
{
    if (sim->sc.sw.headroom_bytes) return sim->sc.sw.headroom_bytes;
    uint64_t bdp = (p->rate_bps * p->delay_ns + 7999999999u) / 8000000000u;
    uint64_t lossless =
        2 * bdp + 2 * (uint64_t)max_frame_wire(sim) + sim->pfc_frame_bytes + sim->ifg;
    if (!sim->sc.sw.ns3_mmu) return lossless;
    uint64_t ns3 = p->rate_bps * p->delay_ns / 8 / 1000000000u * 3; /* third.cc, to the byte */
    return ns3 > lossless ? ns3 : lossless;
}

static uint64_t pause_ns(const struct sim_port *p, uint16_t quanta)
{
    return ((uint64_t)quanta * 512u * 1000000000u + p->rate_bps - 1) / p->rate_bps;
}

static void send_pfc(struct fe_sim *sim, struct sim_port *p, uint8_t prio, uint16_t quanta)
{
    struct sim_pkt *pkt = sim_pkt_alloc(sim);
    if (!pkt) return;
    pkt->kind = PKT_PFC;
    pkt->frame_bytes = sim->pfc_frame_bytes;
    pkt->prio = prio;
    pkt->pfc.prio = prio;
    pkt->pfc.quanta = quanta;
    if (p->ctrl.tail)
        p->ctrl.tail->next = pkt;
    else
        p->ctrl.head = pkt;
    p->ctrl.tail = pkt;
    p->ctrl_pending = true;
    if (quanta) {
        p->pause_tx++;
        sim->st.pause_frames++;
    } else {
        p->resume_tx++;
        sim->st.resume_frames++;
    }
    sim_port_kick(sim, p);
}

void sim_pfc_xoff(struct fe_sim *sim, struct sim_port *in, uint8_t prio)
{
    in->tc[prio].in.xoff = true;
    sim->st.pause_events++;
    send_pfc(sim, in, prio, sim->sc.sw.pause_quanta);
    if (sim->sc.sw.pfc_mode == FE_SIM_PFC_QUANTA && !in->refresh_pending) {
        in->refresh_pending = true;
        sim_schedule(sim, sim->now + pause_ns(in, sim->sc.sw.pause_quanta) / 2, in, EV_PFC_REFRESH);
    }
}

void sim_pfc_xon(struct fe_sim *sim, struct sim_port *in, uint8_t prio)
{
    in->tc[prio].in.xoff = false;
    send_pfc(sim, in, prio, 0);
}

void sim_pfc_refresh(struct fe_sim *sim, struct sim_port *p)
{
    p->refresh_pending = false;
    bool any = false;
    for (uint8_t prio = 0; prio < FE_SIM_PRIOS; prio++) {
        if (!p->tc[prio].in.xoff) continue;
        send_pfc(sim, p, prio, sim->sc.sw.pause_quanta);
        any = true;
    }
    if (any) {
        p->refresh_pending = true;
        sim_schedule(sim, sim->now + pause_ns(p, sim->sc.sw.pause_quanta) / 2, p, EV_PFC_REFRESH);
    }
}

static void unpause(struct fe_sim *sim, struct sim_port *p, uint8_t prio)
{
    p->paused &= (uint8_t) ~(1u << prio);
    if (!p->paused) p->paused_ns += sim->now - p->paused_since;
}

static void arm_pause_end(struct fe_sim *sim, struct sim_port *p)
{
    if (p->pause_ev_pending) return;
    uint64_t t = FE_SIM_NO_TIME;
    for (uint8_t prio = 0; prio < FE_SIM_PRIOS; prio++)
        if ((p->paused >> prio & 1) && p->paused_until[prio] < t) t = p->paused_until[prio];
    if (t == FE_SIM_NO_TIME) return;
    p->pause_ev_pending = true;
    sim_schedule(sim, t, p, EV_PAUSE_END);
}

/* The PFC log's record of a frame received at p: in a part of a parallel run kept until the
 * parts' records are merged (parallel.c), else written now. */
static void log_pfc(struct fe_sim *sim, const struct sim_port *p, uint8_t prio, bool pause)
{
    if (sim->part)
        sim_par_log_pfc(sim, p, prio, pause);
    else
        sim->pfc_cb(sim->pfc_user, sim->now, p->node->id, p->node->is_switch, p->index, prio,
                    pause);
}

void sim_pfc_receive(struct fe_sim *sim, struct sim_port *p, const struct sim_pkt *pfc)
{
    uint8_t prio = pfc->pfc.prio & 7;
    if (sim->pfc_cb) log_pfc(sim, p, prio, pfc->pfc.quanta != 0);
    if (pfc->pfc.quanta) {
        p->pause_rx++;
        if (!p->paused) {
            p->paused_since = sim->now;
            if (!p->node->is_switch) sim->st.host_pause_events++;
        }
        p->paused |= (uint8_t)(1u << prio);
        if (sim->sc.sw.pfc_mode == FE_SIM_PFC_QUANTA) {
            p->paused_until[prio] = sim->now + pause_ns(p, pfc->pfc.quanta);
            arm_pause_end(sim, p);
        } else {
            p->paused_until[prio] = FE_SIM_NO_TIME;
        }
    } else if (p->paused >> prio & 1) {
        unpause(sim, p, prio);
        sim_wake_port_owner(sim, p);
    }
}

uint8_t sim_pfc_allowed_slow(struct fe_sim *sim, struct sim_port *p)
{
    for (uint8_t prio = 0; prio < FE_SIM_PRIOS; prio++)
        if ((p->paused >> prio & 1) && p->paused_until[prio] <= sim->now) unpause(sim, p, prio);
    return (uint8_t)~p->paused;
}

void sim_pfc_pause_end(struct fe_sim *sim, struct sim_port *p)
{
    p->pause_ev_pending = false;
    sim_pfc_allowed(sim, p);
    arm_pause_end(sim, p);
    sim_wake_port_owner(sim, p);
}
