/* Measurement: the contention window (rx bytes of every flow between its edges), the phases (a
 * boundary at each change of the set of active flows) and, for each phase's second half, its
 * checkpoints. A report, not the model: nothing here changes what the simulation does. */
#include <stdlib.h>
#include <string.h>

#include "sim/phases.h"

void sim_window_open(struct fe_sim *sim)
{
    sim->window_opened = true;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        sim_flow_sync_counters(&sim->flows[i]);
        sim->flows[i].window_rx0 = sim->flows[i].ctr.rx_bytes;
    }
}
void sim_window_close(struct fe_sim *sim)
{
    if (sim->window_closed) return;
    if (!sim->window_opened) sim_window_open(sim);
    sim->window_closed = true;
    sim->window_end = sim->now;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        struct sim_flow *f = &sim->flows[i];
        sim_flow_sync_counters(f);
        f->window_bytes = f->ctr.rx_bytes - f->window_rx0;
    }
}
/* The checkpoint of the open phase nearest its middle if it ended at t1 (-1: none). */
static int ckpt_nearest(const struct fe_sim *sim, uint64_t t0, uint64_t t1)
{
    uint64_t mid = t0 + (t1 - t0) / 2, best_d = UINT64_MAX;
    int best = -1;
    for (uint32_t c = 0; c < sim->n_ckpt && sim->ckpt_t[c] <= t1; c++) {
        uint64_t d = sim->ckpt_t[c] > mid ? sim->ckpt_t[c] - mid : mid - sim->ckpt_t[c];
        if (d < best_d) {
            best_d = d;
            best = (int)c;
        }
    }
    return best;
}
uint64_t sim_phase_middle(const struct fe_sim *sim, uint32_t k, const uint64_t **rx)
{
    size_t n = sim->n_flows;
    if (k + 1 < sim->n_phase_pts) { /* ended: kept at its end */
        *rx = &sim->phase_mid_rx[k * n];
        return sim->phase_mid_t[k];
    }
    int c = sim->ckpt_t ? ckpt_nearest(sim, sim->phase_t[k], sim->now) : -1;
    if (c < 0) {
        *rx = &sim->phase_rx[k * n];
        return sim->phase_t[k];
    }
    *rx = &sim->ckpt_rx[(size_t)c * n];
    return sim->ckpt_t[(size_t)c];
}
/* Every flow's rx_bytes now into row[0 .. n_flows). */
static void flows_rx_now(struct fe_sim *sim, uint64_t *row)
{
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        struct sim_flow *f = &sim->flows[i];
        sim_flow_sync_counters(f);
        row[i] = f->ctr.rx_bytes;
    }
}
/* A checkpoint of the open phase now (fe_sim_run stopped here for it). */
void sim_phase_checkpoint(struct fe_sim *sim)
{
    size_t n = sim->n_flows;
    uint32_t c = sim->n_ckpt++;
    sim->ckpt_t[c] = sim->now;
    flows_rx_now(sim, &sim->ckpt_rx[c * n]);
    if (sim->n_ckpt == SIM_CKPTS) { /* keep the 2nd, 4th, ...: twice the spacing from the start */
        for (uint32_t a = 1, b = 0; a < SIM_CKPTS; a += 2, b++) {
            sim->ckpt_t[b] = sim->ckpt_t[a];
            memcpy(&sim->ckpt_rx[b * n], &sim->ckpt_rx[a * n], n * sizeof(uint64_t));
        }
        sim->n_ckpt = SIM_CKPTS / 2;
        sim->ckpt_dt_ns *= 2;
    }
    sim->ckpt_next = sim->now + sim->ckpt_dt_ns;
}
void sim_phase_mark(struct fe_sim *sim)
{
    if (sim->part) { /* a partition's copy: the run marks it at the end of the window */
        sim_par_defer_phase(sim);
        return;
    }
    if (!sim->n_flows || sim->n_flows > FE_SIM_MAX_PHASE_FLOWS) return;
    size_t n = sim->n_flows;
    uint32_t k = sim->n_phase_pts;
    if (k && sim->phase_t[k - 1] == sim->now) {
        k--; /* same instant: update that boundary */
    } else {
        if (k == sim->cap_phase_pts) {
            uint32_t cap = sim->cap_phase_pts ? sim->cap_phase_pts * 2 : 16;
            uint64_t *t = realloc(sim->phase_t, cap * sizeof(*t));
            if (t) sim->phase_t = t;
            uint64_t *rx = realloc(sim->phase_rx, (size_t)cap * n * sizeof(*rx));
            if (rx) sim->phase_rx = rx;
            uint8_t *ac = realloc(sim->phase_active, (size_t)cap * n);
            if (ac) sim->phase_active = ac;
            uint64_t *mt = realloc(sim->phase_mid_t, cap * sizeof(*mt));
            if (mt) sim->phase_mid_t = mt;
            uint64_t *mrx = realloc(sim->phase_mid_rx, (size_t)cap * n * sizeof(*mrx));
            if (mrx) sim->phase_mid_rx = mrx;
            if (!sim->ckpt_t) sim->ckpt_t = malloc(SIM_CKPTS * sizeof(uint64_t));
            if (!sim->ckpt_rx) sim->ckpt_rx = malloc(SIM_CKPTS * n * sizeof(uint64_t));
            /* phases are a report, not the model: skip */
            if (!t || !rx || !ac || !mt || !mrx || !sim->ckpt_t || !sim->ckpt_rx) return;
            sim->cap_phase_pts = cap;
        }
        if (k) { /* the phase that ends now: keep its middle */
            const uint64_t *mrx;
            sim->phase_mid_t[k - 1] = sim_phase_middle(sim, k - 1, &mrx);
            memmove(&sim->phase_mid_rx[(k - 1) * n], mrx, n * sizeof(uint64_t));
        }
        sim->n_phase_pts++;
    }
    sim->phase_t[k] = sim->now;
    flows_rx_now(sim, &sim->phase_rx[(size_t)k * n]);
    bool any = false;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        const struct sim_flow *f = &sim->flows[i];
        sim->phase_active[(size_t)k * n + i] = f->started && !f->done;
        any |= f->started && !f->done;
    }
    /* the new phase's checkpoints: none while no flow is active */
    sim->n_ckpt = 0;
    sim->ckpt_dt_ns = SIM_CKPT_DT0_NS;
    sim->ckpt_next = any ? sim->now + SIM_CKPT_DT0_NS : FE_SIM_NO_TIME;
}
