/* fpswamp's JSON (fpswamp(1), JSON OUTPUT) and the rows' labels. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "cli.h"
#include "fpswamp.h"
#include "summary.h"

const char *sw_target_name(const sw_run *run, int t)
{
    return t < run->nformats ? run->formats[t]->name : run->recipe_names[t - run->nformats];
}

void sw_row_label(const sw_run *run, const sw_row *r, char *buf, size_t len)
{
    if (!r->name) {
        snprintf(buf, len, "total");
        return;
    }
    char *name = cli_printable(r->name);
    if (run->nfiles < 2) {
        snprintf(buf, len, "%s", name);
    } else {
        const char *base = strrchr(r->wfile, '/'), *dot;
        base = base ? base + 1 : r->wfile;
        dot = strrchr(base, '.');
        int n = (int)(dot && dot != base ? dot - base : (ptrdiff_t)strlen(base));
        char *raw = cli_strf("%.*s", n, base), *stem = cli_printable(raw);
        snprintf(buf, len, "%s:%s", stem, name);
        free(raw);
        free(stem);
    }
    free(name);
}

static json_t *real(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *hist_json(const uint64_t *h)
{
    json_t *a = json_array();
    for (int b = 0; b < SW_BINS; b++)
        json_array_append_new(a, cli_json_count(h[b]));
    return a;
}

/* One strategy's measures into O. */
static void put_acc(json_t *o, const sw_row *r, const sw_acc *a)
{
    json_object_set_new(o, "lost", cli_json_count(a->lost));
    json_object_set_new(o, "lost_frac", real(sw_lost_frac(r, a)));
    json_object_set_new(o, "half_lost", cli_json_count(a->half));
    json_object_set_new(o, "half_lost_frac", real(sw_half_frac(r, a)));
    json_object_set_new(o, "overflow", cli_json_count(a->overflow));
    json_object_set_new(o, "ratio_hist", hist_json(a->hist));
    json_object_set_new(o, "stuck", cli_json_count(a->stuck));
    json_object_set_new(o, "drift_mean", real(sw_drift_mean(r, a)));
    json_object_set_new(o, "drift_signed_mean", real(sw_drift_signed_mean(r, a)));
    json_object_set_new(o, "drift_max",
                        r->nonzero > a->overflow ? json_real(a->drift_max) : json_null());
}

static json_t *acc_json(const sw_row *r, const sw_acc *a)
{
    json_t *o = json_object();
    put_acc(o, r, a);
    return o;
}

static void put_seed_stats(json_t *o, const char *name, const sw_run *run, const sw_row *r,
                           const sw_acc *sr, double (*get)(const sw_row *, const sw_acc *))
{
    double m, sd;
    sw_seed_stats(r, sr, run->seeds, get, &m, &sd);
    char *k = cli_strf("%s_mean", name);
    json_object_set_new(o, k, real(m));
    free(k);
    k = cli_strf("%s_sd", name);
    json_object_set_new(o, k, r->nonzero ? real(sd) : json_null());
    free(k);
}

static json_t *sr_json(const sw_run *run, const sw_row *r, const sw_acc *sr)
{
    json_t *o = json_object(), *lost = json_array(), *drift = json_array();
    sw_acc sum = {0};
    for (int s = 0; s < run->seeds; s++) {
        json_array_append_new(lost, cli_json_count(sr[s].lost));
        json_array_append_new(drift, real(sw_drift_signed_mean(r, &sr[s])));
        sum.overflow += sr[s].overflow;
        for (int b = 0; b < SW_BINS; b++)
            sum.hist[b] += sr[s].hist[b];
    }
    json_object_set_new(o, "seeds", json_integer(run->seeds));
    put_seed_stats(o, "lost_frac", run, r, sr, sw_lost_frac);
    put_seed_stats(o, "half_lost_frac", run, r, sr, sw_half_frac);
    put_seed_stats(o, "drift", run, r, sr, sw_drift_mean);
    put_seed_stats(o, "drift_signed", run, r, sr, sw_drift_signed_mean);
    json_object_set_new(o, "lost", lost);
    json_object_set_new(o, "drift_signed", drift);
    json_object_set_new(o, "overflow", cli_json_count(sum.overflow));
    json_object_set_new(o, "ratio_hist", hist_json(sum.hist));
    return o;
}

static json_t *formats_json(const sw_run *run, const sw_row *r)
{
    if (!run->main_report)
        return json_null();
    json_t *o = json_object();
    for (int j = 0; j < run->nformats; j++) {
        json_t *f = acc_json(r, &r->fmt[j].rne);
        json_object_set_new(f, "sr", sr_json(run, r, r->fmt[j].sr));
        json_object_set_new(f, "kahan", acc_json(r, &r->fmt[j].kahan));
        json_object_set_new(o, run->formats[j]->name, f);
    }
    return o;
}

static json_t *recipes_json(const sw_run *run, const sw_row *r)
{
    if (!run->main_report)
        return json_null();
    json_t *o = json_object();
    for (int k = 0; k < run->nrecipes; k++)
        json_object_set_new(o, run->recipe_names[k], acc_json(r, &r->recipe[k]));
    return o;
}

/* The sweep: per point an object of the formats, with "recipes" an
 * object of the recipes. */
static json_t *sweep_json(const sw_run *run, const sw_row *r)
{
    if (!run->sweep_n)
        return json_null();
    json_t *a = json_array();
    for (int p = 0; p < run->sweep_n; p++) {
        json_t *pt = json_object(), *recipes = json_object();
        for (int j = 0; j < sw_targets(run); j++) {
            uint64_t lost = r->sweep_lost[p * sw_targets(run) + j],
                     half = r->sweep_half[p * sw_targets(run) + j];
            json_t *f = json_object();
            json_object_set_new(f, "lost", cli_json_count(lost));
            json_object_set_new(f, "lost_frac",
                                r->nonzero ? json_real((double)lost / (double)r->nonzero)
                                           : json_null());
            json_object_set_new(f, "half_lost", cli_json_count(half));
            json_object_set_new(f, "half_lost_frac",
                                r->nonzero ? json_real((double)half / (double)r->nonzero)
                                           : json_null());
            json_object_set_new(j < run->nformats ? pt : recipes, sw_target_name(run, j), f);
        }
        json_object_set_new(pt, "recipes", recipes);
        json_array_append_new(a, pt);
    }
    return a;
}

static json_t *row_json(const sw_run *run, const sw_row *r)
{
    json_t *o = json_object();
    if (r->name) {
        json_t *shape = cli_json_shape(r->ndim, r->shape);
        json_object_set_new(o, "name", json_string(r->name));
        json_object_set_new(o, "weight", json_string(r->wname));
        json_object_set_new(o, "update", json_string(r->uname));
        json_object_set_new(o, "file", json_string(r->wfile));
        json_object_set_new(o, "update_file", json_string(r->ufile));
        json_object_set_new(o, "step", summary_step_json(&r->step));
        json_object_set_new(o, "shape", shape);
    } else {
        json_object_set_new(o, "tensors", cli_json_count(run->nrows));
        json_object_set_new(o, "files", cli_json_count(run->nfiles));
    }
    json_object_set_new(o, "count", cli_json_count(r->count));
    json_object_set_new(o, "nonfinite", cli_json_count(r->nonfinite));
    json_object_set_new(o, "update_nonzero", cli_json_count(r->nonzero));
    json_object_set_new(o, "fp32_master", run->main_report ? acc_json(r, &r->master) : json_null());
    json_object_set_new(o, "formats", formats_json(run, r));
    json_object_set_new(o, "recipes", recipes_json(run, r));
    json_object_set_new(o, "lr_sweep", sweep_json(run, r));
    return o;
}

json_t *sw_json(const sw_run *run)
{
    static const char *const bins[SW_BINS] = {"0",         "(0,1/4)", "[1/4,1/2)", "[1/2,3/4)",
                                              "[3/4,1)",   "1",       "(1,5/4]",   "(5/4,3/2]",
                                              "(3/2,2]",   ">2"};
    const char *v = fpk_version();
    if (strncmp(v, "fpkit ", 6) == 0)
        v += 6;
    json_t *root = json_object(), *formats = json_array(), *tensors = json_array(),
           *jbins = json_array(), *recipes = json_array();
    for (int j = 0; j < run->nformats; j++)
        json_array_append_new(formats, json_string(run->formats[j]->name));
    for (int k = 0; k < run->nrecipes; k++) {
        char spelled[256];
        fpk_recipe_format(&run->recipes[k], spelled, sizeof spelled);
        json_array_append_new(recipes, json_pack("{s:s,s:s}", "name", run->recipe_names[k],
                                                 "recipe", spelled));
    }
    for (int b = 0; b < SW_BINS; b++)
        json_array_append_new(jbins, json_string(bins[b]));
    json_object_set_new(root, "tool", json_string("fpswamp"));
    json_object_set_new(root, "version", json_string(v));
    json_object_set_new(root, "input", json_string(run->grad ? "gradient" : "update"));
    json_object_set_new(root, "lr",
                        run->grad && run->main_report ? json_real(run->lr) : json_null());
    json_object_set_new(root, "steps", json_integer(run->steps));
    json_object_set_new(root, "seeds", json_integer(run->seeds));
    json_object_set_new(root, "formats", formats);
    json_object_set_new(root, "recipes", recipes);
    json_object_set_new(root, "ratio_bins", jbins);
    json_t *lrs = json_null();
    if (run->sweep_n) {
        lrs = json_array();
        for (int p = 0; p < run->sweep_n; p++)
            json_array_append_new(lrs, json_real(run->sweep_lr[p]));
    }
    json_object_set_new(root, "lr_sweep", lrs);
    for (size_t i = 0; i < run->nrows; i++)
        json_array_append_new(tensors, row_json(run, &run->rows[i]));
    json_object_set_new(root, "tensors", tensors);
    json_object_set_new(root, "total", row_json(run, &run->total));
    return root;
}
