/* fpscale's outputs: the table, the JSON (fpscale(1) documents both) and
 * the plot of the scale trajectory through plots/fpscale.gp (gnuplot.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpscale.h"
#include "gnuplot.h"

bool scale_log2(fpk_bits scale, int *k)
{
    const fpk_format *f = &fpk_fp32;
    fpk_bits e = (scale & f->exp_mask) >> f->man_bits, m = scale & f->man_mask;
    if (scale & f->sign_mask || e == (f->exp_mask >> f->man_bits))
        return false;
    if (e) { /* normal: a power of two iff the mantissa is 0 */
        *k = (int)e - f->bias;
        return m == 0;
    }
    if (!m || (m & (m - 1)))
        return false;
    int b = 0;
    while (!(m >> b & 1))
        b++;
    *k = f->emin - f->man_bits + b;
    return true;
}

void scale_text_value(char *buf, size_t len, fpk_bits scale)
{
    int k;
    if (scale_log2(scale, &k))
        snprintf(buf, len, "2^%d", k);
    else
        fpk_format_shortest(&fpk_fp32, scale, buf, len);
}

/* A double as its shortest decimal. */
static void shortest(char *buf, size_t len, double x)
{
    fpk_format_shortest(&fpk_fp64, scale_f64_bits(x), buf, len);
}

static void header(const scale_run *run, FILE *out)
{
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < run->nfiles; i++) {
        size_t n = run->fp8 ? run->fp8s[i].n : run->loss[i].tensors;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    char range[48];
    snprintf(range, sizeof range, lo == hi ? "%zu" : "%zu to %zu", lo, hi);
    fprintf(out, "fpscale: %zu step%s, %s tensor%s a step matching %s%s\n", run->nfiles,
            run->nfiles == 1 ? "" : "s", range, hi == 1 ? "" : "s", run->match,
            run->grads_scaled ? ", divided by their loss_scale" : "");
    char a[64], b[64], c[64]; /* e8m0's max, 2^127, exactly: 44 characters */
    if (run->fp8) {
        fpk_format_exact(run->format, run->format->max_finite, a, sizeof a);
        fprintf(out, "FP8 delayed scaling in %s (max %s): history %ld, margin %d\n",
                run->format->name, a, run->history, run->margin);
    } else {
        scale_text_value(a, sizeof a, run->init_scale);
        shortest(b, sizeof b, run->growth_factor);
        shortest(c, sizeof c, run->backoff_factor);
        fprintf(
            out,
            "loss scaling in %s: init %s, growth %s every %" PRId64 " clean step%s, backoff %s\n",
            run->format->name, a, b, run->growth_interval, run->growth_interval == 1 ? "" : "s", c);
    }
}

/* The file name without its directories, for the table. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void text_loss(const scale_run *run, FILE *out)
{
    fprintf(out, "%8s %8s %7s %8s %7s %9s  %s\n", "step", "scale", "skipped", "overflow", "under %",
            "nonzero", "file");
    size_t skipped = 0;
    for (size_t i = 0; i < run->nfiles; i++) {
        const loss_step *s = &run->loss[i];
        char sc[40], pct[8];
        scale_text_value(sc, sizeof sc, s->scale);
        fprintf(out, "%8" PRId64 " %8s %7s %8" PRIu64 " %7s %9" PRIu64 "  %s\n", run->files[i].step,
                sc, s->skipped ? "yes" : "no", s->c.overflow + s->c.nonfinite,
                cli_percent(pct, s->c.underflow, s->c.nonzero), s->c.nonzero,
                base_name(run->files[i].path));
        skipped += s->skipped;
    }
    char sc[40];
    const loss_step *last = &run->loss[run->nfiles - 1];
    scale_text_value(sc, sizeof sc, last->next_scale);
    fprintf(out,
            "%zu of %zu steps skipped; then scale %s, %" PRId64 " clean step%s toward growth\n",
            skipped, run->nfiles, sc, last->tracker, last->tracker == 1 ? "" : "s");
}

static void text_fp8(const scale_run *run, FILE *out)
{
    /* a scale is 2^k or a float32's shortest decimal: 14 characters at most */
    fprintf(out, "%8s %14s %10s %10s %7s %7s  %s\n", "step", "scale", "hist amax", "amax",
            "satur %", "under %", "name");
    scale_counts all = {0};
    for (size_t i = 0; i < run->nfiles; i++) {
        const fp8_step *s = &run->fp8s[i];
        for (size_t j = 0; j < s->n; j++) {
            const fp8_entry *e = &s->t[j];
            char sc[40], ha[24] = "-", am[24], p1[8], p2[8];
            scale_text_value(sc, sizeof sc, e->scale);
            if (e->has_hist_amax)
                snprintf(ha, sizeof ha, "%.4g", e->hist_amax);
            snprintf(am, sizeof am, "%.4g", e->amax);
            char *name = cli_printable(e->name);
            fprintf(out, "%8" PRId64 " %14s %10s %10s %7s %7s  %s\n", run->files[i].step, sc, ha,
                    am, cli_percent(p1, e->c.overflow, e->c.nonzero),
                    cli_percent(p2, e->c.underflow, e->c.nonzero), name);
            free(name);
        }
        all.nonzero += s->sum.nonzero;
        all.overflow += s->sum.overflow;
        all.underflow += s->sum.underflow;
    }
    char p1[8], p2[8];
    fprintf(out,
            "all steps: of %" PRIu64 " nonzero finite elements, %" PRIu64
            " saturated (%s%%), %" PRIu64 " underflowed (%s%%)\n",
            all.nonzero, all.overflow, cli_percent(p1, all.overflow, all.nonzero), all.underflow,
            cli_percent(p2, all.underflow, all.nonzero));
}

void scale_text(const scale_run *run, FILE *out)
{
    header(run, out);
    if (run->fp8)
        text_fp8(run, out);
    else
        text_loss(run, out);
}

static json_t *frac(uint64_t n, uint64_t d)
{
    return d ? json_real((double)n / (double)d) : json_null();
}

static json_t *jcount(uint64_t n)
{
    return json_integer((json_int_t)n);
}

static json_t *jlog2(fpk_bits scale)
{
    int k;
    return scale_log2(scale, &k) ? json_integer(k) : json_null();
}

/* X, or null for an infinity (an amax of a tensor holding inf or NaN). */
static json_t *finite_or_null(double x)
{
    return fpk_classify(&fpk_fp64, scale_f64_bits(x)) == FPK_CLASS_INF ? json_null() : json_real(x);
}

/* The counts shared by both modes; OVER names the overflow count. */
static void json_counts(json_t *o, const scale_counts *c, const char *over)
{
    char *of = cli_strf("%s_frac", over);
    json_object_set_new(o, "count", jcount(c->count));
    json_object_set_new(o, "nonzero_finite", jcount(c->nonzero));
    json_object_set_new(o, "nonfinite", jcount(c->nonfinite));
    json_object_set_new(o, over, jcount(c->overflow));
    json_object_set_new(o, "underflow", jcount(c->underflow));
    json_object_set_new(o, of, frac(c->overflow, c->nonzero));
    json_object_set_new(o, "underflow_frac", frac(c->underflow, c->nonzero));
    free(of);
}

json_t *scale_json(const scale_run *run)
{
    json_t *j = json_object();
    json_object_set_new(j, "tool", json_string("fpscale"));
    json_object_set_new(j, "version", json_string(fpk_version()));
    json_object_set_new(j, "mode", json_string(run->fp8 ? "fp8" : "loss"));
    json_object_set_new(j, "format", json_string(run->format->name));
    json_object_set_new(j, "match", json_string(run->match));
    json_object_set_new(j, "grads_scaled", json_boolean(run->grads_scaled));
    json_t *p = json_object();
    if (run->fp8) {
        json_object_set_new(p, "fp8_max",
                            json_real(fpk_to_double(run->format, run->format->max_finite)));
        json_object_set_new(p, "history", json_integer(run->history));
        json_object_set_new(p, "margin", json_integer(run->margin));
    } else {
        json_object_set_new(p, "init_scale", json_real(scale_f32(run->init_scale)));
        json_object_set_new(p, "growth_factor", json_real(run->growth_factor));
        json_object_set_new(p, "backoff_factor", json_real(run->backoff_factor));
        json_object_set_new(p, "growth_interval", json_integer(run->growth_interval));
    }
    json_object_set_new(j, "params", p);
    json_t *steps = json_array();
    uint64_t skipped = 0;
    scale_counts all = {0};
    for (size_t i = 0; i < run->nfiles; i++) {
        const scale_file *f = &run->files[i];
        json_t *s = json_object();
        json_object_set_new(s, "step", json_integer(f->step));
        json_object_set_new(s, "file", json_string(f->path));
        json_object_set_new(s, "step_from",
                            json_string(f->step_from_metadata ? "metadata" : "name"));
        if (run->grads_scaled)
            json_object_set_new(s, "loss_scale", json_real(f->loss_scale));
        if (run->fp8) {
            const fp8_step *st = &run->fp8s[i];
            json_t *ts = json_array();
            for (size_t k = 0; k < st->n; k++) {
                const fp8_entry *e = &st->t[k];
                json_t *t = json_object();
                json_object_set_new(t, "name", json_string(e->name));
                json_object_set_new(t, "scale", json_real(scale_f32(e->scale)));
                json_object_set_new(t, "scale_log2", jlog2(e->scale));
                json_object_set_new(t, "history", jcount(e->history));
                json_object_set_new(t, "history_amax",
                                    e->has_hist_amax ? finite_or_null(e->hist_amax) : json_null());
                json_object_set_new(t, "amax", finite_or_null(e->amax));
                json_counts(t, &e->c, "saturated");
                json_array_append_new(ts, t);
            }
            json_counts(s, &st->sum, "saturated");
            json_object_set_new(s, "tensors", ts);
            all.count += st->sum.count, all.nonzero += st->sum.nonzero;
            all.nonfinite += st->sum.nonfinite, all.overflow += st->sum.overflow;
            all.underflow += st->sum.underflow;
        } else {
            const loss_step *st = &run->loss[i];
            json_object_set_new(s, "scale", json_real(scale_f32(st->scale)));
            json_object_set_new(s, "scale_log2", jlog2(st->scale));
            json_object_set_new(s, "skipped", json_boolean(st->skipped));
            json_object_set_new(s, "tensors", jcount(st->tensors));
            json_counts(s, &st->c, "overflow");
            json_object_set_new(s, "growth_tracker", json_integer(st->tracker));
            json_object_set_new(s, "next_scale", json_real(scale_f32(st->next_scale)));
            skipped += st->skipped;
            all.count += st->c.count, all.nonzero += st->c.nonzero;
            all.nonfinite += st->c.nonfinite, all.overflow += st->c.overflow;
            all.underflow += st->c.underflow;
        }
        json_array_append_new(steps, s);
    }
    json_object_set_new(j, "steps", steps);
    json_t *t = json_object();
    json_object_set_new(t, "steps", jcount(run->nfiles));
    if (!run->fp8) {
        json_object_set_new(t, "skipped", jcount(skipped));
        json_object_set_new(t, "final_scale",
                            json_real(scale_f32(run->loss[run->nfiles - 1].next_scale)));
    }
    json_counts(t, &all, run->fp8 ? "saturated" : "overflow");
    json_object_set_new(j, "total", t);
    return j;
}

/* The data: per series (the run in loss mode, a tensor in fp8 mode) a
 * block headed by its quoted name, lines "STEP SCALE MARKED", blocks
 * apart by two blank lines.  Returns the number of blocks. */
static int plot_data(const scale_run *run, FILE *fp)
{
    int blocks = 0;
    if (!run->fp8) {
        fprintf(fp, "\"loss scale\"\n");
        for (size_t i = 0; i < run->nfiles; i++)
            fprintf(fp, "%" PRId64 " %.17g %d\n", run->files[i].step, scale_f32(run->loss[i].scale),
                    run->loss[i].skipped);
        blocks = 1;
    }
    for (size_t n = 0; run->fp8 && n < run->nnames; n++) {
        fputs(n ? "\n\n\"" : "\"", fp);
        for (const char *c = run->names[n]; *c; c++)
            fputc(*c == '"' || *c == '\\' ? '\'' : *c, fp);
        fputs("\"\n", fp);
        for (size_t i = 0; i < run->nfiles; i++)
            for (size_t j = 0; j < run->fp8s[i].n; j++)
                if (run->fp8s[i].t[j].name == run->names[n])
                    fprintf(fp, "%" PRId64 " %.17g %d\n", run->files[i].step,
                            scale_f32(run->fp8s[i].t[j].scale), run->fp8s[i].t[j].c.overflow > 0);
        blocks++;
    }
    return blocks;
}

void scale_plot(const scale_run *run, const char *path, int width, int height)
{
    gp_plot p;
    gp_begin(&p, path, "fpscale.gp");
    int blocks = plot_data(run, p.data);
    char *title = run->fp8 ? cli_strf("FP8 delayed scaling (%s, history %ld, margin %d)",
                                      run->format->name, run->history, run->margin)
                           : cli_strf("dynamic loss scaling (%s)", run->format->name);
    char *vars = cli_strf("width=%d; height=%d; mode='%s'; blocks=%d; title='%s'", width, height,
                          run->fp8 ? "fp8" : "loss", blocks, title);
    free(title);
    gp_end(&p, vars);
    free(vars);
}
