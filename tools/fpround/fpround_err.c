/* fpround's rounding errors: each element rounded in every format and
 * mode, its error against the exact value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpround.h"

/* R's zeros and nonfinite elements among X[0..N-1], or with Y (--dot) its
 * pairs: nonfinite where either element is, else zero where either is. */
void fr_count_kinds(fr_row *r, const double *x, const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || (y && !isfinite(y[i])))
            r->nonfinite++;
        else if (x[i] == 0 || (y && y[i] == 0))
            r->zeros++;
    }
}

/* The error of rounding X (nonzero, finite) to Q in F, into E. */
static void add_error(fr_err *e, const fpk_format *f, double x, fpk_bits qbits)
{
    fpk_class k = fpk_classify(f, qbits);
    if (k == FPK_CLASS_INF || k == FPK_CLASS_QNAN || k == FPK_CLASS_SNAN) {
        e->overflow++;
        return;
    }
    double q = fpk_to_double(f, qbits);
    /* q - x exactly, as hi + lo (Knuth's TwoSum: no overflow, |q| and |x|
     * are far below the largest double or equal). */
    double hi = q - x, bb = hi - q, lo = (q - (hi - bb)) + (-x - bb);
    long double d = (long double)hi + lo, lx = x;
    long double r = d / lx, ar = fabsl(r);
    e->measured++;
    e->underflow += q == 0;
    e->exact += hi == 0;
    e->sum_abs += ar;
    e->sum_sq += r * r;
    e->sum_signed += r;
    e->sum_x2 += lx * lx;
    e->sum_e2 += d * d;
    if ((double)ar > e->max_rel)
        e->max_rel = (double)ar;
    /* ulp(x) = 2^(max(floor(log2|x|), emin) - man_bits): a power of two, so
     * the quotient is exact but for the rounding of d. */
    int ex = ilogb(x) > f->emin ? ilogb(x) : f->emin;
    long double u = ldexpl(d, f->man_bits - ex);
    if ((double)fabsl(u) > e->max_ulps)
        e->max_ulps = (double)fabsl(u);
    long double s = x < 0 ? -u : u;
    long double b = floorl(s * FR_HIST_HALF + 0.5L);
    if (b < -FR_HIST_HALF)
        b = -FR_HIST_HALF;
    if (b > FR_HIST_HALF)
        b = FR_HIST_HALF;
    e->hist[(int)b + FR_HIST_HALF]++;
}

void fr_merge_error(fr_err *into, const fr_err *from)
{
    into->measured += from->measured;
    into->overflow += from->overflow;
    into->underflow += from->underflow;
    into->exact += from->exact;
    into->sum_abs += from->sum_abs;
    into->sum_sq += from->sum_sq;
    into->sum_signed += from->sum_signed;
    into->sum_x2 += from->sum_x2;
    into->sum_e2 += from->sum_e2;
    if (from->max_rel > into->max_rel)
        into->max_rel = from->max_rel;
    if (from->max_ulps > into->max_ulps)
        into->max_ulps = from->max_ulps;
    for (int b = 0; b < FR_HIST_BINS; b++)
        into->hist[b] += from->hist[b];
}

/* Encoding K of the array Q of fpk_array_size(F) bytes per encoding. */
static fpk_bits encoding_at(const fpk_format *f, const void *q, size_t k)
{
    switch (fpk_array_size(f)) {
    case 1: return ((const uint8_t *)q)[k];
    case 2: return ((const uint16_t *)q)[k];
    case 4: return ((const uint32_t *)q)[k];
    default: return ((const uint64_t *)q)[k];
    }
}

void fr_measure(const fr_run *run, fr_row *r, const double *x, size_t n, uint64_t first,
                void *q, int threads)
{
    fr_count_kinds(r, x, NULL, n);
    for (int j = 0; j < run->nformats; j++)
        for (int m = 0; m < run->nmodes; m++) {
            fpk_ctx c = fpk_ctx_default();
            c.round = run->modes[m];
            c.sr_seed = run->seed;
            c.sr_counter = first;
            const fpk_format *f = run->formats[j];
            fpk_array_convert(f, q, FPK_DTYPE_F64, x, n, &c, threads);
            fr_err *e = &r->err[j][m];
            for (size_t k = 0; k < n; k++)
                if (isfinite(x[k]) && x[k] != 0)
                    add_error(e, f, x[k], encoding_at(f, q, k));
        }
}
