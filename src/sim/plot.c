/* Plots of traces: two panels over simulated time, the payload throughput of every traced flow
 * and the sending rate its CC allows, with axes, ticks and a legend. FILE.svg comes from a small
 * SVG writer (no dependency; opens in any browser), FILE.png from gnuplot (Debian's gnuplot-nox),
 * run on a script that holds the same points. */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"
#include "sim/trace.h"

#define W          960
#define PANEL_H    300
#define ML         70 /* margins */
#define MR         160
#define MT         40
#define GAP        70
#define MAX_POINTS 3000

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/* A "nice" tick step for a range (1, 2 or 5 x 10^k). */
static double nice_step(double range, int ticks)
{
    if (range <= 0) return 1;
    double raw = range / ticks, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* Both formats draw at most MAX_POINTS points per line: each averages `stride` samples. */
static size_t point_stride(const struct fe_sim_trace *t)
{
    return t->n_samples / MAX_POINTS + 1;
}

/* The point of samples s .. s + stride - 1 of flow i (col 0 throughput, 1 CC rate), in Gb/s;
 * *tm_ms its time (the first sample's). */
static double point(const struct fe_sim_trace *t, size_t s, size_t stride, uint32_t i, int col,
                    double *tm_ms)
{
    size_t per = 1 + 2 * (size_t)t->n_flows, n = 0;
    double sum = 0;
    for (size_t k = s; k < s + stride && k < t->n_samples; k++, n++)
        sum += t->samples[k * per + 1 + 2 * i + col];
    *tm_ms = t->samples[s * per] / 1e3;
    return n ? sum / n : 0;
}

static void panel(FILE *f, const struct fe_sim_trace *t, int col, int y0, const char *title,
                  double t_max, double v_max)
{
    int pw = W - ML - MR, ph = PANEL_H;
    fprintf(f, "<text x='%d' y='%d' font-size='15' font-weight='bold'>%s</text>\n", ML, y0 - 12,
            title);
    fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#444'/>\n", ML, y0,
            pw, ph);
    double ys = nice_step(v_max, 5);
    for (double v = 0; v <= v_max * 1.0001; v += ys) {
        double y = y0 + ph - v / v_max * ph;
        fprintf(f,
                "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>"
                "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%g</text>\n",
                ML, ML + pw, y, y, ML - 6, y + 4, v);
    }
    double xs = nice_step(t_max, 8);
    for (double x = 0; x <= t_max * 1.0001; x += xs) {
        double px = ML + x / t_max * pw;
        fprintf(f,
                "<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#eee'/>"
                "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%g</text>\n",
                px, px, y0, y0 + ph, px, y0 + ph + 16, x);
    }
    fprintf(f, "<text x='%d' y='%d' font-size='12' text-anchor='middle'>time (ms)</text>\n",
            ML + pw / 2, y0 + ph + 34);
    fprintf(f,
            "<text x='%d' y='%d' font-size='12' text-anchor='middle' "
            "transform='rotate(-90 %d %d)'>Gb/s</text>\n",
            ML - 45, y0 + ph / 2, ML - 45, y0 + ph / 2);
    size_t stride = point_stride(t);
    for (uint32_t i = 0; i < t->n_flows; i++) {
        fprintf(f, "<polyline fill='none' stroke-width='1.3' stroke='%s' points='",
                palette[i % 10]);
        for (size_t s = 0; s < t->n_samples; s += stride) {
            double tm, v = point(t, s, stride, i, col, &tm);
            fprintf(f, "%.1f,%.1f ", ML + tm / t_max * pw,
                    y0 + ph - (v > v_max ? v_max : v) / v_max * ph);
        }
        fprintf(f, "'/>\n");
    }
}

/* The axes' ends: the last sample's time in ms, the largest value in Gb/s plus 5 %. */
static void plot_range(const struct fe_sim_trace *t, double *t_max, double *v_max)
{
    size_t per = 1 + 2 * (size_t)t->n_flows;
    double v = 0;
    for (size_t s = 0; s < t->n_samples; s++)
        for (size_t c = 1; c < per; c++)
            if (t->samples[s * per + c] > v) v = t->samples[s * per + c];
    *t_max = t->samples[(t->n_samples - 1) * per] / 1e3;
    if (*t_max <= 0) *t_max = 1e-3;
    *v_max = v > 0 ? v * 1.05 : 1;
}

static void write_svg(const struct fe_sim_trace *t, FILE *f)
{
    double t_max, v_max;
    plot_range(t, &t_max, &v_max);
    int h = MT + 2 * PANEL_H + GAP + 50;
    fprintf(f,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
            "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
            W, h);
    const struct fe_sim_scenario *sc = fe_sim_scenario_of(t->sim);
    panel(f, t, 0, MT, "payload throughput per flow", t_max, v_max);
    panel(f, t, 1, MT + PANEL_H + GAP, "sending rate allowed by the congestion control", t_max,
          v_max);
    for (uint32_t i = 0; i < t->n_flows && i < 24; i++) {
        const struct fe_sim_flow *fl = &sc->flows[i];
        int y = MT + 14 + 18 * (int)i;
        fprintf(f,
                "<line x1='%d' x2='%d' y1='%d' y2='%d' stroke='%s' stroke-width='3'/>"
                "<text x='%d' y='%d' font-size='11'>%u: ",
                W - MR + 12, W - MR + 32, y, y, palette[i % 10], W - MR + 38, y + 4, i);
        xml_text(f, sc->nodes[fl->src].name);
        fputs("&#8594;", f);
        xml_text(f, sc->nodes[fl->dst].name);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text x='%d' y='%d' font-size='11' fill='#666'>feroce sim ", ML, h - 8);
    xml_text(f, sc->name);
    fputs("</text>\n", f);
    fprintf(f, "</svg>\n");
}

/* ---- PNG through gnuplot ---- */

#define NO_GNUPLOT "a PNG plot needs gnuplot (Debian: gnuplot-nox); FILE.svg needs nothing"

/* s as a gnuplot single-quoted string, where nothing is substituted (no backquoted commands,
 * no macros) and a quote is doubled; a control character, which would end the script's line,
 * becomes '?' (names come from scenario files). */
void fe_gnuplot_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'') fputc('\'', f);
        fputc(c < 0x20 || c == 0x7F ? '?' : c, f);
    }
    fputc('\'', f);
}

/* The gnuplot script: the points as a data block ($d: time in ms, then each flow's throughput and
 * CC rate), the two panels, the legend (24 flows at most, as in the SVG). */
static void write_gnuplot(const struct fe_sim_trace *t, FILE *f, const char *png_path)
{
    double t_max, v_max;
    plot_range(t, &t_max, &v_max);
    const struct fe_sim_scenario *sc = fe_sim_scenario_of(t->sim);
    size_t stride = point_stride(t);
    fprintf(f, "$d << EOD\n");
    for (size_t s = 0; s < t->n_samples; s += stride) {
        double tm = 0;
        for (uint32_t i = 0; i < t->n_flows; i++) {
            double v = point(t, s, stride, i, 0, &tm), r = point(t, s, stride, i, 1, &tm);
            if (i == 0) fprintf(f, "%.6g", tm);
            fprintf(f, " %.6g %.6g", v, r);
        }
        fputc('\n', f);
    }
    fprintf(f, "EOD\n");
    fprintf(f, "set encoding utf8\nset terminal pngcairo size %d,%d font 'sans,10' noenhanced\n", W,
            MT + 2 * PANEL_H + GAP + 50);
    fputs("set output ", f);
    fe_gnuplot_quote(f, png_path);
    fputs("\nset multiplot layout 2,1 title ", f);
    char title[160];
    snprintf(title, sizeof title, "feroce sim %s", sc->name);
    fe_gnuplot_quote(f, title);
    fprintf(f,
            "\nset key outside right top\nset grid\nset xlabel 'time (ms)'\nset ylabel 'Gb/s'\n"
            "set xrange [0:%.6g]\nset yrange [0:%.6g]\n",
            t_max, v_max);
    static const char *const panels[] = {"payload throughput per flow",
                                         "sending rate allowed by the congestion control"};
    for (int col = 0; col < 2; col++) {
        fprintf(f, "set title '%s'\nplot", panels[col]);
        for (uint32_t i = 0; i < t->n_flows; i++) {
            fprintf(f, "%s $d using 1:%u with lines lw 1.3 lc rgb '%s' ", i ? ", \\\n " : "",
                    2 + 2 * i + (unsigned)col, palette[i % 10]);
            if (i < 24) {
                const struct fe_sim_flow *fl = &sc->flows[i];
                char label[160];
                snprintf(label, sizeof label, "%u: %s\u2192%s", i, sc->nodes[fl->src].name,
                         sc->nodes[fl->dst].name);
                fputs("title ", f);
                fe_gnuplot_quote(f, label);
            } else {
                fputs("notitle", f);
            }
        }
        fputc('\n', f);
    }
    fputs("unset multiplot\n", f);
}

/* Runs gnuplot on the script file, which draws png: 0, or an error naming what failed. */
static int run_gnuplot(const char *script, const char *png, char *err, size_t err_cap)
{
    char *const argv[] = {"gnuplot", (char *)(uintptr_t)script, NULL};
    extern char **environ;
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    if (rc) {
        if (rc == ENOENT)
            sim_errf(err, err_cap, "%s", NO_GNUPLOT);
        else
            sim_errf(err, err_cap, "cannot run gnuplot: %s", strerror(rc));
        return FE_EIO;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            sim_errf(err, err_cap, "waiting for gnuplot: %s", strerror(errno));
            return FE_EIO;
        }
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        sim_errf(err, err_cap, "gnuplot could not draw %s (%s %d; its message above)", png,
                 WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        return FE_EIO;
    }
    return 0;
}

static int write_png(const struct fe_sim_trace *t, const char *path, char *err, size_t err_cap)
{
    const char *dir = getenv("TMPDIR");
    char script[512];
    snprintf(script, sizeof script, "%s/feroce-plot-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(script);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        sim_errf(err, err_cap, "cannot write a gnuplot script in %s", dir && *dir ? dir : "/tmp");
        if (fd >= 0) {
            close(fd);
            unlink(script);
        }
        return FE_EIO;
    }
    write_gnuplot(t, f, path);
    int bad = ferror(f);
    int rc = fclose(f) || bad ? FE_EIO : 0;
    if (rc)
        sim_errf(err, err_cap, "error writing the gnuplot script %s", script);
    else
        rc = run_gnuplot(script, path, err, err_cap);
    unlink(script);
    return rc;
}

enum plot_format { PLOT_NONE, PLOT_SVG, PLOT_PNG };

/* The plot's format from its name's end (case aside). */
static enum plot_format plot_format(const char *path)
{
    size_t n = strlen(path);
    if (n > 4 && !strcasecmp(path + n - 4, ".svg")) return PLOT_SVG;
    if (n > 4 && !strcasecmp(path + n - 4, ".png")) return PLOT_PNG;
    return PLOT_NONE;
}

int fe_sim_plot_check(const char *path, char *err, size_t err_cap)
{
    enum plot_format fmt = plot_format(path);
    for (const char *c = path; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F) {
            sim_errf(err, err_cap, "plot: the file name has a control character");
            return FE_EINVAL;
        }
    if (fmt == PLOT_NONE) {
        sim_errf(err, err_cap, "plot %s: the name must end in .svg or .png", path);
        return FE_EINVAL;
    }
    if (fmt == PLOT_SVG) return 0;
    /* gnuplot on PATH, as posix_spawnp will look for it */
    const char *p = getenv("PATH");
    char cand[4096];
    for (p = p ? p : "/usr/bin:/bin"; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(cand, sizeof cand, "%.*s/gnuplot", (int)len, p);
        if (len && !access(cand, X_OK)) return 0;
        p += len + (p[len] == ':');
    }
    sim_errf(err, err_cap, "plot %s: %s", path, NO_GNUPLOT);
    return FE_EINVAL;
}

int fe_sim_trace_plot(const struct fe_sim_trace *t, const char *path, char *err, size_t err_cap)
{
    int rc = fe_sim_plot_check(path, err, err_cap);
    if (rc) return rc;
    if (!t->n_samples || !t->n_flows) {
        sim_errf(err, err_cap, "nothing to plot: no trace samples or no flows");
        return FE_EINVAL;
    }
    if (plot_format(path) == PLOT_PNG) return write_png(t, path, err, err_cap);
    FILE *f = fopen(path, "w");
    if (!f) {
        sim_errf(err, err_cap, "cannot write %s", path);
        return FE_EIO;
    }
    write_svg(t, f);
    int bad = ferror(f);
    if (fclose(f) || bad) {
        sim_errf(err, err_cap, "error writing %s", path);
        return FE_EIO;
    }
    return 0;
}
