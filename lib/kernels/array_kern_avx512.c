/* The AVX-512 kernel set (F, BW, DQ, VL and CD, with F16C), whatever the
 * build flags.
 *
 * fp16 under RNE and RTZ with tininess before rounding takes F16C's
 * vcvtps2ph, as the AVX2 set does; the integer kernel below is faster for
 * the rest.  AVX512-BF16's vcvtneps2bf16 is not used: it flushes float32
 * subnormal inputs to zero whatever MXCSR says, and the integer kernel
 * rounds bf16 in three operations anyway.
 *
 * The five kernel formats under RNE, RTZ and SR without options have a
 * kernel of their own (near16): integer rounding where the format's
 * exponent range is float32's, the vector unit's rounding with the mode in
 * the instruction elsewhere (SR: the integers everywhere, the hashes eight
 * 64-bit lanes at a time), a line of output at a time, the flags from
 * running minima and overflows, infinities and NaNs only in the lines
 * that hold one.  Under RNE and RTZ the same rounding also feeds the
 * squared errors of fake quantisation (fpki_sqerr_avx512) without storing a
 * result. */
#include <string.h>

#include "array-kern.h"
#include "array-kern-x86.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TARGET_AVX512 \
    __attribute__((target("avx2,bmi,bmi2,f16c,popcnt,avx512f,avx512bw,avx512dq,avx512vl,avx512cd")))

/* The first K of 16 lanes (all 16 when K >= 16), as a mask. */
static inline __attribute__((always_inline)) __mmask16 first_lanes(size_t k)
{
    return k >= 16 ? 0xffff : (__mmask16)((1u << k) - 1);
}

TARGET_AVX512 static void store_avx512(void *z, size_t i, const uint32_t *block, size_t n,
                                       size_t size, bool stream)
{
    if (!stream) {
        fpki_store_plain(z, i, block, n, size);
        return;
    }
    uint32_t t[FPKI_BLOCK] __attribute__((aligned(64)));
    fpki_narrow(block, t, size);
    uint8_t *dst = (uint8_t *)z + size * i;
    for (size_t b = 0; b < size * FPKI_BLOCK; b += 64)
        _mm512_stream_si512((void *)(dst + b),
                            _mm512_load_si512((const void *)((const uint8_t *)t + b)));
}

/* F16C on 16 elements at a time, masked at the ends. */
TARGET_AVX512 static inline __attribute__((always_inline)) unsigned
f16c_avx512(const fpki_conv *p, const uint32_t *x, void *z, size_t n, bool stream, bool rtz)
{
    size_t width = p->quant ? 4 : 2;
    size_t head = stream ? fpki_stream_head(z, width) : SIZE_MAX;
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i quiet = _mm512_set1_epi32(0x400000);
    const __m512i of_at = _mm512_set1_epi32((int)(rtz ? F16C_OF_RTZ : F16C_OF_RNE));
    const __m512i tiny = _mm512_set1_epi32(
        (int)(p->tiny_before || rtz ? F16C_MIN_NORMAL : F16C_TINY_RNE));
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
        __m256i h = rtz ? _mm512_cvtps_ph(_mm512_castsi512_ps(xi),
                                          _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
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
    return kern_flags(ix, uf, of, inv);
}

/* The mixing of fpk_sr_hash, SEED_MIX (the seed mixed) ^ W, for the 8
 * words W (counters times FPKI_SR_GOLDEN plus FPKI_SR_OFFSET), but for
 * its last step: the random bits are the high halves of Z ^ (Z >> 31). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i hash8(__m512i w,
                                                                        __m512i seed_mix)
{
    const __m512i m1 = _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9u);
    const __m512i m2 = _mm512_set1_epi64((long long)0x94d049bb133111ebu);
    __m512i z = _mm512_xor_si512(seed_mix, w);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), m1);
    return _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), m2);
}

/* fpki_sr_bits(seed, CTR + i) in lane i, for 16 counters: the products
 * with the golden ratio by adds, the hashes eight at a time, their high
 * halves gathered by one permute and the last step taken on them (the
 * high half of Z ^ (Z >> 31) is H ^ (H >> 31)). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i rnd16(__m512i seed_mix,
                                                                        uint64_t ctr)
{
    const uint64_t g = FPKI_SR_GOLDEN;
    __m512i w = _mm512_add_epi64(
        _mm512_set1_epi64((long long)(ctr * g + FPKI_SR_OFFSET)),
        _mm512_set_epi64((long long)(7 * g), (long long)(6 * g), (long long)(5 * g),
                         (long long)(4 * g), (long long)(3 * g), (long long)(2 * g),
                         (long long)g, 0));
    __m512i h0 = hash8(w, seed_mix);
    __m512i h1 = hash8(_mm512_add_epi64(w, _mm512_set1_epi64((long long)(8 * g))), seed_mix);
    __m512i hi = _mm512_permutex2var_epi32(
        h0, _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1), h1);
    return _mm512_xor_si512(hi, _mm512_srli_epi32(hi, 31));
}

/* fpki_conv1 for a format F under RNE, RTZ or SR without options, 16
 * elements at a time: near_round rounds under RNE and RTZ, sr16 under SR
 * (in the integers everywhere, as fpki_conv1 does, with the hashes of
 * eight elements at a time).  NEAR_CONSTS holds F's constants, which the
 * compiler folds. */
typedef struct near_consts {
    near_scalars k;
    __m512i mag, inf, low, high, half, one, rebias, min_normal, tiny, maxf, max32, quiet;
    __m512i of_val, inf_val, nan_val, d0_exp, rebias_c;
    __m512i sign32, sign_bit; /* float32's sign bit, the result's after the shift */
    /* SR: the seed, the shift to the random bits used, and F's constants */
    __m512i seed_mix, man, hidden, sub_dd, rebias32, d0v, tiny_away, min_sub32, max_val;
    __m512i sr_shift;
} near_consts;

TARGET_AVX512 static inline __attribute__((always_inline)) near_consts
near_setup(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv *p)
{
    near_consts c;
    const near_scalars k = c.k = near_scalars_of(f, mode, quant);
    c.mag = _mm512_set1_epi32((int)FPKI_F32_MAG);
    c.inf = _mm512_set1_epi32((int)FPKI_F32_INF);
    c.low = _mm512_set1_epi32((int)k.low);
    c.high = _mm512_set1_epi32((int)k.high);
    c.half = _mm512_set1_epi32((int)k.half);
    c.one = _mm512_set1_epi32(1);
    c.rebias = _mm512_set1_epi32((int)k.rebias);
    c.min_normal = _mm512_set1_epi32((int)k.min_normal);
    c.tiny = _mm512_set1_epi32((int)k.tiny);
    c.maxf = _mm512_set1_epi32((int)k.maxf);
    c.max32 = _mm512_set1_epi32((int)k.max32);
    c.quiet = _mm512_set1_epi32((int)FPKI_F32_QUIET);
    c.of_val = _mm512_set1_epi32((int)k.of_val);
    c.inf_val = _mm512_set1_epi32((int)k.inf_val);
    c.nan_val = _mm512_set1_epi32((int)k.nan_val);
    c.d0_exp = _mm512_set1_epi32((int)k.d0_exp);
    c.rebias_c = _mm512_set1_epi32((int)k.rebias_c);
    c.sign32 = _mm512_set1_epi32((int)FPKI_F32_SIGN);
    c.sign_bit = _mm512_set1_epi32((int)k.sign_bit);
    if (k.sr) {
        c.seed_mix = _mm512_set1_epi64((long long)p->seed_mix);
        c.sr_shift = _mm512_set1_epi32(p->sr_shift);
        c.man = _mm512_set1_epi32(0x7fffff);
        c.hidden = _mm512_set1_epi32(0x800000);
        c.sub_dd = _mm512_set1_epi32((int)k.sub_dd);
        c.rebias32 = _mm512_set1_epi32((int)k.rebias32);
        c.d0v = _mm512_set1_epi32(k.d0);
        c.tiny_away = _mm512_set1_epi32((int)k.tiny_away);
        c.min_sub32 = _mm512_set1_epi32((int)k.min_sub32);
        c.max_val = _mm512_set1_epi32((int)k.max_val);
    }
    return c;
}

/* The flags near16 finds, as masks of elements. */
typedef struct near_flags {
    __mmask16 ix, uf, of, inv;
} near_flags;

/* Stochastic rounding of the 16 magnitudes A (signs S), the first with
 * counter CTR, as fpki_conv1 rounds them. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
sr16(const near_consts *c, __m512i a, __m512i s, uint64_t ctr, near_flags *fl)
{
    const __m512i one = c->one, thirty_two = _mm512_set1_epi32(32);
    __m512i rnd = rnd16(c->seed_mix, ctr);
    /* D bits of V go (DD before it is clamped to 31); FRAC: the top 32
     * bits of the fraction of an ulp they make */
    __m512i kept, disc, frac, dd = c->d0v;
    if (!c->k.subs) {
        kept = _mm512_srli_epi32(a, (unsigned)c->k.d0);
        disc = _mm512_and_si512(a, c->low);
        frac = _mm512_slli_epi32(disc, (unsigned)(32 - c->k.d0));
    } else {
        __m512i ef = _mm512_srli_epi32(a, 23), man = _mm512_and_si512(a, c->man);
        __mmask16 sub = _mm512_cmplt_epu32_mask(a, c->min_normal);
        __m512i sig = _mm512_mask_or_epi32(man, _mm512_test_epi32_mask(ef, ef), man, c->hidden);
        dd = _mm512_mask_sub_epi32(dd, sub, c->sub_dd, _mm512_max_epu32(ef, one));
        __m512i d = _mm512_min_epu32(dd, _mm512_set1_epi32(31));
        __m512i v = _mm512_mask_mov_epi32(_mm512_sub_epi32(a, c->rebias32), sub, sig);
        kept = _mm512_srlv_epi32(v, d);
        disc = _mm512_and_si512(v, _mm512_sub_epi32(_mm512_sllv_epi32(one, d), one));
        frac = _mm512_srlv_epi32(sig, _mm512_sub_epi32(dd, thirty_two));
        frac = _mm512_mask_sllv_epi32(frac, _mm512_cmplt_epu32_mask(dd, thirty_two), disc,
                                      _mm512_sub_epi32(thirty_two, dd));
    }
    __mmask16 inexact = _mm512_test_epi32_mask(disc, disc);
    __mmask16 inc = _mm512_mask_cmplt_epu32_mask(inexact, _mm512_srlv_epi32(rnd, c->sr_shift),
                                                 _mm512_srlv_epi32(frac, c->sr_shift));
    __m512i k = _mm512_mask_add_epi32(kept, inc, kept, one), r;
    if (c->k.quant) {
        /* the value: A with the discarded bits cleared and the increment
         * added, or below F's grid (DD > 23) zero or the least subnormal */
        __m512i up = _mm512_maskz_mov_epi32(inc, one);
        r = _mm512_sllv_epi32(_mm512_add_epi32(_mm512_srlv_epi32(a, dd), up), dd);
        if (c->k.subs)
            r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(dd, _mm512_set1_epi32(23)),
                                      _mm512_maskz_mov_epi32(inc, c->min_sub32));
        r = _mm512_or_si512(r, s);
    } else {
        r = _mm512_or_si512(k, _mm512_srli_epi32(s, c->k.sign_shift));
    }
    fl->uf |= _mm512_mask_cmplt_epu32_mask(inexact & inc, a, c->tiny_away) |
              _mm512_mask_cmplt_epu32_mask((__mmask16)(inexact & ~inc), a, c->min_normal);
    __mmask16 rare = _mm512_cmpgt_epu32_mask(a, c->max32);
    if (__builtin_expect(rare != 0, 0)) {
        __m512i sv = c->k.quant ? s : _mm512_srli_epi32(s, c->k.sign_shift);
        __mmask16 special = _mm512_mask_cmpge_epu32_mask(rare, a, c->inf);
        __mmask16 of = _mm512_mask_cmpgt_epu32_mask((__mmask16)(rare & ~special), k, c->maxf);
        /* up, or exact: to infinity; else to max finite */
        __mmask16 to_inf = (__mmask16)(of & (inc | ~inexact));
        __mmask16 isinf = _mm512_mask_cmpeq_epi32_mask(special, a, c->inf);
        __mmask16 isnan = (__mmask16)(special & ~isinf);
        __m512i inf_val = c->k.inf_enc ? _mm512_or_si512(c->inf_val, sv) : c->inf_val;
        inexact &= (__mmask16)~special;
        fl->of |= of;
        if (!c->k.inf_enc)
            fl->inv |= isinf;
        fl->inv |= _mm512_mask_testn_epi32_mask(isnan, a, c->quiet);
        r = _mm512_mask_mov_epi32(r, (__mmask16)(of & ~to_inf), _mm512_or_si512(c->max_val, sv));
        r = _mm512_mask_mov_epi32(r, (__mmask16)(to_inf | isinf), inf_val);
        r = _mm512_mask_mov_epi32(r, isnan, c->nan_val);
    }
    fl->ix |= inexact;
    return r;
}

/* The 64 results R0..R3 (each below 2^8) as bytes, in order: packs with
 * unsigned saturation, which work within 128-bit lanes, then a permute of
 * the dwords back into order (4 instructions where narrowing stores take
 * 11). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i near_pack8(__m512i r0,
                                                                             __m512i r1,
                                                                             __m512i r2,
                                                                             __m512i r3)
{
    __m512i b = _mm512_packus_epi16(_mm512_packus_epi32(r0, r1), _mm512_packus_epi32(r2, r3));
    return _mm512_permutexvar_epi32(
        _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), b);
}

/* The 32 results R0, R1 (each below 2^16) as 16-bit words, in order. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i near_pack16(__m512i r0,
                                                                              __m512i r1)
{
    return _mm512_permutexvar_epi64(_mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0),
                                    _mm512_packus_epi32(r0, r1));
}

/* Rounds the 16 magnitudes A under RNE or RTZ: *K gets the encodings'
 * magnitudes, *Q their values as float32 (both right where A is at most
 * max32, the largest finite value).  Where F's exponent range is
 * float32's, in the integers: half an ulp less one, plus the kept part's
 * last bit, carries (RNE).  Else the vector unit rounds: adding C, the
 * power of two whose ulp is F's ulp at |x| (2^(e + d0) for the exponent
 * e of max(|x|, F's least normal)), rounds |x| onto F's grid under the
 * mode in the instruction (MXCSR's mode plays no part, and DAZ cannot
 * matter: a float32 subnormal is far below half of F's least subnormal).
 * The sum less C is then exact, the value; the sum's bits less C's count
 * F's ulps, n = 2^m + fraction, which the exponent's bits (C's shifted
 * down) turn into the encoding, a carry into the next binade included. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
near_round(const near_consts *c, __m512i a, __m512i *k, __m512i *q)
{
    if (c->k.subs) {
        /* (A's exponent bits first, the same for every format: two
         * formats rounding A in one loop share them) */
        __m512i cv = _mm512_add_epi32(
            _mm512_max_epu32(_mm512_and_si512(a, c->inf), c->min_normal), c->d0_exp);
        __m512 cf = _mm512_castsi512_ps(cv);
        /* (the rounding operand must be a literal, whatever the optimiser does) */
        __m512 sum = c->k.rne ? _mm512_add_round_ps(_mm512_castsi512_ps(a), cf,
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                            : _mm512_add_round_ps(_mm512_castsi512_ps(a), cf,
                                                  _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        __m512i n = _mm512_sub_epi32(_mm512_castps_si512(sum), cv);
        *k = _mm512_add_epi32(n, _mm512_sub_epi32(_mm512_srli_epi32(cv, (unsigned)c->k.d0),
                                                  c->rebias_c));
        *q = _mm512_castps_si512(_mm512_sub_ps(sum, cf));
        return;
    }
    __m512i t = a;
    if (c->k.rne)
        t = _mm512_add_epi32(_mm512_add_epi32(a, c->half),
                             _mm512_and_si512(_mm512_srli_epi32(a, (unsigned)c->k.d0), c->one));
    *k = _mm512_sub_epi32(_mm512_srli_epi32(t, (unsigned)c->k.d0), c->rebias);
    *q = _mm512_and_si512(t, c->high);
}

/* The results of the LIVE ones of the 16 elements at X, the first with SR
 * counter CTR. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
near16(const near_consts *c, const uint32_t *x, __mmask16 live, uint64_t ctr, near_flags *fl)
{
    __m512i xi = _mm512_maskz_loadu_epi32(live, x);
    __m512i a = _mm512_and_si512(xi, c->mag), s = _mm512_andnot_si512(c->mag, xi);
    if (c->k.sr)
        return sr16(c, a, s, ctr, fl);
    __m512i kv, qv;
    near_round(c, a, &kv, &qv);
    __mmask16 inexact = _mm512_cmpneq_epi32_mask(qv, a);
    fl->uf |= _mm512_mask_cmplt_epu32_mask(inexact, a, c->tiny);
    __m512i sv = c->k.quant ? s : _mm512_srli_epi32(s, c->k.sign_shift);
    __m512i r = _mm512_or_si512(c->k.quant ? qv : kv, sv);
    /* Overflows, infinities and NaNs (all above max finite; padding lanes
     * are zeros), seldom: their results replace the others. */
    __mmask16 rare = _mm512_cmpgt_epu32_mask(a, c->max32);
    if (__builtin_expect(rare != 0, 0)) {
        __mmask16 special = _mm512_mask_cmpge_epu32_mask(rare, a, c->inf);
        __mmask16 of = _mm512_mask_cmpgt_epu32_mask((__mmask16)(rare & ~special), kv, c->maxf);
        __mmask16 isinf = _mm512_mask_cmpeq_epi32_mask(special, a, c->inf);
        __mmask16 isnan = (__mmask16)(special & ~isinf);
        inexact &= (__mmask16)~special;
        fl->of |= of;
        if (!c->k.inf_enc)
            fl->inv |= isinf;
        fl->inv |= _mm512_mask_testn_epi32_mask(isnan, a, c->quiet);
        r = _mm512_mask_mov_epi32(r, of,
                                  c->k.of_signed ? _mm512_or_si512(c->of_val, sv) : c->of_val);
        r = _mm512_mask_mov_epi32(r, isinf,
                                  c->k.inf_enc ? _mm512_or_si512(c->inf_val, sv) : c->inf_val);
        r = _mm512_mask_mov_epi32(r, isnan, c->nan_val);
    }
    fl->ix |= inexact;
    return r;
}

/* near16 for 16 whole elements under RNE or RTZ, the common case only:
 * right unless a magnitude is above max32, which the lanes' largest
 * magnitudes so far in *TOP tell; the least inexact magnitudes so far
 * are in *LEAST (the inexact and underflow flags at the end). */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
near16_common(const near_consts *c, const uint32_t *x, __m512i *top, __m512i *least)
{
    __m512i xi = _mm512_loadu_si512(x);
    /* one load: gcc folds XI's load into each of its uses, and each then
     * waited for the line from memory (RTZ into bf16 read it three times,
     * at 3.8 Gelem/s; 6.4 so) */
    __asm__("" : "+v"(xi));
    __m512i a = _mm512_and_si512(xi, c->mag), kv, qv;
    near_round(c, a, &kv, &qv);
    *least = _mm512_mask_min_epu32(*least, _mm512_cmpneq_epi32_mask(qv, a), *least, a);
    *top = _mm512_max_epu32(*top, a);
    /* the magnitude with XI's sign bit, where the result keeps it: (m | (s & b)) */
    return c->k.quant ? _mm512_ternarylogic_epi32(qv, xi, c->sign32, 0xf8)
                    : _mm512_ternarylogic_epi32(kv, _mm512_srli_epi32(xi, c->k.sign_shift),
                                                c->sign_bit, 0xf8);
}

/* The results for the line of 64 bytes of Z at element I (of SIZE bytes
 * each): near16_common where no element is rare, near16 where one is
 * and under SR. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
near_line(const near_consts *c, const uint32_t *x, size_t size, uint64_t ctr, __m512i *least,
          near_flags *fl)
{
    const int nv = size == 1 ? 4 : size == 2 ? 2 : 1;
    __m512i r[4];
    if (!c->k.sr) {
        __m512i top = _mm512_setzero_si512(), lst = _mm512_set1_epi32(-1);
        for (int v = 0; v < nv; v++)
            r[v] = near16_common(c, x + 16 * v, &top, &lst);
        if (__builtin_expect(_mm512_cmpgt_epu32_mask(top, c->max32) == 0, 1))
            *least = _mm512_min_epu32(*least, lst);
        else
            for (int v = 0; v < nv; v++)
                r[v] = near16(c, x + 16 * v, 0xffff, 0, fl);
    } else
        for (int v = 0; v < nv; v++)
            r[v] = near16(c, x + 16 * v, 0xffff, ctr + 16 * (uint64_t)v, fl);
    return size == 1 ? near_pack8(r[0], r[1], r[2], r[3])
           : size == 2 ? near_pack16(r[0], r[1])
                       : r[0];
}

/* Stores the LIVE ones of the 16 results R at element I of Z, SIZE bytes
 * each. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
near_store(void *z, size_t i, __m512i r, __mmask16 live, size_t size)
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

/* X[0..N-1] into Z under F and MODE (near16), a line of Z at a time with
 * non-temporal stores when STREAM, after the head before its alignment;
 * returns the flags. */
TARGET_AVX512 static inline __attribute__((always_inline)) unsigned
near_avx512(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv *p,
            const uint32_t *x, void *z, size_t n, uint64_t index, bool stream)
{
    const near_consts c = near_setup(f, mode, quant, p);
    const size_t size = quant ? 4 : f->width <= 8 ? 1 : f->width <= 16 ? 2 : 4;
    size_t head = stream ? fpki_stream_head(z, size) : 0;
    if (head == SIZE_MAX)
        head = 0, stream = false;
    size_t plain_end = head < n ? head : n, i = 0;
    near_flags fl = {0, 0, 0, 0};
    for (; i < plain_end; i += 16) {
        __mmask16 live = first_lanes(plain_end - i);
        _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        near_store(z, i, near16(&c, x + i, live, index + i, &fl), live, size);
    }
    i = plain_end;
    __m512i least = _mm512_set1_epi32(-1);
    for (const size_t line = 64 / size; n - i >= line; i += line) {
        /* every line a step reads (1, 2 or 4), not the first alone:
         * fp16 2.0-2.2 -> 2.2-2.6 Gelem/s streamed */
        for (size_t b = 0; b < 4 * line; b += 64)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH + b, _MM_HINT_T1);
        __m512i out = near_line(&c, x + i, size, index + i, &least, &fl);
        if (stream)
            _mm512_stream_si512((void *)((uint8_t *)z + size * i), out);
        else
            _mm512_storeu_si512((void *)((uint8_t *)z + size * i), out);
    }
    for (; i < n; i += 16) {
        __mmask16 live = first_lanes(n - i);
        near_store(z, i, near16(&c, x + i, live, index + i, &fl), live, size);
    }
    fl.ix |= _mm512_cmpneq_epi32_mask(least, _mm512_set1_epi32(-1));
    fl.uf |= _mm512_cmplt_epu32_mask(least, c.tiny);
    return kern_flags(fl.ix, fl.uf, fl.of, fl.inv);
}

TARGET_AVX512 static unsigned near_any(const fpki_conv *p, const uint32_t *x, void *z, size_t n,
                                       uint64_t index, bool stream)
{
#define RUN(f, mode, quant) near_avx512(f, mode, quant, p, x, z, n, index, stream)
    NEAR_DISPATCH(RUN, p)
#undef RUN
}

TARGET_AVX512 unsigned fpki_conv_avx512(const fpki_conv *p, const uint32_t *x, void *z,
                                          size_t n, uint64_t index, bool stream)
{
    unsigned fl = 0;
    if (near_plain(p))
        fl = near_any(p, x, z, n, index, stream);
    else if (f16c_exact(p))
        fl = p->mode == FPK_RTZ ? f16c_avx512(p, x, z, n, stream, true)
                                : f16c_avx512(p, x, z, n, stream, false);
    else
        fl = fpki_conv_any(p, x, z, n, index, stream, store_avx512);
    if (stream)
        _mm_sfence();
    return fl;
}

TARGET_AVX512 void fpki_widen_avx512(fpk_dtype t, const void *x, uint32_t *z, size_t n,
                                       bool daz)
{
    fpki_widen_any(t, x, z, n, daz);
}

/* The exponent histogram under AVX-512, for the nonzero elements a
 * block packs together: each element's exponent field e, when in the
 * window [base, base + 63], sets bit e - base - 32w of a one-hot vector
 * for half w of the window, and carry-save adders (Harley and Seal's) sum
 * sixteen such vectors at a time into bitsliced counters: bit j of lane l
 * of plane p is bit p of how many of lane l's elements set bit j.  The
 * groups that may hold elements outside the window (from blocks whose
 * range leaves it) count those one at a time. */
#define EH_PLANES 40
#define EH_GROUP 256 /* elements a group of adders sums */

typedef struct ehist {
    __m512i plane[2][EH_PLANES];
    uint32_t base; /* 0 until the first nonzero element chose it */
    int nplanes;
} ehist;

#define EH_CSA(hi, lo, a, b)                                                   \
    do {                                                                       \
        __m512i a_ = (a), b_ = (b);                                            \
        hi = _mm512_ternarylogic_epi32(lo, a_, b_, 0xe8); /* majority */       \
        lo = _mm512_ternarylogic_epi32(lo, a_, b_, 0x96); /* parity */         \
    } while (0)

/* Adds C, of weight 2^P, to half W's counters. */
TARGET_AVX512 static inline __attribute__((always_inline)) void eh_carry(ehist *h, int w, int p,
                                                                         __m512i c)
{
    for (; _mm512_test_epi32_mask(c, c); p++) {
        __m512i t = _mm512_and_si512(h->plane[w][p], c);
        h->plane[w][p] = _mm512_xor_si512(h->plane[w][p], c);
        c = t;
    }
    if (p > h->nplanes)
        h->nplanes = p;
}

/* The one-hot vectors of the 16 elements V for both halves, and (CHECK)
 * in *OUT those of them (of LIVE) outside the window. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
eh_onehot(__m512i v, bool sign, __m512i b0, __m512i b1, bool check, __mmask16 live, __m512i *h0,
          __m512i *h1, __mmask16 *out)
{
    const __m512i one = _mm512_set1_epi32(1);
    if (sign)
        v = _mm512_and_si512(v, _mm512_set1_epi32(0x7fffffff));
    __m512i e = _mm512_srli_epi32(v, 23), d = _mm512_sub_epi32(e, b0);
    *h0 = _mm512_sllv_epi32(one, d); /* counts past 31 give 0 */
    *h1 = _mm512_sllv_epi32(one, _mm512_sub_epi32(e, b1));
    if (check)
        *out = _mm512_mask_cmpge_epu32_mask(live, d, _mm512_set1_epi32(EH_WINDOW));
}

/* The 16 elements at P, of which VALID are there (TAIL) or all. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i eh_load(const uint32_t *p,
                                                                          ptrdiff_t valid,
                                                                          bool tail)
{
    if (!tail)
        return _mm512_loadu_si512(p);
    __mmask16 t = first_lanes(valid > 0 ? (size_t)valid : 0);
    return _mm512_maskz_loadu_epi32(t, p); /* zeros: outside the window */
}

/* Which of the 16 elements at P, of which VALID are there (TAIL) or all,
 * are there. */
static inline __mmask16 eh_live(ptrdiff_t valid, bool tail)
{
    return tail ? first_lanes(valid > 0 ? (size_t)valid : 0) : 0xffff;
}

/* Counts the exponents of 256 elements at NZ (magnitudes, or encodings
 * when SIGN), of which VALID are there when TAIL.  When CHECK, some may lie
 * outside the window, which the adders leave out: the compares that find
 * them are kept a vector, and those vectors' ones counted into HIST one at
 * a time.  (Where a separate pass looked for them in every block that had
 * some, it took 11% of the statistics' time on gradients of a wide
 * range.) */
TARGET_AVX512 static inline __attribute__((always_inline)) void
eh_group(ehist *h, const uint32_t *nz, ptrdiff_t valid, bool sign, bool tail, bool check,
         uint64_t *hist)
{
    const __m512i b0 = _mm512_set1_epi32((int)h->base), b1 = _mm512_set1_epi32((int)h->base + 32);
    __m512i x0, x1, y0, y1;
    __mmask16 out[EH_GROUP / 16] = {0};
#define EH_PAIR(k, t0, t1)                                                                   \
    do {                                                                                     \
        eh_onehot(eh_load(nz + 16 * (k), valid - 16 * (k), tail), sign, b0, b1, check,       \
                  eh_live(valid - 16 * (k), tail), &x0, &x1, &out[k]);                       \
        eh_onehot(eh_load(nz + 16 * (k) + 16, valid - 16 * (k) - 16, tail), sign, b0, b1,    \
                  check, eh_live(valid - 16 * (k) - 16, tail), &y0, &y1, &out[(k) + 1]);     \
        EH_CSA(t0, ones0, x0, y0);                                                           \
        EH_CSA(t1, ones1, x1, y1);                                                           \
    } while (0)
    EH_ADDERS(__m512i, EH_CSA, EH_PAIR, eh_carry, h);
#undef EH_PAIR
    for (int k = 0; check && k < EH_GROUP / 16; k++)
        for (__mmask16 o = out[k]; o; o &= (__mmask16)(o - 1))
            hist[(nz[16 * k + __builtin_ctz(o)] & 0x7fffffffu) >> 23]++;
}

/* eh_group, with CHECK known only at run time. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
eh_add(ehist *h, const uint32_t *nz, ptrdiff_t valid, bool sign, bool tail, bool check,
       uint64_t *hist)
{
    if (check)
        eh_group(h, nz, valid, sign, tail, true, hist);
    else
        eh_group(h, nz, valid, sign, tail, false, hist);
}

/* Adds the counters into HIST: each half's 16 lanes summed into lane 0
 * first, by bitsliced adds of lanes R.. onto lanes 0.. (R = 8, 4, 2, 1),
 * then its bits read out (one lane's, not sixteen's: a piece's flush took
 * 9% of the statistics' time; and by masked adds, not bit by bit: 1% of
 * fpgrad's). */
TARGET_AVX512 static void eh_flush(const ehist *h, uint64_t *hist)
{
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int w = 0; w < 2; w++) {
        __m512i pl[EH_PLANES + 4];
        int np = h->nplanes;
        for (int p = 0; p < np; p++)
            pl[p] = h->plane[w][p];
        for (int r = 8; r >= 1; r /= 2) {
            const __m512i from = _mm512_add_epi32(lane, _mm512_set1_epi32(r));
            __m512i carry = _mm512_setzero_si512();
            for (int p = 0; p < np; p++) { /* (lanes past 15 wrap round: not read) */
                __m512i b = _mm512_permutexvar_epi32(from, pl[p]);
                __m512i sum = _mm512_ternarylogic_epi32(pl[p], b, carry, 0x96);
                carry = _mm512_ternarylogic_epi32(pl[p], b, carry, 0xe8);
                pl[p] = sum;
            }
            pl[np++] = carry;
        }
        /* bit j of plane p adds 2^p to field base + 32 w + j (which the
         * window keeps below 256), eight fields a masked add */
        uint64_t *half = hist + h->base + 32 * w;
        __m512i count[4];
        for (int k = 0; k < 4; k++)
            count[k] = _mm512_setzero_si512();
        for (int p = 0; p < np; p++) {
            uint32_t b = (uint32_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(pl[p]));
            const __m512i weight = _mm512_set1_epi64((long long)(UINT64_C(1) << p));
            for (int k = 0; k < 4; k++)
                count[k] =
                    _mm512_mask_add_epi64(count[k], (__mmask8)(b >> 8 * k), count[k], weight);
        }
        for (int k = 0; k < 4; k++)
            _mm512_storeu_si512(half + 8 * k,
                                _mm512_add_epi64(_mm512_loadu_si512(half + 8 * k), count[k]));
    }
}

/* C[q] = how many of the M elements at V (and padding to a whole vector)
 * are below KEY[q], for q < NK; meanwhile the lines from PF up to PF_END
 * are prefetched, one a step. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
count_below(const uint32_t *v, size_t m, const uint32_t *key, int nk, uint32_t *c,
            const char *pf, const char *pf_end)
{
    const __m512i minus1 = _mm512_set1_epi32(-1);
    __m512i kv[8], cv[8];
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++) {
        kv[q] = _mm512_set1_epi32((int)key[q]);
        cv[q] = _mm512_setzero_si512();
    }
    for (size_t r = 0; r < m; r += 16) {
        __m512i x = _mm512_loadu_si512(v + r);
        if (pf < pf_end) {
            _mm_prefetch(pf, _MM_HINT_T1);
            pf += 64;
        }
#pragma GCC unroll 8
        for (int q = 0; q < nk; q++)
            cv[q] = _mm512_mask_sub_epi32(cv[q], _mm512_cmplt_epu32_mask(x, kv[q]), cv[q], minus1);
    }
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++)
        c[q] = (uint32_t)_mm512_reduce_add_epi32(cv[q]);
}

/* The first pass over the LEN elements at X (all 16 at a time when FULL):
 * their largest magnitude in TOP, least nonzero one in LEAST, -0's
 * counted when SIGN, and (POW2 not NULL, not SIGN) the nonzero ones that
 * are powers of two (mantissa 0) noted in *POW2; the nonzero ones
 * (magnitudes, or encodings when SIGN) packed at BZ, and their number
 * returned. */
TARGET_AVX512 static inline __attribute__((always_inline)) size_t
first_pass(const uint32_t *x, size_t len, bool sign, bool full, uint32_t *bz, __m512i *top,
           __m512i *least, uint32_t *neg_zeros, __mmask16 *pow2)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), man = _mm512_set1_epi32(0x7fffff);
    size_t m = 0;
    if (full && !sign) {
        /* two vectors a step, with extremes of their own: 2x as fast on
         * Zen 5 as one a step (where the loop ran at 7 cycles) */
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

typedef struct sq_job sq_job;
static bool sq_fits(const sq_job *q, size_t len);
static uint32_t *sq_room(sq_job *q, size_t len, sq_ahead *pf);
static void sq_added(sq_job *q, size_t m, uint32_t least, uint32_t top);

/* The elements of HIST's exponent fields below J (at most 256), eight
 * fields an add (every call sums up to 255 fields a key, twice). */
TARGET_AVX512 static uint64_t hist_below(const uint64_t *hist, uint32_t j)
{
    __m512i sum = _mm512_setzero_si512();
    uint32_t e = 0;
    for (; e + 8 <= j; e += 8)
        sum = _mm512_add_epi64(sum, _mm512_loadu_si512(hist + e));
    __mmask8 rest = (__mmask8)((1u << (j - e)) - 1);
    sum = _mm512_add_epi64(sum, _mm512_maskz_loadu_epi64(rest, hist + e));
    return (uint64_t)_mm512_reduce_add_epi64(sum);
}

/* Keys the histogram decides, with no compare an element (magnitudes
 * only): below 2^j are the elements whose exponent field is below j
 * (zeros and subnormals in field 0), and below 2^j + 1 ulp those and the
 * ones equal to 2^j, which the first pass notices.  Under RNE those are
 * the thresholds of rounding to zero; under RTZ and SR, every key. */
typedef struct hist_keys {
    uint64_t is;                    /* bit k: key k is one (the first 64, which
                                       without the sign are all) */
    uint64_t before[FPKI_MAX_KEYS]; /* hist_below its field, on entry */
    uint64_t equal[FPKI_MAX_KEYS];  /* elements equal to 2^j, so far */
} hist_keys;

static void hist_keys_start(hist_keys *h, const fpki_skeys *keys, const fpki_sacc *acc)
{
    h->is = 0;
    for (int k = 0; !keys->sign && k < keys->n && k < 64; k++) {
        uint32_t key = keys->key[k];
        if (key >> 23 && key <= FPKI_F32_INF && (key & 0x7fffff) <= 1) {
            h->is |= UINT64_C(1) << k;
            h->before[k] = hist_below(acc->hist, key >> 23);
            h->equal[k] = 0;
        }
    }
}

/* Adds to each key 2^j + 1 ulp in [LEAST, TOP] the M elements at BZ
 * equal to 2^j (a vector of padding after them). */
TARGET_AVX512 static void hist_keys_equal(hist_keys *h, const fpki_skeys *keys,
                                          const uint32_t *bz, size_t m, uint32_t least,
                                          uint32_t top)
{
    for (uint64_t is = h->is; is; is &= is - 1) {
        int k = __builtin_ctzll(is);
        uint32_t p = keys->key[k] - 1;
        if (!(keys->key[k] & 1) || p < least || p > top)
            continue;
        const __m512i pv = _mm512_set1_epi32((int)p);
        for (size_t r = 0; r < m; r += 16)
            h->equal[k] += (uint64_t)__builtin_popcount(
                _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(bz + r), pv));
    }
}

static void hist_keys_finish(const hist_keys *h, const fpki_skeys *keys, fpki_sacc *acc)
{
    for (uint64_t is = h->is; is; is &= is - 1) {
        int k = __builtin_ctzll(is);
        acc->below[k] += hist_below(acc->hist, keys->key[k] >> 23) - h->before[k] + h->equal[k];
    }
}

/* The statistics with AVX-512: as fpki_stats_any, but the zeros (half of
 * many gradients, after a ReLU) are left out at once, the other elements
 * packed together (vpcompressd) for the keys, where each key's count is a
 * masked add (but for hist_keys), and for the histogram of carry-save
 * adders above.  The first pass keeps only running extremes (float32
 * subnormals are there when the least nonzero magnitude is one);
 * infinities and NaNs, seen in the largest, take a second look.  (SQ not
 * NULL: each block's nonzero magnitudes go on to its buffer.) */
TARGET_AVX512 static inline __attribute__((always_inline)) void
stats_body(const fpki_skeys *keys, const uint32_t *x, size_t n, fpki_sacc *acc, sq_job *sq)
{
    hist_keys hk;
    hist_keys_start(&hk, keys, acc);
    ehist eh;
    memset(&eh, 0, sizeof eh);
    eh.nplanes = 4;
    /* The histogram's leftovers (fewer than a group), then a block's
     * nonzero elements and a vector of padding. */
    uint32_t nz[EH_GROUP + FPKI_SBLOCK + 16] __attribute__((aligned(64)));
    const uint32_t *pend = nz;
    size_t left = 0;
    bool pend_out = false; /* whether those may lie outside the window */
    const bool sign = keys->sign;
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i minus1 = _mm512_set1_epi32(-1);
    for (size_t i0 = 0; i0 < n; i0 += FPKI_SBLOCK) {
        size_t len = n - i0 < FPKI_SBLOCK ? n - i0 : FPKI_SBLOCK, m = 0;
        /* the block's: after the histogram's leftovers, or in SQ's buffer
         * (its lines asked for, should the buffer be summed first) */
        uint32_t *bz = nz + left;
        if (sq) {
            sq_ahead pf = {(const char *)(x + i0), (const char *)(x + i0 + len)};
            if (pend != nz && !sq_fits(sq, len)) { /* the buffer is about to be summed */
                memcpy(nz, pend, 4 * left);
                pend = nz;
            }
            bz = sq_room(sq, len, &pf);
        }
        __m512i top = _mm512_setzero_si512(), least = minus1;
        uint32_t neg_zeros = 0;
        __mmask16 pow2 = 0;
        if (len == FPKI_SBLOCK && !sign)
            m = first_pass(x + i0, len, false, true, bz, &top, &least, &neg_zeros, &pow2);
        else if (sign)
            m = first_pass(x + i0, len, true, false, bz, &top, &least, &neg_zeros, NULL);
        else
            m = first_pass(x + i0, len, false, false, bz, &top, &least, &neg_zeros, &pow2);
        uint32_t block_max = _mm512_reduce_max_epu32(top);
        uint32_t block_least = _mm512_reduce_min_epu32(least); /* all ones: no nonzero */
        if (sq)
            sq_added(sq, m, block_least, block_max);
        /* Padding above every key, so that whole vectors can be read. */
        _mm512_storeu_si512(bz + m, minus1);
        if (pow2)
            hist_keys_equal(&hk, keys, bz, m, block_least, block_max);
        uint32_t zeros = (uint32_t)(len - m), nonzero_finite = (uint32_t)m;
        uint32_t block_lo = block_least - 1;
        uint32_t top_exp = block_max >> 23, lo_exp = (block_lo + 1) >> 23;
        bool any_sub = block_lo < 0x7fffffu;
        if (block_max >= FPKI_F32_INF) { /* seldom: the finite ones' largest, and count */
            __m512i fin_max = _mm512_setzero_si512();
            for (size_t r = 0; r < m; r += 16) {
                __mmask16 t = first_lanes(m - r);
                __m512i a = _mm512_and_si512(_mm512_loadu_si512(bz + r), mag);
                __mmask16 fin = _mm512_mask_cmplt_epu32_mask(t, a, inf);
                nonzero_finite -= (uint32_t)__builtin_popcount((__mmask16)(t & ~fin));
                fin_max = _mm512_mask_max_epu32(fin_max, fin, fin_max, a);
            }
            block_max = _mm512_reduce_max_epu32(fin_max);
        }
        if (block_max > acc->amax)
            acc->amax = block_max;
        acc->hist[0] += zeros;
        if (m && !eh.base)
            eh.base = eh_window_base(block_max);
        /* whether the block's may lie outside the window, and so whether
         * the groups that take them, or those pending, look for such */
        bool block_out = m && (lo_exp < eh.base || top_exp >= eh.base + EH_WINDOW);
        bool check = block_out || pend_out;
        /* Keys: the zeros below each, then the rest, decided by the
         * block's range or counted up to eight at a time. */
        uint32_t active[FPKI_MAX_KEYS];
        int na = 0;
        for (int k = 0; k < keys->n; k++) {
            uint32_t key = keys->key[k];
            if (k < 64 && hk.is >> k & 1)
                continue;
            acc->below[k] += zeros - (sign && key <= 0x80000000u ? neg_zeros : 0);
            if (!sign && key <= block_lo + 1)
                continue; /* no nonzero element is below */
            if (!sign && key > block_max && key <= 0x7f800000u)
                acc->below[k] += nonzero_finite; /* every nonzero finite one is */
            else
                active[na++] = (uint32_t)k;
        }
        /* The next block's lines that the first pass has not asked for,
         * asked for while the keys are counted (memory would idle). */
        const char *pf = (const char *)(x + i0 + len) + FPKI_PREFETCH;
        const char *pf_end =
            (const char *)(x + (n - i0 - len < FPKI_SBLOCK ? n : i0 + len + FPKI_SBLOCK));
        for (int j = 0; j < na; j += 8, pf = pf_end) {
            uint32_t k[8], c[8];
            int nk = na - j < 8 ? na - j : 8;
            for (int q = 0; q < nk; q++)
                k[q] = keys->key[active[j + q]];
            switch (nk) { /* a loop for each count, its counters in registers */
#define COUNT_CASE(K)                                                                      \
    case K: count_below(bz, m, k, K, c, pf, pf_end); break;
                COUNT_CASE(1) COUNT_CASE(2) COUNT_CASE(3) COUNT_CASE(4)
                COUNT_CASE(5) COUNT_CASE(6) COUNT_CASE(7) default: COUNT_CASE(8)
#undef COUNT_CASE
            }
            for (int q = 0; q < nk; q++)
                acc->below[active[j + q]] += c[q];
        }
        for (; !na && pf < pf_end; pf += 64) /* (no keys counted to ask for them meanwhile) */
            _mm_prefetch(pf, _MM_HINT_T1);
        for (size_t r = 0; any_sub && r < m; r += 16) {
            __m512i a = _mm512_and_si512(_mm512_loadu_si512(bz + r), mag);
            for (unsigned s = _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(0x800000)); s;
                 s &= s - 1) {
                size_t q = r + (size_t)__builtin_ctz(s);
                if (q < m)
                    acc->subnormal[31 - __builtin_clz(bz[q] & 0x7fffffffu)]++;
            }
        }
        /* The histogram, whole groups at a time; the rest waits for more
         * at PEND: in NZ, or where it lies in SQ's buffer, right before the
         * next block's (moved to NZ only when the buffer is to be summed;
         * the leftovers in NZ topped up to a group first). */
        size_t r = 0;
        /* (the leftovers: the block's alone once a group has taken the
         * older ones) */
        pend_out = check;
        if (bz == nz + left || pend + left == bz) {
            const uint32_t *from = pend;
            size_t have = left + m;
            for (; r + EH_GROUP <= have; r += EH_GROUP) {
                eh_add(&eh, from + r, EH_GROUP, sign, false, check, acc->hist);
                pend_out = block_out;
            }
            left = have - r;
            if (pend == nz)
                memmove(nz, nz + r, 4 * left);
            else
                pend = from + r;
            continue;
        }
        if (left) {
            r = m < EH_GROUP - left ? m : EH_GROUP - left;
            memcpy(nz + left, bz, 4 * r);
            left += r;
            if (left < EH_GROUP)
                continue; /* (the whole block taken) */
            eh_add(&eh, nz, EH_GROUP, sign, false, check, acc->hist);
        }
        for (; r + EH_GROUP <= m; r += EH_GROUP)
            eh_add(&eh, bz + r, EH_GROUP, sign, false, block_out, acc->hist);
        left = m - r;
        pend = bz + r;
        pend_out = block_out;
    }
    if (left)
        eh_add(&eh, pend, (ptrdiff_t)left, sign, true, pend_out, acc->hist);
    if (eh.base)
        eh_flush(&eh, acc->hist);
    hist_keys_finish(&hk, keys, acc);
}

TARGET_AVX512 void fpki_stats_avx512(const fpki_skeys *keys, const uint32_t *x, size_t n,
                                       fpki_sacc *acc)
{
    stats_body(keys, x, n, acc, NULL);
}

/* fpki_srfix_any, 16 elements at a time.  An element rounded away from
 * zero crosses the class boundaries c with away[c] <= |x| < tz[c], which
 * are consecutive: from its RTZ class to its away one, one at a time.  So
 * per boundary, vector compares find the elements that may cross it, and
 * only vectors holding some compute the rule (hash and discarded
 * fraction); per lane counters count the crossings. */
TARGET_AVX512 void fpki_srfix_avx512(const fpki_srkeys *k, const uint32_t *x, size_t n,
                                       uint64_t index, int64_t (*delta)[4])
{
    const __m512i mag = _mm512_set1_epi32((int)FPKI_F32_MAG), one = _mm512_set1_epi32(1);
    const __m512i man = _mm512_set1_epi32(0x7fffff), hidden = _mm512_set1_epi32(0x800000);
    const __m512i thirty_two = _mm512_set1_epi32(32);
    const __m512i seed_mix = _mm512_set1_epi64((long long)fpki_mix64(0));
    const __m512i lsb_exp = _mm512_set1_epi32(k->k - 150);
    __m512i crossed[FPK_STATS_MAX_FORMATS][3];
    for (int j = 0; j < k->n; j++)
        for (int c = 0; c < 3; c++)
            crossed[j][c] = _mm512_setzero_si512();
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 live = first_lanes(n - i);
        /* zeros, infinities and NaNs lie in no range: away[0] > 0 */
        __m512i raw = _mm512_maskz_loadu_epi32(live, x + i), a = _mm512_and_si512(raw, mag);
        __mmask16 may[FPK_STATS_MAX_FORMATS][3], any = 0;
        for (int j = 0; j < k->n; j++) {
            __m512i v = _mm512_and_si512(raw, _mm512_set1_epi32((int)k->mask[j]));
            for (int c = 0; c < 3; c++) {
                may[j][c] = _mm512_mask_cmplt_epu32_mask(
                    _mm512_cmpge_epu32_mask(v, _mm512_set1_epi32((int)k->away[j][c])), v,
                    _mm512_set1_epi32((int)k->tz[j][c]));
                any |= may[j][c];
            }
        }
        if (!any)
            continue;
        __m512i rnd = rnd16(seed_mix, index + i);
        /* |x| = sig * 2^e0 (times the scale), its top bit at TOP */
        __m512i ef = _mm512_srli_epi32(a, 23);
        __mmask16 normal = _mm512_test_epi32_mask(ef, ef);
        __m512i sig = _mm512_mask_or_epi32(a, normal, _mm512_and_si512(a, man), hidden);
        __m512i e0 = _mm512_add_epi32(_mm512_max_epi32(ef, one), lsb_exp);
        __m512i top = _mm512_sub_epi32(_mm512_add_epi32(e0, _mm512_set1_epi32(31)),
                                       _mm512_lzcnt_epi32(sig));
        for (int j = 0; j < k->n; j++) {
            __mmask16 mine = may[j][0] | may[j][1] | may[j][2];
            if (!mine)
                continue;
            /* d bits discarded: the low d moved to the top when d <= 32,
             * else shifted down (counts of 32 or more give zeros) */
            __m512i d = _mm512_sub_epi32(
                _mm512_max_epi32(top, _mm512_set1_epi32(k->emin[j])),
                _mm512_add_epi32(e0, _mm512_set1_epi32(k->man_bits[j])));
            __m512i low = _mm512_sub_epi32(_mm512_sllv_epi32(one, d), one);
            __m512i frac = _mm512_srlv_epi32(sig, _mm512_sub_epi32(d, thirty_two));
            frac = _mm512_mask_sllv_epi32(frac, _mm512_cmple_epi32_mask(d, thirty_two),
                                          _mm512_and_si512(sig, low),
                                          _mm512_sub_epi32(thirty_two, d));
            __mmask16 inexact = _mm512_cmpgt_epi32_mask(d, _mm512_setzero_si512());
            __mmask16 away = _mm512_mask_cmplt_epu32_mask(mine & inexact, rnd, frac);
            for (int c = 0; c < 3; c++)
                crossed[j][c] = _mm512_mask_add_epi32(crossed[j][c], away & may[j][c],
                                                      crossed[j][c], one);
        }
    }
    for (int j = 0; j < k->n; j++)
        for (int c = 0; c < 3; c++) {
            int64_t m = (int64_t)(uint32_t)_mm512_reduce_add_epi32(crossed[j][c]);
            delta[j][c] -= m;
            delta[j][c + 1] += m;
        }
}

/* The squared errors of the lanes in COUNTED of the float32 elements XV
 * and their results YV (as fpki_lanes_any adds them) into SX and SE. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sq16(__m512 xv, __m512 yv, __mmask16 counted, bool want_x2, __m512d *sx, __m512d *se)
{
    __m512 xk = _mm512_maskz_mov_ps(counted, xv), yk = _mm512_maskz_mov_ps(counted, yv);
    __m512d xl = _mm512_cvtps_pd(_mm512_castps512_ps256(xk));
    __m512d xh = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xk), 1)));
    __m512d el = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(yk)), xl);
    __m512d eh = _mm512_sub_pd(
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(yk), 1))), xh);
    if (want_x2) {
        sx[0] = _mm512_add_pd(sx[0], _mm512_mul_pd(xl, xl));
        sx[1] = _mm512_add_pd(sx[1], _mm512_mul_pd(xh, xh));
    }
    se[0] = _mm512_add_pd(se[0], _mm512_mul_pd(el, el));
    se[1] = _mm512_add_pd(se[1], _mm512_mul_pd(eh, eh));
}

/* The lanes counted among the 16 elements XV and their results YV:
 * nonzero finite elements with finite results. */
TARGET_AVX512 static inline __attribute__((always_inline)) __mmask16 sq16_counted(__m512 xv,
                                                                                  __m512 yv)
{
    const __m512i mag = _mm512_set1_epi32((int)FPKI_F32_MAG);
    const __m512i inf = _mm512_set1_epi32((int)FPKI_F32_INF);
    __m512i ax = _mm512_and_si512(_mm512_castps_si512(xv), mag);
    __m512i ay = _mm512_and_si512(_mm512_castps_si512(yv), mag);
    return _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ax, _mm512_set1_epi32(1)),
                                   _mm512_sub_epi32(inf, _mm512_set1_epi32(1))) &
           _mm512_cmplt_epu32_mask(ay, inf);
}

TARGET_AVX512 static inline __attribute__((always_inline)) void
lanes_load(const double *x2, const double *e2, __m512d *sx, __m512d *se)
{
    sx[0] = sx[1] = se[0] = se[1] = _mm512_setzero_pd();
    if (x2)
        sx[0] = _mm512_loadu_pd(x2), sx[1] = _mm512_loadu_pd(x2 + 8);
    if (e2)
        se[0] = _mm512_loadu_pd(e2), se[1] = _mm512_loadu_pd(e2 + 8);
}

TARGET_AVX512 static inline __attribute__((always_inline)) void
lanes_store(double *x2, double *e2, const __m512d *sx, const __m512d *se)
{
    if (x2)
        _mm512_storeu_pd(x2, sx[0]), _mm512_storeu_pd(x2 + 8, sx[1]);
    if (e2)
        _mm512_storeu_pd(e2, se[0]), _mm512_storeu_pd(e2 + 8, se[1]);
}

/* fpki_lanes_fn with AVX-512: the nonzero elements of SQ_BLOCK and their
 * results packed (vpcompressd) behind the fewer than 16 left from the
 * last block, then summed 16 at a time. */
TARGET_AVX512 unsigned fpki_lanes_avx512(const float *x, const float *y, size_t n,
                                           unsigned lane, double *x2, double *e2)
{
    __m512d sx[2], se[2];
    lanes_load(x2, e2, sx, se);
    float xp[SQ_BLOCK + 32] __attribute__((aligned(64)));
    float yp[SQ_BLOCK + 32] __attribute__((aligned(64)));
    _mm512_store_ps(xp, _mm512_setzero_ps()); /* lanes before LANE: zeros, which add nothing */
    _mm512_store_ps(yp, _mm512_setzero_ps());
    const __m512i mag = _mm512_set1_epi32((int)FPKI_F32_MAG);
    size_t left = lane;
    for (size_t i0 = 0; i0 < n; i0 += SQ_BLOCK) {
        size_t len = n - i0 < SQ_BLOCK ? n - i0 : SQ_BLOCK, m = left;
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
        sq_ahead px = sq_next_block(x, n, i0), py = sq_next_block(y, n, i0);
        for (size_t r = 0; r < whole; r += 16) {
            sq_prefetch(&px);
            sq_prefetch(&py);
            __m512 xt = _mm512_load_ps(xp + r), yt = _mm512_load_ps(yp + r);
            sq16(xt, yt, sq16_counted(xt, yt), x2 != NULL, sx, se);
        }
        left = m - whole;
        _mm512_store_ps(xp, _mm512_loadu_ps(xp + whole));
        _mm512_store_ps(yp, _mm512_loadu_ps(yp + whole));
    }
    if (left) {
        __m512 xt = _mm512_maskz_load_ps(first_lanes(left), xp);
        __m512 yt = _mm512_maskz_load_ps(first_lanes(left), yp);
        sq16(xt, yt, sq16_counted(xt, yt), x2 != NULL, sx, se);
    }
    lanes_store(x2, e2, sx, se);
    return (unsigned)left;
}

/* The lanes of the squared errors' sums: X2's, then E2's. */
typedef struct sq_lanes {
    __m512d x[2], e[2];
} sq_lanes;

/* S with the LIVE ones of the 16 elements at X rounded as near16 rounds
 * them (any element) and their squared errors added, masked: the tail,
 * out of line, one copy for every format (S by value, so that the
 * caller's sums stay in registers). */
TARGET_AVX512 static __attribute__((noinline)) sq_lanes
sqerr_masked(const near_consts *c, const uint32_t *x, __mmask16 live, bool want_x2, sq_lanes s,
             near_flags *fl)
{
    __m512 yv = _mm512_castsi512_ps(near16(c, x, live, 0, fl));
    __m512 xv = _mm512_maskz_loadu_ps(live, x);
    sq16(xv, yv, sq16_counted(xv, yv), want_x2, s.x, s.e);
    return s;
}

/* One format's squared errors between blocks: its lanes and flags, and
 * whether it has raised the inexact flag and the underflow flag, after
 * which rounding can raise no flag that counts (but on an overflow). */
typedef struct sq_state {
    sq_lanes s;
    near_flags fl;
    bool inexact, underflow;
} sq_state;

/* Whether ST, whose format's scalars are K, has no flag left to find in
 * magnitudes from LEAST to TOP: none above max32 (no overflow), and
 * inexact raised, and underflow too unless none is tiny. */
static inline bool sq_flagless(const near_scalars *k, const sq_state *st, uint32_t least,
                               uint32_t top)
{
    return top <= k->max32 && st->inexact && (st->underflow || least >= k->tiny);
}

/* LANE's two sums of eight plus the squares of the 16 float32 values V,
 * exact in double (so that fused multiply-adds give the same sums). */
TARGET_AVX512 static inline __attribute__((always_inline)) void sq_square16(__m512 v,
                                                                            __m512d *lane)
{
    __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    lane[0] = _mm512_fmadd_pd(lo, lo, lane[0]);
    lane[1] = _mm512_fmadd_pd(hi, hi, lane[1]);
}

/* S with the squared errors of the 16 magnitudes A, none above max32, and
 * their results Q: each error is exact in float32 (Q is zero or within a
 * factor of two of A), so its square is exact in double. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sq_exact16(__m512i a, __m512i q, bool want_x2, sq_lanes *s)
{
    __m512 af = _mm512_castsi512_ps(a);
    sq_square16(_mm512_sub_ps(_mm512_castsi512_ps(q), af), s->e);
    if (want_x2)
        sq_square16(af, s->x);
}

/* Adds to *ST F's squared errors under MODE (RNE or RTZ, no options) of
 * the M nonzero magnitudes at NZ (M a multiple of 16), all in [LEAST,
 * TOP], and of the TAIL lanes of the 16 after them (X2 too, if WANT_X2).
 * Where none of 16 is above max32 every result is finite, so the 16 are
 * summed unmasked (sq_exact16); near16 and masked sums take the others,
 * sqerr_masked the tail.  Where none is above max32 and the flags the
 * rounding could raise are raised already (none is tiny, or the
 * underflow flag is), the loop only rounds and sums. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sq_run(const fpk_format *f, fpk_round mode, bool want_x2, const fpki_conv *p, sq_state *st,
       const uint32_t *nz, size_t m, uint32_t least, uint32_t top, __mmask16 tail,
       sq_ahead *pf)
{
    const near_consts c = near_setup(f, mode, true, p);
    sq_ahead ahead = sq_ahead_take(pf);
    sq_lanes s = st->s;
    near_flags fl = st->fl;
    if (sq_flagless(&c.k, st, least, top)) {
        for (size_t r = 0; r < m; r += 16) {
            sq_prefetch(&ahead);
            __m512i a = _mm512_loadu_si512(nz + r), kv, qv;
            near_round(&c, a, &kv, &qv);
            sq_exact16(a, qv, want_x2, &s);
        }
        m = 0;
    }
    __m512i inexact_least = _mm512_set1_epi32(-1);
    for (size_t r = 0; r < m; r += 16) {
        sq_prefetch(&ahead);
        __m512i a = _mm512_loadu_si512(nz + r);
        if (__builtin_expect(_mm512_cmpgt_epu32_mask(a, c.max32) != 0, 0)) {
            __m512 xv = _mm512_castsi512_ps(a);
            __m512 yv = _mm512_castsi512_ps(near16(&c, nz + r, 0xffff, 0, &fl));
            sq16(xv, yv, sq16_counted(xv, yv), want_x2, s.x, s.e);
            continue;
        }
        __m512i kv, qv;
        near_round(&c, a, &kv, &qv);
        inexact_least = _mm512_mask_min_epu32(inexact_least, _mm512_cmpneq_epi32_mask(qv, a),
                                              inexact_least, a);
        sq_exact16(a, qv, want_x2, &s);
    }
    if (tail)
        s = sqerr_masked(&c, nz + m, tail, want_x2, s, &fl);
    fl.ix |= _mm512_cmpneq_epi32_mask(inexact_least, _mm512_set1_epi32(-1));
    fl.uf |= _mm512_cmplt_epu32_mask(inexact_least, c.tiny);
    sq_ahead_put(pf, ahead);
    st->s = s;
    st->fl = fl;
    st->inexact |= fl.ix != 0 || fl.of != 0;
    st->underflow |= fl.uf != 0;
}

TARGET_AVX512 static inline __attribute__((always_inline)) void
sq_fmt(const fpk_format *f, const fpki_conv *p, bool want_x2, sq_state *st, const uint32_t *nz,
       size_t m, uint32_t least, uint32_t top, __mmask16 tail, sq_ahead *pf)
{
    if (p->mode == FPK_RNE) {
        if (want_x2)
            sq_run(f, FPK_RNE, true, p, st, nz, m, least, top, tail, pf);
        else
            sq_run(f, FPK_RNE, false, p, st, nz, m, least, top, tail, pf);
    } else {
        if (want_x2)
            sq_run(f, FPK_RTZ, true, p, st, nz, m, least, top, tail, pf);
        else
            sq_run(f, FPK_RTZ, false, p, st, nz, m, least, top, tail, pf);
    }
}

TARGET_AVX512 static void sq_block(const fpki_conv *p, bool want_x2, sq_state *st,
                                   const uint32_t *nz, size_t m, uint32_t least, uint32_t top,
                                   __mmask16 tail, sq_ahead *pf)
{
    switch (p->fmt) {
    case FPKI_K_FP16: sq_fmt(&fpki_k_fp16, p, want_x2, st, nz, m, least, top, tail, pf); break;
    case FPKI_K_BF16: sq_fmt(&fpki_k_bf16, p, want_x2, st, nz, m, least, top, tail, pf); break;
    case FPKI_K_TF32: sq_fmt(&fpki_k_tf32, p, want_x2, st, nz, m, least, top, tail, pf); break;
    case FPKI_K_E4M3: sq_fmt(&fpki_k_e4m3, p, want_x2, st, nz, m, least, top, tail, pf); break;
    default: sq_fmt(&fpki_k_e5m2, p, want_x2, st, nz, m, least, top, tail, pf); break;
    }
}

/* The kernel format FMT's descriptor. */
static const fpk_format *kern_format(int fmt)
{
    switch (fmt) {
    case FPKI_K_FP16: return &fpki_k_fp16;
    case FPKI_K_BF16: return &fpki_k_bf16;
    case FPKI_K_TF32: return &fpki_k_tf32;
    case FPKI_K_E4M3: return &fpki_k_e4m3;
    default: return &fpki_k_e5m2;
    }
}

/* LANE's two sums of eight plus the squares of the 16 float32 values at
 * P, converted to double from memory: where the upper eight are taken
 * from a register (vextractf64x4), the shuffle competes with the
 * conversions and the sums for the vector unit. */
TARGET_AVX512 static inline __attribute__((always_inline)) void sq_square_at(const float *p,
                                                                             __m512d *lane)
{
    __m512d lo = _mm512_cvtps_pd(_mm256_loadu_ps(p));
    __m512d hi = _mm512_cvtps_pd(_mm256_loadu_ps(p + 8));
    lane[0] = _mm512_fmadd_pd(lo, lo, lane[0]);
    lane[1] = _mm512_fmadd_pd(hi, hi, lane[1]);
}

/* Up to SQ_GROUP formats' squared errors in one loop, where sq_run would
 * take its flagless loop for each and each rounds in the vector unit
 * (sq_vector): the magnitudes are loaded once, one prefetch check serves
 * all, and the sums of all are in flight.  Each step stores its errors,
 * and the next step converts them to double from there (sq_square_at).
 * The formats' constants are set up at run time, so that one loop serves
 * every group of NK; only NK, the mode (RNE or RTZ) and WANT_X2 are
 * compiled in.  Adds to ST[j]'s lanes the squared errors of the M
 * magnitudes at NZ (M a multiple of 16) under P[j], and to ST[0]'s their
 * squares when WANT_X2.  (For fp16, bf16, e4m3, e5m2 and the squares:
 * 12% less time than two loops of two that took the errors' upper halves
 * from registers.) */
#define SQ_GROUP 4
TARGET_AVX512 static inline __attribute__((always_inline)) void
sq_group_loop(int nk, bool rne, bool want_x2, const fpki_conv *p, sq_state *st,
              const uint32_t *nz, size_t m, sq_ahead *pf)
{
    near_consts c[SQ_GROUP];
    __m512d e[SQ_GROUP][2], x[2] = {st[0].s.x[0], st[0].s.x[1]};
#pragma GCC unroll 4
    for (int j = 0; j < nk; j++) {
        c[j] = near_setup(kern_format(p[j].fmt), p[j].mode, true, &p[j]);
        c[j].k.subs = true, c[j].k.rne = rne;
        e[j][0] = st[j].s.e[0], e[j][1] = st[j].s.e[1];
    }
    float err[2][SQ_GROUP][16] __attribute__((aligned(64))); /* a step's, and the one before's */
    sq_ahead ahead = sq_ahead_take(pf);
    for (size_t r = 0; r < m; r += 16) {
        sq_prefetch(&ahead);
        __m512i a = _mm512_loadu_si512(nz + r), kv, qv;
        float(*now)[16] = err[r / 16 % 2], (*before)[16] = err[(r / 16 + 1) % 2];
#pragma GCC unroll 4
        for (int j = 0; j < nk; j++) {
            near_round(&c[j], a, &kv, &qv);
            _mm512_store_ps(now[j],
                            _mm512_sub_ps(_mm512_castsi512_ps(qv), _mm512_castsi512_ps(a)));
        }
        if (want_x2)
            sq_square_at((const float *)(nz + r), x);
#pragma GCC unroll 4
        for (int j = 0; r && j < nk; j++)
            sq_square_at(before[j], e[j]);
    }
#pragma GCC unroll 4
    for (int j = 0; m && j < nk; j++)
        sq_square_at(err[(m / 16 + 1) % 2][j], e[j]);
    sq_ahead_put(pf, ahead);
#pragma GCC unroll 4
    for (int j = 0; j < nk; j++)
        st[j].s.e[0] = e[j][0], st[j].s.e[1] = e[j][1];
    st[0].s.x[0] = x[0], st[0].s.x[1] = x[1];
}

/* Whether near_round may round magnitudes up to TOP in the vector unit for
 * a format of scalars K: always where its exponent range is narrower than
 * float32's; else (bfloat16, tf32) where C, 2^(e + d0), is finite.  (The
 * vector unit sees float32 subnormals here: the kernels run with DAZ off,
 * in the default environment.) */
static bool sq_vector(const near_scalars *k, uint32_t top)
{
    return k->subs || (top >> 23) + (uint32_t)k->d0 < 255;
}

/* sq_block for the first formats of P[0..NF-1] (M magnitudes, no tail) in
 * one loop, X2 with the first when WANT_X2: as many as SQ_GROUP, which
 * share P[0]'s mode, have no flag left to find (sq_flagless) and round in
 * the vector unit; returns how many, 0 when nothing was done. */
TARGET_AVX512 static int sq_group(const fpki_conv *p, int nf, bool want_x2, sq_state *st,
                                  const uint32_t *nz, size_t m, uint32_t least, uint32_t top,
                                  sq_ahead *pf)
{
    int nk = 0;
    for (; nk < nf && nk < SQ_GROUP && p[nk].mode == p[0].mode; nk++) {
        near_scalars k = near_scalars_of(kern_format(p[nk].fmt), p[nk].mode, true);
        if (!sq_flagless(&k, &st[nk], least, top) || !sq_vector(&k, top))
            break;
    }
    bool rne = p[0].mode == FPK_RNE;
#define SQ_GROUP_CASE(n)                                                                   \
    case n:                                                                                \
        if (rne)                                                                           \
            want_x2 ? sq_group_loop(n, true, true, p, st, nz, m, pf)                       \
                    : sq_group_loop(n, true, false, p, st, nz, m, pf);                     \
        else                                                                               \
            want_x2 ? sq_group_loop(n, false, true, p, st, nz, m, pf)                      \
                    : sq_group_loop(n, false, false, p, st, nz, m, pf);                    \
        break;
    switch (nk) {
        SQ_GROUP_CASE(1) SQ_GROUP_CASE(2) SQ_GROUP_CASE(3) SQ_GROUP_CASE(4)
    }
#undef SQ_GROUP_CASE
    return nk;
}

/* Squared errors over nonzero magnitudes packed as they come, a block at a
 * time, into a buffer of SQ_BUF: each format sums the whole vectors of 16
 * there in one loop (few loops: each call of one costs about as much as
 * 30 vectors), and the fewer than 16 left wait at the buffer's start for
 * the next magnitudes, so that the k-th nonzero element of the call goes
 * to lane k % 16 whatever the blocks. */
#define SQ_BUF 8192
struct sq_job {
    const fpki_conv *p;
    int nf;
    bool want_x2;
    sq_state st[FPKI_SQ_FORMATS];
    size_t n;            /* magnitudes in BUF */
    uint32_t least, top; /* bounds on them */
    uint32_t buf[SQ_BUF + 16] __attribute__((aligned(64))); /* (a vector of slack) */
};

/* Whether P[0..NF-1] have kernels here: RNE or RTZ without options. */
static bool sq_plannable(const fpki_conv *p, int nf)
{
    for (int j = 0; j < nf; j++)
        if (!near_plain(&p[j]) || !p[j].quant || (p[j].mode != FPK_RNE && p[j].mode != FPK_RTZ))
            return false;
    return true;
}

TARGET_AVX512 static void sq_start(sq_job *q, const fpki_conv *p, int nf, const double *x2,
                                   const double *e2, const unsigned *flags)
{
    q->p = p;
    q->nf = nf;
    q->want_x2 = x2 != NULL;
    for (int j = 0; j < nf; j++) {
        lanes_load(j ? NULL : x2, e2 + FPK_LANES * j, q->st[j].s.x, q->st[j].s.e);
        q->st[j].fl = (near_flags){0, 0, 0, 0};
        q->st[j].inexact = flags[j] & FPK_INEXACT;
        q->st[j].underflow = flags[j] & FPK_UNDERFLOW;
    }
    q->n = 0;
    q->least = UINT32_MAX;
    q->top = 0;
}

/* The magnitudes at the start of a buffer that each format rounds on its
 * own, looking for flags, when a flag not yet raised is all that keeps
 * one out of sq_group's loops (a call's first buffer, unless its caller
 * raised them): the rest of the buffer can then take those loops. */
#define SQ_PROBE 512

/* Whether a format of Q's, none of whose magnitudes overflow, has a flag
 * left to find. */
static bool sq_flags_wanted(const sq_job *q)
{
    for (int j = 0; j < q->nf; j++) {
        near_scalars k = near_scalars_of(kern_format(q->p[j].fmt), q->p[j].mode, true);
        if (q->top <= k.max32 && !sq_flagless(&k, &q->st[j], q->least, q->top))
            return true;
    }
    return false;
}

/* Sums the whole vectors in Q's buffer, the rest moved to its start (PF:
 * lines to prefetch meanwhile, or NULL). */
TARGET_AVX512 static void sq_flush(sq_job *q, sq_ahead *pf)
{
    size_t whole = q->n & ~(size_t)15, rest = q->n - whole;
    if (!whole)
        return;
    const uint32_t *nz = q->buf;
    size_t m = whole;
    if (m > SQ_PROBE && sq_flags_wanted(q)) {
        for (int j = 0; j < q->nf; j++)
            sq_block(&q->p[j], j == 0 && q->want_x2, &q->st[j], nz, SQ_PROBE, q->least, q->top,
                     0, pf);
        nz += SQ_PROBE, m -= SQ_PROBE;
    }
    for (int j = 0, done; j < q->nf; j += done) {
        bool x2 = j == 0 && q->want_x2;
        done = sq_group(&q->p[j], q->nf - j, x2, &q->st[j], nz, m, q->least, q->top, pf);
        if (!done) {
            sq_block(&q->p[j], x2, &q->st[j], nz, m, q->least, q->top, 0, pf);
            done = 1;
        }
    }
    memcpy(q->buf, q->buf + whole, 4 * rest);
    q->n = rest;
    if (!rest)
        q->least = UINT32_MAX, q->top = 0;
}

/* Whether LEN more magnitudes fit in Q's buffer as it is (else sq_room
 * sums it first). */
static bool sq_fits(const sq_job *q, size_t len)
{
    return q->n + len <= SQ_BUF;
}

/* The place for up to LEN more magnitudes (LEN <= SQ_BUF - 15), and a
 * vector of slack after them, at the end of Q's buffer. */
TARGET_AVX512 static uint32_t *sq_room(sq_job *q, size_t len, sq_ahead *pf)
{
    if (!sq_fits(q, len))
        sq_flush(q, pf);
    return q->buf + q->n;
}

/* The M magnitudes written at sq_room's place, all in [LEAST, TOP]. */
static void sq_added(sq_job *q, size_t m, uint32_t least, uint32_t top)
{
    q->n += m;
    q->least = least < q->least ? least : q->least;
    q->top = top > q->top ? top : q->top;
}

/* Sums what Q's buffer holds (the last fewer than 16 masked), then Q's
 * lanes into X2 and E2 and its flags into FLAGS. */
TARGET_AVX512 static void sq_finish(sq_job *q, double *x2, double *e2, unsigned *flags)
{
    sq_flush(q, NULL);
    for (int j = 0; j < q->nf; j++) {
        if (q->n)
            sq_block(&q->p[j], j == 0 && q->want_x2, &q->st[j], q->buf, 0, q->least, q->top,
                     first_lanes(q->n), NULL);
        lanes_store(j ? NULL : x2, e2 + FPK_LANES * j, q->st[j].s.x, q->st[j].s.e);
        near_flags fl = q->st[j].fl;
        flags[j] |= kern_flags(fl.ix, fl.uf, fl.of, fl.inv);
    }
}

/* fpki_sqerr_fn with AVX-512, for formats under RNE or RTZ without
 * options: the nonzero magnitudes of SQ_BLOCK elements packed
 * (vpcompressd: zeros add nothing and raise nothing, and the signs
 * change no square) into the job's buffer, whose each format sums 16 at
 * a time once it is full (FLAGS[j] on entry: the flags raised already,
 * not looked for again where nothing else can be raised). */
TARGET_AVX512 bool fpki_sqerr_avx512(const fpki_conv *p, int nf, const uint32_t *x, size_t n,
                                       double *x2, double *e2, unsigned *flags)
{
    if (!sq_plannable(p, nf))
        return false;
    sq_job q;
    sq_start(&q, p, nf, x2, e2, flags);
    for (size_t i0 = 0; i0 < n; i0 += SQ_BLOCK) {
        size_t len = n - i0 < SQ_BLOCK ? n - i0 : SQ_BLOCK;
        /* this block's lines asked for while the buffer is summed */
        sq_ahead pf = {(const char *)(x + i0), (const char *)(x + i0 + len)};
        uint32_t *nz = sq_room(&q, len, &pf);
        __m512i top = _mm512_setzero_si512(), least = _mm512_set1_epi32(-1);
        uint32_t neg_zeros = 0;
        size_t m = len == SQ_BLOCK
                       ? first_pass(x + i0, len, false, true, nz, &top, &least, &neg_zeros, NULL)
                       : first_pass(x + i0, len, false, false, nz, &top, &least, &neg_zeros, NULL);
        sq_added(&q, m, _mm512_reduce_min_epu32(least), _mm512_reduce_max_epu32(top));
    }
    sq_finish(&q, x2, e2, flags);
    return true;
}

/* fpki_stats_sqerr_fn with AVX-512: the statistics' packing feeds the
 * squared errors too. */
TARGET_AVX512 bool fpki_stats_sqerr_avx512(const fpki_skeys *keys, const uint32_t *x, size_t n,
                                             fpki_sacc *acc, const fpki_conv *p, int nf,
                                             double *x2, double *e2, unsigned *flags)
{
    if (keys->sign || !sq_plannable(p, nf))
        return false;
    sq_job q;
    sq_start(&q, p, nf, x2, e2, flags);
    stats_body(keys, x, n, acc, &q);
    sq_finish(&q, x2, e2, flags);
    return true;
}

/* MX scaling's kernels (fpki_mxmax_fn, fpki_mxdown_fn, fpki_mxup_fn),
 * 16 elements at a time, the last ones masked. */
TARGET_AVX512 uint64_t fpki_mxmax_avx512(const uint32_t *x, size_t n)
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

TARGET_AVX512 bool fpki_mxdown_avx512(const fpki_mxspan *s, const uint32_t *x, uint32_t *xs,
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
        __m512i v = _mm512_or_si512(_mm512_andnot_si512(mag, b),
                                    _mm512_maskz_sub_epi32(keep, a, shift));
        __mmask16 o = _mm512_mask_cmpgt_epu32_mask(keep, _mm512_sub_epi32(a, lo), span);
        odd_bits[i / 8] = (uint8_t)o;
        odd_bits[i / 8 + 1] = (uint8_t)(o >> 8);
        odd |= o;
        _mm512_mask_storeu_epi32(xs + i, t, v);
    }
    return odd != 0;
}

TARGET_AVX512 bool fpki_mxup_avx512(const fpki_mxspan *s, const uint32_t *q, const uint32_t *xs,
                                      uint32_t *y, size_t n, uint32_t counts[2])
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
