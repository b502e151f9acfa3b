/* CRC-32 (reflected 0xEDB88320) by carry-less multiplication folding on 256-bit registers.
 *
 * Why: ISA-L 2.30 has a 512-bit VPCLMULQDQ kernel for AVX-512 CPUs only; on AVX2 CPUs with
 * VPCLMULQDQ (AMD Zen 3, many cloud VMs) it falls back to 128-bit PCLMULQDQ. Folding 32 bytes per
 * instruction pair here is about twice as fast on such CPUs, which is what lets one core verify
 * ICRCs at 100 Gb/s.
 *
 * How (standard folding, as in Intel's "Fast CRC computation using PCLMULQDQ"): the message is a
 * polynomial over GF(2); a 128-bit lane A = L*x^64 + H (L = its first 8 bytes) moved forward by
 * D bits is congruent to L*(x^(D+64) mod P) + H*(x^D mod P). In the bit-reflected domain the
 * carry-less product carries one extra factor x, so the constants below are x^(D+63) mod P and
 * x^(D-1) mod P, bit-reflected into the top 32 bits of a 64-bit word. Eight accumulators fold 256
 * bytes per round; they are then folded onto each other, then 32 bytes at a time; the last 32
 * bytes and the tail (< 32 bytes) are finished by the base CRC (their CRC from a zero register
 * equals the CRC of the whole message, because folding preserves the value modulo P).
 * Constants generated with: r = 1; repeat n times { r <<= 1; if (r >> 32) r ^= 0x104C11DB7 };
 * k = bitreverse32(r) << 32. Checked against zlib on every length 0..3000 and alignment. */
#include "wire/crc_impl.h"

#include "feroce/icrc.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdatomic.h>

/* {x^(8d+63) mod P, x^(8d-1) mod P} for a fold over d bytes. */
static const uint64_t k256[2] = {0x7cc8e1e700000000ull, 0x03f9f86300000000ull};
static const uint64_t kd[8][2] = {
    {0, 0},                                         /* unused: x7 does not move */
    {0x9570d49500000000ull, 0x01b5fd1d00000000ull}, /*  32 bytes */
    {0x653d982200000000ull, 0xcad38e8f00000000ull}, /*  64 bytes */
    {0x759fc69d00000000ull, 0x101a233100000000ull}, /*  96 bytes */
    {0x7d657a1000000000ull, 0x7406fa9500000000ull}, /* 128 bytes */
    {0x199560db00000000ull, 0x1d5dce4400000000ull}, /* 160 bytes */
    {0x67f7947600000000ull, 0xc56d949600000000ull}, /* 192 bytes */
    {0x8f739cb400000000ull, 0xd63a56a600000000ull}, /* 224 bytes */
};

#define FE_TARGET __attribute__((target("avx2,vpclmulqdq,pclmul")))

FE_TARGET static inline __m256i konst(const uint64_t k[2])
{
    return _mm256_set_epi64x((long long)k[1], (long long)k[0], (long long)k[1], (long long)k[0]);
}

/* Moves both 128-bit lanes of a forward by the distance k was made for. */
FE_TARGET static inline __m256i fold(__m256i a, __m256i k)
{
    return _mm256_xor_si256(_mm256_clmulepi64_epi128(a, k, 0x00),
                            _mm256_clmulepi64_epi128(a, k, 0x11));
}

FE_TARGET static inline __m256i ld(const uint8_t *p)
{
    return _mm256_loadu_si256((const void *)p);
}

FE_TARGET uint32_t fe_crc32_vpclmul(uint32_t crc, const uint8_t *p, size_t n)
{
    if (n < FE_CRC32_VPCLMUL_MIN) return fe_crc32_base(crc, p, n);
    /* The initial register (~crc in zlib's convention) is XORed into the first 4 bytes. */
    __m256i x0 = _mm256_xor_si256(ld(p), _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, (int)~crc));
    __m256i x1 = ld(p + 32), x2 = ld(p + 64), x3 = ld(p + 96), x4 = ld(p + 128);
    __m256i x5 = ld(p + 160), x6 = ld(p + 192), x7 = ld(p + 224);
    __m256i k = konst(k256);
    size_t off = 256;
    for (; off + 256 <= n; off += 256) {
        const uint8_t *q = p + off;
        x0 = _mm256_xor_si256(fold(x0, k), ld(q));
        x1 = _mm256_xor_si256(fold(x1, k), ld(q + 32));
        x2 = _mm256_xor_si256(fold(x2, k), ld(q + 64));
        x3 = _mm256_xor_si256(fold(x3, k), ld(q + 96));
        x4 = _mm256_xor_si256(fold(x4, k), ld(q + 128));
        x5 = _mm256_xor_si256(fold(x5, k), ld(q + 160));
        x6 = _mm256_xor_si256(fold(x6, k), ld(q + 192));
        x7 = _mm256_xor_si256(fold(x7, k), ld(q + 224));
    }
    /* x_i sits (7 - i) * 32 bytes before x7: fold them all onto it. */
    x0 = _mm256_xor_si256(_mm256_xor_si256(fold(x0, konst(kd[7])), fold(x1, konst(kd[6]))),
                          _mm256_xor_si256(fold(x2, konst(kd[5])), fold(x3, konst(kd[4]))));
    x4 = _mm256_xor_si256(_mm256_xor_si256(fold(x4, konst(kd[3])), fold(x5, konst(kd[2]))),
                          _mm256_xor_si256(fold(x6, konst(kd[1])), x7));
    x0 = _mm256_xor_si256(x0, x4);
    k = konst(kd[1]);
    for (; off + 32 <= n; off += 32) x0 = _mm256_xor_si256(fold(x0, k), ld(p + off));
    uint8_t last[32];
    _mm256_storeu_si256((void *)last, x0);
    uint32_t c = fe_crc32_base(0xffffffffu, last, sizeof last); /* from a zero register */
    return fe_crc32_base(c, p + off, n - off);
}

bool fe_crc32_vpclmul_usable(void)
{
    /* -1 unknown, 0 no, 1 yes; relaxed: every thread computes the same answer. */
    static atomic_int usable = -1;
    int u = atomic_load_explicit(&usable, memory_order_relaxed);
    if (u < 0) {
        __builtin_cpu_init();
        u = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq") &&
            __builtin_cpu_supports("pclmul");
        atomic_store_explicit(&usable, u, memory_order_relaxed);
    }
    return u;
}

#else
uint32_t fe_crc32_vpclmul(uint32_t crc, const uint8_t *p, size_t n)
{
    return fe_crc32_base(crc, p, n);
}
bool fe_crc32_vpclmul_usable(void)
{
    return false;
}
#endif
