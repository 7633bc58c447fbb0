/* The block-quantisation kernels with AVX2: blockq-body.h compiled for
 * AVX2, which the compiler vectorises eight lanes at a time. */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx2-util.h"
#include "blockq-body.h"

TARGET_AVX2 void fpki_blockq_avx2(const fpki_blockq_plan *p, const fpki_blockq_block *b, size_t w,
                                  const uint32_t *x, size_t n, uint64_t index, uint8_t *codes,
                                  uint32_t *y, double *sums, fpki_blockq_counts *c)
{
    fpki_blockq_generic(p, b, w, x, n, index, codes, y, sums, c);
}

TARGET_AVX2 void fpki_blockq_extremes_avx2(const uint32_t *x, size_t n, size_t w, uint32_t *amax,
                                           uint32_t *amin, uint8_t *nonfinite)
{
    fpki_blockq_extremes_generic(x, n, w, amax, amin, nonfinite);
}
#endif
