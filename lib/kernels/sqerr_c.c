/* The portable squared errors: sqerr-body.h compiled with the library's
 * own flags.  This set has no kernel that rounds and sums in one pass:
 * the tensor layer quantises, then sums. */
#include "kernel-sets.h"
#include "sqerr-body.h"

unsigned fpki_sqerr_c(const float *x, const float *y, size_t n, unsigned lane, double *x2,
                      double *e2)
{
    return fpki_sqerr_generic(x, y, n, lane, x2, e2);
}

bool fpki_quantize_sqerr_c(const fpki_conv_plan *p, int nf, const uint32_t *x, size_t n, double *x2,
                           double *e2, unsigned *flags)
{
    (void)p, (void)nf, (void)x, (void)n, (void)x2, (void)e2, (void)flags;
    return false;
}

bool fpki_stats_quantize_sqerr_c(const fpki_stats_keys *k, const uint32_t *x, size_t n,
                                 fpki_stats_totals *t, const fpki_conv_plan *p, int nf, double *x2,
                                 double *e2, unsigned *flags)
{
    (void)k, (void)t;
    return fpki_quantize_sqerr_c(p, nf, x, n, x2, e2, flags);
}
