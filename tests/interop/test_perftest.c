/* perftest's out-of-band exchange (src/io/perftest.h): codec known answers and strictness, and
 * the client conversation against a scripted server that follows ib_write_bw's order (server
 * reads each item first, then writes its own), over a socketpair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feroce/err.h"
#include "io/perftest.h"

static const char KEY_TEXT[] = "0000:0010:000011:fffff0:000002e6:00007f2274518000:"
                               "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:01:00000000:";

static struct fe_pt_dest sample_dest(void)
{
    struct fe_pt_dest d;
    memset(&d, 0, sizeof d);
    d.out_reads = 16;
    d.qpn = 0x11;
    d.psn = 0xfffff0;
    d.rkey = 0x2e6;
    d.vaddr = 0x7f2274518000ull;
    d.gid[10] = d.gid[11] = 0xff;
    d.gid[12] = 10;
    d.gid[13] = 77;
    d.gid[15] = 1;
    return d;
}

static void test_key_known_answer(void **state)
{
    (void)state;
    assert_int_equal(sizeof KEY_TEXT, FE_PT_KEY_LEN);
    uint8_t buf[FE_PT_KEY_LEN];
    struct fe_pt_dest d = sample_dest(), back;
    assert_int_equal(fe_pt_key_encode(buf, &d), 0);
    assert_memory_equal(buf, KEY_TEXT, FE_PT_KEY_LEN);
    assert_int_equal(fe_pt_key_decode((const uint8_t *)KEY_TEXT, &back), 0);
    assert_memory_equal(&back, &d, sizeof d);
    d.qpn = 0x1000000;
    assert_int_equal(fe_pt_key_encode(buf, &d), FE_EINVAL);
}

static void test_key_strict(void **state)
{
    (void)state;
    uint8_t k[FE_PT_KEY_LEN];
    struct fe_pt_dest d;
    memcpy(k, KEY_TEXT, sizeof k);
    k[3] = 'g'; /* not hex */
    assert_int_equal(fe_pt_key_decode(k, &d), FE_EPARSE);
    memcpy(k, KEY_TEXT, sizeof k);
    k[FE_PT_KEY_LEN - 1] = 'x'; /* no NUL */
    assert_int_equal(fe_pt_key_decode(k, &d), FE_EPARSE);
    memcpy(k, KEY_TEXT, sizeof k);
    k[4] = '0'; /* LID runs into OUT_READS: 9 digits > 4 */
    assert_int_equal(fe_pt_key_decode(k, &d), FE_EPARSE);
    memcpy(k, KEY_TEXT, sizeof k);
    k[FE_PT_KEY_LEN - 2] = 0; /* SRQN not ':'-terminated */
    assert_int_equal(fe_pt_key_decode(k, &d), FE_EPARSE);
    memset(k, 0, sizeof k); /* empty */
    assert_int_equal(fe_pt_key_decode(k, &d), FE_EPARSE);
    /* upper-case hex is accepted (strtol would) */
    memcpy(k, KEY_TEXT, sizeof k);
    k[22] = 'F';
    assert_int_equal(fe_pt_key_decode(k, &d), 0);
}

static void test_version_mtu_report(void **state)
{
    (void)state;
    uint8_t v[FE_PT_VERSION_LEN];
    double ver;
    fe_pt_version_encode(v);
    assert_string_equal((char *)v, FE_PT_VERSION);
    assert_int_equal(v[15], 0);
    assert_int_equal(fe_pt_version_decode(v, &ver), 0);
    assert_true(ver > 6.05 && ver < 6.07);
    memset(v, 0, sizeof v);
    memcpy(v, "5.7", 3);
    assert_int_equal(fe_pt_version_decode(v, &ver), 0);
    assert_true(ver > 5.69 && ver < 5.71);
    memcpy(v, "5.x", 3);
    assert_int_equal(fe_pt_version_decode(v, &ver), FE_EPARSE);
    memset(v, '6', sizeof v); /* no NUL */
    assert_int_equal(fe_pt_version_decode(v, &ver), FE_EPARSE);

    uint8_t m[2];
    assert_int_equal(fe_pt_mtu_encode(4096, m), 0);
    assert_int_equal(m[0], '5');
    assert_int_equal(m[1], 0);
    assert_int_equal(fe_pt_mtu_decode(m), 4096);
    assert_int_equal(fe_pt_mtu_encode(1024, m), 0);
    assert_int_equal(m[0], '3');
    assert_int_equal(fe_pt_mtu_encode(1500, m), FE_EINVAL);
    m[0] = '6';
    assert_int_equal(fe_pt_mtu_decode(m), 0);

    struct fe_pt_report r = {65536, 1000, 1.0, 2.0, -0.5}, back;
    uint8_t b[FE_PT_REPORT_LEN];
    fe_pt_report_encode(b, &r);
    const uint8_t want[16] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0xe8};
    assert_memory_equal(b, want, 16);
    const uint8_t one[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0}; /* 1.0, big-endian IEEE */
    assert_memory_equal(b + 16, one, 8);
    fe_pt_report_decode(b, &back);
    assert_memory_equal(&back, &r, sizeof r);
}

/* ---- a scripted ib_write_bw server ---- */
struct server {
    int fd;
    const char *version;
    int close_after; /* stop after this many steps (-1: never) */
    struct fe_pt_dest mine;
    /* what it saw */
    int steps, ok;
    uint8_t client_mtu[2];
    struct fe_pt_dest client_key[5];
    struct fe_pt_report client_report;
    char client_done[5];
};

static int rd(int fd, void *b, size_t n)
{
    uint8_t *p = b;
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Server order: read the client's item, then write ours. */
static int step(struct server *s, void *in, const void *out, size_t n)
{
    if (s->close_after >= 0 && s->steps >= s->close_after) return -1;
    s->steps++;
    if (rd(s->fd, in, n)) return -1;
    return write(s->fd, out, n) == (ssize_t)n ? 0 : -1;
}

static void *server_main(void *arg)
{
    struct server *s = arg;
    uint8_t v[16] = {0}, in[FE_PT_KEY_LEN], key[FE_PT_KEY_LEN], b4[4];
    memcpy(v, s->version, strlen(s->version));
    fe_pt_key_encode(key, &s->mine);
    if (step(s, in, v, 16)) goto out;
    if (step(s, b4, (const uint8_t[4]){0, 0, 0x10, 0}, 4)) goto out; /* page 4096 */
    if (step(s, b4, (const uint8_t[4]){0, 0, 0, 128}, 4)) goto out;  /* cache line 128 */
    if (step(s, s->client_mtu, "3", 2)) goto out;                    /* 1024 */
    for (int i = 0; i < 4; i++) {
        if (i == 3) { /* the client streams here */
        }
        if (step(s, in, key, sizeof key)) goto out;
        if (fe_pt_key_decode(in, &s->client_key[i])) goto out;
    }
    uint8_t rep[FE_PT_REPORT_LEN], mine[FE_PT_REPORT_LEN];
    struct fe_pt_report r = {0, 0, 0, 0, 0}; /* a server reports nothing of its own */
    fe_pt_report_encode(mine, &r);
    for (int i = 0; i < 5; i++)
        if (step(s, rep + 8 * i, mine + 8 * i, 8)) goto out;
    fe_pt_report_decode(rep, &s->client_report);
    if (step(s, in, key, sizeof key)) goto out;
    if (fe_pt_key_decode(in, &s->client_key[4])) goto out;
    if (rd(s->fd, s->client_done, 5) || write(s->fd, "done", 5) != 5) goto out;
    s->ok = 1;
out:
    close(s->fd);
    return NULL;
}

static int run_client(struct server *srv, struct fe_pt_session *ses, struct fe_pt_report *theirs)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    srv->fd = sv[1];
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, server_main, srv), 0);
    struct fe_pt_dest me = sample_dest();
    struct fe_pt_report mine = {4096, 500, 120.5, 100.25, 0.025};
    int rc = fe_pt_client_start(ses, sv[0], 4096, 64, 4096, &me);
    if (!rc) rc = fe_pt_client_sync(ses, &me);
    if (!rc) rc = fe_pt_client_finish(ses, &me, &mine, theirs);
    close(sv[0]);
    pthread_join(t, NULL);
    return rc;
}

static void test_conversation(void **state)
{
    (void)state;
    struct server srv;
    memset(&srv, 0, sizeof srv);
    srv.version = "6.10";
    srv.close_after = -1;
    srv.mine = sample_dest();
    srv.mine.qpn = 0x22;
    srv.mine.psn = 0x123456;
    srv.mine.rkey = 0xabcdef01;
    struct fe_pt_session ses;
    struct fe_pt_report theirs;
    int rc = run_client(&srv, &ses, &theirs);
    assert_int_equal(rc, 0);
    assert_true(srv.ok);
    assert_int_equal(ses.page_size, 4096);
    assert_int_equal(ses.cache_line, 128); /* the larger */
    assert_int_equal(ses.mtu_bytes, 1024); /* the smaller */
    assert_int_equal(ses.remote.qpn, 0x22);
    assert_int_equal(ses.remote.psn, 0x123456);
    assert_int_equal(ses.remote.rkey, 0xabcdef01);
    assert_int_equal(srv.client_mtu[0], '5');
    for (int i = 0; i < 5; i++) assert_int_equal(srv.client_key[i].psn, 0xfffff0);
    assert_int_equal(srv.client_report.size_bytes, 4096);
    assert_int_equal(srv.client_report.iters, 500);
    assert_true(srv.client_report.bw_avg_MBps == 100.25);
    assert_memory_equal(srv.client_done, "done", 5);
}

static void test_old_server_and_hangup(void **state)
{
    (void)state;
    struct server srv;
    struct fe_pt_session ses;
    struct fe_pt_report theirs;
    memset(&srv, 0, sizeof srv);
    srv.version = "5.60";
    srv.close_after = -1;
    srv.mine = sample_dest();
    assert_int_equal(run_client(&srv, &ses, &theirs), FE_ENOTSUP);
    for (int n = 0; n < 12; n++) { /* the server hangs up after n steps */
        memset(&srv, 0, sizeof srv);
        srv.version = "6.10";
        srv.close_after = n;
        srv.mine = sample_dest();
        assert_int_equal(run_client(&srv, &ses, &theirs), FE_EIO);
        assert_true(ses.err[0] != 0);
    }
}

/* feroce as the server against feroce as the client: the two sides of one conversation. */
struct pt_side {
    int fd;
    struct fe_pt_dest mine;
    struct fe_pt_report report, theirs;
    struct fe_pt_session ses;
    int rc;
};

static void *server_side(void *arg)
{
    struct pt_side *p = arg;
    p->rc = fe_pt_server_start(&p->ses, p->fd, 4096, 64, 1024, &p->mine);
    if (!p->rc) p->rc = fe_pt_client_sync(&p->ses, &p->mine);
    if (!p->rc) p->rc = fe_pt_client_finish(&p->ses, &p->mine, &p->report, &p->theirs);
    return NULL;
}

static void test_server_role(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct pt_side srv = {.fd = sv[1], .mine = sample_dest()}, cli = {.fd = sv[0]};
    srv.mine.qpn = 0x22;
    srv.mine.rkey = 0x5eed;
    cli.mine = sample_dest();
    cli.report = (struct fe_pt_report){65536, 200, 900.0, 850.5, 0.0136};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, server_side, &srv), 0);
    cli.rc = fe_pt_client_start(&cli.ses, cli.fd, 8192, 128, 4096, &cli.mine);
    if (!cli.rc) cli.rc = fe_pt_client_sync(&cli.ses, &cli.mine);
    if (!cli.rc) cli.rc = fe_pt_client_finish(&cli.ses, &cli.mine, &cli.report, &cli.theirs);
    pthread_join(t, NULL);
    close(sv[0]);
    close(sv[1]);
    assert_int_equal(cli.rc, 0);
    assert_int_equal(srv.rc, 0);
    assert_true(srv.ses.server && !cli.ses.server);
    assert_int_equal(srv.ses.mtu_bytes, 1024); /* the smaller, on both sides */
    assert_int_equal(cli.ses.mtu_bytes, 1024);
    assert_int_equal(srv.ses.page_size, 8192); /* the larger */
    assert_int_equal(cli.ses.remote.qpn, 0x22);
    assert_int_equal(cli.ses.remote.rkey, 0x5eed);
    assert_int_equal(srv.ses.remote.psn, 0xfffff0);
    assert_int_equal(srv.theirs.iters, 200);
    assert_true(srv.theirs.bw_avg_MBps == 850.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_known_answer),      cmocka_unit_test(test_key_strict),
        cmocka_unit_test(test_version_mtu_report),    cmocka_unit_test(test_conversation),
        cmocka_unit_test(test_old_server_and_hangup), cmocka_unit_test(test_server_role),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
