/* fpround's JSON (fpround(1), JSON OUTPUT), and what its text shares with
 * it. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "fpround.h"

fr_view fr_err_view(const fr_err *e)
{
    fr_view v = {0};
    v.any = e->measured > 0;
    if (!v.any)
        return v;
    long double n = (long double)e->measured;
    v.mean = (double)(e->sum_abs / n);
    v.rms = (double)sqrtl(e->sum_sq / n);
    v.bias = (double)(e->sum_signed / n);
    v.sqnr_inf = e->sum_e2 == 0;
    if (!v.sqnr_inf)
        v.sqnr = (double)(10 * log10l(e->sum_x2 / e->sum_e2));
    return v;
}

const char *fr_series_name(char *buf, const fr_run *run, int j, int m)
{
    if (run->nmodes == 1)
        snprintf(buf, 48, "%s", run->formats[j]->name);
    else
        snprintf(buf, 48, "%s %s", run->formats[j]->name, fpk_round_name(run->modes[m]));
    return buf;
}

void fr_mean_sd(const double *v, int n, double *mean, double *sd)
{
    long double s = 0, s2 = 0;
    for (int k = 0; k < n; k++)
        s += v[k];
    long double m = s / n;
    for (int k = 0; k < n; k++)
        s2 += (v[k] - m) * (v[k] - m);
    *mean = (double)m;
    *sd = (double)sqrtl(s2 / n);
}

static double rms(const double *v, int n)
{
    long double s = 0;
    for (int k = 0; k < n; k++)
        s += (long double)v[k] * v[k];
    return (double)sqrtl(s / n);
}

static const char *kind_name(fr_kind k)
{
    return k == FR_SUM ? "sum" : k == FR_DOT ? "dot" : "error";
}

/* X, or null when it is not finite. */
static json_t *real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* A result: X, or the string "inf", "-inf" or "nan". */
static json_t *result(double x)
{
    if (isnan(x))
        return json_string("nan");
    if (isinf(x))
        return json_string(x < 0 ? "-inf" : "inf");
    return json_real(x);
}

/* A statistic: null when nothing was measured, else as a result (a
 * relative error beyond the largest double is "inf"). */
static json_t *statistic(bool any, double x)
{
    return any ? result(x) : json_null();
}

static json_t *err_json(const fr_err *e)
{
    fr_view v = fr_err_view(e);
    json_t *o = json_object();
    json_object_set_new(o, "measured", cli_json_count(e->measured));
    json_object_set_new(o, "overflow", cli_json_count(e->overflow));
    json_object_set_new(o, "underflow", cli_json_count(e->underflow));
    json_object_set_new(o, "exact", cli_json_count(e->exact));
    json_object_set_new(o, "mean_rel_error", statistic(v.any, v.mean));
    json_object_set_new(o, "rms_rel_error", statistic(v.any, v.rms));
    json_object_set_new(o, "max_rel_error", statistic(v.any, e->max_rel));
    json_object_set_new(o, "bias", statistic(v.any, v.bias));
    json_object_set_new(o, "max_ulp_error", statistic(v.any, e->max_ulps));
    json_object_set_new(o, "sqnr_db", v.any && !v.sqnr_inf ? json_real(v.sqnr) : json_null());
    json_t *h = json_array();
    for (int b = 0; b < FR_HIST_BINS; b++)
        json_array_append_new(h, cli_json_count(e->hist[b]));
    json_object_set_new(o, "ulp_hist", h);
    return o;
}

static json_t *err_formats(const fr_run *run, const fr_row *r)
{
    json_t *o = json_object();
    for (int j = 0; j < run->nformats; j++) {
        json_t *f = json_object();
        for (int m = 0; m < run->nmodes; m++)
            json_object_set_new(f, fpk_round_name(run->modes[m]), err_json(&r->err[j][m]));
        json_object_set_new(o, run->formats[j]->name, f);
    }
    return o;
}

/* V[0..N-1], each through TO. */
static json_t *array(const double *v, int n, json_t *(*to)(double))
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(a, to(v[k]));
    return a;
}

static json_t *acc_json(const fr_acc *a, fpk_round mode, fr_method meth)
{
    json_t *o = json_object();
    if (mode != FPK_SR) {
        json_object_set_new(o, "result", result(a->sum[0]));
        json_object_set_new(o, "error", real(a->err[0]));
        json_object_set_new(o, "rel_error", real(a->rel[0]));
        if (meth == FR_SEQ) {
            json_object_set_new(o, "stagnation",
                                a->has_stagnation ? cli_json_count(a->stagnation) : json_null());
            json_object_set_new(o, "absorbed", cli_json_count(a->absorbed));
        }
        return o;
    }
    double mean, sd, rmean, rsd;
    fr_mean_sd(a->sum, a->n, &mean, &sd);
    fr_mean_sd(a->rel, a->n, &rmean, &rsd);
    json_object_set_new(o, "seeds", json_integer(a->n));
    json_object_set_new(o, "results", array(a->sum, a->n, result));
    json_object_set_new(o, "rel_errors", array(a->rel, a->n, real));
    json_object_set_new(o, "mean", result(mean));
    json_object_set_new(o, "sd", real(sd));
    json_object_set_new(o, "mean_rel_error", real(rmean));
    json_object_set_new(o, "sd_rel_error", real(rsd));
    json_object_set_new(o, "rms_rel_error", real(rms(a->rel, a->n)));
    return o;
}

static json_t *acc_formats(const fr_run *run, const fr_row *r)
{
    json_t *o = json_object();
    for (int j = 0; j < run->nformats; j++) {
        json_t *f = json_object(), *ms = json_object();
        json_object_set_new(f, "exact", result(r->fmt[j].exact));
        for (int meth = 0; meth < FR_NMETHODS; meth++) {
            if (!r->fmt[j].acc[meth][0].applies)
                continue;
            json_t *mo = json_object();
            for (int m = 0; m < run->nmodes; m++)
                json_object_set_new(mo, fpk_round_name(run->modes[m]),
                                    acc_json(&r->fmt[j].acc[meth][m], run->modes[m], (fr_method)meth));
            json_object_set_new(ms, fr_method_name((fr_method)meth), mo);
        }
        json_object_set_new(f, "methods", ms);
        json_object_set_new(o, run->formats[j]->name, f);
    }
    return o;
}

void fr_acc_worst(const fr_run *run, size_t step, int j, int meth, int m, double *worst,
                  size_t *row, uint64_t *nonfinite)
{
    *worst = -1;
    *row = SIZE_MAX;
    *nonfinite = 0;
    for (size_t i = 0; i < run->nrows; i++) {
        if (step != SIZE_MAX && run->row_steps.of_row[i] != step)
            continue;
        const fr_acc *a = &run->rows[i].fmt[j].acc[meth][m];
        for (int k = 0; k < a->n; k++) {
            *nonfinite += !isfinite(a->sum[k]);
            if (!isnan(a->rel[k]) && fabs(a->rel[k]) > *worst)
                *worst = fabs(a->rel[k]), *row = i;
        }
    }
}

/* The largest |rel error| of METH and mode M in format J over the rows of
 * STEP (SIZE_MAX: all) and seeds, and how many results were not finite. */
static json_t *acc_total(const fr_run *run, size_t step, int j, int meth, int m)
{
    double worst;
    size_t row;
    uint64_t nonfinite;
    fr_acc_worst(run, step, j, meth, m, &worst, &row, &nonfinite);
    json_t *o = json_object();
    json_object_set_new(o, "max_abs_rel_error", worst >= 0 ? json_real(worst) : json_null());
    json_object_set_new(o, "nonfinite", cli_json_count(nonfinite));
    return o;
}

/* Per format and method, acc_total over the rows of STEP (SIZE_MAX: all). */
static json_t *acc_totals(const fr_run *run, size_t step)
{
    json_t *o = json_object();
    for (int j = 0; j < run->nformats; j++) {
        json_t *f = json_object();
        for (int meth = 0; meth < FR_NMETHODS; meth++) {
            bool any = false;
            for (size_t i = 0; i < run->nrows; i++)
                any |= run->rows[i].fmt[j].acc[meth][0].applies;
            if (!any)
                continue;
            json_t *mo = json_object();
            for (int m = 0; m < run->nmodes; m++)
                json_object_set_new(mo, fpk_round_name(run->modes[m]),
                                    acc_total(run, step, j, meth, m));
            json_object_set_new(f, fr_method_name((fr_method)meth), mo);
        }
        json_object_set_new(o, run->formats[j]->name, f);
    }
    return o;
}

/* The counts of R (a step's rows together, or the total) into T. */
static void put_counts(json_t *t, const fr_row *r)
{
    json_object_set_new(t, "count", cli_json_count(r->count));
    json_object_set_new(t, "zeros", cli_json_count(r->zeros));
    json_object_set_new(t, "nonfinite", cli_json_count(r->nonfinite));
}

/* The rows of each known step together. */
static json_t *by_step_json(const fr_run *run)
{
    json_t *a = json_array();
    for (size_t k = 0; k < run->row_steps.n; k++) {
        const fr_row *r = &run->by_step[k];
        size_t n = 0;
        for (size_t i = 0; i < run->nrows; i++)
            n += run->row_steps.of_row[i] == k;
        json_t *t = json_object();
        json_object_set_new(t, "step", json_integer((json_int_t)run->row_steps.step[k]));
        json_object_set_new(t, "tensors", cli_json_count(n));
        put_counts(t, r);
        json_object_set_new(t, "formats",
                            run->kind == FR_ERROR ? err_formats(run, r) : acc_totals(run, k));
        json_array_append_new(a, t);
    }
    return a;
}

json_t *fr_json(const fr_run *run)
{
    json_t *root = json_object(), *fmts = json_array(), *modes = json_array();
    json_object_set_new(root, "tool", json_string("fpround"));
    json_object_set_new(root, "version", json_string(fpk_version()));
    json_object_set_new(root, "kind", json_string(kind_name(run->kind)));
    for (int j = 0; j < run->nformats; j++)
        json_array_append_new(fmts, json_string(run->formats[j]->name));
    for (int m = 0; m < run->nmodes; m++)
        json_array_append_new(modes, json_string(fpk_round_name(run->modes[m])));
    json_object_set_new(root, "formats", fmts);
    json_object_set_new(root, "round", modes);
    json_object_set_new(root, "seed", cli_json_count(run->seed));
    json_object_set_new(root, "seeds", run->kind == FR_ERROR ? json_null() : json_integer(run->seeds));
    json_t *ts = json_array();
    for (size_t i = 0; i < run->nrows; i++) {
        const fr_row *r = &run->rows[i];
        json_t *t = json_object();
        json_object_set_new(t, "name", json_string(r->name));
        if (run->kind == FR_DOT)
            json_object_set_new(t, "name_b", json_string(r->name_b));
        json_object_set_new(t, "file", json_string(r->file));
        json_object_set_new(t, "step", summary_step_json(&r->step));
        json_object_set_new(t, "dtype", json_string(fpk_dtype_name(r->dtype)));
        json_object_set_new(t, "shape", cli_json_shape(r->ndim, r->shape));
        put_counts(t, r);
        if (run->kind == FR_ERROR) {
            json_object_set_new(t, "formats", err_formats(run, r));
        } else {
            json_object_set_new(t, "exact", result(r->exact_input));
            json_object_set_new(t, "formats", acc_formats(run, r));
        }
        json_array_append_new(ts, t);
    }
    json_object_set_new(root, "tensors", ts);
    json_object_set_new(root, "by_step", by_step_json(run));
    const fr_row *r = &run->total;
    json_t *t = json_object();
    json_object_set_new(t, "tensors", cli_json_count(run->nrows));
    json_object_set_new(t, "files", cli_json_count(run->nfiles));
    put_counts(t, r);
    json_object_set_new(t, "formats",
                        run->kind == FR_ERROR ? err_formats(run, r) : acc_totals(run, SIZE_MAX));
    json_object_set_new(root, "total", t);
    return root;
}
