/* fpscale's outputs but the text: the JSON (fpscale(1), JSON OUTPUT), the
 * CSV of FP8 mode, and the plot of the scale trajectory and of the share
 * that underflows, through plots/fpscale.gp (gnuplot.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpscale.h"
#include "gnuplot.h"
#include "scaling.h"
#include "text.h"

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

/* The SQNR of C's sums in dB, null without signal or error. */
static json_t *db_json(const scale_counts *c)
{
    double db;
    return scale_db(c, &db) && isfinite(db) ? json_real(db) : json_null();
}

/* FP8 mode: the SQNR of C, and current scaling's counts CUR (of scale
 * SCALE, unless NULL). */
static void json_fp8(json_t *o, const scale_counts *c, const scale_counts *cur,
                     const fpk_bits *scale)
{
    json_object_set_new(o, "sqnr_db", db_json(c));
    json_t *k = json_object();
    if (scale) {
        json_object_set_new(k, "scale", json_real(scale_f32(*scale)));
        json_object_set_new(k, "scale_log2", jlog2(*scale));
    }
    json_object_set_new(k, "saturated", jcount(cur->overflow));
    json_object_set_new(k, "underflow", jcount(cur->underflow));
    json_object_set_new(k, "saturated_frac", frac(cur->overflow, cur->nonzero));
    json_object_set_new(k, "underflow_frac", frac(cur->underflow, cur->nonzero));
    json_object_set_new(k, "sqnr_db", db_json(cur));
    json_object_set_new(o, "current", k);
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

/* The record of tensor E at the step of file F: its name and step, in fp8
 * mode its scale and history, then its counts (OVER names the overflow's). */
static json_t *entry_json(const scale_run *run, const scale_file *f, const scale_entry *e)
{
    json_t *t = json_object();
    json_object_set_new(t, "name", json_string(e->name));
    json_object_set_new(t, "step", json_integer(f->step));
    if (run->fp8) {
        json_object_set_new(t, "scale", json_real(scale_f32(e->scale)));
        json_object_set_new(t, "scale_log2", jlog2(e->scale));
        json_object_set_new(t, "history", jcount(e->history));
        json_object_set_new(t, "history_amax",
                            e->has_hist_amax ? finite_or_null(e->hist_amax) : json_null());
        json_object_set_new(t, "amax", finite_or_null(e->amax));
    }
    json_counts(t, &e->c, run->fp8 ? "saturated" : "overflow");
    if (run->fp8)
        json_fp8(t, &e->c, &e->cur, &e->cur_scale);
    return t;
}

/* Into J: the params, steps and total of RUN (in FP8 mode, of its
 * setting). */
static void replay_json(json_t *j, const scale_run *run)
{
    json_t *p = json_object();
    if (run->fp8) {
        json_object_set_new(p, "fp8_max",
                            json_real(fpk_to_double(run->format, run->format->max_finite)));
        json_object_set_new(p, "history", json_integer(run->set.history));
        json_object_set_new(p, "amax_rule", json_string(sweep_amax_name(run->set.most_recent)));
        json_object_set_new(p, "margin", json_integer(run->set.margin));
        json_object_set_new(p, "fp8_scale",
                            json_string(scaling_rule_name((scaling_rule)run->set.rule)));
    } else {
        json_object_set_new(p, "init_scale", json_real(scale_f32(run->init_scale)));
        json_object_set_new(p, "growth_factor", json_real(run->growth_factor));
        json_object_set_new(p, "backoff_factor", json_real(run->backoff_factor));
        json_object_set_new(p, "growth_interval", json_integer(run->growth_interval));
    }
    json_object_set_new(j, "params", p);
    json_t *steps = json_array();
    uint64_t skipped = 0;
    scale_counts all, cur;
    scale_totals(run, &all, &cur);
    for (size_t i = 0; i < run->nfiles; i++) {
        const scale_file *f = &run->files[i];
        const scale_step *st = &run->steps[i];
        json_t *s = json_object(), *ts = json_array();
        json_object_set_new(s, "step", json_integer(f->step));
        json_object_set_new(s, "file", json_string(f->path));
        json_object_set_new(s, "step_from",
                            json_string(f->step_from_metadata ? "metadata" : "name"));
        if (run->grads_scaled)
            json_object_set_new(s, "loss_scale", json_real(f->loss_scale));
        for (size_t k = 0; k < st->n; k++)
            json_array_append_new(ts, entry_json(run, f, &st->t[k]));
        if (run->fp8) {
            json_counts(s, &st->sum, "saturated");
            json_fp8(s, &st->sum, &st->cur, NULL);
            json_object_set_new(s, "tensors", ts);
        } else {
            json_object_set_new(s, "scale", json_real(scale_f32(st->scale)));
            json_object_set_new(s, "scale_log2", jlog2(st->scale));
            json_object_set_new(s, "skipped", json_boolean(st->skipped));
            json_object_set_new(s, "tensors", jcount(st->n));
            json_counts(s, &st->sum, "overflow");
            json_object_set_new(s, "growth_tracker", json_integer(st->tracker));
            json_object_set_new(s, "next_scale", json_real(scale_f32(st->next_scale)));
            json_object_set_new(s, "per_tensor", ts);
            skipped += st->skipped;
        }
        json_array_append_new(steps, s);
    }
    json_object_set_new(j, "steps", steps);
    json_t *t = json_object();
    json_object_set_new(t, "steps", jcount(run->nfiles));
    if (!run->fp8) {
        json_object_set_new(t, "skipped", jcount(skipped));
        json_object_set_new(t, "final_scale",
                            json_real(scale_f32(run->steps[run->nfiles - 1].next_scale)));
    }
    json_counts(t, &all, run->fp8 ? "saturated" : "overflow");
    if (run->fp8)
        json_fp8(t, &all, &cur, NULL);
    json_object_set_new(j, "total", t);
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
    if (!run->sweep) {
        replay_json(j, run);
        return j;
    }
    json_t *swept = json_array(), *settings = json_array();
    for (int q = 0; q < run->sweep->nparams; q++)
        json_array_append_new(swept, json_string(sweep_param_name(run->sweep->order[q])));
    json_object_set_new(j, "swept", swept);
    json_object_set_new(j, "ranked_by", json_string("lost, then sqnr_db"));
    for (size_t r = 0; r < run->nsettings; r++) {
        scale_run v = scale_view(run, run->rank[r]);
        json_t *o = json_object();
        json_object_set_new(o, "rank", json_integer((json_int_t)r + 1));
        replay_json(o, &v);
        json_array_append_new(settings, o);
    }
    json_object_set_new(j, "settings", settings);
    return j;
}

/* A percentage N/D for the plot, 0 when D is 0. */
static double percent(uint64_t n, uint64_t d)
{
    return d ? 100.0 * (double)n / (double)d : 0.0;
}

/* The data: per series (the run in loss mode, a tensor in fp8 mode) a
 * block headed by its quoted name, lines "STEP SCALE MARKED"; then a last
 * block "shares", lines "STEP UNDER OVER MARKED" (percentages of the
 * step's nonzero finite elements); blocks two blank lines apart.
 * Returns the number of scale blocks. */
static int plot_data(const scale_run *run, FILE *fp)
{
    int blocks = 0;
    if (!run->fp8) {
        fprintf(fp, "\"loss scale\"\n");
        for (size_t i = 0; i < run->nfiles; i++)
            fprintf(fp, "%" PRId64 " %.17g %d\n", run->files[i].step,
                    scale_f32(run->steps[i].scale), run->steps[i].skipped);
        blocks = 1;
    }
    for (size_t n = 0; run->fp8 && n < run->nnames; n++) {
        fputs(n ? "\n\n\"" : "\"", fp);
        for (const char *c = run->names[n]; *c; c++)
            fputc(*c == '"' || *c == '\\' ? '\'' : *c, fp);
        fputs("\"\n", fp);
        for (size_t i = 0; i < run->nfiles; i++)
            for (size_t j = 0; j < run->steps[i].n; j++)
                if (run->steps[i].t[j].name == run->names[n])
                    fprintf(fp, "%" PRId64 " %.17g %d\n", run->files[i].step,
                            scale_f32(run->steps[i].t[j].scale), run->steps[i].t[j].c.overflow > 0);
        blocks++;
    }
    fputs("\n\n\"shares\"\n", fp);
    for (size_t i = 0; i < run->nfiles; i++) {
        const scale_step *st = &run->steps[i];
        uint64_t over = st->sum.overflow + (run->fp8 ? 0 : st->sum.nonfinite);
        fprintf(fp, "%" PRId64 " %.17g %.17g %d\n", run->files[i].step,
                percent(st->sum.underflow, st->sum.nonzero), percent(over, st->sum.nonzero),
                run->fp8 ? over > 0 : st->skipped);
    }
    return blocks;
}

void scale_plot(const scale_run *run, const char *path, int width, int height)
{
    gp_plot p;
    gp_begin(&p, path, "fpscale.gp");
    int blocks = plot_data(run, p.data);
    char *title = run->fp8 ? cli_strf("FP8 delayed scaling (%s, history %ld (%s), margin %d, %s "
                                      "scales)",
                                      run->format->name, run->set.history,
                                      sweep_amax_name(run->set.most_recent), run->set.margin,
                                      scaling_rule_name((scaling_rule)run->set.rule))
                           : cli_strf("dynamic loss scaling (%s)", run->format->name);
    char *q_title = gp_quote(title);
    char *vars = cli_strf("width=%d; height=%d; mode='%s'; blocks=%d; title=%s; fmt='%s'", width,
                          height, run->fp8 ? "fp8" : "loss", blocks, q_title, run->format->name);
    free(q_title), free(title);
    gp_end(&p, vars);
    free(vars);
}

/* A double that reads back exactly, or nothing; after a comma. */
static void csv_real(FILE *out, bool has, double v)
{
    if (has && isfinite(v))
        fprintf(out, ",%.17g", v);
    else
        fputc(',', out);
}

/* C's counts, its SQNR, then current scaling's (CUR, at SCALE unless
 * NULL). */
static void csv_counts(FILE *out, const scale_counts *c, const scale_counts *cur,
                       const fpk_bits *scale)
{
    double db = 0, cur_db = 0;
    bool has = scale_db(c, &db), cur_has = scale_db(cur, &cur_db);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, c->count,
            c->nonzero, c->nonfinite, c->overflow, c->underflow);
    csv_real(out, has, db);
    csv_real(out, scale != NULL, scale ? scale_f32(*scale) : 0);
    fprintf(out, ",%" PRIu64 ",%" PRIu64, cur->overflow, cur->underflow);
    csv_real(out, cur_has, cur_db);
}

void scale_csv(const scale_run *run, FILE *out)
{
    fputs("kind,rank,history,amax_rule,margin,fp8_scale,step,name,scale,history_amaxes,"
          "history_amax,amax,count,nonzero_finite,nonfinite,saturated,underflow,sqnr_db,"
          "current_scale,current_saturated,current_underflow,current_sqnr_db\n",
          out);
    for (size_t r = 0; r < run->nsettings; r++) {
        size_t k = run->rank ? run->rank[r] : r;
        const fp8_setting *set = &run->settings[k];
        scale_run v = scale_view(run, k);
        char head[160];
        snprintf(head, sizeof head, "%zu,%ld,%s,%d,%s", r + 1, set->history,
                 sweep_amax_name(set->most_recent), set->margin,
                 scaling_rule_name((scaling_rule)set->rule));
        for (size_t i = 0; i < v.nfiles; i++)
            for (size_t j = 0; j < v.steps[i].n; j++) {
                const scale_entry *e = &v.steps[i].t[j];
                fprintf(out, "tensor,%s,%" PRId64 ",", head, v.files[i].step);
                cli_csv_field(out, e->name);
                csv_real(out, true, scale_f32(e->scale));
                fprintf(out, ",%zu", e->history);
                csv_real(out, e->has_hist_amax, e->hist_amax);
                csv_real(out, true, e->amax);
                csv_counts(out, &e->c, &e->cur, &e->cur_scale);
                fputc('\n', out);
            }
        scale_counts all, cur;
        scale_totals(&v, &all, &cur);
        fprintf(out, "total,%s,,,,,,", head);
        csv_counts(out, &all, &cur, NULL);
        fputc('\n', out);
    }
}
