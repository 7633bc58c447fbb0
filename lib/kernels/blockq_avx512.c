/* The block-quantisation kernels with AVX-512 (fpki_blockq_fn,
 * fpki_blockq_extremes_fn): blockq-body.h's rounding sixteen elements to
 * a vector, each step of fpki_blockq_round as a vector operation (its
 * comment says why they are right), the flags and counts as lane masks,
 * the sums' sixteen lanes as two vectors of doubles. */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx512-util.h"
#include "blockq-body.h"

#define AVX512_INLINE TARGET_AVX512 static inline __attribute__((always_inline))

/* P's constants in every lane. */
typedef struct bq16 {
    __m512i mag, one, hidden, fracm, d0, maxf, sign_bit, rebias, sub_exp, tiny_ne, tiny_away;
    __m512i inf, nan_code, inf_code, inf_value, nan_value, seed_mix, sr_shift, min_norm;
    __m512i k31, k32, k63;
    uint32_t m, d0s, fnuz;
    bool inf_of, nan_of; /* whether an infinity (a NaN) overflows, as the core has it */
} bq16;

AVX512_INLINE bq16 bq16_setup(const fpki_blockq_plan *p)
{
    bq16 c;
    const uint32_t m = (uint32_t)p->man_bits, d0 = 23 - m;
    c.m = m;
    c.d0s = d0;
    c.fnuz = p->fnuz;
    c.mag = _mm512_set1_epi32(0x7fffffff);
    c.one = _mm512_set1_epi32(1);
    c.hidden = _mm512_set1_epi32(0x800000);
    c.fracm = _mm512_set1_epi32(0x7fffff);
    c.d0 = _mm512_set1_epi32((int)d0);
    c.maxf = _mm512_set1_epi32((int)p->maxf);
    c.sign_bit = _mm512_set1_epi32((int)p->sign_bit);
    c.rebias = _mm512_set1_epi32((int)((uint32_t)(127 - p->bias) << 23));
    c.sub_exp = _mm512_set1_epi32((int)((uint32_t)(p->emin - p->man_bits) * (1u << 23)));
    c.tiny_ne = _mm512_set1_epi32((int)((1u << 23) - (1u << (22 - m))));
    c.tiny_away = _mm512_set1_epi32((int)((1u << 23) - (1u << (23 - m)) + 1));
    c.inf = _mm512_set1_epi32(0x7f800000);
    c.nan_code = _mm512_set1_epi32((int)p->nan_code);
    c.inf_code = _mm512_set1_epi32((int)p->inf_code);
    c.inf_value = _mm512_set1_epi32((int)p->inf_value);
    c.nan_value = _mm512_set1_epi32((int)p->nan_value);
    c.seed_mix = _mm512_set1_epi64((long long)p->seed_mix);
    c.sr_shift = _mm512_set1_epi32((int)p->sr_shift);
    c.min_norm = _mm512_set1_epi32((int)(1u << m));
    c.k31 = _mm512_set1_epi32(31);
    c.k32 = _mm512_set1_epi32(32);
    c.k63 = _mm512_set1_epi32(63);
    c.inf_of = (p->inf_flags & FPK_OVERFLOW) != 0;
    c.nan_of = (p->nan_flags & FPK_OVERFLOW) != 0;
    return c;
}

/* The lanes that raise each flag, and the counts' lanes. */
typedef struct bq16_masks {
    __mmask16 ix, uf, of, inf, nan; /* inf, nan: what came in (after MUL or DIV) */
} bq16_masks;

/* fpki_blockq_round of the sixteen XS (scaled), TOFF in every lane:
 * returns the encodings; *VALUE their values, *KM the magnitudes; M the
 * flags' lanes (an infinity's or a NaN's left to the caller). */
AVX512_INLINE __m512i bq16_round(const bq16 *c, fpk_round mode, __m512i toff, __m512i xs,
                                 uint64_t ctr, __m512i *value, __m512i *km, bq16_masks *m)
{
    __m512i a = _mm512_and_si512(xs, c->mag), s = _mm512_andnot_si512(c->mag, xs);
    __m512i ef = _mm512_srli_epi32(a, 23), frac = _mm512_and_si512(a, c->fracm);
    __mmask16 sub = _mm512_testn_epi32_mask(ef, ef), nonzero = _mm512_test_epi32_mask(a, a);
    /* a subnormal's fraction shifted up to the hidden bit's place */
    __m512i lz = _mm512_maskz_sub_epi32(sub, _mm512_lzcnt_epi32(_mm512_or_si512(frac, c->one)),
                                        _mm512_set1_epi32(8));
    __m512i sig = _mm512_sllv_epi32(_mm512_mask_or_epi32(frac, (__mmask16)~sub, frac, c->hidden), lz);
    __m512i t = _mm512_add_epi32(_mm512_sub_epi32(_mm512_mask_mov_epi32(ef, sub, c->one), lz), toff);
    __mmask16 normal = _mm512_cmpgt_epi32_mask(t, _mm512_setzero_si512());
    __m512i dd = _mm512_mask_sub_epi32(c->d0, (__mmask16)~normal,
                                       _mm512_add_epi32(c->d0, c->one), t);
    __m512i d = _mm512_min_epu32(dd, c->k31);
    __m512i below = _mm512_and_si512(sig, c->fracm);
    __m512i v = _mm512_mask_or_epi32(sig, normal, _mm512_slli_epi32(t, 23), below);
    v = _mm512_maskz_mov_epi32(nonzero, v);
    __m512i kept = _mm512_srlv_epi32(v, d);
    __m512i disc = _mm512_and_si512(v, _mm512_sub_epi32(_mm512_sllv_epi32(c->one, d), c->one));
    __mmask16 inexact = _mm512_test_epi32_mask(disc, disc), inc, tiny;
    __mmask16 t0 = _mm512_cmpeq_epi32_mask(t, _mm512_setzero_si512());
    __mmask16 tneg = _mm512_cmplt_epi32_mask(t, _mm512_setzero_si512());
    if (mode == FPK_RNE) {
        __m512i half1 = _mm512_sub_epi32(_mm512_sllv_epi32(c->one, _mm512_sub_epi32(d, c->one)), c->one);
        __m512i up = _mm512_add_epi32(_mm512_add_epi32(disc, half1), _mm512_and_si512(kept, c->one));
        inc = _mm512_test_epi32_mask(_mm512_srlv_epi32(up, d), c->one);
        tiny = tneg | _mm512_mask_cmplt_epu32_mask(t0, below, c->tiny_ne);
    } else {
        __m512i rnd = sr_bits16(c->seed_mix, ctr);
        __mmask16 within = _mm512_cmple_epu32_mask(dd, c->k32);
        __m512i f32 = _mm512_srlv_epi32(sig, _mm512_min_epu32(_mm512_sub_epi32(dd, c->k32), c->k31));
        f32 = _mm512_mask_sllv_epi32(f32, within, disc, _mm512_sub_epi32(c->k32, dd));
        inc = _mm512_mask_cmplt_epu32_mask(inexact, _mm512_srlv_epi32(rnd, c->sr_shift),
                                           _mm512_srlv_epi32(f32, c->sr_shift));
        __mmask16 tiny_away = tneg | _mm512_mask_cmplt_epu32_mask(t0, below, c->tiny_away);
        tiny = (__mmask16)((inc & tiny_away) | (~inc & (tneg | t0)));
    }
    __m512i k = _mm512_mask_add_epi32(kept, inc, kept, c->one);
    __mmask16 of = _mm512_cmpgt_epu32_mask(k, c->maxf);
    k = _mm512_mask_mov_epi32(k, of, c->maxf);
    /* the value: a normal's fields moved to float32's; a subnormal from
     * its exact float32 */
    __m512i vn = _mm512_add_epi32(_mm512_sllv_epi32(k, c->d0), c->rebias);
    __m512i vs = _mm512_add_epi32(_mm512_castps_si512(_mm512_cvtepi32_ps(k)), c->sub_exp);
    __mmask16 knz = _mm512_test_epi32_mask(k, k);
    __m512i vm = _mm512_mask_mov_epi32(_mm512_maskz_mov_epi32(knz, vs),
                                       _mm512_cmpge_epu32_mask(k, c->min_norm), vn);
    __mmask16 neg = _mm512_test_epi32_mask(s, s);
    if (c->fnuz)
        neg &= knz;
    __m512i code = _mm512_mask_or_epi32(k, neg, k, c->sign_bit);
    vm = _mm512_mask_or_epi32(vm, neg, vm, s);
    m->ix |= inexact | of;
    m->of |= of;
    m->uf |= (__mmask16)(inexact & tiny & ~of);
    __mmask16 special = _mm512_cmpge_epu32_mask(a, c->inf);
    if (__builtin_expect(special != 0, 0)) {
        __mmask16 isnan = _mm512_cmpgt_epu32_mask(a, c->inf), isinf = special & ~isnan;
        __m512i sc = _mm512_maskz_mov_epi32(neg, c->sign_bit), sv = _mm512_maskz_mov_epi32(neg, s);
        code = _mm512_mask_or_epi32(code, isinf, c->inf_code, sc);
        vm = _mm512_mask_or_epi32(vm, isinf, c->inf_value, sv);
        k = _mm512_mask_mov_epi32(k, isinf, c->inf_code);
        code = _mm512_mask_mov_epi32(code, isnan, c->nan_code);
        vm = _mm512_mask_mov_epi32(vm, isnan, c->nan_value);
        k = _mm512_mask_mov_epi32(k, isnan, c->inf);
        m->ix &= (__mmask16)~special;
        m->of &= (__mmask16)~special;
        m->uf &= (__mmask16)~special;
        m->of |= (c->inf_of ? isinf : 0) | (c->nan_of ? isnan : 0);
        m->inf |= isinf;
        m->nan |= isnan;
    }
    *value = vm;
    *km = k;
    return code;
}

/* The terms of the sums of sixteen lanes X and Y (float32s; COUNTED the
 * lanes that count), added to lanes LX and LE (elements 0-7 in [0], 8-15
 * in [1]). */
AVX512_INLINE void bq16_sums(__m512 x, __m512 y, __mmask16 counted, __m512d *lx, __m512d *le)
{
    __m512d x0 = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
    __m512d x1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
    __m512d y0 = _mm512_cvtps_pd(_mm512_castps512_ps256(y));
    __m512d y1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1)));
    __m512d e0 = _mm512_sub_pd(y0, x0), e1 = _mm512_sub_pd(y1, x1);
    __mmask8 c0 = (__mmask8)counted, c1 = (__mmask8)(counted >> 8);
    lx[0] = _mm512_add_pd(lx[0], _mm512_maskz_mul_pd(c0, x0, x0));
    lx[1] = _mm512_add_pd(lx[1], _mm512_maskz_mul_pd(c1, x1, x1));
    le[0] = _mm512_add_pd(le[0], _mm512_maskz_mul_pd(c0, e0, e0));
    le[1] = _mm512_add_pd(le[1], _mm512_maskz_mul_pd(c1, e1, e1));
}

/* SUMS[0] and SUMS[1] := fpki_blockq_fold of the lanes LX and LE, side
 * by side: the same additions in the same order. */
AVX512_INLINE void bq16_fold(const __m512d *lx, const __m512d *le, double *sums)
{
    __m512d sx = _mm512_add_pd(lx[0], lx[1]), se = _mm512_add_pd(le[0], le[1]);
    __m512d s4 = _mm512_add_pd(_mm512_shuffle_f64x2(sx, se, 0x44), _mm512_shuffle_f64x2(sx, se, 0xee));
    __m512d s2 = _mm512_add_pd(s4, _mm512_permutex_pd(s4, 0x4e));
    __m512d s1 = _mm512_add_pd(s2, _mm512_permute_pd(s2, 0x55));
    sums[0] = _mm512_cvtsd_f64(s1);
    sums[1] = _mm256_cvtsd_f64(_mm512_extractf64x4_pd(s1, 1));
}

/* The counts in lanes of their own (zeros, flushed, subnormal,
 * saturated), summed at the end of a call or every 2^28 vectors. */
typedef struct bq16_counts {
    __m512i zeros, flushed, subnormal, saturated;
    size_t vectors;
} bq16_counts;

AVX512_INLINE void bq16_counts_flush(bq16_counts *v, fpki_blockq_counts *cnt)
{
    cnt->zeros += (uint32_t)_mm512_reduce_add_epi32(v->zeros);
    cnt->flushed += (uint32_t)_mm512_reduce_add_epi32(v->flushed);
    cnt->subnormal += (uint32_t)_mm512_reduce_add_epi32(v->subnormal);
    cnt->saturated += (uint32_t)_mm512_reduce_add_epi32(v->saturated);
    v->zeros = v->flushed = v->subnormal = v->saturated = _mm512_setzero_si512();
    v->vectors = 0;
}

/* One block of W elements, not a NaN block (blockq-body.h's
 * fpki_blockq_block_run). */
AVX512_INLINE void bq16_block(const bq16 *c, fpk_round mode, fpki_blockq_how how,
                              const fpki_blockq_block *b, int32_t bias, const uint32_t *x,
                              size_t w, uint64_t index, uint8_t *codes, uint32_t *y,
                              double *sums, bq16_counts *vc, bq16_masks *fm)
{
    const __m512i toff = _mm512_set1_epi32(bias - 127 - (how == FPKI_BLOCKQ_POW2 ? b->k : 0));
    const __m512 mf = _mm512_castsi512_ps(_mm512_set1_epi32((int)b->m));
    const __m512 dec = _mm512_castsi512_ps(_mm512_set1_epi32((int)b->decode));
    const __m512i qnan = _mm512_set1_epi32((int)FPKI_F32_QNAN);
    __m512d lx[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()}, le[2] = {lx[0], lx[1]};
    for (size_t i = 0; i < w; i += 16) {
        __mmask16 live = first_lanes(w - i);
        __m512i xv = _mm512_maskz_loadu_epi32(live, x + i);
        __m512 xf = _mm512_castsi512_ps(xv);
        __m512i xs = how == FPKI_BLOCKQ_MUL   ? _mm512_castps_si512(_mm512_mul_ps(xf, mf))
                     : how == FPKI_BLOCKQ_DIV ? _mm512_castps_si512(_mm512_div_ps(xf, mf))
                                              : xv;
        __m512i value, km;
        bq16_masks m = {0, 0, 0, 0, 0};
        __m512i code = bq16_round(c, mode, toff, xs, index + i, &value, &km, &m);
        __m512 yv = _mm512_mul_ps(_mm512_castsi512_ps(value), dec);
        yv = _mm512_mask_mov_ps(yv, _mm512_cmp_ps_mask(yv, yv, _CMP_UNORD_Q),
                                _mm512_castsi512_ps(qnan));
        __m512i a = _mm512_and_si512(xv, c->mag);
        __mmask16 counted = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, c->one),
                                                    _mm512_sub_epi32(c->inf, c->one));
        bq16_sums(xf, yv, counted, lx, le);
        vc->zeros = _mm512_mask_add_epi32(vc->zeros, _mm512_mask_testn_epi32_mask(live, a, a),
                                          vc->zeros, c->one);
        vc->flushed = _mm512_mask_add_epi32(vc->flushed, _mm512_mask_testn_epi32_mask(counted, km, km),
                                            vc->flushed, c->one);
        vc->subnormal = _mm512_mask_add_epi32(
            vc->subnormal,
            _mm512_mask_cmplt_epu32_mask(counted, _mm512_sub_epi32(km, c->one),
                                         _mm512_sub_epi32(c->min_norm, c->one)),
            vc->subnormal, c->one);
        vc->saturated = _mm512_mask_add_epi32(vc->saturated, (__mmask16)(counted & m.of),
                                              vc->saturated, c->one);
        fm->ix |= m.ix & live;
        fm->uf |= m.uf & live;
        fm->of |= m.of & live;
        fm->inf |= m.inf & live;
        fm->nan |= m.nan & live;
        if (codes)
            _mm512_mask_cvtepi32_storeu_epi8(codes + i, live, code);
        if (y)
            _mm512_mask_storeu_ps(y + i, live, yv);
    }
    bq16_fold(lx, le, sums);
    vc->vectors += (w + 15) / 16;
}

/* A NaN block: the NaN, no flags; zeros and non-finite inputs counted. */
AVX512_INLINE void bq16_nan_block(const fpki_blockq_plan *p, const bq16 *c, const uint32_t *x,
                                  size_t w, uint8_t *codes, uint32_t *y, double *sums,
                                  fpki_blockq_counts *cnt)
{
    const __m512i nan = _mm512_set1_epi32((int)p->nan), qnan = _mm512_set1_epi32((int)FPKI_F32_QNAN);
    for (size_t i = 0; i < w; i += 16) {
        __mmask16 live = first_lanes(w - i);
        __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(live, x + i), c->mag);
        cnt->zeros += (uint32_t)__builtin_popcount((__mmask16)(live & ~_mm512_test_epi32_mask(a, a)));
        cnt->nonfinite += (uint32_t)__builtin_popcount(_mm512_mask_cmpge_epu32_mask(live, a, c->inf));
        if (codes)
            _mm512_mask_cvtepi32_storeu_epi8(codes + i, live, nan);
        if (y)
            _mm512_mask_storeu_epi32(y + i, live, qnan);
    }
    sums[0] = sums[1] = 0;
}

/* fpki_blockq_fn with MODE and HOW fixed. */
AVX512_INLINE void bq16_run(const fpki_blockq_plan *p, fpk_round mode, fpki_blockq_how how,
                            const fpki_blockq_block *b, size_t w, const uint32_t *x, size_t n,
                            uint64_t index, uint8_t *codes, uint32_t *y, double *sums,
                            fpki_blockq_counts *cnt)
{
    const bq16 c = bq16_setup(p);
    bq16_masks fm = {0, 0, 0, 0, 0};
    bq16_counts vc = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512(), 0};
    for (size_t i = 0, j = 0; i < n; i += w, j++) {
        size_t len = n - i < w ? n - i : w;
        if (i % 256 < w)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        if (b[j].nan)
            bq16_nan_block(p, &c, x + i, len, codes ? codes + i : NULL, y ? y + i : NULL,
                           sums + 2 * j, cnt);
        else
            bq16_block(&c, mode, how, &b[j], p->bias, x + i, len, index + i,
                       codes ? codes + i : NULL, y ? y + i : NULL, sums + 2 * j, &vc, &fm);
        if (vc.vectors >= (size_t)1 << 28)
            bq16_counts_flush(&vc, cnt);
    }
    bq16_counts_flush(&vc, cnt);
    cnt->flags |= (fm.ix ? FPK_INEXACT : 0) | (fm.uf ? FPK_UNDERFLOW : 0) |
                  (fm.of ? FPK_OVERFLOW : 0);
    cnt->flags |= (fm.inf ? p->inf_flags : 0) | (fm.nan ? p->nan_flags : 0);
}

TARGET_AVX512 void fpki_blockq_avx512(const fpki_blockq_plan *p, const fpki_blockq_block *b,
                                      size_t w, const uint32_t *x, size_t n, uint64_t index,
                                      uint8_t *codes, uint32_t *y, double *sums,
                                      fpki_blockq_counts *c)
{
#define RUN(mode, how) bq16_run(p, mode, how, b, w, x, n, index, codes, y, sums, c)
    if (p->mode == FPK_SR) {
        if (p->how == FPKI_BLOCKQ_POW2)
            RUN(FPK_SR, FPKI_BLOCKQ_POW2);
        else if (p->how == FPKI_BLOCKQ_MUL)
            RUN(FPK_SR, FPKI_BLOCKQ_MUL);
        else
            RUN(FPK_SR, FPKI_BLOCKQ_DIV);
    } else {
        if (p->how == FPKI_BLOCKQ_POW2)
            RUN(FPK_RNE, FPKI_BLOCKQ_POW2);
        else if (p->how == FPKI_BLOCKQ_MUL)
            RUN(FPK_RNE, FPKI_BLOCKQ_MUL);
        else
            RUN(FPK_RNE, FPKI_BLOCKQ_DIV);
    }
#undef RUN
}

/* R[j] := the largest (MIN: least) of the 16 lanes of V[j], for 16
 * vectors: halving the vectors and the lanes per vector at each step
 * (their 256-bit halves, 128-bit quarters, pairs of lanes, then lanes),
 * then one permute into order. */
AVX512_INLINE __m512i fold16(const __m512i *v, bool min)
{
#define PICK(a, b) (min ? _mm512_min_epu32(a, b) : _mm512_max_epu32(a, b))
    __m512i t[8], u[4], w[2];
    for (int p = 0; p < 8; p++)
        t[p] = PICK(_mm512_shuffle_i32x4(v[2 * p], v[2 * p + 1], 0x44),
                    _mm512_shuffle_i32x4(v[2 * p], v[2 * p + 1], 0xee));
    for (int q = 0; q < 4; q++)
        u[q] = PICK(_mm512_shuffle_i32x4(t[2 * q], t[2 * q + 1], 0x88),
                    _mm512_shuffle_i32x4(t[2 * q], t[2 * q + 1], 0xdd));
    for (int r = 0; r < 2; r++)
        w[r] = PICK(_mm512_unpacklo_epi64(u[2 * r], u[2 * r + 1]),
                    _mm512_unpackhi_epi64(u[2 * r], u[2 * r + 1]));
    /* quarter c of w[0]: blocks c and c + 4, two lanes each; of w[1]:
     * blocks c + 8 and c + 12 */
    __m512i m0 = PICK(w[0], _mm512_shuffle_epi32(w[0], _MM_PERM_CDAB));
    __m512i m1 = PICK(w[1], _mm512_shuffle_epi32(w[1], _MM_PERM_CDAB));
    __m512i r = _mm512_mask_blend_epi32(0xaaaa, m0, m1);
    return _mm512_permutexvar_epi32(
        _mm512_set_epi32(15, 11, 7, 3, 13, 9, 5, 1, 14, 10, 6, 2, 12, 8, 4, 0), r);
#undef PICK
}

/* fpki_blockq_extremes_fn: per block, sixteen lanes of extremes; sixteen
 * blocks' lanes folded at once (fold16). */
TARGET_AVX512 void fpki_blockq_extremes_avx512(const uint32_t *x, size_t n, size_t w,
                                               uint32_t *amax, uint32_t *amin, uint8_t *nonfinite)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i one = _mm512_set1_epi32(1), inf1 = _mm512_set1_epi32(0x7f800000 - 1);
    size_t nb = (n + w - 1) / w;
    if (nb < 4) { /* too few to fold together */
        fpki_blockq_extremes_generic(x, n, w, amax, amin, nonfinite);
        return;
    }
    for (size_t j0 = 0; j0 < nb; j0 += 16) {
        __m512i hi[16], lo[16];
        uint32_t nf = 0;
        size_t g = nb - j0 < 16 ? nb - j0 : 16;
        for (size_t j = 0; j < 16; j++) {
            hi[j] = _mm512_setzero_si512();
            lo[j] = inf;
            if (j >= g)
                continue;
            size_t i = (j0 + j) * w, len = n - i < w ? n - i : w;
            __mmask16 top = 0;
            for (size_t k = 0; k < len; k += 16) {
                __mmask16 live = first_lanes(len - k);
                if ((i + k) % 256 < 16)
                    _mm_prefetch((const char *)(x + i + k) + FPKI_PREFETCH, _MM_HINT_T1);
                __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(live, x + i + k), mag);
                __mmask16 fin = _mm512_cmplt_epu32_mask(a, inf);
                top |= (__mmask16)~fin;
                hi[j] = _mm512_mask_max_epu32(hi[j], fin, hi[j], a);
                lo[j] = _mm512_mask_min_epu32(lo[j], _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, one), inf1),
                                              lo[j], a);
            }
            nf |= (uint32_t)(top != 0) << j;
        }
        __mmask16 t = first_lanes(g);
        _mm512_mask_storeu_epi32(amax + j0, t,
                                 _mm512_max_epu32(_mm512_maskz_loadu_epi32(t, amax + j0), fold16(hi, false)));
        _mm512_mask_storeu_epi32(amin + j0, t,
                                 _mm512_min_epu32(_mm512_maskz_loadu_epi32(t, amin + j0), fold16(lo, true)));
        for (size_t j = 0; nf && j < g; j++)
            nonfinite[j0 + j] |= (uint8_t)(nf >> j & 1);
    }
}
#endif
