/* Detector-like frames, the second data pattern of feroce streams (the first, the counter
 * pattern, is in feroce/pattern.h): each message is one frame with a 32-byte header
 *   0 magic "FEDAQFRM"  8 message number k (LE64)  16 length (LE32)  20 stream id (LE32)
 *  24 payload checksum (LE64, FNV-1a over the payload's 64-bit words)
 * and a pseudo-random payload seeded by (stream, k), as a readout board would frame detector
 * samples. Like the counter pattern, every byte is a function of (stream, k, offset), so the
 * receiver verifies it byte for byte; the header also lets a reader check a frame alone. */
#ifndef FEROCE_FRAMES_H
#define FEROCE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FE_DETFRAME_HDR 32 /* frames need messages at least this long */

void fe_detframe_fill(uint8_t *dst, size_t len, uint32_t stream, uint64_t k);
/* True when buf starts with the frame magic. */
bool fe_detframe_is(const uint8_t *buf, size_t len);
/* Returns len when buf is exactly frame k of stream, else the index of the first wrong byte. */
size_t fe_detframe_check(const uint8_t *buf, size_t len, uint32_t stream, uint64_t k);

/* The two patterns by name, for tools. */
enum fe_data_pattern { FE_PAT_COUNTER = 0, FE_PAT_FRAMES = 1 };
int fe_data_pattern_parse(const char *s, enum fe_data_pattern *out); /* "counter" / "frames" */
const char *fe_data_pattern_name(enum fe_data_pattern p);
/* Message k of a stream in pattern p (frames fall back to counter below FE_DETFRAME_HDR). */
void fe_data_fill(enum fe_data_pattern p, uint8_t *dst, size_t len, uint32_t stream, uint64_t k);
/* Checks a whole message in whichever pattern it carries (frames are recognised by their magic);
 * returns len when right, else the index of the first wrong byte. */
size_t fe_data_check(const uint8_t *buf, size_t len, uint32_t stream, uint64_t k);

#ifdef __cplusplus
}
#endif
#endif
