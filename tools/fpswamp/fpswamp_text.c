/* fpswamp's text (fpswamp(1), TEXT OUTPUT): what was read, a summary per
 * format (which strategies lose the updates and which keep them) and per
 * recipe, the worst tensors, the trend over the steps, the learning-rate
 * sweep, and with --all the tables of every tensor. */
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

/* What target T of R (sw_targets) counted: a format's round to nearest,
 * a recipe's stored weights. */
static const sw_acc *target_acc(const sw_run *run, const sw_row *r, int t)
{
    return t < run->nformats ? &r->fmt[t].rne : &r->recipe[t - run->nformats];
}

/* The worst row for target T: the largest share lost, of equal shares
 * the most updates lost. */
static const sw_row *worst_row(const sw_run *run, int t)
{
    const sw_row *w = NULL;
    double best = 0;
    for (size_t i = 0; i < run->nrows; i++) {
        const sw_row *r = &run->rows[i];
        double f = sw_lost_frac(r, target_acc(run, r, t));
        if (f > best || (w && f == best && target_acc(run, r, t)->lost > target_acc(run, w, t)->lost))
            best = f, w = r;
    }
    return w;
}

/* " (worst: P at step S, 12.34%)" for target T, or "" when no row loses
 * any; BUF of 600 bytes. */
static const char *worst_text_of(const sw_run *run, int t, char *buf)
{
    const sw_row *w = worst_row(run, t);
    buf[0] = '\0';
    if (!w)
        return buf;
    char *name = row_name(run, w), st[24], b[32];
    snprintf(buf, 600, " (worst: %.500s%s%s, %s)", name, w->step.known ? " at step " : "",
             w->step.known ? summary_step_text(st, &w->step) : "",
             pct(b, sw_lost_frac(w, target_acc(run, w, t))));
    free(name);
    return buf;
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
    char worst[600];
    summary_add(&l, "%s: round to nearest loses %s%s", run->formats[j]->name,
                pct(a, sw_lost_frac(t, &f->rne)), worst_text_of(run, j, worst));
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

/* Recipe K's verdict: the share lost with the weights stored under it and
 * the worst tensor; where recomputed scales move weights by other than
 * their updates, also the shares kept (moved by half to twice the update),
 * more than half lost and moved by more than twice; over several steps
 * how far the stored weights drift; FP32 master weights beside it. */
static void recipe_verdict(const sw_run *run, int k, FILE *out)
{
    const sw_row *t = &run->total;
    const sw_acc *a = &t->recipe[k];
    char spelled[256], worst[600], b[32], c[32];
    fpk_recipe_format(&run->recipes[k], spelled, sizeof spelled);
    const char *name = run->recipe_names[k];
    summary_line l = {0};
    summary_add(&l, "%s (stored per tensor%s%s): ", name, strcmp(name, spelled) ? ", " : "",
                strcmp(name, spelled) ? spelled : "");
    uint64_t kept = 0, over = a->hist[SW_BINS - 1];
    for (int bin = SW_HALF_BINS; bin < SW_BINS - 1; bin++)
        kept += a->hist[bin];
    double n = t->nonzero ? (double)t->nonzero : NAN;
    if (a->half > a->lost || over) {
        summary_add(&l, "keeps %s of the updates (moved by half to twice the update); loses %s%s",
                    pct(b, (double)kept / n), pct(c, sw_lost_frac(t, a)),
                    worst_text_of(run, run->nformats + k, worst));
        if (a->half > a->lost)
            summary_add(&l, ", more than half in %s", pct(b, sw_half_frac(t, a)));
        if (over)
            summary_add(&l, ", and %s move by more than twice theirs as the scales change",
                        pct(b, (double)over / n));
        summary_add(&l, "; FP32 master weights lose %s.", pct(c, sw_lost_frac(t, &t->master)));
    } else {
        summary_add(&l, "loses %s%s; FP32 master weights %s.", pct(b, sw_lost_frac(t, a)),
                    worst_text_of(run, run->nformats + k, worst),
                    pct(c, sw_lost_frac(t, &t->master)));
    }
    if (run->steps > 1)
        summary_add(&l,
                    " After %d steps the stored weights are off the exact sum by %s of the "
                    "update (mean), FP32 master weights by %s.",
                    run->steps, pct(b, sw_drift_mean(t, a)), pct(c, sw_drift_mean(t, &t->master)));
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
    for (int k = 0; k < run->nrecipes; k++) {
        uint64_t n = t->recipe[k].half - t->recipe[k].lost;
        if (n)
            summary_add(&l, "%s%s: %" PRIu64 " (stored)", l.s ? "; " : "", run->recipe_names[k],
                        n);
    }
    if (!l.s)
        return;
    char *s = l.s;
    l.s = NULL;
    summary_add(&l,
                "More than half but not all of an update is lost only where w + dw crosses a "
                "power of two, for few updates%s: %s.",
                run->nrecipes ? " (or, stored under a recipe, where a block's scale changes)" : "",
                s);
    free(s);
    summary_end(&l, out);
}

/* The sweep's verdict per target: the lost share at the ends of the
 * range, and up to which learning rate half or more is lost. */
static void sweep_verdict(const sw_run *run, int j, FILE *out)
{
    const sw_row *t = &run->total;
    double first = NAN, last = NAN;
    int half = -1;
    for (int p = 0; p < run->sweep_n; p++) {
        uint64_t n = t->sweep_lost[p * sw_targets(run) + j];
        double f = t->nonzero ? (double)n / (double)t->nonzero : NAN;
        if (p == 0)
            first = f;
        last = f;
        if (f >= 0.5)
            half = p;
    }
    char a[32], b[32];
    summary_line l = {0};
    summary_add(&l, "%s: %s lost at lr %.6g, %s at lr %.6g", sw_target_name(run, j), pct(a, first),
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
 * aligned: NCOLS columns in all, the next NH headed by H[0 .. NH-1] (the
 * caller heads the others). */
static table *row_table(int ncols, const char *const *h, int nh)
{
    table *t = table_new(ncols, 2);
    table_column(t, 0, "tensor", true, true);
    table_column(t, 1, "step", false, false);
    for (int k = 0; k < nh; k++)
        table_column(t, k + 2, h[k], false, false);
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

/* The targets of a table: the formats, or the recipes. */
typedef struct span {
    int first, end;
    bool recipes;
} span;

static span formats_of(const sw_run *run)
{
    return (span){0, run->nformats, false};
}

static span recipes_of(const sw_run *run)
{
    return (span){run->nformats, sw_targets(run), true};
}

/* Target T's column header: its name, or for a recipe named in more than
 * 12 columns "R1", "R2", ... (its place among the recipes), which is then
 * added to LEGEND.  BUF of 16 bytes. */
static const char *header_of(const sw_run *run, int t, char *buf, summary_line *legend)
{
    const char *name = sw_target_name(run, t);
    if (t < run->nformats || strlen(name) <= 12)
        return name;
    snprintf(buf, 16, "R%d", t - run->nformats + 1);
    summary_add(legend, "%s%s: %s", legend->s ? "; " : "", buf, name);
    return buf;
}

/* Columns FIRST.. of T headed by S's targets; the legend of their short
 * headers, if any, to print after it. */
static void target_columns(table *t, int first, const sw_run *run, span s, summary_line *legend)
{
    for (int j = s.first; j < s.end; j++) {
        char buf[16];
        table_column(t, first + j - s.first, header_of(run, j, buf, legend), false, false);
    }
}

static void print_table(table *t, summary_line *legend, FILE *out)
{
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
    if (legend->s) {
        summary_para(out, 2, 4, "%s.", legend->s);
        free(legend->s);
        legend->s = NULL;
    }
}

/* The TOP tensors that lose the largest mean share over S's targets, and
 * their shares. */
static void worst_text(const sw_run *run, span s, FILE *out)
{
    size_t n = run->nrows;
    double *bad = cli_xcalloc(n ? n : 1, sizeof *bad);
    size_t *order = cli_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        const sw_row *r = &run->rows[i];
        double sum = 0;
        for (int j = s.first; j < s.end; j++)
            sum += sw_lost_frac(r, target_acc(run, r, j));
        bad[i] = sum / (s.end - s.first); /* NaN: no nonzero update */
    }
    size_t shown = summary_worst(bad, NULL, n, (size_t)run->top, order);
    bool many = s.end - s.first > 1;
    summary_worst_heading(out, shown, n, "tensor", "tensors",
                          s.recipes ? many ? "stored under the recipes, by the mean share of "
                                             "updates lost"
                                           : "stored under the recipe, by the share of updates lost"
                          : many    ? "by the mean share of updates lost with round to nearest"
                                    : "by the share of updates lost with round to nearest");
    if (shown) {
        summary_line legend = {0};
        static const char *const h[] = {"nonzero"};
        table *w = row_table(3 + s.end - s.first, h, 1);
        target_columns(w, 3, run, s, &legend);
        for (size_t k = 0; k < shown; k++) {
            const sw_row *r = &run->rows[order[k]];
            add_name_step(w, run, r);
            table_add(w, "%" PRIu64, r->nonzero);
            for (int j = s.first; j < s.end; j++) {
                char b[24];
                table_add(w, "%s", cli_percent_of(b, sw_lost_frac(r, target_acc(run, r, j)), true));
            }
        }
        print_table(w, &legend, out);
    }
    free(order), free(bad);
}

/* The share lost per step and target of S (of the rows of known step). */
static void steps_text(const sw_run *run, const summary_steps *st, span s, FILE *out)
{
    size_t nf = (size_t)(s.end - s.first);
    uint64_t *lost = cli_xcalloc(st->n * nf, sizeof *lost),
             *nonzero = cli_xcalloc(st->n, sizeof *nonzero);
    for (size_t i = 0; i < run->nrows; i++) {
        size_t k = st->of_row[i];
        if (k == SIZE_MAX)
            continue;
        nonzero[k] += run->rows[i].nonzero;
        for (size_t j = 0; j < nf; j++)
            lost[k * nf + j] += target_acc(run, &run->rows[i], s.first + (int)j)->lost;
    }
    fprintf(out, "\nBy step, the share of updates lost %s:\n",
            s.recipes ? "with the weights stored under the recipes" : "with round to nearest");
    summary_line legend = {0};
    table *t = table_new((int)nf + 2, 2);
    table_column(t, 0, "step", false, false);
    table_column(t, 1, "nonzero", false, false);
    target_columns(t, 2, run, s, &legend);
    for (size_t k = 0; k < st->n; k++) {
        table_add(t, "%" PRId64, st->step[k]);
        table_add(t, "%" PRIu64, nonzero[k]);
        for (size_t j = 0; j < nf; j++) {
            char b[8];
            table_add(t, "%s", cli_percent(b, lost[k * nf + j], nonzero[k]));
        }
    }
    print_table(t, &legend, out);
    free(lost), free(nonzero);
}

/* With --all: per format, every row's lost shares under each strategy, or
 * (DRIFT) the mean drift after the steps. */
static void full_table(const sw_run *run, int j, bool drift, FILE *out)
{
    static const char *const h[] = {"nonzero", "rne", "sr mean", "sr sd", "kahan", "fp32"};
    table *t = row_table(8, h, 6);
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

/* With --all: recipe K's every row, the share lost with the weights
 * stored under it and with FP32 master weights, or (DRIFT) their mean
 * drift. */
static void recipe_table(const sw_run *run, int k, bool drift, FILE *out)
{
    static const char *const h[] = {"nonzero", "stored", "fp32"};
    table *t = row_table(5, h, 3);
    double (*get)(const sw_row *, const sw_acc *) = drift ? sw_drift_mean : sw_lost_frac;
    for (size_t i = 0; i <= run->nrows; i++) {
        const sw_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        char b[2][24];
        add_name_step(t, run, r);
        table_add(t, "%" PRIu64, r->nonzero);
        table_add(t, "%s", cli_percent_of(b[0], get(r, &r->recipe[k]), !drift));
        table_add(t, "%s", cli_percent_of(b[1], get(r, &r->master), !drift));
    }
    fputc('\n', out);
    summary_para(out, 0, 2, "%s (stored per tensor), %s:", run->recipe_names[k],
                 drift ? "the mean drift |wK - (w0 + K dw)| / |K dw|, in %"
                       : "the share of nonzero updates lost, in % (fp32: FP32 master weights)");
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
}

static void sweep_table(const sw_run *run, span s, FILE *out)
{
    if (s.recipes)
        fprintf(out, "\nThe same, the weights stored under the recipes:\n");
    else
        fprintf(out, "\nThe share of nonzero updates lost (dw = -lr * grad, round to nearest), all "
                     "tensors:\n");
    summary_line legend = {0};
    table *t = table_new(s.end - s.first + 1, 2);
    table_column(t, 0, "lr", false, false);
    target_columns(t, 1, run, s, &legend);
    for (int p = 0; p < run->sweep_n; p++) {
        table_add(t, "%.6g", run->sweep_lr[p]);
        for (int j = s.first; j < s.end; j++) {
            char b[8];
            table_add(t, "%s",
                      cli_percent(b, run->total.sweep_lost[p * sw_targets(run) + j],
                                  run->total.nonzero));
        }
    }
    print_table(t, &legend, out);
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
        for (int k = 0; k < run->nrecipes; k++)
            recipe_verdict(run, k, out);
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
        for (int j = 0; j < sw_targets(run); j++)
            sweep_verdict(run, j, out);
        sweep_table(run, formats_of(run), out);
        if (run->nrecipes)
            sweep_table(run, recipes_of(run), out);
    }
    if (run->main_report) {
        worst_text(run, formats_of(run), out);
        if (run->nrecipes)
            worst_text(run, recipes_of(run), out);
        if (summary_has_trend(&st))
            steps_text(run, &st, formats_of(run), out);
        if (summary_has_trend(&st) && run->nrecipes)
            steps_text(run, &st, recipes_of(run), out);
        for (int j = 0; run->all && j < run->nformats; j++)
            full_table(run, j, false, out);
        for (int j = 0; run->all && run->steps > 1 && j < run->nformats; j++)
            full_table(run, j, true, out);
        for (int k = 0; run->all && k < run->nrecipes; k++)
            recipe_table(run, k, false, out);
        for (int k = 0; run->all && run->steps > 1 && k < run->nrecipes; k++)
            recipe_table(run, k, true, out);
    }
    summary_steps_free(&st);
}
