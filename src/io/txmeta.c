/* The host's tx-meta start, resent until the stream shows, and its stop (see txmeta.h). */
#include "io/txmeta.h"

#include <string.h>

void fe_txmeta_resend_reset(struct fe_txmeta_resend *r)
{
    memset(r, 0, sizeof *r);
}

uint64_t fe_txmeta_resend_deadline(const struct fe_txmeta_resend *r)
{
    return r->next_ns ? r->next_ns : UINT64_MAX;
}

/* Whether h is connected and was configured to start a stream. */
static bool check_start_configured(const struct fe_sc_host *h)
{
    return h->state == FE_SC_H_RTS && h->cfg.start.valid && h->cfg.start.start;
}

/* The first send went out at now_ns (fe_sc_host sends it on entering RTS). */
static void begin_schedule(struct fe_txmeta_resend *r, uint64_t first_wait_ns, uint64_t max_wait_ns,
                           unsigned max_sends, uint64_t now_ns)
{
    r->sends = 1;
    r->max_sends = max_sends;
    r->max_wait_ns = max_wait_ns;
    r->wait_ns = first_wait_ns;
    r->next_ns = now_ns + first_wait_ns;
}

/* The schedule's step at now_ns: the next send is due, or the last wait is over. */
static enum fe_txmeta_step step_schedule(struct fe_txmeta_resend *r, uint64_t now_ns)
{
    if (now_ns < r->next_ns) return FE_TXMETA_WAIT;
    if (r->sends >= r->max_sends) {
        r->next_ns = 0;
        r->gave_up = true;
        return FE_TXMETA_GIVE_UP;
    }
    r->sends++;
    r->wait_ns *= 2;
    if (r->wait_ns > r->max_wait_ns) r->wait_ns = r->max_wait_ns;
    r->next_ns = now_ns + r->wait_ns;
    return FE_TXMETA_SENT;
}

/* The configured tx-meta (start or stop) again when the schedule says so. */
static enum fe_txmeta_step send_when_due(struct fe_txmeta_resend *r, struct fe_sc_host *h,
                                         uint64_t now_ns)
{
    enum fe_txmeta_step s = step_schedule(r, now_ns);
    if (s == FE_TXMETA_SENT) {
        struct fe_sc_tx_meta tx = h->cfg.start;
        (void)fe_sc_host_send_tx_meta(h, &tx);
    }
    return s;
}

enum fe_txmeta_step fe_txmeta_start_watch(struct fe_txmeta_resend *r, struct fe_sc_host *h,
                                          bool awaited, uint64_t first_wait_ns, unsigned max_sends,
                                          uint64_t now_ns)
{
    if (!awaited || r->gave_up || !check_start_configured(h)) {
        r->next_ns = 0; /* never again on this connection once the stream showed */
        return FE_TXMETA_WAIT;
    }
    if (h->start_pending) return FE_TXMETA_WAIT; /* not out yet */
    if (!r->next_ns) {
        begin_schedule(r, first_wait_ns, FE_TXMETA_START_WAIT_MAX_NS, max_sends, now_ns);
        return FE_TXMETA_WAIT;
    }
    return send_when_due(r, h, now_ns);
}

enum fe_txmeta_step fe_txmeta_stop_watch(struct fe_txmeta_resend *r, struct fe_sc_host *h,
                                         uint64_t wait_ns, uint64_t now_ns)
{
    if (r->gave_up || h->state != FE_SC_H_RTS || h->cfg.start.start) {
        r->next_ns = 0; /* closing: CLOSE_QP ends the stream, and it is acknowledged */
        return FE_TXMETA_WAIT;
    }
    if (h->start_pending) return FE_TXMETA_WAIT; /* not out yet */
    if (!r->next_ns) {
        begin_schedule(r, wait_ns, wait_ns, FE_TXMETA_STOP_SENDS, now_ns);
        return FE_TXMETA_WAIT;
    }
    return send_when_due(r, h, now_ns);
}
