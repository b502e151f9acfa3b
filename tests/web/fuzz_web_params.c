/* libFuzzer target: the body of the dashboard's `POST /api/params` (src/web/form.c), sent by
 * any HTTP client with --web-write. The first input byte picks the run's flow count (0..9) and
 * a small output capacity; the rest is the body, cut at MAX_BODY_BYTES as the server cuts it.
 * Properties, beyond no crash or UB:
 *  - a field agrees with a second, plain decoder written from form.h (first pair of that name,
 *    '+' a space, %XX a byte, refused on a bad escape, a control byte or no room); a decoded
 *    value is NUL-terminated within cap, has no control byte, and, percent-encoded again,
 *    decodes to itself; nothing is written past cap;
 *  - a flow is -1 exactly for "all", an index N-1 exactly when the text is the decimal N of a
 *    flow that exists (1..flows, at most FE_WEB_MAX_FLOWS), -2 otherwise;
 *  - the decoded `set` goes to fe_cc_params_parse as the server passes it: a refusal explains
 *    itself in err. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/cc.h"
#include "web/form.h"
#include "web/web.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

#define MAX_BODY_BYTES 1024u /* as src/web/web.c */
#define FLOW_CAP       16u   /* post_params' buffers */
#define SET_CAP        256u
#define GUARD          16u

static int ref_hex(char c)
{
    const char *digits = "0123456789abcdef", *p;
    char l = c >= 'A' && c <= 'F' ? (char)(c - 'A' + 'a') : c;
    return l && (p = strchr(digits, l)) ? (int)(p - digits) : -1;
}

/* The reference: split on '&', take the first "name=" pair, decode its value. */
static bool ref_field(const char *body, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name), start = 0, len = strlen(body);
    while (start < len) {
        size_t end = start;
        while (end < len && body[end] != '&') end++;
        if (end - start > nl && !memcmp(body + start, name, nl) && body[start + nl] == '=') {
            size_t n = 0;
            for (size_t i = start + nl + 1; i < end; i++) {
                unsigned c = (unsigned char)body[i];
                if (c == '+') {
                    c = ' ';
                } else if (c == '%') {
                    if (i + 2 >= end) return false; /* "%" and "%X" at the end */
                    int hi = ref_hex(body[i + 1]), lo = ref_hex(body[i + 2]);
                    if (hi < 0 || lo < 0) return false;
                    c = (unsigned)(hi * 16 + lo);
                    i += 2;
                }
                if (c < 0x20 || n + 1 >= cap) return false;
                out[n++] = (char)c;
            }
            out[n] = 0;
            return true;
        }
        start = end + 1;
    }
    return false;
}

/* name=VALUE with every byte of VALUE as %XX. */
static void encode_pair(char *dst, size_t dst_cap, const char *name, const char *value)
{
    size_t n = (size_t)snprintf(dst, dst_cap, "%s=", name);
    for (const char *v = value; *v && n + 4 <= dst_cap; v++)
        n += (size_t)snprintf(dst + n, dst_cap - n, "%%%02X", (unsigned char)*v);
}

static bool check_field(const char *body, const char *name, size_t cap, char *value)
{
    char out[SET_CAP + GUARD], ref[SET_CAP + GUARD];
    memset(out, 0x7E, sizeof out);
    bool ok = fe_web_form_field(body, name, out, cap);
    for (size_t i = cap; i < sizeof out; i++) CHECK(out[i] == 0x7E);
    CHECK(ok == ref_field(body, name, ref, cap));
    if (!ok) return false;
    const char *nul = memchr(out, 0, cap);
    CHECK(nul && !strcmp(out, ref));
    size_t n = (size_t)(nul - out);
    for (size_t i = 0; i < n; i++) CHECK((unsigned char)out[i] >= 0x20);

    char again_body[3 * SET_CAP + 32], again[SET_CAP + GUARD];
    encode_pair(again_body, sizeof again_body, name, out);
    CHECK(fe_web_form_field(again_body, name, again, cap) && !strcmp(again, out));
    memcpy(value, out, n + 1);
    return true;
}

static void check_flow(const char *s, unsigned n_flows)
{
    int r = fe_web_parse_flow(s, n_flows);
    int want = strcmp(s, "all") ? -2 : -1;
    for (unsigned k = 1; want == -2 && k <= n_flows && k <= FE_WEB_MAX_FLOWS; k++) {
        char dec[16];
        snprintf(dec, sizeof dec, "%u", k);
        if (!strcmp(s, dec)) want = (int)k - 1;
    }
    CHECK(r == want);
}

static void check_set(const char *set)
{
    const struct fe_cc_algo *algo = fe_cc_find("dcqcn");
    CHECK(algo);
    struct fe_cc_params p;
    fe_cc_params_default(&p, algo);
    char err[256];
    memset(err, 0x7E, sizeof err);
    if (fe_cc_params_parse(&p, set, err, sizeof err)) CHECK(memchr(err, 0, sizeof err) && err[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    unsigned n_flows = data[0] % 10;
    size_t small_cap = 1 + (data[0] >> 4); /* 1..16: the no-room edge */
    char body[MAX_BODY_BYTES + 1];
    size_t len = size - 1 < MAX_BODY_BYTES ? size - 1 : MAX_BODY_BYTES;
    memcpy(body, data + 1, len);
    body[len] = 0;

    char flow[SET_CAP], set[SET_CAP], tmp[SET_CAP];
    bool has_flow = check_field(body, "flow", FLOW_CAP, flow);
    bool has_set = check_field(body, "set", SET_CAP, set);
    check_field(body, "set", small_cap, tmp);
    check_flow(body, n_flows); /* the raw text, unlike any decoded value, may be anything */
    if (has_flow) check_flow(flow, n_flows);
    if (has_flow && has_set) check_set(set);
    return 0;
}
