/* perftest's out-of-band connection exchange (ib_write_bw and friends without rdma_cm), so that
 * `feroce send --perftest` can stand in for an ib_write_bw client against an ib_write_bw server
 * on a real NIC or Soft-RoCE.
 *
 * The exchange runs over one TCP connection to the server's port 18515. Every step is symmetric:
 * the client writes its item, then reads the server's (the server reads first). In order:
 *   1. version: 16 bytes, a NUL-terminated decimal string ("6.06"); the server refuses < 5.70;
 *   2. page size, then cache line size: 4-byte big-endian each (the larger of the two is used);
 *   3. MTU: the ASCII digit of the enum ibv_mtu (1 = 256 ... 5 = 4096) and a NUL; the smaller
 *      MTU is used;
 *   4. keys: per QP, 108 bytes "LID:OUT_READS:QPN:PSN:RKEY:VADDR:" + 16 GID bytes as "%02x:" +
 *      "SRQN:" + NUL (hex fields of widths 4, 4, 6, 6, 8, 16, 2 x 16, 8); then the server moves
 *      its QP to RTR/RTS;
 *   5. the keys again (sync), and once more "after RTR" (sync);
 *   ... the client streams its WRITEs; the server only waits ...
 *   6. the keys (sync: the client has finished);
 *   7. a report: message size and iterations (8-byte big-endian integers), peak and average
 *      bandwidth (MB/s) and message rate (Mpps) (8-byte big-endian IEEE doubles);
 *   8. the keys (closing handshake), then "done" with its NUL (both sides send it); both close.
 *
 * The codec functions are pure; fe_pt_client_* drive a connected, blocking stream socket. */
#ifndef FE_IO_PERFTEST_H
#define FE_IO_PERFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FE_PT_PORT        18515
#define FE_PT_VERSION_LEN 16
#define FE_PT_KEY_LEN     108
#define FE_PT_REPORT_LEN  40
#define FE_PT_MTU_LEN     2
/* The protocol level feroce speaks: what perftest 4.5-0.17 (Debian 12) announces, "6.06"
 * (ib_write_bw -V); 5.70 is the oldest peer perftest itself accepts. */
#define FE_PT_VERSION     "6.06"
#define FE_PT_MIN_VERSION 5.70

struct fe_pt_dest {
    uint16_t lid; /* 0 on RoCE */
    uint16_t out_reads;
    uint32_t qpn; /* 24 bits */
    uint32_t psn; /* 24 bits */
    uint32_t rkey;
    uint64_t vaddr;
    uint8_t gid[16];
    uint32_t srqn;
};

struct fe_pt_report {
    uint64_t size_bytes;
    uint64_t iters;
    double bw_peak_MBps; /* perftest's MB = 2^20 bytes */
    double bw_avg_MBps;
    double msg_rate_Mpps;
};

/* Keys. encode: FE_EINVAL when a field does not fit its width. decode: FE_EPARSE unless the 108
 * bytes are exactly 23 hex fields, each ':'-terminated, then a NUL. */
int fe_pt_key_encode(uint8_t out[FE_PT_KEY_LEN], const struct fe_pt_dest *d);
int fe_pt_key_decode(const uint8_t in[FE_PT_KEY_LEN], struct fe_pt_dest *d);

/* Version: encode writes FE_PT_VERSION NUL-padded. decode: the number, or FE_EPARSE when the
 * 16 bytes are not a NUL-terminated decimal number. */
void fe_pt_version_encode(uint8_t out[FE_PT_VERSION_LEN]);
int fe_pt_version_decode(const uint8_t in[FE_PT_VERSION_LEN], double *version);

/* MTU in bytes (256..4096) <-> its enum digit and NUL. decode returns bytes, 0 when invalid. */
int fe_pt_mtu_encode(uint32_t mtu_bytes, uint8_t out[FE_PT_MTU_LEN]);
uint32_t fe_pt_mtu_decode(const uint8_t in[FE_PT_MTU_LEN]);

void fe_pt_report_encode(uint8_t out[FE_PT_REPORT_LEN], const struct fe_pt_report *r);
void fe_pt_report_decode(const uint8_t in[FE_PT_REPORT_LEN], struct fe_pt_report *r);

/* ---- the client's side of the conversation, on a connected blocking socket ---- */
struct fe_pt_session {
    int fd;
    double remote_version;
    uint32_t page_size, cache_line; /* agreed: the larger of both sides' */
    uint32_t mtu_bytes;             /* agreed: the smaller of both sides' */
    struct fe_pt_dest remote;       /* the peer's QP (from the first key exchange) */
    bool server;                    /* this side is the server: it reads first in every step */
    char err[160];                  /* why the last call failed */
};

/* Steps 1-4: versions, system data, MTU, keys. The caller then connects its QP to `remote` at
 * `mtu_bytes` and calls fe_pt_client_sync. Returns 0 or a negative fe_err (s->err says why). */
int fe_pt_client_start(struct fe_pt_session *s, int fd, uint32_t page_size, uint32_t cache_line,
                       uint32_t mtu_bytes, const struct fe_pt_dest *local);
/* Step 5: the two synchronising key exchanges; the server is then ready for WRITEs. */
int fe_pt_client_sync(struct fe_pt_session *s, const struct fe_pt_dest *local);
/* Steps 6-8 after the last WRITE completed: sync, reports, close handshake, "done". */
int fe_pt_client_finish(struct fe_pt_session *s, const struct fe_pt_dest *local,
                        const struct fe_pt_report *mine, struct fe_pt_report *theirs);

/* ---- the server's side (`feroce recv --perftest-server`): the same steps, reading first ----
 * fe_pt_server_start: steps 1-4; the caller then connects its QP to `remote` and calls
 * fe_pt_client_sync (the same two exchanges); then it waits for the WRITEs, which end with
 * the client's end-of-test key: fe_pt_client_finish (its report is the client's figures). */
int fe_pt_server_start(struct fe_pt_session *s, int fd, uint32_t page_size, uint32_t cache_line,
                       uint32_t mtu_bytes, const struct fe_pt_dest *local);

#endif
