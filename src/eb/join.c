/* Round-robin: a builder that joins after the front-ends started. Its side: the front-ends'
 * proposals (JOIN), the decision of the first event of its ring (E0) and which front-ends still
 * need to hear it (START). See include/feroce/eb.h. */
#include <stdlib.h>

#include "feroce/eb.h"

enum { J_PROPOSED = 1, J_ACKED = 2 };

enum join_state {
    J_ON_TIME = 0, /* every proposal so far is 0: the ring starts at the first event */
    J_WAITING,     /* a front-end started without us: collecting the others' proposals */
    J_DECIDED,     /* E0 is chosen; the front-ends are told */
};

struct fe_eb_rr_join {
    uint32_t n_sources, n_builders, n_proposed;
    uint16_t builder;
    uint64_t wait_ns, since_ns, max_next, first;
    bool any_on_time; /* a source proposed 0: it gives every event from the first */
    enum join_state state;
    uint8_t *src; /* J_* per source */
};

uint64_t fe_eb_rr_first_at(uint64_t event, uint16_t builder, uint32_t n_builders)
{
    uint64_t m = n_builders ? n_builders : 1, r = event % m, b = builder % m;
    uint64_t step = r <= b ? b - r : m - r + b;
    if (event <= UINT64_MAX - step) return event + step;
    /* past the last event of this builder: its last one (the numbers end there) */
    return UINT64_MAX - (UINT64_MAX % m + m - b) % m;
}

/* The margin: 250 ms of triggers, or this many events without a rate. */
#define JOIN_MARGIN_PER_S  4
#define JOIN_MARGIN_EVENTS 16384ull

uint64_t fe_eb_rr_join_offer(uint64_t next_event, uint64_t trigger_hz)
{
    uint64_t margin = trigger_hz ? trigger_hz / JOIN_MARGIN_PER_S : JOIN_MARGIN_EVENTS;
    if (!margin) margin = 1;
    return next_event <= UINT64_MAX - margin ? next_event + margin : UINT64_MAX;
}

int fe_eb_rr_join_create(struct fe_eb_rr_join **out, uint32_t n_sources, uint16_t builder,
                         uint32_t n_builders, uint64_t wait_ns)
{
    *out = NULL;
    if (!n_sources || n_sources > FE_EB_MAX_SOURCES || !n_builders || builder >= n_builders)
        return FE_EINVAL;
    struct fe_eb_rr_join *j = calloc(1, sizeof *j);
    if (!j || !(j->src = calloc(n_sources, 1))) {
        free(j);
        return FE_ENOMEM;
    }
    j->n_sources = n_sources;
    j->n_builders = n_builders;
    j->builder = builder;
    j->wait_ns = wait_ns;
    *out = j;
    return 0;
}

void fe_eb_rr_join_destroy(struct fe_eb_rr_join *j)
{
    if (!j) return;
    free(j->src);
    free(j);
}

static void decide(struct fe_eb_rr_join *j, uint64_t from_event)
{
    j->first = fe_eb_rr_first_at(from_event, j->builder, j->n_builders);
    j->state = J_DECIDED;
}

bool fe_eb_rr_join_poll(struct fe_eb_rr_join *j, uint64_t now_ns)
{
    if (j->state == J_WAITING &&
        (j->n_proposed == j->n_sources || now_ns - j->since_ns >= j->wait_ns))
        decide(j, j->max_next);
    return j->state == J_DECIDED;
}

int fe_eb_rr_join_propose(struct fe_eb_rr_join *j, uint64_t now_ns, uint32_t source,
                          uint64_t next_event, bool started)
{
    if (source >= j->n_sources) return FE_EINVAL;
    if (!(j->src[source] & J_PROPOSED)) {
        j->src[source] |= J_PROPOSED;
        j->n_proposed++;
    }
    if (next_event > j->max_next) j->max_next = next_event;
    /* 0 is the proposal of a front-end that took our ring before it started: it sends from our
     * first event on, and its fragments may be on the way already (held in the CQ while we
     * wait). Moving the ring past them would leave them refused, their receive buffers taken,
     * and that front-end waiting on RNR NAKs for buffers that never come: the ring stays. */
    if (!next_event) j->any_on_time = true;
    if (j->state == J_ON_TIME && next_event) {
        j->state = J_WAITING;
        j->since_ns = now_ns;
    }
    if (j->state == J_WAITING && (started || j->any_on_time)) {
        /* fragments taken, or coming from the first event: the ring stays where it began,
         * and the late front-ends' events between are incomplete */
        decide(j, 0);
        return 0;
    }
    (void)fe_eb_rr_join_poll(j, now_ns);
    return 0;
}

bool fe_eb_rr_join_waiting(const struct fe_eb_rr_join *j)
{
    return j->state == J_WAITING;
}

bool fe_eb_rr_join_first(const struct fe_eb_rr_join *j, uint64_t *first_event)
{
    if (j->state != J_DECIDED) return false;
    *first_event = j->first;
    return true;
}

void fe_eb_rr_join_acked(struct fe_eb_rr_join *j, uint32_t source)
{
    if (source < j->n_sources) j->src[source] |= J_ACKED;
}

bool fe_eb_rr_join_needs_start(const struct fe_eb_rr_join *j, uint32_t source)
{
    return j->state == J_DECIDED && source < j->n_sources && !(j->src[source] & J_ACKED);
}

uint64_t fe_eb_rr_join_deadline(const struct fe_eb_rr_join *j)
{
    return j->state == J_WAITING ? j->since_ns + j->wait_ns : UINT64_MAX;
}
