/* feroce switch: an emulated switch between socket ports: a bottleneck with a rate, a byte-
 * limited queue, RED/ECN marking, loss/reorder/delay injection and the firmware paper's
 * threshold mode (forged CNPs). A real forwarding element on real sockets. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/eswitch.h"
#include "feroce/io.h"
#include "tools/cli.h"

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
    "  --delay TIME         added one-way latency\n"
    "  --seed N             for the random choices (1)\n"
    "  --threshold RATE --window TIME   forge a CNP to a sender whose throughput over the\n"
    "                       window (32us) exceeds RATE (the firmware paper's emulated switch)\n"
    "run: --duration TIME  --interval TIME (1s, 0 = quiet)  --json  --cpu N  --busy-poll\n";

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

static int run(int argc, char **argv)
{
    struct fe_eswitch_config c;
    fe_eswitch_config_default(&c);
    uint64_t duration = 0, interval = 1000000000ull, v;
    bool json = false, busy = false;
    int cpu = -1;
    const char *bottleneck = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--ecn") && strcmp(a, "--json") && strcmp(a, "--busy-poll");
        if (takes && !val) {
            fprintf(stderr, "feroce switch: %s needs a value\n", a);
            return 2;
        }
        if (takes) i++;
        int bad = 0;
        if (!strcmp(a, "--backend")) {
            bad = fe_backend_parse(val, &c.backend);
        } else if (!strcmp(a, "--port")) {
            if (c.n_ports >= FE_ESW_MAX_PORTS)
                bad = 1;
            else
                bad = fe_io_parse_addr(val, &c.port_ip[c.n_ports], &c.port_port[c.n_ports]) ||
                      !c.port_port[c.n_ports];
            if (!bad) c.n_ports++;
        } else if (!strcmp(a, "--to")) {
            bad = fe_io_parse_addr(val, &c.to_ip, &c.to_port);
        } else if (!strcmp(a, "--if")) {
            if (c.n_ifs >= FE_ESW_MAX_PORTS)
                bad = 1;
            else
                snprintf(c.ifname[c.n_ifs++], sizeof c.ifname[0], "%s", val);
        } else if (!strcmp(a, "--bottleneck")) {
            bottleneck = val;
        } else if (!strcmp(a, "--rate")) {
            bad = fe_parse_rate_bps(val, &c.rate_bps, a);
        } else if (!strcmp(a, "--queue")) {
            bad = fe_parse_size_bytes(val, &c.queue_bytes, a);
        } else if (!strcmp(a, "--ecn")) {
            c.ecn = true;
        } else if (!strcmp(a, "--kmin")) {
            bad = fe_parse_size_bytes(val, &c.red.kmin_bytes, a);
            c.ecn = true;
        } else if (!strcmp(a, "--kmax")) {
            bad = fe_parse_size_bytes(val, &c.red.kmax_bytes, a);
            c.ecn = true;
        } else if (!strcmp(a, "--pmax")) {
            bad = parse_prob_ppm(val, &c.red.pmax_ppm, a);
            c.ecn = true;
        } else if (!strcmp(a, "--loss")) {
            bad = parse_prob_ppm(val, &c.loss_ppm, a);
        } else if (!strcmp(a, "--reorder")) {
            bad = parse_prob_ppm(val, &c.reorder_ppm, a);
        } else if (!strcmp(a, "--delay")) {
            bad = fe_parse_duration_ns(val, &c.delay_ns, a);
        } else if (!strcmp(a, "--seed")) {
            bad = fe_parse_u64(val, &c.seed, a);
        } else if (!strcmp(a, "--threshold")) {
            bad = fe_parse_rate_bps(val, &c.thresh_bps, a);
        } else if (!strcmp(a, "--window")) {
            bad = fe_parse_duration_ns(val, &c.window_ns, a);
        } else if (!strcmp(a, "--duration")) {
            bad = fe_parse_duration_ns(val, &duration, a);
        } else if (!strcmp(a, "--interval")) {
            bad = fe_parse_duration_ns(val, &interval, a);
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--busy-poll")) {
            busy = true;
        } else if (!strcmp(a, "--cpu")) {
            bad = fe_parse_u64(val, &v, a) || v > 4095;
            cpu = (int)v;
        } else {
            fprintf(stderr, "feroce switch: unknown option '%s' (feroce switch --help)\n", a);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "feroce switch: invalid value for %s: '%s'\n", a, val ? val : "");
            return 2;
        }
    }
    if (bottleneck) {
        for (unsigned i = 0; i < c.n_ifs; i++)
            if (!strcmp(c.ifname[i], bottleneck)) c.bottleneck_if = (int)i;
        if (c.bottleneck_if < 0) {
            fprintf(stderr, "feroce switch: --bottleneck %s is not one of the --if ports\n",
                    bottleneck);
            return 2;
        }
    }
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    lc.busy_poll = busy;
    lc.cpu = cpu;
    int err;
    struct fe_loop *loop = fe_loop_create(&lc, &err);
    if (!loop) return 1;
    char msg[256] = "";
    uint64_t t0 = fe_io_now_ns();
    struct fe_eswitch *s = fe_eswitch_create(&c, t0, &err, msg, sizeof msg);
    if (!s) {
        fprintf(stderr, "feroce switch: %s\n", msg[0] ? msg : fe_strerror(err));
        fe_loop_destroy(loop);
        return 1;
    }
    int fds[32], nfd = fe_eswitch_fds(s, fds, 32);
    for (int i = 0; i < nfd; i++) fe_loop_add(loop, fds[i], i);
    fe_cli_catch_stop_signals();
    bool udp = c.backend == FE_BACKEND_UDP;
    struct fe_esw_port_stats prev[FE_ESW_MAX_PORTS + 1];
    memset(prev, 0, sizeof prev);
    uint64_t next_tick = t0 + (interval ? interval : UINT64_MAX / 2), last = t0;
    unsigned ready = FE_READY_ALL;
    while (!fe_cli_signals) {
        uint64_t now = fe_io_now_ns();
        fe_eswitch_step(s, now, ready);
        ready = 0;
        if (duration && now >= t0 + duration) break;
        if (interval && now >= next_tick) {
            if (!json) {
                print_ports(s, prev, (double)(now - last) / 1e9, (double)(now - t0) / 1e9, udp);
                fflush(stdout);
            }
            for (unsigned i = 0; i < fe_eswitch_n_ports(s); i++)
                prev[i] = *fe_eswitch_port_stats(s, i);
            last = now;
            while (next_tick <= now) next_tick += interval;
        }
        uint64_t dl = fe_eswitch_next_deadline(s);
        if (interval && next_tick < dl) dl = next_tick;
        if (duration && t0 + duration < dl) dl = t0 + duration;
        int tags[32];
        int n = fe_loop_wait(loop, dl, tags, 32);
        for (int k = 0; k < n; k++) ready |= 1u << tags[k];
    }
    double secs = (double)(fe_io_now_ns() - t0) / 1e9;
    if (json) printf("{\"tool\":\"switch\",\"seconds\":%.6f,\"ports\":[", secs);
    for (unsigned i = 0; i < fe_eswitch_n_ports(s); i++) {
        const struct fe_esw_port_stats *p = fe_eswitch_port_stats(s, i);
        const char *name =
            udp ? (i + 1 == fe_eswitch_n_ports(s) ? "bottleneck" : "access") : c.ifname[i];
        if (json)
            printf("%s{\"port\":%u,\"name\":\"%s\",\"rx_pkts\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
                   ",\"tx_pkts\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"drops_full\":%" PRIu64
                   ",\"drops_loss\":%" PRIu64 ",\"marked\":%" PRIu64 ",\"reordered\":%" PRIu64
                   ",\"cnps_forged\":%" PRIu64 ",\"qlen_max_bytes\":%" PRIu64 "}",
                   i ? "," : "", i, name, p->rx_pkts, p->rx_bytes, p->tx_pkts, p->tx_bytes,
                   p->drops_full, p->drops_loss, p->marked, p->reordered, p->cnps_forged,
                   p->qlen_max_bytes);
        else
            printf("port %u (%s): in %" PRIu64 " pkts %.3f GB, out %" PRIu64 " pkts %.3f GB, "
                   "drops %" PRIu64 " full + %" PRIu64 " injected, %" PRIu64 " CE marks, %" PRIu64
                   " reordered, %" PRIu64 " CNPs forged, max queue %" PRIu64 " KiB\n",
                   i, name, p->rx_pkts, (double)p->rx_bytes / 1e9, p->tx_pkts,
                   (double)p->tx_bytes / 1e9, p->drops_full, p->drops_loss, p->marked, p->reordered,
                   p->cnps_forged, p->qlen_max_bytes / 1024);
    }
    if (json) printf("]}\n");
    fe_eswitch_destroy(s);
    fe_loop_destroy(loop);
    return 0;
}

const struct fe_cmd fe_cmd_switch = {
    "switch", "emulated switch: bottleneck, queue, RED/ECN, loss, threshold CNPs", usage, run};
