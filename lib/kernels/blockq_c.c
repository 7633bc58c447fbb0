/* The portable block-quantisation kernels: blockq-body.h compiled with
 * the library's own flags. */
#include "blockq-body.h"
#include "kernel-sets.h"

void fpki_blockq_c(const fpki_blockq_plan *p, const fpki_blockq_block *b, size_t w,
                   const uint32_t *x, size_t n, uint64_t index, uint8_t *codes, uint32_t *y,
                   double *sums, fpki_blockq_counts *c)
{
    fpki_blockq_generic(p, b, w, x, n, index, codes, y, sums, c);
}

void fpki_blockq_extremes_c(const uint32_t *x, size_t n, size_t w, uint32_t *amax, uint32_t *amin,
                            uint8_t *nonfinite)
{
    fpki_blockq_extremes_generic(x, n, w, amax, amin, nonfinite);
}
