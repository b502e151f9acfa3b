/* Campaigns on a Slurm cluster. `run --slurm` writes the pending points to DB.results/pending
 * and submits one job array (sbatch --array); task i of K runs the pending points i, i+K, ...
 * (`feroce sweep task`), each in a forked worker as locally, and writes one result file per
 * point (a temporary name, then rename: a file is whole or absent). The tasks never open the
 * database, so nothing on the shared filesystem is locked; `collect` inserts the files with
 * INSERT OR IGNORE, as many times as one likes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep/sweep.h"

#define PENDING_MAGIC "feroce-sweep-pending 1"
#define MAX_TASKS     1000u /* Slurm's default MaxArraySize is 1001 */

void sw_results_dir(const char *db_path, char *out, size_t cap)
{
    size_t n = strlen(db_path);
    if (n > 3 && !strcmp(db_path + n - 3, ".db")) n -= 3;
    snprintf(out, cap, "%.*s.results", (int)n, db_path);
}

static int mkdir_p(const char *path)
{
    return mkdir(path, 0777) && errno != EEXIST ? -1 : 0;
}

/* Writes path whole (temporary name, fsync, rename) from a memory buffer. */
static int write_whole(const char *path, const char *data, size_t len)
{
    char tmp[4400];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) return -1;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return -1;
        }
        off += (size_t)w;
    }
    if (fsync(fd) | close(fd) || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int run_program(char *const *argv, char *err, size_t err_cap)
{
    extern char **environ;
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc) {
        snprintf(err, err_cap, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        snprintf(err, err_cap, "%s failed (status %d)", argv[0],
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return 0;
}

static char *abs_path(const char *p)
{
    char *r = realpath(p, NULL);
    return r ? r : strdup(p);
}

/* The shell script each array task runs (paths quoted for sh). */
static int write_job(const char *path, const char *exe, const char *campaign, const char *db)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return -1;
    fputs("#!/bin/sh\n# feroce sweep: one task of the job array (feroce sweep task)\nexec", m);
    const char *args[] = {exe, "sweep", "task", campaign, "--db", db};
    for (int i = 0; i < 6; i++) {
        fputs(" '", m);
        for (const char *s = args[i]; *s; s++) {
            if (*s == '\'')
                fputs("'\\''", m);
            else
                fputc(*s, m);
        }
        fputc('\'', m);
    }
    fputc('\n', m);
    fclose(m);
    int rc = write_whole(path, text, len);
    free(text);
    return rc ? rc : chmod(path, 0755);
}

static int write_pending(const char *path, const struct sw_campaign *c, const uint32_t *idx,
                         uint32_t n, uint32_t tasks)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return -1;
    fprintf(m, PENDING_MAGIC " %u %u\n", n, tasks);
    for (uint32_t k = 0; k < n; k++) fprintf(m, "%u %s\n", idx[k], c->points[idx[k]].id);
    fclose(m);
    int rc = write_whole(path, text, len);
    free(text);
    return rc;
}

struct argv {
    char *v[96];
    int n;
    bool full;
};

static void add_arg(struct argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_arg(struct argv *a, const char *fmt, ...)
{
    char buf[4600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (a->n + 1 >= (int)(sizeof(a->v) / sizeof(a->v[0])) || !(a->v[a->n] = strdup(buf)))
        a->full = true;
    else
        a->n++;
}

/* sbatch --array=0-(tasks-1) ... DIR/job.sh */
static void sbatch_argv(struct argv *a, const struct sw_slurm_opts *o, const char *dir,
                        uint32_t tasks)
{
    add_arg(a, "%s", o->sbatch ? o->sbatch : "sbatch");
    add_arg(a, "--array=0-%u", tasks - 1);
    add_arg(a, "--job-name=feroce-sweep");
    add_arg(a, "--output=%s/logs/%%A_%%a.out", dir);
    add_arg(a, "--chdir=%s", dir);
    if (o->partition) add_arg(a, "--partition=%s", o->partition);
    if (o->wait) add_arg(a, "--wait");
    for (const char *p = o->extra ? o->extra : ""; *p;) {
        size_t l = strcspn(p, " ");
        if (l) add_arg(a, "%.*s", (int)l, p);
        p += l;
        while (*p == ' ') p++;
    }
    add_arg(a, "%s/job.sh", dir);
}

/* The points neither stored nor waiting in a result file. */
static uint32_t *pending_points(const struct sw_campaign *c, struct sw_store *s, const char *dir,
                                uint32_t *n)
{
    uint32_t *idx = malloc((c->n_points ? c->n_points : 1) * sizeof(*idx));
    *n = 0;
    for (uint32_t k = 0; idx && k < c->n_points; k++) {
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s.res", dir, c->points[k].id);
        if (!sw_store_has(s, c->points[k].id, NULL) && access(path, F_OK)) idx[(*n)++] = k;
    }
    return idx;
}

/* DIR/, DIR/logs/, DIR/pending and DIR/job.sh */
static int prepare_dir(const struct sw_campaign *c, const char *dir, const char *self_exe,
                       const char *campaign, const char *db, const uint32_t *idx, uint32_t n,
                       uint32_t tasks, char *err, size_t err_cap)
{
    char path[4400];
    snprintf(path, sizeof(path), "%s/logs", dir);
    if (mkdir_p(dir) || mkdir_p(path)) {
        snprintf(err, err_cap, "%.400s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/pending", dir);
    if (write_pending(path, c, idx, n, tasks)) {
        snprintf(err, err_cap, "%.400s: cannot write", path);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/job.sh", dir);
    if (write_job(path, self_exe, campaign, db)) {
        snprintf(err, err_cap, "%.400s: cannot write", path);
        return -1;
    }
    return 0;
}

int sw_slurm_submit(const struct sw_campaign *c, const char *db_path, struct sw_store *s,
                    const struct sw_slurm_opts *o, const char *self_exe, char *err, size_t err_cap)
{
    char dir[4200];
    sw_results_dir(db_path, dir, sizeof(dir));
    uint32_t n;
    uint32_t *idx = pending_points(c, s, dir, &n);
    if (!idx) return -1;
    if (!n) {
        free(idx);
        printf("nothing to submit: every point is stored or has a result to collect\n");
        return 0;
    }
    uint32_t tasks = o->array_max ? o->array_max : MAX_TASKS;
    if (tasks > n) tasks = n;
    char *campaign = abs_path(c->spec.path), *db = abs_path(db_path);
    int rc = prepare_dir(c, dir, self_exe, campaign, db, idx, n, tasks, err, err_cap);
    free(idx);
    char *adir = abs_path(dir);
    struct argv a = {.n = 0};
    if (!rc) {
        sbatch_argv(&a, o, adir, tasks);
        if (a.full) {
            snprintf(err, err_cap, "too many sbatch arguments");
            rc = -1;
        }
    }
    if (!rc) {
        printf("submitting %u points as %u array tasks: results in %s\n", n, tasks, adir);
        fflush(stdout);
        rc = run_program(a.v, err, err_cap);
    }
    for (int i = 0; i < a.n; i++) free(a.v[i]);
    if (!rc && o->wait) {
        uint32_t added, files;
        rc = sw_collect(c, s, dir, &added, &files, err, err_cap);
        if (!rc) printf("collected %u result files: %u new points\n", files, added);
    } else if (!rc) {
        printf("when the job is done: feroce sweep collect %s --db %s\n", campaign, db);
    }
    free(campaign);
    free(db);
    free(adir);
    return rc;
}

/* ---- the task ---- */

struct task_ctx {
    const char *dir;
    char err[SW_ERR_LEN];
};

static int write_result_file(void *user, const struct sw_point *p, const struct sw_result *r)
{
    struct task_ctx *t = user;
    char path[4400], *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return -1;
    sw_result_write(m, r);
    fclose(m);
    snprintf(path, sizeof(path), "%s/%s.res", t->dir, p->id);
    int rc = write_whole(path, text, len);
    free(text);
    if (rc) snprintf(t->err, sizeof(t->err), "%.400s: cannot write: %s", path, strerror(errno));
    return rc;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap) {
            cap = cap ? cap * 2 : 16384;
            char *nb = cap > (256u << 20) ? NULL : realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + *len, 1, cap - *len, f);
        *len += r;
        if (!r) break;
    }
    fclose(f);
    buf[*len] = 0;
    return buf;
}

int sw_slurm_task(const struct sw_campaign *c, const char *results_dir, long task, int workers,
                  char *err, size_t err_cap)
{
    char path[4400];
    snprintf(path, sizeof(path), "%s/pending", results_dir);
    size_t len;
    char *text = read_all(path, &len);
    unsigned n, tasks;
    int off = 0;
    if (!text || sscanf(text, PENDING_MAGIC " %u %u\n%n", &n, &tasks, &off) != 2 || !off ||
        !tasks) {
        free(text);
        snprintf(err, err_cap, "%s: missing or not a pending list (feroce sweep run --slurm)",
                 path);
        return -1;
    }
    if (task >= (long)tasks) {
        free(text);
        snprintf(err, err_cap, "task %ld of %u: no such task", task, tasks);
        return -1;
    }
    uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx)), mine = 0;
    const char *p = text + off;
    for (unsigned k = 0; idx && k < n; k++) {
        unsigned i;
        char id[SW_ID_LEN];
        int used = 0;
        if (sscanf(p, "%u %16s\n%n", &i, id, &used) != 2 || !used || i >= c->n_points ||
            strcmp(id, c->points[i].id)) {
            snprintf(err, err_cap,
                     "%s: line %u does not match the campaign (was it edited "
                     "after the submission?)",
                     path, k + 2);
            free(idx);
            free(text);
            return -1;
        }
        p += used;
        snprintf(path, sizeof(path), "%s/%s.res", results_dir, id);
        if (k % tasks == (unsigned)task && access(path, F_OK)) idx[mine++] = i;
    }
    free(text);
    if (!idx) return -1;
    struct task_ctx t = {.dir = results_dir};
    int rc = mine ? sw_run_points(c, idx, mine, workers, 0, write_result_file, &t, NULL) : 0;
    free(idx);
    if (rc) snprintf(err, err_cap, "%s", t.err[0] ? t.err : "interrupted");
    return rc ? -1 : 0;
}

/* ---- collect ---- */

static int cmp_id(const void *a, const void *b)
{
    const struct sw_point *const *x = a, *const *y = b;
    return strcmp((*x)->id, (*y)->id);
}

int sw_collect(const struct sw_campaign *c, struct sw_store *s, const char *results_dir,
               uint32_t *added, uint32_t *files, char *err, size_t err_cap)
{
    *added = *files = 0;
    DIR *d = opendir(results_dir);
    if (!d) {
        snprintf(err, err_cap, "%s: %s", results_dir, strerror(errno));
        return -1;
    }
    const struct sw_point **by_id = malloc((c->n_points ? c->n_points : 1) * sizeof(*by_id));
    if (!by_id) {
        closedir(d);
        return -1;
    }
    for (uint32_t k = 0; k < c->n_points; k++) by_id[k] = &c->points[k];
    qsort(by_id, c->n_points, sizeof(*by_id), cmp_id);
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l != SW_ID_LEN - 1 + 4 || strcmp(e->d_name + SW_ID_LEN - 1, ".res")) continue;
        char path[4400], msg[128];
        snprintf(path, sizeof(path), "%s/%s", results_dir, e->d_name);
        size_t len;
        char *text = read_all(path, &len);
        struct sw_result r;
        if (!text || sw_result_parse(text, len, &r, msg, sizeof(msg))) {
            fprintf(stderr, "feroce sweep collect: %s: skipped (%s)\n", path,
                    text ? msg : strerror(errno));
            free(text);
            continue;
        }
        free(text);
        struct sw_point key = {0}, *kp = &key;
        memcpy(key.id, r.id, SW_ID_LEN);
        const struct sw_point **hit = bsearch(&kp, by_id, c->n_points, sizeof(*by_id), cmp_id);
        if (!hit) {
            fprintf(stderr, "feroce sweep collect: %s: not a point of this campaign, skipped\n",
                    path);
        } else if (!sw_store_has(s, r.id, NULL)) {
            rc = sw_store_put(s, c, *hit, &r, false, err, err_cap);
            if (!rc) (*added)++;
        }
        (*files)++;
        sw_result_free(&r);
    }
    closedir(d);
    free(by_id);
    return rc;
}
