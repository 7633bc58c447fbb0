/* fpscale's text (fpscale(1), TEXT OUTPUT): what was replayed, a summary
 * (the scale trajectory, the skipped steps, the underflow and overflow at
 * the scales), the worst tensors, the steps, and with --all every tensor
 * at every step. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpscale.h"
#include "scaling.h"
#include "summary.h"
#include "table.h"
#include "text.h"

/* A double as its shortest decimal. */
static void shortest(char *buf, size_t len, double x)
{
    fpk_format_shortest(&fpk_fp64, scale_f64_bits(x), buf, len);
}

const char *scale_pct(char *buf, uint64_t n, uint64_t d)
{
    char p[8];
    const char *t = cli_percent(p, n, d);
    snprintf(buf, 16, "%s%s", t, strcmp(t, "0") && strcmp(t, "-") ? "%" : "");
    return buf;
}

static int64_t step_of(const scale_run *run, size_t i)
{
    return run->files[i].step;
}

static void header(const scale_run *run, FILE *out)
{
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < run->nfiles; i++) {
        size_t n = run->steps[i].n;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    char range[48], span[64];
    snprintf(range, sizeof range, lo == hi ? "%zu" : "%zu to %zu", lo, hi);
    if (run->nfiles == 1)
        snprintf(span, sizeof span, "%" PRId64, step_of(run, 0));
    else
        snprintf(span, sizeof span, "%" PRId64 " to %" PRId64, step_of(run, 0),
                 step_of(run, run->nfiles - 1));
    fprintf(out, "fpscale: %zu step%s (%s), %s tensor%s a step matching %s%s\n", run->nfiles,
            cli_plural(run->nfiles), span, range, cli_plural(hi), run->match,
            run->grads_scaled ? ", divided by their loss_scale" : "");
    char a[64], b[64], c[64]; /* e8m0's max, 2^127, exactly: 44 characters */
    const fp8_setting *set = &run->set;
    if (run->fp8 && run->sweep) {
        sweep_text(run, out);
        fprintf(out, "\nThe least loss in detail, history %ld (%s), margin %d, %s scales:\n",
                set->history, sweep_amax_name(set->most_recent), set->margin,
                scaling_rule_name((scaling_rule)set->rule));
    } else if (run->fp8) {
        fpk_format_exact(run->format, run->format->max_finite, a, sizeof a);
        fprintf(out, "FP8 delayed scaling in %s (max %s): history %ld (%s), margin %d, %s scales\n",
                run->format->name, a, set->history, sweep_amax_name(set->most_recent),
                set->margin, scaling_rule_name((scaling_rule)set->rule));
    } else {
        scale_text_value(a, sizeof a, run->init_scale);
        shortest(b, sizeof b, run->growth_factor);
        shortest(c, sizeof c, run->backoff_factor);
        fprintf(out,
                "loss scaling in %s: init %s, growth %s every %" PRId64
                " clean step%s, backoff %s\n",
                run->format->name, a, b, run->growth_interval,
                cli_plural((uint64_t)run->growth_interval), c);
    }
}

/* The values along the steps: "0 at step 0, 0 at 50, 4.49% at 919" for a
 * few steps, else the first, the last, the lowest and the highest.  VALUE
 * writes step I's into BUF (16 bytes) and returns its rank (for the
 * lowest and highest). */
typedef double value_fn(const scale_run *run, size_t i, char *buf);

#define FEW_STEPS 6

static void trend(summary_line *t, const scale_run *run, value_fn *value)
{
    char b[16];
    size_t n = run->nfiles;
    if (n <= FEW_STEPS) {
        for (size_t i = 0; i < n; i++) {
            value(run, i, b);
            summary_add(t, "%s%s at %s%" PRId64, i ? ", " : "", b, i ? "" : "step ",
                        step_of(run, i));
        }
        return;
    }
    size_t lo = 0, hi = 0;
    for (size_t i = 1; i < n; i++) {
        double v = value(run, i, b);
        if (v < value(run, lo, b))
            lo = i;
        if (v > value(run, hi, b))
            hi = i;
    }
    value(run, 0, b);
    summary_add(t, "%s at step %" PRId64, b, step_of(run, 0));
    value(run, n - 1, b);
    summary_add(t, ", %s at the last (%" PRId64 ")", b, step_of(run, n - 1));
    value(run, lo, b);
    summary_add(t, "; lowest %s at step %" PRId64, b, step_of(run, lo));
    value(run, hi, b);
    summary_add(t, ", highest %s at step %" PRId64, b, step_of(run, hi));
}

static double underflow_at(const scale_run *run, size_t i, char *buf)
{
    const scale_counts *c = &run->steps[i].sum;
    scale_pct(buf, c->underflow, c->nonzero);
    return c->nonzero ? (double)c->underflow / (double)c->nonzero : 0;
}

static double saturated_at(const scale_run *run, size_t i, char *buf)
{
    const scale_counts *c = &run->steps[i].sum;
    scale_pct(buf, c->overflow, c->nonzero);
    return c->nonzero ? (double)c->overflow / (double)c->nonzero : 0;
}

/* The tensor at a step whose count of COUNT (over its nonzero finite
 * elements when SHARE; of equal shares, the larger count) is largest, as
 * " (worst: NAME at step S, X)"; nothing when every count is 0. */
static void worst_of(summary_line *t, const scale_run *run, uint64_t (*count)(const scale_entry *),
                     bool share)
{
    const scale_entry *w = NULL;
    size_t wi = 0;
    double best = 0;
    for (size_t i = 0; i < run->nfiles; i++)
        for (size_t j = 0; j < run->steps[i].n; j++) {
            const scale_entry *e = &run->steps[i].t[j];
            uint64_t k = count(e);
            double v = share ? (e->c.nonzero ? (double)k / (double)e->c.nonzero : 0) : (double)k;
            if (v > best || (w && v == best && k > count(w)))
                best = v, w = e, wi = i;
        }
    if (!w)
        return;
    char *name = cli_printable(w->name), b[48];
    if (share)
        scale_pct(b, count(w), w->c.nonzero);
    else
        snprintf(b, sizeof b, "%" PRIu64 " element%s", count(w), cli_plural(count(w)));
    summary_add(t, " (worst: %s at step %" PRId64 ", %s)", name, step_of(run, wi), b);
    free(name);
}

static uint64_t underflows(const scale_entry *e)
{
    return e->c.underflow;
}

static uint64_t overflows(const scale_entry *e)
{
    return e->c.overflow + e->c.nonfinite;
}

static uint64_t saturates(const scale_entry *e)
{
    return e->c.overflow;
}

static scale_counts totals(const scale_run *run)
{
    scale_counts all, cur;
    scale_totals(run, &all, &cur);
    return all;
}

#define MAX_LISTED 10 /* skipped steps named one by one */

/* Loss mode: the trajectory, the skipped steps, underflow and overflow. */
static void summary_loss(const scale_run *run, FILE *out)
{
    summary_line t = {0};
    char a[40];
    size_t runs = 0;
    for (size_t i = 0; i < run->nfiles; i++)
        runs += !i || run->steps[i].scale != run->steps[i - 1].scale;
    summary_add(&t, "Scale:");
    if (runs == 1) {
        scale_text_value(a, sizeof a, run->steps[0].scale);
        summary_add(&t, " %s at %s", a, run->nfiles == 1 ? "the step" : "every step");
    } else if (runs <= FEW_STEPS) {
        for (size_t i = 0, k = 0; i < run->nfiles; i++)
            if (!i || run->steps[i].scale != run->steps[i - 1].scale) {
                scale_text_value(a, sizeof a, run->steps[i].scale);
                summary_add(&t, "%s %s at %s%" PRId64, k++ ? "," : "", a, i ? "" : "step ",
                            step_of(run, i));
            }
    } else {
        size_t lo = 0, hi = 0;
        for (size_t i = 1; i < run->nfiles; i++) {
            if (scale_f32(run->steps[i].scale) < scale_f32(run->steps[lo].scale))
                lo = i;
            if (scale_f32(run->steps[i].scale) > scale_f32(run->steps[hi].scale))
                hi = i;
        }
        char b[40], c[40];
        scale_text_value(a, sizeof a, run->steps[0].scale);
        scale_text_value(b, sizeof b, run->steps[lo].scale);
        scale_text_value(c, sizeof c, run->steps[hi].scale);
        summary_add(&t, " %s at step %" PRId64 ", then between %s and %s, changing %zu times", a,
                    step_of(run, 0), b, c, runs - 1);
        scale_text_value(a, sizeof a, run->steps[run->nfiles - 1].scale);
        summary_add(&t, "; %s at the last step (%" PRId64 ")", a, step_of(run, run->nfiles - 1));
    }
    const scale_step *last = &run->steps[run->nfiles - 1];
    scale_text_value(a, sizeof a, last->next_scale);
    summary_add(&t, "; then %s, %" PRId64 " of %" PRId64 " clean step%s toward growth.", a,
                last->tracker, run->growth_interval, cli_plural((uint64_t)run->growth_interval));
    summary_end(&t, out);

    size_t skipped = 0;
    for (size_t i = 0; i < run->nfiles; i++)
        skipped += run->steps[i].skipped;
    scale_counts all = totals(run);
    if (!skipped) {
        summary_add(&t, "Skipped: none; no element overflows %s.", run->format->name);
    } else {
        summary_add(&t, "Skipped: %zu of %zu step%s (", skipped, run->nfiles,
                    cli_plural(run->nfiles));
        for (size_t i = 0, k = 0; i < run->nfiles; i++)
            if (run->steps[i].skipped && k++ < MAX_LISTED)
                summary_add(&t, "%s%" PRId64, k > 1 ? ", " : "", step_of(run, i));
        summary_add(&t, "%s), where %" PRIu64 " element%s overflowed %s",
                    skipped > MAX_LISTED ? ", ..." : "", all.overflow, cli_plural(all.overflow),
                    run->format->name);
        if (all.nonfinite)
            summary_add(&t, " and %" PRIu64 " %s not finite in the dumps", all.nonfinite,
                        all.nonfinite == 1 ? "was" : "were");
        worst_of(&t, run, overflows, false);
        summary_add(&t, ".");
    }
    summary_end(&t, out);

    if (!all.underflow) {
        summary_add(&t, "Underflow: no nonzero gradient rounds to zero in %s at these scales.",
                    run->format->name);
    } else {
        char b[16];
        summary_add(&t, "Underflow: %s of the nonzero gradients round to zero in %s at %s: ",
                    scale_pct(b, all.underflow, all.nonzero), run->format->name,
                    runs == 1 ? "that scale" : "these scales");
        trend(&t, run, underflow_at);
        worst_of(&t, run, underflows, true);
        summary_add(&t, ".");
    }
    summary_end(&t, out);
}

/* An SQNR for the text: "21.30", "inf"; BUF of 16 bytes. */
static const char *db_text(char *buf, double db)
{
    snprintf(buf, 16, isinf(db) ? "inf" : "%.2f", db);
    return buf;
}

/* The SQNR of C for a table: "21.30", "inf", "-" without signal. */
static const char *db_cell(char *buf, const scale_counts *c)
{
    double db;
    return scale_db(c, &db) ? db_text(buf, db) : strcpy(buf, "-");
}

/* " (worst: NAME at step S, X dB)": the tensor at a step whose SQNR, of
 * its delayed cast (CUR false) or its current one, is the least. */
static void worst_db(summary_line *t, const scale_run *run, bool cur)
{
    const scale_entry *w = NULL;
    size_t wi = 0;
    double least = 0, db;
    for (size_t i = 0; i < run->nfiles; i++)
        for (size_t j = 0; j < run->steps[i].n; j++) {
            const scale_entry *e = &run->steps[i].t[j];
            if (scale_db(cur ? &e->cur : &e->c, &db) && (!w || db < least))
                least = db, w = e, wi = i;
        }
    if (!w)
        return;
    char *name = cli_printable(w->name), b[16];
    summary_add(t, " (worst: %s at step %" PRId64 ", %s dB)", name, step_of(run, wi),
                db_text(b, least));
    free(name);
}

/* The SQNR of the delayed casts, then what current scaling does. */
static void summary_sqnr(summary_line *t, const scale_run *run, FILE *out)
{
    scale_counts all, cur;
    scale_totals(run, &all, &cur);
    char a[64], b[16], p[16];
    double db;
    if (scale_db(&all, &db)) {
        summary_add(t, "SQNR: %s dB over every tensor and step", db_text(b, db));
        worst_db(t, run, false);
        summary_add(t, ".");
        summary_end(t, out);
    }
    fpk_format_exact(run->format, run->format->max_finite, a, sizeof a);
    summary_add(t, "Current scaling, each tensor at %s / its own amax%s: %s of the nonzero "
                   "elements (%" PRIu64 ") round to zero and ",
                a, run->set.rule == SCALING_POW2 ? " rounded down to a power of two" : "",
                scale_pct(p, cur.underflow, cur.nonzero), cur.underflow);
    if (cur.overflow)
        summary_add(t, "%" PRIu64 " saturate", cur.overflow);
    else
        summary_add(t, "none saturates");
    if (scale_db(&cur, &db)) {
        summary_add(t, "; SQNR %s dB", db_text(b, db));
        worst_db(t, run, true);
    }
    summary_add(t, ".");
    summary_end(t, out);
}

/* FP8 mode: how the scales are made and where they end, saturation and
 * underflow, the SQNR, and current scaling beside them. */
static void summary_fp8(const scale_run *run, FILE *out)
{
    summary_line t = {0};
    char a[64], b[40], c[40];
    fpk_format_exact(run->format, run->format->max_finite, a, sizeof a);
    const fp8_setting *set = &run->set;
    summary_add(&t, "Scales: each tensor is cast at scale 1 at its first step (its history empty), "
                    "then at %s / ", a);
    if (set->most_recent)
        summary_add(&t, "its amax at the step before");
    else
        summary_add(&t, "the largest amax of its last %ld step%s", set->history,
                    cli_plural((uint64_t)set->history));
    if (set->margin)
        summary_add(&t, " / 2^%d", set->margin);
    summary_add(&t, set->rule == SCALING_POW2 ? ", rounded down to a power of two"
                                              : ", a float32 quotient");
    const scale_step *last = &run->steps[run->nfiles - 1];
    const scale_entry *lo = NULL, *hi = NULL;
    for (size_t j = 0; j < last->n; j++) {
        const scale_entry *e = &last->t[j];
        if (!lo || scale_f32(e->scale) < scale_f32(lo->scale))
            lo = e;
        if (!hi || scale_f32(e->scale) > scale_f32(hi->scale))
            hi = e;
    }
    scale_text_value(b, sizeof b, lo->scale);
    scale_text_value(c, sizeof c, hi->scale);
    char *nlo = cli_printable(lo->name), *nhi = cli_printable(hi->name);
    if (lo == hi)
        summary_add(&t, "; at the last step (%" PRId64 ") %s for %s.",
                    step_of(run, run->nfiles - 1), b, nlo);
    else
        summary_add(&t, "; at the last step (%" PRId64 ") from %s (%s) to %s (%s).",
                    step_of(run, run->nfiles - 1), b, nlo, c, nhi);
    free(nlo), free(nhi);
    summary_end(&t, out);

    scale_counts all = totals(run);
    char p[16];
    if (!all.overflow) {
        summary_add(&t, "Saturated: no element.");
    } else {
        summary_add(&t, "Saturated: %s of the nonzero elements (%" PRIu64 " of %" PRIu64 "): ",
                    scale_pct(p, all.overflow, all.nonzero), all.overflow, all.nonzero);
        trend(&t, run, saturated_at);
        worst_of(&t, run, saturates, true);
        summary_add(&t, ".");
    }
    summary_end(&t, out);
    if (!all.underflow) {
        summary_add(&t, "Underflow: no nonzero element rounds to zero in %s.", run->format->name);
    } else {
        summary_add(&t,
                    "Underflow: %s of the nonzero elements (%" PRIu64 " of %" PRIu64
                    ") round to zero in %s: ",
                    scale_pct(p, all.underflow, all.nonzero), all.underflow, all.nonzero,
                    run->format->name);
        trend(&t, run, underflow_at);
        worst_of(&t, run, underflows, true);
        summary_add(&t, ".");
    }
    summary_end(&t, out);
    summary_sqnr(&t, run, out);
}

/* A tensor at a step, for the tables. */
typedef struct spot {
    size_t step; /* the file's index */
    const scale_entry *e;
} spot;

/* Every tensor at every step, in order; *N of them. */
static spot *spots(const scale_run *run, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < run->nfiles; i++)
        *n += run->steps[i].n;
    spot *v = cli_xcalloc(*n ? *n : 1, sizeof *v), *p = v;
    for (size_t i = 0; i < run->nfiles; i++)
        for (size_t j = 0; j < run->steps[i].n; j++)
            *p++ = (spot){i, &run->steps[i].t[j]};
    return v;
}

/* The columns of a tensor at a step, for the worst tensors and --all. */
static table *spot_table(const scale_run *run)
{
    table *t = table_new(run->fp8 ? 10 : 6, 2);
    int k = 0;
    table_column(t, k++, "tensor", true, true);
    table_column(t, k++, "step", false, false);
    table_column(t, k++, "scale", false, false);
    if (run->fp8) {
        table_column(t, k++, "amax", false, false);
        table_column(t, k++, "satur %", false, false);
    } else {
        table_column(t, k++, "overflow", false, false);
    }
    table_column(t, k++, "under %", false, false);
    if (run->fp8) {
        table_column(t, k++, "dB", false, false);
        table_column(t, k++, "cur under %", false, false);
        table_column(t, k++, "cur dB", false, false);
    }
    table_column(t, k++, "nonzero", false, false);
    return t;
}

static void spot_row(table *t, const scale_run *run, const spot *s)
{
    const scale_entry *e = s->e;
    char sc[40], p[8];
    char *name = cli_printable(e->name);
    table_add(t, "%s", name);
    free(name);
    table_add(t, "%" PRId64, step_of(run, s->step));
    scale_text_value(sc, sizeof sc, run->fp8 ? e->scale : run->steps[s->step].scale);
    table_add(t, "%s", sc);
    if (run->fp8) {
        table_add(t, "%.4g", e->amax);
        table_add(t, "%s", cli_percent(p, e->c.overflow, e->c.nonzero));
    } else {
        table_add(t, "%" PRIu64, e->c.overflow + e->c.nonfinite);
    }
    table_add(t, "%s", cli_percent(p, e->c.underflow, e->c.nonzero));
    if (run->fp8) {
        char b[16];
        table_add(t, "%s", db_cell(b, &e->c));
        table_add(t, "%s", cli_percent(p, e->cur.underflow, e->cur.nonzero));
        table_add(t, "%s", db_cell(b, &e->cur));
    }
    table_add(t, "%" PRIu64, e->c.nonzero);
}

static void worst_text(const scale_run *run, FILE *out)
{
    size_t n;
    spot *v = spots(run, &n);
    double *bad = cli_xcalloc(n ? n : 1, sizeof *bad);
    size_t *order = cli_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        const scale_counts *c = &v[i].e->c;
        uint64_t hurt = c->underflow + c->overflow + (run->fp8 ? 0 : c->nonfinite);
        bad[i] = c->nonzero && hurt ? (double)hurt / (double)c->nonzero : NAN;
    }
    size_t shown = summary_worst(bad, NULL, n, (size_t)run->top, order);
    summary_worst_heading(out, shown, n, "tensor at a step", "tensors at a step",
                          run->fp8 ? "by the share saturating or underflowing"
                                   : "by the share underflowing or overflowing");
    if (shown) {
        table *t = spot_table(run);
        for (size_t k = 0; k < shown; k++)
            spot_row(t, run, &v[order[k]]);
        table_print(t, out, TABLE_WIDTH);
        table_free(t);
    }
    free(order), free(bad), free(v);
}

/* The file name without its directories. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void steps_text(const scale_run *run, FILE *out)
{
    fprintf(out, "\nBy step:\n");
    table *t = table_new(run->fp8 ? 9 : 7, 2);
    if (run->fp8) {
        const char *h[] = {"step",    "tensors", "min scale",   "max scale", "satur %",
                           "under %", "dB",      "cur under %", "cur dB"};
        for (int k = 0; k < 9; k++)
            table_column(t, k, h[k], false, false);
    } else {
        const char *h[] = {"step", "scale", "skipped", "overflow", "under %", "nonzero", "file"};
        for (int k = 0; k < 7; k++)
            table_column(t, k, h[k], k == 6, k == 6);
    }
    for (size_t i = 0; i < run->nfiles; i++) {
        const scale_step *s = &run->steps[i];
        char a[40], p[8];
        table_add(t, "%" PRId64, step_of(run, i));
        if (run->fp8) {
            fpk_bits lo = 0, hi = 0;
            for (size_t j = 0; j < s->n; j++) {
                if (!j || scale_f32(s->t[j].scale) < scale_f32(lo))
                    lo = s->t[j].scale;
                if (!j || scale_f32(s->t[j].scale) > scale_f32(hi))
                    hi = s->t[j].scale;
            }
            table_add(t, "%zu", s->n);
            scale_text_value(a, sizeof a, lo);
            table_add(t, "%s", a);
            scale_text_value(a, sizeof a, hi);
            table_add(t, "%s", a);
            table_add(t, "%s", cli_percent(p, s->sum.overflow, s->sum.nonzero));
            table_add(t, "%s", cli_percent(p, s->sum.underflow, s->sum.nonzero));
            table_add(t, "%s", db_cell(a, &s->sum));
            table_add(t, "%s", cli_percent(p, s->cur.underflow, s->cur.nonzero));
            table_add(t, "%s", db_cell(a, &s->cur));
        } else {
            scale_text_value(a, sizeof a, s->scale);
            table_add(t, "%s", a);
            table_add(t, "%s", s->skipped ? "yes" : "no");
            table_add(t, "%" PRIu64, s->sum.overflow + s->sum.nonfinite);
            table_add(t, "%s", cli_percent(p, s->sum.underflow, s->sum.nonzero));
            table_add(t, "%" PRIu64, s->sum.nonzero);
            char *file = cli_printable(base_name(run->files[i].path));
            table_add(t, "%s", file);
            free(file);
        }
    }
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
}

static void all_text(const scale_run *run, FILE *out)
{
    size_t n;
    spot *v = spots(run, &n);
    fprintf(out, "\nEvery tensor at every step:\n");
    table *t = spot_table(run);
    for (size_t i = 0; i < n; i++)
        spot_row(t, run, &v[i]);
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
    free(v);
}

void scale_text(const scale_run *run, FILE *out)
{
    header(run, out); /* and with --sweep the ranking */
    fprintf(out, "\nSummary:\n");
    if (run->fp8)
        summary_fp8(run, out);
    else
        summary_loss(run, out);
    worst_text(run, out);
    if (run->nfiles >= 2)
        steps_text(run, out);
    if (run->all)
        all_text(run, out);
}
