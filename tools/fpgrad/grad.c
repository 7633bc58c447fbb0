/* fpgrad's rows: filling them from the library's statistics, what the
 * histogram says, and the recommended scales. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad.h"

void grad_row_set_stats(grad_row *r, const fpk_stats *s)
{
    r->count = s->count;
    r->zeros = s->zeros;
    r->nonfinite = s->nonfinite;
    r->amax = s->amax;
    int first = -1, last = -1;
    for (int i = 0; i < FPK_LOG2_BINS; i++)
        if (s->log2_hist[i]) {
            if (first < 0)
                first = i;
            last = i;
        }
    free(r->hist);
    r->hist = NULL;
    r->hist_n = 0;
    r->hist_min = 0;
    if (first >= 0) {
        r->hist_min = first + FPK_LOG2_MIN;
        r->hist_n = (size_t)(last - first + 1);
        if (!(r->hist = malloc(r->hist_n * sizeof *r->hist)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
        memcpy(r->hist, s->log2_hist + first, r->hist_n * sizeof *r->hist);
    }
    memcpy(r->fmt, s->fmt, (size_t)s->nformats * sizeof *r->fmt);
}

void grad_row_formats(grad_row *r, int nf)
{
    size_t n = nf > 0 ? (size_t)nf : 1, dims = r->ndim > 0 ? (size_t)r->ndim : 1;
    /* one block: fmt, loss.fmt, err, fp8, each N long, then the shape
     * (every member's alignment that of a double) */
    size_t bytes = n * (2 * sizeof *r->fmt + sizeof *r->err + sizeof *r->fp8);
    char *block = cli_xcalloc(1, bytes + dims * sizeof *r->shape);
    r->fmt = (fpk_format_counts *)block;
    r->loss.fmt = r->fmt + n;
    r->err = (grad_err *)(r->loss.fmt + n);
    r->fp8 = (grad_fp8 *)(r->err + n);
    r->shape = (uint64_t *)(block + bytes);
}

void grad_row_copy_formats(grad_row *r, const grad_row *from, int nf)
{
    r->ndim = from->ndim;
    grad_row_formats(r, nf);
    memcpy(r->shape, from->shape, (size_t)(from->ndim > 0 ? from->ndim : 0) * sizeof *r->shape);
    size_t n = nf > 0 ? (size_t)nf : 0;
    memcpy(r->fmt, from->fmt, n * sizeof *r->fmt);
    memcpy(r->loss.fmt, from->loss.fmt, n * sizeof *r->fmt);
    memcpy(r->err, from->err, n * sizeof *r->err);
    memcpy(r->fp8, from->fp8, n * sizeof *r->fp8);
}

void grad_add_counts(fpk_format_counts *into, const fpk_format_counts *from)
{
    into->underflow += from->underflow;
    into->subnormal += from->subnormal;
    into->overflow += from->overflow;
}

void grad_row_free(grad_row *r)
{
    free(r->name);
    free(r->file);
    free(r->hist);
    free(r->fmt); /* the block of every per-format member */
    r->name = r->file = NULL;
    r->hist = NULL;
    r->fmt = r->loss.fmt = NULL;
    r->err = NULL;
    r->fp8 = NULL;
    r->shape = NULL;
}

bool grad_log2_range(const grad_row *r, int *lo, int *hi)
{
    if (!r->hist_n)
        return false;
    *lo = r->hist_min;
    *hi = r->hist_min + (int)r->hist_n - 1;
    return true;
}

bool grad_log2_median(const grad_row *r, int *median)
{
    uint64_t n = 0;
    for (size_t i = 0; i < r->hist_n; i++)
        n += r->hist[i];
    if (!n)
        return false;
    uint64_t want = n / 2 + n % 2, seen = 0;
    for (size_t i = 0; i < r->hist_n; i++) {
        seen += r->hist[i];
        if (seen >= want) {
            *median = r->hist_min + (int)i;
            break;
        }
    }
    return true;
}


void grad_row_add(grad_row *into, const grad_row *from, int nf)
{
    into->count += from->count;
    into->zeros += from->zeros;
    into->nonfinite += from->nonfinite;
    if (from->amax > into->amax)
        into->amax = from->amax;
    if (from->hist_n) {
        int lo = into->hist_n && into->hist_min < from->hist_min ? into->hist_min : from->hist_min;
        int hi_into = into->hist_min + (int)into->hist_n;
        int hi_from = from->hist_min + (int)from->hist_n;
        int hi = into->hist_n && hi_into > hi_from ? hi_into : hi_from;
        uint64_t *h = cli_xcalloc((size_t)(hi - lo), sizeof *h);
        for (size_t b = 0; b < into->hist_n; b++)
            h[into->hist_min - lo + (int)b] += into->hist[b];
        for (size_t b = 0; b < from->hist_n; b++)
            h[from->hist_min - lo + (int)b] += from->hist[b];
        free(into->hist);
        into->hist = h;
        into->hist_min = lo;
        into->hist_n = (size_t)(hi - lo);
    }
    for (int j = 0; j < nf; j++) {
        grad_add_counts(&into->fmt[j], &from->fmt[j]);
        into->err[j].x2 += from->err[j].x2;
        into->err[j].e2 += from->err[j].e2;
        grad_add_counts(&into->loss.fmt[j], &from->loss.fmt[j]);
        grad_add_counts(&into->fp8[j].fmt, &from->fp8[j].fmt);
    }
}

static int by_step(const void *a, const void *b)
{
    const grad_row *x = a, *y = b;
    return (x->step > y->step) - (x->step < y->step);
}

void grad_finish(grad_run *run, const grad_sums *err)
{
    int nf = run->nformats;
    grad_row_free(&run->total);
    memset(&run->total, 0, sizeof run->total);
    grad_row_formats(&run->total, nf);
    for (size_t i = 0; i < run->nrows; i++)
        grad_row_add(&run->total, &run->rows[i], nf);
    for (int j = 0; err && j < nf; j++)
        run->total.err[j] = grad_sums_value(&err[j]);
    run->total.loss.has_scale = run->loss.has_scale;
    run->total.loss.value = run->loss.value;
    /* the steps: one sum per step known, if there are two or more */
    for (size_t k = 0; k < run->nsteps; k++)
        grad_row_free(&run->steps[k]);
    free(run->steps);
    run->steps = NULL;
    run->nsteps = 0;
    grad_row *steps = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *steps);
    size_t n = 0;
    for (size_t i = 0; i < run->nrows; i++) {
        const grad_row *r = &run->rows[i];
        if (!r->has_step)
            continue;
        size_t k = 0;
        while (k < n && steps[k].step != r->step)
            k++;
        if (k == n) {
            grad_row_formats(&steps[n], nf);
            steps[n].has_step = true;
            steps[n++].step = r->step;
        }
        grad_row_add(&steps[k], r, nf);
    }
    qsort(steps, n, sizeof *steps, by_step);
    if (n < 2) {
        for (size_t k = 0; k < n; k++)
            grad_row_free(&steps[k]);
        free(steps);
        return;
    }
    run->steps = steps;
    run->nsteps = n;
}

bool grad_power_of_two(double v, int *k)
{
    int e;
    double m = frexp(v, &e);
    if (!(v > 0) || m != 0.5)
        return false;
    *k = e - 1;
    return true;
}
