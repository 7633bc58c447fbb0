/* fpgrad's report as CSV (RFC 4180): a header, one line per tensor, then
 * the total.  The columns follow the JSON keys (fpgrad(1), CSV OUTPUT). */
#include <inttypes.h>
#include <string.h>

#include "grad.h"

/* S as a field, quoted when it holds a comma, a quote or a line break. */
static void field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

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

static void row(FILE *out, const grad_run *run, const grad_row *r)
{
    char shape[256] = "";
    if (r->name)
        cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
    field(out, r->name ? r->name : "total");
    fputc(',', out);
    field(out, r->file ? r->file : "");
    fprintf(out, ",%s,", r->name ? fpk_dtype_name(r->dtype) : "");
    field(out, shape);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.17g", r->count, r->zeros,
            r->nonfinite, grad_nonzero(r), r->amax);
    int lo = 0, hi = 0, med = 0;
    bool any = grad_log2_range(r, &lo, &hi);
    grad_log2_median(r, &med);
    log2_field(out, any, lo);
    log2_field(out, any, hi);
    log2_field(out, any, med);
    for (int j = 0; j < run->nformats; j++)
        counts(out, &r->fmt[j], r);
    if (run->autoscale) {
        log2_field(out, r->loss.has_scale, r->loss.log2);
        for (int j = 0; j < run->nformats; j++)
            counts(out, &r->loss.fmt[j], r);
        for (int j = 0; j < run->nformats; j++)
            if (grad_has_amax_scale(run->formats[j])) {
                log2_field(out, r->amax_scale[j].has_scale, r->amax_scale[j].log2);
                counts(out, &r->amax_scale[j].fmt[j], r);
            }
    }
    fputc('\n', out);
}

void grad_csv(const grad_run *run, FILE *out)
{
    fputs("name,file,dtype,shape,count,zeros,nonfinite,nonzero_finite,amax,log2_min,log2_max,"
          "log2_median",
          out);
    for (int j = 0; j < run->nformats; j++)
        counts_header(out, "", run->formats[j]->name);
    if (run->autoscale) {
        fputs(",loss_scale_log2", out);
        for (int j = 0; j < run->nformats; j++)
            counts_header(out, "loss_", run->formats[j]->name);
        for (int j = 0; j < run->nformats; j++)
            if (grad_has_amax_scale(run->formats[j])) {
                fprintf(out, ",fp8_%s_scale_log2", run->formats[j]->name);
                counts_header(out, "fp8_", run->formats[j]->name);
            }
    }
    fputc('\n', out);
    for (size_t i = 0; i < run->nrows; i++)
        row(out, run, &run->rows[i]);
    row(out, run, &run->total);
}
