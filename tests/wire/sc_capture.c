/* Writes a capture of side-channel datagrams encoded by feroce's own codec (fe_sc_encode), for
 * the Lua dissector's test (tshark_lua.py): usage: sc_capture OUT.pcap EXPECT.tsv. Each line
 * of EXPECT.tsv is the frame number and the fields the dissector must show for it, in the order
 * the test asks tshark for them; the last frame is a truncated datagram the dissector must flag. */
#include <stdio.h>
#include <string.h>

#include "feroce/eb.h"
#include "feroce/pcap.h"
#include "feroce/sidechannel.h"
#include "feroce/wire.h"

#define HOST_IP 0xC0A80A01u /* 192.168.10.1: the DAQ host */
#define FE_IP   0xC0A80A0Bu /* 192.168.10.11: the front-end */

static int frame_of(uint8_t *buf, size_t cap, uint32_t src, uint16_t sport, uint32_t dst,
                    uint16_t dport, const uint8_t *payload, size_t len)
{
    struct fe_eth eth = {.dst = {2, 0, 0, 0, 0, 1}, .src = {2, 0, 0, 0, 0, 2}, .ethertype = 0x0800};
    struct fe_ipv4 ip = {.ihl = 5,
                         .ttl = 64,
                         .protocol = 17,
                         .frag = 0x4000,
                         .src = src,
                         .dst = dst,
                         .total_len = (uint16_t)(20 + 8 + len)};
    struct fe_udp udp = {.sport = sport, .dport = dport, .len = (uint16_t)(8 + len)};
    size_t n = fe_eth_write(buf, cap, &eth);
    size_t l3 = n;
    n += fe_ipv4_write(buf + n, cap - n, &ip);
    n += fe_udp_write(buf + n, cap - n, &udp);
    if (n != l3 + 28 || n + len > cap) return -1;
    memcpy(buf + n, payload, len);
    return (int)(n + len);
}

struct dgram {
    struct fe_sc_msg m;
    uint32_t src, dst;
    uint16_t sport, dport;
};

static struct fe_sc_qp_info info(uint32_t qpn, uint32_t psn, uint32_t rkey, uint64_t va,
                                 uint32_t ip)
{
    return (struct fe_sc_qp_info){.qpn = qpn, .psn = psn, .rkey = rkey, .va = va, .ip = ip};
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sc_capture OUT.pcap EXPECT.tsv\n");
        return 2;
    }
    struct fe_sc_qp_info host = info(0x11, 0x123456, 0xCAFE, 0x7f0000001000ull, HOST_IP);
    struct fe_sc_qp_info fe = info(0x100, 0x123456, 0, 0, FE_IP);
    struct fe_sc_tx_meta start = {.valid = true,
                                  .start = true,
                                  .immediate = true,
                                  .write = true,
                                  .msg_len_bytes = 65536,
                                  .msg_count = 1000,
                                  .gap = 200};
    const struct dgram d[] = {
        /* host -> front-end: OPEN_QP; front-end's ACK; MODIFY with a tx-meta start */
        {{.info_valid = true, .request = FE_SC_REQ_OPEN_QP, .loc = host},
         HOST_IP,
         FE_IP,
         17186,
         FE_SC_PORT},
        {{.info_valid = true,
          .request = FE_SC_REQ_OPEN_QP,
          .ack_valid = true,
          .ack = FE_SC_ACK_ACK,
          .loc = fe,
          .rem = host},
         FE_IP,
         HOST_IP,
         FE_SC_PORT,
         17186},
        {{.info_valid = true,
          .request = FE_SC_REQ_MODIFY_QP_RTS,
          .loc = host,
          .rem = fe,
          .tx = start},
         HOST_IP,
         FE_IP,
         17186,
         FE_SC_PORT},
        /* the firmware answers from 0x8765: NO_QP */
        {{.info_valid = true,
          .request = FE_SC_REQ_CLOSE_QP,
          .ack_valid = true,
          .ack = FE_SC_ACK_NO_QP,
          .loc = fe,
          .rem = host},
         FE_IP,
         HOST_IP,
         0x8765,
         17186},
        {{.tx = {.valid = true}, .loc = host, .rem = fe}, HOST_IP, FE_IP, 17186, FE_SC_PORT},
    };
    const size_t n_d = sizeof d / sizeof d[0];
    char err[128];
    struct fe_pcap_writer *w;
    if (fe_pcap_writer_open(&w, argv[1], FE_FRAME_ETH, err, sizeof err)) {
        fprintf(stderr, "sc_capture: %s\n", err);
        return 1;
    }
    FILE *ex = fopen(argv[2], "w");
    if (!ex) return 1;
    uint8_t msg[FE_SC_MSG_LEN], frame[256];
    for (size_t i = 0; i < n_d; i++) {
        const struct fe_sc_msg *m = &d[i].m;
        if (fe_sc_encode(msg, m)) return 1;
        int len = frame_of(frame, sizeof frame, d[i].src, d[i].sport, d[i].dst, d[i].dport, msg,
                           sizeof msg);
        if (len < 0 || fe_pcap_write(w, (i + 1) * 1000000ull, frame, (size_t)len)) return 1;
        /* frame, request, ack, loc.qpn, loc.psn, loc.rkey, loc.va, loc.ip, rem.qpn, reply_port,
         * tx.valid, tx.start, tx.msg_len, tx.msg_count, tx.gap */
        fprintf(ex,
                "%zu\t%u\t%u\t0x%x\t%u\t0x%x\t0x%llx\t%u.%u.%u.%u\t0x%x\t%u\t%d\t%d\t%u\t%u\t%u\n",
                i + 1, m->info_valid ? m->request : 0, m->ack_valid ? m->ack : 0, m->loc.qpn,
                m->loc.psn, m->loc.rkey, (unsigned long long)m->loc.va, m->loc.ip >> 24,
                (m->loc.ip >> 16) & 255, (m->loc.ip >> 8) & 255, m->loc.ip & 255, m->rem.qpn,
                m->reply_port, m->tx.valid, m->tx.start, m->tx.msg_len_bytes, m->tx.msg_count,
                m->tx.gap);
    }
    /* The event-building messages feroce adds on the side channel (request code 5). */
    struct fe_eb_msg eb[5];
    memset(eb, 0, sizeof eb);
    eb[0].type = FE_EB_MSG_ANNOUNCE;
    eb[0].u.announce = (struct fe_eb_announce){
        .builder = 2, .n_slots = 64, .released = 1000, .newest_event = 4242};
    eb[1].type = FE_EB_MSG_PROGRESS;
    eb[1].u.progress = (struct fe_eb_progress){.source = 7, .next_event = 5000, .busy_events = 3};
    eb[2].type = FE_EB_MSG_TABLE;
    eb[2].u.table = (struct fe_eb_table){.manager = 1,
                                         .epoch = 9,
                                         .first_event = 6000,
                                         .n_runs = 2,
                                         .run = {{.builder = 0, .first_slot = 10, .count = 4},
                                                 {.builder = 3, .first_slot = 20, .count = 2}}};
    eb[3].type = FE_EB_MSG_JOIN;
    eb[3].u.join = (struct fe_eb_join){
        .source = 4, .builder = 2, .has_first = true, .next_event = 7000, .first_event = 7001};
    eb[4].type = FE_EB_MSG_START;
    eb[4].u.start = (struct fe_eb_start){.builder = 2, .n_builders = 3, .first_event = 7001};
    size_t n = n_d;
    for (int i = 0; i < 5; i++, n++) {
        if (fe_eb_msg_encode(msg, &eb[i])) return 1;
        int len = frame_of(frame, sizeof frame, HOST_IP, 17186, FE_IP, FE_SC_PORT, msg, sizeof msg);
        if (len < 0 || fe_pcap_write(w, (n + 1) * 1000000ull, frame, (size_t)len)) return 1;
    }
    fprintf(ex, "%zu\teb\tANNOUNCE from 2: released 1000 of 64 slots\n", n_d + 1);
    fprintf(ex, "%zu\teb\tPROGRESS from 7: next event 5000, busy 3\n", n_d + 2);
    fprintf(ex, "%zu\teb\tTABLE from 1: from event 6000: 4 x b0, 2 x b3\n", n_d + 3);
    fprintf(ex, "%zu\teb\tJOIN from 4: to b2, gives from event 7000, echoes start 7001\n", n_d + 4);
    fprintf(ex, "%zu\teb\tSTART from 2: ring starts at event 7001 of 3 builders\n", n_d + 5);
    /* A truncated datagram (a firmware bug, or a capture cut short): the dissector flags it. */
    int len = frame_of(frame, sizeof frame, HOST_IP, 17186, FE_IP, FE_SC_PORT, msg, 40);
    if (len < 0 || fe_pcap_write(w, (n + 1) * 1000000ull, frame, (size_t)len)) return 1;
    fprintf(ex, "%zu\tmalformed\n", n + 1);
    int rc = fe_pcap_writer_close(w);
    return (fclose(ex) || rc) ? 1 : 0;
}
