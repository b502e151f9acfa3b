/* RoCEv2 ICRC: masked headers in a small scratch copy, then the payload streamed in place. */
#include "feroce/icrc.h"
#include "feroce/err.h"
#include "feroce/wire.h"
#include "wire/crc_impl.h"

#include <string.h>

/* Masks, in a copy of IP + UDP + BTH, every field the ICRC treats as variant. Returns the length
 * of IP + UDP + BTH, or 0 when they do not fit before the ICRC. Any IPv4 header length. */
static size_t mask_ip_headers(uint8_t *c, const uint8_t *ip, size_t len)
{
    size_t iplen;
    if (len < 1) return 0;
    switch (ip[0] >> 4) {
    case 4:
        iplen = (size_t)(ip[0] & 0x0f) * 4;
        break;
    case 6:
        iplen = FE_IPV6_HDR_LEN;
        break;
    default:
        return 0;
    }
    if (iplen < FE_IPV4_HDR_LEN) return 0;
    size_t hdr = iplen + FE_UDP_HDR_LEN + FE_BTH_LEN;
    if (len < hdr + FE_ICRC_LEN) return 0;
    memcpy(c, ip, hdr);
    if ((ip[0] >> 4) == 4) {
        c[1] = 0xff;          /* TOS: DSCP + ECN */
        c[8] = 0xff;          /* TTL */
        c[10] = c[11] = 0xff; /* header checksum */
    } else {
        c[0] |= 0x0f;              /* traffic class, high nibble */
        c[1] = c[2] = c[3] = 0xff; /* traffic class low nibble + flow label */
        c[7] = 0xff;               /* hop limit */
    }
    c[iplen + 6] = c[iplen + 7] = 0xff;   /* UDP checksum */
    c[iplen + FE_UDP_HDR_LEN + 4] = 0xff; /* BTH byte 4: FECN, BECN, reserved */
    return hdr;
}

/* Below this many covered bytes one CRC call over a full masked copy beats two calls (short
 * CRC calls cost more per byte than a small copy). The folding kernels start here too. */
#define SMALL_COPY_BYTES FE_CRC32_FOLD_MIN

/* The variant-field masks of the common layouts (IPv4 without options, IPv6), OR-ed onto the
 * packet 16 bytes at a time. Why not byte stores into the copy: the CRC then loads 16 bytes that
 * overlap several fresh narrow stores, store-to-load forwarding fails, and each stall costs
 * about as much as the rest of a small packet's ICRC. */
static const uint8_t mask_v4[SMALL_COPY_BYTES] = {
    [1] = 0xff,  [8] = 0xff,  [10] = 0xff, [11] = 0xff, /* TOS, TTL, header checksum */
    [26] = 0xff, [27] = 0xff,                           /* UDP checksum */
    [32] = 0xff,                                        /* BTH byte 4 */
};
static const uint8_t mask_v6[SMALL_COPY_BYTES] = {
    [0] = 0x0f,  [1] = 0xff,  [2] = 0xff, [3] = 0xff, /* traffic class, flow label */
    [7] = 0xff,                                       /* hop limit */
    [46] = 0xff, [47] = 0xff,                         /* UDP checksum */
    [52] = 0xff,                                      /* BTH byte 4 */
};

typedef uint8_t fe_v16 __attribute__((vector_size(16)));

/* dst = src | mask over n >= 16 bytes, in 16-byte loads and stores (the last one overlapping). */
static void masked_copy(uint8_t *dst, const uint8_t *src, const uint8_t *mask, size_t n)
{
    size_t i = 0;
    fe_v16 a, m;
    for (; i + 16 <= n; i += 16) {
        memcpy(&a, src + i, 16);
        memcpy(&m, mask + i, 16);
        a |= m;
        memcpy(dst + i, &a, 16);
    }
    if (i < n) {
        i = n - 16;
        memcpy(&a, src + i, 16);
        memcpy(&m, mask + i, 16);
        a |= m;
        memcpy(dst + i, &a, 16);
    }
}

int fe_icrc_ip(const uint8_t *ip, size_t len, uint32_t *icrc)
{
    const uint8_t *mask = NULL;
    size_t hdr = 0, head = 0; /* IP + UDP + BTH, and that rounded up to 16 */
    if (len >= 1 && ip[0] == 0x45) {
        mask = mask_v4, hdr = FE_IPV4_HDR_LEN + FE_UDP_HDR_LEN + FE_BTH_LEN, head = 48;
    } else if (len >= 1 && ip[0] >> 4 == 6) {
        mask = mask_v6, hdr = FE_IPV6_HDR_LEN + FE_UDP_HDR_LEN + FE_BTH_LEN, head = 64;
    }
    if (mask) {
        if (len < hdr + FE_ICRC_LEN) return FE_EINVAL;
        size_t covered = len - FE_ICRC_LEN;
        uint8_t c[SMALL_COPY_BYTES];
        fe_crc32_fold_fn fold;
        if (covered <= SMALL_COPY_BYTES) {
            masked_copy(c, ip, mask, covered);
            *icrc = fe_crc32(FE_ICRC_SEED, c, covered);
        } else if ((fold = fe_crc32_fold_of(fe_crc32_icrc_kernel()))) {
            *icrc = fold(FE_ICRC_SEED, ip, covered, mask); /* masked as it loads: one pass */
        } else {
            masked_copy(c, ip, mask, head);
            *icrc = fe_crc32(fe_crc32(FE_ICRC_SEED, c, head), ip + head, covered - head);
        }
        return 0;
    }
    /* IPv4 with options (rare): byte-wise masking of the headers only. */
    uint8_t c[60 + FE_UDP_HDR_LEN + FE_BTH_LEN]; /* largest IPv4 header (IHL 15) */
    hdr = mask_ip_headers(c, ip, len);
    if (!hdr) return FE_EINVAL;
    uint32_t crc = fe_crc32(FE_ICRC_SEED, c, hdr);
    *icrc = fe_crc32(crc, ip + hdr, len - hdr - FE_ICRC_LEN);
    return 0;
}

bool fe_icrc_ip_begin(struct fe_icrc_split *s, const uint8_t *ip, size_t len)
{
    const uint8_t *mask;
    size_t hdr;
    if (len >= 1 && ip[0] == 0x45)
        mask = mask_v4, hdr = FE_IPV4_HDR_LEN + FE_UDP_HDR_LEN + FE_BTH_LEN;
    else if (len >= 1 && ip[0] >> 4 == 6)
        mask = mask_v6, hdr = FE_IPV6_HDR_LEN + FE_UDP_HDR_LEN + FE_BTH_LEN;
    else
        return false;
    if (len < hdr + FE_ICRC_LEN || len - FE_ICRC_LEN <= SMALL_COPY_BYTES) return false;
    const struct fe_crc32_split_fns *f = fe_crc32_split_of(fe_crc32_icrc_kernel());
    if (!f) return false;
    f->begin(&s->crc, FE_ICRC_SEED, ip, len - FE_ICRC_LEN, mask);
    s->end = f->end;
    return true;
}

int fe_icrc_ip_ref(const uint8_t *ip, size_t len, uint8_t *scratch, uint32_t *icrc)
{
    uint8_t c[60 + FE_UDP_HDR_LEN + FE_BTH_LEN];
    size_t hdr = mask_ip_headers(c, ip, len);
    if (!hdr) return FE_EINVAL;
    static const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    /* The textbook form: eight 0xFF bytes then the whole masked packet, one CRC from zero. */
    memcpy(scratch, ip, len - FE_ICRC_LEN);
    memcpy(scratch, c, hdr);
    *icrc = fe_crc32(fe_crc32(0, ff, sizeof ff), scratch, len - FE_ICRC_LEN);
    return 0;
}

/* BTH byte 4 (FECN, BECN, reserved) is the only variant field from the BTH on. */
static const uint8_t mask_bth[FE_CRC32_MASK_BYTES] = {[4] = 0xff};

int fe_icrc_bth(const uint8_t *bth, size_t len, uint32_t *icrc)
{
    if (len < FE_BTH_LEN + FE_ICRC_LEN) return FE_EINVAL;
    size_t covered = len - FE_ICRC_LEN;
    fe_crc32_fold_fn fold;
    if (covered >= FE_CRC32_FOLD_MIN && (fold = fe_crc32_fold_of(fe_crc32_icrc_kernel()))) {
        *icrc = fold(FE_ICRC_SEED, bth, covered, mask_bth); /* masked as it loads: one pass */
        return 0;
    }
    uint8_t c[FE_BTH_LEN];
    memcpy(c, bth, FE_BTH_LEN);
    c[4] = 0xff;
    uint32_t crc = fe_crc32(FE_ICRC_SEED, c, FE_BTH_LEN);
    *icrc = fe_crc32(crc, bth + FE_BTH_LEN, len - FE_BTH_LEN - FE_ICRC_LEN);
    return 0;
}

bool fe_icrc_bth_begin(struct fe_icrc_split *s, const uint8_t *bth, size_t len)
{
    if (len < FE_BTH_LEN + FE_ICRC_LEN || len - FE_ICRC_LEN < FE_CRC32_FOLD_MIN) return false;
    const struct fe_crc32_split_fns *f = fe_crc32_split_of(fe_crc32_icrc_kernel());
    if (!f) return false;
    f->begin(&s->crc, FE_ICRC_SEED, bth, len - FE_ICRC_LEN, mask_bth);
    s->end = f->end;
    return true;
}

int fe_icrc_verify_ip(const uint8_t *ip, size_t len)
{
    uint32_t v;
    int rc = fe_icrc_ip(ip, len, &v);
    if (rc) return rc;
    return v == fe_icrc_load(ip + len - FE_ICRC_LEN);
}

int fe_icrc_verify_bth(const uint8_t *bth, size_t len)
{
    uint32_t v;
    int rc = fe_icrc_bth(bth, len, &v);
    if (rc) return rc;
    return v == fe_icrc_load(bth + len - FE_ICRC_LEN);
}

int fe_icrc_fill_ip(uint8_t *ip, size_t len)
{
    uint32_t v;
    int rc = fe_icrc_ip(ip, len, &v);
    if (rc) return rc;
    fe_icrc_store(ip + len - FE_ICRC_LEN, v);
    return 0;
}

int fe_icrc_fill_bth(uint8_t *bth, size_t len)
{
    uint32_t v;
    int rc = fe_icrc_bth(bth, len, &v);
    if (rc) return rc;
    fe_icrc_store(bth + len - FE_ICRC_LEN, v);
    return 0;
}
