/* `feroce send --perftest SERVER`: stand in for an ib_write_bw client (perftest's TCP exchange,
 * src/io/perftest.h) and stream the WRITEs through feroce's own transport and raw Ethernet. */
#ifndef FE_TOOLS_SEND_PERFTEST_H
#define FE_TOOLS_SEND_PERFTEST_H

#include <stdint.h>

#include "feroce/frontend.h"
#include "io/perftest.h"

struct fe_send_perftest {
    uint32_t server_ip;
    uint16_t server_port;
    int fd;
    struct fe_pt_dest local;
    struct fe_pt_session s;
};

/* Parses "ADDR[:PORT]" (port 18515 by default). */
int fe_send_perftest_parse(struct fe_send_perftest *p, const char *arg);
/* Connects and runs the exchange up to the server's "ready" (while a raw endpoint on our
 * address answers ARP: the server resolves our MAC when its QP goes to RTR), then points the
 * front-end configuration at the server's QP: one QP, manual peer, plain WRITEs of --msg-size,
 * all at the server's buffer (slots 1), at the agreed MTU. Prints why on failure. */
int fe_send_perftest_connect(struct fe_send_perftest *p, struct fe_frontend_config *fc);
/* After the stream: the end-of-test sync, the report (from the flow's counters) and the closing
 * handshake. Returns 0 when the server took it all. */
int fe_send_perftest_finish(struct fe_send_perftest *p, const struct fe_frontend_flow *fl,
                            uint64_t end_ns, bool quiet);

#endif
