/* fpswamp's text (fpswamp(1), TEXT OUTPUT): what was read, a summary per
 * format (which strategies lose the updates and which keep them), the
 * worst tensors, the trend over the steps, the learning-rate sweep, and
 * with --all the tables of every tensor. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpswamp.h"
#include "summary.h"
#include "table.h"
#include "text.h"

/* A percentage of F with its sign ("0", "-" bare); BUF of 32 bytes. */
static const char *pct(char *buf, double f)
{
    char p[24];
    const char *t = cli_percent_of(p, f, true);
    snprintf(buf, 32, "%s%s", t, strcmp(t, "0") && strcmp(t, "-") ? "%" : "");
    return buf;
}

/* Row R's name for the tables: P, or with several files whose steps are
 * not known, the file's stem and P (sw_row_label); malloc'd. */
static char *row_name(const sw_run *run, const sw_row *r)
{
    if (r->step.known)
        return cli_printable(r->name);
    char label[512];
    sw_row_label(run, r, label, sizeof label);
    return cli_strf("%s", label);
}

static void header(const sw_run *run, const summary_steps *st, FILE *out)
{
    summary_line l = {0};
    char span[64];
    summary_add(&l,
                "fpswamp: %zu tensor%s in %zu file%s%s, %" PRIu64 " element%s, %" PRIu64
                " nonzero update%s; ",
                run->nrows, cli_plural(run->nrows), run->nfiles, cli_plural(run->nfiles),
                summary_span_text(span, st), run->total.count, cli_plural(run->total.count),
                run->total.nonzero, cli_plural(run->total.nonzero));
    if (run->grad && run->main_report)
        summary_add(&l, "dw = -%.17g * grad", run->lr);
    else if (run->grad)
        summary_add(&l, "dw = -lr * grad");
    else
        summary_add(&l, "dw = the update");
    if (run->main_report)
        summary_add(&l, "; %d step%s; SR over %d seed%s", run->steps,
                    cli_plural((uint64_t)run->steps), run->seeds, cli_plural((uint64_t)run->seeds));
    summary_para(out, 0, 2, "%s", l.s);
    free(l.s);
}

/* The worst row for format J: the largest share lost under RNE, of equal
 * shares the most updates lost. */
static const sw_row *worst_row(const sw_run *run, int j)
{
    const sw_row *w = NULL;
    double best = 0;
    for (size_t i = 0; i < run->nrows; i++) {
        const sw_row *r = &run->rows[i];
        double f = sw_lost_frac(r, &r->fmt[j].rne);
        if (f > best || (w && f == best && r->fmt[j].rne.lost > w->fmt[j].rne.lost))
            best = f, w = r;
    }
    return w;
}

/* Format J's verdict: what each strategy loses (and, over several steps,
 * how far its weights drift), the worst tensor, and which strategy saves
 * the most. */
static void verdict(const sw_run *run, int j, FILE *out)
{
    const sw_row *t = &run->total;
    const sw_fmt *f = &t->fmt[j];
    char a[32], b[32], c[32], d[32];
    double srm, srsd;
    sw_seed_stats(t, f->sr, run->seeds, sw_lost_frac, &srm, &srsd);
    summary_line l = {0};
    summary_add(&l, "%s: round to nearest loses %s", run->formats[j]->name,
                pct(a, sw_lost_frac(t, &f->rne)));
    const sw_row *w = worst_row(run, j);
    if (w) {
        char *name = row_name(run, w), st[24];
        summary_add(&l, " (worst: %s", name);
        if (w->step.known)
            summary_add(&l, " at step %s", summary_step_text(st, &w->step));
        summary_add(&l, ", %s)", pct(b, sw_lost_frac(w, &w->fmt[j].rne)));
        free(name);
    }
    summary_add(&l,
                "; stochastic rounding %s (mean of %d seed%s), Kahan-compensated weights %s, "
                "FP32 master weights %s.",
                pct(b, srm), run->seeds, cli_plural((uint64_t)run->seeds),
                pct(c, sw_lost_frac(t, &f->kahan)), pct(d, sw_lost_frac(t, &t->master)));
    /* which keeps the weights in the format and saves the most */
    double kahan = sw_lost_frac(t, &f->kahan), rne = sw_lost_frac(t, &f->rne);
    double dk = sw_drift_mean(t, &f->kahan), dsr, dsd;
    sw_seed_stats(t, f->sr, run->seeds, sw_drift_mean, &dsr, &dsd);
    if (run->steps > 1) {
        summary_add(&l,
                    " After %d steps the weights are off the exact sum by %s of the update "
                    "(mean) with round to nearest, %s with stochastic rounding, %s with Kahan, "
                    "%s with FP32 master weights.",
                    run->steps, pct(a, sw_drift_mean(t, &f->rne)), pct(b, dsr), pct(c, dk),
                    pct(d, sw_drift_mean(t, &t->master)));
        if (!isnan(dk) && !isnan(dsr) && fmin(dk, dsr) < sw_drift_mean(t, &f->rne))
            summary_add(&l, " Best short of FP32 master weights: %s.",
                        dk <= dsr ? "Kahan" : "stochastic rounding");
    } else if (!isnan(kahan) && kahan < rne && kahan <= srm) {
        summary_add(&l, " Best short of FP32 master weights: Kahan.");
    } else if (!isnan(srm) && srm < rne) {
        summary_add(&l, " Best short of FP32 master weights: stochastic rounding.");
    }
    summary_end(&l, out);
}

/* Where more than half but not all of an update is lost, the one place
 * the half-lost count says more than the lost one (fpswamp(1), MEASURES):
 * per format, how many updates, under each strategy that has any. */
static void partly_lost(const sw_run *run, FILE *out)
{
    const sw_row *t = &run->total;
    summary_line l = {0};
    for (int j = 0; j < run->nformats; j++) {
        const sw_fmt *f = &t->fmt[j];
        double sr = 0;
        for (int s = 0; s < run->seeds; s++)
            sr += (double)(f->sr[s].half - f->sr[s].lost);
        sr /= run->seeds;
        uint64_t rne = f->rne.half - f->rne.lost, kahan = f->kahan.half - f->kahan.lost;
        if (!rne && !kahan && !sr)
            continue;
        summary_add(&l, "%s%s:", l.s ? "; " : "", run->formats[j]->name);
        const char *sep = " ";
        if (rne)
            summary_add(&l, "%s%" PRIu64 " (rne)", sep, rne), sep = ", ";
        if (sr)
            summary_add(&l, "%s%.4g (sr, mean)", sep, sr), sep = ", ";
        if (kahan)
            summary_add(&l, "%s%" PRIu64 " (kahan)", sep, kahan);
    }
    if (!l.s)
        return;
    char *s = l.s;
    l.s = NULL;
    summary_add(&l,
                "More than half but not all of an update is lost only where w + dw crosses a "
                "power of two, for few updates: %s.",
                s);
    free(s);
    summary_end(&l, out);
}

/* The sweep's verdict per format: the lost share at the ends of the
 * range, and up to which learning rate half or more is lost. */
static void sweep_verdict(const sw_run *run, int j, FILE *out)
{
    const sw_row *t = &run->total;
    double first = NAN, last = NAN;
    int half = -1;
    for (int p = 0; p < run->sweep_n; p++) {
        uint64_t n = t->sweep_lost[p * run->nformats + j];
        double f = t->nonzero ? (double)n / (double)t->nonzero : NAN;
        if (p == 0)
            first = f;
        last = f;
        if (f >= 0.5)
            half = p;
    }
    char a[32], b[32];
    summary_line l = {0};
    summary_add(&l, "%s: %s lost at lr %.6g, %s at lr %.6g", run->formats[j]->name, pct(a, first),
                run->sweep_lr[0], pct(b, last), run->sweep_lr[run->sweep_n - 1]);
    if (half < 0)
        summary_add(&l, "; less than half at every rate.");
    else if (half == run->sweep_n - 1)
        summary_add(&l, "; half or more at every rate.");
    else
        summary_add(&l, "; half or more up to lr %.6g.", run->sweep_lr[half]);
    summary_end(&l, out);
}

/* A table whose first columns are a row's name and step, the rest right
 * aligned: NCOLS columns in all, headers H[2..]. */
static table *row_table(int ncols, const char *const *h)
{
    table *t = table_new(ncols, 2);
    table_column(t, 0, "tensor", true, true);
    table_column(t, 1, "step", false, false);
    for (int k = 2; k < ncols; k++)
        table_column(t, k, h[k - 2], false, false);
    return t;
}

static void add_name_step(table *t, const sw_run *run, const sw_row *r)
{
    char st[24];
    if (!r->name) {
        table_add(t, "total");
        table_add(t, "%s", "");
        return;
    }
    char *name = row_name(run, r);
    table_add(t, "%s", name);
    table_add(t, "%s", summary_step_text(st, &r->step));
    free(name);
}

/* The columns of a row per format: the share lost under RNE. */
static table *per_format_table(const sw_run *run, const char *first)
{
    const char **h = cli_xcalloc((size_t)run->nformats + 1, sizeof *h);
    h[0] = first;
    for (int j = 0; j < run->nformats; j++)
        h[j + 1] = run->formats[j]->name;
    table *t = row_table(run->nformats + 3, h);
    free(h);
    return t;
}

static void worst_text(const sw_run *run, FILE *out)
{
    size_t n = run->nrows;
    double *bad = cli_xcalloc(n ? n : 1, sizeof *bad);
    size_t *order = cli_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        const sw_row *r = &run->rows[i];
        double sum = 0;
        for (int j = 0; j < run->nformats; j++)
            sum += sw_lost_frac(r, &r->fmt[j].rne);
        bad[i] = sum / run->nformats; /* NaN: no nonzero update */
    }
    size_t shown = summary_worst(bad, NULL, n, (size_t)run->top, order);
    summary_worst_heading(out, shown, n, "tensor", "tensors",
                          run->nformats > 1
                              ? "by the mean share of updates lost with round to nearest"
                              : "by the share of updates lost with round to nearest");
    if (shown) {
        table *t = per_format_table(run, "nonzero");
        for (size_t k = 0; k < shown; k++) {
            const sw_row *r = &run->rows[order[k]];
            add_name_step(t, run, r);
            table_add(t, "%" PRIu64, r->nonzero);
            for (int j = 0; j < run->nformats; j++) {
                char b[24];
                table_add(t, "%s", cli_percent_of(b, sw_lost_frac(r, &r->fmt[j].rne), true));
            }
        }
        table_print(t, out, TABLE_WIDTH);
        table_free(t);
    }
    free(order), free(bad);
}

/* The share lost under RNE per step and format (of the rows of known
 * step). */
static void steps_text(const sw_run *run, const summary_steps *st, FILE *out)
{
    size_t nf = (size_t)run->nformats;
    uint64_t *lost = cli_xcalloc(st->n * nf, sizeof *lost),
             *nonzero = cli_xcalloc(st->n, sizeof *nonzero);
    for (size_t i = 0; i < run->nrows; i++) {
        size_t k = st->of_row[i];
        if (k == SIZE_MAX)
            continue;
        nonzero[k] += run->rows[i].nonzero;
        for (size_t j = 0; j < nf; j++)
            lost[k * nf + j] += run->rows[i].fmt[j].rne.lost;
    }
    fprintf(out, "\nBy step, the share of updates lost with round to nearest:\n");
    table *t = table_new((int)nf + 2, 2);
    table_column(t, 0, "step", false, false);
    table_column(t, 1, "nonzero", false, false);
    for (size_t j = 0; j < nf; j++)
        table_column(t, (int)j + 2, run->formats[j]->name, false, false);
    for (size_t k = 0; k < st->n; k++) {
        table_add(t, "%" PRId64, st->step[k]);
        table_add(t, "%" PRIu64, nonzero[k]);
        for (size_t j = 0; j < nf; j++) {
            char b[8];
            table_add(t, "%s", cli_percent(b, lost[k * nf + j], nonzero[k]));
        }
    }
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
    free(lost), free(nonzero);
}

/* With --all: per format, every row's lost shares under each strategy, or
 * (DRIFT) the mean drift after the steps. */
static void full_table(const sw_run *run, int j, bool drift, FILE *out)
{
    static const char *const h[] = {"nonzero", "rne", "sr mean", "sr sd", "kahan", "fp32"};
    table *t = row_table(8, h);
    double (*get)(const sw_row *, const sw_acc *) = drift ? sw_drift_mean : sw_lost_frac;
    for (size_t i = 0; i <= run->nrows; i++) {
        const sw_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        const sw_fmt *f = &r->fmt[j];
        double m, sd;
        char b[5][24];
        sw_seed_stats(r, f->sr, run->seeds, get, &m, &sd);
        add_name_step(t, run, r);
        table_add(t, "%" PRIu64, r->nonzero);
        table_add(t, "%s", cli_percent_of(b[0], get(r, &f->rne), !drift));
        table_add(t, "%s", cli_percent_of(b[1], m, !drift));
        table_add(t, "%s", r->nonzero ? cli_percent_of(b[2], sd, !drift) : "-");
        table_add(t, "%s", cli_percent_of(b[3], get(r, &f->kahan), !drift));
        table_add(t, "%s", cli_percent_of(b[4], get(r, &r->master), !drift));
    }
    fprintf(out, "\n%s, %s:\n", run->formats[j]->name,
            drift ? "the mean drift |wK - (w0 + K dw)| / |K dw|, in %"
                  : "the share of nonzero updates lost, in % (fp32: FP32 master weights)");
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
}

static void sweep_table(const sw_run *run, FILE *out)
{
    fprintf(out, "\nThe share of nonzero updates lost (dw = -lr * grad, round to nearest), all "
                 "tensors:\n");
    table *t = table_new(run->nformats + 1, 2);
    table_column(t, 0, "lr", false, false);
    for (int j = 0; j < run->nformats; j++)
        table_column(t, j + 1, run->formats[j]->name, false, false);
    for (int p = 0; p < run->sweep_n; p++) {
        table_add(t, "%.6g", run->sweep_lr[p]);
        for (int j = 0; j < run->nformats; j++) {
            char b[8];
            table_add(
                t, "%s",
                cli_percent(b, run->total.sweep_lost[p * run->nformats + j], run->total.nonzero));
        }
    }
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
}

void sw_text(const sw_run *run, FILE *out)
{
    scan_step *steps = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *steps);
    for (size_t i = 0; i < run->nrows; i++)
        steps[i] = run->rows[i].step;
    summary_steps st;
    summary_steps_init(&st, steps, run->nrows);
    free(steps);
    header(run, &st, out);
    if (run->main_report) {
        fprintf(out, "\nSummary: the share of the nonzero updates lost (w + dw rounds to w), by "
                     "how the weights are held:\n");
        for (int j = 0; j < run->nformats; j++)
            verdict(run, j, out);
        if (run->steps == 1)
            summary_para(out, 2, 4,
                         "Stochastic rounding loses about as many at one step but "
                         "keeps them on average: --steps K shows the drift after K "
                         "steps.");
        partly_lost(run, out);
    }
    if (run->sweep_n) {
        fprintf(out, "\n%s the share lost with round to nearest against the learning rate:\n",
                run->main_report ? "Sweep:" : "Summary:");
        for (int j = 0; j < run->nformats; j++)
            sweep_verdict(run, j, out);
        sweep_table(run, out);
    }
    if (run->main_report) {
        worst_text(run, out);
        if (summary_has_trend(&st))
            steps_text(run, &st, out);
        for (int j = 0; run->all && j < run->nformats; j++)
            full_table(run, j, false, out);
        for (int j = 0; run->all && run->steps > 1 && j < run->nformats; j++)
            full_table(run, j, true, out);
    }
    summary_steps_free(&st);
}
