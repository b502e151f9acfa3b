/* The fe_qp configurations of a flow's two QPs: the requester's (its CC, pacer, replay buffer,
 * send queue sized for its messages) and the responder's (a sink), from the scenario's host
 * settings and the flow's path. */
#include <string.h>

#include "sim/eb.h"
#include "sim/link.h"
#include "sim/ns3_frame.h"
#include "transport/qp_sim.h"

static void fill_path(struct fe_path *path, uint32_t src_node, uint32_t dst_node, uint16_t sport)
{
    memset(path, 0, sizeof(*path));
    path->ipver = 4;
    path->src_ip4 = 0x0B000001u + (src_node << 8); /* 11.0.x.1: HPCC's host id = (ip >> 8) */
    path->dst_ip4 = 0x0B000001u + (dst_node << 8);
    path->src_mac[0] = path->dst_mac[0] = 0x02;
    path->src_mac[5] = (uint8_t)src_node;
    path->dst_mac[5] = (uint8_t)dst_node;
    path->udp_sport = sport;
}

/* With --ns3-compat, a DCQCN flow is paced as HPCC ns-3 paces it (fe_qp_sim_config.ns3_gap_ns):
 * each packet's gap is fixed when it leaves, at the rate of that moment. The other algorithms
 * keep the token bucket (ns-3's HPCC moves the next send when its rate changes). */
static bool ns3_paced(const struct fe_sim *sim, const struct sim_flow *f)
{
    const struct fe_cc_algo *a = sim->sc.cc[f->spec.cc].algo;
    return sim->ns3_frames && a && (a->caps & FE_CC_CAP_DCQCN);
}

uint64_t sim_flow_line_bps(const struct fe_sim *sim, const struct sim_flow *f)
{
    uint64_t line = sim->nodes[f->spec.src].ports[0].rate_bps;
    /* ns-3's gaps are cut to whole ns as its links' times are: at the nominal line rate the
     * gap is the frame's time on the link, back to back */
    if (ns3_paced(sim, f)) return line;
    if (sim->ns3_frames) {
        /* ns-3's NIC paces a QP's packets Seconds(size / rate) apart, cut to whole ns as its
         * links are (link.c): at line rate it sends back to back. The line rate of the QP (its
         * CC's ceiling, its pacer's rate there) is therefore the rate of those frames: 1048
         * bytes every 838 ns at 10 Gb/s, not 838.4, which would idle the link 0.4 ns a frame */
        uint32_t pay = sim->sc.host.mtu_bytes;
        if (f->spec.msg_bytes && f->spec.msg_bytes < pay) pay = f->spec.msg_bytes;
        uint32_t frame = pay + SIM_NS3_DATA_HDR_BYTES + sim->ns3_int_bytes;
        uint64_t t = sim_link_ns3_ser_ns(line, frame);
        if (t) line = ((uint64_t)frame * 1000000000u + t - 1) / t * 8; /* whole bytes/s */
    }
    return line;
}

/* The transport's acknowledgement settings: an ACK per packet where the algorithm's model has
 * one (FE_CC_CAP_ACK_EVERY_PKT, see fe_sim_create), else the hosts' coalescing; the
 * notification point's. */
static void config_acks(const struct fe_sim *sim, const struct sim_flow *f, struct fe_qp_config *c)
{
    const struct fe_sim_host_cfg *hc = &sim->sc.host;
    bool per_packet_acks = sim->cc_acks_every_pkt[f->spec.cc];
    c->ackreq_every = per_packet_acks ? 1 : hc->ackreq_every;
    c->ack_every = per_packet_acks ? 1 : hc->ack_every;
    c->np_enable = hc->np_enable;
    c->cnp_interval_ns = hc->cnp_interval_ns;
    c->cnp_dscp = hc->cnp_dscp;
    c->cnp_pcp = hc->cnp_pcp;
}

/* The requester's send queue: enough WRs to fill the replay buffer with messages, and room
 * for their completions. */
static void config_queues(const struct fe_sim *sim, const struct sim_flow *f,
                          struct fe_qp_config *c)
{
    uint64_t replay = sim->window_bdp_bytes ? sim->window_bdp_bytes : sim->sc.host.replay_bytes;
    if (replay) c->replay_bytes = replay; /* else the QP's default (2 MiB) */
    uint64_t msg = f->spec.msg_bytes ? f->spec.msg_bytes : (1u << 30);
    uint64_t sq = (replay ? replay : c->replay_bytes) / msg + 8;
    if (sq > 65536) sq = 65536;
    c->sq_depth = (uint32_t)sq;
    c->rq_depth = 1;
    c->cq_depth = (uint32_t)sq + 16;
    c->max_mr = 1;
}

void sim_flow_qp_configs(const struct fe_sim *sim, const struct sim_flow *f, const struct sim_qp *a,
                         const struct sim_qp *b, uint64_t line_bps, struct fe_qp_config *ca,
                         struct fe_qp_config *cb, struct fe_qp_sim_config *sa,
                         struct fe_qp_sim_config *sb)
{
    const struct fe_sim_scenario *sc = &sim->sc;
    const struct fe_sim_host_cfg *hc = &sc->host;
    const struct fe_sim_cc *cc = &sc->cc[f->spec.cc];
    fe_qp_config_default(ca);
    ca->local_qpn = a->qpn;
    ca->remote_qpn = b->qpn;
    ca->sq_psn = 0;
    ca->rq_psn = 0;
    ca->remote_va = SIM_FLOW_VA;
    ca->remote_rkey = SIM_FLOW_RKEY;
    ca->mtu_bytes = hc->mtu_bytes;
    fill_path(&ca->path, f->spec.src, f->spec.dst, f->spec.sport);
    ca->dscp = hc->data_dscp;
    ca->pcp = f->spec.prio;
    ca->data_ecn = sc->sw.ecn ? FE_ECN_ECT0 : FE_ECN_NOT_ECT;
    config_queues(sim, f, ca);
    ca->ack_timeout_ns = hc->ack_timeout_ns;
    ca->retry_cnt = hc->retry_cnt;
    ca->rnr_retry = 7;
    config_acks(sim, f, ca);
    ca->cc_algo = cc->algo;
    ca->cc_params = cc->algo ? &cc->params : NULL;
    ca->line_rate_bps = line_bps;
    ca->base_rtt_ns = f->base_rtt_ns;
    ca->pacer_burst_bytes = hc->pacer_burst_bytes;
    /* the pacer counts the frames as the links carry them (HPCC ns-3: payload + 48 + INT) */
    *sa = (struct fe_qp_sim_config){.np_ecn_echo_on_ack = sim->sc.host.ecn_echo_on_ack};
    if (sim->ns3_frames) sa->frame_overhead_bytes = SIM_NS3_DATA_HDR_BYTES + sim->ns3_int_bytes;
    if (ns3_paced(sim, f)) sa->ns3_gap_ns = sim_link_ns3_ser_ns;
    *sb = *sa;
    *cb = *ca;
    cb->local_qpn = b->qpn;
    cb->remote_qpn = a->qpn;
    fill_path(&cb->path, f->spec.dst, f->spec.src, f->spec.sport);
    cb->cc_algo = NULL;
    cb->cc_params = NULL;
    cb->replay_bytes = 65536;
    cb->sq_depth = 1;
    cb->cq_depth = 16;
    cb->line_rate_bps = sim->nodes[f->spec.dst].ports[0].rate_bps;
    sb->int_echo = sim->int_enable; /* the responder echoes INT on its ACKs (HPCC) */
    if (f->eb) sim_eb_qp_configs(sim, ca, cb);
}
