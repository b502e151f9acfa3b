/* Parameter tables: defaults, validation (range, whole numbers, numbers at all), the exact error
 * texts users see, "a=1,b=2" lists (all or nothing), registry and instance basics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/cc.h"
#include "feroce/err.h"

static const struct fe_cc_param tparams[] = {
    {"rpg_ai_rate", "Mb/s", "additive increase", 5, 1, 65535, true},
    {"rpg_gd", "shift", "cut gain", 11, 0, 15, true},
    {"beta", "", "decrease factor", 0.8, 0, 1, false},
};
static const struct fe_cc_algo talgo = {
    .name = "talgo",
    .summary = "test",
    .params = tparams,
    .n_params = 3,
};

static void defaults(void **state)
{
    (void)state;
    struct fe_cc_params p;
    fe_cc_params_default(&p, &talgo);
    assert_ptr_equal(p.algo, &talgo);
    assert_true(p.v[0] == 5 && p.v[1] == 11 && p.v[2] == 0.8);
    assert_int_equal(fe_cc_param_index(&talgo, "rpg_gd"), 1);
    assert_int_equal(fe_cc_param_index(&talgo, "nope"), FE_ENOENT);
}

static void set_and_errors(void **state)
{
    (void)state;
    struct fe_cc_params p;
    char err[256];
    fe_cc_params_default(&p, &talgo);
    assert_int_equal(fe_cc_params_set(&p, "rpg_ai_rate", "40", err, sizeof err), 0);
    assert_true(p.v[0] == 40);
    assert_int_equal(fe_cc_params_set(&p, "rpg_ai_rate", " 65535 ", err, sizeof err), 0);
    assert_true(p.v[0] == 65535);

    assert_int_equal(fe_cc_params_set(&p, "rpg_ai_rate", "70000", err, sizeof err), FE_ERANGE);
    assert_string_equal(err, "rpg_ai_rate: 70000 out of range [1, 65535] Mb/s");
    assert_true(p.v[0] == 65535); /* unchanged */
    assert_int_equal(fe_cc_params_set(&p, "rpg_ai_rate", "0", err, sizeof err), FE_ERANGE);
    assert_int_equal(fe_cc_params_set(&p, "rpg_gd", "2.5", err, sizeof err), FE_EINVAL);
    assert_string_equal(err, "rpg_gd: 2.5 is not a whole number (shift)");
    assert_int_equal(fe_cc_params_set(&p, "rpg_gd", "1e1", err, sizeof err), 0);
    assert_true(p.v[1] == 10);
    assert_int_equal(fe_cc_params_set(&p, "beta", "abc", err, sizeof err), FE_EINVAL);
    assert_string_equal(err, "beta: 'abc' is not a number ()");
    assert_int_equal(fe_cc_params_set(&p, "beta", "5x", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_set(&p, "beta", "", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_set(&p, "beta", "nan", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_set(&p, "beta", "inf", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_set(&p, "beta", "1e999", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_set(&p, "beta", "0.25", err, sizeof err), 0);
    assert_true(p.v[2] == 0.25);
    assert_int_equal(fe_cc_params_set(&p, "beta", "1.5", err, sizeof err), FE_ERANGE);
    assert_string_equal(err, "beta: 1.5 out of range [0, 1] ");

    assert_int_equal(fe_cc_params_set(&p, "rpg_ai", "5", err, sizeof err), FE_ENOENT);
    assert_string_equal(err, "talgo has no parameter 'rpg_ai' (it has: rpg_ai_rate, rpg_gd, beta)");
    /* tiny or absent error buffers are safe */
    char tiny[4];
    assert_int_equal(fe_cc_params_set(&p, "rpg_ai", "5", tiny, sizeof tiny), FE_ENOENT);
    assert_string_equal(tiny, "tal");
    assert_int_equal(fe_cc_params_set(&p, "rpg_ai", "5", NULL, 0), FE_ENOENT);
    assert_int_equal(fe_cc_params_set(NULL, "rpg_ai", "5", err, sizeof err), FE_EINVAL);
}

static void parse_lists(void **state)
{
    (void)state;
    struct fe_cc_params p;
    char err[256];
    fe_cc_params_default(&p, &talgo);
    assert_int_equal(fe_cc_params_parse(&p, "rpg_ai_rate=7, rpg_gd = 9 ,beta=0.5", err, sizeof err),
                     0);
    assert_true(p.v[0] == 7 && p.v[1] == 9 && p.v[2] == 0.5);
    assert_int_equal(fe_cc_params_parse(&p, "", err, sizeof err), 0);
    assert_int_equal(fe_cc_params_parse(&p, "   ", err, sizeof err), 0);
    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd=3", err, sizeof err), 0);
    assert_true(p.v[1] == 3);

    /* all or nothing: the good first assignment is not applied either */
    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd=4,rpg_ai_rate=70000", err, sizeof err),
                     FE_ERANGE);
    assert_string_equal(err, "rpg_ai_rate: 70000 out of range [1, 65535] Mb/s");
    assert_true(p.v[1] == 3 && p.v[0] == 7);

    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd", err, sizeof err), FE_EINVAL);
    assert_string_equal(err, "'rpg_gd': expected name=value");
    assert_int_equal(fe_cc_params_parse(&p, "=4", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd=", err, sizeof err), FE_EINVAL);
    assert_string_equal(err, "rpg_gd: missing or too long value");
    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd=4,", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd=4,,beta=1", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd=4=5", err, sizeof err), FE_EINVAL);
    char longname[200];
    memset(longname, 'a', sizeof longname);
    memcpy(longname + 190, "=1", 3);
    assert_int_equal(fe_cc_params_parse(&p, longname, err, sizeof err), FE_EINVAL);
    assert_true(p.v[1] == 3);
}

static void registry_and_none(void **state)
{
    (void)state;
    const struct fe_cc_algo *none = fe_cc_find("none");
    assert_non_null(none);
    assert_null(fe_cc_find("no-such-algorithm"));
    assert_null(fe_cc_find(NULL));
    int n = 0, seen_none = 0;
    for (const struct fe_cc_algo *const *a = fe_cc_list(); *a; a++, n++) {
        seen_none |= *a == none;
        assert_ptr_equal(fe_cc_find((*a)->name), *a);
        assert_true((*a)->n_params <= FE_CC_MAX_PARAMS);
        /* every default lies in its own range, and whole where it must be */
        for (size_t i = 0; i < (*a)->n_params; i++) {
            const struct fe_cc_param *d = &(*a)->params[i];
            assert_true(d->def >= d->min && d->def <= d->max);
            if (d->integer) assert_true(d->def == (double)(int64_t)d->def);
        }
    }
    assert_true(n >= 1 && seen_none);

    _Alignas(16) unsigned char mem[256];
    assert_true(fe_cc_instance_size(none) <= sizeof mem);
    assert_int_equal(fe_cc_instance_size(none) % 16, 0);
    struct fe_cc *cc = (struct fe_cc *)mem;
    struct fe_cc_env env = {.line_rate_bps = 10000000000ull, .mtu_bytes = 4096};
    struct fe_cc_params p;
    fe_cc_params_default(&p, none);
    fe_cc_init(cc, &p, &env);
    assert_int_equal(cc->out.rate_Bps, 1250000000u);
    assert_true(cc->out.window_bytes == FE_CC_UNLIMITED);
    assert_true(cc->out.credit_bytes == FE_CC_UNLIMITED);
    assert_true(cc->out.timer_ns == FE_CC_NO_TIMER);
    fe_cc_on_send(cc, 0, 1000);
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_timer(cc, 100);
    assert_int_equal(cc->out.rate_Bps, 1250000000u);
    struct fe_cc_trace tr[4];
    assert_int_equal(fe_cc_trace(cc, tr, 4), 0);
    /* NULL params and NULL algorithm fall back to "none" */
    cc->algo = NULL;
    fe_cc_init(cc, NULL, &env);
    assert_ptr_equal(cc->algo, none);
}

/* The timer loop: an algorithm whose periodic deadline fell far behind is called once per
 * missed period; one that does not move its deadline forward is called once, not forever. */
struct tick {
    uint64_t period, calls;
    bool stuck;
};
static void tick_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                      struct fe_cc_out *out)
{
    (void)p;
    struct tick *t = ctx;
    t->period = 10;
    out->timer_ns = env->now_ns + t->period;
}
static void tick_timer(void *ctx, uint64_t now_ns, struct fe_cc_out *out)
{
    (void)now_ns;
    struct tick *t = ctx;
    t->calls++;
    if (!t->stuck) out->timer_ns += t->period;
}
static const struct fe_cc_algo ticker = {
    .name = "ticker", .ctx_size = sizeof(struct tick), .init = tick_init, .on_timer = tick_timer};

static void timer_loop(void **state)
{
    (void)state;
    _Alignas(16) unsigned char mem[256];
    struct fe_cc *cc = (struct fe_cc *)mem;
    struct fe_cc_env env = {.now_ns = 0};
    struct fe_cc_params p;
    fe_cc_params_default(&p, &ticker);
    fe_cc_init(cc, &p, &env);
    struct tick *t = (struct tick *)cc->ctx;
    fe_cc_on_timer(cc, 9);
    assert_int_equal(t->calls, 0);
    fe_cc_on_timer(cc, 105); /* deadlines 10, 20, ..., 100 */
    assert_int_equal(t->calls, 10);
    assert_int_equal(cc->out.timer_ns, 110);
    t->stuck = true;
    fe_cc_on_timer(cc, 1000);
    assert_int_equal(t->calls, 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),    cmocka_unit_test(set_and_errors),
        cmocka_unit_test(parse_lists), cmocka_unit_test(registry_and_none),
        cmocka_unit_test(timer_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
