/* CRC-32 kernels behind fe_crc32 (private to src/wire; tests and benchmarks use it to reach
 * every kernel). */
#ifndef FE_WIRE_CRC_IMPL_H
#define FE_WIRE_CRC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fe_crc_kernel {
    FE_CRC_BASE,    /* the library: ISA-L (its own dispatch), else zlib */
    FE_CRC_FOLD256, /* carry-less folding on 256-bit registers (AVX2 + VPCLMULQDQ) */
    FE_CRC_FOLD512, /* the same on 512-bit registers (AVX-512 + VPCLMULQDQ) */
    FE_CRC_KERNELS
};

/* The folding kernels take at least this many bytes (shorter: the base). */
#define FE_CRC32_FOLD_MIN 256
/* How many leading bytes a folding kernel can OR a mask into. */
#define FE_CRC32_MASK_BYTES 64

/* zlib convention like fe_crc32, over (p[i] | mask64[i]) for i < 64 and p[i] beyond: the ICRC's
 * variant fields masked in the same pass. mask64 may be NULL; n >= FE_CRC32_FOLD_MIN. */
typedef uint32_t (*fe_crc32_fold_fn)(uint32_t crc, const uint8_t *p, size_t n,
                                     const uint8_t *mask64);
uint32_t fe_crc32_fold256(uint32_t crc, const uint8_t *p, size_t n, const uint8_t *mask64);
uint32_t fe_crc32_fold512(uint32_t crc, const uint8_t *p, size_t n, const uint8_t *mask64);

/* A folding kernel's run in two calls, so that work independent of the CRC (the parse of the
 * frame's headers) can run between them: begin loads the first blocks and folds up to about
 * FE_CRC32_SPLIT_BYTES, end folds the rest and reduces; begin then end gives what the kernel
 * gives for the same arguments. Why: the CRC is limited by the carry-less multiplier, and the
 * stores of work placed after the whole CRC cannot complete before it retires: the store queue
 * fills and the core stops taking instructions; placed between the halves, its stores wait
 * only for the first half. */
#define FE_CRC32_SPLIT_BYTES 2048
struct fe_crc32_split {
    _Alignas(64) unsigned char acc[256]; /* the accumulators */
    const uint8_t *p;
    size_t off, n;
};
struct fe_crc32_split_fns {
    void (*begin)(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p, size_t n,
                  const uint8_t *mask64);
    uint32_t (*end)(const struct fe_crc32_split *s);
};
void fe_crc32_fold256_begin(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p, size_t n,
                            const uint8_t *mask64);
uint32_t fe_crc32_fold256_end(const struct fe_crc32_split *s);
void fe_crc32_fold512_begin(struct fe_crc32_split *s, uint32_t crc, const uint8_t *p, size_t n,
                            const uint8_t *mask64);
uint32_t fe_crc32_fold512_end(const struct fe_crc32_split *s);
/* Kernel k's halves, NULL for the base. */
const struct fe_crc32_split_fns *fe_crc32_split_of(enum fe_crc_kernel k);

/* fe_icrc_ip and fe_icrc_bth split the same way (icrc.c): begin returns false, and leaves the
 * ICRC to fe_icrc_ip or fe_icrc_bth, when the packet does not take the folding path in one pass;
 * else fe_icrc_split_end gives what they give. */
struct fe_icrc_split {
    struct fe_crc32_split crc;
    uint32_t (*end)(const struct fe_crc32_split *s);
};
bool fe_icrc_ip_begin(struct fe_icrc_split *s, const uint8_t *ip, size_t len);
bool fe_icrc_bth_begin(struct fe_icrc_split *s, const uint8_t *bth, size_t len);
static inline uint32_t fe_icrc_split_end(const struct fe_icrc_split *s)
{
    return s->end(&s->crc);
}

/* Whether this CPU (and OS) can run kernel k; its name ("isa-l", "vpclmulqdq-256", ...). */
bool fe_crc32_kernel_usable(enum fe_crc_kernel k);
const char *fe_crc32_kernel_name(enum fe_crc_kernel k);
/* fe_crc32 on kernel k (usable; any length). */
uint32_t fe_crc32_with(enum fe_crc_kernel k, uint32_t crc, const void *buf, size_t len);

/* The kernels fe_crc32 uses for long buffers, and the ICRC for long packets (masked in one
 * pass), chosen once per process: FEROCE_CRC=name in the environment, else the faster on this
 * CPU in a start-up measurement, a hand-written kernel only when it beats the library. */
enum fe_crc_kernel fe_crc32_kernel(void);
enum fe_crc_kernel fe_crc32_icrc_kernel(void);
/* Folding function of kernel k, NULL for the base. */
fe_crc32_fold_fn fe_crc32_fold_of(enum fe_crc_kernel k);

#endif
