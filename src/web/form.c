/* Decoding of a POST /api/params body: see form.h. */
#include "web/form.h"

#include <string.h>

#include "web/web.h"

static int hex_val(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

bool fe_web_form_field(const char *body, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = body; *p; p += strcspn(p, "&"), p += *p == '&') {
        if (strncmp(p, name, nl) || p[nl] != '=') continue;
        size_t n = 0;
        for (const char *q = p + nl + 1; *q && *q != '&'; q++) {
            int c = (unsigned char)*q;
            if (c == '+') c = ' ';
            if (c == '%') {
                int hi = hex_val(q[1]), lo = hi < 0 ? -1 : hex_val(q[2]);
                if (lo < 0) return false;
                c = hi * 16 + lo;
                q += 2;
            }
            if (c < 0x20 || n + 1 >= cap) return false;
            out[n++] = (char)c;
        }
        out[n] = 0;
        return true;
    }
    return false;
}

int fe_web_parse_flow(const char *s, unsigned n_flows)
{
    if (!strcmp(s, "all")) return -1;
    /* Digits only: strtoul would also take blanks, a sign and "-1" (as ULONG_MAX). */
    if (*s < '1' || *s > '9') return -2;
    unsigned v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -2;
        v = v * 10 + (unsigned)(*s - '0');
        if (v > n_flows || v > FE_WEB_MAX_FLOWS) return -2;
    }
    return (int)v - 1;
}
