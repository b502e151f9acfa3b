/* The web view of the tools on real sockets: `feroce send`, `recv`, `switch`, and event
 * building's `builder`, `evm` and `demo --event-building`, with --web
 * [ADDR:]PORT (--web-hold TIME, --web-write). The tool's loop calls fe_web_io_step once per
 * iteration: every 50 ms it copies the counters and CC state the tool already keeps (its live
 * line reads the same) into a sample handed over with a try-lock (fe_web_push), and applies
 * the CC parameters the page set (--web-write); nothing else of the tool changes, and the
 * server's threads never touch the engine. Without the web layer in the build the calls are
 * stubs, and --web is refused with a message. */
#ifndef FE_WEB_IO_H
#define FE_WEB_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fe_web_io;
struct fe_frontend;
struct fe_frontend_config;
struct fe_daq;
struct fe_eswitch;
struct fe_eswitch_config;
struct fe_cc_params;
struct fe_web_sample;
struct fe_web_builder;

/* Event building (builder, evm, demo --event-building): the tool fills the sample's builders
 * (n_builders, b[], busy) from what it keeps for its live line, on its own thread. */
typedef void fe_web_eb_fill_fn(void *ctx, struct fe_web_sample *s);
struct fe_web_eb_run {
    const char *description;
    unsigned n_builders;    /* shown (at most FE_WEB_MAX_BUILDERS) */
    uint32_t first_builder; /* their ids: first_builder.. */
    fe_web_eb_fill_fn *fill;
    void *ctx;
};

/* The command line's --web options, and the view once started. */
struct fe_web_opts {
    const char *addr; /* --web [ADDR:]PORT; NULL: no web view */
    uint64_t hold_ns; /* --web-hold: serving after the run */
    bool write;       /* --web-write */
    struct fe_web_io *io;
};

#ifdef FE_HAVE_WEB
/* Start serving the tool's engine (which must outlive the view): 0, or -1 after a message on
 * stderr. Nothing without o->addr. fc: the front-end's configuration (QPs, CC, parameters). */
int fe_web_io_send(struct fe_web_opts *o, struct fe_frontend *f,
                   const struct fe_frontend_config *fc);
int fe_web_io_recv(struct fe_web_opts *o, struct fe_daq *d);
int fe_web_io_switch(struct fe_web_opts *o, struct fe_eswitch *s,
                     const struct fe_eswitch_config *c);
/* Event building's view: cmd is the tool's name; r is copied. */
int fe_web_io_eb(struct fe_web_opts *o, const char *cmd, const struct fe_web_eb_run *r);
/* The median and 99th percentile of the latencies lat[0..n) (the newest 4096 of them) into
 * x (has_latency false when n is 0); lat is left as it was. */
void fe_web_eb_latency(struct fe_web_builder *x, const uint64_t *lat, size_t n);
/* A sample when one is due, and the page's parameter changes: once per loop iteration. */
void fe_web_io_step(struct fe_web_opts *o, uint64_t now_ns);
/* dl, or the next sample's time when that is sooner (the loop's wait). */
uint64_t fe_web_io_deadline(const struct fe_web_opts *o, uint64_t dl);
/* The last sample, --web-hold, and the server stopped. */
void fe_web_io_finish(struct fe_web_opts *o, const char *cmd);
/* The port the view listens on (0: none). */
uint16_t fe_web_io_port(const struct fe_web_opts *o);
#else
static inline int fe_web_io_refuse(const struct fe_web_opts *o)
{
    if (!o->addr) return 0;
    fprintf(stderr, "feroce: --web is not built in (this build had no libmicrohttpd, no npm, "
                    "or FEROCE_WEB=OFF)\n");
    return -1;
}
static inline int fe_web_io_send(struct fe_web_opts *o, struct fe_frontend *f,
                                 const struct fe_frontend_config *fc)
{
    (void)f;
    (void)fc;
    return fe_web_io_refuse(o);
}
static inline int fe_web_io_recv(struct fe_web_opts *o, struct fe_daq *d)
{
    (void)d;
    return fe_web_io_refuse(o);
}
static inline int fe_web_io_switch(struct fe_web_opts *o, struct fe_eswitch *s,
                                   const struct fe_eswitch_config *c)
{
    (void)s;
    (void)c;
    return fe_web_io_refuse(o);
}
static inline int fe_web_io_eb(struct fe_web_opts *o, const char *cmd,
                               const struct fe_web_eb_run *r)
{
    (void)cmd;
    (void)r;
    return fe_web_io_refuse(o);
}
static inline void fe_web_eb_latency(struct fe_web_builder *x, const uint64_t *lat, size_t n)
{
    (void)x;
    (void)lat;
    (void)n;
}
static inline void fe_web_io_step(struct fe_web_opts *o, uint64_t now_ns)
{
    (void)o;
    (void)now_ns;
}
static inline uint64_t fe_web_io_deadline(const struct fe_web_opts *o, uint64_t dl)
{
    (void)o;
    return dl;
}
static inline void fe_web_io_finish(struct fe_web_opts *o, const char *cmd)
{
    (void)o;
    (void)cmd;
}
#endif

#endif
