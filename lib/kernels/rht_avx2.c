/* The Hadamard-transform kernel with AVX2: rht-body.h compiled for AVX2. */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx2-util.h"
#include "rht-body.h"

TARGET_AVX2 size_t fpki_rht16_avx2(const uint32_t *x, size_t n, uint16_t signs, int prec,
                                   uint32_t *z, uint8_t *redo)
{
    return fpki_rht16_generic(x, n, signs, prec, z, redo);
}
#endif
