/* AETH syndrome meaning: RNR timer values (IBA table 45) and printable descriptions. */
#include "feroce/wire.h"

#include <stdio.h>

/* IBA vol. 1 table 45, in units of 10 us (code 0 is the longest: 655.36 ms). */
static const uint32_t rnr_timer_10us[32] = {
    65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,    32,
    48,    64,   96,   128,  192,  256,   384,   512,   768,   1024,  1536,
    2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

uint64_t fe_rnr_timer_ns(uint8_t code)
{
    return (uint64_t)rnr_timer_10us[code & 0x1f] * 10000u;
}

const char *fe_nak_code_name(uint8_t code)
{
    switch (code) {
    case FE_NAK_PSN_SEQ:
        return "PSN sequence error";
    case FE_NAK_INVALID_REQ:
        return "invalid request";
    case FE_NAK_REMOTE_ACCESS:
        return "remote access error";
    case FE_NAK_REMOTE_OP:
        return "remote operational error";
    case FE_NAK_INVALID_RD_REQ:
        return "invalid RD request";
    default:
        return "reserved NAK code";
    }
}

const char *fe_aeth_describe(uint8_t syndrome, char *buf, size_t cap)
{
    if (!buf || cap == 0) return buf;
    uint8_t v = fe_aeth_value(syndrome);
    switch (fe_aeth_kind(syndrome)) {
    case FE_AETH_ACK:
        if (syndrome & 0x80)
            snprintf(buf, cap, "reserved syndrome 0x%02x", syndrome);
        else
            snprintf(buf, cap, "ACK credits=%u%s", v,
                     v == FE_AETH_CREDITS_INVALID ? " (no credit info)" : "");
        break;
    case FE_AETH_RNR: {
        uint64_t ns = fe_rnr_timer_ns(v);
        snprintf(buf, cap, "RNR NAK timer=%u (%u.%02u ms)", v, (unsigned)(ns / 1000000u),
                 (unsigned)(ns % 1000000u / 10000u));
        break;
    }
    case FE_AETH_NAK:
        if (v <= FE_NAK_INVALID_RD_REQ)
            snprintf(buf, cap, "NAK %s", fe_nak_code_name(v));
        else
            snprintf(buf, cap, "NAK code=%u (reserved)", v);
        break;
    default:
        snprintf(buf, cap, "reserved syndrome 0x%02x", syndrome);
        break;
    }
    return buf;
}
