/* pcap writer and reader on top of libpcap (nanosecond timestamps both ways). */
#include "feroce/pcap.h"
#include "feroce/err.h"

#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif

#define FE_PCAP_SNAPLEN 262144

struct fe_pcap_writer {
    pcap_t *p;
    pcap_dumper_t *d;
    int failed;
};

struct fe_pcap_reader {
    pcap_t *p;
    int dlt;
    size_t skip;                     /* cooked header length */
    uint64_t nrec;                   /* records read so far */
    char err[PCAP_ERRBUF_SIZE + 64]; /* why the last fe_pcap_read failed */
};

static void set_err(char *err, size_t cap, const char *what, const char *path, const char *why)
{
    if (err && cap) snprintf(err, cap, "%s %s: %s", what, path, why);
}

int fe_pcap_writer_open(struct fe_pcap_writer **out, const char *path, enum fe_framing framing,
                        char *err, size_t errcap)
{
    *out = NULL;
    int dlt;
    switch (framing) {
    case FE_FRAME_ETH:
        dlt = DLT_EN10MB;
        break;
    case FE_FRAME_IP:
        dlt = DLT_RAW;
        break;
    case FE_FRAME_BTH:
        set_err(err, errcap, "cannot write", path, "BTH-only framing has no pcap link type");
        return FE_ENOTSUP;
    default:
        set_err(err, errcap, "cannot write", path, "bad framing");
        return FE_EINVAL;
    }
    struct fe_pcap_writer *w = calloc(1, sizeof *w);
    if (!w) return FE_ENOMEM;
    w->p = pcap_open_dead_with_tstamp_precision(dlt, FE_PCAP_SNAPLEN, PCAP_TSTAMP_PRECISION_NANO);
    if (!w->p) {
        free(w);
        set_err(err, errcap, "cannot write", path, "pcap_open_dead failed");
        return FE_ENOMEM;
    }
    w->d = pcap_dump_open(w->p, path);
    if (!w->d) {
        set_err(err, errcap, "cannot write", path, pcap_geterr(w->p));
        pcap_close(w->p);
        free(w);
        return FE_EIO;
    }
    *out = w;
    return 0;
}

int fe_pcap_write(struct fe_pcap_writer *w, uint64_t ts_ns, const uint8_t *frame, size_t len)
{
    if (len > FE_PCAP_SNAPLEN) return FE_EINVAL;
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(ts_ns / 1000000000u);
    h.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000u); /* nanoseconds: nano-precision handle */
    h.caplen = h.len = (bpf_u_int32)len;
    pcap_dump((u_char *)w->d, &h, frame);
    FILE *f = pcap_dump_file(w->d);
    if (f && ferror(f)) w->failed = 1;
    return w->failed ? FE_EIO : 0;
}

int fe_pcap_writer_close(struct fe_pcap_writer *w)
{
    if (!w) return 0;
    int rc = w->failed;
    if (pcap_dump_flush(w->d) != 0) rc = 1;
    FILE *f = pcap_dump_file(w->d);
    if (f && ferror(f)) rc = 1;
    pcap_dump_close(w->d);
    pcap_close(w->p);
    free(w);
    return rc ? FE_EIO : 0;
}

int fe_pcap_reader_open(struct fe_pcap_reader **out, const char *path, char *err, size_t errcap)
{
    *out = NULL;
    char ebuf[PCAP_ERRBUF_SIZE] = "";
    pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, ebuf);
    if (!p) {
        set_err(err, errcap, "cannot read", path, ebuf);
        return FE_EIO;
    }
    int dlt = pcap_datalink(p);
    size_t skip = 0;
    switch (dlt) {
    case DLT_EN10MB:
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
        break;
    case DLT_LINUX_SLL:
        skip = 16;
        break;
    case DLT_LINUX_SLL2:
        skip = 20;
        break;
    default: {
        char why[96];
        const char *name = pcap_datalink_val_to_name(dlt);
        snprintf(why, sizeof why, "link type %s (%d) is not Ethernet, raw IP or Linux cooked",
                 name ? name : "?", dlt);
        set_err(err, errcap, "cannot read", path, why);
        pcap_close(p);
        return FE_ENOTSUP;
    }
    }
    struct fe_pcap_reader *r = calloc(1, sizeof *r);
    if (!r) {
        pcap_close(p);
        return FE_ENOMEM;
    }
    r->p = p;
    r->dlt = dlt;
    r->skip = skip;
    *out = r;
    return 0;
}

enum fe_framing fe_pcap_reader_framing(const struct fe_pcap_reader *r)
{
    return r->dlt == DLT_EN10MB ? FE_FRAME_ETH : FE_FRAME_IP;
}

int fe_pcap_reader_linktype(const struct fe_pcap_reader *r)
{
    return r->dlt;
}

/* A record that claims more captured bytes than were on the wire is corrupt: libpcap checks
 * caplen against the link type's maximum only, and a consumer that trusts len >= caplen (the
 * "cut by the snap length" test) would be misled. */
static int check_record(struct fe_pcap_reader *r, const struct pcap_pkthdr *h)
{
    if (h->caplen <= h->len) return 0;
    snprintf(r->err, sizeof r->err,
             "record %" PRIu64 ": %u bytes captured but only %u on the wire (corrupt file)",
             r->nrec, h->caplen, h->len);
    return FE_EIO;
}

int fe_pcap_read(struct fe_pcap_reader *r, struct fe_pcap_rec *rec)
{
    struct pcap_pkthdr *h;
    const u_char *data;
    int rc = pcap_next_ex(r->p, &h, &data);
    if (rc == PCAP_ERROR_BREAK) return 0;
    r->nrec++;
    if (rc != 1) {
        snprintf(r->err, sizeof r->err, "record %" PRIu64 ": %s", r->nrec, pcap_geterr(r->p));
        return FE_EIO;
    }
    if (check_record(r, h)) return FE_EIO;
    rec->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec;
    size_t skip = r->skip < h->caplen ? r->skip : h->caplen;
    rec->data = data + skip;
    rec->len = h->caplen - skip;
    rec->orig_len = h->len > skip ? h->len - skip : 0;
    return 1;
}

const char *fe_pcap_reader_error(const struct fe_pcap_reader *r)
{
    return r->err;
}

void fe_pcap_reader_close(struct fe_pcap_reader *r)
{
    if (!r) return;
    pcap_close(r->p);
    free(r);
}
