/* fpround's text for sums and dot products (fpround(1), TEXT OUTPUT): per
 * format the largest relative error of each method, the worst tensors,
 * the trend by step, and with --all every result. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpround.h"
#include "summary.h"
#include "table.h"
#include "text.h"

/* Formats in one table of the worst tensors or of the steps. */
#define FORMATS_PER_TABLE 6

/* Whether METH applies in format J to any row. */
static bool applies(const fr_run *run, int j, int meth)
{
    for (size_t i = 0; i < run->nrows; i++)
        if (run->rows[i].fmt[j].acc[meth][0].applies)
            return true;
    return false;
}

/* Format J's verdict: per mode, the largest relative error of each
 * method over the tensors (and seeds), the worst tensor of the worst
 * method, and the most accurate method. */
static void verdict(const fr_run *run, int j, FILE *out)
{
    summary_line l = {0};
    summary_add(&l, "%s:", run->formats[j]->name);
    double best = INFINITY;
    int best_meth = -1, best_mode = 0;
    for (int m = 0; m < run->nmodes; m++) {
        summary_add(&l, "%s %s", m ? ";" : "", fpk_round_name(run->modes[m]));
        if (run->modes[m] == FPK_SR)
            summary_add(&l, " (%d seed%s)", run->seeds, cli_plural((uint64_t)run->seeds));
        double top = -1;
        size_t top_row = SIZE_MAX;
        int top_meth = -1;
        for (int meth = 0, k = 0; meth < FR_NMETHODS; meth++) {
            if (!applies(run, j, meth))
                continue;
            double worst;
            size_t row;
            uint64_t nonfinite;
            fr_acc_worst(run, SIZE_MAX, j, meth, m, &worst, &row, &nonfinite);
            summary_add(&l, "%s %s", k++ ? "," : "", fr_method_name((fr_method)meth));
            if (worst >= 0)
                summary_add(&l, " %.1e", worst);
            else
                summary_add(&l, " -");
            if (nonfinite)
                summary_add(&l, " (%" PRIu64 " not finite)", nonfinite);
            if (worst > top)
                top = worst, top_row = row, top_meth = meth;
            if (!nonfinite && worst >= 0 && worst < best)
                best = worst, best_meth = meth, best_mode = m;
        }
        if (top > 0 && top_row != SIZE_MAX) {
            const fr_row *r = &run->rows[top_row];
            char *name = fr_row_name(run, r), st[24];
            summary_add(&l, " (worst: %s %s", fr_method_name((fr_method)top_meth), name);
            if (r->step.known)
                summary_add(&l, " at step %s", summary_step_text(st, &r->step));
            summary_add(&l, ")");
            free(name);
        }
    }
    if (best_meth >= 0)
        summary_add(&l, ". Most accurate: %s%s%s.", fr_method_name((fr_method)best_meth),
                    run->nmodes > 1 ? " with " : "",
                    run->nmodes > 1 ? fpk_round_name(run->modes[best_mode]) : "");
    else
        summary_add(&l, ".");
    summary_end(&l, out);
}

/* The largest |relative error| of the sequential method under the first
 * mode in format J over row R's seeds; NaN if none is defined. */
static double sequential_error(const fr_row *r, int j)
{
    const fr_acc *a = &r->fmt[j].acc[FR_SEQ][0];
    double worst = NAN;
    for (int k = 0; k < a->n; k++)
        if (!isnan(a->rel[k]) && (isnan(worst) || fabs(a->rel[k]) > worst))
            worst = fabs(a->rel[k]);
    return worst;
}

/* "%.2e" of X, or "-" for NaN. */
static void add_error(table *t, double x)
{
    if (isnan(x))
        table_add(t, "-");
    else
        table_add(t, "%.2e", x);
}

/* Tables of NROWS rows: the label columns (NLABEL, headers LABEL) by
 * CELLS, then per format the error ERR gives, as many tables as the
 * formats need. */
static void format_tables(const fr_run *run, int nlabel, const char *const *label, size_t nrows,
                          void (*cells)(const fr_run *, table *, size_t, const void *),
                          double (*err)(const fr_run *, size_t, int, const void *), const void *arg,
                          FILE *out)
{
    for (int first = 0; first < run->nformats; first += FORMATS_PER_TABLE) {
        int last =
            first + FORMATS_PER_TABLE < run->nformats ? first + FORMATS_PER_TABLE : run->nformats;
        table *t = table_new(nlabel + last - first, 2);
        for (int c = 0; c < nlabel; c++)
            table_column(t, c, label[c], c == 0 && nlabel > 1, c == 0 && nlabel > 1);
        for (int j = first; j < last; j++)
            table_column(t, nlabel + j - first, run->formats[j]->name, false, false);
        for (size_t k = 0; k < nrows; k++) {
            cells(run, t, k, arg);
            for (int j = first; j < last; j++)
                add_error(t, err(run, k, j, arg));
        }
        if (first)
            fputc('\n', out);
        table_print(t, out, TABLE_WIDTH);
        table_free(t);
    }
}

static void tensor_cells(const fr_run *run, table *t, size_t k, const void *arg)
{
    const fr_row *r = &run->rows[((const size_t *)arg)[k]];
    char *name = fr_row_name(run, r), st[24];
    table_add(t, "%s", name);
    table_add(t, "%s", summary_step_text(st, &r->step));
    table_add(t, "%" PRIu64, r->count);
    free(name);
}

static double tensor_error(const fr_run *run, size_t k, int j, const void *arg)
{
    return sequential_error(&run->rows[((const size_t *)arg)[k]], j);
}

static void step_cells(const fr_run *run, table *t, size_t k, const void *arg)
{
    (void)arg;
    table_add(t, "%" PRId64, run->row_steps.step[k]);
}

static double step_error(const fr_run *run, size_t k, int j, const void *arg)
{
    (void)arg;
    double worst;
    size_t row;
    uint64_t nonfinite;
    fr_acc_worst(run, k, j, FR_SEQ, 0, &worst, &row, &nonfinite);
    return worst >= 0 ? worst : NAN;
}

static void worst_text(const fr_run *run, FILE *out)
{
    size_t n = run->nrows;
    double *bad = cli_xcalloc(n ? n : 1, sizeof *bad);
    size_t *order = cli_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        bad[i] = NAN;
        for (int j = 0; j < run->nformats; j++) {
            double e = sequential_error(&run->rows[i], j);
            if (!isnan(e) && (isnan(bad[i]) || e > bad[i]))
                bad[i] = e;
        }
    }
    size_t shown = summary_worst(bad, NULL, n, (size_t)run->top, order);
    char *by = cli_strf("by the largest relative error of the sequential %s (%s) in any format",
                        run->kind == FR_DOT ? "dot product" : "sum", fpk_round_name(run->modes[0]));
    summary_worst_heading(out, shown, n, run->kind == FR_DOT ? "dot product" : "tensor",
                          run->kind == FR_DOT ? "dot products" : "tensors", by);
    free(by);
    if (shown) {
        static const char *const label[] = {"tensor", "step", "elements"};
        format_tables(run, 3, label, shown, tensor_cells, tensor_error, order, out);
    }
    free(order), free(bad);
}

static void steps_text(const fr_run *run, FILE *out)
{
    fprintf(out, "\nBy step, the largest relative error of the sequential %s (%s):\n",
            run->kind == FR_DOT ? "dot product" : "sum", fpk_round_name(run->modes[0]));
    static const char *const label[] = {"step"};
    format_tables(run, 1, label, run->row_steps.n, step_cells, step_error, NULL, out);
}

/* "%.9g" of X, a NaN "nan" whatever its sign bit. */
static const char *g9(char *buf, size_t len, double x)
{
    snprintf(buf, len, "%.9g", isnan(x) ? fabs(x) : x);
    return buf;
}

/* With --all: row R's block, a line naming it, then per format the exact
 * value and every method's result in every mode. */
static void block(const fr_run *run, const fr_row *r, FILE *out)
{
    char shape[256], ex[40], st[24];
    cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
    char *name = fr_row_name(run, r);
    char *where = r->step.known ? cli_strf("step %s", summary_step_text(st, &r->step))
                                : cli_printable(r->file);
    char *line = cli_strf("%s %s (%" PRIu64 " element%s; %s); exact %s", name, shape, r->count,
                          cli_plural(r->count), where, g9(ex, sizeof ex, r->exact_input));
    char *fit = table_shorten(line, TABLE_WIDTH);
    fprintf(out, "\n%s\n", fit);
    free(fit), free(line), free(where), free(name);
    static const char *const h[] = {"format",    "method", "mode",       "result",
                                    "rel error", "sd rel", "stagnation", "absorbed"};
    table *t = table_new(8, 2);
    for (int c = 0; c < 8; c++)
        table_column(t, c, h[c], c < 3, false);
    for (int j = 0; j < run->nformats; j++) {
        table_add(t, "%s", run->formats[j]->name);
        table_add(t, "exact");
        table_add(t, "%s", "");
        table_add(t, "%s", g9(ex, sizeof ex, r->fmt[j].exact));
        for (int c = 4; c < 8; c++)
            table_add(t, "%s", "");
        for (int meth = 0; meth < FR_NMETHODS; meth++)
            for (int m = 0; m < run->nmodes; m++) {
                const fr_acc *a = &r->fmt[j].acc[meth][m];
                if (!a->applies)
                    continue;
                double s, sd, rel, rsd;
                fr_mean_sd(a->sum, a->n, &s, &sd);
                fr_mean_sd(a->rel, a->n, &rel, &rsd);
                bool det = run->modes[m] != FPK_SR && meth == FR_SEQ;
                table_add(t, "%s", run->formats[j]->name);
                table_add(t, "%s", fr_method_name((fr_method)meth));
                table_add(t, "%s", fpk_round_name(run->modes[m]));
                table_add(t, "%s", g9(ex, sizeof ex, s));
                if (isnan(rel))
                    table_add(t, "-");
                else
                    table_add(t, "%+.3e", rel);
                if (a->n > 1 && !isnan(rsd))
                    table_add(t, "%.3e", rsd);
                else
                    table_add(t, "-");
                if (det && a->has_stagnation)
                    table_add(t, "%" PRIu64, a->stagnation);
                else
                    table_add(t, "-");
                if (det)
                    table_add(t, "%" PRIu64, a->absorbed);
                else
                    table_add(t, "-");
            }
    }
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
}

void fr_text_acc(const fr_run *run, FILE *out)
{
    fputc('\n', out);
    summary_para(out, 0, 2,
                 "Summary: per format and mode, the largest relative error of each "
                 "method over the %s%s:",
                 run->kind == FR_DOT ? "dot products" : "sums",
                 run->modes[0] == FPK_SR || run->nmodes > 1 ? " (and seeds)" : "");
    for (int j = 0; j < run->nformats; j++)
        verdict(run, j, out);
    worst_text(run, out);
    if (summary_has_trend(&run->row_steps))
        steps_text(run, out);
    for (size_t i = 0; run->all && i < run->nrows; i++)
        block(run, &run->rows[i], out);
}
