/* The simulator's live web view (`feroce sim --web`) and a finished trace's (`feroce sim
 * --replay TRACE.csv --web`): samples of the flows' counters, CC variables and the deepest
 * switch queue, taken by the tool's run loop at simulated instants through the simulator's
 * public read-only API, so the simulator knows nothing of the web layer. Without the web
 * layer in the build, the calls below are stubs that say so. */
#ifndef FE_WEB_SIM_H
#define FE_WEB_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fe_sim;

struct fe_web_sim_opts {
    const char *addr;     /* --web [ADDR:]PORT */
    double speed;         /* simulated seconds per wall second; 0: as fast as it goes */
    uint64_t interval_ns; /* simulated time between samples */
    uint64_t hold_ns;     /* serving after the run: UINT64_MAX until Ctrl-C */
};

struct fe_web_sim;

#ifdef FE_HAVE_WEB
/* Starts serving the run of sim (which must outlive it): NULL with a sentence in err. */
struct fe_web_sim *fe_web_sim_start(struct fe_sim *sim, const struct fe_web_sim_opts *o, char *err,
                                    size_t err_cap);
/* The simulated time of the next sample. */
uint64_t fe_web_sim_next(const struct fe_web_sim *ws);
/* A sample at the simulator's time; then, paced, waits until the wall clock catches up. */
void fe_web_sim_sample(struct fe_web_sim *ws);
/* Serves the finished run for hold_ns (or until Ctrl-C), then stops. */
void fe_web_sim_finish(struct fe_web_sim *ws);
/* `feroce sim --replay TRACE.csv`: serves the trace until Ctrl-C or hold_ns. 0, or 1 after a
 * message on stderr (a trace that does not parse, the address). */
int fe_web_sim_replay(const char *path, const struct fe_web_sim_opts *o);
#else
static inline struct fe_web_sim *
fe_web_sim_start(struct fe_sim *sim, const struct fe_web_sim_opts *o, char *err, size_t err_cap)
{
    (void)sim;
    (void)o;
    if (err_cap) err[0] = 0;
    return NULL;
}
static inline uint64_t fe_web_sim_next(const struct fe_web_sim *ws)
{
    (void)ws;
    return UINT64_MAX;
}
static inline void fe_web_sim_sample(struct fe_web_sim *ws)
{
    (void)ws;
}
static inline void fe_web_sim_finish(struct fe_web_sim *ws)
{
    (void)ws;
}
static inline int fe_web_sim_replay(const char *path, const struct fe_web_sim_opts *o)
{
    (void)path;
    (void)o;
    return 1;
}
#endif

/* True when this build has the web view (else --web and --replay are refused). */
static inline bool fe_web_sim_available(void)
{
#ifdef FE_HAVE_WEB
    return true;
#else
    return false;
#endif
}

#endif
