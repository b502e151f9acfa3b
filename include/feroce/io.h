/* Real network I/O (src/io/): the only layer besides the tools that calls the OS.
 *
 * - UDP sockets carrying RoCEv2 packets from the BTH onward (FE_FRAME_BTH) as UDP payload, with
 *   sendmmsg/recvmmsg batching and per-datagram TOS (DSCP + ECN) in both directions, so CE marks
 *   made by an emulated switch reach the receiver's notification point.
 * - AF_PACKET raw sockets carrying whole Ethernet frames (FE_FRAME_ETH), with the ARP and ICMP
 *   echo answers a front-end board gives for its own address.
 * - A small event loop: wait for readable sockets or the next deadline, optionally busy-poll and
 *   pin to a CPU.
 * Everything is IPv4 here; addresses and ports are in host order. */
#ifndef FEROCE_IO_H
#define FEROCE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Monotonic clock, nanoseconds. */
uint64_t fe_io_now_ns(void);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC, ns: converts kernel receive timestamps (SO_TIMESTAMPNS
 * is in real time) to fe_io_now_ns time. */
int64_t fe_io_realtime_offset_ns(void);
/* A random 32-bit value from the kernel (getrandom(2)): keys and first PSNs a host on the
 * network cannot guess. Falls back to /dev/urandom; aborts when neither answers, since a
 * predictable key would silently weaken every QP. */
uint32_t fe_io_random_u32(void);
/* Pins the calling thread to one CPU; FE_EIO (errno kept) when refused. */
int fe_io_pin_cpu(int cpu);
/* "a.b.c.d" or "a.b.c.d:port" (port kept when absent); FE_EINVAL when malformed. */
int fe_io_parse_addr(const char *s, uint32_t *ip, uint16_t *port);
/* "a.b.c.d:port" into buf (>= 22 bytes); returns buf. */
const char *fe_io_addr_str(uint32_t ip, uint16_t port, char *buf, size_t cap);

/* Why an open failed, beside its fe_err (which says only what kind of failure): the system
 * call that failed and its errno. fe_udpsock_open, fe_raw_open, fe_loop_create, fe_ep_create and
 * the objects built on them (fe_frontend_create, fe_daq_create, fe_eswitch_create) forget the
 * previous one when they start and record it when a system call fails. One per thread, like
 * errno: an open that fails has no object to keep it in. */
struct fe_io_fail {
    char step[40]; /* "socket", "bind", "IP_RECVTOS", "interface lookup", "raw socket",
                    * "promiscuous mode", "pinning to CPU 3", ...; "" when no system call
                    * failed (a bad configuration, memory) */
    int os_errno;  /* that call's errno; 0 with step "" */
};
const struct fe_io_fail *fe_io_last_fail(void);
/* This thread's last failure for a person: "address already in use", "cannot assign requested
 * address (not an address of this host)", "raw socket: operation not permitted (needs root or
 * CAP_NET_RAW)", "no such interface"; fe_strerror(err) when no system call failed. Valid until
 * the thread's next open. */
const char *fe_io_fail_str(int err);

/* One datagram or frame of a batch. */
struct fe_dgram {
    uint8_t *buf; /* bytes to send (tx) / space to receive into (rx) */
    uint32_t len; /* bytes to send / bytes received */
    uint32_t cap; /* rx: size of buf */
    uint32_t ip;  /* UDP: destination (tx) / source (rx) */
    uint16_t port;
    uint8_t tos;    /* DSCP << 2 | ECN: to send with (tx) / as received (rx) */
    bool trunc;     /* rx: it did not fit in cap (the caller drops it) */
    uint64_t ts_ns; /* rx, with timestamps on: when the kernel received it (fe_io_now_ns clock);
                     * 0 when unknown */
    /* tx, UDP only: with mid set the datagram is buf[0, head_len), mid[0, mid_len), then
     * buf[head_len, len): a payload sent from where it lies, without a copy. Receives clear
     * mid. */
    const uint8_t *mid;
    uint32_t mid_len, head_len;
};

#define FE_IO_MAX_BATCH 64

/* ---- UDP ---- */
struct fe_udpsock_config {
    uint32_t bind_ip;                    /* 0 = any */
    uint16_t bind_port;                  /* 0 = ephemeral */
    uint64_t rcvbuf_bytes, sndbuf_bytes; /* 0 = kernel default; forced past rmem_max when root */
    bool reuse_port;
    bool timestamps; /* report each datagram's kernel arrival time (fe_dgram.ts_ns) */
    bool no_gso;     /* send every datagram alone (no UDP GSO runs) */
    /* Accept UDP GRO super-datagrams and split them here. Segments that do not fit in one
     * fe_udpsock_recv call are kept in the socket object, where poll/epoll cannot see them: a
     * caller that turns this on must ask fe_udpsock_rx_pending before it sleeps. */
    bool gro;
};
void fe_udpsock_config_default(struct fe_udpsock_config *cfg);

struct fe_udpsock_stats {
    uint64_t tx_dgrams, tx_bytes, tx_calls, tx_again, tx_errors;
    uint64_t rx_dgrams, rx_bytes, rx_calls, rx_trunc;
    uint64_t tx_gso_sends;  /* messages that carried a UDP GSO run of 2+ datagrams */
    uint64_t rx_gro_dgrams; /* received super-datagrams of 2+ segments (UDP GRO) */
};

struct fe_udpsock;
/* Opens, sizes and binds a non-blocking socket that reports each datagram's TOS. */
struct fe_udpsock *fe_udpsock_open(const struct fe_udpsock_config *cfg, int *err);
void fe_udpsock_close(struct fe_udpsock *u);
int fe_udpsock_fd(const struct fe_udpsock *u);
/* The bound address (after an ephemeral bind). */
void fe_udpsock_local(const struct fe_udpsock *u, uint32_t *ip, uint16_t *port);
/* Buffer sizes the kernel actually gave (it doubles the requested value). */
void fe_udpsock_bufsizes(const struct fe_udpsock *u, uint64_t *rcv_bytes, uint64_t *snd_bytes);
/* Sends up to n datagrams in one system call (each with its TOS). Runs of consecutive datagrams
 * to the same address with the same TOS and length (the last may be shorter) go as one UDP GSO
 * send unless no_gso is set or the kernel refused GSO once. Returns how many were
 * consumed, 0..n: fewer than n when the socket is full (retry the rest later); a datagram the
 * kernel refuses (e.g. larger than the path MTU) is consumed and counted in tx_errors. */
int fe_udpsock_send(struct fe_udpsock *u, const struct fe_dgram *d, int n);
/* Receives up to n datagrams without blocking; returns how many (0 when none) or FE_EIO. With
 * gro, coalesced datagrams are split back by their segment size; the segments that did not fit
 * in n are kept and returned first by the next call. */
int fe_udpsock_recv(struct fe_udpsock *u, struct fe_dgram *d, int n);
/* The same, but GRO segments are not copied: d[i].buf is pointed into the socket's own buffer
 * (d[i].cap is ignored for them), valid until the next receive call on this socket. Saves a copy
 * per packet; may return fewer than n while more waits (call again). */
int fe_udpsock_recv_borrow(struct fe_udpsock *u, struct fe_dgram *d, int n);
/* Segments of GRO super-datagrams already received and kept for the next fe_udpsock_recv (the
 * kernel's socket is empty of them, so poll does not report them). */
int fe_udpsock_rx_pending(const struct fe_udpsock *u);
const struct fe_udpsock_stats *fe_udpsock_stats(const struct fe_udpsock *u);

/* ---- raw Ethernet (AF_PACKET or AF_XDP) ---- */
/* The kernel path that carries the frames. AF_XDP takes every frame of the interface's queue 0
 * away from the kernel's stack (libxdp's redirect program), so auto picks it only where that
 * loses nothing: one receive queue, no kernel IPv4 address, no timestamps, not promiscuous. */
enum fe_raw_kind { FE_RAW_AUTO, FE_RAW_PACKET, FE_RAW_XDP };
int fe_raw_kind_parse(const char *s, enum fe_raw_kind *kind); /* auto|packet|xdp */

struct fe_raw_config {
    char ifname[32];
    uint8_t mac[6]; /* this endpoint's MAC; all zero = the interface's */
    uint32_t ip;    /* this endpoint's IPv4 address: answers ARP and ICMP echo for it (0 = none) */
    bool promisc;   /* receive every frame (a switch port), not only ours and broadcasts */
    bool answer_arp_icmp; /* as the firmware does */
    bool timestamps;      /* report each frame's kernel arrival time (fe_dgram.ts_ns) */
    uint64_t rcvbuf_bytes, sndbuf_bytes;
    enum fe_raw_kind kind; /* xdp: AF_XDP, or AF_PACKET with a message when it cannot be set up */
};
void fe_raw_config_default(struct fe_raw_config *cfg);

struct fe_raw_stats {
    uint64_t tx_frames, tx_bytes, tx_again, tx_errors;
    uint64_t rx_frames, rx_bytes, rx_trunc;
    uint64_t arp_replies, icmp_replies, arp_requests_sent;
    uint64_t rx_not_ours;     /* unicast to another MAC (when not promiscuous) */
    uint64_t rx_kernel_drops; /* lost before we could read them (socket queue or rings full) */
};

struct fe_raw;
/* FE_EACCESS without CAP_NET_RAW, FE_ENOENT for an unknown interface. */
struct fe_raw *fe_raw_open(const struct fe_raw_config *cfg, int *err);
void fe_raw_close(struct fe_raw *r);
int fe_raw_fd(const struct fe_raw *r);
void fe_raw_mac(const struct fe_raw *r, uint8_t mac[6]);
/* "af_packet", or "af_xdp" with its mode ("af_xdp native copy", "af_xdp generic copy", ...). */
const char *fe_raw_kind_name(const struct fe_raw *r);
/* Sends whole frames (dgram.ip/port/tos unused); returns how many were consumed, as
 * fe_udpsock_send. */
int fe_raw_send(struct fe_raw *r, const struct fe_dgram *d, int n);
/* Receives frames; ARP requests and ICMP echo requests for cfg.ip are answered here and not
 * returned. Also learns IPv4 -> MAC from ARP traffic (see fe_raw_resolve). */
int fe_raw_recv(struct fe_raw *r, struct fe_dgram *d, int n);
/* The MAC of ip if known (1), else 0 after sending an ARP request (rate limited by now_ns). */
int fe_raw_resolve(struct fe_raw *r, uint32_t ip, uint8_t mac[6], uint64_t now_ns);
/* The counters; rx_kernel_drops is read from the kernel at this call. */
const struct fe_raw_stats *fe_raw_stats(const struct fe_raw *r);

/* ---- event loop ---- */
struct fe_loop_config {
    bool busy_poll;       /* never sleep: poll sockets and the clock (one core per process) */
    int cpu;              /* pin to this CPU, -1 = no pinning */
    uint64_t max_wait_ns; /* longest single wait (so callers re-check flags): 100 ms */
};
void fe_loop_config_default(struct fe_loop_config *cfg);

struct fe_loop;
struct fe_loop *fe_loop_create(const struct fe_loop_config *cfg, int *err);
void fe_loop_destroy(struct fe_loop *l);
/* Registers fd for readability; `tag` is returned by fe_loop_wait. */
int fe_loop_add(struct fe_loop *l, int fd, int tag);
/* Also wake up when fd is writable (e.g. a full send buffer drains); on = false to stop. */
int fe_loop_want_write(struct fe_loop *l, int fd, int tag, bool on);
/* Waits until a registered fd is ready or deadline_ns (absolute, fe_io_now_ns) passes. Fills
 * tags[] with the ready fds' tags (up to max) and returns how many (0 on deadline). */
int fe_loop_wait(struct fe_loop *l, uint64_t deadline_ns, int *tags, int max);
/* For step functions taking a readiness mask (bit i: fd i readable): read every fd. */
#define FE_READY_ALL (~0u)

#ifdef __cplusplus
}
#endif
#endif
