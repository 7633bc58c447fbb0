/* The array kernels' portable set, what the library's build flags give, and
 * the tables cpu.c picks a set from by what the running CPU reports.  On
 * x86-64 the AVX2 and AVX-512 sets (array_kern_avx2.c, array_kern_avx512.c)
 * are the same bodies (array-kern.h) compiled under target attributes,
 * whatever the build flags, with kernels of their own where the
 * compiler's vectorisation of the bodies falls short. */
#include <string.h>

#include "array-kern.h"
#include "array-kern-x86.h"

static void store_c(void *z, size_t i, const uint32_t *block, size_t n, size_t size, bool stream)
{
    (void)stream;
    fpki_store_plain(z, i, block, n, size);
}

static unsigned conv_c(const fpki_conv *p, const uint32_t *x, void *z, size_t n, uint64_t index,
                       bool stream)
{
    (void)stream;
    return fpki_conv_any(p, x, z, n, index, false, store_c);
}

static void widen_c(fpk_dtype t, const void *x, uint32_t *z, size_t n, bool daz)
{
    fpki_widen_any(t, x, z, n, daz);
}

static unsigned lanes_c(const float *x, const float *y, size_t n, unsigned lane, double *x2,
                        double *e2)
{
    return fpki_lanes_any(x, y, n, lane, x2, e2);
}

/* The portable set has no one-pass kernel: it quantises, then sums. */
static bool sqerr_none(const fpki_conv *p, int nf, const uint32_t *x, size_t n, double *x2,
                       double *e2, unsigned *flags)
{
    (void)p, (void)nf, (void)x, (void)n, (void)x2, (void)e2, (void)flags;
    return false;
}

static bool stats_sqerr_none(const fpki_skeys *k, const uint32_t *x, size_t n, fpki_sacc *acc,
                             const fpki_conv *p, int nf, double *x2, double *e2,
                             unsigned *flags)
{
    (void)k, (void)acc;
    return sqerr_none(p, nf, x, n, x2, e2, flags);
}

static void stats_c(const fpki_skeys *k, const uint32_t *x, size_t n, fpki_sacc *acc)
{
    fpki_stats_any(k, x, n, acc);
}

static void srfix_c(const fpki_srkeys *k, const uint32_t *x, size_t n, uint64_t index,
                    int64_t (*delta)[4])
{
    fpki_srfix_any(k, x, n, index, delta);
}

static uint64_t mxmax_c(const uint32_t *x, size_t n)
{
    return fpki_mxmax_any(x, n);
}

static bool mxdown_c(const fpki_mxspan *s, const uint32_t *x, uint32_t *xs, size_t n,
                     uint8_t *odd)
{
    return fpki_mxdown_any(s, x, xs, n, odd);
}

static bool mxup_c(const fpki_mxspan *s, const uint32_t *q, const uint32_t *xs, uint32_t *y,
                   size_t n, uint32_t counts[2])
{
    return fpki_mxup_any(s, q, xs, y, n, counts);
}


#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
fpki_conv_fn *const fpki_conv_fns[FPKI_ISA_COUNT] = {conv_c, fpki_conv_avx2, fpki_conv_avx512};
fpki_widen_fn *const fpki_widen_fns[FPKI_ISA_COUNT] = {widen_c, fpki_widen_avx2, fpki_widen_avx512};
fpki_stats_fn *const fpki_stats_fns[FPKI_ISA_COUNT] = {stats_c, fpki_stats_avx2, fpki_stats_avx512};
fpki_srfix_fn *const fpki_srfix_fns[FPKI_ISA_COUNT] = {srfix_c, fpki_srfix_avx2, fpki_srfix_avx512};
fpki_lanes_fn *const fpki_lanes_fns[FPKI_ISA_COUNT] = {lanes_c, fpki_lanes_avx2, fpki_lanes_avx512};
fpki_sqerr_fn *const fpki_sqerr_fns[FPKI_ISA_COUNT] = {sqerr_none, fpki_sqerr_avx2,
                                                       fpki_sqerr_avx512};
fpki_stats_sqerr_fn *const fpki_stats_sqerr_fns[FPKI_ISA_COUNT] = {
    stats_sqerr_none, stats_sqerr_none, fpki_stats_sqerr_avx512};
fpki_mxmax_fn *const fpki_mxmax_fns[FPKI_ISA_COUNT] = {mxmax_c, fpki_mxmax_avx2, fpki_mxmax_avx512};
fpki_mxdown_fn *const fpki_mxdown_fns[FPKI_ISA_COUNT] = {mxdown_c, fpki_mxdown_avx2,
                                                         fpki_mxdown_avx512};
fpki_mxup_fn *const fpki_mxup_fns[FPKI_ISA_COUNT] = {mxup_c, fpki_mxup_avx2, fpki_mxup_avx512};
#else
fpki_conv_fn *const fpki_conv_fns[FPKI_ISA_COUNT] = {conv_c, conv_c, conv_c};
fpki_widen_fn *const fpki_widen_fns[FPKI_ISA_COUNT] = {widen_c, widen_c, widen_c};
fpki_stats_fn *const fpki_stats_fns[FPKI_ISA_COUNT] = {stats_c, stats_c, stats_c};
fpki_srfix_fn *const fpki_srfix_fns[FPKI_ISA_COUNT] = {srfix_c, srfix_c, srfix_c};
fpki_lanes_fn *const fpki_lanes_fns[FPKI_ISA_COUNT] = {lanes_c, lanes_c, lanes_c};
fpki_sqerr_fn *const fpki_sqerr_fns[FPKI_ISA_COUNT] = {sqerr_none, sqerr_none, sqerr_none};
fpki_stats_sqerr_fn *const fpki_stats_sqerr_fns[FPKI_ISA_COUNT] = {
    stats_sqerr_none, stats_sqerr_none, stats_sqerr_none};
fpki_mxmax_fn *const fpki_mxmax_fns[FPKI_ISA_COUNT] = {mxmax_c, mxmax_c, mxmax_c};
fpki_mxdown_fn *const fpki_mxdown_fns[FPKI_ISA_COUNT] = {mxdown_c, mxdown_c, mxdown_c};
fpki_mxup_fn *const fpki_mxup_fns[FPKI_ISA_COUNT] = {mxup_c, mxup_c, mxup_c};
#endif
