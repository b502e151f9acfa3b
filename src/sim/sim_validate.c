/* The checks a scenario passes before a simulator is built from it: one sentence in err for the
 * first that fails. */
#include "feroce/err.h"
#include "sim/state.h"
#include "sim/units.h"

int sim_validate(struct fe_sim *sim, char *err, size_t cap)
{
    struct fe_sim_scenario *sc = &sim->sc;
    const struct fe_sim_host_cfg *h = &sc->host;
    if (h->mtu_bytes != 256 && h->mtu_bytes != 512 && h->mtu_bytes != 1024 &&
        h->mtu_bytes != 2048 && h->mtu_bytes != 4096) {
        sim_errf(err, cap, "MTU %u: must be 256, 512, 1024, 2048 or 4096", h->mtu_bytes);
        return FE_EINVAL;
    }
    if (h->data_pcp > 7 || h->ack_pcp > 7 || h->cnp_pcp > 7) {
        sim_errf(err, cap, "priorities must be 0..7");
        return FE_EINVAL;
    }
    if (!(sc->sw.dt_alpha > 0 && sc->sw.dt_alpha <= 64)) {
        sim_errf(err, cap, "dynamic threshold alpha %g out of range (0, 64]", sc->sw.dt_alpha);
        return FE_EINVAL;
    }
    if (sc->sw.pfc && sc->sw.pfc_mode == FE_SIM_PFC_QUANTA && !sc->sw.pause_quanta) {
        sim_errf(err, cap, "pause quanta must be > 0");
        return FE_EINVAL;
    }
    for (int i = 0; i < sc->sw.n_red; i++) {
        const struct fe_sim_red *r = &sc->sw.red[i];
        if (r->kmax_bytes < r->kmin_bytes || r->pmax_ppm > 1000000) {
            sim_errf(err, cap, "RED entry %d: need kmin <= kmax and pmax <= 1", i);
            return FE_EINVAL;
        }
    }
    if (sc->sw.ecn && sc->sw.n_red == 0) {
        sim_errf(err, cap, "ECN enabled but no RED thresholds (kmin/kmax/pmax) given");
        return FE_EINVAL;
    }
    for (uint32_t i = 0; i < sc->n_flows; i++) {
        const struct fe_sim_flow *f = &sc->flows[i];
        if (f->src >= sc->n_nodes || f->dst >= sc->n_nodes || sc->nodes[f->src].is_switch ||
            sc->nodes[f->dst].is_switch || f->src == f->dst) {
            sim_errf(err, cap, "flow %u: source and destination must be two different hosts", i);
            return FE_EINVAL;
        }
        if (f->cc >= sc->n_cc) {
            sim_errf(err, cap, "flow %u: no congestion-control profile %u", i, f->cc);
            return FE_EINVAL;
        }
        if (f->prio != 0xff && f->prio > 7) {
            sim_errf(err, cap, "flow %u: priority %u out of 0..7", i, f->prio);
            return FE_EINVAL;
        }
        if (!f->bytes) {
            sim_errf(err, cap, "flow %u: size 0", i);
            return FE_EINVAL;
        }
    }
    return 0;
}
