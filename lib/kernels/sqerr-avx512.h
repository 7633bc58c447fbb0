/* The sums of squared errors with AVX-512, sixteen float32 elements at a
 * time into two vectors of eight lanes each, as fpki_sqerr_generic adds
 * them: shared by the squared errors of given results (sqerr_avx512.c)
 * and of fake quantisation (quantize_sqerr_avx512.c). */
#ifndef FPKIT_SQERR_AVX512_H
#define FPKIT_SQERR_AVX512_H

#include "avx512-util.h"
#include "sqerr-x86.h"

/* Adds the squares of the float32 elements XV (if WANT_X2) and of their
 * errors against the results YV to the lanes SX and SE, zeros for the
 * lanes not in COUNTED, as fpki_sqerr_generic adds them. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sqerr_add16(__m512 xv, __m512 yv, __mmask16 counted, bool want_x2, __m512d *sx, __m512d *se)
{
    __m512 xk = _mm512_maskz_mov_ps(counted, xv), yk = _mm512_maskz_mov_ps(counted, yv);
    __m512d xl = _mm512_cvtps_pd(_mm512_castps512_ps256(xk));
    __m512d xh = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xk), 1)));
    __m512d el = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(yk)), xl);
    __m512d eh = _mm512_sub_pd(
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(yk), 1))), xh);
    if (want_x2) {
        sx[0] = _mm512_add_pd(sx[0], _mm512_mul_pd(xl, xl));
        sx[1] = _mm512_add_pd(sx[1], _mm512_mul_pd(xh, xh));
    }
    se[0] = _mm512_add_pd(se[0], _mm512_mul_pd(el, el));
    se[1] = _mm512_add_pd(se[1], _mm512_mul_pd(eh, eh));
}

/* The lanes counted among the 16 elements XV and their results YV:
 * nonzero finite elements with finite results. */
TARGET_AVX512 static inline __attribute__((always_inline)) __mmask16 sqerr_counted16(__m512 xv,
                                                                                     __m512 yv)
{
    const __m512i mag = _mm512_set1_epi32((int)FPKI_F32_MAG);
    const __m512i inf = _mm512_set1_epi32((int)FPKI_F32_INF);
    __m512i ax = _mm512_and_si512(_mm512_castps_si512(xv), mag);
    __m512i ay = _mm512_and_si512(_mm512_castps_si512(yv), mag);
    return _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ax, _mm512_set1_epi32(1)),
                                   _mm512_sub_epi32(inf, _mm512_set1_epi32(1))) &
           _mm512_cmplt_epu32_mask(ay, inf);
}

/* The lanes SX := X2's and SE := E2's sums (zeros for NULL). */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sums_load(const double *x2, const double *e2, __m512d *sx, __m512d *se)
{
    sx[0] = sx[1] = se[0] = se[1] = _mm512_setzero_pd();
    if (x2)
        sx[0] = _mm512_loadu_pd(x2), sx[1] = _mm512_loadu_pd(x2 + 8);
    if (e2)
        se[0] = _mm512_loadu_pd(e2), se[1] = _mm512_loadu_pd(e2 + 8);
}

/* X2 := SX's sums and E2 := SE's (NULL: not stored). */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sums_store(double *x2, double *e2, const __m512d *sx, const __m512d *se)
{
    if (x2)
        _mm512_storeu_pd(x2, sx[0]), _mm512_storeu_pd(x2 + 8, sx[1]);
    if (e2)
        _mm512_storeu_pd(e2, se[0]), _mm512_storeu_pd(e2 + 8, se[1]);
}

#endif
