/* fpgrad's rows: filling them from the library's statistics, what the
 * histogram says, and the recommended scales. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad.h"

/* The powers of two a double holds. */
#define SCALE_LOG2_MIN (-1074)
#define SCALE_LOG2_MAX 1023

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
    memcpy(r->fmt, s->fmt, sizeof r->fmt);
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
    r->name = r->file = NULL;
    r->hist = NULL;
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

static int clamp_log2(int k)
{
    return k < SCALE_LOG2_MIN ? SCALE_LOG2_MIN : k > SCALE_LOG2_MAX ? SCALE_LOG2_MAX : k;
}

/* Whether +-AMAX * 2^K overflows F under MODE; stochastic rounding is
 * judged by the direction away from zero, the one that can overflow. */
static bool overflows(const fpk_format *f, double amax, int k, fpk_round mode)
{
    double s = ldexp(1.0, k); /* exact: a power of two a double holds */
    for (int neg = 0; neg < 2; neg++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = mode != FPK_SR ? mode : neg ? FPK_RDN : FPK_RUP;
        fpk_bits z = fpk_from_double_scaled(f, neg ? -amax : amax, s, &c);
        fpk_class cls = fpk_classify(f, z);
        if ((c.flags & FPK_OVERFLOW) ||
            (cls != FPK_CLASS_NORMAL && cls != FPK_CLASS_SUBNORMAL && cls != FPK_CLASS_ZERO))
            return true;
    }
    return false;
}

int grad_loss_scale_log2(const fpk_format *f, double amax, fpk_round mode)
{
    int e;
    frexp(amax, &e); /* amax in [2^(e-1), 2^e); max finite in [2^emax, 2^(emax+1)) */
    int k = clamp_log2(f->emax + 1 - e);
    while (k > SCALE_LOG2_MIN && overflows(f, amax, k, mode))
        k--;
    while (k < SCALE_LOG2_MAX && !overflows(f, amax, k + 1, mode))
        k++;
    return k;
}

/* Whether AMAX * 2^K <= MAX, compared exactly in fp64 by the library (the
 * product of a double and a power of two near MAX is exact). */
static bool fits(double amax, int k, fpk_bits max)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits y = fpk_from_double_scaled(&fpk_fp64, amax, ldexp(1.0, k), &c);
    return fpk_le(&fpk_fp64, y, max, &c);
}

int grad_amax_scale_log2(const fpk_format *f, double amax, int margin)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits max = fpk_convert(&fpk_fp64, f, f->max_finite, &c);
    int e;
    frexp(amax, &e);
    int k = clamp_log2(f->emax + 1 - e);
    while (k > SCALE_LOG2_MIN && !fits(amax, k, max))
        k--;
    while (k < SCALE_LOG2_MAX && fits(amax, k + 1, max))
        k++;
    return clamp_log2(k - margin);
}

