/* AF_XDP frame transport for the raw Ethernet backend (raw.c): whole frames in and out of one
 * interface queue through a UMEM and its four rings. Frame handling (ARP, ICMP, which frames are
 * ours) stays in raw.c, shared with AF_PACKET. */
#ifndef FEROCE_IO_XDP_H
#define FEROCE_IO_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/io.h"

struct fe_xdp;

/* Whether this build has AF_XDP (libxdp found at configure time). */
bool fe_xdp_built(void);

/* Binds an AF_XDP socket to queue 0 of ifname and attaches libxdp's redirect program, native
 * mode first, generic (SKB) mode when the driver refuses. NULL when it cannot be set up; why
 * then says why (privilege, driver, kernel). */
struct fe_xdp *fe_xdp_open(const char *ifname, int ifindex, char *why, size_t why_len);
void fe_xdp_close(struct fe_xdp *x);
int fe_xdp_fd(const struct fe_xdp *x);
/* "native zero-copy", "native copy" or "generic copy". */
const char *fe_xdp_mode(const struct fe_xdp *x);

/* Queues frames d[0..n) for transmission (copied into the UMEM) and kicks the kernel; returns
 * how many were taken (fewer when the TX ring or the UMEM is full: st->tx_again). A frame that
 * cannot be sent at all is taken and counted in st->tx_errors. */
int fe_xdp_send(struct fe_xdp *x, const struct fe_dgram *d, int n, struct fe_raw_stats *st);
/* Copies up to n received frames into d[i].buf (d[i].len, d[i].trunc set); 0 when none wait. */
int fe_xdp_recv(struct fe_xdp *x, struct fe_dgram *d, int n);
/* Frames the kernel dropped on the way to this socket (ring full, no fill buffer, too long). */
uint64_t fe_xdp_kernel_drops(struct fe_xdp *x);

#endif
