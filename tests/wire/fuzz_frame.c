/* libFuzzer target: arbitrary bytes into fe_frame_decode (all three framings) and fe_pkt_parse.
 * Whatever parses must re-encode to a frame that decodes to the same packet with a good ICRC. */
#include "feroce/err.h"
#include "feroce/icrc.h"
#include "feroce/wire.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_pkt(const struct fe_pkt *a, const struct fe_pkt *b)
{
    unsigned f = fe_opcode_flags(a->bth.opcode);
    if (a->bth.opcode != b->bth.opcode || a->bth.se != b->bth.se ||
        a->bth.migreq != b->bth.migreq || a->bth.pkey != b->bth.pkey ||
        a->bth.fecn != b->bth.fecn || a->bth.becn != b->bth.becn || a->bth.resv6 != b->bth.resv6 ||
        a->bth.dqpn != b->bth.dqpn || a->bth.ackreq != b->bth.ackreq ||
        a->bth.resv7 != b->bth.resv7 || a->bth.psn != b->bth.psn ||
        a->bth.padcnt != b->bth.padcnt || a->payload_len != b->payload_len)
        abort();
    if ((f & (FE_OPF_RETH | FE_OPF_ATOMIC)) &&
        (a->reth.va != b->reth.va || a->reth.rkey != b->reth.rkey ||
         a->reth.dma_len != b->reth.dma_len))
        abort();
    if ((f & FE_OPF_AETH) && (a->aeth.syndrome != b->aeth.syndrome || a->aeth.msn != b->aeth.msn))
        abort();
    if ((f & (FE_OPF_IMM | FE_OPF_IETH)) && a->imm != b->imm) abort();
    if (!(f & FE_OPF_CNP) && a->payload_len && memcmp(a->payload, b->payload, a->payload_len))
        abort();
}

static void frame_round_trip(const struct fe_frame *f)
{
    struct fe_path path = {.ipver = f->ipver ? f->ipver : 4, .udp_sport = f->udp.sport};
    memcpy(path.src_mac, f->eth.src, 6);
    memcpy(path.dst_mac, f->eth.dst, 6);
    path.vlan = f->eth.has_vlan;
    path.vid = f->eth.vid;
    if (f->ipver == 6) {
        memcpy(path.src_ip6, f->ip6.src, 16);
        memcpy(path.dst_ip6, f->ip6.dst, 16);
        path.flow_label = f->ip6.flow_label;
        path.ttl = f->ip6.hop_limit;
    } else {
        path.src_ip4 = f->ip4.src;
        path.dst_ip4 = f->ip4.dst;
        path.ttl = f->ip4.ttl;
    }
    static uint8_t buf[70000];
    int n = fe_frame_encode(buf, sizeof buf, f->framing, &path, f->ip4.id, &f->pkt);
    if (n < 0) abort(); /* anything that decoded must encode */
    struct fe_frame g;
    enum fe_parse_reason why;
    if (fe_frame_decode(buf, (size_t)n, f->framing, true, &g, &why, NULL) != 0) abort();
    if (why != FE_PR_OK || g.pkt.icrc != FE_ICRC_OK) abort();
    same_pkt(&f->pkt, &g.pkt);
    if (g.pkt.ecn != f->pkt.ecn || g.pkt.dscp != f->pkt.dscp || g.pkt.pcp != f->pkt.pcp) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fe_parse_stats st = {0};
    for (int fr = FE_FRAME_ETH; fr <= FE_FRAME_BTH; fr++) {
        struct fe_frame f;
        enum fe_parse_reason why = FE_PR_MAX;
        int rc = fe_frame_decode(data, size, (enum fe_framing)fr, true, &f, &why, &st);
        if (rc == 0) {
            if (why != FE_PR_OK && why != FE_PR_ICRC) abort();
            if (f.pkt.payload_len &&
                (f.pkt.payload < data || f.pkt.payload + f.pkt.payload_len > data + size))
                abort();
            frame_round_trip(&f);
        } else if (rc != FE_EPARSE || why == FE_PR_OK || why >= FE_PR_MAX) {
            abort();
        }
    }
    uint64_t total = st.ok;
    for (int r = 0; r < FE_PR_MAX; r++) total += st.rejected[r];
    if (total != 3) abort(); /* every decode is counted exactly once */

    struct fe_pkt p, q;
    enum fe_parse_reason why;
    if (fe_pkt_parse(data, size, &p, &why) == 0) {
        static uint8_t buf[70000];
        int n = fe_pkt_write(buf, sizeof buf, &p);
        if (n < 0 || (size_t)n != size) abort(); /* parse accepted exactly this many bytes */
        if (fe_pkt_parse(buf, (size_t)n, &q, &why) != 0) abort();
        same_pkt(&p, &q);
    }
    return 0;
}
