/* A small SVG writer for traces: two panels over simulated time, the payload throughput of
 * every traced flow and the sending rate its CC allows, with axes, ticks and a legend. No
 * dependency; opens in any browser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    size_t per = 1 + 2 * (size_t)t->n_flows;
    size_t stride = t->n_samples / MAX_POINTS + 1;
    for (uint32_t i = 0; i < t->n_flows; i++) {
        fprintf(f, "<polyline fill='none' stroke-width='1.3' stroke='%s' points='",
                palette[i % 10]);
        for (size_t s = 0; s < t->n_samples; s += stride) {
            double sum = 0;
            size_t n = 0;
            for (size_t k = s; k < s + stride && k < t->n_samples; k++, n++)
                sum += t->samples[k * per + 1 + 2 * i + col];
            double v = n ? sum / n : 0, tm = t->samples[s * per] / 1e3;
            fprintf(f, "%.1f,%.1f ", ML + tm / t_max * pw,
                    y0 + ph - (v > v_max ? v_max : v) / v_max * ph);
        }
        fprintf(f, "'/>\n");
    }
}

int fe_sim_trace_plot(const struct fe_sim_trace *t, const char *path, char *err, size_t err_cap)
{
    if (!t->n_samples) {
        sim_errf(err, err_cap, "nothing to plot: no trace samples");
        return FE_EINVAL;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        sim_errf(err, err_cap, "cannot write %s", path);
        return FE_EIO;
    }
    size_t per = 1 + 2 * (size_t)t->n_flows;
    double t_max = t->samples[(t->n_samples - 1) * per] / 1e3, v_max = 0;
    for (size_t s = 0; s < t->n_samples; s++)
        for (size_t c = 1; c < per; c++)
            if (t->samples[s * per + c] > v_max) v_max = t->samples[s * per + c];
    if (t_max <= 0) t_max = 1e-3;
    v_max = v_max > 0 ? v_max * 1.05 : 1;
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
    int bad = ferror(f);
    if (fclose(f) || bad) {
        sim_errf(err, err_cap, "error writing %s", path);
        return FE_EIO;
    }
    return 0;
}
