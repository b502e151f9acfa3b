/* feroce sweep: spec expansion, validation, resume, failure handling, merge of Slurm results,
 * the result format and the report expressions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep/sweep.h"

static char tmpdir[256];

static int make_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/feroce-sweep-test-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* the crash test's abort() */
    return 0;
}

static int remove_tmp(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes text to tmpdir/name and loads it as a campaign. */
static int load(const char *name, const char *text, struct sw_campaign *c, char *err, size_t cap)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return sw_campaign_load(path, c, err, cap);
}

static const char minimal[] = "scenario: advcam-dcqcn\n"
                              "set: {flow.size: 2MB}\n"
                              "grid:\n"
                              "  link.delay: [1us, 2us]\n"
                              "  host.mtu: [1024, 4096]\n"
                              "seeds: 1\n";

static void test_expand_grid(void **state)
{
    (void)state;
    struct sw_campaign c;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(load("min.yaml", minimal, &c, err, sizeof(err)), 0);
    assert_int_equal(c.n_points, 4);
    assert_int_equal(c.spec.n_params, 2);
    assert_string_equal(c.spec.params[0].col, "link_delay");
    assert_int_equal(c.spec.params[0].type, SW_COL_INT);
    /* first parameter slowest */
    assert_string_equal(c.points[0].values[0], "1us");
    assert_string_equal(c.points[0].values[1], "1024");
    assert_string_equal(c.points[1].values[1], "4096");
    assert_string_equal(c.points[3].values[0], "2us");
    assert_true(c.points[0].has_seed);
    assert_int_equal(c.points[0].seed, 1);
    for (uint32_t i = 0; i < 4; i++)
        for (uint32_t j = i + 1; j < 4; j++)
            assert_string_not_equal(c.points[i].id, c.points[j].id);
    /* the ids depend on the values, not on the order the campaign lists the parameters */
    struct sw_campaign d;
    assert_int_equal(load("swapped.yaml",
                          "scenario: advcam-dcqcn\nset: {flow.size: 2MB}\ngrid:\n"
                          "  host.mtu: [4096, 1024]\n  link.delay: [2us, 1us]\nseeds: 1\n",
                          &d, err, sizeof(err)),
                     0);
    assert_string_equal(d.points[0].id, c.points[3].id);
    assert_string_equal(d.points[3].id, c.points[0].id);
    sw_campaign_free(&d);
    /* another base: other ids */
    assert_int_equal(load("other.yaml",
                          "scenario: advcam-dcqcn\nset: {flow.size: 3MB}\ngrid:\n"
                          "  link.delay: [1us, 2us]\n  host.mtu: [1024, 4096]\nseeds: 1\n",
                          &d, err, sizeof(err)),
                     0);
    assert_string_not_equal(d.points[0].id, c.points[0].id);
    sw_campaign_free(&d);
    sw_campaign_free(&c);
}

static void test_expand_range_samples_seeds(void **state)
{
    (void)state;
    struct sw_campaign c;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(load("r.yaml",
                          "scenario: advcam-dcqcn\n"
                          "grid:\n  red.kmin: {from: 5KB, to: 20KB, step: 5KB}\n"
                          "sample:\n  method: lhs\n  n: 8\n  seed: 7\n"
                          "  params:\n    rpg_ai_rate: {min: 5, max: 80}\n"
                          "    link.delay: [0.5us, 4us]\n"
                          "seeds: [3, 9]\n",
                          &c, err, sizeof(err)),
                     0);
    assert_int_equal(c.n_points, 4 * 8 * 2);
    assert_string_equal(c.spec.params[0].values[0], "5KB");
    assert_string_equal(c.spec.params[0].values[3], "20KB");
    assert_int_equal(c.points[0].seed, 3);
    assert_int_equal(c.points[1].seed, 9);
    assert_int_equal(c.spec.params[1].type, SW_COL_INT); /* integer bounds: whole samples */
    assert_int_equal(c.spec.params[2].type, SW_COL_REAL);
    /* Latin hypercube: each of the 8 strata of [5, 80] holds exactly one sample */
    int strata[8] = {0};
    for (uint32_t k = 0; k < 8; k++) {
        double v = atof(c.points[k * 2].values[1]);
        assert_true(v >= 5 && v <= 80);
        int s = (int)((v - 5) / (75.0 / 8));
        strata[s > 7 ? 7 : s]++;
    }
    for (int s = 0; s < 8; s++) assert_true(strata[s] >= 0 && strata[s] <= 2);
    /* the same seed draws the same samples */
    struct sw_campaign d;
    assert_int_equal(load("r2.yaml", c.spec.text, &d, err, sizeof(err)), 0);
    for (uint32_t k = 0; k < c.n_points; k++) assert_string_equal(c.points[k].id, d.points[k].id);
    sw_campaign_free(&d);
    sw_campaign_free(&c);
}

static void expect_refused(const char *text, const char *fragment)
{
    struct sw_campaign c;
    char err[SW_ERR_LEN] = "";
    assert_int_not_equal(load("bad.yaml", text, &c, err, sizeof(err)), 0);
    if (!strstr(err, fragment)) fail_msg("'%s' does not say '%s'", err, fragment);
}

/* A long range (tens of thousands of values, as fuzz_sweep_spec's range_40k_values seed) and a
 * long list of seeds parse in one pass, every value in place across the arrays' growth steps. */
static void test_long_range_and_seed_list(void **state)
{
    (void)state;
    struct sw_campaign c;
    memset(&c, 0, sizeof(c));
    char err[SW_ERR_LEN] = "";
    char text[1024];
    size_t n = (size_t)snprintf(text, sizeof(text), "%s",
                                "scenario: incast3\n"
                                "grid:\n  red.kmin: {from: 5KB, to: 202020KB, step: 5KB}\n"
                                "seeds: [");
    for (int i = 1; i <= 70; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%d", i > 1 ? ", " : "", i);
    snprintf(text + n, sizeof(text) - n, "]\n");
    assert_int_equal(sw_spec_parse(text, strlen(text), "long.yaml", "", &c.spec, err, sizeof(err)),
                     0);
    assert_int_equal(c.spec.params[0].n_values, 40404);
    assert_string_equal(c.spec.params[0].values[0], "5KB");
    assert_string_equal(c.spec.params[0].values[1024], "5125KB");
    assert_string_equal(c.spec.params[0].values[40403], "202020KB");
    assert_int_equal(c.spec.n_seeds, 70);
    for (uint32_t i = 0; i < 70; i++) assert_int_equal(c.spec.seeds[i], i + 1);
    sw_campaign_free(&c);
}

/* "[v0, v1, ...]" of n values, "1".."n" but for value dup_at, which repeats value dup_of. */
static char *long_list(const char *head, uint32_t n, uint32_t dup_at, uint32_t dup_of)
{
    size_t cap = strlen(head) + 16 * (size_t)n + 8, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t, cap, "%s[", head);
    for (uint32_t i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%u", i ? ", " : "",
                                (i == dup_at ? dup_of : i) + 1);
    snprintf(t + len, cap - len, "]\n");
    return t;
}

/* A hand-written list of the most values a parameter may have: each is compared with the
 * earlier ones through a hash set (not each with each: 5e9 comparisons), and the first value
 * that repeats an earlier one is the one reported, as when lists were short. */
static void test_long_lists(void **state)
{
    (void)state;
    struct sw_campaign c;
    memset(&c, 0, sizeof(c));
    char err[SW_ERR_LEN] = "";
    const char *grid = "scenario: incast3\ngrid:\n  flow.size: ";
    char *t = long_list(grid, 100000, UINT32_MAX, 0);
    assert_int_equal(sw_spec_parse(t, strlen(t), "l.yaml", "", &c.spec, err, sizeof(err)), 0);
    assert_int_equal(c.spec.params[0].n_values, 100000);
    assert_string_equal(c.spec.params[0].values[99999], "100000");
    sw_campaign_free(&c);
    free(t);

    t = long_list(grid, 100001, UINT32_MAX, 0);
    assert_int_not_equal(sw_spec_parse(t, strlen(t), "l.yaml", "", &c.spec, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "flow.size: more than 100000 values"));
    sw_campaign_free(&c);
    free(t);

    /* value 95001 repeats the very first, 70001 repeats 60001: the first to repeat an earlier
     * one in the list's order is reported, as before */
    t = long_list(grid, 100000, 95000, 0);
    char *q = strstr(t, ", 60001,");
    assert_non_null(q);
    memcpy(q + 2, "00007", 5); /* "00007": another string than "7" */
    q = strstr(t, ", 70001,");
    assert_non_null(q);
    memcpy(q + 2, "00007", 5);
    assert_int_not_equal(sw_spec_parse(t, strlen(t), "l.yaml", "", &c.spec, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "flow.size: value '00007' twice"));
    sw_campaign_free(&c);
    free(t);

    t = long_list("scenario: incast3\nseeds: ", 100000, 99999, 4);
    assert_int_not_equal(sw_spec_parse(t, strlen(t), "l.yaml", "", &c.spec, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "seeds: 5 twice"));
    sw_campaign_free(&c);
    free(t);
    t = long_list("scenario: incast3\nseeds: ", 100000, UINT32_MAX, 0);
    assert_int_equal(sw_spec_parse(t, strlen(t), "l.yaml", "", &c.spec, err, sizeof(err)), 0);
    assert_int_equal(c.spec.n_seeds, 100000);
    assert_int_equal(c.spec.seeds[99999], 100000);
    sw_campaign_free(&c);
    free(t);
}

/* A YAML base scenario, relative to the campaign: the ids are the same whichever path the
 * campaign is read through (the Slurm job reads it by its absolute path). */
static void test_yaml_base_ids(void **state)
{
    (void)state;
    char src[600], dst[600], cmd[1400];
    snprintf(src, sizeof(src), "%s/incast4.yaml", SIM_DATA);
    snprintf(dst, sizeof(dst), "%s/sub", tmpdir);
    mkdir(dst, 0777);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s/incast4.yaml'", src, dst);
    assert_int_equal(system(cmd), 0);
    struct sw_campaign a, b;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(load("sub/c.yaml",
                          "scenario: incast4.yaml\nset: {flow.size: 1MB}\n"
                          "grid:\n  red.kmax: [100KB, 400KB]\n",
                          &a, err, sizeof(err)),
                     0);
    char cwd[600];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(tmpdir), 0);
    int rc = sw_campaign_load("./sub/c.yaml", &b, err, sizeof(err));
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(a.n_points, 2);
    assert_string_equal(a.points[1].id, b.points[1].id);
    assert_true(a.base.n_flows == 4 && a.base.flows[0].bytes == 1000000);
    sw_campaign_free(&a);
    sw_campaign_free(&b);
}

static void test_refused_up_front(void **state)
{
    (void)state;
    expect_refused("scenario: incast3\ngrid:\n  link.dealy: [1us]\n", "link.dealy");
    expect_refused("scenario: incast3\ngrid:\n  host.mtu: [1024, 9000]\n", "9000");
    expect_refused("scenario: incast3\nset: {switch.buffer: lots}\n", "switch.buffer");
    expect_refused("scenario: incast3\ngrid:\n  rpg_ai_rate: [5, x]\n", "rpg_ai_rate");
    expect_refused("scenario: incast3-nocc\ngrid:\n  rpg_ai_rate: [5]\n", "congestion control");
    expect_refused("scenario: incast3\ngrid:\n  nosuch: [1]\n", "nosuch");
    expect_refused("scenario: nosuch\n", "nosuch");
    expect_refused("grid:\n  host.mtu: [1024]\n", "give one base");
    expect_refused("scenario: incast3\nsurprise: 1\n", "unknown key 'surprise'");
    expect_refused("scenario: incast3\ngrid:\n  host.mtu: [1024, 1024]\n", "twice");
    expect_refused("scenario: incast3\ngrid:\n  red.kmin: {from: 5KB, to: 1MB, step: 0KB}\n",
                   "step");
    expect_refused("scenario: incast3\nsample:\n  params:\n    host.mtu: [256, 4096]\n", "n ");
    expect_refused("scenario: incast3\ngrid: &a\n  host.mtu: [1024]\nset: *a\n", "alias");
}

/* ---- running ---- */

static void db_path(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
    char side[600];
    unlink(out);
    snprintf(side, sizeof(side), "%s-wal", out);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", out);
    unlink(side);
}

/* The runs and flows tables without the wall-clock columns, as text. */
static char *dump(const char *path)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT * FROM runs ORDER BY id", -1, &st, NULL), 0);
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const char *name = sqlite3_column_name(st, i);
            if (!strcmp(name, "wall_s") || !strcmp(name, "cpu_s")) continue;
            const unsigned char *t = sqlite3_column_text(st, i);
            fprintf(m, "%s=%s|", name, t ? (const char *)t : "NULL");
        }
        fputc('\n', m);
    }
    sqlite3_finalize(st);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT * FROM flows ORDER BY run_id, flow", -1, &st, NULL), 0);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const unsigned char *t = sqlite3_column_text(st, i);
            fprintf(m, "%s|", t ? (const char *)t : "NULL");
        }
        fputc('\n', m);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    fclose(m);
    return out;
}

static char *run_all(const char *campaign, const char *text, const char *db, uint32_t stop_after,
                     struct sw_run_stats *st)
{
    struct sw_campaign c;
    char err[SW_ERR_LEN] = "", path[600];
    assert_int_equal(load(campaign, text, &c, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/%s", tmpdir, db);
    struct sw_store *s = sw_store_open(path, &c, err, sizeof(err));
    assert_non_null(s);
    struct sw_run_opts o = {.workers = 2, .progress = 0, .quiet = true, .stop_after = stop_after};
    assert_int_equal(sw_run_local(&c, s, &o, st, err, sizeof(err)), 0);
    sw_store_close(s);
    sw_campaign_free(&c);
    return dump(path);
}

static void test_run_and_resume(void **state)
{
    (void)state;
    char p[600];
    struct sw_run_stats st;
    db_path("whole.db", p, sizeof(p));
    char *whole = run_all("min.yaml", minimal, "whole.db", 0, &st);
    assert_int_equal(st.ran, 4);
    assert_int_equal(st.ok, 4);
    /* half, then the rest: the same database, and nothing is run twice */
    db_path("halves.db", p, sizeof(p));
    free(run_all("min.yaml", minimal, "halves.db", 2, &st));
    assert_int_equal(st.ran, 2);
    char *halves = run_all("min.yaml", minimal, "halves.db", 0, &st);
    assert_int_equal(st.stored_before, 2);
    assert_int_equal(st.ran, 2);
    assert_string_equal(whole, halves);
    free(halves);
    halves = run_all("min.yaml", minimal, "halves.db", 0, &st);
    assert_int_equal(st.ran, 0);
    assert_int_equal(st.stored_before, 4);
    assert_string_equal(whole, halves);
    free(whole);
    free(halves);
    /* another campaign does not go into this database */
    struct sw_campaign c;
    char err[SW_ERR_LEN];
    assert_int_equal(
        load("o.yaml", "scenario: incast3\ngrid:\n  host.mtu: [1024]\n", &c, err, sizeof(err)), 0);
    snprintf(p, sizeof(p), "%s/halves.db", tmpdir);
    assert_null(sw_store_open(p, &c, err, sizeof(err)));
    assert_non_null(strstr(err, "another campaign"));
    sw_campaign_free(&c);
}

static void test_failures_are_stored(void **state)
{
    (void)state;
    /* switch.buffer 1KB: the scenario cannot be built (smaller than its headroom) */
    static const char text[] = "scenario: advcam-dcqcn\nset: {flow.size: 1MB}\n"
                               "grid:\n  switch.buffer: [1KB, 12MB, 16MB]\n";
    char p[600];
    struct sw_run_stats st;
    db_path("fail.db", p, sizeof(p));
    setenv("FEROCE_SWEEP_CRASH_INDEX", "2", 1); /* and the third point aborts */
    free(run_all("fail.yaml", text, "fail.db", 0, &st));
    unsetenv("FEROCE_SWEEP_CRASH_INDEX");
    assert_int_equal(st.ran, 3);
    assert_int_equal(st.ok, 1);
    assert_int_equal(st.failed, 2);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT status, error FROM runs ORDER BY idx", -1, &q, NULL), 0);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "failed");
    assert_non_null(strstr((const char *)sqlite3_column_text(q, 1), "buffer"));
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "failed");
    assert_non_null(strstr((const char *)sqlite3_column_text(q, 1), "signal"));
    sqlite3_finalize(q);
    sqlite3_close(db);
    /* a failed point is stored: not rerun, unless asked */
    free(run_all("fail.yaml", text, "fail.db", 0, &st));
    assert_int_equal(st.ran, 0);
    struct sw_campaign c;
    char err[SW_ERR_LEN];
    assert_int_equal(load("fail.yaml", text, &c, err, sizeof(err)), 0);
    struct sw_store *s = sw_store_open(p, &c, err, sizeof(err));
    struct sw_run_opts o = {.workers = 2, .progress = 0, .quiet = true, .retry_failed = true};
    assert_int_equal(sw_run_local(&c, s, &o, &st, err, sizeof(err)), 0);
    assert_int_equal(st.ran, 2);
    assert_int_equal(st.ok, 1); /* the abort was the test's; the tiny buffer still fails */
    sw_store_close(s);
    sw_campaign_free(&c);
}

/* A point over the campaign's wall-clock timeout is killed and stored as failed. */
static void test_timeout(void **state)
{
    (void)state;
    static const char text[] = "scenario: advcam-dcqcn\ntimeout: 1\n"
                               "grid:\n  flow.size: [1MB, 5000MB]\n";
    char p[600];
    struct sw_run_stats st;
    db_path("timeout.db", p, sizeof(p));
    free(run_all("timeout.yaml", text, "timeout.db", 0, &st));
    assert_int_equal(st.ok, 1);
    assert_int_equal(st.failed, 1);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT error FROM runs WHERE status = 'failed'", -1, &q, NULL), 0);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_non_null(strstr((const char *)sqlite3_column_text(q, 0), "timed out"));
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* Two "Slurm tasks" write result files; collect merges them (twice: idempotent) into the
 * same database as a local run. */
static void test_task_and_collect(void **state)
{
    (void)state;
    char p[600], local_db[600], err[SW_ERR_LEN] = "";
    struct sw_run_stats st;
    db_path("local.db", local_db, sizeof(local_db));
    char *local = run_all("min.yaml", minimal, "local.db", 0, &st);
    struct sw_campaign c;
    assert_int_equal(load("min.yaml", minimal, &c, err, sizeof(err)), 0);
    db_path("cluster.db", p, sizeof(p));
    char dir[700];
    sw_results_dir(p, dir, sizeof(dir));
    assert_string_equal(dir + strlen(dir) - 16, "/cluster.results");
    mkdir(dir, 0777);
    /* the pending list, as run --slurm writes it */
    char pend[800];
    snprintf(pend, sizeof(pend), "%s/pending", dir);
    FILE *f = fopen(pend, "w");
    fprintf(f, "feroce-sweep-pending 1 4 2\n");
    for (uint32_t k = 0; k < 4; k++) fprintf(f, "%u %s\n", k, c.points[k].id);
    fclose(f);
    assert_int_equal(sw_slurm_task(&c, dir, 0, 1, err, sizeof(err)), 0);
    assert_int_equal(sw_slurm_task(&c, dir, 1, 2, err, sizeof(err)), 0);
    assert_int_not_equal(sw_slurm_task(&c, dir, 2, 1, err, sizeof(err)), 0);
    struct sw_store *s = sw_store_open(p, &c, err, sizeof(err));
    assert_non_null(s);
    uint32_t added, files;
    assert_int_equal(sw_collect(&c, s, dir, &added, &files, err, sizeof(err)), 0);
    assert_int_equal(added, 4);
    assert_int_equal(files, 4);
    assert_int_equal(sw_collect(&c, s, dir, &added, &files, err, sizeof(err)), 0);
    assert_int_equal(added, 0);
    /* a half-written file (a task killed mid-write) is never taken */
    char half[800];
    snprintf(half, sizeof(half), "%s/0123456789abcdef.res", dir);
    f = fopen(half, "w");
    fputs("feroce-sweep-result 2\nid 0123456789abcdef\nstatus ok\n", f);
    fclose(f);
    assert_int_equal(sw_collect(&c, s, dir, &added, &files, err, sizeof(err)), 0);
    assert_int_equal(added, 0);
    sw_store_close(s);
    sw_campaign_free(&c);
    char *cluster = dump(p);
    assert_string_equal(local, cluster);
    free(local);
    free(cluster);
}

static void test_result_text(void **state)
{
    (void)state;
    struct sw_result r, back;
    sw_result_init(&r, "00112233445566aa");
    r.m[SW_M_jain] = 0.5;
    r.m[SW_M_events] = 12345;
    r.wall_s = 1.5;
    r.n_flows = 2;
    r.flows = calloc(2, sizeof(*r.flows));
    r.flows[1][SW_F_bytes] = 1e6;
    sw_result_fail(&r, "two\nlines");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_int_equal(sw_result_write(m, &r), 0);
    fclose(m);
    char err[128];
    assert_int_equal(sw_result_parse(text, len, &back, err, sizeof(err)), 0);
    assert_string_equal(back.id, r.id);
    assert_int_equal(back.status, SW_FAILED);
    assert_string_equal(back.error, "two lines");
    assert_true(back.m[SW_M_jain] == 0.5);
    assert_true(back.m[SW_M_peak_queue] != back.m[SW_M_peak_queue]); /* NaN */
    assert_int_equal(back.n_flows, 2);
    assert_true(back.flows[1][SW_F_bytes] == 1e6);
    sw_result_free(&back);
    /* every truncation is refused */
    for (size_t n = 0; n < len; n++)
        assert_int_not_equal(sw_result_parse(text, n, &back, err, sizeof(err)), 0);
    /* a result of the format before the event-building metrics is refused by name */
    text[strlen("feroce-sweep-result ")] = '1';
    assert_int_not_equal(sw_result_parse(text, len, &back, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "another version"));
    free(text);
    sw_result_free(&r);
}

static void test_expressions(void **state)
{
    (void)state;
    static const char *const cols[] = {"jain", "peak_queue", "link_delay", "status", "host_mtu"};
    struct sw_sql q;
    char err[256];
    assert_int_equal(
        sw_expr_to_sql("jain >= 0.99 and peak_queue < 200KB", false, cols, 5, &q, err, sizeof(err)),
        0);
    assert_string_equal(q.text, "(\"jain\" >= ? AND \"peak_queue\" < ?)");
    assert_int_equal(q.n_binds, 2);
    assert_true(q.binds[0].num == 0.99);
    assert_true(q.binds[1].num == 200000);
    sw_sql_free(&q);
    assert_int_equal(sw_expr_to_sql("not (link_delay == 2us or status != 'ok') and -jain*2 < 1",
                                    false, cols, 5, &q, err, sizeof(err)),
                     0);
    assert_string_equal(q.text,
                        "(NOT (\"link_delay\" = ? OR \"status\" != ?) AND -\"jain\" * ? < ?)");
    assert_true(q.binds[0].num == 2000);
    assert_string_equal(q.binds[1].str, "ok");
    sw_sql_free(&q);
    assert_int_equal(sw_expr_to_sql("peak_queue desc, jain", true, cols, 5, &q, err, sizeof(err)),
                     0);
    assert_string_equal(q.text, "\"peak_queue\" DESC, \"jain\"");
    sw_sql_free(&q);
    static const char *const bad[] = {"jain >= ",     "nosuch > 1", "jain > 1; DROP TABLE runs",
                                      "jain > 1 1",   "(jain > 1",  "jain > 5parsecs",
                                      "jain > 'open", "",           "jain desc",
                                      "jain \"x\"",   "jain > 0x10"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (!sw_expr_to_sql(bad[i], false, cols, 5, &q, err, sizeof(err)))
            fail_msg("'%s' was accepted as %s", bad[i], q.text);
    char deep[400];
    memset(deep, '(', sizeof(deep) - 1);
    deep[sizeof(deep) - 1] = 0;
    assert_int_not_equal(sw_expr_to_sql(deep, false, cols, 5, &q, err, sizeof(err)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand_grid),
        cmocka_unit_test(test_expand_range_samples_seeds),
        cmocka_unit_test(test_yaml_base_ids),
        cmocka_unit_test(test_refused_up_front),
        cmocka_unit_test(test_run_and_resume),
        cmocka_unit_test(test_failures_are_stored),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_task_and_collect),
        cmocka_unit_test(test_result_text),
        cmocka_unit_test(test_expressions),
        cmocka_unit_test(test_long_range_and_seed_list),
        cmocka_unit_test(test_long_lists),
    };
    return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}
