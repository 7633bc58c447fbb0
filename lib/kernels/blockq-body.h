/* Block quantisation's portable bodies (kernels.h: fpki_blockq_fn,
 * fpki_blockq_extremes_fn), instantiated by blockq_c.c, blockq_avx2.c
 * and blockq_avx512.c: branch-free integer code on float32 encodings,
 * sixteen elements at a time, which the compiler vectorises, with the
 * mode and the scaling known at compile time. */
#ifndef FPKIT_BLOCKQ_BODY_H
#define FPKIT_BLOCKQ_BODY_H

#include "kernel-util.h"

#define FPKI_BLOCKQ_LANES 16

FPKI_INLINE float fpki_blockq_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

FPKI_INLINE uint32_t fpki_blockq_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* D where C (0 or 1), else +0, on its bits. */
FPKI_INLINE double fpki_blockq_mask(double d, uint32_t c)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    b &= 0 - (uint64_t)c;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* Rounds X (a float32 encoding) times 2^-k into P's
 * format under MODE (RNE or SR, random bits RND), saturating, as the
 * core's rounding does (fpki_round_pack with saturate): TOFF is bias -
 * 127 - k, so that a float32 of exponent field E lies in the format's
 * binade E + TOFF.  Returns the encoding; *VALUE := its value as float32
 * bits, *FLAGS := the flags raised, *MAG := the magnitude's encoding (for
 * a NaN, one that counts as neither zero nor subnormal).
 *
 * X's significand SIG is first normalised (a float32 subnormal's leading
 * bit found by converting it to float32, exactly, which every vector
 * unit can), so that X = SIG * 2^(T - bias - 23) with the hidden bit at
 * 23 and T the format's biased exponent, unbounded.  T >= 1 is a normal
 * of the format, whose encoding is (T << 23 | SIG's fraction) >> (23 -
 * m), a rounding carry passing into the exponent; below, SIG shifted down
 * by the D = 23 - m + 1 - T bits that fall below the least subnormal is
 * the subnormal's encoding, a carry making it the least normal.  D is
 * clamped at 31, where everything is discarded anyway; SR's fraction of
 * an ulp keeps its top 32 bits either way. */
FPKI_INLINE uint32_t fpki_blockq_round(const fpki_blockq_plan *p, fpk_round mode, int32_t toff,
                                       uint32_t x, uint32_t rnd, uint32_t *value, uint32_t *flags,
                                       uint32_t *mag)
{
    const uint32_t m = (uint32_t)p->man_bits, d0 = 23 - m, maxf = p->maxf;
    const uint32_t s = x & FPKI_F32_SIGN, a = x & FPKI_F32_MAG;
    const uint32_t ef = a >> 23, frac = a & 0x7fffffu;
    /* the leading bit of a subnormal's fraction, from its exact float32 */
    uint32_t lead = (fpki_blockq_bits((float)(int32_t)(frac | 1)) >> 23) - 127;
    uint32_t lz = fpki_select(ef == 0, 23 - lead, 0);
    uint32_t sig = (frac | fpki_select(ef != 0, 0x800000u, 0)) << lz;
    int32_t t = (int32_t)fpki_select(ef != 0, ef, 1) - (int32_t)lz + toff;
    uint32_t normal = t >= 1;
    uint32_t dd = fpki_select(normal, d0, d0 + (uint32_t)(1 - t));
    uint32_t d = fpki_select(dd < 31, dd, 31);
    uint32_t v = fpki_select(normal, (uint32_t)t << 23 | (sig & 0x7fffffu), sig);
    v = fpki_select(a != 0, v, 0);
    uint32_t kept = v >> d, disc = v & ((1u << d) - 1);
    uint32_t inexact = disc != 0, inc, tiny;
    const uint32_t below = sig & 0x7fffffu; /* T = 0: the place below the least normal */
    if (mode == FPK_RNE) {
        /* half an ulp, less one unless the kept part is odd, carries */
        inc = (disc + (1u << (d - 1)) - 1 + (kept & 1)) >> d;
        /* tiny after rounding: below 2^emin less a quarter of the ulp
         * under it (docs/DESIGN.md "Tininess and underflow") */
        tiny = (t < 0) | ((t == 0) & (below < (1u << 23) - (1u << (22 - m))));
    } else {
        uint32_t up = fpki_select(dd <= 32, 32 - dd, 0);
        uint32_t down = fpki_select(dd > 32, fpki_select(dd < 63, dd - 32, 31), 0);
        uint32_t f32 = fpki_select(dd <= 32, disc << up, sig >> down);
        inc = inexact & ((rnd >> p->sr_shift) < (f32 >> p->sr_shift));
        /* rounded away, a value reaches 2^emin from above the last
         * number under it; toward zero, never */
        uint32_t tiny_away = (t < 0) | ((t == 0) & (below <= (1u << 23) - (1u << (23 - m))));
        tiny = fpki_select(inc, tiny_away, t < 1);
    }
    uint32_t k = kept + inc, of = k > maxf;
    uint32_t fl = fpki_select(of, FPK_OVERFLOW | FPK_INEXACT,
                              inexact * FPK_INEXACT | (inexact & tiny) * FPK_UNDERFLOW);
    uint32_t kf = fpki_select(of, maxf, k);
    /* the value: a normal's fields moved to float32's; a subnormal
     * k * 2^(emin - m) from k's exact float32 */
    uint32_t vn = (kf << d0) + ((uint32_t)(127 - p->bias) << 23);
    uint32_t vs = fpki_blockq_bits((float)(int32_t)kf) + (uint32_t)(p->emin - p->man_bits) * (1u << 23);
    uint32_t vm = fpki_select(kf >= (1u << m), vn, fpki_select(kf != 0, vs, 0));
    uint32_t neg = fpki_select((kf == 0) & p->fnuz, 0, s != 0); /* FNUZ: no -0 */
    /* an infinity and a NaN (only after MUL or DIV, the NaN of 0 * inf)
     * as the core rounds them: the NaN's encoding and value whole */
    uint32_t inf = a == FPKI_F32_INF, nan = a > FPKI_F32_INF;
    uint32_t z = fpki_select(neg, p->sign_bit, 0) | fpki_select(inf, p->inf_code, kf);
    vm = fpki_select(neg, FPKI_F32_SIGN, 0) | fpki_select(inf, p->inf_value, vm);
    *flags = fpki_select(nan, p->nan_flags, fpki_select(inf, p->inf_flags, fl));
    *value = fpki_select(nan, p->nan_value, vm);
    *mag = fpki_select(nan, FPKI_F32_INF, fpki_select(inf, p->inf_code, kf));
    return fpki_select(nan, p->nan_code, z);
}

/* What sixteen elements add to the counts, and their flags. */
typedef struct fpki_blockq_tally {
    uint32_t zeros, nonfinite, flushed, saturated, subnormal, flags;
} fpki_blockq_tally;

/* Sixteen elements X of a finite block (those from LIVE on zeros that
 * count for nothing), scaled as B: CODE, Y, the terms TX and TE of the
 * sums, the counts into T. */
FPKI_INLINE void fpki_blockq_tile(const fpki_blockq_plan *p, fpk_round mode, fpki_blockq_how how,
                                  int32_t toff, float mf, float dec, const uint32_t *restrict x,
                                  const uint32_t *restrict rnd, uint32_t live,
                                  uint32_t *restrict code, uint32_t *restrict y,
                                  double *restrict tx, double *restrict te, fpki_blockq_tally *t)
{
    const uint32_t m = (uint32_t)p->man_bits;
    uint32_t zeros = 0, flushed = 0, subnormal = 0, saturated = 0, fl = 0;
    for (uint32_t l = 0; l < FPKI_BLOCKQ_LANES; l++) {
        uint32_t xv = x[l], a = xv & FPKI_F32_MAG, val, f, km;
        float xf = fpki_blockq_f32(xv);
        uint32_t xs = how == FPKI_BLOCKQ_MUL   ? fpki_blockq_bits(xf * mf)
                      : how == FPKI_BLOCKQ_DIV ? fpki_blockq_bits(xf / mf)
                                               : xv;
        code[l] = fpki_blockq_round(p, mode, toff, xs, mode == FPK_SR ? rnd[l] : 0, &val, &f, &km);
        uint32_t yb = fpki_blockq_bits(fpki_blockq_f32(val) * dec);
        y[l] = fpki_select((yb & FPKI_F32_MAG) > FPKI_F32_INF, FPKI_F32_QNAN, yb);
        uint32_t counted = a - 1 < FPKI_F32_INF - 1;
        /* squared whatever they are, then masked: a product under a
         * condition, which might trap, is not vectorised */
        double xd = (double)xf, ed = (double)fpki_blockq_f32(y[l]) - xd;
        tx[l] = fpki_blockq_mask(xd * xd, counted);
        te[l] = fpki_blockq_mask(ed * ed, counted);
        zeros += (l < live) & (a == 0);
        flushed += counted & (km == 0);
        subnormal += counted & (km - 1 < (1u << m) - 1);
        saturated += counted & ((f & FPK_OVERFLOW) != 0);
        fl |= f;
    }
    t->zeros += zeros;
    t->flushed += flushed;
    t->subnormal += subnormal;
    t->saturated += saturated;
    t->flags |= fl;
}

/* One block of W elements at X (W <= the block's width), scaled as B,
 * sixteen at a time; the rest as fpki_blockq_fn says. */
FPKI_INLINE void fpki_blockq_block_run(const fpki_blockq_plan *p, fpk_round mode,
                                       fpki_blockq_how how, const fpki_blockq_block *b,
                                       const uint32_t *x, size_t w, uint64_t index,
                                       uint8_t *codes, uint32_t *y, double *sums,
                                       fpki_blockq_counts *c)
{
    enum { L = FPKI_BLOCKQ_LANES };
    const int32_t toff = p->bias - 127 - (how == FPKI_BLOCKQ_POW2 ? b->k : 0);
    const float mf = fpki_blockq_f32(b->m), dec = fpki_blockq_f32(b->decode);
    double lx[L] = {0}, le[L] = {0};
    fpki_blockq_tally t = {0};
    if (b->nan) {
        /* the NaN and no flags; only zeros and non-finite inputs count */
        for (size_t i = 0; i < w; i++) {
            uint32_t a = x[i] & FPKI_F32_MAG;
            t.zeros += a == 0;
            t.nonfinite += a >= FPKI_F32_INF;
            if (codes)
                codes[i] = (uint8_t)p->nan;
            if (y)
                y[i] = FPKI_F32_QNAN;
        }
    } else {
        for (size_t i = 0; i < w; i += L) {
            uint32_t live = (uint32_t)(w - i < L ? w - i : L), rnd[L], code[L], yv[L], xin[L];
            double tx[L], te[L];
            const uint32_t *xi = x + i;
            if (live < L) {
                for (uint32_t l = 0; l < L; l++)
                    xin[l] = l < live ? xi[l] : 0;
                xi = xin;
            }
            if (mode == FPK_SR)
                for (int l = 0; l < L; l++)
                    rnd[l] = fpki_sr_bits(p->seed_mix, index + i + (uint64_t)l);
            fpki_blockq_tile(p, mode, how, toff, mf, dec, xi, rnd, live, code, yv, tx, te, &t);
            for (int l = 0; l < L; l++) {
                lx[l] += tx[l];
                le[l] += te[l];
            }
            if (codes && live == L)
                for (int l = 0; l < L; l++)
                    codes[i + (size_t)l] = (uint8_t)code[l];
            else if (codes)
                for (uint32_t l = 0; l < live; l++)
                    codes[i + l] = (uint8_t)code[l];
            if (y && live == L)
                memcpy(y + i, yv, sizeof yv);
            else if (y)
                memcpy(y + i, yv, live * sizeof *yv);
        }
    }
    sums[0] = fpki_blockq_fold(lx);
    sums[1] = fpki_blockq_fold(le);
    c->zeros += t.zeros;
    c->nonfinite += t.nonfinite;
    c->flushed += t.flushed;
    c->saturated += t.saturated;
    c->subnormal += t.subnormal;
    c->flags |= t.flags;
}

/* fpki_blockq_fn's body with MODE and HOW fixed. */
FPKI_INLINE void fpki_blockq_run(const fpki_blockq_plan *p, fpk_round mode, fpki_blockq_how how,
                                 const fpki_blockq_block *b, size_t w, const uint32_t *x, size_t n,
                                 uint64_t index, uint8_t *codes, uint32_t *y, double *sums,
                                 fpki_blockq_counts *c)
{
    for (size_t i = 0, j = 0; i < n; i += w, j++) {
        size_t len = n - i < w ? n - i : w;
        fpki_prefetch(x + i, len * sizeof *x);
        fpki_blockq_block_run(p, mode, how, &b[j], x + i, len, index + i, codes ? codes + i : NULL,
                              y ? y + i : NULL, sums + 2 * j, c);
    }
}

/* fpki_blockq_fn's body: P's mode and scaling, each compiled as a
 * constant. */
FPKI_INLINE void fpki_blockq_generic(const fpki_blockq_plan *p, const fpki_blockq_block *b,
                                     size_t w, const uint32_t *x, size_t n, uint64_t index,
                                     uint8_t *codes, uint32_t *y, double *sums,
                                     fpki_blockq_counts *c)
{
#define RUN(mode, how) fpki_blockq_run(p, mode, how, b, w, x, n, index, codes, y, sums, c)
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

/* fpki_blockq_extremes_fn's body: sixteen at a time in lanes of their
 * own (a loop of fixed length, which the compiler vectorises), the tail
 * padded with zeros, which change none of the extremes. */
FPKI_INLINE void fpki_blockq_extremes_generic(const uint32_t *x, size_t n, size_t w, uint32_t *amax,
                                              uint32_t *amin, uint8_t *nonfinite)
{
    enum { L = FPKI_BLOCKQ_LANES };
    for (size_t i = 0, j = 0; i < n; i += w, j++) {
        size_t len = n - i < w ? n - i : w;
        uint32_t hi[L], lo[L], top[L];
        for (int l = 0; l < L; l++) {
            hi[l] = amax[j];
            lo[l] = amin[j];
            top[l] = 0;
        }
        for (size_t k = 0; k < len; k += L) {
            uint32_t t[L];
            const uint32_t *xk = x + i + k;
            if (len - k < L) {
                for (size_t l = 0; l < L; l++)
                    t[l] = l < len - k ? xk[l] : 0;
                xk = t;
            }
            if (k % 64 == 0)
                fpki_prefetch(xk, 256);
            for (int l = 0; l < L; l++) {
                uint32_t a = xk[l] & FPKI_F32_MAG;
                uint32_t fin = a < FPKI_F32_INF ? a : 0;
                uint32_t least = a - 1 < FPKI_F32_INF - 1 ? a : FPKI_F32_INF;
                hi[l] = hi[l] > fin ? hi[l] : fin;
                lo[l] = lo[l] < least ? lo[l] : least;
                top[l] = top[l] > a ? top[l] : a;
            }
        }
        uint32_t h = 0, lw = FPKI_F32_INF, nf = 0;
        for (int l = 0; l < L; l++) {
            h = hi[l] > h ? hi[l] : h;
            lw = lo[l] < lw ? lo[l] : lw;
            nf |= top[l] >= FPKI_F32_INF;
        }
        amax[j] = h;
        amin[j] = lw;
        nonfinite[j] |= (uint8_t)nf;
    }
}

#endif
