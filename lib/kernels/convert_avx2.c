/* The conversion and widening kernels with AVX2 (fpki_convert_fn,
 * fpki_widen_fn): a kernel of their own for the five kernel formats under
 * RNE, RTZ and SR without options (convert_plain, rounding with
 * round-avx2.h), F16C for fp16 with tininess before rounding, and the
 * portable body (convert-body.h), compiled here for AVX2, for the rest.
 *
 * F16C's vcvtps2ph, with the rounding mode in its immediate (so MXCSR's
 * mode, FTZ and DAZ play no part), gives the correctly rounded fp16
 * encoding of every input, NaN payloads included, so only NaNs need
 * fixing up (to the canonical NaN); the flags come from integer compares
 * and the exact round trip vcvtph2ps.  convert_plain is faster where both
 * apply. */
#include "kernel-sets.h"

#if FPKI_X86
#include "round-avx2.h"

/* fpki_store_fn for the portable body: a whole block narrowed, then
 * stored with non-temporal stores when STREAM. */
TARGET_AVX2 static void store_block_avx2(void *z, size_t i, const uint32_t *block, size_t n,
                                         size_t size, bool stream)
{
    if (!stream) {
        fpki_store_plain(z, i, block, n, size);
        return;
    }
    uint32_t t[FPKI_BLOCK] __attribute__((aligned(32)));
    fpki_narrow_block(block, t, size);
    uint8_t *dst = (uint8_t *)z + size * i;
    for (size_t b = 0; b < size * FPKI_BLOCK; b += 32)
        _mm256_stream_si256((__m256i *)(dst + b),
                            _mm256_load_si256((const __m256i *)((const uint8_t *)t + b)));
}

/* Converts X[0..N-1] into fp16 (P without ftz, daz or saturate) with
 * F16C, under RTZ or else RNE, 8 elements at a time; the head before Z's
 * alignment and the tail go through the portable body.  Returns the
 * flags. */
TARGET_AVX2 static inline __attribute__((always_inline)) unsigned
convert_f16c(const fpki_conv_plan *p, const uint32_t *x, void *z, size_t n, bool stream, bool rtz)
{
    size_t width = p->quant ? 4 : 2;
    size_t head = stream ? fpki_stream_head(z, width) : 0;
    if (head == SIZE_MAX)
        head = 0, stream = false;
    if (head > n)
        head = n;
    unsigned fl = fpki_convert_generic(p, x, z, head, 0, false, store_block_avx2);
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i quiet = _mm256_set1_epi32(0x400000), zero = _mm256_setzero_si256();
    const __m256i of_at = _mm256_set1_epi32((int)((rtz ? F16C_OF_RTZ : F16C_OF_RNE) - 1));
    const __m256i tiny =
        _mm256_set1_epi32((int)(p->tiny_before || rtz ? F16C_MIN_NORMAL : F16C_TINY_RNE));
    const __m128i hmag = _mm_set1_epi16(0x7fff), hinf = _mm_set1_epi16(0x7c00);
    const __m128i hnan = _mm_set1_epi16(F16C_NAN);
    __m256i ix = zero, uf = zero, of = zero, inv = zero;
    size_t i = head;
    for (; n - i >= 8; i += 8) {
        if (i % 16 == 0)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m256i xi = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i a = _mm256_and_si256(xi, mag);
        __m128i h =
            rtz ? _mm256_cvtps_ph(_mm256_castsi256_ps(xi), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
                : _mm256_cvtps_ph(_mm256_castsi256_ps(xi),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m128i hnanm = _mm_cmpgt_epi16(_mm_and_si128(h, hmag), hinf);
        h = _mm_blendv_epi8(h, hnan, hnanm);
        __m256i back = _mm256_castps_si256(_mm256_cvtph_ps(h));
        __m256i fin = _mm256_cmpgt_epi32(inf, a), isnan = _mm256_cmpgt_epi32(a, inf);
        __m256i ixv = _mm256_andnot_si256(_mm256_cmpeq_epi32(back, xi), fin);
        ix = _mm256_or_si256(ix, ixv);
        of = _mm256_or_si256(of, _mm256_and_si256(fin, _mm256_cmpgt_epi32(a, of_at)));
        uf = _mm256_or_si256(uf, _mm256_and_si256(ixv, _mm256_cmpgt_epi32(tiny, a)));
        inv = _mm256_or_si256(
            inv, _mm256_and_si256(isnan, _mm256_cmpeq_epi32(_mm256_and_si256(a, quiet), zero)));
        if (p->quant) {
            __m256i *dst = (__m256i *)((uint32_t *)z + i);
            if (stream)
                _mm256_stream_si256(dst, back);
            else
                _mm256_storeu_si256(dst, back);
        } else {
            __m128i *dst = (__m128i *)((uint16_t *)z + i);
            if (stream)
                _mm_stream_si128(dst, h);
            else
                _mm_storeu_si128(dst, h);
        }
    }
    fl |= library_flags(!_mm256_testz_si256(ix, ix), !_mm256_testz_si256(uf, uf),
                        !_mm256_testz_si256(of, of), !_mm256_testz_si256(inv, inv));
    return fl | fpki_convert_generic(p, x + i, (uint8_t *)z + width * i, n - i, 0, false,
                                     store_block_avx2);
}

/* round8 for 8 elements under RNE or RTZ, the common case only: right
 * unless a magnitude is above max32, which the lanes' largest magnitudes
 * so far in *TOP tell; the least inexact magnitudes so far are in *LEAST
 * (exact ones read as all ones; the inexact and underflow flags at the
 * end). */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
round8_common(const round8_consts *c, const uint32_t *x, __m256i *top, __m256i *least)
{
    __m256i xi = _mm256_loadu_si256((const __m256i *)x), a = _mm256_and_si256(xi, c->mag), kv, qv;
    round8_rne_rtz(c, a, &kv, &qv);
    *least = _mm256_min_epu32(*least, _mm256_or_si256(a, _mm256_cmpeq_epi32(qv, a)));
    *top = _mm256_max_epi32(*top, a);
    __m256i s = _mm256_andnot_si256(c->mag, xi);
    return c->k.quant ? _mm256_or_si256(qv, s)
                      : _mm256_or_si256(kv, _mm256_srli_epi32(s, c->k.sign_shift));
}

/* The results for the 32 bytes of output at X (of SIZE bytes each):
 * round8_common where no element is rare, round8 where one is and under
 * SR. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
round8_line(const round8_consts *c, const uint32_t *x, size_t size, uint64_t ctr, __m256i *least,
            flag_masks *fl)
{
    const int nv = size == 1 ? 4 : size == 2 ? 2 : 1;
    __m256i r[4];
    if (!c->k.sr) {
        __m256i top = _mm256_setzero_si256(), lst = _mm256_set1_epi32(-1);
        for (int v = 0; v < nv; v++)
            r[v] = round8_common(c, x + 8 * v, &top, &lst);
        __m256i rare = _mm256_cmpgt_epi32(top, c->max32);
        if (__builtin_expect(_mm256_testz_si256(rare, rare), 1))
            *least = _mm256_min_epu32(*least, lst);
        else
            for (int v = 0; v < nv; v++)
                r[v] = round8(c, x + 8 * v, 0, fl);
    } else
        for (int v = 0; v < nv; v++)
            r[v] = round8(c, x + 8 * v, ctr + 8 * (uint64_t)v, fl);
    /* packs with unsigned saturation (every result fits), which work
     * within 128-bit lanes, then a permute back into order */
    if (size == 1)
        return _mm256_permutevar8x32_epi32(
            _mm256_packus_epi16(_mm256_packus_epi32(r[0], r[1]), _mm256_packus_epi32(r[2], r[3])),
            _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if (size == 2)
        return _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xd8);
    return r[0];
}

/* The N < 64 elements at X into Z (SIZE bytes each) by round8, through a
 * buffer padded with zeros (which raise nothing). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
convert_plain_part(const round8_consts *c, const uint32_t *x, void *z, size_t n, uint64_t ctr,
                   size_t size, flag_masks *fl)
{
    uint32_t in[64], out[64];
    memset(in, 0, sizeof in);
    memcpy(in, x, 4 * n);
    for (size_t i = 0; i < n; i += 8)
        _mm256_storeu_si256((__m256i *)(out + i), round8(c, in + i, ctr + i, fl));
    fpki_store_plain(z, 0, out, n, size);
}

/* X[0..N-1] into Z under F and MODE (round8), a line of Z at a time with
 * non-temporal stores when STREAM, after the head before its alignment;
 * returns the flags. */
TARGET_AVX2 static inline __attribute__((always_inline)) unsigned
convert_plain(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv_plan *p,
              const uint32_t *x, void *z, size_t n, uint64_t index, bool stream)
{
    const round8_consts c = round8_setup(f, mode, quant, p);
    const size_t size = quant ? 4 : f->width <= 8 ? 1 : f->width <= 16 ? 2 : 4;
    const size_t line = 32 / size;
    size_t head = stream ? fpki_stream_head(z, size) : 0;
    if (head == SIZE_MAX)
        head = 0, stream = false;
    if (head > n)
        head = n;
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi32(-1);
    flag_masks fl = {zero, zero, zero, zero};
    if (head)
        convert_plain_part(&c, x, z, head, index, size, &fl);
    size_t i = head;
    __m256i least = ones;
    for (; n - i >= line; i += line) {
        for (size_t b = 0; b < 4 * line; b += 64)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH + b, _MM_HINT_T1);
        __m256i out = round8_line(&c, x + i, size, index + i, &least, &fl);
        __m256i *dst = (__m256i *)((uint8_t *)z + size * i);
        if (stream)
            _mm256_stream_si256(dst, out);
        else
            _mm256_storeu_si256(dst, out);
    }
    if (i < n)
        convert_plain_part(&c, x + i, (uint8_t *)z + size * i, n - i, index + i, size, &fl);
    fl.ix = _mm256_or_si256(fl.ix, _mm256_xor_si256(_mm256_cmpeq_epi32(least, ones), ones));
    fl.uf = _mm256_or_si256(fl.uf, _mm256_xor_si256(cmpge_epu32(least, c.tiny), ones));
    return library_flags(!_mm256_testz_si256(fl.ix, fl.ix), !_mm256_testz_si256(fl.uf, fl.uf),
                         !_mm256_testz_si256(fl.of, fl.of), !_mm256_testz_si256(fl.inv, fl.inv));
}

/* convert_plain with P's format, mode and output each compiled as a
 * constant. */
TARGET_AVX2 static unsigned convert_plain_any(const fpki_conv_plan *p, const uint32_t *x, void *z,
                                              size_t n, uint64_t index, bool stream)
{
#define RUN(f, mode, quant) convert_plain(f, mode, quant, p, x, z, n, index, stream)
    PLAIN_DISPATCH(RUN, p)
#undef RUN
}

/* fpki_convert_fn with AVX2: plain conversions by convert_plain, fp16 with
 * tininess before rounding by F16C, the rest by the portable body. */
TARGET_AVX2 unsigned fpki_convert_avx2(const fpki_conv_plan *p, const uint32_t *x, void *z,
                                       size_t n, uint64_t index, bool stream)
{
    unsigned fl = 0;
    if (fpki_conv_plain(p))
        fl = convert_plain_any(p, x, z, n, index, stream);
    else if (f16c_exact(p))
        fl = p->mode == FPK_RTZ ? convert_f16c(p, x, z, n, stream, true)
                                : convert_f16c(p, x, z, n, stream, false);
    else
        fl = fpki_convert_generic(p, x, z, n, index, stream, store_block_avx2);
    if (stream)
        _mm_sfence();
    return fl;
}

/* fpki_widen_fn with AVX2: the portable body, which the compiler
 * vectorises for it. */
TARGET_AVX2 void fpki_widen_avx2(fpki_kformat from, const void *x, uint32_t *z, size_t n, bool daz)
{
    fpki_widen_generic(from, x, z, n, daz);
}
#endif
