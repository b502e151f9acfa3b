/* fe_cli_parse: every kind of option, bounds, 'needs a value', unknown options, positional
 * arguments, and getopt_long's manner (--name=value, prefixes, ambiguity). Messages go to
 * stderr; these tests look at results and return values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/endpoint.h"
#include "feroce/sidechannel.h"
#include "tools/cli.h"

struct t_opts {
    bool flag, on, seen_rate;
    int mode;
    const char *name, *pos;
    uint8_t small;
    uint16_t port;
    uint32_t qpn;
    uint64_t size, time_ns, rate_bps, count;
    int fn_calls;
};

static int count_fn(const char *val, void *p)
{
    struct t_opts *o = p;
    o->fn_calls++;
    return val && !strcmp(val, "bad") ? -1 : 0;
}

static int pos_fn(const char *a, void *ctx)
{
    struct t_opts *o = ctx;
    if (o->pos) return -1;
    o->pos = a;
    return 0;
}

static int parse(struct t_opts *o, bool getopt_mode, int argc, const char **argv)
{
    memset(o, 0, sizeof *o);
    o->on = true;
    const struct fe_opt opts[] = {
        {FE_OPT_FLAG_("--flag", o->flag)},
        {FE_OPT_CLEAR_("--off", o->on)},
        {FE_OPT_SET_("--mode-b", o->mode, 2)},
        {FE_OPT_STR_("--name", o->name)},
        {FE_OPT_UINT_("--small", o->small), .max = 31},
        {FE_OPT_UINT_("--port", o->port), .min = 1, .max = 65535},
        {FE_OPT_U32MAX_("--qpn", o->qpn, 0xFFFFFF)},
        {FE_OPT_SIZE_("--size", o->size), .min = 1},
        {FE_OPT_TIME_("--time", o->time_ns)},
        {FE_OPT_RATE_("--rate", o->rate_bps), .seen = &o->seen_rate},
        {FE_OPT_FN_("--fn", count_fn, o)},
        {FE_OPT_FN0_("--fn0", count_fn, o)},
        {FE_OPT_UINT_("--count", o->count)},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {.cmd = "test",
                               .tables = tables,
                               .positional = getopt_mode ? NULL : pos_fn,
                               .ctx = o,
                               .getopt_usage = getopt_mode ? "usage\n" : NULL};
    return fe_cli_parse(&cli, argc, (char **)argv);
}

#define PARSE(o, g, ...)                                                                           \
    parse(o, g, (int)(sizeof((const char *[]){"test", __VA_ARGS__}) / sizeof(const char *)),       \
          (const char *[]){"test", __VA_ARGS__})

static void test_kinds(void **state)
{
    (void)state;
    struct t_opts o;
    assert_int_equal(PARSE(&o, false, "--flag", "--off", "--mode-b", "--name", "x", "--small", "31",
                           "--port", "4791", "--qpn", "0xffffff", "--size", "64K", "--time", "2us",
                           "--rate", "10G", "--fn", "a", "--fn0", "file"),
                     22);
    assert_true(o.flag);
    assert_false(o.on);
    assert_int_equal(o.mode, 2);
    assert_string_equal(o.name, "x");
    assert_int_equal(o.small, 31);
    assert_int_equal(o.port, 4791);
    assert_int_equal(o.qpn, 0xffffff);
    assert_int_equal(o.size, 65536);
    assert_int_equal(o.time_ns, 2000);
    assert_int_equal(o.rate_bps, 10000000000ull);
    assert_true(o.seen_rate);
    assert_int_equal(o.fn_calls, 2);
    assert_string_equal(o.pos, "file");
}

static void test_errors(void **state)
{
    (void)state;
    struct t_opts o;
    assert_int_equal(PARSE(&o, false, "--small", "32"), -1); /* above max */
    assert_int_equal(PARSE(&o, false, "--port", "0"), -1);   /* below min */
    assert_int_equal(PARSE(&o, false, "--qpn", "0x1000000"), -1);
    assert_int_equal(PARSE(&o, false, "--size", "0"), -1);
    assert_int_equal(PARSE(&o, false, "--time", "3 parsecs"), -1);
    assert_int_equal(PARSE(&o, false, "--count", "-1"), -1);
    assert_int_equal(PARSE(&o, false, "--fn", "bad"), -1);
    assert_int_equal(PARSE(&o, false, "--name"), -1); /* needs a value */
    assert_int_equal(PARSE(&o, false, "--nope"), -1); /* unknown */
    assert_int_equal(PARSE(&o, false, "-"), -1);      /* "-" is an option here */
    assert_int_equal(PARSE(&o, false, "a", "b"), -1); /* the positional refuses */
    assert_int_equal(PARSE(&o, false, "--rate", "x"), -1);
    assert_false(o.seen_rate);
    /* found by fuzz_cli_values or while writing it */
    assert_int_equal(PARSE(&o, false, "--count", "\t-1"), -1); /* not 2^64-1 */
    assert_int_equal(PARSE(&o, false, "--count", "+1"), -1);
    assert_true(PARSE(&o, false, "--count", " 7") >= 0); /* blanks stay allowed ("1, 2") */
    assert_int_equal(o.count, 7);
    assert_int_equal(PARSE(&o, false, "--time", "nan"), -1); /* no conversion of NaN */
    assert_int_equal(PARSE(&o, false, "--rate", "-nan"), -1);
    uint8_t mac[6] = {1, 2, 3, 4, 5, 6};
    assert_int_equal(fe_parse_mac("02:00:5e0:1:00:0b", mac, "mac"), -1);
    assert_int_equal(mac[0], 1); /* a refusal writes nothing (fuzz_cli_values) */
    assert_int_equal(mac[1], 2);
    assert_int_equal(fe_parse_mac("02:00:5e:10:00:0b", mac, "mac"), 0);
    assert_int_equal(mac[2], 0x5e);
}

/* MACs, CIDRs and allow lists take digits where digits are due: no blank, sign or "0x" first
 * (sscanf's %x and %u took them), but a blank after an allow list's comma ("a, b"). */
static void test_addresses(void **state)
{
    (void)state;
    uint8_t mac[6] = {1, 2, 3, 4, 5, 6};
    const char *bad_mac[] = {" 2:0:0:0:0:1",
                             "+2:0:0:0:0:1",
                             "2:0:0:0:0:+1",
                             "2: 0:0:0:0:1",
                             "0x2:0:0:0:0:1",
                             "-0:0:0:0:0:1",
                             "002:0:0:0:0:1",
                             "2:0:0:0:0:1 ",
                             "2:0:0:0:0",
                             "2:0:0:0:0:1:",
                             "",
                             "2::0:0:0:1"};
    for (size_t i = 0; i < sizeof bad_mac / sizeof bad_mac[0]; i++) {
        assert_int_equal(fe_parse_mac(bad_mac[i], mac, "--mac"), -1);
        assert_int_equal(mac[0], 1);
    }
    assert_int_equal(fe_parse_mac("2:0:5E:ff:0:1b", mac, "--mac"), 0);
    const uint8_t want[6] = {2, 0, 0x5e, 0xff, 0, 0x1b};
    assert_memory_equal(mac, want, 6);

    struct fe_sc_cidr c = {0x5A5A5A5A, 0x5A5A5A5A};
    const char *bad_cidr[] = {" 1.2.3.4",   "+1.2.3.4", "1.2.3.4/ 8", "1.2.3.4/+8", "-0.0.0.0",
                              "1. 2.3.4",   "1.2.3.+4", "1.2.3.4 ",   "1.2.3.4/-0", "1.2.3.4/8 ",
                              "1234.1.1.1", "1.2.3.4/", "1.2.3",      NULL};
    for (size_t i = 0; i < sizeof bad_cidr / sizeof bad_cidr[0]; i++)
        assert_int_equal(fe_sc_cidr_parse(bad_cidr[i], &c), FE_EINVAL);
    assert_int_equal(c.net, 0x5A5A5A5A); /* a refusal writes nothing */
    assert_int_equal(fe_sc_cidr_parse("10.1.2.3/8", &c), 0);
    assert_true(c.net == 0x0A000000 && c.mask == 0xFF000000);
    assert_int_equal(fe_sc_cidr_parse("010.0.0.1", &c), 0); /* leading zeros: decimal, as before */
    assert_true(c.net == 0x0A000001 && c.mask == 0xFFFFFFFF);

    struct fe_sc_cidr list[FE_SC_MAX_ALLOW];
    unsigned n = 0;
    assert_int_equal(fe_allow_parse("10.0.0.0/8, 192.168.1.0/24,\t1.2.3.4", list, &n), 0);
    assert_int_equal(n, 3);
    assert_true(list[1].net == 0xC0A80100 && list[2].mask == 0xFFFFFFFF);
    n = 0;
    assert_int_equal(fe_allow_parse(" 10.0.0.0/8", list, &n), FE_EINVAL);
    n = 0;
    assert_int_equal(fe_allow_parse("10.0.0.0/8,+1.2.3.4", list, &n), FE_EINVAL);
    n = 0;
    assert_int_equal(fe_allow_parse("10.0.0.0 ,1.2.3.4", list, &n), FE_EINVAL);
}

static void test_getopt_manner(void **state)
{
    (void)state;
    struct t_opts o;
    assert_int_equal(PARSE(&o, true, "--name=y", "--sma", "7", "--fl", "rest"), 5);
    assert_string_equal(o.name, "y");
    assert_int_equal(o.small, 7);
    assert_true(o.flag);
    assert_int_equal(PARSE(&o, true, "--f", "x"), -1); /* --flag, --fn, --fn0 */
    assert_int_equal(PARSE(&o, true, "--nope"), -1);
    assert_int_equal(PARSE(&o, true, "--port"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_getopt_manner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
