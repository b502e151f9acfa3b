/* `feroce recv --perftest-server`: stand in for an ib_write_bw server, so that the standard
 * client on a real RNIC (or Soft-RoCE) writes into feroce's receiver: perftest's TCP exchange
 * (src/io/perftest.h, server side) and the WRITEs through feroce's responder on raw Ethernet. */
#ifndef FE_TOOLS_RECV_PERFTEST_H
#define FE_TOOLS_RECV_PERFTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/daq.h"
#include "io/perftest.h"

struct fe_recv_perftest {
    bool enabled;
    uint32_t listen_ip; /* 0: the receiver's own address */
    uint16_t port;      /* FE_PT_PORT */
};

/* Waits for one client (at most timeout_ns), exchanges keys and MTU, receives its WRITEs into
 * the first ring of `dc` (plain WRITEs, nothing to verify: perftest's data is not a pattern),
 * and ends with the client's report. Prints the figures; returns 0 when the whole test ran. */
int fe_recv_perftest_run(const struct fe_recv_perftest *p, struct fe_daq_config *dc,
                         uint64_t timeout_ns, bool quiet);

#endif
