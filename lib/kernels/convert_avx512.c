/* The conversion and widening kernels with AVX-512 (fpki_convert_fn,
 * fpki_widen_fn).
 *
 * fp16 under RNE and RTZ with tininess before rounding takes F16C's
 * vcvtps2ph, as the AVX2 set does; the plain kernel below is faster for
 * the rest.  AVX512-BF16's vcvtneps2bf16 is not used: it flushes float32
 * subnormal inputs to zero whatever MXCSR says, and the integer kernel
 * rounds bf16 in three operations anyway.
 *
 * The five kernel formats under RNE, RTZ and SR without options have a
 * kernel of their own (convert_plain, rounding with round-avx512.h): integer
 * rounding where the format's
 * exponent range is float32's, the vector unit's rounding with the mode in
 * the instruction elsewhere (SR: the integers everywhere, the hashes eight
 * 64-bit lanes at a time), a line of output at a time, the flags from
 * running minima and overflows, infinities and NaNs only in the lines
 * that hold one.  Under RNE and RTZ the same rounding also feeds the
 * squared errors of fake quantisation (quantize_sqerr_avx512.c) without
 * storing a result.  Every other conversion takes the portable body
 * (convert-body.h), compiled here for AVX-512. */
#include "kernel-sets.h"

#if FPKI_X86
#include "round-avx512.h"

/* fpki_store_fn for the portable body: a whole block narrowed, then
 * stored with non-temporal stores when STREAM. */
TARGET_AVX512 static void store_block_avx512(void *z, size_t i, const uint32_t *block, size_t n,
                                             size_t size, bool stream)
{
    if (!stream) {
        fpki_store_plain(z, i, block, n, size);
        return;
    }
    uint32_t t[FPKI_BLOCK] __attribute__((aligned(64)));
    fpki_narrow_block(block, t, size);
    uint8_t *dst = (uint8_t *)z + size * i;
    for (size_t b = 0; b < size * FPKI_BLOCK; b += 64)
        _mm512_stream_si512((void *)(dst + b),
                            _mm512_load_si512((const void *)((const uint8_t *)t + b)));
}

/* Converts X[0..N-1] into fp16 (P without ftz, daz or saturate) with
 * F16C, under RTZ or else RNE, 16 elements at a time, masked at the ends;
 * returns the flags. */
TARGET_AVX512 static inline __attribute__((always_inline)) unsigned
convert_f16c(const fpki_conv_plan *p, const uint32_t *x, void *z, size_t n, bool stream, bool rtz)
{
    size_t width = p->quant ? 4 : 2;
    size_t head = stream ? fpki_stream_head(z, width) : SIZE_MAX;
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i quiet = _mm512_set1_epi32(0x400000);
    const __m512i of_at = _mm512_set1_epi32((int)(rtz ? F16C_OF_RTZ : F16C_OF_RNE));
    const __m512i tiny =
        _mm512_set1_epi32((int)(p->tiny_before || rtz ? F16C_MIN_NORMAL : F16C_TINY_RNE));
    const __m256i hnan = _mm256_set1_epi16(F16C_NAN);
    __mmask16 ix = 0, uf = 0, of = 0, inv = 0;
    for (size_t i = 0; i < n;) {
        size_t k = n - i < 16 ? n - i : 16;
        if (i < head && head - i < k)
            k = head - i;
        __mmask16 m = first_lanes(k);
        _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m512i xi = _mm512_maskz_loadu_epi32(m, x + i);
        __m512i a = _mm512_and_si512(xi, mag);
        __m256i h =
            rtz ? _mm512_cvtps_ph(_mm512_castsi512_ps(xi), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
                : _mm512_cvtps_ph(_mm512_castsi512_ps(xi),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __mmask16 isnan = _mm512_mask_cmpgt_epu32_mask(m, a, inf);
        h = _mm256_mask_blend_epi16(isnan, h, hnan);
        __m512i back = _mm512_castps_si512(_mm512_cvtph_ps(h));
        __mmask16 fin = _mm512_mask_cmplt_epu32_mask(m, a, inf);
        __mmask16 ixv = _mm512_mask_cmpneq_epi32_mask(fin, back, xi);
        ix |= ixv;
        of |= _mm512_mask_cmpge_epu32_mask(fin, a, of_at);
        uf |= _mm512_mask_cmplt_epu32_mask(ixv, a, tiny);
        inv |= _mm512_mask_testn_epi32_mask(isnan, a, quiet);
        bool nt = k == 16 && head != SIZE_MAX && i >= head;
        if (p->quant) {
            uint32_t *dst = (uint32_t *)z + i;
            if (nt)
                _mm512_stream_si512((void *)dst, back);
            else
                _mm512_mask_storeu_epi32(dst, m, back);
        } else {
            uint16_t *dst = (uint16_t *)z + i;
            if (nt)
                _mm256_stream_si256((__m256i *)dst, h);
            else
                _mm256_mask_storeu_epi16(dst, m, h);
        }
        i += k;
    }
    return library_flags(ix, uf, of, inv);
}

/* The 64 results R0..R3 (each below 2^8) as bytes, in order: packs with
 * unsigned saturation, which work within 128-bit lanes, then a permute of
 * the dwords back into order (4 instructions where narrowing stores take
 * 11). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
pack_bytes64(__m512i r0, __m512i r1, __m512i r2, __m512i r3)
{
    __m512i b = _mm512_packus_epi16(_mm512_packus_epi32(r0, r1), _mm512_packus_epi32(r2, r3));
    return _mm512_permutexvar_epi32(
        _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), b);
}

/* The 32 results R0, R1 (each below 2^16) as 16-bit words, in order. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i pack_words32(__m512i r0,
                                                                                __m512i r1)
{
    return _mm512_permutexvar_epi64(_mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0),
                                    _mm512_packus_epi32(r0, r1));
}

/* round16 for 16 whole elements under RNE or RTZ, the common case only:
 * right unless a magnitude is above max32, which the lanes' largest
 * magnitudes so far in *TOP tell; the least inexact magnitudes so far
 * are in *LEAST (the inexact and underflow flags at the end). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
round16_common(const round16_consts *c, const uint32_t *x, __m512i *top, __m512i *least)
{
    __m512i xi = _mm512_loadu_si512(x);
    /* one load: gcc folds XI's load into each of its uses, and each then
     * waited for the line from memory */
    __asm__("" : "+v"(xi));
    __m512i a = _mm512_and_si512(xi, c->mag), kv, qv;
    round16_rne_rtz(c, a, &kv, &qv);
    *least = _mm512_mask_min_epu32(*least, _mm512_cmpneq_epi32_mask(qv, a), *least, a);
    *top = _mm512_max_epu32(*top, a);
    /* the magnitude with XI's sign bit, where the result keeps it: (m | (s & b)) */
    return c->k.quant ? _mm512_ternarylogic_epi32(qv, xi, c->sign32, 0xf8)
                      : _mm512_ternarylogic_epi32(kv, _mm512_srli_epi32(xi, c->k.sign_shift),
                                                  c->sign_bit, 0xf8);
}

/* The results for the line of 64 bytes of Z at element I (of SIZE bytes
 * each): round16_common where no element is rare, round16 where one is
 * and under SR. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
round16_line(const round16_consts *c, const uint32_t *x, size_t size, uint64_t ctr, __m512i *least,
             flag_masks *fl)
{
    const int nv = size == 1 ? 4 : size == 2 ? 2 : 1;
    __m512i r[4];
    if (!c->k.sr) {
        __m512i top = _mm512_setzero_si512(), lst = _mm512_set1_epi32(-1);
        for (int v = 0; v < nv; v++)
            r[v] = round16_common(c, x + 16 * v, &top, &lst);
        if (__builtin_expect(_mm512_cmpgt_epu32_mask(top, c->max32) == 0, 1))
            *least = _mm512_min_epu32(*least, lst);
        else
            for (int v = 0; v < nv; v++)
                r[v] = round16(c, x + 16 * v, 0xffff, 0, fl);
    } else
        for (int v = 0; v < nv; v++)
            r[v] = round16(c, x + 16 * v, 0xffff, ctr + 16 * (uint64_t)v, fl);
    return size == 1   ? pack_bytes64(r[0], r[1], r[2], r[3])
           : size == 2 ? pack_words32(r[0], r[1])
                       : r[0];
}

/* Stores the LIVE ones of the 16 results R at element I of Z, SIZE bytes
 * each. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
store16(void *z, size_t i, __m512i r, __mmask16 live, size_t size)
{
    /* (a masked narrowing store costs several times a plain one) */
    bool all = live == 0xffff;
    if (size == 1 && all)
        _mm_storeu_si128((__m128i *)((uint8_t *)z + i), _mm512_cvtepi32_epi8(r));
    else if (size == 1)
        _mm512_mask_cvtepi32_storeu_epi8((uint8_t *)z + i, live, r);
    else if (size == 2 && all)
        _mm256_storeu_si256((__m256i *)((uint16_t *)z + i), _mm512_cvtepi32_epi16(r));
    else if (size == 2)
        _mm512_mask_cvtepi32_storeu_epi16((uint16_t *)z + i, live, r);
    else
        _mm512_mask_storeu_epi32((uint32_t *)z + i, live, r);
}

/* X[0..N-1] into Z under F and MODE (round16), a line of Z at a time with
 * non-temporal stores when STREAM, after the head before its alignment;
 * returns the flags. */
TARGET_AVX512 static inline __attribute__((always_inline)) unsigned
convert_plain(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv_plan *p,
              const uint32_t *x, void *z, size_t n, uint64_t index, bool stream)
{
    const round16_consts c = round16_setup(f, mode, quant, p);
    const size_t size = quant ? 4 : f->width <= 8 ? 1 : f->width <= 16 ? 2 : 4;
    size_t head = stream ? fpki_stream_head(z, size) : 0;
    if (head == SIZE_MAX)
        head = 0, stream = false;
    size_t plain_end = head < n ? head : n, i = 0;
    flag_masks fl = {0, 0, 0, 0};
    for (; i < plain_end; i += 16) {
        __mmask16 live = first_lanes(plain_end - i);
        _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        store16(z, i, round16(&c, x + i, live, index + i, &fl), live, size);
    }
    i = plain_end;
    __m512i least = _mm512_set1_epi32(-1);
    for (const size_t line = 64 / size; n - i >= line; i += line) {
        /* every line a step reads (1, 2 or 4), not the first alone, whose
         * prefetch leaves the others' misses late */
        for (size_t b = 0; b < 4 * line; b += 64)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH + b, _MM_HINT_T1);
        __m512i out = round16_line(&c, x + i, size, index + i, &least, &fl);
        if (stream)
            _mm512_stream_si512((void *)((uint8_t *)z + size * i), out);
        else
            _mm512_storeu_si512((void *)((uint8_t *)z + size * i), out);
    }
    for (; i < n; i += 16) {
        __mmask16 live = first_lanes(n - i);
        store16(z, i, round16(&c, x + i, live, index + i, &fl), live, size);
    }
    fl.ix |= _mm512_cmpneq_epi32_mask(least, _mm512_set1_epi32(-1));
    fl.uf |= _mm512_cmplt_epu32_mask(least, c.tiny);
    return library_flags(fl.ix, fl.uf, fl.of, fl.inv);
}

/* convert_plain with P's format, mode and output each compiled as a
 * constant. */
TARGET_AVX512 static unsigned convert_plain_any(const fpki_conv_plan *p, const uint32_t *x,
                                                void *z, size_t n, uint64_t index, bool stream)
{
#define RUN(f, mode, quant) convert_plain(f, mode, quant, p, x, z, n, index, stream)
    PLAIN_DISPATCH(RUN, p)
#undef RUN
}

/* fpki_convert_fn with AVX-512: plain conversions by convert_plain, fp16
 * with tininess before rounding by F16C, the rest by the portable body. */
TARGET_AVX512 unsigned fpki_convert_avx512(const fpki_conv_plan *p, const uint32_t *x, void *z,
                                           size_t n, uint64_t index, bool stream)
{
    unsigned fl = 0;
    if (fpki_conv_plain(p))
        fl = convert_plain_any(p, x, z, n, index, stream);
    else if (f16c_exact(p))
        fl = p->mode == FPK_RTZ ? convert_f16c(p, x, z, n, stream, true)
                                : convert_f16c(p, x, z, n, stream, false);
    else
        fl = fpki_convert_generic(p, x, z, n, index, stream, store_block_avx512);
    if (stream)
        _mm_sfence();
    return fl;
}

/* fpki_widen_fn with AVX-512: the portable body, which the compiler
 * vectorises for it. */
TARGET_AVX512 void fpki_widen_avx512(fpki_kformat from, const void *x, uint32_t *z, size_t n,
                                     bool daz)
{
    fpki_widen_generic(from, x, z, n, daz);
}
#endif
