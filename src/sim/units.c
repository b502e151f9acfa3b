/* Errors (sim_errf) and values in scenario files and on the command line: sizes (B, KB = 1000, KiB
 * = 1024, MB, MiB, GB, GiB), rates (bps, Kbps, Mbps, Gbps, Tbps, also Mb/s style, as ns-3 writes
 * them), times (ns, us, ms, s; ns-3's "0.001ms"), booleans and plain numbers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

void sim_errf(char *err, size_t cap, const char *fmt, ...)
{
    if (!err || !cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

struct unit {
    const char *s;
    double mult;
};

static int with_units(const char *s, const struct unit *u, double bare, double max, double *out)
{
    if (!s) return FE_EINVAL;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return FE_EINVAL;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0) return FE_EINVAL;
    while (isspace((unsigned char)*end)) end++;
    size_t n = strlen(end);
    while (n && isspace((unsigned char)end[n - 1])) n--;
    double mult = 0;
    if (!n) {
        mult = bare;
    } else {
        for (; u->s; u++) {
            if (strlen(u->s) == n && !strncasecmp(end, u->s, n)) {
                mult = u->mult;
                break;
            }
        }
    }
    if (mult == 0) return FE_EINVAL;
    double r = v * mult;
    if (!(r <= max)) return FE_ERANGE;
    *out = r;
    return 0;
}

int sim_parse_size(const char *s, uint64_t *out)
{
    static const struct unit u[] = {
        {"b", 1},    {"kb", 1e3},           {"kib", 1024}, {"mb", 1e6}, {"mib", 1048576},
        {"gb", 1e9}, {"gib", 1073741824.0}, {"k", 1e3},    {"m", 1e6},  {"g", 1e9},
        {NULL, 0}};
    double v;
    int rc = with_units(s, u, 1, 1e18, &v);
    if (!rc) *out = (uint64_t)llround(v);
    return rc;
}

int sim_parse_rate(const char *s, uint64_t *out)
{
    static const struct unit u[] = {{"bps", 1},     {"b/s", 1},     {"kbps", 1e3}, {"kb/s", 1e3},
                                    {"mbps", 1e6},  {"mb/s", 1e6},  {"gbps", 1e9}, {"gb/s", 1e9},
                                    {"tbps", 1e12}, {"tb/s", 1e12}, {NULL, 0}};
    double v;
    int rc = with_units(s, u, 1, 1e15, &v);
    if (!rc) {
        if (v < 1) return FE_ERANGE;
        *out = (uint64_t)llround(v);
    }
    return rc;
}

int sim_parse_time(const char *s, uint64_t *out)
{
    static const struct unit u[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {NULL, 0}};
    double v;
    int rc = with_units(s, u, 1, (double)FE_SIM_MAX_TIME, &v);
    if (!rc) *out = (uint64_t)llround(v);
    return rc;
}

int sim_parse_bool(const char *s, bool *out)
{
    static const char *const t[] = {"true", "yes", "on", "1"};
    static const char *const f[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(s, t[i])) {
            *out = true;
            return 0;
        }
        if (!strcasecmp(s, f[i])) {
            *out = false;
            return 0;
        }
    }
    return FE_EINVAL;
}

int sim_parse_double(const char *s, double *out)
{
    if (!s || !*s) return FE_EINVAL;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == s || *end || !isfinite(v)) return FE_EINVAL;
    *out = v;
    return 0;
}

int sim_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return FE_EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == s || *end) return FE_EINVAL;
    if (v > max) return FE_ERANGE;
    *out = v;
    return 0;
}

char *sim_read_file(const char *path, size_t *len, char *err, size_t err_cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_errf(err, err_cap, "%s: cannot open", path);
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        if (cap >= ((size_t)256 << 20)) {
            sim_errf(err, err_cap, "%s: larger than 256 MiB", path);
            free(buf);
            fclose(f);
            return NULL;
        }
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) free(buf);
        buf = nb;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        sim_errf(err, err_cap, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

bool sim_path_join(char *out, size_t cap, const char *dir, const char *file)
{
    size_t a = strlen(dir), b = strlen(file);
    if (file[0] == '/' || !a) a = 0;
    if (a + 1 + b + 1 > cap) return false;
    if (a) {
        memcpy(out, dir, a);
        out[a++] = '/';
    }
    memcpy(out + a, file, b + 1);
    return true;
}
