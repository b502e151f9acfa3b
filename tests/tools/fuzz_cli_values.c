/* libFuzzer target: the value parsers behind command-line options and config values that a user
 * (or a script, or a file) hands the tools: durations, sizes, rates with units, whole numbers,
 * MAC addresses, IPv4 ADDR:PORT, side-channel CIDRs and allow lists. The first byte picks the
 * parser, the rest is the text (cut at its first NUL). Checks, beyond no crash or UB: a refusal
 * leaves the output untouched; an accepted value reads back to itself when printed plainly
 * (sizes, durations and rates below 2^53, where a double holds them exactly), a CIDR's mask is
 * a prefix and its net has no host bits, a whole number has no minus sign, an allow list stays
 * within FE_SC_MAX_ALLOW, an accepted MAC or CIDR has nothing but its digits and separators. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/endpoint.h"
#include "feroce/io.h"
#include "feroce/sidechannel.h"
#include "tools/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

#define UNTOUCHED 0x5A5A5A5A5A5A5A5Aull

typedef int (*unit_parser)(const char *s, uint64_t *out, const char *what);

static void check_units(unit_parser parse, const char *s)
{
    uint64_t v = UNTOUCHED;
    if (parse(s, &v, "value")) {
        CHECK(v == UNTOUCHED);
        return;
    }
    if (v >= (1ull << 53)) return;
    char plain[32];
    snprintf(plain, sizeof plain, "%" PRIu64, v);
    uint64_t w = UNTOUCHED;
    CHECK(parse(plain, &w, "value") == 0 && w == v);
}

static void check_u64(const char *s)
{
    uint64_t v = UNTOUCHED;
    if (fe_parse_u64(s, &v, "value")) {
        CHECK(v == UNTOUCHED);
        return;
    }
    CHECK(!strchr(s, '-')); /* strtoull would negate: "-1" is not 2^64-1 */
    char plain[32];
    snprintf(plain, sizeof plain, "%" PRIu64, v);
    uint64_t w;
    CHECK(fe_parse_u64(plain, &w, "value") == 0 && w == v);
}

static void check_mac(const char *s)
{
    uint8_t mac[6];
    memset(mac, 0xA5, sizeof mac);
    if (fe_parse_mac(s, mac, "mac")) {
        for (int i = 0; i < 6; i++) CHECK(mac[i] == 0xA5);
        return;
    }
    CHECK(strspn(s, "0123456789abcdefABCDEF:") == strlen(s)); /* no blank, sign or 0x */
    char plain[18];
    snprintf(plain, sizeof plain, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
             mac[4], mac[5]);
    uint8_t again[6];
    CHECK(fe_parse_mac(plain, again, "mac") == 0 && !memcmp(again, mac, 6));
}

static void check_addr(const char *s)
{
    uint32_t ip = 0x5A5A5A5A;
    uint16_t port = 0x5A5A;
    if (fe_io_parse_addr(s, &ip, &port)) {
        CHECK(ip == 0x5A5A5A5A && port == 0x5A5A);
        return;
    }
    char plain[32];
    fe_io_addr_str(ip, port, plain, sizeof plain);
    uint32_t ip2;
    uint16_t port2;
    CHECK(fe_io_parse_addr(plain, &ip2, &port2) == 0 && ip2 == ip && port2 == port);
}

static void check_cidr(const struct fe_sc_cidr *c)
{
    uint32_t host = ~c->mask;
    CHECK((host & (host + 1)) == 0); /* the mask is a prefix: the host bits are the low ones */
    CHECK((c->net & host) == 0);
}

static void check_allow(const char *s)
{
    struct fe_sc_cidr list[FE_SC_MAX_ALLOW];
    struct fe_sc_cidr one = {0x5A5A5A5A, 0x5A5A5A5A};
    if (fe_sc_cidr_parse(s, &one) == 0) {
        CHECK(strspn(s, "0123456789./") == strlen(s)); /* no blank or sign */
        check_cidr(&one);
    } else
        CHECK(one.net == 0x5A5A5A5A && one.mask == 0x5A5A5A5A);
    unsigned n = FE_SC_MAX_ALLOW - 3; /* lists append: a few taken already */
    int rc = fe_allow_parse(s, list, &n);
    CHECK(n <= FE_SC_MAX_ALLOW);
    CHECK(rc == 0 || rc == FE_EINVAL || rc == FE_ENOSPC);
    for (unsigned i = FE_SC_MAX_ALLOW - 3; i < n; i++) check_cidr(&list[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *quiet;
    if (!quiet) {
        /* the parsers say why on stderr; the sanitizers and libFuzzer write past stdio */
        quiet = fopen("/dev/null", "w");
        if (quiet) stderr = quiet;
    }
    if (size < 1) return 0;
    char s[600];
    size_t n = size - 1 < sizeof s - 1 ? size - 1 : sizeof s - 1;
    memcpy(s, data + 1, n);
    s[n] = 0;
    switch (data[0] % 7) {
    case 0:
        check_units(fe_parse_duration_ns, s);
        break;
    case 1:
        check_units(fe_parse_size_bytes, s);
        break;
    case 2:
        check_units(fe_parse_rate_bps, s);
        break;
    case 3:
        check_u64(s);
        break;
    case 4:
        check_mac(s);
        break;
    case 5:
        check_addr(s);
        break;
    default:
        check_allow(s);
        break;
    }
    return 0;
}
