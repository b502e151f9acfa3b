/* CRC-32 kernels behind fe_crc32 (private to src/wire). */
#ifndef FE_WIRE_CRC_IMPL_H
#define FE_WIRE_CRC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 256-bit VPCLMULQDQ folding (AVX2 CPUs with VPCLMULQDQ, e.g. AMD Zen 3, Intel Ice Lake and
 * later). For len >= FE_CRC32_VPCLMUL_MIN; zlib convention like fe_crc32. */
#define FE_CRC32_VPCLMUL_MIN 256
uint32_t fe_crc32_vpclmul(uint32_t crc, const uint8_t *p, size_t len);
/* Whether this CPU (and OS) can run it. */
bool fe_crc32_vpclmul_usable(void);

#endif
