/* The Hadamard-transform kernel with AVX-512 (fpki_rht16_fn): a run of
 * 16 as two vectors of 8 doubles, the transform's four stages as adds,
 * subtracts and permutes, each output rounded by rht-body.h's rule (whose
 * comment says why the results are fpk_rht16's) eight at a time. */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx512-util.h"
#include "rht-body.h"

#define AVX512_INLINE TARGET_AVX512 static inline __attribute__((always_inline))

/* One stage of the transform within each 256-bit half or pair: lanes
 * with bit H clear get a + b, the others a - b, T the lanes swapped. */
AVX512_INLINE __m512d stage(__m512d v, __m512d t, __mmask8 upper)
{
    return _mm512_mask_sub_pd(_mm512_add_pd(v, t), upper, t, v);
}

/* The 8 doubles V rounded at PREC bits (fpki_rht_round), as float32
 * bits. */
AVX512_INLINE __m256i round8(__m512d v, __m512i prec1)
{
    const __m512i mag = _mm512_set1_epi64(INT64_MAX);
    __m512i b = _mm512_castpd_si512(v), a = _mm512_and_si512(b, mag);
    __m512i e = _mm512_sub_epi64(_mm512_srli_epi64(a, 52), _mm512_set1_epi64(1023));
    __m512i q = _mm512_sub_epi64(_mm512_max_epi64(e, _mm512_set1_epi64(-126)), prec1);
    __m512d c = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(q, _mm512_set1_epi64(1075)), 52));
    __m512d r = _mm512_sub_pd(_mm512_add_pd(_mm512_castsi512_pd(a), c), c);
    __m256i f = _mm256_castps_si256(_mm512_cvtpd_ps(r));
    f = _mm256_maskz_mov_epi32(_mm512_test_epi64_mask(a, a), f);
    __m256i sign = _mm512_cvtepi64_epi32(_mm512_srli_epi64(_mm512_andnot_si512(mag, b), 32));
    return _mm256_or_si256(f, sign);
}

TARGET_AVX512 size_t fpki_rht16_avx512(const uint32_t *x, size_t n, uint16_t signs, int prec,
                                       uint32_t *z, uint8_t *redo)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i prec1 = _mm512_set1_epi64(prec - 1);
    /* the inputs' signs and the 1/4, as factors */
    __m512d s[2];
    for (int h = 0; h < 2; h++)
        s[h] = _mm512_mask_blend_pd((__mmask8)(signs >> (8 * h)), _mm512_set1_pd(0.25),
                                    _mm512_set1_pd(-0.25));
    size_t left = 0;
    for (size_t g = 0; g < n / 16; g++) {
        if (g % 4 == 0)
            _mm_prefetch((const char *)(x + 16 * g) + FPKI_PREFETCH, _MM_HINT_T1);
        __m512i xb = _mm512_loadu_si512(x + 16 * g), a = _mm512_and_si512(xb, mag);
        redo[g] = 0;
        if (__builtin_expect(_mm512_cmpge_epu32_mask(a, inf) != 0, 0)) {
            _mm512_storeu_si512(z + 16 * g, _mm512_set1_epi32((int)FPKI_F32_QNAN));
            continue;
        }
        __m512 xf = _mm512_castsi512_ps(xb);
        __m512d v0 = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(xf)), s[0]);
        __m512d v1 = _mm512_mul_pd(
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1))), s[1]);
        /* the span of the exponents (rht-body.h): the largest field, the
         * least nonzero one at least 1 */
        __mmask16 nz = _mm512_test_epi32_mask(a, a);
        uint32_t hi = _mm512_reduce_max_epu32(a);
        uint32_t lo = _mm512_reduce_min_epu32(_mm512_mask_mov_epi32(inf, nz, a));
        uint32_t lo_exp = (lo >> 23) > 1 ? lo >> 23 : 1;
        bool exact = !nz || (int)(hi >> 23) - (int)lo_exp <= FPKI_RHT_EXACT_SPAN;
        double sum = 0;
        if (!exact)
            sum = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_abs_pd(v0), _mm512_abs_pd(v1)));
        /* the four stages: element i and i + h, h = 8, 4, 2, 1 */
        __m512d t = v0;
        v0 = _mm512_add_pd(v0, v1);
        v1 = _mm512_sub_pd(t, v1);
        v0 = stage(v0, _mm512_shuffle_f64x2(v0, v0, 0x4e), 0xf0);
        v1 = stage(v1, _mm512_shuffle_f64x2(v1, v1, 0x4e), 0xf0);
        v0 = stage(v0, _mm512_permutex_pd(v0, 0x4e), 0xcc);
        v1 = stage(v1, _mm512_permutex_pd(v1, 0x4e), 0xcc);
        v0 = stage(v0, _mm512_permute_pd(v0, 0x55), 0xaa);
        v1 = stage(v1, _mm512_permute_pd(v1, 0x55), 0xaa);
        __m256i r0, r1;
        if (exact) {
            /* an exact zero sum is +0 */
            r0 = _mm256_maskz_mov_epi32(_mm512_cmpneq_pd_mask(v0, _mm512_setzero_pd()), round8(v0, prec1));
            r1 = _mm256_maskz_mov_epi32(_mm512_cmpneq_pd_mask(v1, _mm512_setzero_pd()), round8(v1, prec1));
        } else {
            __m512d eps = _mm512_set1_pd(sum * 0x1p-48);
            r0 = round8(_mm512_sub_pd(v0, eps), prec1);
            r1 = round8(_mm512_sub_pd(v1, eps), prec1);
            __m256i u0 = round8(_mm512_add_pd(v0, eps), prec1);
            __m256i u1 = round8(_mm512_add_pd(v1, eps), prec1);
            if (_mm256_cmpneq_epi32_mask(r0, u0) | _mm256_cmpneq_epi32_mask(r1, u1)) {
                redo[g] = 1;
                left++;
            }
        }
        _mm512_storeu_si512(z + 16 * g, _mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1));
    }
    return left;
}
#endif
