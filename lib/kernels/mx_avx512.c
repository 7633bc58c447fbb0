/* The block-scaling kernels with AVX-512 (fpki_mx_amax_fn,
 * fpki_mx_scale_down_fn, fpki_mx_scale_up_fn), 16 elements at a time, the
 * last ones masked. */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx512-util.h"

/* fpki_mx_amax_fn: the largest finite magnitude of X[0..N-1], plus 2^32
 * if one is not finite. */
TARGET_AVX512 uint64_t fpki_mx_amax_avx512(const uint32_t *x, size_t n)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    __m512i top = _mm512_setzero_si512();
    __mmask16 nonfinite = 0;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 t = n - i >= 16 ? 0xffff : first_lanes(n - i);
        __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(t, x + i), mag);
        __mmask16 fin = _mm512_mask_cmplt_epu32_mask(t, a, inf);
        nonfinite |= (__mmask16)(t & ~fin);
        top = _mm512_mask_max_epu32(top, fin, top, a);
    }
    return _mm512_reduce_max_epu32(top) | (uint64_t)(nonfinite != 0) << 32;
}

/* fpki_mx_scale_down_fn: X scaled down by S's power of two on the
 * exponent bits (tiny ones to zeros), and the bits of those outside S's
 * window. */
TARGET_AVX512 bool fpki_mx_scale_down_avx512(const fpki_mx_span *s, const uint32_t *x, uint32_t *xs,
                                             size_t n, uint8_t *odd_bits)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), shift = _mm512_set1_epi32((int)s->shift);
    const __m512i lo = _mm512_set1_epi32((int)s->lo), span = _mm512_set1_epi32((int)s->span);
    const __m512i zero_below = _mm512_set1_epi32((int)s->zero_below);
    __mmask16 odd = 0;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 t = n - i >= 16 ? 0xffff : first_lanes(n - i);
        __m512i b = _mm512_maskz_loadu_epi32(t, x + i);
        __m512i a = _mm512_and_si512(b, mag);
        __mmask16 keep = _mm512_mask_cmpge_epu32_mask(t, a, zero_below);
        __m512i v =
            _mm512_or_si512(_mm512_andnot_si512(mag, b), _mm512_maskz_sub_epi32(keep, a, shift));
        __mmask16 o = _mm512_mask_cmpgt_epu32_mask(keep, _mm512_sub_epi32(a, lo), span);
        odd_bits[i / 8] = (uint8_t)o;
        odd_bits[i / 8 + 1] = (uint8_t)(o >> 8);
        odd |= o;
        _mm512_mask_storeu_epi32(xs + i, t, v);
    }
    return odd != 0;
}

/* fpki_mx_scale_up_fn: the rounded Q scaled back up by S's power of two,
 * the zeros and subnormals counted, and whether any lies outside S's
 * window. */
TARGET_AVX512 bool fpki_mx_scale_up_avx512(const fpki_mx_span *s, const uint32_t *q,
                                           const uint32_t *xs, uint32_t *y, size_t n,
                                           uint32_t counts[2])
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), shift = _mm512_set1_epi32((int)s->shift);
    const __m512i lo = _mm512_set1_epi32((int)s->lo), span = _mm512_set1_epi32((int)s->span);
    const __m512i min_norm = _mm512_set1_epi32((int)s->min_norm);
    __mmask16 odd = 0;
    uint32_t flushed = 0, subnormal = 0;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 t = n - i >= 16 ? 0xffff : first_lanes(n - i);
        __m512i v = _mm512_maskz_loadu_epi32(t, q + i);
        __m512i a = _mm512_and_si512(v, mag);
        __mmask16 nonzero = _mm512_test_epi32_mask(a, a);
        __mmask16 was = _mm512_mask_test_epi32_mask(t, _mm512_maskz_loadu_epi32(t, xs + i), mag);
        if (y)
            _mm512_mask_storeu_epi32(y + i, t, _mm512_mask_add_epi32(v, nonzero, v, shift));
        odd |= _mm512_mask_cmpgt_epu32_mask(nonzero, _mm512_sub_epi32(a, lo), span);
        flushed += (uint32_t)__builtin_popcount((__mmask16)(was & ~nonzero));
        subnormal +=
            (uint32_t)__builtin_popcount(_mm512_mask_cmplt_epu32_mask(nonzero, a, min_norm));
    }
    counts[0] += flushed;
    counts[1] += subnormal;
    return odd != 0;
}
#endif
