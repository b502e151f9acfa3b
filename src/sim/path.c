/* Path math of a flow at creation: its ECMP hashes, and along the way the switches route it
 * (sim_route), its unloaded RTT, bottleneck rate and standalone FCT. */
#include <math.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/link.h"
#include "sim/units.h"
#include "sim/ns3_frame.h"

static inline uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t x =
        ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull ^ (uint64_t)c * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint32_t)x;
}

static uint64_t ser_ns(uint64_t bytes, uint64_t rate_bps)
{
    return (bytes * 8u * 1000000000u + rate_bps - 1) / rate_bps;
}

/* Follows the way the switches route from host src to host dst for an ECMP hash (sim_route):
 * its unloaded RTT, bottleneck rate and HPCC pair RTT; FE_EINVAL when it does not reach dst
 * (the routes are shortest paths: at most one hop per node). */
static int walk_path(struct fe_sim *sim, uint32_t src, uint32_t dst, uint32_t hash,
                     uint32_t payload, uint64_t *rtt_out, uint64_t *rate_out,
                     uint64_t *hpcc_rtt_out)
{
    uint32_t n = 0;
    uint64_t data_frame = sim->max_frame_bytes + sim->ifg;
    struct fe_pkt ack;
    memset(&ack, 0, sizeof(ack));
    ack.bth.opcode = FE_OP_ACK;
    uint64_t ack_frame = sim_frame_bytes(sim, &ack) + sim->ifg;
    struct sim_port *p = &sim->nodes[src].ports[0];
    uint64_t rtt = 0, rate = UINT64_MAX, hpcc_rtt = 0;
    for (;;) {
        rtt += 2 * p->delay_ns + ser_ns(data_frame, p->rate_bps) + ser_ns(ack_frame, p->rate_bps);
        /* HPCC's pairRtt: delays and the payload's serialization only, truncated per hop */
        hpcc_rtt += 2 * p->delay_ns + (uint64_t)payload * 8000000000u / p->rate_bps;
        if (p->rate_bps < rate) rate = p->rate_bps;
        struct sim_node *nd = p->peer->node;
        if (!nd->is_switch) break;
        p = sim_route(nd->sw, dst, hash);
        if (!p || ++n > sim->n_nodes) return FE_EINVAL;
    }
    if (p->peer->node->id != dst) return FE_EINVAL;
    if (rtt_out) *rtt_out = rtt;
    if (rate_out) *rate_out = rate;
    if (hpcc_rtt_out) *hpcc_rtt_out = hpcc_rtt;
    return 0;
}

int sim_flow_path_info(struct fe_sim *sim, struct sim_flow *f)
{
    struct sim_host *hs = sim->nodes[f->spec.src].host;
    if (!f->spec.sport) f->spec.sport = (uint16_t)(hs->next_sport++ & 0xFFFF);
    f->hash_fwd = hash3(f->spec.src, f->spec.dst, f->spec.sport);
    f->hash_rev = hash3(f->spec.dst, f->spec.src, f->spec.sport);
    uint64_t rtt = 0, rate = 0, hpcc_rtt = 0;
    /* payload per packet: the MTU, or the message size when messages are smaller */
    uint32_t pay = sim->sc.host.mtu_bytes;
    if (f->spec.msg_bytes && f->spec.msg_bytes < pay) pay = f->spec.msg_bytes;
    int rc = walk_path(sim, f->spec.src, f->spec.dst, f->hash_fwd, pay, &rtt, &rate, &hpcc_rtt);
    if (!rc) rc = walk_path(sim, f->spec.dst, f->spec.src, f->hash_rev, pay, NULL, NULL, NULL);
    if (rc) return rc;
    f->base_rtt_ns = rtt;
    f->path_rate_bps = rate;
    uint64_t pkts = (f->spec.bytes + pay - 1) / pay;
    if (sim->ns3_frames) {
        /* HPCC's own formula (third.cc qp_finish), so that fct / standalone compares: its pair
         * RTT plus the bytes with 48 header bytes per packet at the bottleneck rate */
        uint64_t wire = f->spec.bytes + pkts * SIM_NS3_DATA_HDR_BYTES;
        f->standalone_fct_ns = (double)hpcc_rtt + floor((double)(wire * 8u) * 1e9 / (double)rate);
        return 0;
    }
    uint64_t per_pkt = sim->max_frame_bytes + sim->ifg - sim->sc.host.mtu_bytes;
    double wire = (double)f->spec.bytes + (double)pkts * (double)per_pkt;
    f->standalone_fct_ns = (double)rtt + wire * 8e9 / (double)rate;
    return 0;
}
