/* The list of egress queue disciplines and their dispatch: adding one is one line here (see
 * qdisc.h). */
#include "sim/qdisc.h"

#include "feroce/err.h"

/* clang-format off */
const struct sim_qdisc *sim_qdiscs[SIM_QD_MAX + 1] = {
    &sim_qdisc_red,         /* SIM_QD_RED */
    &sim_qdisc_int,         /* SIM_QD_INT */
    &sim_qdisc_cnp_monitor, /* SIM_QD_CNP_MONITOR */
    /* registered ones: SIM_QD_GENERIC << k */
    NULL,
};
/* clang-format on */

int sim_qdisc_register(const struct sim_qdisc *q)
{
    if (!q || !q->setup) return FE_EINVAL;
    unsigned i = 0;
    while (sim_qdiscs[i] && sim_qdiscs[i] != q) i++;
    if (sim_qdiscs[i]) return 0;
    if (i >= SIM_QD_MAX) return FE_ENOSPC;
    sim_qdiscs[i] = q; /* sim_qdiscs[SIM_QD_MAX] stays NULL */
    return 0;
}

void sim_qdisc_port_setup(struct fe_sim *sim, struct sim_port *p)
{
    p->qdiscs = 0;
    for (unsigned i = 0; sim_qdiscs[i]; i++) {
        const struct sim_qdisc *q = sim_qdiscs[i];
        if (q->setup && q->setup(sim, p)) p->qdiscs |= (uint8_t)(1u << i);
    }
    sim->egress_hooks |= (uint8_t)(p->qdiscs & ~SIM_QD_RED); /* RED: mark_above_bytes */
}

void sim_qdisc_enqueue_slow(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    for (unsigned i = SIM_QD_N_KNOWN; sim_qdiscs[i]; i++)
        if ((p->qdiscs >> i & 1) && sim_qdiscs[i]->on_enqueue)
            sim_qdiscs[i]->on_enqueue(sim, p, pkt);
}

void sim_qdisc_egress_slow(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                           uint64_t queued_bytes, bool joined_now)
{
    if (p->qdiscs & SIM_QD_CNP_MONITOR) sim_cnp_monitor(sim, p, pkt);
    if (!(sim->egress_hooks >= SIM_QD_GENERIC)) return;
    if (joined_now) sim_qdisc_enqueue_slow(sim, p, pkt);
    for (unsigned i = SIM_QD_N_KNOWN; sim_qdiscs[i]; i++)
        if ((p->qdiscs >> i & 1) && sim_qdiscs[i]->on_dequeue)
            sim_qdiscs[i]->on_dequeue(sim, p, pkt, queued_bytes);
}
