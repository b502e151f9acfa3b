/* Receive with the first datagram scattered where the caller wants it (endpoint <-> udp.c). */
#ifndef FE_IO_UDP_RX_H
#define FE_IO_UDP_RX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "feroce/io.h"

/* What the kernel said of a datagram received into the caller's iovecs. */
struct fe_udp_rx {
    uint32_t len; /* bytes of the datagram (of a GRO super-datagram: all its segments) */
    uint32_t seg; /* GRO segment size, 0 when not coalesced */
    bool trunc;   /* longer than the iovecs */
    uint32_t ip;  /* source */
    uint16_t port;
    uint8_t tos;
    uint64_t ts_ns;
};

/* With UDP GRO on and no segment kept (fe_udpsock_rx_pending 0): one recvmmsg of up to n
 * datagrams, the first scattered over iov[0..niov), the others into the socket's own buffers,
 * kept and handed out by the next fe_udpsock_recv_borrow / fe_udpsock_recv calls as usual.
 * Returns the datagrams received (0: none, the first in *first), or < 0 on error; FE_ENOTSUP
 * without GRO or with segments kept. */
int fe_udpsock_recv_scatter(struct fe_udpsock *u, const struct iovec *iov, int niov, int n,
                            struct fe_udp_rx *first);

#endif
