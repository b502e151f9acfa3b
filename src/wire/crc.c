/* CRC-32 backend: ISA-L (folding with PCLMULQDQ/VPCLMULQDQ, ~18x zlib) when available, zlib
 * otherwise. Both use zlib's calling convention, so callers never see the difference. */
#include "feroce/icrc.h"

#ifdef FE_HAVE_ISAL
#include <isa-l/crc.h>
#else
#include <zlib.h>
#endif

uint32_t fe_crc32(uint32_t crc, const void *buf, size_t len)
{
#ifdef FE_HAVE_ISAL
    return crc32_gzip_refl(crc, (const unsigned char *)buf, (uint64_t)len);
#else
    return (uint32_t)crc32_z(crc, (const Bytef *)buf, (z_size_t)len);
#endif
}

const char *fe_crc32_backend(void)
{
#ifdef FE_HAVE_ISAL
    return "isa-l";
#else
    return "zlib";
#endif
}
