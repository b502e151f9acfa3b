/* RoCEv2 invariant CRC (IBA vol. 1 + annex A17) and the CRC-32 behind it.
 *
 * The ICRC is CRC-32 (reflected polynomial 0xEDB88320, as Ethernet and zlib) over eight 0xFF
 * bytes (the stand-in for the InfiniBand LRH), then the packet from the IP header up to the ICRC
 * with the fields routers may change replaced by all-ones:
 *   IPv4: TOS (DSCP+ECN), TTL, header checksum;  IPv6: traffic class, flow label, hop limit;
 *   UDP checksum; BTH byte 4 (FECN, BECN, reserved).
 * IPv4 identification is NOT masked. The result is the usual inverted CRC, stored least
 * significant byte first: the 32-bit value below equals what a little-endian load of the four
 * ICRC bytes gives.
 *
 * Conventions: fe_crc32() follows zlib's crc32() (pass 0 to start; the value passed in is the
 * previous result, inverted internally). In that convention the CRC of the eight 0xFF bytes is
 * FE_ICRC_SEED = ~0xDEBB20E3, which is why implementations "start from 0xDEBB20E3" when they
 * keep the raw (un-inverted) register. */
#ifndef FEROCE_ICRC_H
#define FEROCE_ICRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FE_ICRC_SEED 0x2144DF1Cu /* fe_crc32(0, ff ff ff ff ff ff ff ff, 8) */

/* CRC-32 in zlib's convention. Buffers of 256 bytes or more use the fastest kernel on this CPU,
 * measured once per process: one of feroce's VPCLMULQDQ folding kernels (256- or 512-bit) where
 * it beats the base, else the base; the rest goes to the base: ISA-L's crc32_gzip_refl when
 * built with it, zlib otherwise. FEROCE_CRC=isa-l|zlib|vpclmulqdq-256|vpclmulqdq-512 in the
 * environment forces a kernel the CPU can run. */
uint32_t fe_crc32(uint32_t crc, const void *buf, size_t len);
/* The base alone (for comparisons and benchmarks). */
uint32_t fe_crc32_base(uint32_t crc, const void *buf, size_t len);
/* What fe_crc32 runs on this machine, e.g. "vpclmulqdq-512 (>= 256 B) + isa-l", "isa-l",
 * "zlib"; fe_crc32_base_name: "isa-l" or "zlib". */
const char *fe_crc32_backend(void);
const char *fe_crc32_base_name(void);

/* ICRC of an IP packet. `ip` points at the IPv4 or IPv6 header (the version nibble decides) and
 * `len` counts the bytes from there to the end of the ICRC field (the ICRC itself is not covered).
 * UDP must follow the IP header (IPv4: after IHL*4 bytes, IPv6: after 40). Fast path: the masked
 * headers are copied into a small stack buffer, the rest is streamed from `ip` with no copy.
 * Returns 0 with *icrc set, FE_EINVAL for a bad version or when the headers, BTH and ICRC do
 * not fit in `len`. */
int fe_icrc_ip(const uint8_t *ip, size_t len, uint32_t *icrc);

/* ICRC of a BTH-onward packet with no IP/UDP in front (FE_FRAME_BTH: both ends are feroce):
 * eight 0xFF bytes, the BTH with byte 4 masked, the rest. `len` includes the ICRC. */
int fe_icrc_bth(const uint8_t *bth, size_t len, uint32_t *icrc);

/* Reference versions: mask a full copy of the packet (in `scratch`, at least len bytes) and run
 * one CRC over it. Slow; for tests and for checking the fast path. */
int fe_icrc_ip_ref(const uint8_t *ip, size_t len, uint8_t *scratch, uint32_t *icrc);

/* Compute and compare with the ICRC in the last 4 bytes: 1 match, 0 mismatch, < 0 error. */
int fe_icrc_verify_ip(const uint8_t *ip, size_t len);
int fe_icrc_verify_bth(const uint8_t *bth, size_t len);
/* Compute and store into the last 4 bytes. Returns 0 or FE_EINVAL. */
int fe_icrc_fill_ip(uint8_t *ip, size_t len);
int fe_icrc_fill_bth(uint8_t *bth, size_t len);

/* The ICRC field: least significant byte first. */
static inline uint32_t fe_icrc_load(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void fe_icrc_store(uint8_t *p, uint32_t icrc)
{
    p[0] = (uint8_t)icrc;
    p[1] = (uint8_t)(icrc >> 8);
    p[2] = (uint8_t)(icrc >> 16);
    p[3] = (uint8_t)(icrc >> 24);
}

#ifdef __cplusplus
}
#endif
#endif
