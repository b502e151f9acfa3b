/* libFuzzer target for congestion-control parameter strings (user input from command lines and
 * config files). The first byte picks the algorithm, the rest is "a=1,b=2". Checks: a refused
 * list leaves the parameters untouched and explains why; an accepted one holds only values in
 * range (whole where required); and every algorithm initialised with accepted values survives
 * a short burst of events without undefined behaviour (run under ASan/UBSan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/cc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Alignas(16) unsigned char mem[4096];

static void exercise(const struct fe_cc_params *p)
{
    if (fe_cc_instance_size(p->algo) > sizeof mem) abort();
    struct fe_cc *cc = (struct fe_cc *)mem;
    struct fe_cc_env env = {
        .line_rate_bps = 25000000000ull, .mtu_bytes = 1024, .base_rtt_ns = 8000};
    fe_cc_init(cc, p, &env);
    struct fe_int md = {.nhops = 2};
    md.hop[0].rate_mbps = md.hop[1].rate_mbps = 25000;
    uint64_t t = 0;
    for (int i = 0; i < 64; i++) {
        t += 700;
        if (cc->out.timer_ns <= t) fe_cc_on_timer(cc, t);
        fe_cc_on_send(cc, t, 1024);
        if (i % 7 == 0) fe_cc_on_cnp(cc, t);
        md.hop[0].ts_ns = md.hop[1].ts_ns = t;
        md.hop[0].tx_bytes += 900;
        md.hop[1].tx_bytes += 1000;
        md.hop[0].qlen_bytes = (uint32_t)(i * 3000);
        struct fe_cc_ack a = {.acked_bytes = 1024,
                              .rtt_ns = 8000 + (uint64_t)(i % 9) * 5000,
                              .int_md = &md,
                              .ecn_echo = i % 11 == 0,
                              .credit_bytes = (uint64_t)i * 2048};
        fe_cc_on_ack(cc, t, &a);
        if (i % 13 == 0) fe_cc_on_nack(cc, t, 0);
    }
    fe_cc_on_timer(cc, t + 1000000); /* 1 ms of catch-up: bounded even at 1 ns periods */
    struct fe_cc_trace v[FE_CC_MAX_TRACE];
    fe_cc_trace(cc, v, FE_CC_MAX_TRACE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    const struct fe_cc_algo *const *list = fe_cc_list();
    size_t n = 0;
    while (list[n]) n++;
    const struct fe_cc_algo *algo = list[data[0] % n];
    char *s = malloc(size);
    if (!s) return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = 0;

    struct fe_cc_params p, before;
    fe_cc_params_default(&p, algo);
    before = p;
    char err[256];
    memset(err, 0x55, sizeof err);
    int rc = fe_cc_params_parse(&p, s, err, sizeof err);
    if (rc) {
        if (memcmp(&p, &before, sizeof p)) abort(); /* all or nothing */
        if (!memchr(err, 0, sizeof err) || !err[0]) abort();
    } else {
        for (size_t i = 0; i < algo->n_params; i++) {
            const struct fe_cc_param *d = &algo->params[i];
            double v = p.v[i];
            if (!(v >= d->min && v <= d->max)) abort();
            if (d->integer && v != (double)(int64_t)v) abort();
        }
        exercise(&p);
    }
    free(s);
    return 0;
}
