/* Rounding float32 into a kernel format without options (a plain
 * conversion) under RNE, RTZ or SR, 8 elements at a time with AVX2: the
 * core of the conversion kernel (convert_avx2.c) and of the squared errors
 * of fake quantisation (sqerr_avx2.c), bit for bit what fpki_round_one
 * gives.  As round-avx512.h, eight lanes wide: under RNE, formats with
 * float32's exponent range round in the integers, the others by the vector
 * unit (adding C, as round16_rne_rtz does: the kernels run in the default
 * floating-point environment, whose rounding is to nearest even, and DAZ
 * cannot matter); under SR every format rounds in the integers as
 * fpki_round_one does; under RTZ those with float32's exponent range by a
 * mask, the others by a mask and a truncating conversion (AVX2 has no
 * rounding mode in the instruction of an add). */
#ifndef FPKIT_ROUND_AVX2_H
#define FPKIT_ROUND_AVX2_H

#include "avx2-util.h"
#include "convert-x86.h"

/* A format F's constants under a mode, each broadcast to eight lanes:
 * plain_scalars', which the compiler folds. */
typedef struct round8_consts {
    plain_scalars k;
    __m256i mag, inf, low, high, half, one, rebias, min_normal, tiny, maxf_up, max32, quiet;
    __m256i of_val, inf_val, nan_val, d0_exp, rebias_c;
    __m256i man, hidden, sub_dd, rebias32, d0v, tiny_away, min_sub32, max_val;
    __m256 sub_scale;
    /* SR: the seed, and the shift to the random bits used */
    __m256i seed_mix;
    __m128i sr_shift;
} round8_consts;

/* F's constants under MODE (with P's SR seed and shift under SR), results
 * as float32 values when QUANT. */
TARGET_AVX2 static inline __attribute__((always_inline)) round8_consts
round8_setup(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv_plan *p)
{
    round8_consts c;
    const plain_scalars k = c.k = plain_scalars_of(f, mode, quant);
    c.mag = _mm256_set1_epi32((int)FPKI_F32_MAG);
    c.inf = _mm256_set1_epi32((int)FPKI_F32_INF);
    c.low = _mm256_set1_epi32((int)k.low);
    c.high = _mm256_set1_epi32((int)k.high);
    c.half = _mm256_set1_epi32((int)k.half);
    c.one = _mm256_set1_epi32(1);
    c.rebias = _mm256_set1_epi32((int)k.rebias);
    c.min_normal = _mm256_set1_epi32((int)k.min_normal);
    c.tiny = _mm256_set1_epi32((int)k.tiny);
    c.maxf_up = _mm256_set1_epi32((int)(k.maxf + 1));
    c.max32 = _mm256_set1_epi32((int)k.max32);
    c.quiet = _mm256_set1_epi32((int)FPKI_F32_QUIET);
    c.of_val = _mm256_set1_epi32((int)k.of_val);
    c.inf_val = _mm256_set1_epi32((int)k.inf_val);
    c.nan_val = _mm256_set1_epi32((int)k.nan_val);
    c.d0_exp = _mm256_set1_epi32((int)k.d0_exp);
    c.rebias_c = _mm256_set1_epi32((int)k.rebias_c);
    c.man = _mm256_set1_epi32(0x7fffff);
    c.hidden = _mm256_set1_epi32(0x800000);
    c.sub_dd = _mm256_set1_epi32((int)k.sub_dd);
    c.rebias32 = _mm256_set1_epi32((int)k.rebias32);
    c.d0v = _mm256_set1_epi32(k.d0);
    c.tiny_away = _mm256_set1_epi32((int)k.tiny_away);
    c.min_sub32 = _mm256_set1_epi32((int)k.min_sub32);
    c.max_val = _mm256_set1_epi32((int)k.max_val);
    c.sub_scale = _mm256_castsi256_ps(_mm256_set1_epi32((int)k.sub_scale));
    c.seed_mix = _mm256_set1_epi64x((long long)(k.sr ? p->seed_mix : 0));
    c.sr_shift = _mm_cvtsi32_si128(k.sr ? p->sr_shift : 0);
    return c;
}

/* The flags round8 finds, as lane masks (all ones where an element raises
 * the flag). */
typedef struct flag_masks {
    __m256i ix, uf, of, inv;
} flag_masks;

/* The integer rounding's operands for the 8 magnitudes A where F has
 * exponents below float32's (fpki_round_one's): *DD bits of *V are discarded,
 * *SIG is A's significand with its hidden bit.  DD may exceed 31, where
 * AVX2's variable shifts give zeros, as fpki_round_one wants. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
int_operands8(const round8_consts *c, __m256i a, __m256i *dd, __m256i *v, __m256i *sig)
{
    __m256i ef = _mm256_srli_epi32(a, 23), man = _mm256_and_si256(a, c->man);
    __m256i sub = _mm256_cmpgt_epi32(c->min_normal, a);
    *sig = _mm256_or_si256(
        man, _mm256_andnot_si256(_mm256_cmpeq_epi32(ef, _mm256_setzero_si256()), c->hidden));
    *dd =
        _mm256_blendv_epi8(c->d0v, _mm256_sub_epi32(c->sub_dd, _mm256_max_epu32(ef, c->one)), sub);
    *v = _mm256_blendv_epi8(_mm256_sub_epi32(a, c->rebias32), *sig, sub);
}

/* Rounds the 8 magnitudes A under RNE or RTZ: *K gets the encodings'
 * magnitudes, *Q their values as float32 (both right where A is at most
 * max32; *K above max finite, unsigned, where A rounds above it): as
 * round16_rne_rtz, but for RTZ where F has exponents below float32's, which
 * truncates normals by a mask and subnormals (of F) by float32's
 * truncating conversion of A over F's least subnormal (the scalings, by
 * powers of two, are exact; the quotient is below 2^man_bits). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
round8_rne_rtz(const round8_consts *c, __m256i a, __m256i *k, __m256i *q)
{
    if (c->k.subs && !c->k.rne) {
        __m256i sub = _mm256_cmpgt_epi32(c->min_normal, a);
        __m256i ks = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), c->sub_scale));
        __m256 qs = _mm256_mul_ps(_mm256_cvtepi32_ps(ks), _mm256_castsi256_ps(c->min_sub32));
        *k = _mm256_blendv_epi8(
            _mm256_sub_epi32(_mm256_srli_epi32(a, (unsigned)c->k.d0), c->rebias), ks, sub);
        *q = _mm256_blendv_epi8(_mm256_and_si256(a, c->high), _mm256_castps_si256(qs), sub);
        return;
    }
    if (c->k.subs) {
        __m256i cv = _mm256_add_epi32(_mm256_and_si256(_mm256_max_epu32(a, c->min_normal), c->inf),
                                      c->d0_exp);
        __m256 cf = _mm256_castsi256_ps(cv);
        __m256 sum = _mm256_add_ps(_mm256_castsi256_ps(a), cf);
        __m256i n = _mm256_sub_epi32(_mm256_castps_si256(sum), cv);
        *k = _mm256_add_epi32(
            n, _mm256_sub_epi32(_mm256_srli_epi32(cv, (unsigned)c->k.d0), c->rebias_c));
        *q = _mm256_castps_si256(_mm256_sub_ps(sum, cf));
        return;
    }
    __m256i t = a;
    if (c->k.rne)
        t = _mm256_add_epi32(_mm256_add_epi32(a, c->half),
                             _mm256_and_si256(_mm256_srli_epi32(a, (unsigned)c->k.d0), c->one));
    *k = _mm256_sub_epi32(_mm256_srli_epi32(t, (unsigned)c->k.d0), c->rebias);
    *q = _mm256_and_si256(t, c->high);
}

/* Stochastic rounding of the 8 magnitudes A (signs S), the first with
 * counter CTR, as fpki_round_one rounds them; the results of overflows,
 * infinities and NaNs wrong, and *INC the lanes rounded up. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
round8_sr(const round8_consts *c, __m256i a, __m256i s, uint64_t ctr, __m256i *k, __m256i *inc,
          __m256i *inexact, flag_masks *fl)
{
    const __m256i one = c->one, zero = _mm256_setzero_si256();
    const __m256i thirty_two = _mm256_set1_epi32(32), flip = _mm256_set1_epi32(INT32_MIN);
    /* DD bits of V go; FRAC: the top 32 bits of the fraction of an ulp
     * they make */
    __m256i kept, disc, frac, dd = c->d0v;
    if (!c->k.subs) {
        kept = _mm256_srli_epi32(a, (unsigned)c->k.d0);
        disc = _mm256_and_si256(a, c->low);
        frac = _mm256_slli_epi32(disc, (unsigned)(32 - c->k.d0));
    } else {
        __m256i v, sig;
        int_operands8(c, a, &dd, &v, &sig);
        kept = _mm256_srlv_epi32(v, dd);
        disc = _mm256_and_si256(v, _mm256_sub_epi32(_mm256_sllv_epi32(one, dd), one));
        frac = _mm256_or_si256(_mm256_sllv_epi32(disc, _mm256_sub_epi32(thirty_two, dd)),
                               _mm256_srlv_epi32(sig, _mm256_sub_epi32(dd, thirty_two)));
    }
    __m256i rnd = sr_bits8(c->seed_mix, ctr);
    /* rnd < frac in the bits used, unsigned: none where nothing is discarded */
    *inc = _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_srl_epi32(frac, c->sr_shift), flip),
                              _mm256_xor_si256(_mm256_srl_epi32(rnd, c->sr_shift), flip));
    *inexact = _mm256_xor_si256(_mm256_cmpeq_epi32(disc, zero), _mm256_set1_epi32(-1));
    *k = _mm256_sub_epi32(kept, *inc);
    __m256i tiny_up = _mm256_and_si256(*inc, _mm256_cmpgt_epi32(c->tiny_away, a));
    __m256i tiny_down = _mm256_andnot_si256(*inc, _mm256_cmpgt_epi32(c->min_normal, a));
    fl->uf =
        _mm256_or_si256(fl->uf, _mm256_and_si256(*inexact, _mm256_or_si256(tiny_up, tiny_down)));
    if (!c->k.quant)
        return _mm256_or_si256(*k, _mm256_srli_epi32(s, c->k.sign_shift));
    /* the value: A with the discarded bits cleared and the increment
     * added, or below F's grid (DD > 23) zero or the least subnormal */
    __m256i up = _mm256_and_si256(*inc, one), r;
    if (!c->k.subs) {
        r = _mm256_slli_epi32(_mm256_add_epi32(_mm256_srli_epi32(a, (unsigned)c->k.d0), up),
                              (unsigned)c->k.d0);
    } else {
        r = _mm256_sllv_epi32(_mm256_add_epi32(_mm256_srlv_epi32(a, dd), up), dd);
        r = _mm256_blendv_epi8(r, _mm256_and_si256(*inc, c->min_sub32),
                               _mm256_cmpgt_epi32(dd, _mm256_set1_epi32(23)));
    }
    return _mm256_or_si256(r, s);
}

/* The 8 elements at X rounded as fpki_round_one rounds them without
 * options (encodings, or float32 values when quantising), the first with
 * SR counter CTR; FL gets the lanes that raise each flag.  Handles every
 * input: the fast paths around it take this where one is rare. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
round8(const round8_consts *c, const uint32_t *x, uint64_t ctr, flag_masks *fl)
{
    const __m256i ones = _mm256_set1_epi32(-1);
    __m256i xi = _mm256_loadu_si256((const __m256i *)x);
    __m256i a = _mm256_and_si256(xi, c->mag), s = _mm256_andnot_si256(c->mag, xi);
    __m256i sv = c->k.quant ? s : _mm256_srli_epi32(s, c->k.sign_shift);
    __m256i kv, r, inc = _mm256_setzero_si256(), inexact;
    if (c->k.sr) {
        r = round8_sr(c, a, s, ctr, &kv, &inc, &inexact, fl);
    } else {
        __m256i qv;
        round8_rne_rtz(c, a, &kv, &qv);
        inexact = _mm256_xor_si256(_mm256_cmpeq_epi32(qv, a), ones);
        fl->uf = _mm256_or_si256(fl->uf, _mm256_and_si256(inexact, _mm256_cmpgt_epi32(c->tiny, a)));
        r = _mm256_or_si256(c->k.quant ? qv : kv, sv);
    }
    /* Overflows, infinities and NaNs (all above max finite), seldom:
     * their results replace the others. */
    __m256i rare = _mm256_cmpgt_epi32(a, c->max32);
    if (__builtin_expect(!_mm256_testz_si256(rare, rare), 0)) {
        __m256i special = _mm256_cmpgt_epi32(a, _mm256_sub_epi32(c->inf, c->one));
        __m256i of =
            _mm256_andnot_si256(special, _mm256_and_si256(rare, cmpge_epu32(kv, c->maxf_up)));
        __m256i isinf = _mm256_cmpeq_epi32(a, c->inf);
        __m256i isnan = _mm256_andnot_si256(isinf, special);
        __m256i inf_val = c->k.inf_enc ? _mm256_or_si256(c->inf_val, sv) : c->inf_val;
        inexact = _mm256_andnot_si256(special, inexact);
        fl->of = _mm256_or_si256(fl->of, of);
        if (!c->k.inf_enc)
            fl->inv = _mm256_or_si256(fl->inv, isinf);
        fl->inv = _mm256_or_si256(
            fl->inv, _mm256_and_si256(isnan, _mm256_cmpeq_epi32(_mm256_and_si256(a, c->quiet),
                                                                _mm256_setzero_si256())));
        if (c->k.sr) {
            /* up, or exact: to infinity; else to max finite */
            __m256i to_inf =
                _mm256_and_si256(of, _mm256_or_si256(inc, _mm256_xor_si256(inexact, ones)));
            r = _mm256_blendv_epi8(r, _mm256_or_si256(c->max_val, sv),
                                   _mm256_andnot_si256(to_inf, of));
            r = _mm256_blendv_epi8(r, inf_val, _mm256_or_si256(to_inf, isinf));
        } else {
            r = _mm256_blendv_epi8(r, c->k.of_signed ? _mm256_or_si256(c->of_val, sv) : c->of_val,
                                   of);
            r = _mm256_blendv_epi8(r, inf_val, isinf);
        }
        r = _mm256_blendv_epi8(r, c->nan_val, isnan);
    }
    fl->ix = _mm256_or_si256(fl->ix, inexact);
    return r;
}

#endif
