/* feroce switch: an emulated switch between socket ports: a bottleneck with a rate, a byte-
 * limited queue, RED/ECN marking, loss/reorder/duplication/corruption/delay injection and the
 * firmware paper's threshold mode (forged CNPs). A real forwarding element on real sockets. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/eswitch.h"
#include "feroce/io.h"
#include "tools/cli.h"
#include "web/web_io.h"

static const char usage[] =
    "usage: feroce switch [OPTIONS]\n"
    "An emulated switch on real sockets.\n"
    "  UDP form (loopback): --port ADDR:PORT (repeatable) access ports hosts send to, and\n"
    "     --to ADDR[:PORT] the receiver behind the bottleneck (port 4791). Replies from the\n"
    "     receiver go back through the access port they belong to.\n"
    "  raw form (namespaces): --backend raw --if IFNAME (repeatable): an L2 learning switch;\n"
    "     --bottleneck IFNAME: the shaped egress port (default: all ports)\n"
    "bottleneck egress:\n"
    "  --rate RATE          egress rate, wire bytes (e.g. 1Gbps; default: not shaped)\n"
    "  --queue SIZE         tail-drop limit of the queue (1M)\n"
    "  --ecn                RED/ECN marking: --kmin SIZE (5K) --kmax SIZE (200K) --pmax P (0.01)\n"
    "  --loss P             random drops (probability, e.g. 0.02)\n"
    "  --reorder P          hold a packet back behind the next one\n"
    "  --dup P              send a packet twice\n"
    "  --corrupt P          flip a byte of a packet past its BTH (the receiver's ICRC check\n"
    "                       must catch it)\n"
    "  --delay TIME         added one-way latency\n"
    "  --seed N             for the random choices (1)\n"
    "  --threshold RATE --window TIME   forge a CNP to a sender whose throughput over the\n"
    "                       window (32us) exceeds RATE (the firmware paper's emulated switch)\n"
    "run: --duration TIME  --interval TIME (1s, 0 = quiet)  --json  --cpu N  --busy-poll\n"
    "web: --web [ADDR:]PORT  live dashboard (docs/dashboard.md)  --web-hold TIME\n";

static int parse_prob_ppm(const char *s, uint32_t *ppm, const char *what)
{
    char *end;
    double p = strtod(s, &end);
    if (end == s || *end || p < 0 || p > 1) {
        fprintf(stderr, "feroce switch: %s must be a probability 0..1, not '%s'\n", what, s);
        return -1;
    }
    *ppm = (uint32_t)(p * 1e6 + 0.5);
    return 0;
}

static void print_ports(const struct fe_eswitch *s, const struct fe_esw_port_stats *prev, double dt,
                        double t, bool udp)
{
    unsigned n = fe_eswitch_n_ports(s);
    printf("%7.1fs", t);
    for (unsigned i = 0; i < n; i++) {
        const struct fe_esw_port_stats *p = fe_eswitch_port_stats(s, i);
        bool bn = udp && i == n - 1;
        double rx = (double)(p->rx_bytes - prev[i].rx_bytes) * 8 / dt / 1e9;
        double tx = (double)(p->tx_bytes - prev[i].tx_bytes) * 8 / dt / 1e9;
        if (bn)
            printf("  | bottleneck out %.3f Gb/s q %" PRIu64 "K max %" PRIu64 "K marked %" PRIu64
                   " drop %" PRIu64 "+%" PRIu64,
                   tx, p->qlen_bytes / 1024, p->qlen_max_bytes / 1024, p->marked - prev[i].marked,
                   p->drops_full - prev[i].drops_full, p->drops_loss - prev[i].drops_loss);
        else
            printf("  | p%u in %.3f out %.3f Gb/s%s", i, rx, tx, p->cnps_forged ? " cnp" : "");
    }
    printf("\n");
}

/* The switch being run: its configuration, the process options, and the engine. */
struct sw_run {
    struct fe_eswitch_config c;
    uint64_t duration_ns, interval_ns;
    bool json, busy_poll;
    int cpu;
    const char *bottleneck;
    struct fe_loop *loop;
    struct fe_eswitch *s;
    uint64_t t0;
    bool udp;
    struct fe_web_opts web;
};

static int pmax_opt(const char *v, void *p)
{
    return parse_prob_ppm(v, p, "--pmax");
}

static int loss_opt(const char *v, void *p)
{
    return parse_prob_ppm(v, p, "--loss");
}

static int reorder_opt(const char *v, void *p)
{
    return parse_prob_ppm(v, p, "--reorder");
}

static int dup_opt(const char *v, void *p)
{
    return parse_prob_ppm(v, p, "--dup");
}

static int corrupt_opt(const char *v, void *p)
{
    return parse_prob_ppm(v, p, "--corrupt");
}

/* --port ADDR:PORT, an access port (a port number is needed) */
static int add_port(const char *v, void *p)
{
    struct fe_eswitch_config *c = p;
    if (c->n_ports >= FE_ESW_MAX_PORTS) return -1;
    if (fe_io_parse_addr(v, &c->port_ip[c->n_ports], &c->port_port[c->n_ports]) ||
        !c->port_port[c->n_ports])
        return -1;
    c->n_ports++;
    return 0;
}

static int add_if(const char *v, void *p)
{
    struct fe_eswitch_config *c = p;
    if (c->n_ifs >= FE_ESW_MAX_PORTS) return -1;
    snprintf(c->ifname[c->n_ifs++], sizeof c->ifname[0], "%s", v);
    return 0;
}

static int backend_opt(const char *v, void *p)
{
    return fe_backend_parse(v, p);
}

static int to_opt(const char *v, void *p)
{
    struct fe_eswitch_config *c = p;
    return fe_io_parse_addr(v, &c->to_ip, &c->to_port);
}

/* --bottleneck names one of the --if ports */
static int find_bottleneck(struct sw_run *r)
{
    if (!r->bottleneck) return 0;
    for (unsigned i = 0; i < r->c.n_ifs; i++)
        if (!strcmp(r->c.ifname[i], r->bottleneck)) r->c.bottleneck_if = (int)i;
    if (r->c.bottleneck_if < 0) {
        fprintf(stderr, "feroce switch: --bottleneck %s is not one of the --if ports\n",
                r->bottleneck);
        return -1;
    }
    return 0;
}

static int parse_opts(int argc, char **argv, struct sw_run *r)
{
    struct fe_eswitch_config *c = &r->c;
    fe_eswitch_config_default(c);
    r->interval_ns = 1000000000ull;
    r->cpu = -1;
    const struct fe_opt opts[] = {
        {FE_OPT_FN_("--backend", backend_opt, &c->backend)},
        {FE_OPT_FN_("--port", add_port, c)},
        {FE_OPT_FN_("--to", to_opt, c)},
        {FE_OPT_FN_("--if", add_if, c)},
        {FE_OPT_STR_("--bottleneck", r->bottleneck)},
        {FE_OPT_RATE_("--rate", c->rate_bps)},
        {FE_OPT_SIZE_("--queue", c->queue_bytes)},
        {FE_OPT_FLAG_("--ecn", c->ecn)},
        {FE_OPT_SIZE_("--kmin", c->red.kmin_bytes), .seen = &c->ecn},
        {FE_OPT_SIZE_("--kmax", c->red.kmax_bytes), .seen = &c->ecn},
        {FE_OPT_FN_("--pmax", pmax_opt, &c->red.pmax_ppm), .seen = &c->ecn},
        {FE_OPT_FN_("--loss", loss_opt, &c->loss_ppm)},
        {FE_OPT_FN_("--reorder", reorder_opt, &c->reorder_ppm)},
        {FE_OPT_FN_("--dup", dup_opt, &c->dup_ppm)},
        {FE_OPT_FN_("--corrupt", corrupt_opt, &c->corrupt_ppm)},
        {FE_OPT_TIME_("--delay", c->delay_ns)},
        {FE_OPT_UINT_("--seed", c->seed)},
        {FE_OPT_RATE_("--threshold", c->thresh_bps)},
        {FE_OPT_TIME_("--window", c->window_ns)},
        {FE_OPT_TIME_("--duration", r->duration_ns)},
        {FE_OPT_TIME_("--interval", r->interval_ns)},
        {FE_OPT_FLAG_("--json", r->json)},
        {FE_OPT_FLAG_("--busy-poll", r->busy_poll)},
        {FE_OPT_UINT_("--cpu", r->cpu), .max = 4095},
        {FE_OPT_STR_("--web", r->web.addr)},
        {FE_OPT_TIME_("--web-hold", r->web.hold_ns)},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {.cmd = "switch", .tables = tables, .flags = FE_OPT_SAY_INVALID};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    return find_bottleneck(r);
}

/* The event loop and the switch, its sockets in the loop. */
static int setup_switch(struct sw_run *r)
{
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    lc.busy_poll = r->busy_poll;
    lc.cpu = r->cpu;
    int err;
    r->loop = fe_loop_create(&lc, &err);
    if (!r->loop) {
        fprintf(stderr, "feroce switch: event loop: %s\n", fe_io_fail_str(err));
        return -1;
    }
    char msg[256] = "";
    r->t0 = fe_io_now_ns();
    r->s = fe_eswitch_create(&r->c, r->t0, &err, msg, sizeof msg);
    if (!r->s) {
        fprintf(stderr, "feroce switch: %s\n", msg[0] ? msg : fe_strerror(err));
        return -1;
    }
    int fds[32], nfd = fe_eswitch_fds(r->s, fds, 32);
    for (int i = 0; i < nfd; i++) fe_loop_add(r->loop, fds[i], i);
    r->udp = r->c.backend == FE_BACKEND_UDP;
    return fe_web_io_switch(&r->web, r->s, &r->c);
}

/* Forwards until --duration or a signal, with a line per --interval. */
static void run_loop(struct sw_run *r)
{
    struct fe_esw_port_stats prev[FE_ESW_MAX_PORTS + 1];
    memset(prev, 0, sizeof prev);
    uint64_t interval = r->interval_ns, duration = r->duration_ns, t0 = r->t0;
    uint64_t next_tick = t0 + (interval ? interval : UINT64_MAX / 2), last = t0;
    unsigned ready = FE_READY_ALL;
    while (!fe_cli_signals) {
        uint64_t now = fe_io_now_ns();
        fe_eswitch_step(r->s, now, ready);
        fe_web_io_step(&r->web, now);
        ready = 0;
        if (duration && now >= t0 + duration) break;
        if (interval && now >= next_tick) {
            if (!r->json) {
                print_ports(r->s, prev, (double)(now - last) / 1e9, (double)(now - t0) / 1e9,
                            r->udp);
                fflush(stdout);
            }
            for (unsigned i = 0; i < fe_eswitch_n_ports(r->s); i++)
                prev[i] = *fe_eswitch_port_stats(r->s, i);
            last = now;
            while (next_tick <= now) next_tick += interval;
        }
        uint64_t dl = fe_eswitch_next_deadline(r->s);
        if (interval && next_tick < dl) dl = next_tick;
        if (duration && t0 + duration < dl) dl = t0 + duration;
        dl = fe_web_io_deadline(&r->web, dl);
        int tags[32];
        int n = fe_loop_wait(r->loop, dl, tags, 32);
        for (int k = 0; k < n; k++) ready |= 1u << tags[k];
    }
}

static void print_port_json(unsigned i, const char *name, const struct fe_esw_port_stats *p)
{
    printf("%s{\"port\":%u,\"name\":\"%s\",\"rx_pkts\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
           ",\"tx_pkts\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"drops_full\":%" PRIu64
           ",\"drops_loss\":%" PRIu64 ",\"marked\":%" PRIu64 ",\"reordered\":%" PRIu64
           ",\"duplicated\":%" PRIu64 ",\"corrupted\":%" PRIu64 ",\"cnps_forged\":%" PRIu64
           ",\"qlen_max_bytes\":%" PRIu64 "}",
           i ? "," : "", i, name, p->rx_pkts, p->rx_bytes, p->tx_pkts, p->tx_bytes, p->drops_full,
           p->drops_loss, p->marked, p->reordered, p->duplicated, p->corrupted, p->cnps_forged,
           p->qlen_max_bytes);
}

static void print_port_text(unsigned i, const char *name, const struct fe_esw_port_stats *p)
{
    printf("port %u (%s): in %" PRIu64 " pkts %.3f GB, out %" PRIu64 " pkts %.3f GB, "
           "drops %" PRIu64 " full + %" PRIu64 " injected, %" PRIu64 " CE marks, %" PRIu64
           " reordered, %" PRIu64 " duplicated, %" PRIu64 " corrupted, %" PRIu64
           " CNPs forged, max queue %" PRIu64 " KiB\n",
           i, name, p->rx_pkts, (double)p->rx_bytes / 1e9, p->tx_pkts, (double)p->tx_bytes / 1e9,
           p->drops_full, p->drops_loss, p->marked, p->reordered, p->duplicated, p->corrupted,
           p->cnps_forged, p->qlen_max_bytes / 1024);
}

/* Every port's counters, as text or one JSON object. */
static void print_summary(const struct sw_run *r)
{
    double secs = (double)(fe_io_now_ns() - r->t0) / 1e9;
    unsigned n = fe_eswitch_n_ports(r->s);
    if (r->json) printf("{\"tool\":\"switch\",\"seconds\":%.6f,\"ports\":[", secs);
    for (unsigned i = 0; i < n; i++) {
        const struct fe_esw_port_stats *p = fe_eswitch_port_stats(r->s, i);
        const char *name = r->udp ? (i + 1 == n ? "bottleneck" : "access") : r->c.ifname[i];
        if (r->json)
            print_port_json(i, name, p);
        else
            print_port_text(i, name, p);
    }
    if (r->json) printf("]}\n");
}

static int run(int argc, char **argv)
{
    struct sw_run r = {0};
    if (parse_opts(argc, argv, &r)) return 2;
    int rc = 1;
    if (!setup_switch(&r)) {
        fe_cli_catch_stop_signals();
        run_loop(&r);
        print_summary(&r);
        fe_web_io_finish(&r.web, "switch");
        rc = 0;
    }
    fe_eswitch_destroy(r.s);
    fe_loop_destroy(r.loop);
    return rc;
}

const struct fe_cmd fe_cmd_switch = {
    "switch", "emulated switch: bottleneck, queue, RED/ECN, loss, threshold CNPs", usage, run};
