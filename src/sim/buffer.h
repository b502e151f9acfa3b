/* Shared-buffer admission of a switch (the model of Broadcom-class MMUs that the ns-3 RDMA
 * simulators also use). Every frame is accounted to its ingress (port, priority): first a small
 * guaranteed reserve, then the shared pool up to a dynamic threshold alpha x (free shared
 * buffer), then, for lossless priorities, the port's PFC headroom. The headroom and the reserves
 * are carved out of the buffer at build time, so a lossless frame that fits its headroom always
 * has room. Inline: every frame through a switch passes here twice (admission, release). */
#ifndef FE_SIM_BUFFER_H
#define FE_SIM_BUFFER_H

#include "sim/sim_internal.h"

static inline __attribute__((always_inline)) uint64_t
sim_buffer_threshold(const struct sim_switch *sw, const struct fe_sim *sim)
{
    uint64_t free_shared =
        sw->shared_used < sw->shared_bytes ? sw->shared_bytes - sw->shared_used : 0;
    return (free_shared >> 16) * sim->dt_alpha_q16 +
           ((free_shared & 0xFFFF) * sim->dt_alpha_q16 >> 16);
}

static inline __attribute__((always_inline)) bool sim_buffer_lossless(const struct fe_sim *sim,
                                                                      uint8_t prio)
{
    return sim->lossless_prios >> prio & 1;
}

static inline bool sim_buffer_admit(struct fe_sim *sim, struct sim_switch *sw, struct sim_port *in,
                                    uint8_t prio, uint32_t bytes, int *reason)
{
    struct sim_ingress *ing = &in->tc[prio].in;
    /* The reserve is a byte allowance: a frame that straddles its end puts the rest in the
     * shared pool (cell-based MMUs, and the ns-3 simulators' MMU, count bytes, not frames) */
    uint64_t room =
        ing->reserve_used < sim->reserve_bytes ? sim->reserve_bytes - ing->reserve_used : 0;
    uint64_t over = bytes > room ? bytes - room : 0;
    if (!over) {
        ing->reserve_used += bytes;
    } else if (ing->shared_used + over <= sim_buffer_threshold(sw, sim) &&
               sw->shared_used + over <= sw->shared_bytes) {
        ing->reserve_used += room;
        ing->shared_used += over;
        sw->shared_used += over;
    } else if (sim_buffer_lossless(sim, prio)) {
        if (ing->hdrm_used + bytes > in->headroom_bytes) {
            *reason = FE_SIM_DROP_HEADROOM;
            return false;
        }
        ing->hdrm_used += bytes;
        if (ing->hdrm_used > sim->st.max_headroom_bytes)
            sim->st.max_headroom_bytes = ing->hdrm_used;
    } else {
        *reason = FE_SIM_DROP_BUFFER;
        return false;
    }
    sw->used_bytes += bytes;
    if (sw->used_bytes > sw->max_used) sw->max_used = sw->used_bytes;
    return true;
}

static inline void sim_buffer_release(struct fe_sim *sim, struct sim_switch *sw,
                                      struct sim_port *in, uint8_t prio, uint32_t bytes)
{
    (void)sim;
    struct sim_ingress *ing = &in->tc[prio].in;
    /* Headroom first: the condition for RESUME is an empty headroom. */
    uint64_t rest = bytes;
    uint64_t h = ing->hdrm_used < rest ? ing->hdrm_used : rest;
    ing->hdrm_used -= h;
    rest -= h;
    uint64_t s = ing->shared_used < rest ? ing->shared_used : rest;
    ing->shared_used -= s;
    sw->shared_used -= s;
    rest -= s;
    ing->reserve_used -= ing->reserve_used < rest ? ing->reserve_used : rest;
    sw->used_bytes -= bytes;
}

static inline bool sim_buffer_should_pause(const struct fe_sim *sim, const struct sim_switch *sw,
                                           const struct sim_port *in, uint8_t prio)
{
    const struct sim_ingress *ing = &in->tc[prio].in;
    return ing->hdrm_used > 0 || ing->shared_used >= sim_buffer_threshold(sw, sim);
}

static inline bool sim_buffer_should_resume(const struct fe_sim *sim, const struct sim_switch *sw,
                                            const struct sim_port *in, uint8_t prio)
{
    const struct sim_ingress *ing = &in->tc[prio].in;
    if (ing->hdrm_used > 0) return false;
    return ing->shared_used == 0 ||
           ing->shared_used + sim->sc.sw.xon_offset_bytes <= sim_buffer_threshold(sw, sim);
}

/* A frame that the switch sends on at once (its egress port idle) is admitted and released in
 * the same instant. When its ingress (port, priority) holds nothing beyond the reserve, is not
 * paused, and the frame fits the reserve, admission, release and the PFC checks around them
 * leave every count as it was: only the peak use moves. (PAUSE needs headroom or shared use, or
 * a zero threshold on a lossless priority; RESUME needs a pause.) True when that is the case. */
static inline bool sim_buffer_pass_through(const struct fe_sim *sim, const struct sim_switch *sw,
                                           const struct sim_port *in, uint8_t prio, uint32_t bytes)
{
    const struct sim_ingress *ing = &in->tc[prio].in;
    return !ing->hdrm_used && !ing->shared_used && !ing->xoff &&
           ing->reserve_used + bytes <= sim->reserve_bytes &&
           sw->shared_used < sw->pass_below[prio];
}

/* PFC after an admission / a release on ingress (in, prio): the decision inline, the frames
 * from pfc.c. */
static inline void sim_pfc_check_xoff(struct fe_sim *sim, struct sim_switch *sw,
                                      struct sim_port *in, uint8_t prio)
{
    if (!sim_buffer_lossless(sim, prio) || in->tc[prio].in.xoff ||
        !sim_buffer_should_pause(sim, sw, in, prio))
        return;
    sim_pfc_xoff(sim, in, prio);
}

static inline void sim_pfc_check_xon(struct fe_sim *sim, struct sim_switch *sw, struct sim_port *in,
                                     uint8_t prio)
{
    if (!in->tc[prio].in.xoff || !sim_buffer_should_resume(sim, sw, in, prio)) return;
    sim_pfc_xon(sim, in, prio);
}

#endif
