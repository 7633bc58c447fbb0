/* The squared errors of given results with AVX-512 (fpki_sqerr_fn). */
#include "kernel-sets.h"

#if FPKI_X86
#include "sqerr-avx512.h"

/* fpki_sqerr_fn with AVX-512: the nonzero elements of SQERR_BLOCK and their
 * results packed (vpcompressd) behind the fewer than 16 left from the
 * last block, then summed 16 at a time. */
TARGET_AVX512 unsigned fpki_sqerr_avx512(const float *x, const float *y, size_t n, unsigned lane,
                                         double *x2, double *e2)
{
    __m512d sx[2], se[2];
    sums_load(x2, e2, sx, se);
    float xp[SQERR_BLOCK + 32] __attribute__((aligned(64)));
    float yp[SQERR_BLOCK + 32] __attribute__((aligned(64)));
    _mm512_store_ps(xp, _mm512_setzero_ps()); /* lanes before LANE: zeros, which add nothing */
    _mm512_store_ps(yp, _mm512_setzero_ps());
    const __m512i mag = _mm512_set1_epi32((int)FPKI_F32_MAG);
    size_t left = lane;
    for (size_t i0 = 0; i0 < n; i0 += SQERR_BLOCK) {
        size_t len = n - i0 < SQERR_BLOCK ? n - i0 : SQERR_BLOCK, m = left;
        for (size_t i = 0; i < len; i += 16) {
            __mmask16 live = first_lanes(len - i);
            __m512 xv = _mm512_maskz_loadu_ps(live, x + i0 + i);
            __m512 yv = y ? _mm512_maskz_loadu_ps(live, y + i0 + i) : _mm512_setzero_ps();
            __mmask16 nonzero = _mm512_test_epi32_mask(_mm512_castps_si512(xv), mag);
            _mm512_storeu_ps(xp + m, _mm512_maskz_compress_ps(nonzero, xv));
            _mm512_storeu_ps(yp + m, _mm512_maskz_compress_ps(nonzero, yv));
            m += (size_t)__builtin_popcount(nonzero);
        }
        size_t whole = m & ~(size_t)15;
        prefetch_range px = next_block_range(x, n, i0), py = next_block_range(y, n, i0);
        for (size_t r = 0; r < whole; r += 16) {
            prefetch_two_lines(&px);
            prefetch_two_lines(&py);
            __m512 xt = _mm512_load_ps(xp + r), yt = _mm512_load_ps(yp + r);
            sqerr_add16(xt, yt, sqerr_counted16(xt, yt), x2 != NULL, sx, se);
        }
        left = m - whole;
        _mm512_store_ps(xp, _mm512_loadu_ps(xp + whole));
        _mm512_store_ps(yp, _mm512_loadu_ps(yp + whole));
    }
    if (left) {
        __m512 xt = _mm512_maskz_load_ps(first_lanes(left), xp);
        __m512 yt = _mm512_maskz_load_ps(first_lanes(left), yp);
        sqerr_add16(xt, yt, sqerr_counted16(xt, yt), x2 != NULL, sx, se);
    }
    sums_store(x2, e2, sx, se);
    return (unsigned)left;
}
#endif
