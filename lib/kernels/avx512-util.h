/* What the AVX-512 kernels (AVX-512 F, BW, DQ, VL and CD, with F16C and
 * POPCNT, whatever the build flags) share across algorithms: their target
 * attribute, lane masks, the SR hash sixteen counters at a time, and the
 * packing of a block's nonzero elements (vpcompressd) with its extremes,
 * which the statistics and the squared errors both start from. */
#ifndef FPKIT_AVX512_UTIL_H
#define FPKIT_AVX512_UTIL_H

#include <immintrin.h>

#include "kernel-util.h"

#define TARGET_AVX512 \
    __attribute__((target("avx2,bmi,bmi2,f16c,popcnt,avx512f,avx512bw,avx512dq,avx512vl,avx512cd")))

/* The first K of 16 lanes (all 16 when K >= 16), as a mask. */
static inline __attribute__((always_inline)) __mmask16 first_lanes(size_t k)
{
    return k >= 16 ? 0xffff : (__mmask16)((1u << k) - 1);
}

/* fpki_sr_mix (lib/core/sr-hash.h) of SEED_MIX (the seed mixed) ^ W for
 * the 8 words W (counters times FPKI_SR_GOLDEN plus FPKI_SR_OFFSET), but
 * for its last step: the random bits are the high halves of Z ^ (Z >>
 * 31). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i sr_mix8(__m512i w,
                                                                           __m512i seed_mix)
{
    const __m512i m1 = _mm512_set1_epi64((long long)FPKI_SR_MIX1);
    const __m512i m2 = _mm512_set1_epi64((long long)FPKI_SR_MIX2);
    __m512i z = _mm512_xor_si512(seed_mix, w);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), m1);
    return _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), m2);
}

/* fpki_sr_bits(seed, CTR + i) in lane i, for 16 counters: the products
 * with the golden ratio by adds, the hashes eight at a time, their high
 * halves gathered by one permute and the last step taken on them (the
 * high half of Z ^ (Z >> 31) is H ^ (H >> 31)). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i sr_bits16(__m512i seed_mix,
                                                                             uint64_t ctr)
{
    const uint64_t g = FPKI_SR_GOLDEN;
    __m512i w =
        _mm512_add_epi64(_mm512_set1_epi64((long long)(ctr * g + FPKI_SR_OFFSET)),
                         _mm512_set_epi64((long long)(7 * g), (long long)(6 * g),
                                          (long long)(5 * g), (long long)(4 * g),
                                          (long long)(3 * g), (long long)(2 * g), (long long)g, 0));
    __m512i h0 = sr_mix8(w, seed_mix);
    __m512i h1 = sr_mix8(_mm512_add_epi64(w, _mm512_set1_epi64((long long)(8 * g))), seed_mix);
    __m512i hi = _mm512_permutex2var_epi32(
        h0, _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1), h1);
    return _mm512_xor_si512(hi, _mm512_srli_epi32(hi, 31));
}

/* The first pass over the LEN elements at X (all 16 at a time when FULL):
 * packs the nonzero ones (magnitudes, or encodings when SIGN) at BZ in
 * order and returns their number; meanwhile their largest magnitude goes
 * to TOP, the least nonzero one to LEAST (lane by lane), -0's are counted
 * into *NEG_ZEROS when SIGN, and (POW2 not NULL, not SIGN) the nonzero
 * ones that are powers of two (mantissa 0) are noted in *POW2. */
TARGET_AVX512 static inline __attribute__((always_inline)) size_t
pack_nonzero(const uint32_t *x, size_t len, bool sign, bool full, uint32_t *bz, __m512i *top,
             __m512i *least, uint32_t *neg_zeros, __mmask16 *pow2)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), man = _mm512_set1_epi32(0x7fffff);
    size_t m = 0;
    if (full && !sign) {
        /* two vectors a step, with extremes of their own, so that the
         * two chains of compares and compresses overlap */
        __m512i top2 = *top, least2 = *least;
        for (size_t i = 0; i < len; i += 32) {
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
            _mm_prefetch((const char *)(x + i + 16) + FPKI_PREFETCH, _MM_HINT_T1);
            __m512i a0 = _mm512_and_si512(_mm512_loadu_si512(x + i), mag);
            __m512i a1 = _mm512_and_si512(_mm512_loadu_si512(x + i + 16), mag);
            __mmask16 nz0 = _mm512_test_epi32_mask(a0, a0), nz1 = _mm512_test_epi32_mask(a1, a1);
            *top = _mm512_max_epu32(*top, a0);
            top2 = _mm512_max_epu32(top2, a1);
            *least = _mm512_mask_min_epu32(*least, nz0, *least, a0);
            least2 = _mm512_mask_min_epu32(least2, nz1, least2, a1);
            if (pow2)
                *pow2 |= _mm512_mask_testn_epi32_mask(nz0, a0, man) |
                         _mm512_mask_testn_epi32_mask(nz1, a1, man);
            size_t m0 = (size_t)__builtin_popcount(nz0);
            _mm512_storeu_si512(bz + m, _mm512_maskz_compress_epi32(nz0, a0));
            _mm512_storeu_si512(bz + m + m0, _mm512_maskz_compress_epi32(nz1, a1));
            m += m0 + (size_t)__builtin_popcount(nz1);
        }
        *top = _mm512_max_epu32(*top, top2);
        *least = _mm512_min_epu32(*least, least2);
        return m;
    }
    for (size_t i = 0; i < len; i += 16) {
        __mmask16 t = full ? 0xffff : first_lanes(len - i);
        _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m512i xi = full ? _mm512_loadu_si512(x + i) : _mm512_maskz_loadu_epi32(t, x + i);
        __m512i a = _mm512_and_si512(xi, mag);
        __mmask16 nonzero = _mm512_test_epi32_mask(a, a);
        *top = _mm512_max_epu32(*top, a);
        *least = _mm512_mask_min_epu32(*least, nonzero, *least, a);
        if (pow2 && !sign)
            *pow2 |= _mm512_mask_testn_epi32_mask(nonzero, a, man);
        if (sign)
            *neg_zeros += (uint32_t)__builtin_popcount(
                _mm512_mask_test_epi32_mask((__mmask16)(t & ~nonzero), xi, xi));
        _mm512_storeu_si512(bz + m, _mm512_maskz_compress_epi32(nonzero, sign ? xi : a));
        m += (size_t)__builtin_popcount(nonzero);
    }
    return m;
}

#endif
