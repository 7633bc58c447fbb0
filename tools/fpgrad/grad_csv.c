/* fpgrad's report as CSV (RFC 4180): a header, one line per tensor, per
 * step (when there are several) and the total, told apart by the column
 * kind.  The columns follow the JSON keys (fpgrad(1), CSV OUTPUT). */
#include <inttypes.h>
#include <string.h>

#include "grad.h"
#include "text.h"

static void frac(FILE *out, uint64_t n, uint64_t d)
{
    if (d)
        fprintf(out, ",%.17g", (double)n / (double)d); /* as the JSON: read back exactly */
    else
        fputc(',', out);
}

static void counts(FILE *out, const fpk_format_counts *k, const grad_row *r)
{
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, k->underflow, k->subnormal, k->overflow);
    frac(out, k->underflow, grad_nonzero(r));
    frac(out, k->subnormal, grad_nonzero(r));
    frac(out, k->overflow, grad_nonzero(r));
    frac(out, k->underflow, r->count);
    frac(out, k->subnormal, r->count);
    frac(out, k->overflow, r->count);
}

static void counts_header(FILE *out, const char *prefix, const char *name)
{
    static const char *const keys[] = {
        "underflow",          "subnormal",          "overflow",
        "underflow_frac",     "subnormal_frac",     "overflow_frac",
        "underflow_frac_all", "subnormal_frac_all", "overflow_frac_all"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        fprintf(out, ",%s%s_%s", prefix, name, keys[i]);
}

static void log2_field(FILE *out, bool has, int v)
{
    if (has)
        fprintf(out, ",%d", v);
    else
        fputc(',', out);
}

static void real_field(FILE *out, bool has, double v)
{
    if (has)
        fprintf(out, ",%.17g", v);
    else
        fputc(',', out);
}

static void sqnr_field(FILE *out, const grad_err *e)
{
    bool none;
    double db = grad_sqnr_db(e, &none);
    real_field(out, !none, db);
}

/* Row R of KIND: "tensor", "step" or "total". */
static void row(FILE *out, const grad_run *run, const grad_row *r, const char *kind)
{
    char shape[256] = "";
    if (r->name)
        cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
    fprintf(out, "%s,", kind);
    cli_csv_field(out, r->name ? r->name : "");
    fputc(',', out);
    cli_csv_field(out, r->file ? r->file : "");
    if (r->has_step)
        fprintf(out, ",%" PRId64, r->step);
    else
        fputc(',', out);
    fprintf(out, ",%s,", r->name ? fpk_dtype_name(r->dtype) : "");
    cli_csv_field(out, shape);
    if (r->name)
        fprintf(out, ",%d,%.17g", r->loss_scaled, r->scale);
    else
        fputs(",,", out);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.17g", r->count, r->zeros,
            r->nonfinite, grad_nonzero(r), r->amax);
    int lo = 0, hi = 0, med = 0;
    bool any = grad_log2_range(r, &lo, &hi);
    grad_log2_median(r, &med);
    log2_field(out, any, lo);
    log2_field(out, any, hi);
    log2_field(out, any, med);
    for (int j = 0; j < run->nformats; j++) {
        counts(out, &r->fmt[j], r);
        if (run->sqnr)
            sqnr_field(out, &r->err[j]);
    }
    if (run->autoscale) {
        real_field(out, r->name != NULL, r->loss.value);
        for (int j = 0; j < run->nformats; j++)
            counts(out, &r->loss.fmt[j], r);
        log2_field(out, r->name && r->has_max_loss, r->max_loss_log2);
        for (int j = 0; j < run->nformats; j++)
            if (grad_has_amax_scale(run->formats[j])) {
                real_field(out, r->name && r->fp8[j].has_scale, r->fp8[j].value);
                counts(out, &r->fp8[j].fmt, r);
            }
    }
    fputc('\n', out);
}

void grad_csv(const grad_run *run, FILE *out)
{
    fputs("kind,name,file,step,dtype,shape,loss_scaled,scale,count,zeros,nonfinite,"
          "nonzero_finite,amax,log2_min,log2_max,log2_median",
          out);
    for (int j = 0; j < run->nformats; j++) {
        counts_header(out, "", run->formats[j]->name);
        if (run->sqnr)
            fprintf(out, ",%s_sqnr_db", run->formats[j]->name);
    }
    if (run->autoscale) {
        fputs(",loss_scale", out);
        for (int j = 0; j < run->nformats; j++)
            counts_header(out, "loss_", run->formats[j]->name);
        fputs(",max_loss_scale_log2", out);
        for (int j = 0; j < run->nformats; j++)
            if (grad_has_amax_scale(run->formats[j])) {
                fprintf(out, ",fp8_%s_scale", run->formats[j]->name);
                counts_header(out, "fp8_", run->formats[j]->name);
            }
    }
    fputc('\n', out);
    for (size_t i = 0; i < run->nrows; i++)
        row(out, run, &run->rows[i], "tensor");
    for (size_t k = 0; k < run->nsteps; k++)
        row(out, run, &run->steps[k], "step");
    row(out, run, &run->total, "total");
}
