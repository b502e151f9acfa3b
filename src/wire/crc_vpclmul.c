/* CRC-32 (reflected 0xEDB88320) by carry-less multiplication folding on 256- and 512-bit
 * registers.
 *
 * Why beside ISA-L: on AVX2 CPUs with VPCLMULQDQ (AMD Zen 3, many cloud VMs) ISA-L falls back to
 * 128-bit PCLMULQDQ; and for the ICRC these kernels OR the variant-field mask into the first
 * bytes as they load them, so a packet is one pass instead of a masked copy of its headers and
 * two library calls. Which kernel runs is measured per CPU (crc.c): one that loses to the
 * library is not used.
 *
 * How (standard folding, as in Intel's "Fast CRC computation using PCLMULQDQ"): the message is a
 * polynomial over GF(2); a 128-bit lane A = L*x^64 + H (L = its first 8 bytes) moved forward by
 * D bits is congruent to L*(x^(D+64) mod P) + H*(x^D mod P). In the bit-reflected domain the
 * carry-less product carries one extra factor x, so the constants below are x^(D+63) mod P and
 * x^(D-1) mod P, bit-reflected into the top 32 bits of a 64-bit word. Several accumulators fold
 * 256 bytes per round; they are folded onto each other, then onto one 128-bit lane 16 bytes at a
 * time. The last partial block (r < 16 bytes) joins the lane by a byte shift: the lane's first r
 * bytes, preceded by zeros, fold 16 bytes onto its other 16 - r bytes followed by the r tail
 * bytes (the 512-bit kernel has no partial block: its blocks end where the message does, see
 * fe_crc32_fold512). Moving the lane forward by 4 bytes (x^32), then its first 8 bytes onto the
 * rest (x^64), leaves 64 bits that a Barrett reduction takes to the 32-bit register. Constants
 * generated with: r = 1; repeat n times { r <<= 1; if (r >> 32) r ^= 0x104C11DB7 }; k =
 * bitreverse32(r) << 32; Barrett: P and floor(x^64 / P), both bit-reflected, 33 bits. */
#include "wire/crc_impl.h"

#include "feroce/icrc.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* {x^(8d+63) mod P, x^(8d-1) mod P} for a fold over d bytes. */
static const uint64_t k4[2] = {0xccaa009e00000000ull, 0x0000000100000000ull};
static const uint64_t k16[2] = {0x65673b4600000000ull, 0x9ba54c6f00000000ull};
static const uint64_t k32[2] = {0x9570d49500000000ull, 0x01b5fd1d00000000ull};
static const uint64_t k48[2] = {0x69ccfc0d00000000ull, 0x2a28386200000000ull};
static const uint64_t k64[2] = {0x653d982200000000ull, 0xcad38e8f00000000ull};
static const uint64_t k96[2] = {0x759fc69d00000000ull, 0x101a233100000000ull};
static const uint64_t k128[2] = {0x7d657a1000000000ull, 0x7406fa9500000000ull};
static const uint64_t k160[2] = {0x199560db00000000ull, 0x1d5dce4400000000ull};
static const uint64_t k192[2] = {0x67f7947600000000ull, 0xc56d949600000000ull};
static const uint64_t k224[2] = {0x8f739cb400000000ull, 0xd63a56a600000000ull};
static const uint64_t k256[2] = {0x7cc8e1e700000000ull, 0x03f9f86300000000ull};
static const uint64_t k320[2] = {0xc2d4d8b300000000ull, 0xf8d22c1a00000000ull};
static const uint64_t k384[2] = {0x0c1bd37000000000ull, 0xb52b503900000000ull};
static const uint64_t k_x64 = 0xb8bc676500000000ull; /* x^63 mod P: 8 bytes onto the next 8 */
static const uint64_t barrett_p = 0x1db710641ull, barrett_mu = 0x1f7011641ull;

/* pshufb indices: from [r] the lane moved up by 16 - r bytes (zeros below), from [16 + r] moved
 * down by r bytes (zeros above; the high bit also selects the tail bytes in the blend). */
static const uint8_t shift_tab[48] = {
    0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
};

#define FE_TARGET128 __attribute__((target("pclmul,sse4.1,ssse3")))
#define FE_TARGET256 __attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1,ssse3")))
#define FE_TARGET512                                                                               \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx2,vpclmulqdq,pclmul,sse4.1,ssse3")))

FE_TARGET128 static inline __m128i k128x(const uint64_t k[2])
{
    return _mm_set_epi64x((long long)k[1], (long long)k[0]);
}

/* Moves lane a forward by the distance k was made for. */
FE_TARGET128 static inline __m128i fold128(__m128i a, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

/* The 32-bit register (zlib convention: inverted) of a 128-bit lane of pending message. */
FE_TARGET128 static inline uint32_t reduce128(__m128i x)
{
    __m128i t = fold128(x, k128x(k4)); /* * x^32 */
    t = _mm_xor_si128(_mm_clmulepi64_si128(t, _mm_cvtsi64_si128((long long)k_x64), 0x00), t);
    __m128i v = _mm_srli_si128(t, 8); /* 64 bits, lowest-degree last */
    __m128i pmu = _mm_set_epi64x((long long)barrett_mu, (long long)barrett_p);
    __m128i lo32 = _mm_set_epi64x(0, 0xffffffffll);
    __m128i q = _mm_clmulepi64_si128(_mm_and_si128(v, lo32), pmu, 0x10);
    q = _mm_clmulepi64_si128(_mm_and_si128(q, lo32), pmu, 0x00);
    return ~(uint32_t)_mm_extract_epi32(_mm_xor_si128(q, v), 1);
}

/* Joins the last r < 16 bytes (ending at end, which has 16 readable bytes before it) to the
 * lane x, and reduces. */
FE_TARGET128 static inline uint32_t finish128(__m128i x, const uint8_t *end, size_t r)
{
    if (r) {
        __m128i up = _mm_loadu_si128((const void *)(shift_tab + r));
        __m128i down = _mm_loadu_si128((const void *)(shift_tab + 16 + r));
        __m128i last = _mm_loadu_si128((const void *)(end - 16));
        __m128i head = _mm_shuffle_epi8(x, up);
        __m128i rest = _mm_blendv_epi8(_mm_shuffle_epi8(x, down), last, down);
        x = _mm_xor_si128(fold128(head, k128x(k16)), rest);
    }
    return reduce128(x);
}

/* Folds whole 16-byte blocks from p + off onto x, then finishes with the tail. */
FE_TARGET128 static inline uint32_t tail128(__m128i x, const uint8_t *p, size_t off, size_t n)
{
    __m128i k = k128x(k16);
    for (; off + 16 <= n; off += 16)
        x = _mm_xor_si128(fold128(x, k), _mm_loadu_si128((const void *)(p + off)));
    return finish128(x, p + n, n - off);
}

/* ---- 256-bit registers: eight accumulators ---- */

FE_TARGET256 static inline __m256i k256x(const uint64_t k[2])
{
    return _mm256_set_epi64x((long long)k[1], (long long)k[0], (long long)k[1], (long long)k[0]);
}

FE_TARGET256 static inline __m256i fold256(__m256i a, __m256i k)
{
    return _mm256_xor_si256(_mm256_clmulepi64_epi128(a, k, 0x00),
                            _mm256_clmulepi64_epi128(a, k, 0x11));
}

FE_TARGET256 static inline __m256i ld256(const uint8_t *p)
{
    return _mm256_loadu_si256((const void *)p);
}

/* 256-byte rounds from p + off while they fit in n bytes and start before `stop`; returns the
 * offset reached. */
FE_TARGET256 static inline size_t rounds256(__m256i x[8], const uint8_t *p, size_t off, size_t n,
                                            size_t stop)
{
    __m256i k = k256x(k256);
    for (; off + 256 <= n && off < stop; off += 256)
        for (int i = 0; i < 8; i++)
            x[i] = _mm256_xor_si256(fold256(x[i], k), ld256(p + off + 32 * i));
    return off;
}

/* The first 256 bytes (mask and initial register in), then the 256-byte rounds up to `stop`. */
FE_TARGET256 static inline void begin256(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p,
                                         size_t n, const uint8_t *mask64, size_t stop)
{
    /* The initial register (~crc in zlib's convention) is XORed into the first 4 bytes. */
    __m256i x[8];
    x[0] = ld256(p), x[1] = ld256(p + 32);
    if (mask64) {
        x[0] = _mm256_or_si256(x[0], ld256(mask64));
        x[1] = _mm256_or_si256(x[1], ld256(mask64 + 32));
    }
    x[0] = _mm256_xor_si256(x[0], _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, (int)~crc));
    for (int i = 2; i < 8; i++) x[i] = ld256(p + 32 * i);
    size_t off = rounds256(x, p, 256, n, stop);
    for (int i = 0; i < 8; i++) _mm256_store_si256((void *)(s->acc + 32 * i), x[i]);
    s->p = p, s->off = off, s->n = n;
}

/* The remaining rounds, the accumulators folded onto one lane, the tail and the reduction. */
FE_TARGET256 static inline uint32_t end256(const struct fe_crc32_split *s)
{
    const uint8_t *p = s->p;
    size_t off = s->off, n = s->n;
    __m256i x[8];
    for (int i = 0; i < 8; i++) x[i] = _mm256_load_si256((const void *)(s->acc + 32 * i));
    off = rounds256(x, p, off, n, n);
    /* x_i sits (7 - i) * 32 bytes before x7: fold them all onto it. */
    __m256i a =
        _mm256_xor_si256(_mm256_xor_si256(fold256(x[0], k256x(k224)), fold256(x[1], k256x(k192))),
                         _mm256_xor_si256(fold256(x[2], k256x(k160)), fold256(x[3], k256x(k128))));
    __m256i b =
        _mm256_xor_si256(_mm256_xor_si256(fold256(x[4], k256x(k96)), fold256(x[5], k256x(k64))),
                         _mm256_xor_si256(fold256(x[6], k256x(k32)), x[7]));
    a = _mm256_xor_si256(a, b);
    __m256i k = k256x(k32);
    for (; off + 32 <= n; off += 32) a = _mm256_xor_si256(fold256(a, k), ld256(p + off));
    __m128i v = _mm_xor_si128(fold128(_mm256_castsi256_si128(a), k128x(k16)),
                              _mm256_extracti128_si256(a, 1));
    return tail128(v, p, off, n);
}

FE_TARGET256 uint32_t fe_crc32_fold256(uint32_t crc, const uint8_t *p, size_t n,
                                       const uint8_t *mask64)
{
    if (n < FE_CRC32_FOLD_MIN) return fe_crc32_base(crc, p, n);
    struct fe_crc32_split s;
    begin256(&s, crc, p, n, mask64, n);
    return end256(&s);
}

FE_TARGET256 void fe_crc32_fold256_begin(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p,
                                         size_t n, const uint8_t *mask64)
{
    begin256(s, crc, p, n, mask64, FE_CRC32_SPLIT_BYTES);
}

FE_TARGET256 uint32_t fe_crc32_fold256_end(const struct fe_crc32_split *s)
{
    return end256(s);
}

/* ---- 512-bit registers: four accumulators ---- */

FE_TARGET512 static inline __m512i k512x(const uint64_t k[2])
{
    return _mm512_broadcast_i32x4(k128x(k));
}

FE_TARGET512 static inline __m512i fold512(__m512i a, __m512i k)
{
    return _mm512_xor_si512(_mm512_clmulepi64_epi128(a, k, 0x00),
                            _mm512_clmulepi64_epi128(a, k, 0x11));
}

/* fold512(a, k) ^ b in one three-way XOR */
FE_TARGET512 static inline __m512i fold512_xor(__m512i a, __m512i k, __m512i b)
{
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
                                     _mm512_clmulepi64_epi128(a, k, 0x11), b, 0x96);
}

FE_TARGET512 static inline __m512i ld512(const uint8_t *p)
{
    return _mm512_loadu_si512((const void *)p);
}

/* The four lanes of x folded onto its last one. */
FE_TARGET512 static inline __m128i lanes_to_one(__m512i x)
{
    const __m512i k =
        _mm512_set_epi64(0, 0, (long long)k16[1], (long long)k16[0], (long long)k32[1],
                         (long long)k32[0], (long long)k48[1], (long long)k48[0]);
    __m512i f = _mm512_mask_blend_epi64(0xc0, fold512(x, k), x); /* the last lane stays */
    __m256i h = _mm256_xor_si256(_mm512_castsi512_si256(f), _mm512_extracti64x4_epi64(f, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* The four accumulators and the r < 4 blocks left after them (at b) folded onto the last block
 * in one step each, independent of one another: x_i sits (3 - i + r) * 64 bytes before the end,
 * block t (r - 1 - t) * 64 (folds one after another would chain up to three more latencies). */
FE_TARGET512 static inline __m512i join512(__m512i x0, __m512i x1, __m512i x2, __m512i x3,
                                           const uint8_t *b, size_t r)
{
    static const uint64_t *const k64s[7] = {NULL, k64, k128, k192, k256, k320, k384};
    __m512i last = r ? ld512(b + (r - 1) * 64) : x3;
    __m512i acc =
        _mm512_ternarylogic_epi64(fold512(x0, k512x(k64s[3 + r])), fold512(x1, k512x(k64s[2 + r])),
                                  fold512_xor(x2, k512x(k64s[1 + r]), last), 0x96);
    if (r) acc = fold512_xor(x3, k512x(k64s[r]), acc);
    for (size_t t = 0; t + 1 < r; t++)
        acc = fold512_xor(ld512(b + t * 64), k512x(k64s[r - 1 - t]), acc);
    return acc;
}

/* x0, x1: the first two blocks of a message that starts z bytes into x0 (zeros before it): the
 * mask (over the message's first 64 bytes) OR-ed in, then the initial register XOR-ed into the
 * message's first 4 bytes, all in registers (bytes written to the stack and loaded back as a
 * vector would stall store forwarding). */
FE_TARGET512 static inline void head512(__m512i *x0, __m512i *x1, size_t z, __mmask64 k,
                                        uint32_t crc, const uint8_t *mask64)
{
    if (mask64) {
        *x0 =
            _mm512_or_si512(*x0, _mm512_maskz_loadu_epi8(k, (const void *)((uintptr_t)mask64 - z)));
        *x1 = _mm512_or_si512(*x1, _mm512_maskz_loadu_epi8(~k, mask64 + 64 - z));
    }
    unsigned s = (unsigned)(z & 7), qi = (unsigned)(z >> 3), hm = 1u << (qi + 1);
    uint64_t lo = (uint64_t)~crc << (8 * s);
    uint64_t hi = s > 4 ? (uint64_t)~crc >> (64 - 8 * s) : 0; /* what spills into the next qword */
    *x0 = _mm512_xor_si512(*x0, _mm512_maskz_set1_epi64((__mmask8)(1u << qi), (long long)lo));
    *x0 = _mm512_xor_si512(*x0, _mm512_maskz_set1_epi64((__mmask8)hm, (long long)hi));
    *x1 = _mm512_xor_si512(*x1, _mm512_maskz_set1_epi64((__mmask8)(hm >> 8), (long long)hi));
}

/* The blocks are laid out to end where the message ends: the first is read from z = -n mod 64
 * bytes before p, those bytes masked to zero (a masked load: no fault, nothing read). Leading
 * zeros leave a CRC without an initial value unchanged, and the initial value goes in at the
 * message's own start, so the result is the same; no partial block is left at the end, whose
 * byte shifts and serial folds would lengthen the chain every packet waits on. This part: the
 * first four blocks into x[0..3]; returns where the blocks start, *m their total length. */
FE_TARGET512 static inline const uint8_t *head4_512(__m512i x[4], uint32_t crc, const uint8_t *p,
                                                    size_t n, const uint8_t *mask64, size_t *m)
{
    size_t z = (size_t)(0 - n) & 63;
    *m = n + z; /* a multiple of 64, >= 256 */
    const uint8_t *q = (const uint8_t *)((uintptr_t)p - z);
    __mmask64 k = _cvtu64_mask64(~0ull << z);
    x[0] = _mm512_maskz_loadu_epi8(k, q), x[1] = ld512(q + 64);
    head512(&x[0], &x[1], z, k, crc, mask64);
    x[2] = ld512(q + 128), x[3] = ld512(q + 192);
    return q;
}

/* 256-byte rounds from q + off while they end by `stop`; returns the offset reached. */
FE_TARGET512 static inline size_t rounds512(__m512i x[4], const uint8_t *q, size_t off, size_t stop)
{
    __m512i kk = k512x(k256);
    for (; off + 256 <= stop; off += 256) {
        const uint8_t *b = q + off;
        x[0] = fold512_xor(x[0], kk, ld512(b));
        x[1] = fold512_xor(x[1], kk, ld512(b + 64));
        x[2] = fold512_xor(x[2], kk, ld512(b + 128));
        x[3] = fold512_xor(x[3], kk, ld512(b + 192));
    }
    return off;
}

FE_TARGET512 uint32_t fe_crc32_fold512(uint32_t crc, const uint8_t *p, size_t n,
                                       const uint8_t *mask64)
{
    if (n < FE_CRC32_FOLD_MIN) return fe_crc32_base(crc, p, n);
    __m512i x[4];
    size_t m;
    const uint8_t *q = head4_512(x, crc, p, n, mask64, &m);
    size_t off = rounds512(x, q, 256, m);
    return reduce128(lanes_to_one(join512(x[0], x[1], x[2], x[3], q + off, (m - off) / 64)));
}

FE_TARGET512 void fe_crc32_fold512_begin(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p,
                                         size_t n, const uint8_t *mask64)
{
    __m512i x[4];
    size_t m;
    const uint8_t *q = head4_512(x, crc, p, n, mask64, &m);
    size_t off = rounds512(x, q, 256, m < FE_CRC32_SPLIT_BYTES ? m : FE_CRC32_SPLIT_BYTES);
    for (int i = 0; i < 4; i++) _mm512_store_si512((void *)(s->acc + 64 * i), x[i]);
    s->p = q, s->off = off, s->n = m;
}

FE_TARGET512 uint32_t fe_crc32_fold512_end(const struct fe_crc32_split *s)
{
    const uint8_t *q = s->p;
    size_t m = s->n;
    __m512i x[4];
    for (int i = 0; i < 4; i++) x[i] = _mm512_load_si512((const void *)(s->acc + 64 * i));
    size_t off = rounds512(x, q, s->off, m);
    return reduce128(lanes_to_one(join512(x[0], x[1], x[2], x[3], q + off, (m - off) / 64)));
}

/* The compiler's CPUID check: AVX2 and VPCLMULQDQ count only when the OS saves the YMM state
 * (XGETBV), AVX-512 only when it saves the ZMM and mask state; a kernel whose instructions are
 * missing is never timed, chosen or forced (crc.c). */
static bool cpu_has_fold256(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq") &&
           __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") &&
           __builtin_cpu_supports("ssse3");
}

static bool cpu_has_fold512(void)
{
    return cpu_has_fold256() && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}

#else
uint32_t fe_crc32_fold256(uint32_t crc, const uint8_t *p, size_t n, const uint8_t *mask64)
{
    (void)mask64;
    return fe_crc32_base(crc, p, n);
}
uint32_t fe_crc32_fold512(uint32_t crc, const uint8_t *p, size_t n, const uint8_t *mask64)
{
    (void)mask64;
    return fe_crc32_base(crc, p, n);
}
void fe_crc32_fold256_begin(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p, size_t n,
                            const uint8_t *mask64)
{
    (void)s, (void)crc, (void)p, (void)n, (void)mask64;
}
uint32_t fe_crc32_fold256_end(const struct fe_crc32_split *s)
{
    (void)s;
    return 0;
}
void fe_crc32_fold512_begin(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p, size_t n,
                            const uint8_t *mask64)
{
    (void)s, (void)crc, (void)p, (void)n, (void)mask64;
}
uint32_t fe_crc32_fold512_end(const struct fe_crc32_split *s)
{
    (void)s;
    return 0;
}
static bool cpu_has_fold256(void)
{
    return false;
}
static bool cpu_has_fold512(void)
{
    return false;
}
#endif

bool fe_crc32_kernel_usable(enum fe_crc_kernel k)
{
    switch (k) {
    case FE_CRC_BASE:
        return true;
    case FE_CRC_FOLD256:
        return cpu_has_fold256();
    case FE_CRC_FOLD512:
        return cpu_has_fold512();
    default:
        return false;
    }
}

fe_crc32_fold_fn fe_crc32_fold_of(enum fe_crc_kernel k)
{
    return k == FE_CRC_FOLD256 ? fe_crc32_fold256 : k == FE_CRC_FOLD512 ? fe_crc32_fold512 : NULL;
}

const struct fe_crc32_split_fns *fe_crc32_split_of(enum fe_crc_kernel k)
{
    static const struct fe_crc32_split_fns fns[FE_CRC_KERNELS] = {
        [FE_CRC_FOLD256] = {fe_crc32_fold256_begin, fe_crc32_fold256_end},
        [FE_CRC_FOLD512] = {fe_crc32_fold512_begin, fe_crc32_fold512_end}};
    return k == FE_CRC_FOLD256 || k == FE_CRC_FOLD512 ? &fns[k] : NULL;
}
