/* The stochastic-rounding fix-up of the statistics with AVX-512
 * (fpki_sr_fixup_fn). */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx512-util.h"

/* fpki_sr_fixup_generic, 16 elements at a time.  An element rounded away from
 * zero crosses the class boundaries c with away[c] <= |x| < tz[c], which
 * are consecutive: from its RTZ class to its away one, one at a time.  So
 * per boundary, vector compares find the elements that may cross it, and
 * only vectors holding some compute the rule (hash and discarded
 * fraction); per lane counters count the crossings. */
TARGET_AVX512 void fpki_sr_fixup_avx512(const fpki_sr_fixup_plan *p, const uint32_t *x, size_t n,
                                        uint64_t index, int64_t (*delta)[4])
{
    const __m512i mag = _mm512_set1_epi32((int)FPKI_F32_MAG), one = _mm512_set1_epi32(1);
    const __m512i man = _mm512_set1_epi32(0x7fffff), hidden = _mm512_set1_epi32(0x800000);
    const __m512i thirty_two = _mm512_set1_epi32(32);
    const __m512i seed_mix = _mm512_set1_epi64((long long)fpki_sr_mix(0));
    const __m512i lsb_exp = _mm512_set1_epi32(p->scale_exp - 150);
    __m512i crossed[FPKI_STATS_MAX_FORMATS][3];
    for (int j = 0; j < p->n; j++)
        for (int c = 0; c < 3; c++)
            crossed[j][c] = _mm512_setzero_si512();
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 live = first_lanes(n - i);
        /* zeros, infinities and NaNs lie in no range: away[0] > 0 */
        __m512i raw = _mm512_maskz_loadu_epi32(live, x + i), a = _mm512_and_si512(raw, mag);
        __mmask16 may[FPKI_STATS_MAX_FORMATS][3], any = 0;
        for (int j = 0; j < p->n; j++) {
            __m512i v = _mm512_and_si512(raw, _mm512_set1_epi32((int)p->mask[j]));
            for (int c = 0; c < 3; c++) {
                may[j][c] = _mm512_mask_cmplt_epu32_mask(
                    _mm512_cmpge_epu32_mask(v, _mm512_set1_epi32((int)p->away[j][c])), v,
                    _mm512_set1_epi32((int)p->tz[j][c]));
                any |= may[j][c];
            }
        }
        if (!any)
            continue;
        __m512i rnd = sr_bits16(seed_mix, index + i);
        /* |x| = sig * 2^e0 (times the scale), its top bit at TOP */
        __m512i ef = _mm512_srli_epi32(a, 23);
        __mmask16 normal = _mm512_test_epi32_mask(ef, ef);
        __m512i sig = _mm512_mask_or_epi32(a, normal, _mm512_and_si512(a, man), hidden);
        __m512i e0 = _mm512_add_epi32(_mm512_max_epi32(ef, one), lsb_exp);
        __m512i top =
            _mm512_sub_epi32(_mm512_add_epi32(e0, _mm512_set1_epi32(31)), _mm512_lzcnt_epi32(sig));
        for (int j = 0; j < p->n; j++) {
            __mmask16 mine = may[j][0] | may[j][1] | may[j][2];
            if (!mine)
                continue;
            /* d bits discarded: the low d moved to the top when d <= 32,
             * else shifted down (counts of 32 or more give zeros) */
            __m512i d = _mm512_sub_epi32(_mm512_max_epi32(top, _mm512_set1_epi32(p->emin[j])),
                                         _mm512_add_epi32(e0, _mm512_set1_epi32(p->man_bits[j])));
            __m512i low = _mm512_sub_epi32(_mm512_sllv_epi32(one, d), one);
            __m512i frac = _mm512_srlv_epi32(sig, _mm512_sub_epi32(d, thirty_two));
            frac =
                _mm512_mask_sllv_epi32(frac, _mm512_cmple_epi32_mask(d, thirty_two),
                                       _mm512_and_si512(sig, low), _mm512_sub_epi32(thirty_two, d));
            __mmask16 inexact = _mm512_cmpgt_epi32_mask(d, _mm512_setzero_si512());
            __mmask16 away = _mm512_mask_cmplt_epu32_mask(mine & inexact, rnd, frac);
            for (int c = 0; c < 3; c++)
                crossed[j][c] =
                    _mm512_mask_add_epi32(crossed[j][c], away & may[j][c], crossed[j][c], one);
        }
    }
    for (int j = 0; j < p->n; j++)
        for (int c = 0; c < 3; c++) {
            int64_t m = (int64_t)(uint32_t)_mm512_reduce_add_epi32(crossed[j][c]);
            delta[j][c] -= m;
            delta[j][c + 1] += m;
        }
}
#endif
