/* Block scaling's portable bodies (kernels.h: fpki_mx_amax_fn,
 * fpki_mx_scale_down_fn, fpki_mx_scale_up_fn), instantiated by mx_c.c,
 * and by mx_avx2.c for the elements after its last whole vector. */
#ifndef FPKIT_MX_BODY_H
#define FPKIT_MX_BODY_H

#include "kernel-util.h"

/* fpki_mx_amax_fn's body: the largest finite magnitude of X[0..N-1], plus
 * 2^32 if one is not finite. */
FPKI_INLINE uint64_t fpki_mx_amax_generic(const uint32_t *x, size_t n)
{
    uint32_t amax = 0, nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t mag = x[i] & FPKI_F32_MAG;
        nonfinite |= mag >= FPKI_F32_INF;
        amax = fpki_select(mag > amax && mag < FPKI_F32_INF, mag, amax);
    }
    return amax | (uint64_t)(nonfinite != 0) << 32;
}

/* fpki_mx_scale_down_fn's body: X scaled down on its exponent bits, tiny
 * ones to zeros, and the bits of those outside S's window; free of
 * branches (half the elements of a gradient may be zeros, at random). */
FPKI_INLINE bool fpki_mx_scale_down_generic(const fpki_mx_span *s, const uint32_t *x, uint32_t *xs,
                                            size_t n, uint8_t *odd)
{
    uint32_t any = 0;
    for (size_t j0 = 0; j0 < n; j0 += 8) {
        uint32_t bits = 0;
        for (size_t j = j0; j < n && j < j0 + 8; j++) {
            uint32_t mag = x[j] & FPKI_F32_MAG;
            uint32_t keep = -(uint32_t)(mag >= s->zero_below); /* all ones, or 0: a zero */
            xs[j] = (x[j] & FPKI_F32_SIGN) | ((mag - s->shift) & keep);
            bits |= (keep & fpki_mx_outside(s, mag)) << (j - j0);
        }
        odd[j0 / 8] = (uint8_t)bits;
        any |= bits;
    }
    return any != 0;
}

/* fpki_mx_scale_up_fn's body: the rounded Q scaled back up on their
 * exponent bits, the zeros and subnormals counted, and whether any lies
 * outside S's window. */
FPKI_INLINE bool fpki_mx_scale_up_generic(const fpki_mx_span *s, const uint32_t *q,
                                          const uint32_t *xs, uint32_t *y, size_t n,
                                          uint32_t counts[2])
{
    uint32_t odd = 0, flushed = 0, subnormal = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t mag = q[j] & FPKI_F32_MAG, nonzero = -(uint32_t)(mag != 0);
        if (y)
            y[j] = q[j] + (s->shift & nonzero);
        odd |= nonzero & fpki_mx_outside(s, mag);
        flushed += ~nonzero & ((xs[j] & FPKI_F32_MAG) != 0);
        subnormal += mag - 1 < s->min_norm - 1; /* (mag - 1 wraps for a zero) */
    }
    counts[0] += flushed;
    counts[1] += subnormal;
    return odd;
}

#endif
