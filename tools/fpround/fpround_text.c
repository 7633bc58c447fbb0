/* fpround's text (fpround(1), TEXT OUTPUT): the heading, and for the
 * rounding error a verdict per format and mode, the worst tensors, the
 * trend by step and with --all every tensor.  Sums and dot products are
 * fpround_acctext.c's. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpround.h"
#include "summary.h"
#include "table.h"
#include "text.h"

/* The columns a table of series leaves its label columns (a tensor's name
 * of 20 or more and its step): the series that fit share a table. */
#define SERIES_WIDTH (TABLE_WIDTH - 2 - 22 - 8)

/* N/D as a percentage with its sign ("0", "-" bare); BUF of 16 bytes. */
static const char *pct(char *buf, uint64_t n, uint64_t d)
{
    char p[8];
    const char *t = cli_percent(p, n, d);
    snprintf(buf, 16, "%s%s", t, strcmp(t, "0") && strcmp(t, "-") ? "%" : "");
    return buf;
}

/* The nonzero finite elements of E: measured, or overflowing. */
static uint64_t nonzero(const fr_err *e)
{
    return e->measured + e->overflow;
}

/* "%.1f" of an SQNR, "inf" when exact, "-" with nothing measured; BUF of
 * 32 bytes. */
static const char *sqnr_text(char *buf, const fr_err *e)
{
    fr_view v = fr_err_view(e);
    if (!v.any)
        return "-";
    if (v.sqnr_inf)
        return "inf";
    snprintf(buf, 32, "%.1f", v.sqnr);
    return buf;
}

char *fr_row_name(const fr_run *run, const fr_row *r)
{
    char *a = cli_printable(r->name);
    if (run->kind != FR_DOT)
        return a;
    char *b = cli_printable(r->name_b), *s = cli_strf("%s . %s", a, b);
    free(a), free(b);
    return s;
}

void fr_heading(const fr_run *run, FILE *out)
{
    summary_line l = {0};
    char span[64];
    const fr_row *t = &run->total;
    summary_add(&l, "fpround: %zu %s%s in %zu file%s%s, %" PRIu64 " element%s", run->nrows,
                run->kind == FR_DOT ? "dot product" : "tensor", cli_plural(run->nrows), run->nfiles,
                cli_plural(run->nfiles), summary_span_text(span, &run->row_steps), t->count,
                cli_plural(t->count));
    summary_add(&l, " (%" PRIu64 " zero%s, %" PRIu64 " non-finite); round", t->zeros,
                cli_plural(t->zeros), t->nonfinite);
    for (int m = 0; m < run->nmodes; m++)
        summary_add(&l, "%s%s", m ? "," : " ", fpk_round_name(run->modes[m]));
    for (int m = 0; m < run->nmodes; m++)
        if (run->modes[m] == FPK_SR) {
            if (run->kind == FR_ERROR)
                summary_add(&l, "; sr seed %" PRIu64, run->seed);
            else
                summary_add(&l, "; sr seeds %" PRIu64 "..%" PRIu64, run->seed,
                            run->seed + (uint64_t)run->seeds - 1);
        }
    summary_para(out, 0, 2, "%s", l.s);
    free(l.s);
}

/* " (worst: NAME at step S, P)": the row whose share of COUNT of its
 * nonzero finite elements in series (J, M) is largest (of equal shares,
 * the largest count); nothing if none has any. */
static void worst_share(summary_line *l, const fr_run *run, int j, int m,
                        uint64_t (*count)(const fr_err *))
{
    const fr_row *w = NULL;
    double best = 0;
    for (size_t i = 0; i < run->nrows; i++) {
        const fr_err *e = &run->rows[i].err[j][m];
        double f = nonzero(e) ? (double)count(e) / (double)nonzero(e) : 0;
        if (f > best || (w && f == best && count(e) > count(&w->err[j][m])))
            best = f, w = &run->rows[i];
    }
    if (!w)
        return;
    char *name = fr_row_name(run, w), st[24], p[16];
    summary_add(l, " (worst: %s", name);
    if (w->step.known)
        summary_add(l, " at step %s", summary_step_text(st, &w->step));
    summary_add(l, ", %s)", pct(p, count(&w->err[j][m]), nonzero(&w->err[j][m])));
    free(name);
}

static uint64_t flushed(const fr_err *e)
{
    return e->underflow;
}

static uint64_t overflowed(const fr_err *e)
{
    return e->overflow;
}

/* The verdict on series (J, M) over all the tensors. */
static void verdict(const fr_run *run, int j, int m, FILE *out)
{
    const fr_err *e = &run->total.err[j][m];
    fr_view v = fr_err_view(e);
    char name[48], p[16];
    summary_line l = {0};
    summary_add(&l, "%s: ", fr_series_name(name, run, j, m));
    if (!nonzero(e)) {
        summary_add(&l, "nothing to measure: every element is zero or not finite.");
    } else if (!e->underflow && !e->overflow) {
        if (v.sqnr_inf)
            summary_add(&l, "every element is exact.");
        else
            summary_add(&l,
                        "mean relative error %.1e, SQNR %.1f dB; nothing flushes to zero or "
                        "overflows.",
                        v.mean, v.sqnr);
    } else {
        if (!v.any)
            summary_add(&l, "every nonzero element overflows");
        else if (v.sqnr_inf)
            summary_add(&l, "exact where it does not overflow");
        else
            summary_add(&l, "SQNR %.1f dB", v.sqnr);
        if (e->underflow) {
            summary_add(&l, ", but %s of the nonzero values flush to zero",
                        pct(p, e->underflow, nonzero(e)));
            worst_share(&l, run, j, m, flushed);
        }
        if (e->overflow) {
            summary_add(&l, "%s %s overflow", e->underflow ? ", and" : ", but",
                        pct(p, e->overflow, nonzero(e)));
            worst_share(&l, run, j, m, overflowed);
        }
        summary_add(&l, ".");
    }
    summary_end(&l, out);
}

/* What a table of series shows of its rows: the label columns (NLABEL,
 * headers LABEL) and, per row K, their cells and the error of series
 * (J, M). */
typedef struct series_rows {
    int nlabel;
    const char *const *label;
    size_t n;
    void (*cells)(const fr_run *run, table *t, size_t k, const void *arg);
    const fr_err *(*err)(const fr_run *run, size_t k, int j, int m, const void *arg);
    const void *arg;
} series_rows;

/* The rows of SR, per series the SQNR and the share flushed to zero, as
 * many tables as the series need. */
static void series_tables(const fr_run *run, const series_rows *sr, FILE *out)
{
    int nseries = run->nformats * run->nmodes;
    for (int first = 0, last; first < nseries; first = last) {
        /* each series: "NAME dB" (an SQNR such as 100.0) and "zero %" */
        int used = 0;
        for (last = first; last < nseries; last++) {
            char name[48];
            int w = (int)strlen(fr_series_name(name, run, last / run->nmodes, last % run->nmodes));
            w = 2 + (w + 3 > 5 ? w + 3 : 5) + 2 + 6;
            if (last > first && used + w > SERIES_WIDTH)
                break;
            used += w;
        }
        table *t = table_new(sr->nlabel + 2 * (last - first), 2);
        for (int c = 0; c < sr->nlabel; c++)
            table_column(t, c, sr->label[c], c == 0 && sr->nlabel > 1, c == 0 && sr->nlabel > 1);
        for (int s = first; s < last; s++) {
            char name[48], h[64];
            snprintf(h, sizeof h, "%s dB",
                     fr_series_name(name, run, s / run->nmodes, s % run->nmodes));
            table_column(t, sr->nlabel + 2 * (s - first), h, false, false);
            table_column(t, sr->nlabel + 2 * (s - first) + 1, "zero %", false, false);
        }
        for (size_t k = 0; k < sr->n; k++) {
            sr->cells(run, t, k, sr->arg);
            for (int s = first; s < last; s++) {
                const fr_err *e = sr->err(run, k, s / run->nmodes, s % run->nmodes, sr->arg);
                char b[32], p[8];
                table_add(t, "%s", sqnr_text(b, e));
                table_add(t, "%s", cli_percent(p, e->underflow, nonzero(e)));
            }
        }
        if (first)
            fputc('\n', out);
        table_print(t, out, TABLE_WIDTH);
        table_free(t);
    }
}

static void tensor_cells(const fr_run *run, table *t, size_t k, const void *arg)
{
    const size_t *order = arg;
    const fr_row *r = &run->rows[order[k]];
    char *name = fr_row_name(run, r), st[24];
    table_add(t, "%s", name);
    table_add(t, "%s", summary_step_text(st, &r->step));
    free(name);
}

static const fr_err *tensor_err(const fr_run *run, size_t k, int j, int m, const void *arg)
{
    const size_t *order = arg;
    return &run->rows[order[k]].err[j][m];
}

static void step_cells(const fr_run *run, table *t, size_t k, const void *arg)
{
    (void)arg;
    table_add(t, "%" PRId64, run->row_steps.step[k]);
}

static const fr_err *step_err(const fr_run *run, size_t k, int j, int m, const void *arg)
{
    (void)arg;
    return &run->by_step[k].err[j][m];
}

/* The worst tensors: the largest share of nonzero values flushed to zero
 * or overflowing, mean over the series, then the lowest mean SQNR. */
static void worst_text(const fr_run *run, FILE *out)
{
    size_t n = run->nrows;
    double *bad = cli_xcalloc(n ? n : 1, sizeof *bad), *then = cli_xcalloc(n ? n : 1, sizeof *then);
    size_t *order = cli_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        double lost = 0, db = 0;
        int k = 0;
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < run->nmodes; m++) {
                const fr_err *e = &run->rows[i].err[j][m];
                fr_view v = fr_err_view(e);
                if (!nonzero(e))
                    continue;
                lost += (double)(e->underflow + e->overflow) / (double)nonzero(e);
                db += !v.any ? 0 : v.sqnr_inf ? 1000 : v.sqnr; /* (exact: past any SQNR) */
                k++;
            }
        bad[i] = k ? lost / k : NAN;
        then[i] = k ? -db / k : NAN;
    }
    size_t shown = summary_worst(bad, then, n, (size_t)run->top, order);
    summary_worst_heading(out, shown, n, "tensor", "tensors",
                          run->nformats * run->nmodes > 1
                              ? "by the mean share flushed to zero or overflowing"
                              : "by the share flushed to zero or overflowing");
    if (shown) {
        static const char *const label[] = {"tensor", "step"};
        series_rows sr = {2, label, shown, tensor_cells, tensor_err, order};
        series_tables(run, &sr, out);
    }
    free(order), free(bad), free(then);
}

static void steps_text(const fr_run *run, FILE *out)
{
    fprintf(out, "\nBy step, over each step's tensors:\n");
    static const char *const label[] = {"step"};
    series_rows sr = {1, label, run->row_steps.n, step_cells, step_err, NULL};
    series_tables(run, &sr, out);
}

/* "%.2e" of X, with its sign when SIGNED; "-" when there is none. */
static void add_num(table *t, bool any, double x, bool sign)
{
    if (!any)
        table_add(t, "-");
    else
        table_add(t, sign ? "%+.2e" : "%.2e", x);
}

/* With --all: every tensor in every series, then the total. */
static void all_text(const fr_run *run, FILE *out)
{
    static const char *const h[] = {"tensor",   "step",    "format", "zero %",  "ovf %",
                                    "mean rel", "max rel", "bias",   "max ulp", "SQNR dB"};
    table *t = table_new(10, 2);
    for (int c = 0; c < 10; c++)
        table_column(t, c, h[c], c == 0 || c == 2, c == 0);
    for (size_t i = 0; i <= run->nrows; i++) {
        const fr_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < run->nmodes; m++) {
                const fr_err *e = &r->err[j][m];
                fr_view v = fr_err_view(e);
                char name[48], st[24], p[8], b[32];
                if (i < run->nrows) {
                    char *n = fr_row_name(run, r);
                    table_add(t, "%s", n);
                    table_add(t, "%s", summary_step_text(st, &r->step));
                    free(n);
                } else {
                    table_add(t, "total");
                    table_add(t, "%s", "");
                }
                table_add(t, "%s", fr_series_name(name, run, j, m));
                table_add(t, "%s", cli_percent(p, e->underflow, nonzero(e)));
                table_add(t, "%s", cli_percent(p, e->overflow, nonzero(e)));
                add_num(t, v.any, v.mean, false);
                add_num(t, v.any, e->max_rel, false);
                add_num(t, v.any, v.bias, true);
                if (v.any)
                    table_add(t, "%.4f", e->max_ulps);
                else
                    table_add(t, "-");
                table_add(t, "%s", sqnr_text(b, e));
            }
    }
    fprintf(out, "\nEvery tensor (zero %% and ovf %%: of the nonzero finite elements; relative "
                 "errors of the others):\n");
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
}

void fr_text(const fr_run *run, FILE *out)
{
    fr_heading(run, out);
    if (run->kind != FR_ERROR) {
        fr_text_acc(run, out);
        return;
    }
    const fr_row *t = &run->total;
    uint64_t n = t->count - t->zeros - t->nonfinite;
    fprintf(out, "\nSummary over the %" PRIu64 " nonzero finite element%s:\n", n, cli_plural(n));
    for (int j = 0; j < run->nformats; j++)
        for (int m = 0; m < run->nmodes; m++)
            verdict(run, j, m, out);
    worst_text(run, out);
    if (summary_has_trend(&run->row_steps))
        steps_text(run, out);
    if (run->all)
        all_text(run, out);
}
