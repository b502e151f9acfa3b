/* libFuzzer target: a requester with outstanding WRs of every kind receiving arbitrary ACKs,
 * NAKs (every syndrome), RNR NAKs, CNPs and raw frames, with PSNs near its window or anywhere,
 * interleaved with transmit pulls, new WRs and time (timeouts, RNR waits).
 * Properties: no crash or UB; every transmitted packet is a request addressed to the peer whose
 * payload lies inside the WR it belongs to (zero copy, never outside the caller's memory), at
 * most one MTU, with a PSN inside the send window; completions name posted WRs, each exactly
 * once and in posting order; the replay ring never holds more than replay_bytes; after an error
 * every posted WR has completed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/qp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

#define LQPN  0x33
#define RQPN  0x44
#define MAXWR 64
#define SRC   (256 * 1024)

static uint8_t src[SRC];

struct rd {
    const uint8_t *p;
    size_t n;
};
static uint8_t u8(struct rd *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}
static uint16_t u16(struct rd *r)
{
    return (uint16_t)(u8(r) | u8(r) << 8);
}
static uint32_t u32(struct rd *r)
{
    return u16(r) | (uint32_t)u16(r) << 16;
}

struct wr_rec {
    const uint8_t *data;
    uint32_t len;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rd r = {data, size};
    struct fe_qp_config c;
    fe_qp_config_default(&c);
    uint8_t cf = u8(&r);
    c.local_qpn = LQPN;
    c.remote_qpn = RQPN;
    c.mtu_bytes = 256u << (cf & 3);
    c.sq_psn = (cf & 4) ? 0xFFFFF8 : u32(&r) & 0xFFFFFF;
    c.replay_bytes = (uint64_t)c.mtu_bytes * (1 + (cf >> 4));
    c.ackreq_every = (uint16_t)(1 + u8(&r));
    c.retry_cnt = (cf & 8) ? FE_RETRY_INFINITE : (u8(&r) & 7);
    c.rnr_retry = u8(&r) & 7;
    c.sq_depth = 16;
    c.rq_depth = 4;
    c.cq_depth = 32;
    c.ack_timeout_ns = 10000;
    c.pacer_burst_bytes = 1ull << 20;
    struct fe_qp *qp = fe_qp_create(&c, 0, NULL, NULL);
    CHECK(qp);

    struct wr_rec wr[MAXWR];
    uint32_t posted = 0, done = 0;
    uint64_t now = 0;

    while (r.n) {
        uint8_t op = u8(&r);
        switch (op % 8) {
        case 0:
        case 1: { /* post a WR */
            if (posted >= MAXWR) break;
            struct fe_wr w = {.op = (enum fe_wr_op)(u8(&r) % 4), .cookie = posted};
            w.len = u16(&r) % (8 * c.mtu_bytes + 1);
            uint32_t off = u16(&r) % (SRC - w.len + 1);
            w.data = (op & 8) ? NULL : src + off;
            w.remote_offset = u16(&r);
            w.imm = posted;
            if (fe_qp_post_send(qp, &w) == 0) wr[posted++] = (struct wr_rec){w.data, w.len};
            break;
        }
        case 2: { /* pull packets */
            struct fe_pkt p;
            struct fe_qp_psns before;
            fe_qp_psns(qp, &before);
            int max = 1 + u8(&r) % 32;
            for (int i = 0; i < max && fe_qp_tx(qp, now, &p); i++) {
                CHECK(p.bth.dqpn == RQPN);
                /* a request packet from the fuzzer gets the responder's answer */
                if (p.bth.opcode == FE_OP_ACK || p.bth.opcode == FE_OP_CNP) continue;
                unsigned fl = fe_opcode_flags(p.bth.opcode);
                CHECK((fl & FE_OPF_REQUEST) && (fl & FE_OPF_SUPPORTED));
                CHECK(p.payload_len <= c.mtu_bytes);
                /* inside the window [una, next] */
                struct fe_qp_psns ps;
                fe_qp_psns(qp, &ps);
                CHECK(!fe_psn_before(p.bth.psn, ps.una_psn));
                CHECK(fe_psn_before(p.bth.psn, ps.next_psn));
                if (p.payload) {
                    /* zero copy: inside one of the outstanding WRs */
                    bool inside = false;
                    for (uint32_t k = done; k < posted && !inside; k++)
                        inside = wr[k].data && p.payload >= wr[k].data &&
                                 p.payload + p.payload_len <= wr[k].data + wr[k].len;
                    CHECK(inside);
                }
            }
            break;
        }
        case 3:
        case 4: { /* an ACK / NAK / RNR NAK */
            struct fe_pkt p;
            memset(&p, 0, sizeof p);
            struct fe_qp_psns ps;
            fe_qp_psns(qp, &ps);
            uint8_t f = u8(&r);
            p.bth.opcode = (f & 1) ? u8(&r) : FE_OP_ACK;
            p.bth.pkey = FE_PKEY_DEFAULT;
            p.bth.dqpn = (f & 2) ? (u32(&r) & FE_PSN_MASK) : LQPN;
            p.bth.psn =
                (f & 4) ? (u32(&r) & FE_PSN_MASK) : fe_psn_add(ps.una_psn, (int8_t)u8(&r) / 4);
            p.bth.becn = f & 8;
            p.aeth.syndrome = u8(&r);
            p.aeth.msn = u32(&r) & FE_PSN_MASK;
            p.credit_bytes = (f & 16) ? u32(&r) : 0;
            p.icrc = (uint8_t)((f >> 5) % 3);
            fe_qp_rx(qp, now, &p);
            break;
        }
        case 5: { /* a raw frame */
            uint16_t len = u16(&r) % 256;
            if (len > r.n) len = (uint16_t)r.n;
            uint8_t buf[256];
            memcpy(buf, r.p, len);
            r.p += len;
            r.n -= len;
            fe_qp_rx_frame(qp, now, buf, len, FE_FRAME_BTH, op & 8);
            break;
        }
        case 6: { /* a CNP */
            struct fe_pkt p;
            memset(&p, 0, sizeof p);
            p.bth.opcode = FE_OP_CNP;
            p.bth.pkey = FE_PKEY_DEFAULT;
            p.bth.dqpn = LQPN;
            p.bth.becn = true;
            p.payload_len = 16;
            fe_qp_rx(qp, now, &p);
            break;
        }
        case 7: /* time */
            now += (uint64_t)u16(&r) * ((op & 8) ? 1000 : 8);
            if (fe_qp_next_deadline(qp) <= now) fe_qp_handle_expiry(qp, now);
            break;
        }
        struct fe_qp_psns ps;
        fe_qp_psns(qp, &ps);
        CHECK(ps.inflight_bytes <= c.replay_bytes);
        CHECK(!fe_psn_before(ps.next_psn, ps.una_psn));
        struct fe_cqe cq[32];
        int n = fe_qp_poll_cq(qp, cq, 32);
        for (int i = 0; i < n; i++) {
            CHECK(cq[i].cookie == done); /* in order, each exactly once */
            CHECK(cq[i].status <= FE_WC_WR_FLUSH_ERR && cq[i].status != FE_WC_LOC_LEN_ERR);
            CHECK(cq[i].byte_len == wr[done].len);
            done++;
        }
        if (fe_qp_state(qp) == FE_QPS_ERROR) CHECK(done == posted);
    }
    fe_qp_destroy(qp);
    return 0;
}
