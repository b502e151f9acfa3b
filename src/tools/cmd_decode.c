/* feroce decode FILE.pcap [--json]: one line per packet, RoCEv2 fields decoded, ICRC checked. */
#include "tools/cli.h"

#include "feroce/err.h"
#include "feroce/pcap.h"
#include "feroce/wire.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>

static const char *ecn_name(uint8_t ecn)
{
    static const char *const n[4] = {"Not-ECT", "ECT(1)", "ECT(0)", "CE"};
    return n[ecn & 3];
}

/* "10.0.0.1" or "fd00::1" */
static void addr_str(const struct fe_frame *f, bool src, char *buf, size_t cap)
{
    if (f->ipver == 4) {
        uint32_t a = htonl(src ? f->ip4.src : f->ip4.dst);
        inet_ntop(AF_INET, &a, buf, (socklen_t)cap);
    } else {
        inet_ntop(AF_INET6, src ? f->ip6.src : f->ip6.dst, buf, (socklen_t)cap);
    }
}

static void endpoint(const struct fe_frame *f, bool src, char *buf, size_t cap)
{
    char a[INET6_ADDRSTRLEN];
    addr_str(f, src, a, sizeof a);
    uint16_t port = src ? f->udp.sport : f->udp.dport;
    snprintf(buf, cap, f->ipver == 6 ? "[%s]:%u" : "%s:%u", a, port);
}

static const char *icrc_name(uint8_t s)
{
    return s == FE_ICRC_OK ? "ok" : s == FE_ICRC_BAD ? "bad" : "unchecked";
}

static void print_text(uint64_t n, double t, const struct fe_frame *f)
{
    const struct fe_pkt *p = &f->pkt;
    unsigned fl = fe_opcode_flags(p->bth.opcode);
    char s[64], d[64];
    endpoint(f, true, s, sizeof s);
    endpoint(f, false, d, sizeof d);
    printf("%" PRIu64 " %.9f %s > %s", n, t, s, d);
    if (f->framing == FE_FRAME_ETH && f->eth.has_vlan)
        printf(" vlan=%u pcp=%u", f->eth.vid, f->eth.pcp);
    printf(" %s dscp=%u %s qpn=0x%06x psn=%u", ecn_name(p->ecn), p->dscp,
           fe_opcode_name(p->bth.opcode), p->bth.dqpn, p->bth.psn);
    if (p->bth.ackreq) printf(" ackreq");
    if (p->bth.se) printf(" se");
    if (p->bth.migreq) printf(" migreq");
    if (p->bth.fecn) printf(" fecn");
    if (p->bth.becn) printf(" becn");
    if (p->bth.pkey != FE_PKEY_DEFAULT) printf(" pkey=0x%04x", p->bth.pkey);
    if (fl & FE_OPF_RETH)
        printf(" va=0x%" PRIx64 " rkey=0x%08x len=%u", p->reth.va, p->reth.rkey, p->reth.dma_len);
    if (fl & FE_OPF_ATOMIC) printf(" va=0x%" PRIx64 " rkey=0x%08x", p->reth.va, p->reth.rkey);
    if (fl & FE_OPF_IMM) printf(" imm=0x%08x", p->imm);
    if (fl & FE_OPF_IETH) printf(" inv_rkey=0x%08x", p->imm);
    if (fl & FE_OPF_AETH) {
        char a[64];
        printf(" msn=%u \"%s\"", p->aeth.msn, fe_aeth_describe(p->aeth.syndrome, a, sizeof a));
    }
    if (fl & FE_OPF_PAYLOAD) printf(" payload=%u", p->payload_len);
    if (p->bth.padcnt) printf(" pad=%u", p->bth.padcnt);
    printf(" icrc=%s", icrc_name(p->icrc));
    if (p->icrc == FE_ICRC_BAD)
        printf(" (wire 0x%08x, computed 0x%08x)", f->icrc_wire, f->icrc_calc);
    putchar('\n');
}

static void print_json(uint64_t n, uint64_t ts_ns, double t, const struct fe_frame *f)
{
    const struct fe_pkt *p = &f->pkt;
    unsigned fl = fe_opcode_flags(p->bth.opcode);
    char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
    addr_str(f, true, s, sizeof s);
    addr_str(f, false, d, sizeof d);
    printf("{\"n\":%" PRIu64 ",\"ts_ns\":%" PRIu64 ",\"t\":%.9f,\"roce\":true", n, ts_ns, t);
    if (f->framing == FE_FRAME_ETH) {
        const uint8_t *a = f->eth.src, *b = f->eth.dst;
        printf(",\"eth_src\":\"%02x:%02x:%02x:%02x:%02x:%02x\",\"eth_dst\":\"%02x:%02x:%02x:%02x:"
               "%02x:%02x\"",
               a[0], a[1], a[2], a[3], a[4], a[5], b[0], b[1], b[2], b[3], b[4], b[5]);
        if (f->eth.has_vlan) printf(",\"vlan\":%u,\"pcp\":%u", f->eth.vid, f->eth.pcp);
    }
    printf(",\"ipver\":%u,\"src\":\"%s\",\"dst\":\"%s\",\"sport\":%u,\"dport\":%u", f->ipver, s, d,
           f->udp.sport, f->udp.dport);
    if (f->ipver == 4)
        printf(",\"ttl\":%u,\"ip_id\":%u", f->ip4.ttl, f->ip4.id);
    else
        printf(",\"hop_limit\":%u,\"flow_label\":%u", f->ip6.hop_limit, f->ip6.flow_label);
    printf(",\"dscp\":%u,\"ecn\":\"%s\",\"opcode\":\"%s\",\"opcode_num\":%u,\"qpn\":%u,\"psn\":%u,"
           "\"ackreq\":%s,\"se\":%s,\"migreq\":%s,\"fecn\":%s,\"becn\":%s,\"pkey\":%u,\"pad\":%u",
           p->dscp, ecn_name(p->ecn), fe_opcode_name(p->bth.opcode), p->bth.opcode, p->bth.dqpn,
           p->bth.psn, p->bth.ackreq ? "true" : "false", p->bth.se ? "true" : "false",
           p->bth.migreq ? "true" : "false", p->bth.fecn ? "true" : "false",
           p->bth.becn ? "true" : "false", p->bth.pkey, p->bth.padcnt);
    if (fl & (FE_OPF_RETH | FE_OPF_ATOMIC))
        printf(",\"va\":%" PRIu64 ",\"rkey\":%u,\"dma_len\":%u", p->reth.va, p->reth.rkey,
               p->reth.dma_len);
    if (fl & FE_OPF_IMM) printf(",\"imm\":%u", p->imm);
    if (fl & FE_OPF_IETH) printf(",\"inv_rkey\":%u", p->imm);
    if (fl & FE_OPF_AETH) {
        static const char *const kinds[4] = {"ACK", "RNR", "reserved", "NAK"};
        char a[64];
        printf(",\"syndrome\":%u,\"aeth\":\"%s\",\"aeth_text\":\"%s\",\"msn\":%u", p->aeth.syndrome,
               kinds[fe_aeth_kind(p->aeth.syndrome)],
               fe_aeth_describe(p->aeth.syndrome, a, sizeof a), p->aeth.msn);
    }
    printf(",\"payload_len\":%u,\"icrc\":\"%s\",\"icrc_wire\":%u", p->payload_len,
           icrc_name(p->icrc), f->icrc_wire);
    if (p->icrc != FE_ICRC_UNCHECKED) printf(",\"icrc_calc\":%u", f->icrc_calc);
    printf("}\n");
}

struct decode_opts {
    const char *path;
    bool json;
};

/* What a file's packets came to: the parser's counts and the packets the capture cut. */
struct decode_counts {
    struct fe_parse_stats st;
    uint64_t n, t0, truncated;
};

static int path_arg(const char *a, void *p)
{
    struct decode_opts *o = p;
    if (o->path) {
        fprintf(stderr, "feroce decode: one file only\n");
        return -1;
    }
    o->path = a;
    return 0;
}

static int parse_opts(int argc, char **argv, struct decode_opts *o)
{
    *o = (struct decode_opts){0};
    const struct fe_opt opts[] = {{FE_OPT_FLAG_("--json", o->json)}, {0}};
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {
        .cmd = "decode", .tables = tables, .positional = path_arg, .ctx = o, .dash_is_arg = true};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    if (!o->path) {
        fputs("usage: feroce decode FILE.pcap [--json]\n", stderr);
        return -1;
    }
    return 0;
}

/* A record that is not RoCEv2 (or malformed): why, as text or JSON. */
static void print_rejected(const struct decode_opts *o, uint64_t n, uint64_t ts_ns, double t,
                           enum fe_parse_reason why, size_t len, bool cut)
{
    if (o->json)
        printf("{\"n\":%" PRIu64 ",\"ts_ns\":%" PRIu64 ",\"t\":%.9f,\"roce\":false,"
               "\"reason\":\"%s\",\"reason_text\":\"%s\",\"len\":%zu%s}\n",
               n, ts_ns, t, fe_parse_reason_name(why), fe_parse_reason_text(why), len,
               cut ? ",\"truncated\":true" : "");
    else
        printf("%" PRIu64 " %.9f not RoCE: %s (%s), %zu bytes%s\n", n, t, fe_parse_reason_name(why),
               fe_parse_reason_text(why), len,
               cut ? ", truncated by the capture's snap length" : "");
}

static void decode_record(const struct decode_opts *o, enum fe_framing framing,
                          const struct fe_pcap_rec *rec, struct decode_counts *k)
{
    k->n++;
    if (k->n == 1) k->t0 = rec->ts_ns;
    /* Records need not be in time order (merged captures; pcapng simple packet blocks carry
     * no timestamp and read as 0): an earlier one is at a negative time, not 2^64 ns later. */
    double t = rec->ts_ns >= k->t0 ? (double)(rec->ts_ns - k->t0) / 1e9
                                   : -(double)(k->t0 - rec->ts_ns) / 1e9;
    struct fe_frame f;
    enum fe_parse_reason why;
    int drc = fe_frame_decode(rec->data, rec->len, framing, true, &f, &why, &k->st);
    bool cut = rec->orig_len > rec->len;
    k->truncated += cut;
    if (drc != 0)
        print_rejected(o, k->n, rec->ts_ns, t, why, rec->len, cut);
    else if (o->json)
        print_json(k->n, rec->ts_ns, t, &f);
    else
        print_text(k->n, t, &f);
}

static void print_summary(const struct decode_counts *k)
{
    uint64_t rejected = 0;
    for (int i = 0; i < FE_PR_MAX; i++)
        if (i != FE_PR_ICRC) rejected += k->st.rejected[i];
    printf("# %" PRIu64 " packets: %" PRIu64 " RoCE (%" PRIu64 " with bad ICRC), %" PRIu64
           " not RoCE\n",
           k->n, k->st.ok + k->st.rejected[FE_PR_ICRC], k->st.rejected[FE_PR_ICRC], rejected);
    if (k->truncated)
        printf("# %" PRIu64 " packets were cut by the capture's snap length\n", k->truncated);
}

static int run(int argc, char **argv)
{
    struct decode_opts o;
    if (parse_opts(argc, argv, &o)) return 2;
    char err[256];
    struct fe_pcap_reader *r;
    if (fe_pcap_reader_open(&r, o.path, err, sizeof err)) {
        fprintf(stderr, "feroce decode: %s\n", err);
        return 1;
    }
    enum fe_framing framing = fe_pcap_reader_framing(r);
    struct decode_counts k = {0};
    struct fe_pcap_rec rec;
    int rc;
    while ((rc = fe_pcap_read(r, &rec)) == 1) decode_record(&o, framing, &rec, &k);
    if (rc < 0) {
        fprintf(stderr, "feroce decode: cannot read %s after %" PRIu64 " packets: %s\n", o.path,
                k.n, fe_pcap_reader_error(r));
        fe_pcap_reader_close(r);
        return 1;
    }
    fe_pcap_reader_close(r);
    if (!o.json) print_summary(&k);
    return 0;
}

const struct fe_cmd fe_cmd_decode = {
    "decode", "print the RoCEv2 packets of a pcap file, ICRC checked",
    "usage: feroce decode FILE.pcap [--json]\n"
    "Decodes every packet of FILE (pcap or pcapng; Ethernet, raw IP or Linux cooked capture) as\n"
    "RoCEv2 and prints one line per packet:\n"
    "  N TIME SRC:PORT > DST:PORT [vlan= pcp=] ECN dscp= OPCODE qpn= psn= [ackreq se fecn becn]\n"
    "  [va= rkey= len=] [imm=] [msn= \"AETH meaning\"] [payload=] [pad=] icrc=ok|bad\n"
    "TIME is seconds since the first packet. Packets that are not RoCEv2 (or are malformed) get\n"
    "a line 'N TIME not RoCE: REASON (...)'. A summary line starting with '#' ends the output.\n"
    "  --json   JSON Lines instead: one JSON object per packet and per line, no summary;\n"
    "           RoCE packets have \"roce\":true and the fields above (numbers are decimal),\n"
    "           others \"roce\":false with \"reason\" (a stable identifier) and \"reason_text\".\n"
    "Exit status: 0 when the file was read (whatever its packets), 1 on a file error.\n",
    run};
