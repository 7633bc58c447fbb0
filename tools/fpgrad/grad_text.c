/* fpgrad's text: the verdict per format first, then the tensors that lose
 * most, the trend over the steps, and with --all every tensor; each line
 * within TABLE_WIDTH columns. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad.h"
#include "table.h"

/* Format J's counts in row R as the run recommends using the format: at
 * the tensor's own FP8 scale for a format of at most 8 bits under --scale
 * auto, else at the loss scale (auto) or the row's scale. */
const fpk_format_counts *grad_counts(const grad_run *run, const grad_row *r, int j)
{
    if (!run->autoscale)
        return &r->fmt[j];
    if (grad_has_amax_scale(run->formats[j]))
        return &r->fp8[j].fmt;
    return &r->loss.fmt[j];
}

/* The share of R's nonzero finite elements that format J loses: rounded
 * to zero or overflowed. */
static double lost_share(const grad_run *run, const grad_row *r, int j)
{
    const fpk_format_counts *k = grad_counts(run, r, j);
    uint64_t nz = grad_nonzero(r);
    return nz ? (double)(k->underflow + k->overflow) / (double)nz : 0;
}

/* "2^16", or the shortest decimal of V. */
static void scale_text(char *buf, size_t len, double v)
{
    int k;
    if (grad_power_of_two(v, &k)) {
        snprintf(buf, len, "2^%d", k);
        return;
    }
    fpk_ctx c = fpk_ctx_default();
    fpk_format_shortest(&fpk_fp64, fpk_from_double(&fpk_fp64, v, &c), buf, len);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* A line of the verdict: LABEL, then what a format does to NONZERO values
 * whose counts are K, with ERR (its errors) or NULL. */
static void verdict_line(FILE *out, const char *label, const fpk_format_counts *k,
                         uint64_t nonzero, const grad_err *err)
{
    char a[8], b[8], c[8], what[160], line[320];
    if (!nonzero)
        snprintf(what, sizeof what, "no nonzero finite value");
    else if (!k->underflow && !k->subnormal && !k->overflow)
        snprintf(what, sizeof what, "nothing vanishes, goes subnormal or overflows");
    else if (k->overflow)
        snprintf(what, sizeof what, "%s%% vanish, %s%% subnormal, %s%% overflow",
                 cli_percent(a, k->underflow, nonzero), cli_percent(b, k->subnormal, nonzero),
                 cli_percent(c, k->overflow, nonzero));
    else
        snprintf(what, sizeof what, "%s%% vanish, %s%% subnormal, none overflow",
                 cli_percent(a, k->underflow, nonzero), cli_percent(b, k->subnormal, nonzero));
    bool none = true;
    double db = err ? grad_sqnr_db(err, &none) : 0;
    if (none)
        snprintf(line, sizeof line, "%s%s", label, what);
    else
        snprintf(line, sizeof line, "%s%s; SQNR %.1f dB", label, what, db);
    table_wrap(out, line, 9);
}

/* Format J's counts over the rows that are (LOSS_SCALED) or are not loss-
 * scaled, into *K, and their nonzero values. */
static uint64_t counts_where(const grad_run *run, int j, bool loss_scaled, fpk_format_counts *k)
{
    uint64_t nz = 0;
    *k = (fpk_format_counts){0, 0, 0};
    for (size_t i = 0; i < run->nrows; i++)
        if (run->rows[i].loss_scaled == loss_scaled) {
            grad_add_counts(k, grad_counts(run, &run->rows[i], j));
            nz += grad_nonzero(&run->rows[i]);
        }
    return nz;
}

/* The row, of the tensors, that format J loses most of (vanished or
 * overflowed), SIZE_MAX if none loses any. */
static size_t worst_for(const grad_run *run, int j)
{
    size_t best = SIZE_MAX;
    double most = 0;
    for (size_t i = 0; i < run->nrows; i++) {
        double s = lost_share(run, &run->rows[i], j);
        if (s > most) {
            most = s;
            best = i;
        }
    }
    return best;
}

/* "actgrad/fc2 at step 919 (92.57%)", the worst tensor of format J. */
static void worst_line(FILE *out, const grad_run *run, int j)
{
    size_t i = worst_for(run, j);
    if (i == SIZE_MAX)
        return;
    const grad_row *r = &run->rows[i];
    char p[8], *name = cli_printable(r->name), *shown = table_shorten(name, 48);
    const fpk_format_counts *k = grad_counts(run, r, j);
    fprintf(out, "%9sworst: %s", "", shown);
    if (r->has_step)
        fprintf(out, " at step %" PRId64, r->step);
    fprintf(out, " (%s%% lost)\n", cli_percent(p, k->underflow + k->overflow, grad_nonzero(r)));
    free(shown);
    free(name);
}

static void verdict(FILE *out, const grad_run *run)
{
    const grad_row *t = &run->total;
    char scale[48];
    if (run->autoscale) {
        if (!run->loss.has_scale) {
            fputs("No loss scale: the loss-scaled tensors hold no nonzero finite value.\n", out);
        } else {
            const grad_row *lim = &run->rows[run->loss_limit];
            scale_text(scale, sizeof scale, run->loss.value);
            char *name = cli_printable(lim->name), *shown = table_shorten(name, 40);
            size_t n = 0;
            for (size_t i = 0; i < run->nrows; i++)
                n += run->rows[i].loss_scaled;
            char line[600], where[64] = "";
            if (lim->has_step)
                snprintf(where, sizeof where, " at step %" PRId64, lim->step);
            snprintf(line, sizeof line,
                     "Loss scale %s: the largest with no fp16 overflow in the %zu loss-scaled "
                     "tensor%s (%s), limited by %s%s (amax %.3g)%s",
                     scale, n, n == 1 ? "" : "s", run->loss_all ? "every tensor" : run->loss_text,
                     shown, where, lim->amax,
                     n < run->nrows ? "; the other tensors are not scaled." : ".");
            table_wrap(out, line, 9);
            free(shown);
            free(name);
        }
    }
    fputs("Share of the nonzero values each format loses: vanish (rounded to zero), go subnormal "
          "or overflow:\n",
          out);
    bool fp8 = false;
    for (int j = 0; j < run->nformats; j++)
        fp8 |= run->autoscale && grad_has_amax_scale(run->formats[j]);
    if (fp8)
        fprintf(out, "(an 8-bit format at each tensor's own FP8 scale, %s, margin %d)\n",
                run->fp8_rule == SCALING_POW2 ? "max/amax rounded down to a power of two"
                                              : "max/amax in float32",
                run->margin);
    /* Under a loss scale the tensors it multiplies and the others differ. */
    fpk_format_counts in, off;
    bool split = run->autoscale && run->loss.has_scale && !run->loss_all &&
                 counts_where(run, 0, false, &off) > 0;
    for (int j = 0; j < run->nformats; j++) {
        const char *name = run->formats[j]->name;
        const grad_err *err = run->sqnr && !run->autoscale ? &t->err[j] : NULL;
        char label[96];
        if (run->autoscale && grad_has_amax_scale(run->formats[j])) {
            snprintf(label, sizeof label, "  %-6s own FP8 scale: ", name);
            verdict_line(out, label, grad_counts(run, t, j), grad_nonzero(t), err);
        } else if (split && !grad_is_mx(run->formats[j])) {
            uint64_t nin = counts_where(run, j, true, &in), noff = counts_where(run, j, false, &off);
            snprintf(label, sizeof label, "  %-6s loss-scaled, at %s: ", name, scale);
            verdict_line(out, label, &in, nin, NULL);
            snprintf(label, sizeof label, "  %-6s the others, at 1: ", "");
            verdict_line(out, label, &off, noff, NULL);
        } else {
            snprintf(label, sizeof label, "  %-6s %s", name,
                     grad_is_mx(run->formats[j]) ? "MX blocks of 32: "
                     : run->autoscale && run->loss.has_scale ? "at the loss scale: "
                                                             : "");
            verdict_line(out, label, grad_counts(run, t, j), grad_nonzero(t), err);
        }
        worst_line(out, run, j);
    }
    if (run->autoscale && run->sqnr) {
        char line[1024] = "SQNR at the run's scale (dB):";
        for (int j = 0; j < run->nformats; j++) {
            bool none;
            double db = grad_sqnr_db(&t->err[j], &none);
            size_t at = strlen(line);
            const char *comma = j + 1 < run->nformats ? "," : "";
            if (none)
                snprintf(line + at, sizeof line - at, " %s -%s", run->formats[j]->name, comma);
            else
                snprintf(line + at, sizeof line - at, " %s %.1f%s", run->formats[j]->name, db,
                         comma);
        }
        table_wrap(out, line, 9);
    }
}

/* The largest share of R's nonzero values that any format loses. */
static double most_lost(const grad_run *run, const grad_row *r)
{
    double most = 0;
    for (int j = 0; j < run->nformats; j++)
        if (lost_share(run, r, j) > most)
            most = lost_share(run, r, j);
    return most;
}

static int by_loss(const void *a, const void *b)
{
    const double *x = a, *y = b; /* {share, row} pairs: largest share first, then row order */
    if (x[0] != y[0])
        return x[0] < y[0] ? 1 : -1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

size_t *grad_worst_order(const grad_run *run, size_t *nlost)
{
    size_t n = run->nrows;
    double *pairs = cli_xcalloc(2 * (n ? n : 1), sizeof *pairs);
    *nlost = 0;
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = most_lost(run, &run->rows[i]);
        pairs[2 * i + 1] = (double)i;
        *nlost += pairs[2 * i] > 0;
    }
    qsort(pairs, n, 2 * sizeof *pairs, by_loss);
    size_t *order = cli_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = (size_t)pairs[2 * i + 1];
    free(pairs);
    return order;
}

/* The TOP tensors that lose most in their worst format. */
static void worst_table(FILE *out, const grad_run *run, int top)
{
    size_t n, *order = grad_worst_order(run, &n);
    if ((size_t)top < n)
        n = (size_t)top;
    if (n) {
        fprintf(out, "\nThe %zu tensor%s that lose most (%% of their nonzero values vanished or "
                     "overflowed):\n",
                n, n == 1 ? "" : "s");
        table *tb = table_new(3 + run->nformats, 2);
        table_column(tb, 0, "tensor", true, true);
        table_column(tb, 1, "step", false, false);
        table_column(tb, 2, "nonzero", false, false);
        for (int j = 0; j < run->nformats; j++)
            table_column(tb, 3 + j, run->formats[j]->name, false, false);
        for (size_t k = 0; k < n; k++) {
            const grad_row *r = &run->rows[order[k]];
            char *name = cli_printable(r->name);
            table_add(tb, "%s", name);
            free(name);
            if (r->has_step)
                table_add(tb, "%" PRId64, r->step);
            else
                table_add(tb, "-");
            table_add(tb, "%" PRIu64, grad_nonzero(r));
            for (int j = 0; j < run->nformats; j++) {
                char p[8];
                const fpk_format_counts *c = grad_counts(run, r, j);
                table_add(tb, "%s", cli_percent(p, c->underflow + c->overflow, grad_nonzero(r)));
            }
        }
        table_print(tb, out, TABLE_WIDTH);
        table_free(tb);
    }
    free(order);
}

/* The steps, one line each: the share each format loses. */
static void step_table(FILE *out, const grad_run *run)
{
    if (!run->nsteps)
        return;
    fputs("\nBy step (% of the nonzero values vanished or overflowed):\n", out);
    table *tb = table_new(3 + run->nformats, 2);
    table_column(tb, 0, "step", false, false);
    table_column(tb, 1, "tensors", false, false);
    table_column(tb, 2, "nonzero", false, false);
    for (int j = 0; j < run->nformats; j++)
        table_column(tb, 3 + j, run->formats[j]->name, false, false);
    for (size_t k = 0; k < run->nsteps; k++) {
        const grad_row *s = &run->steps[k];
        size_t tensors = 0;
        for (size_t i = 0; i < run->nrows; i++)
            tensors += run->rows[i].has_step && run->rows[i].step == s->step;
        table_add(tb, "%" PRId64, s->step);
        table_add(tb, "%zu", tensors);
        table_add(tb, "%" PRIu64, grad_nonzero(s));
        for (int j = 0; j < run->nformats; j++) {
            char p[8];
            const fpk_format_counts *c = grad_counts(run, s, j);
            table_add(tb, "%s", cli_percent(p, c->underflow + c->overflow, grad_nonzero(s)));
        }
    }
    table_print(tb, out, TABLE_WIDTH);
    table_free(tb);
}

/* --all: every tensor's listing, then per format every tensor's counts. */
static void full_tables(FILE *out, const grad_run *run)
{
    fputs("\nEvery tensor:\n", out);
    table *tb = table_new(8, 2);
    static const char *const heads[] = {"tensor", "step", "dtype", "shape", "count", "zeros",
                                        "log2|x|", "median"};
    for (int c = 0; c < 8; c++)
        table_column(tb, c, heads[c], c == 0 || c == 3, c == 0);
    for (size_t i = 0; i <= run->nrows; i++) {
        const grad_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        char shape[256] = "", *name = cli_printable(r->name ? r->name : "total");
        if (r->name)
            cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
        table_add(tb, "%s", name);
        free(name);
        if (r->has_step && r->name)
            table_add(tb, "%" PRId64, r->step);
        else
            table_add(tb, "%s", "");
        table_add(tb, "%s", r->name ? fpk_dtype_name(r->dtype) : "");
        table_add(tb, "%s", shape);
        table_add(tb, "%" PRIu64, r->count);
        table_add(tb, "%" PRIu64, r->zeros);
        int lo, hi, med;
        if (grad_log2_range(r, &lo, &hi))
            table_add(tb, "%d..%d", lo, hi);
        else
            table_add(tb, "-");
        if (grad_log2_median(r, &med))
            table_add(tb, "%d", med);
        else
            table_add(tb, "-");
    }
    table_print(tb, out, TABLE_WIDTH);
    table_free(tb);
    for (int j = 0; j < run->nformats; j++) {
        fprintf(out, "\n%s, %% of the nonzero values:\n", run->formats[j]->name);
        bool scales = run->autoscale;
        tb = table_new(scales ? 8 : 7, 2);
        int c = 0;
        table_column(tb, c++, "tensor", true, true);
        table_column(tb, c++, "step", false, false);
        table_column(tb, c++, "nonzero", false, false);
        if (scales)
            table_column(tb, c++, "scale", false, false);
        table_column(tb, c++, "zero", false, false);
        table_column(tb, c++, "subn", false, false);
        table_column(tb, c++, "over", false, false);
        table_column(tb, c++, "SQNR dB", false, false);
        for (size_t i = 0; i <= run->nrows; i++) {
            const grad_row *r = i < run->nrows ? &run->rows[i] : &run->total;
            const fpk_format_counts *k = grad_counts(run, r, j);
            char *name = cli_printable(r->name ? r->name : "total"), p[3][8], sc[48] = "";
            table_add(tb, "%s", name);
            free(name);
            if (r->has_step && r->name)
                table_add(tb, "%" PRId64, r->step);
            else
                table_add(tb, "%s", "");
            table_add(tb, "%" PRIu64, grad_nonzero(r));
            if (scales) {
                bool own = grad_has_amax_scale(run->formats[j]);
                if (r->name && (own ? r->fp8[j].has_scale : r->loss.has_scale))
                    scale_text(sc, sizeof sc, own ? r->fp8[j].value : r->loss.value);
                table_add(tb, "%s", sc);
            }
            table_add(tb, "%s", cli_percent(p[0], k->underflow, grad_nonzero(r)));
            table_add(tb, "%s", cli_percent(p[1], k->subnormal, grad_nonzero(r)));
            table_add(tb, "%s", cli_percent(p[2], k->overflow, grad_nonzero(r)));
            bool none = true;
            double db = run->sqnr ? grad_sqnr_db(&r->err[j], &none) : 0;
            if (none)
                table_add(tb, "-");
            else
                table_add(tb, "%.2f", db);
        }
        table_print(tb, out, TABLE_WIDTH);
        table_free(tb);
    }
}

void grad_text(const grad_run *run, FILE *out, int top, bool all)
{
    const grad_row *t = &run->total;
    char scale[48];
    scale_text(scale, sizeof scale, run->scale);
    char head[400], steps[80] = "", scaled[120] = "";
    if (run->nsteps)
        snprintf(steps, sizeof steps, " (steps %" PRId64 " to %" PRId64 ")", run->steps[0].step,
                 run->steps[run->nsteps - 1].step);
    if (run->scale != 1)
        snprintf(scaled, sizeof scaled, ", loss scale %s", scale);
    snprintf(head, sizeof head,
             "fpgrad: %zu %s in %zu %s%s, %" PRIu64 " %s, %" PRIu64 " nonzero finite; round %s%s",
             run->nrows, plural(run->nrows, "tensor", "tensors"), run->nfiles,
             plural(run->nfiles, "file", "files"), steps, t->count,
             plural(t->count, "element", "elements"), grad_nonzero(t),
             fpk_round_name(run->round), scaled);
    table_wrap(out, head, 9);
    verdict(out, run);
    worst_table(out, run, top);
    step_table(out, run);
    if (all)
        full_tables(out, run);
    else
        fputs("\n(--all: every tensor; --json, --csv: every number)\n", out);
}
