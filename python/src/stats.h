/* The statistics of fpkit.stats: the library's fpk_stats and, per format,
 * the exact sums behind fpgrad's SQNR. */
#ifndef FPKIT_PY_STATS_H
#define FPKIT_PY_STATS_H

#include "exact.h"
#include "fpkit_py.h"

typedef struct fpy_stats {
    fpk_stats st;
    bool sqnr; /* the sums below are kept */
    /* format j's sums over the nonzero finite elements whose result is
     * finite: of x^2 and of (q - x)^2, q the result x * S rounded into the
     * format and divided by S */
    exact_sum x2[FPK_STATS_MAX_FORMATS], e2[FPK_STATS_MAX_FORMATS];
} fpy_stats;

/* Adds X[0..N-1], encodings of T, to S (the tensor's first element has
 * counter S->st.sr_index), its SQNR sums too if S->sqnr, as fpgrad does
 * for a tensor whose innermost dimension in storage order has ROWLEN
 * elements: pieces of at most 2^16 elements that end at the ends of rows
 * (or hold whole blocks of 32 within a longer row), the errors of float32
 * elements at scale 1 summed in the lanes of
 * fpk_array_quantize_sqerr_formats, the rest element by element.  False
 * when memory runs out. */
bool fpy_stats_add(fpy_stats *s, fpk_dtype t, const void *x, size_t n, uint64_t rowlen,
                   int threads);

#endif
