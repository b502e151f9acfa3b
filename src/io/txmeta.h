/* The host's tx-meta datagrams, resent on a schedule (sans-I/O: the caller gives the time and
 * sends through its own fe_sc_host). Shared by the DAQ receiver (daq.c) and verbs-recv. */
#ifndef FE_IO_TXMETA_H
#define FE_IO_TXMETA_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/sidechannel.h"

/* The longest wait between two tx-meta starts of one QP. */
#define FE_TXMETA_START_WAIT_MAX_NS 1000000000ull

/* No front-end acknowledges a tx-meta (the firmware neither), so the host resends one until
 * it sees its effect, or max_sends went out and the wait after the last is over. */
struct fe_txmeta_resend {
    uint64_t next_ns; /* the next send (or the end of the last wait); 0 when none is scheduled */
    uint64_t wait_ns; /* before next_ns; doubles after every send up to max_wait_ns */
    uint64_t max_wait_ns;
    unsigned sends; /* so far, the first included */
    unsigned max_sends;
    bool gave_up; /* max_sends went out without the effect: no more until reset */
};

enum fe_txmeta_step {
    FE_TXMETA_WAIT,    /* nothing to do now */
    FE_TXMETA_SENT,    /* the tx-meta was queued again on the host */
    FE_TXMETA_GIVE_UP, /* every send went out and nothing came of them */
};

/* Forgets every send (a new connection). */
void fe_txmeta_resend_reset(struct fe_txmeta_resend *r);

/* The start of h's stream, watched: while `awaited` (no data of the stream yet, and the
 * caller still wants it) and h is RTS with a start configured, the start is queued again
 * first_wait_ns after the first one went out, then backing off to
 * FE_TXMETA_START_WAIT_MAX_NS, max_sends in all; once `awaited` turns false no start is ever
 * resent (a start after the transfer ended would start it again on the firmware). */
enum fe_txmeta_step fe_txmeta_start_watch(struct fe_txmeta_resend *r, struct fe_sc_host *h,
                                          bool awaited, uint64_t first_wait_ns, unsigned max_sends,
                                          uint64_t now_ns);

/* Sends of a tx-meta stop, and the wait between two. */
#define FE_TXMETA_STOP_SENDS 3

/* The stop of h's stream, watched once it was queued (fe_sc_host_send_tx_meta): while h stays
 * RTS it is queued again every wait_ns, FE_TXMETA_STOP_SENDS in all. Nothing says a stop
 * arrived (the stream may end by itself), so the count is fixed; a stop more is harmless: it
 * starts nothing on the firmware and feroce's front-end is stopped already. */
enum fe_txmeta_step fe_txmeta_stop_watch(struct fe_txmeta_resend *r, struct fe_sc_host *h,
                                         uint64_t wait_ns, uint64_t now_ns);

/* When the watch has something to do next: UINT64_MAX when nothing. */
uint64_t fe_txmeta_resend_deadline(const struct fe_txmeta_resend *r);

#endif
