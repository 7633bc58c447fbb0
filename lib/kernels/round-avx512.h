/* Rounding float32 into a kernel format without options (a plain
 * conversion) under RNE, RTZ or SR, 16 elements at a time with AVX-512:
 * the core of the conversion kernel (convert_avx512.c) and of the squared
 * errors of fake quantisation (quantize_sqerr_avx512.c), bit for bit what
 * fpki_round_one gives. */
#ifndef FPKIT_ROUND_AVX512_H
#define FPKIT_ROUND_AVX512_H

#include "avx512-util.h"
#include "convert-x86.h"

/* fpki_round_one for a format F under RNE, RTZ or SR without options, 16
 * elements at a time: round16_rne_rtz rounds under RNE and RTZ,
 * round16_sr under SR (in the integers everywhere, as fpki_round_one
 * does, with the hashes of eight elements at a time).  round16_consts
 * holds F's constants under a mode, each broadcast to sixteen lanes:
 * plain_scalars', which the compiler folds. */
typedef struct round16_consts {
    plain_scalars k;
    __m512i mag, inf, low, high, half, one, rebias, min_normal, tiny, maxf, max32, quiet;
    __m512i of_val, inf_val, nan_val, d0_exp, rebias_c;
    __m512i sign32, sign_bit; /* float32's sign bit, the result's after the shift */
    /* SR: the seed, the shift to the random bits used, and F's constants */
    __m512i seed_mix, man, hidden, sub_dd, rebias32, d0v, tiny_away, min_sub32, max_val;
    __m512i sr_shift;
} round16_consts;

/* F's constants under MODE (with P's SR seed and shift under SR), results
 * as float32 values when QUANT. */
TARGET_AVX512 static inline __attribute__((always_inline)) round16_consts
round16_setup(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv_plan *p)
{
    round16_consts c;
    const plain_scalars k = c.k = plain_scalars_of(f, mode, quant);
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

/* The flags round16 finds, as masks of the elements that raise each. */
typedef struct flag_masks {
    __mmask16 ix, uf, of, inv;
} flag_masks;

/* Stochastic rounding of the 16 magnitudes A (signs S), the first with
 * counter CTR, as fpki_round_one rounds them: the results (encodings, or
 * float32 values when quantising), and FL the lanes that raise each
 * flag. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
round16_sr(const round16_consts *c, __m512i a, __m512i s, uint64_t ctr, flag_masks *fl)
{
    const __m512i one = c->one, thirty_two = _mm512_set1_epi32(32);
    __m512i rnd = sr_bits16(c->seed_mix, ctr);
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
round16_rne_rtz(const round16_consts *c, __m512i a, __m512i *k, __m512i *q)
{
    if (c->k.subs) {
        /* (A's exponent bits first, the same for every format: two
         * formats rounding A in one loop share them) */
        __m512i cv = _mm512_add_epi32(_mm512_max_epu32(_mm512_and_si512(a, c->inf), c->min_normal),
                                      c->d0_exp);
        __m512 cf = _mm512_castsi512_ps(cv);
        /* (the rounding operand must be a literal, whatever the optimiser does) */
        __m512 sum = c->k.rne ? _mm512_add_round_ps(_mm512_castsi512_ps(a), cf,
                                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                              : _mm512_add_round_ps(_mm512_castsi512_ps(a), cf,
                                                    _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        __m512i n = _mm512_sub_epi32(_mm512_castps_si512(sum), cv);
        *k = _mm512_add_epi32(
            n, _mm512_sub_epi32(_mm512_srli_epi32(cv, (unsigned)c->k.d0), c->rebias_c));
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

/* The LIVE ones of the 16 elements at X rounded as fpki_round_one rounds
 * them without options (encodings, or float32 values when quantising),
 * the first with SR counter CTR; FL gets the lanes that raise each flag.
 * Handles every input: the fast paths around it take this where one is
 * rare. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
round16(const round16_consts *c, const uint32_t *x, __mmask16 live, uint64_t ctr, flag_masks *fl)
{
    __m512i xi = _mm512_maskz_loadu_epi32(live, x);
    __m512i a = _mm512_and_si512(xi, c->mag), s = _mm512_andnot_si512(c->mag, xi);
    if (c->k.sr)
        return round16_sr(c, a, s, ctr, fl);
    __m512i kv, qv;
    round16_rne_rtz(c, a, &kv, &qv);
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

#endif
