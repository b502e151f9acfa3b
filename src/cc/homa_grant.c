/* Homa's receiver (Montazeri et al., SIGCOMM 2018): the grant scheduler of one receiver. After
 * each packet it grants one round trip of bytes beyond what arrived to the FE_HOMA_OVERCOMMIT
 * incoming messages with the fewest bytes left (SRPT with an overcommitment of 2); grants only
 * grow. Sans-I/O: the caller carries the grants to the senders. */
#include <stdlib.h>

#include "cc/cc_internal.h"
#include "feroce/err.h"

#define NOPOS UINT32_MAX

uint64_t fe_homa_rtt_bytes(const struct fe_cc_algo *algo, const struct fe_cc_params *p,
                           uint64_t line_rate_bps, uint64_t base_rtt_ns)
{
    int k = p ? fe_cc_param_index(algo, "rtt_bytes") : -1;
    uint64_t rb = k >= 0 ? (uint64_t)p->v[k] : 0;
    if (!rb) rb = (uint64_t)((double)line_rate_bps * (double)base_rtt_ns / 8e9);
    return rb ? rb : 1;
}

int fe_homa_grants_add(struct fe_homa_grants *g, struct fe_homa_msg *m)
{
    if (g->n == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 8;
        struct fe_homa_msg **v = realloc(g->in, cap * sizeof(*v));
        if (!v) return FE_ENOMEM;
        g->in = v;
        g->cap = cap;
    }
    m->index = g->n;
    g->in[g->n++] = m;
    return 0;
}

void fe_homa_grants_remove(struct fe_homa_grants *g, struct fe_homa_msg *m)
{
    if (m->index == NOPOS) return;
    struct fe_homa_msg *last = g->in[--g->n];
    g->in[m->index] = last;
    last->index = m->index;
    m->index = NOPOS;
}

/* Files m (l bytes left) among the best so far, kept sorted by bytes left. */
static void rank(struct fe_homa_msg **best, uint64_t *left, struct fe_homa_msg *m, uint64_t l)
{
    for (int k = 0; k < FE_HOMA_OVERCOMMIT; k++) {
        if (l < left[k]) {
            for (int j = FE_HOMA_OVERCOMMIT - 1; j > k; j--) {
                left[j] = left[j - 1];
                best[j] = best[j - 1];
            }
            left[k] = l;
            best[k] = m;
            return;
        }
    }
}

int fe_homa_grants_schedule(struct fe_homa_grants *g, struct fe_homa_msg **out)
{
    struct fe_homa_msg *best[FE_HOMA_OVERCOMMIT] = {NULL};
    uint64_t left[FE_HOMA_OVERCOMMIT];
    for (int k = 0; k < FE_HOMA_OVERCOMMIT; k++) left[k] = UINT64_MAX;
    for (uint32_t i = 0; i < g->n; i++) {
        struct fe_homa_msg *m = g->in[i];
        uint64_t l = m->total_bytes > m->rx_bytes ? m->total_bytes - m->rx_bytes : 0;
        if (l) rank(best, left, m, l);
    }
    int n = 0;
    for (int k = 0; k < FE_HOMA_OVERCOMMIT && best[k]; k++) {
        struct fe_homa_msg *m = best[k];
        uint64_t grant = m->rx_bytes + m->rtt_bytes;
        if (grant > m->total_bytes) grant = m->total_bytes;
        if (grant > m->granted) {
            m->granted = grant;
            out[n++] = m;
        }
    }
    return n;
}

void fe_homa_grants_free(struct fe_homa_grants *g)
{
    free(g->in);
    g->in = NULL;
    g->n = g->cap = 0;
}
