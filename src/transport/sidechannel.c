/* The side channel (Lite-RoCEv2 connection manager): 64-byte message codec and the two sans-I/O
 * state machines, front-end and host. See include/feroce/sidechannel.h. */
#include "feroce/sidechannel.h"

#include <string.h>

/* Byte offsets in the 64-byte message, as Lite-RoCEv2 lays it out. */
enum {
    OFF_FLAGS = 0,
    OFF_LOC = 1, /* qpn(4) psn(4) rkey(4) va(8) ip(4) = 24 bytes */
    OFF_REM = 25,
    OFF_REPLY_PORT = 49,
    OFF_TX_FLAGS = 51,
    OFF_TX_LEN = 52,
    OFF_TX_COUNT = 56,
    OFF_TX_GAP = 60,
};

#define FLAG_INFO_VALID 0x01u
#define FLAG_ACK_VALID  0x10u
#define TX_VALID        0x01u
#define TX_START        0x02u
#define TX_IMM          0x04u
#define TX_WRITE        0x08u
#define TX_RESERVED     0xF0u
#define MASK24          0xFFFFFFu

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}
static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static uint64_t get64(const uint8_t *p)
{
    return ((uint64_t)get32(p) << 32) | get32(p + 4);
}

static bool request_known(unsigned r)
{
    return r == FE_SC_REQ_OPEN_QP || r == FE_SC_REQ_SEND_QP_INFO || r == FE_SC_REQ_MODIFY_QP_RTS ||
           r == FE_SC_REQ_CLOSE_QP || r == FE_SC_REQ_ERROR;
}
static bool ack_known(unsigned a)
{
    return a == FE_SC_ACK_ACK || a == FE_SC_ACK_NO_QP || a == FE_SC_ACK_NAK || a == FE_SC_ACK_ERROR;
}

const char *fe_sc_request_name(int request)
{
    switch (request) {
    case FE_SC_REQ_NULL:
        return "NULL";
    case FE_SC_REQ_OPEN_QP:
        return "OPEN_QP";
    case FE_SC_REQ_SEND_QP_INFO:
        return "SEND_QP_INFO";
    case FE_SC_REQ_MODIFY_QP_RTS:
        return "MODIFY_QP_RTS";
    case FE_SC_REQ_CLOSE_QP:
        return "CLOSE_QP";
    case FE_SC_REQ_ERROR:
        return "ERROR";
    default:
        return "UNKNOWN";
    }
}

const char *fe_sc_ack_name(int ack)
{
    switch (ack) {
    case FE_SC_ACK_NULL:
        return "NULL";
    case FE_SC_ACK_ACK:
        return "ACK";
    case FE_SC_ACK_NO_QP:
        return "NO_QP";
    case FE_SC_ACK_NAK:
        return "NAK";
    case FE_SC_ACK_ERROR:
        return "ERROR";
    default:
        return "UNKNOWN";
    }
}

const char *fe_sc_reason_name(enum fe_sc_reason r)
{
    static const char *const names[FE_SC_R_MAX] = {
        [FE_SC_R_OK] = "ok",
        [FE_SC_R_SHORT] = "short",
        [FE_SC_R_LONG] = "long",
        [FE_SC_R_SLOT] = "24-bit slot",
        [FE_SC_R_REQUEST] = "request type",
        [FE_SC_R_ACK] = "ack type",
        [FE_SC_R_TX_FLAGS] = "tx flags",
        [FE_SC_R_EMPTY] = "empty",
        [FE_SC_R_SOURCE] = "unexpected source",
        [FE_SC_R_ROLE] = "wrong role",
        [FE_SC_R_UNSOLICITED] = "unsolicited reply",
        [FE_SC_R_NOT_RTS] = "tx-meta for no ready QP",
    };
    return (unsigned)r < FE_SC_R_MAX ? names[r] : "unknown";
}

const char *fe_sc_event_name(int type)
{
    switch (type) {
    case FE_SC_EV_OPENED:
        return "OPENED";
    case FE_SC_EV_UPDATED:
        return "UPDATED";
    case FE_SC_EV_RTS:
        return "RTS";
    case FE_SC_EV_START:
        return "START";
    case FE_SC_EV_STOP:
        return "STOP";
    case FE_SC_EV_CLOSED:
        return "CLOSED";
    default:
        return "UNKNOWN";
    }
}

const char *fe_sc_host_state_name(int state)
{
    switch (state) {
    case FE_SC_H_IDLE:
        return "idle";
    case FE_SC_H_OPENING:
        return "opening";
    case FE_SC_H_MODIFYING:
        return "modifying";
    case FE_SC_H_RTS:
        return "rts";
    case FE_SC_H_CLOSING:
        return "closing";
    case FE_SC_H_CLOSED:
        return "closed";
    case FE_SC_H_FAILED:
        return "failed";
    default:
        return "unknown";
    }
}

/* ---- codec ---- */

static void put_info(uint8_t *p, const struct fe_sc_qp_info *i)
{
    put32(p, i->qpn);
    put32(p + 4, i->psn);
    put32(p + 8, i->rkey);
    put64(p + 12, i->va);
    put32(p + 20, i->ip);
}

static void get_info(const uint8_t *p, struct fe_sc_qp_info *i)
{
    i->qpn = get32(p);
    i->psn = get32(p + 4);
    i->rkey = get32(p + 8);
    i->va = get64(p + 12);
    i->ip = get32(p + 20);
}

int fe_sc_encode(uint8_t out[FE_SC_MSG_LEN], const struct fe_sc_msg *m)
{
    /* Only what fe_sc_decode accepts: a message feroce sends is never one it would refuse. */
    if (m->loc.qpn > MASK24 || m->loc.psn > MASK24 || m->rem.qpn > MASK24 || m->rem.psn > MASK24)
        return FE_EINVAL;
    if (m->info_valid ? !request_known(m->request) : m->request != FE_SC_REQ_NULL) return FE_EINVAL;
    if (m->ack_valid ? (!ack_known(m->ack) || !m->info_valid) : m->ack != FE_SC_ACK_NULL)
        return FE_EINVAL;
    if (!m->tx.valid && (m->tx.start || m->tx.immediate || m->tx.write)) return FE_EINVAL;
    if (!m->info_valid && !m->ack_valid && !m->tx.valid) return FE_EINVAL;

    memset(out, 0, FE_SC_MSG_LEN);
    out[OFF_FLAGS] = (uint8_t)((m->info_valid ? FLAG_INFO_VALID : 0) | ((m->request & 7u) << 1) |
                               (m->ack_valid ? FLAG_ACK_VALID : 0) | ((m->ack & 7u) << 5));
    put_info(out + OFF_LOC, &m->loc);
    put_info(out + OFF_REM, &m->rem);
    put16(out + OFF_REPLY_PORT, m->reply_port);
    out[OFF_TX_FLAGS] = (uint8_t)((m->tx.valid ? TX_VALID : 0) | (m->tx.start ? TX_START : 0) |
                                  (m->tx.immediate ? TX_IMM : 0) | (m->tx.write ? TX_WRITE : 0));
    put32(out + OFF_TX_LEN, m->tx.msg_len_bytes);
    put32(out + OFF_TX_COUNT, m->tx.msg_count);
    put32(out + OFF_TX_GAP, m->tx.gap);
    return 0;
}

int fe_sc_decode(const uint8_t *buf, size_t len, struct fe_sc_msg *m, enum fe_sc_reason *why)
{
    enum fe_sc_reason r = FE_SC_R_OK;
    if (!buf || len < FE_SC_MSG_LEN) {
        r = FE_SC_R_SHORT;
    } else if (len > FE_SC_MSG_LEN) {
        r = FE_SC_R_LONG;
    } else if (buf[OFF_LOC] || buf[OFF_LOC + 4] || buf[OFF_REM] || buf[OFF_REM + 4]) {
        r = FE_SC_R_SLOT;
    } else {
        uint8_t f = buf[OFF_FLAGS], tf = buf[OFF_TX_FLAGS];
        bool info = f & FLAG_INFO_VALID, ackv = f & FLAG_ACK_VALID;
        unsigned req = (f >> 1) & 7u, ack = (f >> 5) & 7u;
        if (info ? !request_known(req) : req != FE_SC_REQ_NULL)
            r = FE_SC_R_REQUEST;
        else if (ackv ? (!ack_known(ack) || !info) : ack != FE_SC_ACK_NULL)
            r = FE_SC_R_ACK;
        else if ((tf & TX_RESERVED) || (!(tf & TX_VALID) && tf))
            r = FE_SC_R_TX_FLAGS;
        else if (!info && !ackv && !(tf & TX_VALID))
            r = FE_SC_R_EMPTY;
    }
    if (why) *why = r;
    if (r != FE_SC_R_OK) return r == FE_SC_R_SHORT ? FE_ETRUNC : FE_EPARSE;

    uint8_t f = buf[OFF_FLAGS], tf = buf[OFF_TX_FLAGS];
    memset(m, 0, sizeof *m);
    m->info_valid = f & FLAG_INFO_VALID;
    m->request = (uint8_t)((f >> 1) & 7u);
    m->ack_valid = f & FLAG_ACK_VALID;
    m->ack = (uint8_t)((f >> 5) & 7u);
    get_info(buf + OFF_LOC, &m->loc);
    get_info(buf + OFF_REM, &m->rem);
    m->reply_port = get16(buf + OFF_REPLY_PORT);
    m->tx.valid = tf & TX_VALID;
    m->tx.start = tf & TX_START;
    m->tx.immediate = tf & TX_IMM;
    m->tx.write = tf & TX_WRITE;
    m->tx.msg_len_bytes = get32(buf + OFF_TX_LEN);
    m->tx.msg_count = get32(buf + OFF_TX_COUNT);
    m->tx.gap = get32(buf + OFF_TX_GAP);
    return 0;
}

/* ---- front-end role ---- */

void fe_sc_fe_config_default(struct fe_sc_fe_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max_qps = FE_SC_MAX_QPS;
    cfg->first_qpn = FE_SC_FIRST_QPN;
}

int fe_sc_fe_init(struct fe_sc_fe *fe, const struct fe_sc_fe_config *cfg)
{
    if (!cfg->max_qps || cfg->max_qps > FE_SC_MAX_QPS || !cfg->first_qpn ||
        cfg->first_qpn + cfg->max_qps - 1 > MASK24)
        return FE_EINVAL;
    memset(fe, 0, sizeof *fe);
    fe->cfg = *cfg;
    return 0;
}

static struct fe_sc_fe_qp *fe_slot_of(struct fe_sc_fe *fe, uint32_t qpn)
{
    /* QPN i of the front-end lives in slot i - first_qpn, as the firmware's QPN pool does. */
    if (qpn < fe->cfg.first_qpn || qpn - fe->cfg.first_qpn >= fe->cfg.max_qps) return NULL;
    struct fe_sc_fe_qp *q = &fe->qp[qpn - fe->cfg.first_qpn];
    return q->state == FE_SC_QP_FREE ? NULL : q;
}

const struct fe_sc_fe_qp *fe_sc_fe_find(const struct fe_sc_fe *fe, uint32_t qpn)
{
    return fe_slot_of((struct fe_sc_fe *)fe, qpn);
}

int fe_sc_fe_release(struct fe_sc_fe *fe, uint32_t qpn)
{
    struct fe_sc_fe_qp *q = fe_slot_of(fe, qpn);
    if (!q) return FE_ENOENT;
    memset(q, 0, sizeof *q);
    return 0;
}

unsigned fe_sc_fe_open_count(const struct fe_sc_fe *fe)
{
    unsigned n = 0;
    for (unsigned i = 0; i < fe->cfg.max_qps; i++) n += fe->qp[i].state != FE_SC_QP_FREE;
    return n;
}

static bool same_host_params(const struct fe_sc_qp_info *a, const struct fe_sc_qp_info *b)
{
    return a->qpn == b->qpn && a->psn == b->psn && a->rkey == b->rkey && a->va == b->va &&
           a->ip == b->ip;
}

/* Builds the reply to request `m`: loc/rem swapped, our side first. */
static void fe_reply(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip, uint8_t ack,
                     const struct fe_sc_fe_qp *q, struct fe_sc_fe_result *res)
{
    struct fe_sc_msg r;
    memset(&r, 0, sizeof r);
    r.info_valid = true;
    r.request = m->request;
    r.ack_valid = true;
    r.ack = ack;
    if (q) {
        r.loc.qpn = q->qpn;
        r.loc.psn = q->sq_psn;
    } else {
        r.loc.qpn = m->request == FE_SC_REQ_OPEN_QP ? 0 : m->rem.qpn; /* the QPN asked about */
    }
    r.loc.rkey = fe->cfg.rkey;
    r.loc.va = fe->cfg.va;
    r.loc.ip = fe->cfg.local_ip;
    r.rem = m->loc;
    r.reply_port = FE_SC_PORT;
    if (fe_sc_encode(res->reply_msg, &r) != 0) return; /* cannot happen: fields came decoded */
    res->reply = true;
    res->reply_ip = src_ip;
    res->reply_port = m->reply_port ? m->reply_port : FE_SC_REPLY_PORT;
    fe->stats.tx_msgs++;
    fe->stats.tx_acks[ack & 7]++;
}

static void add_event(struct fe_sc_fe_result *res, uint8_t type, const struct fe_sc_fe_qp *q,
                      unsigned slot)
{
    if (res->n_events >= 2) return;
    struct fe_sc_event *e = &res->ev[res->n_events++];
    memset(e, 0, sizeof *e);
    e->type = type;
    e->qpn = q->qpn;
    e->slot = slot;
    e->peer = q->peer;
    e->sq_psn = q->sq_psn;
    e->tx = q->tx;
}

static int fe_reject(struct fe_sc_fe *fe, struct fe_sc_fe_result *res, enum fe_sc_reason r)
{
    fe->stats.rejected[r]++;
    res->why = r;
    return FE_EPARSE;
}

/* The slot a request for QP m->rem.qpn acts on, checked: only the host that opened a QP (same
 * address, same host QPN) may drive it. *q is NULL when there is no such QP. */
static int check_owner(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                       struct fe_sc_fe_qp **q)
{
    *q = fe_slot_of(fe, m->rem.qpn);
    if (*q && ((*q)->host_addr != src_ip || (*q)->peer.qpn != m->loc.qpn)) return -1;
    return 0;
}

/* A START/STOP needs a QP that is ready, or that this very datagram makes ready. */
static bool tx_target_ready(const struct fe_sc_msg *m, const struct fe_sc_fe_qp *tq)
{
    bool req = m->info_valid;
    if (req && (m->request == FE_SC_REQ_CLOSE_QP || m->request == FE_SC_REQ_ERROR ||
                m->request == FE_SC_REQ_OPEN_QP))
        return false;
    return tq && (tq->state == FE_SC_QP_RTS || (req && m->request == FE_SC_REQ_MODIFY_QP_RTS));
}

/* OPEN_QP: a free slot, or the host's QP again when it repeats the request. */
static void open_qp(struct fe_sc_fe *fe, uint64_t now_ns, const struct fe_sc_msg *m,
                    uint32_t src_ip, struct fe_sc_fe_result *res)
{
    struct fe_sc_fe_qp *same = NULL, *free_q = NULL;
    for (unsigned i = 0; i < fe->cfg.max_qps; i++) {
        struct fe_sc_fe_qp *c = &fe->qp[i];
        if (c->state == FE_SC_QP_FREE) {
            if (!free_q) free_q = c;
        } else if (c->host_addr == src_ip && c->peer.qpn == m->loc.qpn) {
            same = c;
        }
    }
    if (same && same_host_params(&same->peer, &m->loc)) {
        /* The host sent OPEN_QP again (our ACK was lost): same QP, same answer. */
        fe_reply(fe, m, src_ip, FE_SC_ACK_ACK, same, res);
        return;
    }
    struct fe_sc_fe_qp *use = same ? same : free_q;
    if (!use) {
        fe_reply(fe, m, src_ip, FE_SC_ACK_NO_QP, NULL, res);
        return;
    }
    unsigned slot = (unsigned)(use - fe->qp);
    memset(use, 0, sizeof *use);
    use->state = FE_SC_QP_OPEN;
    use->qpn = fe->cfg.first_qpn + slot;
    use->sq_psn = m->loc.psn; /* the front-end's first send PSN is the host's PSN */
    use->host_addr = src_ip;
    use->reply_port = m->reply_port ? m->reply_port : FE_SC_REPLY_PORT;
    use->peer = m->loc;
    use->opened_ns = now_ns;
    add_event(res, FE_SC_EV_OPENED, use, slot);
    fe_reply(fe, m, src_ip, FE_SC_ACK_ACK, use, res);
}

/* SEND_QP_INFO, MODIFY_QP_RTS, CLOSE_QP, ERROR on the existing QP q. */
static void qp_request(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                       struct fe_sc_fe_qp *q, struct fe_sc_fe_result *res)
{
    if (!q) {
        fe_reply(fe, m, src_ip, FE_SC_ACK_NO_QP, NULL, res);
        return;
    }
    unsigned slot = (unsigned)(q - fe->qp);
    switch (m->request) {
    case FE_SC_REQ_SEND_QP_INFO:
        if (!same_host_params(&q->peer, &m->loc)) {
            q->peer = m->loc;
            q->sq_psn = m->loc.psn;
            add_event(res, FE_SC_EV_UPDATED, q, slot);
        }
        fe_reply(fe, m, src_ip, FE_SC_ACK_ACK, q, res);
        break;
    case FE_SC_REQ_MODIFY_QP_RTS:
        if (q->state != FE_SC_QP_RTS) { /* a repeated MODIFY is answered, not re-executed */
            q->state = FE_SC_QP_RTS;
            add_event(res, FE_SC_EV_RTS, q, slot);
        }
        fe_reply(fe, m, src_ip, FE_SC_ACK_ACK, q, res);
        break;
    default: /* CLOSE_QP, ERROR */
        add_event(res, FE_SC_EV_CLOSED, q, slot);
        fe_reply(fe, m, src_ip, FE_SC_ACK_ACK, q, res);
        memset(q, 0, sizeof *q);
        break;
    }
}

static bool is_qp_request(uint8_t request)
{
    return request == FE_SC_REQ_SEND_QP_INFO || request == FE_SC_REQ_MODIFY_QP_RTS ||
           request == FE_SC_REQ_CLOSE_QP || request == FE_SC_REQ_ERROR;
}

int fe_sc_fe_input(struct fe_sc_fe *fe, uint64_t now_ns, const uint8_t *buf, size_t len,
                   uint32_t src_ip, uint16_t src_port, struct fe_sc_fe_result *res)
{
    (void)src_port; /* replies go to the port the message names, not to the source port */
    memset(res, 0, sizeof *res);
    struct fe_sc_msg m;
    enum fe_sc_reason why;
    int rc = fe_sc_decode(buf, len, &m, &why);
    if (rc) {
        fe->stats.rejected[why]++;
        res->why = why;
        return rc;
    }
    if (m.ack_valid) return fe_reject(fe, res, FE_SC_R_ROLE);
    if (fe->cfg.allowed_ip && src_ip != fe->cfg.allowed_ip)
        return fe_reject(fe, res, FE_SC_R_SOURCE);

    /* Everything is checked before anything changes, so a refused datagram changes nothing. */
    struct fe_sc_fe_qp *q = NULL, *tq = NULL;
    if (m.info_valid && m.request != FE_SC_REQ_OPEN_QP && check_owner(fe, &m, src_ip, &q))
        return fe_reject(fe, res, FE_SC_R_SOURCE);
    if (m.tx.valid) {
        if (check_owner(fe, &m, src_ip, &tq)) return fe_reject(fe, res, FE_SC_R_SOURCE);
        if (!tx_target_ready(&m, tq)) return fe_reject(fe, res, FE_SC_R_NOT_RTS);
    }
    fe->stats.rx_ok++;

    /* other request types: unreachable, the decoder refused them */
    if (m.info_valid && m.request == FE_SC_REQ_OPEN_QP)
        open_qp(fe, now_ns, &m, src_ip, res);
    else if (m.info_valid && is_qp_request(m.request))
        qp_request(fe, &m, src_ip, q, res);
    if (m.tx.valid && tq && tq->state == FE_SC_QP_RTS) {
        tq->tx = m.tx;
        tq->streaming = m.tx.start;
        add_event(res, m.tx.start ? FE_SC_EV_START : FE_SC_EV_STOP, tq, (unsigned)(tq - fe->qp));
    }
    return 0;
}

/* ---- host role ---- */

void fe_sc_host_config_default(struct fe_sc_host_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->fe_port = FE_SC_PORT;
    cfg->reply_port = FE_SC_REPLY_PORT;
    cfg->retry_timeout_ns = 100000000ull;
    cfg->max_tries = 5;
}

int fe_sc_host_init(struct fe_sc_host *h, const struct fe_sc_host_config *cfg)
{
    if (cfg->local.qpn > MASK24 || cfg->local.psn > MASK24 || !cfg->fe_port || !cfg->reply_port ||
        !cfg->retry_timeout_ns || !cfg->max_tries)
        return FE_EINVAL;
    memset(h, 0, sizeof *h);
    h->cfg = *cfg;
    return 0;
}

static void host_request(struct fe_sc_host *h, uint8_t req)
{
    h->outstanding = req;
    h->tries = 0;
    h->send_now = true;
}

int fe_sc_host_open(struct fe_sc_host *h, uint64_t now_ns)
{
    (void)now_ns;
    if (h->state != FE_SC_H_IDLE) return FE_ESTATE;
    h->state = FE_SC_H_OPENING;
    host_request(h, FE_SC_REQ_OPEN_QP);
    return 0;
}

int fe_sc_host_send_tx_meta(struct fe_sc_host *h, const struct fe_sc_tx_meta *tx)
{
    if (h->state != FE_SC_H_RTS) return FE_ESTATE;
    h->cfg.start = *tx;
    h->cfg.start.valid = true;
    h->start_pending = true;
    return 0;
}

int fe_sc_host_close(struct fe_sc_host *h, uint64_t now_ns)
{
    (void)now_ns;
    switch (h->state) {
    case FE_SC_H_IDLE:
    case FE_SC_H_OPENING: /* the front-end's QPN is unknown: nothing we can name to close */
        h->state = FE_SC_H_CLOSED;
        h->outstanding = FE_SC_REQ_NULL;
        h->send_now = h->start_pending = false;
        return 0;
    case FE_SC_H_MODIFYING:
    case FE_SC_H_RTS:
        h->state = FE_SC_H_CLOSING;
        h->start_pending = false;
        host_request(h, FE_SC_REQ_CLOSE_QP);
        return 0;
    case FE_SC_H_FAILED:
        if (!h->remote.qpn) return FE_ESTATE;
        h->state = FE_SC_H_CLOSING;
        h->timed_out = false;
        h->fail_ack = 0;
        host_request(h, FE_SC_REQ_CLOSE_QP);
        return 0;
    default:
        return FE_ESTATE;
    }
}

static int host_encode(struct fe_sc_host *h, uint8_t req, bool tx, uint8_t out[FE_SC_MSG_LEN])
{
    struct fe_sc_msg m;
    memset(&m, 0, sizeof m);
    m.info_valid = !tx;
    m.request = tx ? FE_SC_REQ_NULL : req;
    m.loc = h->cfg.local;
    m.rem = h->remote;
    m.rem.ip = h->cfg.fe_ip;
    m.reply_port = h->cfg.reply_port;
    if (tx) m.tx = h->cfg.start;
    int rc = fe_sc_encode(out, &m);
    if (rc == 0) h->stats.tx_msgs++;
    return rc;
}

int fe_sc_host_poll_tx(struct fe_sc_host *h, uint64_t now_ns, uint8_t out[FE_SC_MSG_LEN])
{
    if (h->start_pending && h->state == FE_SC_H_RTS) {
        h->start_pending = false;
        return host_encode(h, FE_SC_REQ_NULL, true, out) == 0;
    }
    if (h->outstanding == FE_SC_REQ_NULL) return 0;
    if (!h->send_now && now_ns < h->deadline_ns) return 0;
    if (!h->send_now) {
        if (h->tries >= h->cfg.max_tries) {
            h->state = FE_SC_H_FAILED;
            h->timed_out = true;
            h->outstanding = FE_SC_REQ_NULL;
            return 0;
        }
        h->stats.retries++;
    }
    if (host_encode(h, h->outstanding, false, out) != 0) return 0;
    h->send_now = false;
    h->tries++;
    h->deadline_ns = now_ns + h->cfg.retry_timeout_ns;
    return 1;
}

uint64_t fe_sc_host_next_deadline(const struct fe_sc_host *h)
{
    if ((h->start_pending && h->state == FE_SC_H_RTS) || h->send_now) return 0;
    if (h->outstanding != FE_SC_REQ_NULL) return h->deadline_ns;
    return UINT64_MAX;
}

static int host_reject(struct fe_sc_host *h, enum fe_sc_reason r, enum fe_sc_reason *why)
{
    h->stats.rejected[r]++;
    if (why) *why = r;
    return FE_EPARSE;
}

int fe_sc_host_input_msg(struct fe_sc_host *h, uint64_t now_ns, const struct fe_sc_msg *m,
                         uint32_t src_ip, uint16_t src_port, enum fe_sc_reason *why)
{
    (void)now_ns;
    if (src_ip != h->cfg.fe_ip || (!h->cfg.any_src_port && src_port != h->cfg.fe_port))
        return host_reject(h, FE_SC_R_SOURCE, why);
    if (!m->ack_valid) return host_reject(h, FE_SC_R_ROLE, why);
    /* A reply must answer the request we are waiting for, about our QP (and theirs). */
    if (h->outstanding == FE_SC_REQ_NULL || m->request != h->outstanding ||
        m->rem.qpn != h->cfg.local.qpn ||
        (h->outstanding != FE_SC_REQ_OPEN_QP && m->loc.qpn != h->remote.qpn) ||
        (h->outstanding == FE_SC_REQ_OPEN_QP && m->ack == FE_SC_ACK_ACK && m->loc.qpn == 0))
        return host_reject(h, FE_SC_R_UNSOLICITED, why);
    h->stats.rx_ok++;
    if (why) *why = FE_SC_R_OK;

    uint8_t req = h->outstanding;
    h->outstanding = FE_SC_REQ_NULL;
    h->send_now = false;
    if (req == FE_SC_REQ_CLOSE_QP) {
        /* NO_QP: already gone (our earlier CLOSE_QP got through, its ACK did not). */
        if (m->ack == FE_SC_ACK_ACK || m->ack == FE_SC_ACK_NO_QP) {
            h->state = FE_SC_H_CLOSED;
        } else {
            h->state = FE_SC_H_FAILED;
            h->fail_ack = m->ack;
        }
        return 0;
    }
    if (m->ack != FE_SC_ACK_ACK) {
        h->state = FE_SC_H_FAILED;
        h->fail_ack = m->ack;
        return 0;
    }
    if (req == FE_SC_REQ_OPEN_QP) {
        h->remote = m->loc;
        h->state = FE_SC_H_MODIFYING;
        host_request(h, FE_SC_REQ_MODIFY_QP_RTS);
    } else if (req == FE_SC_REQ_MODIFY_QP_RTS) {
        h->state = FE_SC_H_RTS;
        h->start_pending = h->cfg.start.valid;
    }
    return 0;
}

int fe_sc_host_input(struct fe_sc_host *h, uint64_t now_ns, const uint8_t *buf, size_t len,
                     uint32_t src_ip, uint16_t src_port, enum fe_sc_reason *why)
{
    struct fe_sc_msg m;
    enum fe_sc_reason r;
    int rc = fe_sc_decode(buf, len, &m, &r);
    if (rc) {
        h->stats.rejected[r]++;
        if (why) *why = r;
        return rc;
    }
    return fe_sc_host_input_msg(h, now_ns, &m, src_ip, src_port, why);
}
