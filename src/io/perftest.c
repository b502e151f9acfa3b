/* perftest's out-of-band exchange (see perftest.h): codec and the client's conversation. */
#include "io/perftest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "feroce/err.h"

/* ---- codec ---- */

int fe_pt_key_encode(uint8_t out[FE_PT_KEY_LEN], const struct fe_pt_dest *d)
{
    if (d->qpn > 0xFFFFFF || d->psn > 0xFFFFFF) return FE_EINVAL;
    char buf[FE_PT_KEY_LEN + 16];
    int n = snprintf(buf, sizeof buf, "%04x:%04x:%06x:%06x:%08x:%016llx:", d->lid, d->out_reads,
                     d->qpn, d->psn, d->rkey, (unsigned long long)d->vaddr);
    for (int i = 0; i < 16; i++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%02x:", d->gid[i]);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "%08x:", d->srqn);
    if (n != FE_PT_KEY_LEN - 1) return FE_EINVAL;
    memcpy(out, buf, FE_PT_KEY_LEN); /* with the NUL */
    return 0;
}

/* One hex field of 1..maxdigits digits ending in ':'; advances *p. */
static bool hex_field(const uint8_t **p, const uint8_t *end, unsigned maxdigits, uint64_t *v)
{
    unsigned n = 0;
    *v = 0;
    while (*p < end && **p != ':') {
        uint8_t c = **p;
        unsigned d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return false;
        if (++n > maxdigits) return false;
        *v = *v << 4 | d;
        (*p)++;
    }
    if (n == 0 || *p == end) return false;
    (*p)++; /* the ':' */
    return true;
}

int fe_pt_key_decode(const uint8_t in[FE_PT_KEY_LEN], struct fe_pt_dest *d)
{
    const uint8_t *p = in, *end = in + FE_PT_KEY_LEN;
    uint64_t v[23];
    static const unsigned width[6] = {4, 4, 6, 6, 8, 16};
    for (int i = 0; i < 23; i++)
        if (!hex_field(&p, end, i < 6 ? width[i] : i < 22 ? 2 : 8, &v[i])) return FE_EPARSE;
    if (p == end || *p != 0) return FE_EPARSE;
    memset(d, 0, sizeof *d);
    d->lid = (uint16_t)v[0];
    d->out_reads = (uint16_t)v[1];
    d->qpn = (uint32_t)v[2];
    d->psn = (uint32_t)v[3];
    d->rkey = (uint32_t)v[4];
    d->vaddr = v[5];
    for (int i = 0; i < 16; i++) d->gid[i] = (uint8_t)v[6 + i];
    d->srqn = (uint32_t)v[22];
    return 0;
}

void fe_pt_version_encode(uint8_t out[FE_PT_VERSION_LEN])
{
    memset(out, 0, FE_PT_VERSION_LEN);
    memcpy(out, FE_PT_VERSION, sizeof FE_PT_VERSION - 1);
}

int fe_pt_version_decode(const uint8_t in[FE_PT_VERSION_LEN], double *version)
{
    /* "MAJOR[.MINOR]" in decimal, as perftest's atof reads it (without locale surprises). */
    size_t i = 0;
    double v = 0, scale = 0.1;
    bool digits = false;
    for (; i < FE_PT_VERSION_LEN && in[i] >= '0' && in[i] <= '9'; i++, digits = true)
        v = v * 10 + (in[i] - '0');
    if (i < FE_PT_VERSION_LEN && in[i] == '.')
        for (i++; i < FE_PT_VERSION_LEN && in[i] >= '0' && in[i] <= '9'; i++, scale /= 10)
            v += (in[i] - '0') * scale;
    if (!digits || i == FE_PT_VERSION_LEN || in[i] != 0) return FE_EPARSE;
    *version = v;
    return 0;
}

int fe_pt_mtu_encode(uint32_t mtu_bytes, uint8_t out[FE_PT_MTU_LEN])
{
    for (uint8_t e = 1; e <= 5; e++)
        if (mtu_bytes == 128u << e) {
            out[0] = (uint8_t)('0' + e);
            out[1] = 0;
            return 0;
        }
    return FE_EINVAL;
}

uint32_t fe_pt_mtu_decode(const uint8_t in[FE_PT_MTU_LEN])
{
    if (in[0] < '1' || in[0] > '5' || in[1] != 0) return 0;
    return 128u << (in[0] - '0');
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

static uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static double bits_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

void fe_pt_report_encode(uint8_t out[FE_PT_REPORT_LEN], const struct fe_pt_report *r)
{
    put_be64(out, r->size_bytes);
    put_be64(out + 8, r->iters);
    put_be64(out + 16, double_bits(r->bw_peak_MBps));
    put_be64(out + 24, double_bits(r->bw_avg_MBps));
    put_be64(out + 32, double_bits(r->msg_rate_Mpps));
}

void fe_pt_report_decode(const uint8_t in[FE_PT_REPORT_LEN], struct fe_pt_report *r)
{
    r->size_bytes = get_be64(in);
    r->iters = get_be64(in + 8);
    r->bw_peak_MBps = bits_double(get_be64(in + 16));
    r->bw_avg_MBps = bits_double(get_be64(in + 24));
    r->msg_rate_Mpps = bits_double(get_be64(in + 32));
}

/* ---- conversation ---- */

__attribute__((format(printf, 3, 4))) static int fail(struct fe_pt_session *s, int err,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return err;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len) {
        /* MSG_NOSIGNAL: a server that hangs up is an error to report, not a SIGPIPE */
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static const char *peer_name(const struct fe_pt_session *s)
{
    return s->server ? "client" : "server";
}

static int xchg_send(struct fe_pt_session *s, const void *mine, size_t len, const char *what)
{
    if (write_all(s->fd, mine, len))
        return fail(s, FE_EIO, "sending the %s: %s", what, errno ? strerror(errno) : "closed");
    return 0;
}

static int xchg_recv(struct fe_pt_session *s, void *theirs, size_t len, const char *what)
{
    if (read_all(s->fd, theirs, len))
        return fail(s, FE_EIO, "reading the %s's %s: %s", peer_name(s), what,
                    errno ? strerror(errno) : "connection closed");
    return 0;
}

/* One symmetric step: the client sends its item first and the server reads first, so that
 * neither waits for the other. */
static int xchg(struct fe_pt_session *s, const void *mine, void *theirs, size_t len,
                const char *what)
{
    if (s->server) {
        int rc = xchg_recv(s, theirs, len, what);
        return rc ? rc : xchg_send(s, mine, len, what);
    }
    int rc = xchg_send(s, mine, len, what);
    return rc ? rc : xchg_recv(s, theirs, len, what);
}

static int xchg_keys(struct fe_pt_session *s, const struct fe_pt_dest *local,
                     struct fe_pt_dest *remote, const char *what)
{
    uint8_t mine[FE_PT_KEY_LEN], theirs[FE_PT_KEY_LEN];
    if (fe_pt_key_encode(mine, local))
        return fail(s, FE_EINVAL, "local QP parameters out of range");
    int rc = xchg(s, mine, theirs, sizeof mine, what);
    if (rc) return rc;
    struct fe_pt_dest tmp;
    if (fe_pt_key_decode(theirs, remote ? remote : &tmp))
        return fail(s, FE_EPARSE, "the %s's %s is malformed: '%.*s'", peer_name(s), what,
                    FE_PT_KEY_LEN - 1, (const char *)theirs);
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static int pt_start(struct fe_pt_session *s, int fd, bool server, uint32_t page_size,
                    uint32_t cache_line, uint32_t mtu_bytes, const struct fe_pt_dest *local)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->server = server;
    uint8_t v[FE_PT_VERSION_LEN], rv[FE_PT_VERSION_LEN];
    fe_pt_version_encode(v);
    int rc = xchg(s, v, rv, sizeof v, "version");
    if (rc) return rc;
    if (fe_pt_version_decode(rv, &s->remote_version))
        return fail(s, FE_EPARSE, "the %s's version is not a number", peer_name(s));
    if (s->remote_version < FE_PT_MIN_VERSION - 1e-9)
        return fail(s, FE_ENOTSUP, "%s version %.2f is older than 5.70", peer_name(s),
                    s->remote_version);

    uint8_t m[4], r[4];
    put_be32(m, page_size);
    if ((rc = xchg(s, m, r, 4, "page size"))) return rc;
    s->page_size = be32(r) > page_size ? be32(r) : page_size;
    put_be32(m, cache_line);
    if ((rc = xchg(s, m, r, 4, "cache line size"))) return rc;
    s->cache_line = be32(r) > cache_line ? be32(r) : cache_line;

    uint8_t mm[FE_PT_MTU_LEN], rm[FE_PT_MTU_LEN];
    if (fe_pt_mtu_encode(mtu_bytes, mm))
        return fail(s, FE_EINVAL, "MTU %u is not 256..4096", mtu_bytes);
    if ((rc = xchg(s, mm, rm, sizeof mm, "MTU"))) return rc;
    uint32_t rmtu = fe_pt_mtu_decode(rm);
    /* perftest ignores an invalid remote MTU and keeps its own; so do we */
    s->mtu_bytes = (rmtu && rmtu < mtu_bytes) ? rmtu : mtu_bytes;

    return xchg_keys(s, local, &s->remote, "QP key");
}

int fe_pt_client_start(struct fe_pt_session *s, int fd, uint32_t page_size, uint32_t cache_line,
                       uint32_t mtu_bytes, const struct fe_pt_dest *local)
{
    return pt_start(s, fd, false, page_size, cache_line, mtu_bytes, local);
}

int fe_pt_server_start(struct fe_pt_session *s, int fd, uint32_t page_size, uint32_t cache_line,
                       uint32_t mtu_bytes, const struct fe_pt_dest *local)
{
    return pt_start(s, fd, true, page_size, cache_line, mtu_bytes, local);
}

int fe_pt_client_sync(struct fe_pt_session *s, const struct fe_pt_dest *local)
{
    int rc = xchg_keys(s, local, NULL, "sync key");
    return rc ? rc : xchg_keys(s, local, NULL, "post-RTR sync key");
}

int fe_pt_client_finish(struct fe_pt_session *s, const struct fe_pt_dest *local,
                        const struct fe_pt_report *mine, struct fe_pt_report *theirs)
{
    int rc = xchg_keys(s, local, NULL, "end-of-test key");
    if (rc) return rc;
    /* the report goes field by field, each a symmetric step */
    uint8_t m[FE_PT_REPORT_LEN], r[FE_PT_REPORT_LEN];
    fe_pt_report_encode(m, mine);
    static const char *const what[5] = {"report size", "report iterations", "report peak",
                                        "report average", "report message rate"};
    for (int i = 0; i < 5; i++)
        if ((rc = xchg(s, m + 8 * i, r + 8 * i, 8, what[i]))) return rc;
    fe_pt_report_decode(r, theirs);
    if ((rc = xchg_keys(s, local, NULL, "closing key"))) return rc;
    /* Both say "done"; reading the other's lets both ends close without a reset. */
    char done[sizeof "done"];
    if ((rc = xchg(s, "done", done, sizeof done, "\"done\""))) return rc;
    if (memcmp(done, "done", sizeof done))
        return fail(s, FE_EPARSE, "the %s did not end with \"done\"", peer_name(s));
    return 0;
}
