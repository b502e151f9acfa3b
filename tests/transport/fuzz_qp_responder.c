/* libFuzzer target: arbitrary packets into a responder (raw BTH frames through fe_qp_rx_frame,
 * and synthesized requests whose fields the fuzzer picks: opcodes, PSNs near the expected one,
 * lengths, VAs, rkeys, ECN, ICRC status), interleaved with receive buffers, time, grants and
 * transmit pulls.
 * Properties: no crash or UB (ASan/UBSan); no byte outside the registered region or the posted
 * receive buffers is ever written (guard bytes); completions name posted buffers, each once,
 * with lengths that fit; every response is addressed to the peer; nothing is written after the
 * QP went to error. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/qp.h"
#include "transport/qp_sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

#define REGION    65536
#define GUARD     256
#define NRB       8
#define RB_LEN    8192
#define VA        0x7000000000ull
#define RKEY      0x51
#define SINK_RKEY 0x52
#define LQPN      0x33
#define RQPN      0x44
#define GB        0xEE

static uint8_t arena[GUARD + REGION + GUARD];
static uint8_t rbufs[NRB][GUARD + RB_LEN + GUARD];
static uint8_t pattern[8192];
static uint8_t gb_block[RB_LEN];
static uint8_t snapshot[REGION];

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
static uint64_t u64(struct rd *r)
{
    return u32(r) | (uint64_t)u32(r) << 32;
}

static bool all_gb(const uint8_t *p, size_t n)
{
    return memcmp(p, gb_block, n) == 0;
}

static const uint8_t ops[] = {
    FE_OP_SEND_FIRST,   FE_OP_SEND_MIDDLE,    FE_OP_SEND_LAST,     FE_OP_SEND_LAST_IMM,
    FE_OP_SEND_ONLY,    FE_OP_SEND_ONLY_IMM,  FE_OP_WRITE_FIRST,   FE_OP_WRITE_MIDDLE,
    FE_OP_WRITE_LAST,   FE_OP_WRITE_LAST_IMM, FE_OP_WRITE_ONLY,    FE_OP_WRITE_ONLY_IMM,
    FE_OP_READ_REQUEST, FE_OP_CMP_SWAP,       FE_OP_SEND_ONLY_INV, FE_OP_ACK,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rd r = {data, size};
    memset(arena, GB, sizeof arena);
    memset(rbufs, GB, sizeof rbufs);
    memset(gb_block, GB, sizeof gb_block);
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (uint8_t)(i * 31 + 7) | 1;
    if (pattern[0] == GB) pattern[0] = 0;

    struct fe_qp_config c;
    fe_qp_config_default(&c);
    uint8_t cf = u8(&r);
    c.local_qpn = LQPN;
    c.remote_qpn = RQPN;
    c.mtu_bytes = 256u << (cf & 3);
    c.rq_psn = (cf & 4) ? 0xFFFFF0 : 0;
    c.ack_every = (uint16_t)(1 + (cf >> 4));
    c.replay_bytes = 8 * c.mtu_bytes;
    c.sq_depth = 4;
    c.rq_depth = NRB;
    c.cq_depth = 16;
    c.max_mr = 4;
    struct fe_qp_sim_config sc = {.np_ecn_echo_on_ack = cf & 8};
    struct fe_qp *qp = fe_qp_create_sim(&c, &sc, 0, NULL, NULL);
    CHECK(qp);
    struct fe_mr mr = {.rkey = RKEY, .va = VA, .len = REGION, .base = arena + GUARD};
    CHECK(fe_qp_reg_mr(qp, &mr) == 0);
    struct fe_mr sink = {.rkey = SINK_RKEY, .va = 0, .len = UINT64_MAX / 2, .base = NULL};
    CHECK(fe_qp_reg_mr(qp, &sink) == 0);

    uint32_t rb_len[NRB];
    uint32_t rb_posted = 0, rb_done = 0;
    uint64_t now = 0;
    bool have_snapshot = false;

    while (r.n) {
        uint8_t op = u8(&r);
        switch (op % 8) {
        case 0: { /* raw frame */
            uint16_t len = u16(&r) % 1200;
            if (len > r.n) len = (uint16_t)r.n;
            uint8_t buf[1200];
            memcpy(buf, r.p, len);
            r.p += len;
            r.n -= len;
            fe_qp_rx_frame(qp, now, buf, len, FE_FRAME_BTH, op & 8);
            break;
        }
        case 1:
        case 2:
        case 3: { /* a synthesized request */
            uint8_t f = u8(&r);
            struct fe_pkt p;
            memset(&p, 0, sizeof p);
            p.bth.opcode = (f & 1) ? u8(&r) : ops[u8(&r) % sizeof ops];
            p.bth.pkey = (f & 2) ? u16(&r) : FE_PKEY_DEFAULT;
            p.bth.dqpn = (f & 4) ? (u32(&r) & FE_PSN_MASK) : LQPN;
            struct fe_qp_psns ps;
            fe_qp_psns(qp, &ps);
            p.bth.psn = (f & 8) ? (u32(&r) & FE_PSN_MASK)
                                : fe_psn_add(ps.expected_psn, (int8_t)u8(&r) / 32);
            p.bth.ackreq = f & 16;
            uint8_t g = u8(&r);
            p.payload_len = (g & 1) ? u16(&r) % (c.mtu_bytes + 64) : c.mtu_bytes;
            if (p.payload_len > sizeof pattern) p.payload_len = sizeof pattern;
            p.payload = (g & 2) ? NULL : pattern;
            p.reth.rkey = (g & 4) ? u32(&r) : (g & 8) ? SINK_RKEY : RKEY;
            p.reth.va = (g & 16) ? u64(&r) : VA + (u16(&r) % (REGION + 512)) - 256;
            p.reth.dma_len = (g & 32) ? u32(&r) : u16(&r) % (4 * c.mtu_bytes + 64);
            p.imm = u32(&r);
            p.ecn = (uint8_t)((f >> 5) & 3);
            p.icrc = (uint8_t)((g >> 6) % 3);
            fe_qp_rx(qp, now, &p);
            break;
        }
        case 4: /* a receive buffer */
            if (rb_posted - rb_done < NRB) {
                uint32_t slot = rb_posted % NRB;
                uint32_t len = u16(&r) % (RB_LEN + 1);
                memset(rbufs[slot], GB, sizeof rbufs[slot]);
                if (fe_qp_post_recv(qp, rb_posted, (op & 8) ? NULL : rbufs[slot] + GUARD, len) == 0)
                    rb_len[slot] = len, rb_posted++;
            }
            break;
        case 5:
            now += (uint64_t)u16(&r) * 64;
            if (fe_qp_next_deadline(qp) <= now) fe_qp_handle_expiry(qp, now);
            break;
        case 6: {
            struct fe_pkt p;
            for (int i = 0; i < 64 && fe_qp_tx(qp, now, &p); i++) {
                CHECK(p.bth.dqpn == RQPN);
                CHECK(p.bth.opcode == FE_OP_ACK || p.bth.opcode == FE_OP_CNP);
                CHECK(p.payload == NULL);
            }
            break;
        }
        case 7:
            fe_qp_set_grant(qp, u32(&r));
            break;
        }
        /* nothing outside the region and the buffers, ever; nothing at all after an error */
        CHECK(all_gb(arena, GUARD) && all_gb(arena + GUARD + REGION, GUARD));
        for (uint32_t i = 0; i < NRB; i++) {
            CHECK(all_gb(rbufs[i], GUARD) && all_gb(rbufs[i] + GUARD + RB_LEN, GUARD));
            /* a buffer not posted (never, or completed) is never written */
            bool posted = rb_posted - rb_done > ((i - rb_done % NRB) + NRB) % NRB;
            if (!posted) CHECK(all_gb(rbufs[i] + GUARD, RB_LEN));
        }
        if (fe_qp_state(qp) == FE_QPS_ERROR) {
            if (!have_snapshot) memcpy(snapshot, arena + GUARD, REGION);
            have_snapshot = true;
            CHECK(memcmp(snapshot, arena + GUARD, REGION) == 0);
        }

        struct fe_cqe cq[16];
        int n = fe_qp_poll_cq(qp, cq, 16);
        for (int i = 0; i < n; i++) {
            CHECK(cq[i].cookie == rb_done); /* in order, each once */
            CHECK(cq[i].status == FE_WC_SUCCESS || cq[i].status == FE_WC_LOC_LEN_ERR ||
                  cq[i].status == FE_WC_WR_FLUSH_ERR);
            CHECK(cq[i].opcode == FE_WC_RECV || cq[i].opcode == FE_WC_RECV_RDMA_WITH_IMM);
            uint32_t slot = rb_done % NRB;
            if (cq[i].status == FE_WC_SUCCESS && cq[i].opcode == FE_WC_RECV)
                CHECK(cq[i].byte_len <= rb_len[slot]);
            /* the buffer is free again: it must not be written any more */
            memset(rbufs[slot], GB, sizeof rbufs[slot]);
            rb_done++;
        }
    }
    if (fe_qp_state(qp) == FE_QPS_ERROR) {
        /* every posted receive buffer has completed */
        struct fe_cqe cq[16];
        int n = fe_qp_poll_cq(qp, cq, 16);
        CHECK(rb_done + (uint32_t)n == rb_posted);
    }
    fe_qp_destroy(qp);
    return 0;
}
