/* fpgrad's report as JSON, keys in a fixed order (fpgrad(1), JSON OUTPUT). */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "grad.h"
#include "outfile.h"

/* N/D, or null when D is 0. */
static json_t *frac(uint64_t n, uint64_t d)
{
    return d ? json_real((double)n / (double)d) : json_null();
}

static json_t *log2_or_null(bool has, int v)
{
    return has ? json_integer(v) : json_null();
}

/* The counts of K and their fractions of NONZERO and of ALL elements, into O. */
static void put_counts(json_t *o, const fpk_format_counts *k, uint64_t nonzero, uint64_t all)
{
    json_object_set_new(o, "underflow", cli_json_count(k->underflow));
    json_object_set_new(o, "subnormal", cli_json_count(k->subnormal));
    json_object_set_new(o, "overflow", cli_json_count(k->overflow));
    json_object_set_new(o, "underflow_frac", frac(k->underflow, nonzero));
    json_object_set_new(o, "subnormal_frac", frac(k->subnormal, nonzero));
    json_object_set_new(o, "overflow_frac", frac(k->overflow, nonzero));
    json_object_set_new(o, "underflow_frac_all", frac(k->underflow, all));
    json_object_set_new(o, "subnormal_frac_all", frac(k->subnormal, all));
    json_object_set_new(o, "overflow_frac_all", frac(k->overflow, all));
}

/* The formats' counts K of row R, and with ERR their SQNR: null when there
 * is no signal or no error. */
static json_t *formats_json(const grad_run *run, const fpk_format_counts *k, const grad_row *r,
                            const grad_err *err)
{
    json_t *o = json_object();
    for (int j = 0; j < run->nformats; j++) {
        json_t *f = json_object();
        put_counts(f, &k[j], grad_nonzero(r), r->count);
        if (err) {
            bool none;
            double db = grad_sqnr_db(&err[j], &none);
            json_object_set_new(f, "sqnr_db", none ? json_null() : json_real(db));
        }
        json_object_set_new(o, run->formats[j]->name, f);
    }
    return o;
}

/* A scale: its value, and its log2 when it is a power of two. */
static json_t *scale_json(bool has, double value)
{
    if (!has)
        return json_null();
    int k;
    bool pow2 = grad_power_of_two(value, &k);
    return json_pack("{s:o,s:f}", "log2", log2_or_null(pow2, k), "value", value);
}

static json_t *auto_json(const grad_run *run, const grad_row *r)
{
    if (!run->autoscale)
        return json_null();
    json_t *a = json_object(), *loss = json_object(), *fp8 = json_object();
    /* (a sum's rows are each at their own scale) */
    json_object_set_new(loss, "scale", r->name ? json_real(r->loss.value) : json_null());
    json_object_set_new(loss, "formats", formats_json(run, r->loss.fmt, r, NULL));
    for (int j = 0; j < run->nformats; j++) {
        if (!grad_has_amax_scale(run->formats[j]))
            continue;
        json_t *f = json_object();
        if (r->name)
            json_object_set_new(f, "scale", scale_json(r->fp8[j].has_scale, r->fp8[j].value));
        put_counts(f, &r->fp8[j].fmt, grad_nonzero(r), r->count);
        json_object_set_new(fp8, run->formats[j]->name, f);
    }
    json_object_set_new(a, "at_loss_scale", loss);
    if (r->name)
        json_object_set_new(a, "max_loss_scale",
                            scale_json(r->has_max_loss, ldexp(1.0, r->max_loss_log2)));
    json_object_set_new(a, "fp8_scale", fp8);
    return a;
}

/* Row R: a tensor, a step's sum (STEP) or the total. */
static json_t *row_json(const grad_run *run, const grad_row *r, bool step)
{
    json_t *o = json_object();
    if (r->name) {
        json_object_set_new(o, "name", json_string(r->name));
        json_object_set_new(o, "file", json_string(r->file));
        json_object_set_new(o, "step", r->has_step ? json_integer(r->step) : json_null());
        json_object_set_new(o, "dtype", json_string(fpk_dtype_name(r->dtype)));
        json_object_set_new(o, "shape", cli_json_shape(r->ndim, r->shape));
        json_object_set_new(o, "loss_scaled", json_boolean(r->loss_scaled));
        json_object_set_new(o, "scale", json_real(r->scale));
    } else if (step) {
        json_object_set_new(o, "step", json_integer(r->step));
    } else {
        json_object_set_new(o, "tensors", cli_json_count(run->nrows));
        json_object_set_new(o, "files", cli_json_count(run->nfiles));
    }
    json_object_set_new(o, "count", cli_json_count(r->count));
    json_object_set_new(o, "zeros", cli_json_count(r->zeros));
    json_object_set_new(o, "nonfinite", cli_json_count(r->nonfinite));
    json_object_set_new(o, "nonzero_finite", cli_json_count(grad_nonzero(r)));
    json_object_set_new(o, "amax", json_real(r->amax));
    int lo = 0, hi = 0, med = 0;
    bool any = grad_log2_range(r, &lo, &hi);
    grad_log2_median(r, &med);
    json_object_set_new(o, "log2_min", log2_or_null(any, lo));
    json_object_set_new(o, "log2_max", log2_or_null(any, hi));
    json_object_set_new(o, "log2_median", log2_or_null(any, med));
    json_t *hist = json_object(), *counts = json_array();
    json_object_set_new(hist, "min", json_integer(r->hist_min));
    for (size_t i = 0; i < r->hist_n; i++)
        json_array_append_new(counts, cli_json_count(r->hist[i]));
    json_object_set_new(hist, "counts", counts);
    json_object_set_new(o, "log2_hist", hist);
    json_object_set_new(o, "formats", formats_json(run, r->fmt, r, run->sqnr ? r->err : NULL));
    json_object_set_new(o, "auto", auto_json(run, r));
    return o;
}

/* The run's --scale auto settings and the loss scale it recommends. */
static json_t *run_auto_json(const grad_run *run)
{
    if (!run->autoscale)
        return json_null();
    json_t *a = json_object();
    json_object_set_new(a, "margin", json_integer(run->margin));
    json_object_set_new(a, "fp8_scale", json_string(scaling_rule_name(run->fp8_rule)));
    json_object_set_new(a, "loss_scale_format", json_string("fp16"));
    json_object_set_new(a, "loss_scaled", json_string(run->loss_text));
    json_object_set_new(a, "loss_scaled_all", json_boolean(run->loss_all));
    json_object_set_new(a, "loss_scale", scale_json(run->loss.has_scale, run->loss.value));
    json_t *limit = json_null();
    if (run->loss_limit < run->nrows) {
        const grad_row *r = &run->rows[run->loss_limit];
        limit = json_object();
        json_object_set_new(limit, "name", json_string(r->name));
        json_object_set_new(limit, "file", json_string(r->file));
        json_object_set_new(limit, "step", r->has_step ? json_integer(r->step) : json_null());
        json_object_set_new(limit, "amax", json_real(r->amax));
    }
    json_object_set_new(a, "limited_by", limit);
    return a;
}

static json_t *tensor_item(size_t i, void *arg)
{
    const grad_run *run = arg;
    return row_json(run, &run->rows[i], false);
}

void grad_json_write(const grad_run *run, const char *path)
{
    const char *v = fpk_version();
    if (strncmp(v, "fpkit ", 6) == 0)
        v += 6;
    json_t *root = json_object(), *formats = json_array();
    json_t *steps = json_array();
    for (int j = 0; j < run->nformats; j++)
        json_array_append_new(formats, json_string(run->formats[j]->name));
    json_object_set_new(root, "tool", json_string("fpgrad"));
    json_object_set_new(root, "version", json_string(v));
    json_object_set_new(root, "round", json_string(fpk_round_name(run->round)));
    json_object_set_new(root, "scale", json_real(run->scale));
    json_object_set_new(root, "auto", run_auto_json(run));
    json_object_set_new(root, "formats", formats);
    json_object_set_new(root, "tensors", json_null()); /* written one by one */
    for (size_t k = 0; k < run->nsteps; k++)
        json_array_append_new(steps, row_json(run, &run->steps[k], true));
    json_object_set_new(root, "steps", steps);
    json_object_set_new(root, "total", row_json(run, &run->total, false));
    outfile_json_items(path, root, "tensors", run->nrows, tensor_item, (void *)run, run->threads);
}
