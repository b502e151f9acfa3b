/* The side channel (Lite-RoCEv2 connection manager): 64-byte message codec and the two sans-I/O
 * state machines, front-end and host. See include/feroce/sidechannel.h. */
#include "feroce/sidechannel.h"

#include <stdio.h>
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
    if (m->request != FE_SC_REQ_NULL && (!m->info_valid || !request_known(m->request)))
        return FE_EINVAL;
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
        /* Info valid with no request is accepted: the firmware ignores the combination, and
         * host software (feroce-rs) sends its tx-meta that way. */
        if (req != FE_SC_REQ_NULL && (!info || !request_known(req)))
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

/* 1..max_digits decimal digits at *s, at most max. Digits only: sscanf's %u took a blank or a
 * sign first (" 1.2.3.4", "+1.2.3.4", "1.2.3.4/ 8", "-0.0.0.0"). */
static bool take_dec(const char **s, unsigned max_digits, unsigned max, unsigned *out)
{
    unsigned v = 0, n = 0;
    for (; n < max_digits && **s >= '0' && **s <= '9'; n++) v = v * 10 + (unsigned)(*(*s)++ - '0');
    if (!n || v > max) return false;
    *out = v;
    return true;
}

int fe_sc_cidr_parse(const char *s, struct fe_sc_cidr *out)
{
    unsigned a[4], bits = 32;
    if (!s) return FE_EINVAL;
    for (int i = 0; i < 4; i++) {
        if (i && *s++ != '.') return FE_EINVAL;
        if (!take_dec(&s, 3, 255, &a[i])) return FE_EINVAL;
    }
    if (*s == '/' && (s++, !take_dec(&s, 2, 32, &bits))) return FE_EINVAL;
    if (*s) return FE_EINVAL;
    uint32_t ip = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
    out->mask = bits ? ~0u << (32 - bits) : 0;
    out->net = ip & out->mask;
    return 0;
}

void fe_sc_fe_config_default(struct fe_sc_fe_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max_qps = FE_SC_MAX_QPS;
    cfg->first_qpn = FE_SC_FIRST_QPN;
    cfg->mode = FE_SC_FE_LIBERAL;
    cfg->reply_rate_per_s = 1000;
    cfg->reply_burst = 64;
}

int fe_sc_fe_init(struct fe_sc_fe *fe, const struct fe_sc_fe_config *cfg)
{
    if (!cfg->max_qps || cfg->max_qps > FE_SC_MAX_QPS || !cfg->first_qpn ||
        cfg->first_qpn + cfg->max_qps - 1 > MASK24 || cfg->mode > FE_SC_FE_FIRMWARE ||
        cfg->n_allow > FE_SC_MAX_ALLOW || cfg->reply_rate_per_s > 1000000000u)
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

static bool mode_is(const struct fe_sc_fe *fe, enum fe_sc_fe_mode mode)
{
    return fe->cfg.mode == mode;
}

/* Replies are paced (GCRA): at most reply_burst back to back, then one per 1/reply_rate_per_s,
 * so that the front-end cannot be made to flood a forged source address. */
static bool reply_allowed(struct fe_sc_fe *fe, uint64_t now_ns)
{
    if (!fe->cfg.reply_rate_per_s) return true;
    uint64_t interval_ns = 1000000000ull / fe->cfg.reply_rate_per_s;
    uint64_t tat = fe->reply_tat_ns > now_ns ? fe->reply_tat_ns : now_ns;
    if (tat - now_ns > (uint64_t)fe->cfg.reply_burst * interval_ns) {
        fe->stats.replies_limited++;
        return false;
    }
    fe->reply_tat_ns = tat + interval_ns;
    return true;
}

static void emit_reply(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                       uint64_t now_ns, uint8_t ack, struct fe_sc_fe_result *res)
{
    memcpy(fe->last_reply, res->reply_msg, FE_SC_MSG_LEN);
    /* The firmware answers the port named, even 0 (which nobody can receive). */
    uint16_t port =
        m->reply_port || mode_is(fe, FE_SC_FE_FIRMWARE) ? m->reply_port : FE_SC_REPLY_PORT;
    if (!port) {
        fe->stats.replies_undeliverable++;
        return;
    }
    if (!reply_allowed(fe, now_ns)) return;
    res->reply = true;
    res->reply_ip = src_ip;
    res->reply_port = port;
    fe->stats.tx_msgs++;
    fe->stats.tx_acks[ack & 7]++;
}

/* Builds the reply to request `m`: loc/rem swapped, our side first. */
static void fe_reply(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                     uint64_t now_ns, uint8_t ack, const struct fe_sc_fe_qp *q,
                     struct fe_sc_fe_result *res)
{
    struct fe_sc_msg r;
    memset(&r, 0, sizeof r);
    r.info_valid = true;
    r.request = m->request;
    r.ack_valid = true;
    r.ack = ack;
    if (q) {
        r.loc.qpn = q->qpn;
        /* the firmware's replies say PSN 0 whatever PSN it sends from */
        r.loc.psn = mode_is(fe, FE_SC_FE_FIRMWARE) ? 0 : q->sq_psn;
    } else {
        r.loc.qpn = m->request == FE_SC_REQ_OPEN_QP ? 0 : m->rem.qpn; /* the QPN asked about */
    }
    r.loc.rkey = fe->cfg.rkey;
    r.loc.va = fe->cfg.va;
    r.loc.ip = fe->cfg.local_ip;
    r.rem = m->loc;
    r.reply_port = FE_SC_PORT;
    if (fe_sc_encode(res->reply_msg, &r) != 0) return; /* cannot happen: fields came decoded */
    emit_reply(fe, m, src_ip, now_ns, ack, res);
}

/* An error reply (NO_QP, NAK, ERROR). The firmware sends its previous reply again with only the
 * ack type changed; feroce names the request and QP it answers. */
static void fe_error_reply(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                           uint64_t now_ns, uint8_t ack, struct fe_sc_fe_result *res)
{
    if (!mode_is(fe, FE_SC_FE_FIRMWARE)) {
        fe_reply(fe, m, src_ip, now_ns, ack, NULL, res);
        return;
    }
    memcpy(res->reply_msg, fe->last_reply, FE_SC_MSG_LEN);
    res->reply_msg[0] = (uint8_t)((res->reply_msg[0] & 0x0Eu) | FLAG_INFO_VALID | FLAG_ACK_VALID |
                                  ((ack & 7u) << 5));
    emit_reply(fe, m, src_ip, now_ns, ack, res);
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

static unsigned slot_index(const struct fe_sc_fe *fe, const struct fe_sc_fe_qp *q)
{
    return (unsigned)(q - fe->qp);
}

static int fe_reject(struct fe_sc_fe *fe, struct fe_sc_fe_result *res, enum fe_sc_reason r)
{
    fe->stats.rejected[r]++;
    res->why = r;
    return FE_EPARSE;
}

static bool check_allowed(const struct fe_sc_fe *fe, uint32_t src_ip)
{
    if (fe->cfg.allowed_ip && src_ip != fe->cfg.allowed_ip) return false;
    if (!fe->cfg.n_allow) return true;
    for (unsigned i = 0; i < fe->cfg.n_allow && i < FE_SC_MAX_ALLOW; i++)
        if ((src_ip & fe->cfg.allow[i].mask) == fe->cfg.allow[i].net) return true;
    return false;
}

/* Strict: only the host that opened a QP (same address, same host QPN) may drive it. Liberal
 * and firmware: the QP is named by its QPN alone, as the firmware does (host software sends
 * loc QPN 0, or closes from another address). */
static bool check_owner(const struct fe_sc_fe *fe, const struct fe_sc_fe_qp *q,
                        const struct fe_sc_msg *m, uint32_t src_ip)
{
    if (!q || !mode_is(fe, FE_SC_FE_STRICT)) return true;
    return q->host_addr == src_ip && q->peer.qpn == m->loc.qpn;
}

/* Whether a tx-meta may start the stream of QP tq. Strict: it must be RTS, or made so by the
 * same datagram. Liberal: a QP that is only OPEN counts too (host software that never sends
 * MODIFY_QP_RTS); the firmware's QPs are RTS from OPEN on. */
static bool check_tx_ready(const struct fe_sc_fe *fe, const struct fe_sc_fe_qp *tq,
                           const struct fe_sc_msg *m)
{
    if (!tq) return false;
    if (m->info_valid && (m->request == FE_SC_REQ_CLOSE_QP || m->request == FE_SC_REQ_ERROR ||
                          m->request == FE_SC_REQ_OPEN_QP))
        return false;
    if (tq->state == FE_SC_QP_RTS || !mode_is(fe, FE_SC_FE_STRICT)) return true;
    return m->info_valid && m->request == FE_SC_REQ_MODIFY_QP_RTS;
}

/* Everything is checked before anything changes, so a refused datagram changes nothing. */
static int check_request(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                         struct fe_sc_fe_result *res)
{
    if (m->ack_valid) return fe_reject(fe, res, FE_SC_R_ROLE);
    if (!check_allowed(fe, src_ip)) return fe_reject(fe, res, FE_SC_R_SOURCE);
    if (m->info_valid && m->request == FE_SC_REQ_NULL && mode_is(fe, FE_SC_FE_STRICT))
        return fe_reject(fe, res, FE_SC_R_REQUEST);
    if (m->info_valid && m->request != FE_SC_REQ_OPEN_QP &&
        !check_owner(fe, fe_slot_of(fe, m->rem.qpn), m, src_ip))
        return fe_reject(fe, res, FE_SC_R_SOURCE);
    if (m->tx.valid) {
        const struct fe_sc_fe_qp *tq = fe_slot_of(fe, m->rem.qpn);
        if (!check_owner(fe, tq, m, src_ip)) return fe_reject(fe, res, FE_SC_R_SOURCE);
        if (!check_tx_ready(fe, tq, m)) return fe_reject(fe, res, FE_SC_R_NOT_RTS);
    }
    return 0;
}

static struct fe_sc_fe_qp *find_reopen(struct fe_sc_fe *fe, const struct fe_sc_msg *m,
                                       uint32_t src_ip, struct fe_sc_fe_qp **free_q)
{
    struct fe_sc_fe_qp *same = NULL;
    *free_q = NULL;
    for (unsigned i = 0; i < fe->cfg.max_qps; i++) {
        struct fe_sc_fe_qp *c = &fe->qp[i];
        if (c->state == FE_SC_QP_FREE) {
            if (!*free_q) *free_q = c;
        } else if (c->host_addr == src_ip && c->peer.qpn == m->loc.qpn) {
            same = c;
        }
    }
    /* The firmware pops a new QPN for every OPEN_QP, a repeated one too. */
    return mode_is(fe, FE_SC_FE_FIRMWARE) ? NULL : same;
}

static void open_qp(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                    uint64_t now_ns, struct fe_sc_fe_result *res)
{
    struct fe_sc_fe_qp *free_q, *same = find_reopen(fe, m, src_ip, &free_q);
    if (same && same_host_params(&same->peer, &m->loc)) {
        /* The host sent OPEN_QP again (our ACK was lost): same QP, same answer. */
        fe_reply(fe, m, src_ip, now_ns, FE_SC_ACK_ACK, same, res);
        return;
    }
    struct fe_sc_fe_qp *use = same ? same : free_q;
    if (!use) {
        fe_error_reply(fe, m, src_ip, now_ns, FE_SC_ACK_NO_QP, res);
        return;
    }
    unsigned slot = slot_index(fe, use);
    memset(use, 0, sizeof *use);
    use->state = mode_is(fe, FE_SC_FE_FIRMWARE) ? FE_SC_QP_RTS : FE_SC_QP_OPEN;
    use->qpn = fe->cfg.first_qpn + slot;
    use->sq_psn = m->loc.psn; /* the front-end's first send PSN is the host's PSN */
    use->host_addr = src_ip;
    use->reply_port = m->reply_port ? m->reply_port : FE_SC_REPLY_PORT;
    use->peer = m->loc;
    use->opened_ns = now_ns;
    add_event(res, FE_SC_EV_OPENED, use, slot);
    if (use->state == FE_SC_QP_RTS) add_event(res, FE_SC_EV_RTS, use, slot);
    fe_reply(fe, m, src_ip, now_ns, FE_SC_ACK_ACK, use, res);
}

static void send_qp_info(struct fe_sc_fe *fe, const struct fe_sc_msg *m, struct fe_sc_fe_qp *q,
                         uint32_t src_ip, uint64_t now_ns, struct fe_sc_fe_result *res)
{
    if (q && !same_host_params(&q->peer, &m->loc)) {
        q->peer = m->loc;
        q->sq_psn = m->loc.psn;
        add_event(res, FE_SC_EV_UPDATED, q, slot_index(fe, q));
    }
    if (mode_is(fe, FE_SC_FE_FIRMWARE)) return; /* the firmware does not answer it */
    if (!q)
        fe_error_reply(fe, m, src_ip, now_ns, FE_SC_ACK_NO_QP, res);
    else
        fe_reply(fe, m, src_ip, now_ns, FE_SC_ACK_ACK, q, res);
}

static void modify_qp_rts(struct fe_sc_fe *fe, const struct fe_sc_msg *m, struct fe_sc_fe_qp *q,
                          uint32_t src_ip, uint64_t now_ns, struct fe_sc_fe_result *res)
{
    if (!q) {
        bool in_pool =
            m->rem.qpn >= fe->cfg.first_qpn && m->rem.qpn - fe->cfg.first_qpn < fe->cfg.max_qps;
        /* the firmware leaves a MODIFY outside its pool unanswered */
        if (in_pool || !mode_is(fe, FE_SC_FE_FIRMWARE))
            fe_error_reply(fe, m, src_ip, now_ns, FE_SC_ACK_NO_QP, res);
        return;
    }
    if (mode_is(fe, FE_SC_FE_FIRMWARE)) { /* RTS since OPEN: the firmware answers ERROR */
        fe_reply(fe, m, src_ip, now_ns, FE_SC_ACK_ERROR, q, res);
        return;
    }
    if (q->state != FE_SC_QP_RTS) { /* a repeated MODIFY is answered, not re-executed */
        q->state = FE_SC_QP_RTS;
        add_event(res, FE_SC_EV_RTS, q, slot_index(fe, q));
    }
    fe_reply(fe, m, src_ip, now_ns, FE_SC_ACK_ACK, q, res);
}

static void close_qp(struct fe_sc_fe *fe, const struct fe_sc_msg *m, struct fe_sc_fe_qp *q,
                     uint32_t src_ip, uint64_t now_ns, struct fe_sc_fe_result *res)
{
    bool answer = m->request == FE_SC_REQ_CLOSE_QP || !mode_is(fe, FE_SC_FE_FIRMWARE);
    if (!q) {
        if (answer) fe_error_reply(fe, m, src_ip, now_ns, FE_SC_ACK_NO_QP, res);
        return;
    }
    add_event(res, FE_SC_EV_CLOSED, q, slot_index(fe, q));
    if (answer) fe_reply(fe, m, src_ip, now_ns, FE_SC_ACK_ACK, q, res);
    memset(q, 0, sizeof *q);
}

static void handle_request(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src_ip,
                           uint64_t now_ns, struct fe_sc_fe_result *res)
{
    struct fe_sc_fe_qp *q = fe_slot_of(fe, m->rem.qpn);
    switch (m->request) {
    case FE_SC_REQ_OPEN_QP:
        open_qp(fe, m, src_ip, now_ns, res);
        break;
    case FE_SC_REQ_SEND_QP_INFO:
        send_qp_info(fe, m, q, src_ip, now_ns, res);
        break;
    case FE_SC_REQ_MODIFY_QP_RTS:
        modify_qp_rts(fe, m, q, src_ip, now_ns, res);
        break;
    case FE_SC_REQ_CLOSE_QP:
    case FE_SC_REQ_ERROR:
        close_qp(fe, m, q, src_ip, now_ns, res);
        break;
    default:
        break; /* no request: the datagram carries a tx-meta only */
    }
}

/* Starts or stops the stream of the QP the tx-meta names (checked by check_request). A liberal
 * front-end's QP that was only OPEN becomes RTS here: the host asked for the stream. */
static void apply_tx_meta(struct fe_sc_fe *fe, const struct fe_sc_msg *m,
                          struct fe_sc_fe_result *res)
{
    struct fe_sc_fe_qp *tq = fe_slot_of(fe, m->rem.qpn);
    if (!tq) return;
    if (tq->state != FE_SC_QP_RTS) {
        tq->state = FE_SC_QP_RTS;
        add_event(res, FE_SC_EV_RTS, tq, slot_index(fe, tq));
    }
    tq->tx = m->tx;
    tq->streaming = m->tx.start;
    add_event(res, m->tx.start ? FE_SC_EV_START : FE_SC_EV_STOP, tq, slot_index(fe, tq));
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
    if ((rc = check_request(fe, &m, src_ip, res))) return rc;
    fe->stats.rx_ok++;
    if (m.info_valid) handle_request(fe, &m, src_ip, now_ns, res);
    if (m.tx.valid) apply_tx_meta(fe, &m, res);
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
    /* The firmware answers from its own port (0x8765), not from the one it listens on. */
    cfg->any_src_port = true;
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

/* A CLOSE_QP for a QP the front-end gave us twice (see take_stray_qp); sent once: should it be
 * lost, the QP stays open on the front-end, and stats.strays says so. */
static int host_close_stray(struct fe_sc_host *h, uint8_t out[FE_SC_MSG_LEN])
{
    struct fe_sc_qp_info ours = h->remote;
    h->remote.qpn = h->stray_qpn[--h->n_stray];
    int rc = host_encode(h, FE_SC_REQ_CLOSE_QP, false, out);
    h->remote = ours;
    if (rc == 0) h->stats.strays_closed++;
    return rc == 0;
}

int fe_sc_host_poll_tx(struct fe_sc_host *h, uint64_t now_ns, uint8_t out[FE_SC_MSG_LEN])
{
    if (h->n_stray) return host_close_stray(h, out);
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
    if ((h->start_pending && h->state == FE_SC_H_RTS) || h->send_now || h->n_stray) return 0;
    if (h->outstanding != FE_SC_REQ_NULL) return h->deadline_ns;
    return UINT64_MAX;
}

static int host_reject(struct fe_sc_host *h, enum fe_sc_reason r, enum fe_sc_reason *why)
{
    h->stats.rejected[r]++;
    if (why) *why = r;
    return FE_EPARSE;
}

/* The firmware's NO_QP, NAK and ERROR replies repeat the fields of its previous reply (another
 * request's, maybe another host QP's) with only the ack type changed: from the front-end's
 * address, while a request of ours waits, such a reply answers it whatever its fields say. */
static bool firmware_error_reply(const struct fe_sc_host *h, const struct fe_sc_msg *m)
{
    return h->outstanding != FE_SC_REQ_NULL && m->ack != FE_SC_ACK_ACK;
}

/* A reply must answer the request we are waiting for, about our QP (and theirs). */
static bool check_reply_matches(const struct fe_sc_host *h, const struct fe_sc_msg *m)
{
    if (h->outstanding == FE_SC_REQ_NULL || m->request != h->outstanding ||
        m->rem.qpn != h->cfg.local.qpn)
        return false;
    if (h->outstanding != FE_SC_REQ_OPEN_QP) return m->loc.qpn == h->remote.qpn;
    return m->ack != FE_SC_ACK_ACK || m->loc.qpn != 0;
}

/* An OPEN_QP ACK naming another QP than ours, after we resent OPEN_QP: the front-end (the
 * firmware pops a new QPN for every OPEN_QP) gave us a second QP, which we close at once
 * rather than leave the board short of one. */
static bool take_stray_qp(struct fe_sc_host *h, const struct fe_sc_msg *m)
{
    if (m->request != FE_SC_REQ_OPEN_QP || m->ack != FE_SC_ACK_ACK ||
        m->rem.qpn != h->cfg.local.qpn || !m->loc.qpn || m->loc.qpn == h->remote.qpn ||
        h->state == FE_SC_H_OPENING || h->n_stray >= FE_SC_HOST_MAX_STRAY)
        return false;
    for (unsigned i = 0; i < h->n_stray; i++)
        if (h->stray_qpn[i] == m->loc.qpn) return true;
    h->stray_qpn[h->n_stray++] = m->loc.qpn;
    h->stats.strays++;
    return true;
}

static void host_closed_reply(struct fe_sc_host *h, const struct fe_sc_msg *m)
{
    /* NO_QP: already gone (our earlier CLOSE_QP got through, its ACK did not). */
    if (m->ack == FE_SC_ACK_ACK || m->ack == FE_SC_ACK_NO_QP) {
        h->state = FE_SC_H_CLOSED;
    } else {
        h->state = FE_SC_H_FAILED;
        h->fail_ack = m->ack;
    }
}

int fe_sc_host_input_msg(struct fe_sc_host *h, uint64_t now_ns, const struct fe_sc_msg *m,
                         uint32_t src_ip, uint16_t src_port, enum fe_sc_reason *why)
{
    (void)now_ns;
    if (src_ip != h->cfg.fe_ip || (!h->cfg.any_src_port && src_port != h->cfg.fe_port))
        return host_reject(h, FE_SC_R_SOURCE, why);
    if (!m->ack_valid) return host_reject(h, FE_SC_R_ROLE, why);
    if (!check_reply_matches(h, m) && !firmware_error_reply(h, m)) {
        if (!take_stray_qp(h, m)) return host_reject(h, FE_SC_R_UNSOLICITED, why);
        h->stats.rx_ok++;
        if (why) *why = FE_SC_R_OK;
        return 0;
    }
    h->stats.rx_ok++;
    if (why) *why = FE_SC_R_OK;

    uint8_t req = h->outstanding;
    h->outstanding = FE_SC_REQ_NULL;
    h->send_now = false;
    if (req == FE_SC_REQ_CLOSE_QP) {
        host_closed_reply(h, m);
        return 0;
    }
    if (req == FE_SC_REQ_MODIFY_QP_RTS && m->ack == FE_SC_ACK_ERROR) {
        /* The firmware moves a QP to RTS on OPEN_QP and answers a MODIFY after it with ERROR:
         * the QP is ready, as the front-end said when it accepted the OPEN. */
        h->state = FE_SC_H_RTS;
        h->start_pending = h->cfg.start.valid;
        h->stats.rts_on_open++;
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
