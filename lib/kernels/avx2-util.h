/* What the AVX2 kernels (AVX2, BMI1, BMI2, F16C, FMA and POPCNT, whatever
 * the build flags) share across algorithms: their target attribute,
 * unsigned compares, the SR hash eight counters at a time, and the packing
 * of a block's nonzero elements with its extremes (AVX2 has no
 * vpcompressd: a permute by a table's indices). */
#ifndef FPKIT_AVX2_UTIL_H
#define FPKIT_AVX2_UTIL_H

#include <immintrin.h>

#include "kernel-util.h"

#define TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,f16c,fma,popcnt")))

/* A >= B for unsigned 32-bit lanes. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i cmpge_epu32(__m256i a, __m256i b)
{
    return _mm256_cmpeq_epi32(_mm256_max_epu32(a, b), a);
}

/* The low 64 bits of the products of the 64-bit lanes of A with the
 * constant whose halves are in the low dwords of LO and HI (AVX2 has no
 * vpmullq). */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i mullo64(__m256i a, __m256i lo,
                                                                         __m256i hi)
{
    __m256i cross =
        _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), lo), _mm256_mul_epu32(a, hi));
    return _mm256_add_epi64(_mm256_mul_epu32(a, lo), _mm256_slli_epi64(cross, 32));
}

/* fpki_sr_mix (lib/core/sr-hash.h) of SEED_MIX (the seed mixed) ^ W for
 * the four words W (counters times FPKI_SR_GOLDEN plus FPKI_SR_OFFSET),
 * but for its last step. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i sr_mix4(__m256i w,
                                                                         __m256i seed_mix)
{
    const uint64_t m1 = FPKI_SR_MIX1, m2 = FPKI_SR_MIX2;
    const __m256i m1lo = _mm256_set1_epi64x((long long)m1),
                  m1hi = _mm256_set1_epi64x((long long)(m1 >> 32));
    const __m256i m2lo = _mm256_set1_epi64x((long long)m2),
                  m2hi = _mm256_set1_epi64x((long long)(m2 >> 32));
    __m256i z = _mm256_xor_si256(seed_mix, w);
    z = mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), m1lo, m1hi);
    return mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), m2lo, m2hi);
}

/* fpki_sr_bits(seed, CTR + i) in lane i, for 8 counters: the hashes of
 * elements 0, 1, 4, 5 and of 2, 3, 6, 7, four at a time, so that one
 * shuffle of their high halves puts them in order, and the last step
 * taken on those (the high half of Z ^ (Z >> 31) is H ^ (H >> 31)). */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i sr_bits8(__m256i seed_mix,
                                                                          uint64_t ctr)
{
    const uint64_t g = FPKI_SR_GOLDEN;
    __m256i base = _mm256_set1_epi64x((long long)(ctr * g + FPKI_SR_OFFSET));
    __m256i w0 = _mm256_add_epi64(
        base, _mm256_set_epi64x((long long)(5 * g), (long long)(4 * g), (long long)g, 0));
    __m256i w1 = _mm256_add_epi64(base, _mm256_set_epi64x((long long)(7 * g), (long long)(6 * g),
                                                          (long long)(3 * g), (long long)(2 * g)));
    __m256i hi = _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(sr_mix4(w0, seed_mix)),
                                                       _mm256_castsi256_ps(sr_mix4(w1, seed_mix)),
                                                       _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_xor_si256(hi, _mm256_srli_epi32(hi, 31));
}

/* For each 8-bit mask M, the byte indices of its set bits from the
 * lowest, packed into a uint64_t: vpermd's indices that move M's lanes to
 * the front, in order (compress_avx2.c). */
extern const uint64_t fpki_compress8_table[256] __attribute__((visibility("hidden")));

/* The table's entry for M, widened to vpermd's eight indices. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i compress8_indices(unsigned m)
{
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&fpki_compress8_table[m]));
}

/* The 8-bit mask of the lanes IS_ZERO (a compare's result) leaves out. */
TARGET_AVX2 static inline __attribute__((always_inline)) unsigned kept_lanes8(__m256i is_zero)
{
    return ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(is_zero)) & 0xff;
}

/* Stores the lanes of V in the 8-bit mask KEEP at DST, in order, and
 * returns how many. */
TARGET_AVX2 static inline __attribute__((always_inline)) size_t compress8(__m256i v, unsigned keep,
                                                                          void *dst)
{
    _mm256_storeu_si256((__m256i *)dst, _mm256_permutevar8x32_epi32(v, compress8_indices(keep)));
    return (size_t)__builtin_popcount(keep);
}

/* The largest and the least of the 8 unsigned lanes of V. */
TARGET_AVX2 static inline __attribute__((always_inline)) uint32_t reduce_max8_epu32(__m256i v)
{
    __m128i m = _mm_max_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4e));
    return (uint32_t)_mm_cvtsi128_si32(_mm_max_epu32(m, _mm_shuffle_epi32(m, 0xb1)));
}

TARGET_AVX2 static inline __attribute__((always_inline)) uint32_t reduce_min8_epu32(__m256i v)
{
    __m128i m = _mm_min_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_min_epu32(m, _mm_shuffle_epi32(m, 0x4e));
    return (uint32_t)_mm_cvtsi128_si32(_mm_min_epu32(m, _mm_shuffle_epi32(m, 0xb1)));
}

/* Stores the nonzero magnitudes of the N float32 elements at X at DST,
 * in order (DST has room for N: whole vectors are stored, but none past
 * the N-th), and returns how many; widens [*LEAST, *TOP] to take in each
 * of them.  Prefetches ahead of X every 16 elements. */
TARGET_AVX2 static inline __attribute__((always_inline)) size_t
pack_nonzero(const uint32_t *x, size_t n, uint32_t *dst, uint32_t *least, uint32_t *top)
{
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG), zero = _mm256_setzero_si256();
    __m256i top8 = zero, least8 = _mm256_set1_epi32(-1), top8b = zero, least8b = least8;
    size_t m = 0, i = 0;
    for (; n - i >= 16; i += 16) { /* two a step, as the AVX-512 pack_nonzero */
        _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m256i a0 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), mag);
        __m256i a1 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i + 8)), mag);
        __m256i z0 = _mm256_cmpeq_epi32(a0, zero), z1 = _mm256_cmpeq_epi32(a1, zero);
        top8 = _mm256_max_epu32(top8, a0);
        top8b = _mm256_max_epu32(top8b, a1);
        least8 = _mm256_min_epu32(least8, _mm256_or_si256(a0, z0));
        least8b = _mm256_min_epu32(least8b, _mm256_or_si256(a1, z1));
        size_t m0 = compress8(a0, kept_lanes8(z0), dst + m);
        m += m0 + compress8(a1, kept_lanes8(z1), dst + m + m0);
    }
    top8 = _mm256_max_epu32(top8, top8b);
    least8 = _mm256_min_epu32(least8, least8b);
    for (; n - i >= 8; i += 8) {
        if (i % 16 == 0)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), mag);
        __m256i is_zero = _mm256_cmpeq_epi32(a, zero);
        top8 = _mm256_max_epu32(top8, a);
        least8 = _mm256_min_epu32(least8, _mm256_or_si256(a, is_zero));
        m += compress8(a, kept_lanes8(is_zero), dst + m);
    }
    uint32_t lo = reduce_min8_epu32(least8), hi = reduce_max8_epu32(top8);
    for (; i < n; i++) {
        uint32_t a = x[i] & FPKI_F32_MAG;
        if (a == 0)
            continue;
        dst[m++] = a;
        lo = a < lo ? a : lo, hi = a > hi ? a : hi;
    }
    *least = lo < *least ? lo : *least, *top = hi > *top ? hi : *top;
    return m;
}

#endif
