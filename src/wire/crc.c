/* CRC-32 dispatch: for long buffers the fastest kernel on this CPU (a folding kernel from
 * crc_vpclmul.c or the library), chosen once per process; short buffers and the chosen library
 * go to ISA-L (PCLMULQDQ folding; AVX-512 kernel where available), else zlib. All use zlib's
 * calling convention, so callers never see the difference. */
#include "feroce/icrc.h"
#include "wire/crc_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef FE_HAVE_ISAL
#include <isa-l/crc.h>
#else
#include <zlib.h>
#endif

uint32_t fe_crc32_base(uint32_t crc, const void *buf, size_t len)
{
#ifdef FE_HAVE_ISAL
    return crc32_gzip_refl(crc, (const unsigned char *)buf, (uint64_t)len);
#else
    return (uint32_t)crc32_z(crc, (const Bytef *)buf, (z_size_t)len);
#endif
}

const char *fe_crc32_base_name(void)
{
#ifdef FE_HAVE_ISAL
    return "isa-l";
#else
    return "zlib";
#endif
}

const char *fe_crc32_kernel_name(enum fe_crc_kernel k)
{
    return k == FE_CRC_FOLD256   ? "vpclmulqdq-256"
           : k == FE_CRC_FOLD512 ? "vpclmulqdq-512"
                                 : fe_crc32_base_name();
}

uint32_t fe_crc32_with(enum fe_crc_kernel k, uint32_t crc, const void *buf, size_t len)
{
    fe_crc32_fold_fn f = fe_crc32_fold_of(k);
    if (f && len >= FE_CRC32_FOLD_MIN) return f(crc, (const uint8_t *)buf, len, NULL);
    return fe_crc32_base(crc, buf, len);
}

/* ---- the start-up choice ---- */

/* WARM_NS: how long every kernel runs before the timed rounds. The first wide vector
 * instructions after idle run slowly while the CPU powers its upper vector lanes (tens of
 * microseconds on some CPUs): timed then, the 512-bit kernel lost to the library on a CPU where
 * it is faster. */
/* PROBE_PASSES per timed sample: one 4 KB pass takes about 100 ns, and some clocks (VMs) tick
 * in 10 ns steps, too coarse to tell kernels apart by the 3 % below. */
enum {
    PROBE_BYTES = 4136, /* the bytes an ICRC covers in an IPv4 packet of 4 KB payload */
    PROBE_PASSES = 8,
    PROBE_ROUNDS = 9,
    WARM_NS = 50000,
    WARM_MAX_ROUNDS = 100
};

/* The library's way to a masked CRC: the masked head copied, then two calls. */
static uint32_t base_masked(uint32_t crc, const uint8_t *p, size_t n, const uint8_t *mask64)
{
    uint8_t c[FE_CRC32_MASK_BYTES];
    for (size_t i = 0; i < sizeof c; i++) c[i] = p[i] | mask64[i];
    return fe_crc32_base(fe_crc32_base(crc, c, sizeof c), p + sizeof c, n - sizeof c);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds for PROBE_PASSES passes of kernel k over the probe buffer (as a CRC, or as an ICRC
 * with its head masked); 0 when the clock fails. */
static uint64_t time_pass(enum fe_crc_kernel k, bool masked, const uint8_t *buf,
                          const uint8_t *mask64, uint32_t *sink)
{
    fe_crc32_fold_fn f = fe_crc32_fold_of(k);
    uint64_t t0 = mono_ns();
    for (int i = 0; i < PROBE_PASSES; i++) {
        if (f)
            *sink ^= f(*sink, buf, PROBE_BYTES, masked ? mask64 : NULL);
        else
            *sink ^= masked ? base_masked(*sink, buf, PROBE_BYTES, mask64)
                            : fe_crc32_base(*sink, buf, PROBE_BYTES);
    }
    uint64_t t1 = mono_ns();
    return t0 && t1 > t0 ? t1 - t0 : 0;
}

/* Without a usable measurement: ISA-L where its own 512-bit kernel runs, else the widest folding
 * kernel below that. */
static enum fe_crc_kernel fallback_choice(void)
{
#ifdef FE_HAVE_ISAL
    if (fe_crc32_kernel_usable(FE_CRC_FOLD512)) return FE_CRC_BASE;
#endif
    return fe_crc32_kernel_usable(FE_CRC_FOLD512)   ? FE_CRC_FOLD512
           : fe_crc32_kernel_usable(FE_CRC_FOLD256) ? FE_CRC_FOLD256
                                                    : FE_CRC_BASE;
}

static volatile uint32_t probe_sink;

/* The fastest of the usable kernels over PROBE_BYTES, the fastest of PROBE_ROUNDS interleaved
 * passes each, after WARM_NS of warm-up (about 100 microseconds in all). A folding kernel must beat
 * the library by 3 %: within the noise the library is kept. */
static enum fe_crc_kernel measure_choice(bool masked)
{
    static _Alignas(64) uint8_t buf[PROBE_BYTES];
    static const uint8_t mask64[FE_CRC32_MASK_BYTES] = {[1] = 0xff, [8] = 0xff, [26] = 0xff};
    uint64_t best[FE_CRC_KERNELS] = {0};
    uint32_t sink = 0;
    uint64_t warm0 = mono_ns(); /* warm-up: caches, pages, vector units */
    for (int r = 0; r < WARM_MAX_ROUNDS && mono_ns() - warm0 < WARM_NS; r++)
        for (int k = 0; k < FE_CRC_KERNELS; k++)
            if (fe_crc32_kernel_usable((enum fe_crc_kernel)k))
                time_pass((enum fe_crc_kernel)k, masked, buf, mask64, &sink);
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        for (int k = 0; k < FE_CRC_KERNELS; k++) {
            if (!fe_crc32_kernel_usable((enum fe_crc_kernel)k)) continue;
            uint64_t t = time_pass((enum fe_crc_kernel)k, masked, buf, mask64, &sink);
            if (!t) return fallback_choice();
            if (!best[k] || t < best[k]) best[k] = t;
        }
    }
    probe_sink = sink; /* keeps the passes */
    enum fe_crc_kernel pick = FE_CRC_BASE;
    uint64_t pick_ns = best[FE_CRC_BASE] * 97 / 100;
    for (int k = FE_CRC_BASE + 1; k < FE_CRC_KERNELS; k++) {
        if (best[k] && best[k] < pick_ns) {
            pick = (enum fe_crc_kernel)k;
            pick_ns = best[k];
        }
    }
    return pick;
}

/* FEROCE_CRC=name forces a kernel (reproducible benchmarks); -1 when not set. A name that is no
 * kernel, or one this CPU cannot run, ends the process with a message: silently measuring
 * another kernel would pass its figures off as the forced one's. */
static int forced_choice(void)
{
    const char *s = getenv("FEROCE_CRC");
    if (!s) return -1;
    for (int k = 0; k < FE_CRC_KERNELS; k++) {
        if (strcmp(s, fe_crc32_kernel_name((enum fe_crc_kernel)k))) continue;
        if (fe_crc32_kernel_usable((enum fe_crc_kernel)k)) return k;
        fprintf(stderr,
                "feroce: FEROCE_CRC=%s: this CPU lacks the instructions of that CRC kernel "
                "(%s)\n",
                s,
                k == FE_CRC_FOLD512 ? "AVX-512 F/BW/VL and VPCLMULQDQ"
                                    : "AVX2, VPCLMULQDQ, PCLMULQDQ and SSE4.1");
        exit(EXIT_FAILURE);
    }
    fprintf(stderr, "feroce: FEROCE_CRC=%s: no such CRC kernel; the kernels:", s);
    for (int k = 0; k < FE_CRC_KERNELS; k++)
        fprintf(stderr, " %s%s", fe_crc32_kernel_name((enum fe_crc_kernel)k),
                fe_crc32_kernel_usable((enum fe_crc_kernel)k) ? "" : " (not on this CPU)");
    fputc('\n', stderr);
    exit(EXIT_FAILURE);
}

/* -1 until chosen; relaxed: threads choosing at once may differ in speed, never in results. */
static atomic_int chosen[2] = {-1, -1};

static enum fe_crc_kernel choose(bool masked)
{
    int k = atomic_load_explicit(&chosen[masked], memory_order_relaxed);
    if (k < 0) {
        k = forced_choice();
        if (k < 0) k = (int)measure_choice(masked);
        atomic_store_explicit(&chosen[masked], k, memory_order_relaxed);
    }
    return (enum fe_crc_kernel)k;
}

enum fe_crc_kernel fe_crc32_kernel(void)
{
    return choose(false);
}

enum fe_crc_kernel fe_crc32_icrc_kernel(void)
{
    return choose(true);
}

uint32_t fe_crc32(uint32_t crc, const void *buf, size_t len)
{
    if (len >= FE_CRC32_FOLD_MIN) {
        fe_crc32_fold_fn f = fe_crc32_fold_of(choose(false));
        if (f) return f(crc, (const uint8_t *)buf, len, NULL);
    }
    return fe_crc32_base(crc, buf, len);
}

const char *fe_crc32_backend(void)
{
#ifdef FE_HAVE_ISAL
    static const char *const names[FE_CRC_KERNELS] = {"isa-l", "vpclmulqdq-256 (>= 256 B) + isa-l",
                                                      "vpclmulqdq-512 (>= 256 B) + isa-l"};
#else
    static const char *const names[FE_CRC_KERNELS] = {"zlib", "vpclmulqdq-256 (>= 256 B) + zlib",
                                                      "vpclmulqdq-512 (>= 256 B) + zlib"};
#endif
    return names[fe_crc32_kernel()];
}
