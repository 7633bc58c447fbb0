/* The stochastic-rounding fix-up of the statistics with AVX2
 * (fpki_sr_fixup_fn). */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx2-util.h"
#include "sr-fixup-body.h"

/* fpki_sr_fixup_generic, 8 elements at a time, as fpki_sr_fixup_avx512: per
 * class boundary, vector compares find the elements that may cross it, and
 * only vectors holding some compute the rule (hash and discarded fraction);
 * per lane counters count the crossings.  The thresholds and the elements
 * are compared with their top bits flipped (AVX2 compares signed only), the
 * thresholds flipped once.  The top bit of a significand (AVX2 has no
 * vplzcntd) is the exponent of its exact conversion to float.  NF is the
 * number of formats, a constant where the caller can make it one, so that
 * the loops unroll and their vectors stay in registers. */
TARGET_AVX2 static inline __attribute__((always_inline)) void sr_fixup8(const fpki_sr_fixup_plan *p,
                                                                        int nf, const uint32_t *x,
                                                                        size_t n, uint64_t index,
                                                                        int64_t (*delta)[4])
{
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG), one = _mm256_set1_epi32(1);
    const __m256i man = _mm256_set1_epi32(0x7fffff), hidden = _mm256_set1_epi32(0x800000);
    const __m256i thirty_two = _mm256_set1_epi32(32), flip = _mm256_set1_epi32(INT32_MIN);
    const __m256i zero = _mm256_setzero_si256(), bias = _mm256_set1_epi32(127);
    const __m256i seed_mix = _mm256_set1_epi64x((long long)fpki_sr_mix(0));
    const __m256i lsb_exp = _mm256_set1_epi32(p->scale_exp - 150);
    __m256i tz[FPKI_STATS_MAX_FORMATS][3], away[FPKI_STATS_MAX_FORMATS][3];
    __m256i crossed[FPKI_STATS_MAX_FORMATS][3];
#pragma GCC unroll 4
    for (int j = 0; j < nf; j++)
#pragma GCC unroll 4
        for (int c = 0; c < 3; c++) {
            tz[j][c] = _mm256_set1_epi32((int)(p->tz[j][c] ^ 0x80000000u));
            away[j][c] = _mm256_set1_epi32((int)(p->away[j][c] ^ 0x80000000u));
            crossed[j][c] = zero;
        }
    uint32_t tail[8];
    for (size_t i = 0; i < n; i += 8) {
        /* zeros, infinities and NaNs lie in no range (away[0] > 0): the
         * tail is padded with zeros */
        const uint32_t *at = x + i;
        if (n - i < 8) {
            memset(tail, 0, sizeof tail);
            at = memcpy(tail, x + i, 4 * (n - i));
        }
        __m256i raw = _mm256_loadu_si256((const __m256i *)at), a = _mm256_and_si256(raw, mag);
        __m256i raw_f = _mm256_xor_si256(raw, flip), a_f = _mm256_xor_si256(a, flip);
        __m256i may[FPKI_STATS_MAX_FORMATS][3], any = zero;
#pragma GCC unroll 4
        for (int j = 0; j < nf; j++) {
            __m256i v = p->mask[j] == FPKI_F32_MAG ? a_f : raw_f; /* (masks: these two) */
#pragma GCC unroll 4
            for (int c = 0; c < 3; c++) {
                may[j][c] = _mm256_andnot_si256(_mm256_cmpgt_epi32(away[j][c], v),
                                                _mm256_cmpgt_epi32(tz[j][c], v));
                any = _mm256_or_si256(any, may[j][c]);
            }
        }
        if (_mm256_testz_si256(any, any))
            continue;
        __m256i rnd = _mm256_xor_si256(sr_bits8(seed_mix, index + i), flip);
        /* |x| = sig * 2^e0 (times the scale), its top bit at TOP */
        __m256i ef = _mm256_srli_epi32(a, 23);
        __m256i sig = _mm256_blendv_epi8(a, _mm256_or_si256(_mm256_and_si256(a, man), hidden),
                                         _mm256_cmpgt_epi32(ef, zero));
        __m256i e0 = _mm256_add_epi32(_mm256_max_epi32(ef, one), lsb_exp);
        __m256i top = _mm256_add_epi32(
            e0, _mm256_sub_epi32(
                    _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(sig)), 23), bias));
#pragma GCC unroll 4
        for (int j = 0; j < nf; j++) {
            __m256i mine = _mm256_or_si256(_mm256_or_si256(may[j][0], may[j][1]), may[j][2]);
            if (_mm256_testz_si256(mine, mine))
                continue;
            /* d bits discarded: the low d moved to the top when d <= 32,
             * else shifted down (AVX2's shifts by 32 or more, or by
             * negative counts, give zeros; none go where d <= 0) */
            __m256i d = _mm256_sub_epi32(_mm256_max_epi32(top, _mm256_set1_epi32(p->emin[j])),
                                         _mm256_add_epi32(e0, _mm256_set1_epi32(p->man_bits[j])));
            __m256i low = _mm256_sub_epi32(_mm256_sllv_epi32(one, d), one);
            __m256i frac = _mm256_or_si256(
                _mm256_sllv_epi32(_mm256_and_si256(sig, low), _mm256_sub_epi32(thirty_two, d)),
                _mm256_srlv_epi32(sig, _mm256_sub_epi32(d, thirty_two)));
            __m256i rounds_away =
                _mm256_and_si256(mine, _mm256_cmpgt_epi32(_mm256_xor_si256(frac, flip), rnd));
#pragma GCC unroll 4
            for (int c = 0; c < 3; c++)
                crossed[j][c] =
                    _mm256_sub_epi32(crossed[j][c], _mm256_and_si256(rounds_away, may[j][c]));
        }
    }
#pragma GCC unroll 4
    for (int j = 0; j < nf; j++)
#pragma GCC unroll 4
        for (int c = 0; c < 3; c++) {
            uint32_t lanes[8];
            _mm256_storeu_si256((__m256i *)lanes, crossed[j][c]);
            int64_t m = 0;
            for (int l = 0; l < 8; l++)
                m += lanes[l];
            delta[j][c] -= m;
            delta[j][c + 1] += m;
        }
}

TARGET_AVX2 void fpki_sr_fixup_avx2(const fpki_sr_fixup_plan *p, const uint32_t *x, size_t n,
                                    uint64_t index, int64_t (*delta)[4])
{
    for (int j = 0; j < p->n; j++)
        if (p->mask[j] != FPKI_F32_MAG && p->mask[j] != ~0u) {
            fpki_sr_fixup_generic(p, x, n, index, delta);
            return;
        }
    switch (p->n) {
    case 1: sr_fixup8(p, 1, x, n, index, delta); break;
    case 2: sr_fixup8(p, 2, x, n, index, delta); break;
    case 3: sr_fixup8(p, 3, x, n, index, delta); break;
    case 4: sr_fixup8(p, 4, x, n, index, delta); break;
    default: sr_fixup8(p, p->n, x, n, index, delta); break;
    }
}
#endif
