/* fpround's report: the text tables and the JSON (fpround(1), TEXT OUTPUT
 * and JSON OUTPUT). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "fpround.h"

/* The statistics of an error record, derived once. */
typedef struct err_view {
    bool any;     /* measured > 0 */
    double mean, rms, bias, sqnr;
    bool sqnr_inf; /* no error at all */
} err_view;

static err_view view(const fr_err *e)
{
    err_view v = {0};
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

/* Mean and population standard deviation of the N values V (NaN if any
 * is NaN). */
static void mean_sd(const double *v, int n, double *mean, double *sd)
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

/* "%.3e" of X, or "-" (NaN), or "inf". */
static const char *num(char *buf, size_t len, double x)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3e", x);
    return buf;
}

static void text_err_rows(const fr_run *run, const fr_row *r, FILE *out)
{
    fprintf(out, "  %-6s %-4s %10s %8s %8s %10s %10s %10s %11s %8s %7s\n", "format", "mode",
            "measured", "overflow", "to zero", "mean rel", "rms rel", "max rel", "bias", "max ulp",
            "SQNR dB");
    for (int j = 0; j < run->nformats; j++)
        for (int m = 0; m < run->nmodes; m++) {
            const fr_err *e = &r->err[j][m];
            err_view v = view(e);
            char a[32], b[32], c[32], d[32], s[32];
            if (!v.any)
                snprintf(s, sizeof s, "-");
            else if (v.sqnr_inf)
                snprintf(s, sizeof s, "inf");
            else
                snprintf(s, sizeof s, "%.2f", v.sqnr);
            fprintf(out, "  %-6s %-4s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10s %10s %10s %11s %8.4f %7s\n",
                    run->formats[j]->name, fpk_round_name(run->modes[m]), e->measured, e->overflow,
                    e->underflow, num(a, sizeof a, v.any ? v.mean : NAN),
                    num(b, sizeof b, v.any ? v.rms : NAN), num(c, sizeof c, v.any ? e->max_rel : NAN),
                    v.any ? (snprintf(d, sizeof d, "%+.3e", v.bias), d) : "-", e->max_ulps, s);
        }
}

/* "%.9g" of X, a NaN "nan" whatever its sign bit. */
static const char *g9(char *buf, size_t len, double x)
{
    snprintf(buf, len, "%.9g", isnan(x) ? fabs(x) : x);
    return buf;
}

static void text_acc_rows(const fr_run *run, const fr_row *r, FILE *out)
{
    fprintf(out, "  %-6s %-15s %-4s %16s %11s %10s %10s %9s\n", "format", "method", "mode",
            "result", "rel error", "sd rel", "stagnation", "absorbed");
    for (int j = 0; j < run->nformats; j++) {
        char ex[40];
        g9(ex, sizeof ex, r->fmt[j].exact);
        fprintf(out, "  %-6s %-15s %-4s %16s\n", run->formats[j]->name, "exact", "", ex);
        for (int meth = 0; meth < FR_NMETHODS; meth++)
            for (int m = 0; m < run->nmodes; m++) {
                const fr_acc *a = &r->fmt[j].acc[meth][m];
                if (!a->applies)
                    continue;
                double s, sd, rel, rsd;
                mean_sd(a->sum, a->n, &s, &sd);
                mean_sd(a->rel, a->n, &rel, &rsd);
                char res[40], e1[32], e2[32], st[32], ab[32];
                g9(res, sizeof res, s);
                if (a->n > 1 && !isnan(rsd))
                    snprintf(e2, sizeof e2, "%.3e", rsd);
                else
                    snprintf(e2, sizeof e2, "-");
                bool det = run->modes[m] != FPK_SR && meth == FR_SEQ;
                snprintf(st, sizeof st, det && a->has_stagnation ? "%" PRIu64 : "-", a->stagnation);
                snprintf(ab, sizeof ab, det ? "%" PRIu64 : "-", a->absorbed);
                fprintf(out, "  %-6s %-15s %-4s %16s %11s %10s %10s %9s\n", run->formats[j]->name,
                        fr_method_name((fr_method)meth), fpk_round_name(run->modes[m]), res,
                        isnan(rel) ? "-" : (snprintf(e1, sizeof e1, "%+.3e", rel), e1), e2, st, ab);
            }
    }
}

void fr_text(const fr_run *run, FILE *out)
{
    fprintf(out, "fpround: %zu %s in %zu file%s, %" PRIu64 " elements; round", run->nrows,
            run->kind == FR_DOT ? (run->nrows == 1 ? "dot product" : "dot products")
                                : (run->nrows == 1 ? "tensor" : "tensors"),
            run->nfiles, run->nfiles == 1 ? "" : "s", run->total.count);
    for (int m = 0; m < run->nmodes; m++)
        fprintf(out, "%s%s", m ? "," : " ", fpk_round_name(run->modes[m]));
    for (int m = 0; m < run->nmodes; m++)
        if (run->modes[m] == FPK_SR) {
            if (run->kind == FR_ERROR)
                fprintf(out, "; sr seed %" PRIu64, run->seed);
            else
                fprintf(out, "; sr seeds %" PRIu64 "..%" PRIu64, run->seed,
                        run->seed + (uint64_t)run->seeds - 1);
        }
    fprintf(out, "\n");
    for (size_t i = 0; i < run->nrows; i++) {
        const fr_row *r = &run->rows[i];
        char shape[256];
        cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
        fprintf(out, "\n");
        char *name = cli_printable(r->name), *file = cli_printable(r->file);
        char ex[40];
        if (run->kind == FR_DOT) {
            char *name_b = cli_printable(r->name_b);
            fprintf(out, "%s . %s %s (%" PRIu64 " elements; %s); exact %s\n", name, name_b, shape,
                    r->count, file, g9(ex, sizeof ex, r->exact_input));
            free(name_b);
        } else if (run->kind == FR_SUM) {
            fprintf(out, "%s %s (%" PRIu64 " elements; %s); exact %s\n", name, shape, r->count,
                    file, g9(ex, sizeof ex, r->exact_input));
        } else {
            fprintf(out, "%s %s (%" PRIu64 " elements, %" PRIu64 " zeros, %" PRIu64 " non-finite; %s)\n",
                    name, shape, r->count, r->zeros, r->nonfinite, file);
        }
        free(name);
        free(file);
        if (run->kind == FR_ERROR)
            text_err_rows(run, r, out);
        else
            text_acc_rows(run, r, out);
    }
    if (run->kind == FR_ERROR) {
        const fr_row *t = &run->total;
        fprintf(out, "\ntotal (%" PRIu64 " elements, %" PRIu64 " zeros, %" PRIu64 " non-finite)\n",
                t->count, t->zeros, t->nonfinite);
        text_err_rows(run, t, out);
    }
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
    err_view v = view(e);
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
    mean_sd(a->sum, a->n, &mean, &sd);
    mean_sd(a->rel, a->n, &rmean, &rsd);
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

/* The largest |rel error| of METH and mode M in format J over all rows
 * and seeds, and how many results were not finite. */
static json_t *acc_total(const fr_run *run, int j, int meth, int m)
{
    double worst = -1;
    uint64_t nonfinite = 0;
    for (size_t i = 0; i < run->nrows; i++) {
        const fr_acc *a = &run->rows[i].fmt[j].acc[meth][m];
        for (int k = 0; k < a->n; k++) {
            nonfinite += !isfinite(a->sum[k]);
            if (!isnan(a->rel[k]) && fabs(a->rel[k]) > worst)
                worst = fabs(a->rel[k]);
        }
    }
    json_t *o = json_object();
    json_object_set_new(o, "max_abs_rel_error", worst >= 0 ? json_real(worst) : json_null());
    json_object_set_new(o, "nonfinite", cli_json_count(nonfinite));
    return o;
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
        json_object_set_new(t, "dtype", json_string(fpk_dtype_name(r->dtype)));
        json_object_set_new(t, "shape", cli_json_shape(r->ndim, r->shape));
        json_object_set_new(t, "count", cli_json_count(r->count));
        json_object_set_new(t, "zeros", cli_json_count(r->zeros));
        json_object_set_new(t, "nonfinite", cli_json_count(r->nonfinite));
        if (run->kind == FR_ERROR) {
            json_object_set_new(t, "formats", err_formats(run, r));
        } else {
            json_object_set_new(t, "exact", result(r->exact_input));
            json_object_set_new(t, "formats", acc_formats(run, r));
        }
        json_array_append_new(ts, t);
    }
    json_object_set_new(root, "tensors", ts);
    const fr_row *r = &run->total;
    json_t *t = json_object();
    json_object_set_new(t, "tensors", cli_json_count(run->nrows));
    json_object_set_new(t, "files", cli_json_count(run->nfiles));
    json_object_set_new(t, "count", cli_json_count(r->count));
    json_object_set_new(t, "zeros", cli_json_count(r->zeros));
    json_object_set_new(t, "nonfinite", cli_json_count(r->nonfinite));
    if (run->kind == FR_ERROR) {
        json_object_set_new(t, "formats", err_formats(run, r));
    } else {
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
                    json_object_set_new(mo, fpk_round_name(run->modes[m]), acc_total(run, j, meth, m));
                json_object_set_new(f, fr_method_name((fr_method)meth), mo);
            }
            json_object_set_new(o, run->formats[j]->name, f);
        }
        json_object_set_new(t, "formats", o);
    }
    json_object_set_new(root, "total", t);
    return root;
}
