/* The conversion and widening kernels' portable bodies (kernels.h:
 * fpki_convert_fn, fpki_widen_fn), instantiated by convert_c.c,
 * convert_avx2.c and convert_avx512.c: branch-free integer code on float32
 * encodings, a block at a time, that the compiler vectorises. */
#ifndef FPKIT_CONVERT_BODY_H
#define FPKIT_CONVERT_BODY_H

#include "kernel-util.h"

/* Whether P converts without options (no ftz, daz, saturate or tininess
 * before rounding): the common case, which the kernels specialise. */
FPKI_INLINE bool fpki_conv_plain(const fpki_conv_plan *p)
{
    return !p->ftz && !p->daz && !p->saturate && !p->tiny_before;
}

/* Rounds the float32 encoding X into F (a format narrower than float32 in
 * both fields, known at compile time) under MODE, as fpk_convert does with
 * the options given (none when PLAIN), and returns the encoding, or with
 * QUANT its value as a float32 encoding; *FLAGS := the flags raised.  RND
 * is the top 32 bits of the element's SR hash, SH = 32 - sr_bits.
 *
 * Finite X = sig * 2^(q - d): the grid's ulp is 2^q, and the D low bits of
 * V (X's magnitude rebiased into F's exponent, or for results below F's
 * smallest normal, X's significand with its hidden bit) are discarded.
 * D can exceed 31 only when all of a 24-bit significand goes; it is
 * clamped there, which keeps every bit test right.  Zeros need no case of
 * their own (V is 0); infinities and NaNs are overridden at the end.  With
 * RARE, overflows, infinities and NaNs are left wrong and *RARE says
 * whether X is one. */
FPKI_INLINE uint32_t fpki_round_one(const fpk_format *f, fpk_round mode, bool quant, bool plain,
                                    uint32_t ftz, uint32_t daz, uint32_t sat, uint32_t tb,
                                    uint32_t sh, uint32_t x, uint32_t rnd, uint32_t *flags,
                                    uint32_t *rare)
{
    const int m = f->man_bits, d0 = 23 - m, emin = f->emin;
    const uint32_t rebias = (uint32_t)(127 - f->bias) << 23;
    const uint32_t min_normal = (uint32_t)(emin + 127) << 23;
    /* Tininess after rounding at F's precision with an unbounded exponent
     * (docs/DESIGN.md "Tininess and underflow"): below min normal, a value
     * reaches it when it lies at least half an ulp of the binade below it
     * (RNE) or anything at all (rounding away) under it.  In float32
     * encodings, whose ulp there is 2^lsb_below: */
    const int lsb_below = emin - 1 >= -126 ? emin - 24 : -149;
    const uint32_t tiny_ne = min_normal - (1u << (emin - m - 2 - lsb_below));
    const uint32_t tiny_away = min_normal - (1u << (emin - m - 1 - lsb_below)) + 1;
    const uint32_t maxf = (uint32_t)f->max_finite, inf = (uint32_t)f->inf;
    const uint32_t nan = (uint32_t)f->nan, sign_shift = (uint32_t)(32 - f->width);
    const uint32_t max32 = (maxf << d0) + rebias;
    const uint32_t min_sub32 =
        emin - m >= -126 ? (uint32_t)(emin - m + 127) << 23 : 1u << (emin - m + 149);
    if (plain)
        ftz = daz = sat = tb = 0;

    uint32_t s = x & FPKI_F32_SIGN, a = x & FPKI_F32_MAG;
    uint32_t dd, d, v, sig = 0;
    if (emin == -126) {
        /* F's exponents reach as low as float32's: its subnormals are
         * float32's, and one shift serves every value. */
        dd = d = (uint32_t)d0;
        v = a;
    } else if (mode != FPK_SR && !quant) {
        /* Below min normal, V is the significand on F's subnormal grid
         * (shifted down by the exponents missing), with the bits shifted
         * out kept as a sticky bit below the rounding point: then one
         * constant shift rounds every value, as when RNE and RTZ need to
         * know no more than whether anything below half an ulp is set. */
        uint32_t ef = a >> 23;
        sig = (a & 0x7fffffu) | fpki_select(ef != 0, 0x800000u, 0);
        uint32_t gap = (uint32_t)(emin + 127) - (ef > 1 ? ef : 1);
        gap = gap - 1 < 31 ? gap : 31; /* 1 to 31 (other lanes do not use it) */
        uint32_t v_sub = sig >> gap | ((sig << (32 - gap)) != 0);
        dd = d = (uint32_t)d0;
        v = fpki_select(a < min_normal, v_sub, a - rebias);
    } else {
        uint32_t ef = a >> 23, sub = a < min_normal;
        sig = (a & 0x7fffffu) | fpki_select(ef != 0, 0x800000u, 0);
        dd = fpki_select(sub, (uint32_t)(d0 + emin + 127) - fpki_select(ef != 0, ef, 1),
                         (uint32_t)d0);
        d = fpki_select(dd < 31, dd, 31);
        v = fpki_select(sub, sig, a - rebias);
    }
    uint32_t kept = v >> d;
    uint32_t disc = v & ((1u << d) - 1);
    uint32_t inexact = disc != 0;
    uint32_t inc;
    if (mode == FPK_RNE) {
        /* Half an ulp, less one unless the kept part is odd, carries. */
        inc = ((v + ((1u << (d - 1)) - 1) + (kept & 1)) >> d) - kept;
    } else if (mode == FPK_RTZ) {
        inc = 0;
    } else {
        /* The top 32 bits of the discarded fraction of an ulp (both shift
         * counts kept in range: the select evaluates both sides). */
        uint32_t frac = disc << (32 - d0);
        if (emin != -126) {
            uint32_t up = fpki_select(dd < 32, 32 - dd, 0);
            uint32_t down = fpki_select(dd > 32, fpki_select(dd < 63, dd - 32, 31), 0);
            frac = fpki_select(dd < 32, disc << up, sig >> down);
        }
        inc = inexact & ((rnd >> sh) < (frac >> sh));
    }
    /* Results below min normal never pass max finite. */
    uint32_t k = kept + inc, of = k > maxf;
    /* Overflow to infinity or to max finite: SR has gone the way of RUP or
     * RDN when it incremented, of RTZ when not, and an exact value
     * overflows as under RNE. */
    uint32_t of_inf = mode == FPK_RNE ? 1 : mode == FPK_RTZ ? 0 : inc | (inexact ^ 1);
    uint32_t tiny_after = mode == FPK_RNE   ? tiny_ne
                          : mode == FPK_RTZ ? min_normal
                                            : fpki_select(inc, tiny_away, min_normal);
    uint32_t uf = inexact & (a < fpki_select(tb, min_normal, tiny_after));
    uint32_t flushed = ftz & (k != 0) & (k < (1u << m));
    uint32_t fl = (inexact | flushed) * FPK_INEXACT | (uf | flushed) * FPK_UNDERFLOW;

    uint32_t z, z_inf, z_max, z_nan, z_zero;
    if (quant) {
        uint32_t q = ((a >> d) + inc) << d;
        if (emin != -126)
            q = fpki_select(dd <= 23, q, fpki_select(inc, min_sub32, 0));
        z = s | fpki_select(flushed, 0, q);
        z_max = s | max32;
        z_inf = inf ? s | FPKI_F32_INF : FPKI_F32_QNAN;
        z_nan = FPKI_F32_QNAN;
        z_zero = s;
    } else {
        uint32_t zs = s >> sign_shift;
        z = zs | fpki_select(flushed, 0, k);
        z_max = zs | maxf;
        z_inf = inf ? zs | inf : nan;
        z_nan = nan;
        z_zero = zs;
    }
    /* Overflow, infinities and NaNs (whose K is beyond max finite too),
     * last, by selects; or only reported, for a second pass. */
    if (rare) {
        *rare = of;
        *flags = fl;
        return z;
    }
    z_inf = fpki_select(sat, z_max, z_inf);
    z = fpki_select(of, fpki_select(of_inf, z_inf, z_max), z);
    fl = fpki_select(of, FPK_OVERFLOW | FPK_INEXACT, fl);
    if (!plain) {
        uint32_t zero = daz & (a < FPKI_F32_MIN_NORMAL);
        z = fpki_select(zero, z_zero, z);
        fl = fpki_select(zero, 0, fl);
    }
    /* Infinity: NaN (or max finite) with invalid where F has none; NaN:
     * invalid if signaling. */
    uint32_t special = a >= FPKI_F32_INF, is_nan = a > FPKI_F32_INF;
    z = fpki_select(special, fpki_select(is_nan, z_nan, z_inf), z);
    fl = fpki_select(special,
                     fpki_select(is_nan, fpki_select((a & FPKI_F32_QUIET) != 0, 0, FPK_INVALID),
                                 inf ? 0 : FPK_INVALID),
                     fl);
    *flags = fl;
    return z;
}

/* One block: Z[i] := fpki_round_one of X[i]; returns the flags of all. */
FPKI_INLINE unsigned fpki_convert_block(const fpk_format *f, fpk_round mode, bool quant, bool plain,
                                        const fpki_conv_plan *p, const uint32_t *restrict x,
                                        uint32_t *restrict z, const uint32_t *restrict rnd)
{
    const uint32_t ftz = p->ftz, daz = p->daz, sat = p->saturate, tb = p->tiny_before;
    const uint32_t sh = (uint32_t)p->sr_shift;
    /* The flags per element first, ORed after: folded into the loop, the
     * OR would meet the selects and stop the vectoriser.  Without options,
     * a first pass leaves out overflows, infinities and NaNs, and a block
     * that holds one (seldom) is done again in full. */
    uint32_t fe[FPKI_BLOCK], fl = 0, rare = 0;
    if (plain) {
        uint32_t rr[FPKI_BLOCK];
        for (int i = 0; i < FPKI_BLOCK; i++)
            z[i] = fpki_round_one(f, mode, quant, true, 0, 0, 0, 0, sh, x[i],
                                  mode == FPK_SR ? rnd[i] : 0, &fe[i], &rr[i]);
        for (int i = 0; i < FPKI_BLOCK; i++)
            rare |= rr[i];
    }
    if (!plain || rare)
        for (int i = 0; i < FPKI_BLOCK; i++)
            z[i] = fpki_round_one(f, mode, quant, plain, ftz, daz, sat, tb, sh, x[i],
                                  mode == FPK_SR ? rnd[i] : 0, &fe[i], NULL);
    for (int i = 0; i < FPKI_BLOCK; i++)
        fl |= fe[i];
    return fl;
}

/* Stores the first N of BLOCK's elements at element I of Z, SIZE bytes
 * each; STREAM (a whole block, Z + I * SIZE aligned to 64 bytes) may use
 * non-temporal stores. */
typedef void fpki_store_fn(void *z, size_t i, const uint32_t *block, size_t n, size_t size,
                           bool stream);

/* T := BLOCK's elements narrowed to SIZE bytes each (loops the compiler
 * vectorises). */
FPKI_INLINE void fpki_narrow_block(const uint32_t *restrict block, void *restrict t, size_t size)
{
    if (size == 1)
        for (int j = 0; j < FPKI_BLOCK; j++)
            ((uint8_t *)t)[j] = (uint8_t)block[j];
    else if (size == 2)
        for (int j = 0; j < FPKI_BLOCK; j++)
            ((uint16_t *)t)[j] = (uint16_t)block[j];
    else
        memcpy(t, block, 4 * FPKI_BLOCK);
}

/* The plain store: a whole block narrowed straight into Z (a loop the
 * compiler vectorises), a part of one element by element. */
FPKI_INLINE void fpki_store_plain(void *restrict z, size_t i, const uint32_t *restrict block,
                                  size_t n, size_t size)
{
    uint8_t *z8 = (uint8_t *)z + i;
    uint16_t *z16 = (uint16_t *)z + i;
    uint32_t *z32 = (uint32_t *)z + i;
    if (n == FPKI_BLOCK) {
        if (size == 1)
            for (int j = 0; j < FPKI_BLOCK; j++)
                z8[j] = (uint8_t)block[j];
        else if (size == 2)
            for (int j = 0; j < FPKI_BLOCK; j++)
                z16[j] = (uint16_t)block[j];
        else
            for (int j = 0; j < FPKI_BLOCK; j++)
                z32[j] = block[j];
        return;
    }
    for (size_t j = 0; j < n; j++)
        if (size == 1)
            z8[j] = (uint8_t)block[j];
        else if (size == 2)
            z16[j] = (uint16_t)block[j];
        else
            z32[j] = block[j];
}

/* Converts X[0..N-1] into Z with F and MODE fixed (see fpki_convert_fn). */
FPKI_INLINE unsigned fpki_convert_run(const fpk_format *f, fpk_round mode, bool quant, bool plain,
                                      const fpki_conv_plan *p, const uint32_t *x, void *z, size_t n,
                                      uint64_t index, bool stream, fpki_store_fn *store)
{
    uint32_t in[FPKI_BLOCK], out[FPKI_BLOCK], rnd[FPKI_BLOCK];
    size_t size = quant ? 4 : f->width <= 8 ? 1 : f->width <= 16 ? 2 : 4;
    size_t head = stream ? fpki_stream_head(z, size) : SIZE_MAX;
    unsigned fl = 0;
    for (size_t i = 0; i < n;) {
        size_t k = n - i < FPKI_BLOCK ? n - i : FPKI_BLOCK;
        if (i < head && head - i < k)
            k = head - i;
        const uint32_t *src = x + i;
        fpki_prefetch(src, 4 * FPKI_BLOCK);
        if (k < FPKI_BLOCK) {
            memcpy(in, src, k * 4);
            memset(in + k, 0, (FPKI_BLOCK - k) * 4);
            src = in;
        }
        if (mode == FPK_SR)
            fpki_sr_block(p->seed_mix, index + i, rnd);
        fl |= fpki_convert_block(f, mode, quant, plain, p, src, out, rnd);
        bool full = k == FPKI_BLOCK && head != SIZE_MAX && i >= head;
        if (full)
            store(z, i, out, k, size, true);
        else
            fpki_store_plain(z, i, out, k, size);
        i += k;
    }
    return fl;
}

/* fpki_convert_run for P's format and mode; options only where P has
 * some. */
FPKI_INLINE unsigned fpki_convert_mode(const fpk_format *f, fpk_round mode, const fpki_conv_plan *p,
                                       const uint32_t *x, void *z, size_t n, uint64_t index,
                                       bool stream, fpki_store_fn *store)
{
    bool plain = fpki_conv_plain(p);
    if (p->quant)
        return plain ? fpki_convert_run(f, mode, true, true, p, x, z, n, index, stream, store)
                     : fpki_convert_run(f, mode, true, false, p, x, z, n, index, stream, store);
    return plain ? fpki_convert_run(f, mode, false, true, p, x, z, n, index, stream, store)
                 : fpki_convert_run(f, mode, false, false, p, x, z, n, index, stream, store);
}

/* fpki_convert_mode for P's mode. */
FPKI_INLINE unsigned fpki_convert_format(const fpk_format *f, const fpki_conv_plan *p,
                                         const uint32_t *x, void *z, size_t n, uint64_t index,
                                         bool stream, fpki_store_fn *store)
{
    switch (p->mode) {
    case FPK_RNE: return fpki_convert_mode(f, FPK_RNE, p, x, z, n, index, stream, store);
    case FPK_RTZ: return fpki_convert_mode(f, FPK_RTZ, p, x, z, n, index, stream, store);
    default: return fpki_convert_mode(f, FPK_SR, p, x, z, n, index, stream, store);
    }
}

/* fpki_convert_fn's body: P's format and mode, each compiled as a
 * constant; STORE writes the blocks. */
FPKI_INLINE unsigned fpki_convert_generic(const fpki_conv_plan *p, const uint32_t *x, void *z,
                                          size_t n, uint64_t index, bool stream,
                                          fpki_store_fn *store){
#define RUN(f) return fpki_convert_format(f, p, x, z, n, index, stream, store)
    FPKI_KFORMAT_SWITCH(p->format, RUN)
#undef RUN
}

/* A small format's encoding B as float32, exactly (see fpki_widen_fn). */
FPKI_INLINE uint32_t fpki_widen_one(const fpk_format *f, uint32_t b, bool daz)
{
    const int m = f->man_bits;
    uint32_t s = b & (uint32_t)f->sign_mask ? FPKI_F32_SIGN : 0;
    uint32_t mag = b & (uint32_t)(f->exp_mask | f->man_mask), man = mag & (uint32_t)f->man_mask;
    if (mag > f->max_finite) {
        if (mag == f->inf)
            return s | FPKI_F32_INF;
        /* The payload keeps its place below the quiet bit; FN formats'
         * one NaN is quiet. */
        uint32_t quiet = f->special == FPK_SPECIAL_IEEE ? 0 : FPKI_F32_QUIET;
        return s | FPKI_F32_INF | quiet | man << (23 - m);
    }
    uint32_t e = mag >> m;
    if (e == 0) {
        if (man == 0 || daz)
            return s;
        /* man * 2^(emin - m) with man's top bit at TOP. */
        int top = 31 - __builtin_clz(man);
        return s | (uint32_t)(top - m + f->emin + 127) << 23 | (man << (23 - top) & 0x7fffffu);
    }
    return s | (uint32_t)((int)e - f->bias + 127) << 23 | man << (23 - m);
}

/* fp16 to float32 for a whole block, as fpki_widen_one gives it, free of
 * branches: a subnormal man * 2^-24 is the float32 conversion of man
 * (exact: man < 2^10) with its exponent lowered by 24, or under DAZ a
 * zero. */
FPKI_INLINE void fpki_widen_fp16_block(const uint16_t *restrict x, uint32_t *restrict z,
                                       uint32_t daz)
{
    for (int i = 0; i < FPKI_BLOCK; i++) {
        uint32_t h = x[i];
        uint32_t s = (h & 0x8000u) << 16, e = h >> 10 & 31, mag = (h & 0x7fffu) << 13;
        uint32_t man = h & 0x3ffu, sub;
        float man_f = (float)(int32_t)man;
        memcpy(&sub, &man_f, sizeof sub);
        sub = fpki_select((man != 0) & (daz ^ 1), sub - (24u << 23), 0);
        uint32_t r =
            fpki_select(e == 31, mag | FPKI_F32_INF, fpki_select(e != 0, mag + (112u << 23), sub));
        z[i] = s | r;
    }
}

/* fpki_widen_fn's body: a block at a time, the last one padded; fp16 by
 * fpki_widen_fp16_block, bf16 by a shift, the 8-bit formats by a table. */
FPKI_INLINE void fpki_widen_generic(fpki_kformat from, const void *restrict x, uint32_t *restrict z,
                                    size_t n, bool daz)
{
    const uint32_t flush = daz;
    const fpk_format *f = fpki_kformat_descriptor(from);
    size_t size = f->width / 8;
    /* 8-bit: a table of all 256 values. */
    uint32_t tab[256];
    if (size == 1)
        for (uint32_t b = 0; b < 256; b++)
            tab[b] = fpki_widen_one(f, b, daz);
    uint16_t in[FPKI_BLOCK];
    uint32_t out[FPKI_BLOCK];
    for (size_t i = 0; i < n; i += FPKI_BLOCK) {
        size_t k = n - i < FPKI_BLOCK ? n - i : FPKI_BLOCK;
        memset(in, 0, sizeof in);
        if (size == 1)
            for (size_t j = 0; j < k; j++)
                in[j] = ((const uint8_t *)x)[i + j];
        else
            memcpy(in, (const uint16_t *)x + i, 2 * k);
        if (from == FPKI_KFORMAT_FP16) {
            fpki_widen_fp16_block(in, out, flush);
        } else if (from == FPKI_KFORMAT_BF16) {
            for (int j = 0; j < FPKI_BLOCK; j++)
                out[j] = (uint32_t)in[j] << 16 &
                         fpki_select(flush & ((in[j] & 0x7f80u) == 0), FPKI_F32_SIGN, 0xffffffffu);
        } else {
            for (int j = 0; j < FPKI_BLOCK; j++)
                out[j] = tab[in[j] & 0xff];
        }
        memcpy(z + i, out, 4 * k);
    }
}

#endif
