/* The block-scaling kernels with AVX2 (fpki_mx_amax_fn,
 * fpki_mx_scale_down_fn, fpki_mx_scale_up_fn), 8 elements at a time
 * (unsigned compares with the sign bit flipped), the last ones by the
 * portable bodies (mx-body.h). */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx2-util.h"
#include "mx-body.h"

/* V with each lane's sign bit flipped: signed compares of such order as
 * unsigned compares of V do. */
TARGET_AVX2 static inline __m256i flip_sign(__m256i v)
{
    return _mm256_xor_si256(v, _mm256_set1_epi32(INT32_MIN));
}

/* fpki_mx_amax_fn: the largest finite magnitude of X[0..N-1], plus 2^32
 * if one is not finite. */
TARGET_AVX2 uint64_t fpki_mx_amax_avx2(const uint32_t *x, size_t n)
{
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    __m256i top = _mm256_setzero_si256(), nonfinite = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), mag);
        __m256i fin = _mm256_cmpgt_epi32(inf, a); /* (magnitudes: signed compares) */
        nonfinite = _mm256_or_si256(nonfinite, _mm256_andnot_si256(fin, a));
        top = _mm256_max_epi32(top, _mm256_and_si256(fin, a));
    }
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, top);
    uint64_t r = fpki_mx_amax_generic(x + i, n - i);
    uint32_t amax = (uint32_t)r;
    for (int l = 0; l < 8; l++)
        amax = lanes[l] > amax ? lanes[l] : amax;
    return amax | (r & UINT64_C(0x100000000)) |
           (uint64_t)!_mm256_testz_si256(nonfinite, nonfinite) << 32;
}

/* fpki_mx_scale_down_fn: X scaled down by S's power of two on the
 * exponent bits (tiny ones to zeros), and the bits of those outside S's
 * window. */
TARGET_AVX2 bool fpki_mx_scale_down_avx2(const fpki_mx_span *s, const uint32_t *x, uint32_t *xs,
                                         size_t n, uint8_t *odd_bits)
{
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), shift = _mm256_set1_epi32((int)s->shift);
    const __m256i lo = _mm256_set1_epi32((int)s->lo),
                  span = flip_sign(_mm256_set1_epi32((int)s->span));
    const __m256i below = _mm256_set1_epi32((int)s->zero_below - 1);
    __m256i odd = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i a = _mm256_and_si256(b, mag);
        __m256i keep = _mm256_cmpgt_epi32(a, below);
        __m256i v = _mm256_or_si256(_mm256_andnot_si256(mag, b),
                                    _mm256_and_si256(keep, _mm256_sub_epi32(a, shift)));
        __m256i o =
            _mm256_and_si256(keep, _mm256_cmpgt_epi32(flip_sign(_mm256_sub_epi32(a, lo)), span));
        odd_bits[i / 8] = (uint8_t)_mm256_movemask_ps(_mm256_castsi256_ps(o));
        odd = _mm256_or_si256(odd, o);
        _mm256_storeu_si256((__m256i *)(xs + i), v);
    }
    bool tail_odd = fpki_mx_scale_down_generic(s, x + i, xs + i, n - i, odd_bits + i / 8);
    return tail_odd || !_mm256_testz_si256(odd, odd);
}

/* fpki_mx_scale_up_fn: the rounded Q scaled back up by S's power of two,
 * the zeros and subnormals counted, and whether any lies outside S's
 * window. */
TARGET_AVX2 bool fpki_mx_scale_up_avx2(const fpki_mx_span *s, const uint32_t *q, const uint32_t *xs,
                                       uint32_t *y, size_t n, uint32_t counts[2])
{
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), shift = _mm256_set1_epi32((int)s->shift);
    const __m256i lo = _mm256_set1_epi32((int)s->lo),
                  span = flip_sign(_mm256_set1_epi32((int)s->span));
    const __m256i min_norm = _mm256_set1_epi32((int)s->min_norm), zero = _mm256_setzero_si256();
    __m256i odd = zero, flushed = zero, subnormal = zero;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(q + i));
        __m256i a = _mm256_and_si256(v, mag);
        __m256i is_zero = _mm256_cmpeq_epi32(a, zero);
        __m256i was = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(xs + i)), mag);
        if (y)
            _mm256_storeu_si256((__m256i *)(y + i),
                                _mm256_add_epi32(v, _mm256_andnot_si256(is_zero, shift)));
        __m256i outside = _mm256_cmpgt_epi32(flip_sign(_mm256_sub_epi32(a, lo)), span);
        odd = _mm256_or_si256(odd, _mm256_andnot_si256(is_zero, outside));
        /* (each a lane's count, as minus ones) */
        flushed =
            _mm256_add_epi32(flushed, _mm256_andnot_si256(_mm256_cmpeq_epi32(was, zero), is_zero));
        subnormal = _mm256_add_epi32(subnormal,
                                     _mm256_andnot_si256(is_zero, _mm256_cmpgt_epi32(min_norm, a)));
    }
    uint32_t f[8], u[8];
    _mm256_storeu_si256((__m256i *)f, flushed);
    _mm256_storeu_si256((__m256i *)u, subnormal);
    for (int l = 0; l < 8; l++) {
        counts[0] -= f[l];
        counts[1] -= u[l];
    }
    bool tail_odd = fpki_mx_scale_up_generic(s, q + i, xs + i, y ? y + i : NULL, n - i, counts);
    return tail_odd || !_mm256_testz_si256(odd, odd);
}
#endif
