/* CRC-32 dispatch: a 256-bit VPCLMULQDQ kernel for long buffers on CPUs that have it, else
 * ISA-L (PCLMULQDQ folding; AVX-512 kernel where available), else zlib. All use zlib's calling
 * convention, so callers never see the difference. */
#include "feroce/icrc.h"
#include "wire/crc_impl.h"

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

uint32_t fe_crc32(uint32_t crc, const void *buf, size_t len)
{
    if (len >= FE_CRC32_VPCLMUL_MIN && fe_crc32_vpclmul_usable())
        return fe_crc32_vpclmul(crc, (const uint8_t *)buf, len);
    return fe_crc32_base(crc, buf, len);
}

const char *fe_crc32_backend(void)
{
#ifdef FE_HAVE_ISAL
    return fe_crc32_vpclmul_usable() ? "vpclmulqdq-avx2 (>= 256 B) + isa-l" : "isa-l";
#else
    return fe_crc32_vpclmul_usable() ? "vpclmulqdq-avx2 (>= 256 B) + zlib" : "zlib";
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
