/* fpgrad's report as JSON, keys in a fixed order (fpgrad(1), JSON OUTPUT). */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "grad.h"

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

/* The formats' counts K of row R, and with ERR (the run's scale) their
 * SQNR: null when there is no signal or no error. */
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

static void put_scale(json_t *o, const grad_scaled *s)
{
    json_object_set_new(o, "log2", log2_or_null(s->has_scale, s->log2));
    json_object_set_new(o, "value", s->has_scale ? json_real(ldexp(1.0, s->log2)) : json_null());
}

static json_t *auto_json(const grad_run *run, const grad_row *r)
{
    if (!run->autoscale)
        return json_null();
    json_t *a = json_object(), *loss = json_object(), *fp8 = json_object();
    put_scale(loss, &r->loss);
    json_object_set_new(loss, "formats", formats_json(run, r->loss.fmt, r, NULL));
    for (int j = 0; j < run->nformats; j++) {
        if (!grad_has_amax_scale(run->formats[j]))
            continue;
        json_t *f = json_object();
        put_scale(f, &r->amax_scale[j]);
        put_counts(f, &r->amax_scale[j].fmt[j], grad_nonzero(r), r->count);
        json_object_set_new(fp8, run->formats[j]->name, f);
    }
    json_object_set_new(a, "loss_scale", loss);
    json_object_set_new(a, "fp8_scale", fp8);
    return a;
}

static json_t *row_json(const grad_run *run, const grad_row *r)
{
    json_t *o = json_object();
    if (r->name) {
        json_t *shape = cli_json_shape(r->ndim, r->shape);
        json_object_set_new(o, "name", json_string(r->name));
        json_object_set_new(o, "file", json_string(r->file));
        json_object_set_new(o, "dtype", json_string(fpk_dtype_name(r->dtype)));
        json_object_set_new(o, "shape", shape);
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

json_t *grad_json(const grad_run *run)
{
    const char *v = fpk_version();
    if (strncmp(v, "fpkit ", 6) == 0)
        v += 6;
    json_t *root = json_object(), *formats = json_array(), *tensors = json_array();
    for (int j = 0; j < run->nformats; j++)
        json_array_append_new(formats, json_string(run->formats[j]->name));
    json_object_set_new(root, "tool", json_string("fpgrad"));
    json_object_set_new(root, "version", json_string(v));
    json_object_set_new(root, "round", json_string(fpk_round_name(run->round)));
    json_object_set_new(root, "scale", json_real(run->scale));
    json_object_set_new(
        root, "auto",
        run->autoscale ? json_pack("{s:i,s:s}", "margin", run->margin, "loss_scale_format", "fp16")
                       : json_null());
    json_object_set_new(root, "formats", formats);
    for (size_t i = 0; i < run->nrows; i++)
        json_array_append_new(tensors, row_json(run, &run->rows[i]));
    json_object_set_new(root, "tensors", tensors);
    json_object_set_new(root, "total", row_json(run, &run->total));
    return root;
}
