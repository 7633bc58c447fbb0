/* The array kernels' bodies, for instantiation: array_kern*.c compile them
 * once per instruction set, each time with the format and mode known, so
 * that the compiler folds the format's constants and vectorises the loops.
 * Everything here is branch-free integer code on float32 encodings; the
 * one exception, a rare element that needs a scalar fix-up (a subnormal
 * fp16 to widen, a float32 subnormal in the histogram), is found by a
 * vector OR over its block first. */
#ifndef FPKIT_ARRAY_KERN_H
#define FPKIT_ARRAY_KERN_H

#include <string.h>

#include "kernels.h"

/* The squared errors' sums round each product before it is added, as
 * fpk_array_sqerr promises (the kernels' bodies included), so nothing is
 * contracted here; the kernels' own fused multiply-adds (sq8_exact,
 * sqerr_avx512) square only float32 values, exactly in double, where one
 * rounding is the same.  Nothing else in the kernels multiplies floats. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define FPKI_INLINE static inline __attribute__((always_inline))

#define FPKI_F32_SIGN 0x80000000u
#define FPKI_F32_MAG 0x7fffffffu
#define FPKI_F32_INF 0x7f800000u
#define FPKI_F32_QNAN 0x7fc00000u
#define FPKI_F32_QUIET 0x00400000u
#define FPKI_F32_MIN_NORMAL 0x00800000u

/* fpk_sr_hash (ctx.c), restated here so that the kernels can inline it:
 * SplitMix64's finaliser applied to mix(seed) ^ (counter * golden + c). */
FPKI_INLINE uint64_t fpki_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

#define FPKI_SR_GOLDEN 0x9e3779b97f4a7c15u /* the counter's multiplier */
#define FPKI_SR_OFFSET 0x632be59bd9b4e019u /* and what is added to the product */

/* The top 32 bits of fpk_sr_hash(seed, CTR), SEED_MIX being
 * fpki_mix64(seed). */
FPKI_INLINE uint32_t fpki_sr_bits(uint64_t seed_mix, uint64_t ctr)
{
    return (uint32_t)(fpki_mix64(seed_mix ^ (ctr * FPKI_SR_GOLDEN + FPKI_SR_OFFSET)) >> 32);
}

/* R[i] := fpki_sr_bits(SEED_MIX, INDEX + i). */
FPKI_INLINE void fpki_sr_block(uint64_t seed_mix, uint64_t index, uint32_t *restrict r)
{
    for (int i = 0; i < FPKI_BLOCK; i++)
        r[i] = fpki_sr_bits(seed_mix, index + (uint64_t)i);
}

/* C (0 or 1) ? A : B, as a mask, which the vectoriser takes where it
 * would refuse some conditional expressions. */
FPKI_INLINE uint32_t fpki_sel(uint32_t c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - c;
    return (a & m) | (b & ~m);
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
FPKI_INLINE uint32_t fpki_conv1(const fpk_format *f, fpk_round mode, bool quant, bool plain,
                                uint32_t ftz, uint32_t daz, uint32_t sat, uint32_t tb,
                                uint32_t sh, uint32_t x, uint32_t rnd, uint32_t *flags,
                                uint32_t *rare)
{
    const int m = f->man_bits, d0 = 23 - m, emin = f->emin;
    const uint32_t rebias = (uint32_t)(127 - f->bias) << 23;
    const uint32_t min_normal = (uint32_t)(emin + 127) << 23;
    /* Tininess after rounding at F's precision with an unbounded exponent
     * (DESIGN.md): below min normal, a value reaches it when it lies at
     * least half an ulp of the binade below it (RNE) or anything at all
     * (rounding away) under it.  In float32 encodings, whose ulp there is
     * 2^lsb_below: */
    const int lsb_below = emin - 1 >= -126 ? emin - 24 : -149;
    const uint32_t tiny_ne = min_normal - (1u << (emin - m - 2 - lsb_below));
    const uint32_t tiny_away = min_normal - (1u << (emin - m - 1 - lsb_below)) + 1;
    const uint32_t maxf = (uint32_t)f->max_finite, inf = (uint32_t)f->inf;
    const uint32_t nan = (uint32_t)f->nan, sign_shift = (uint32_t)(32 - f->width);
    const uint32_t max32 = (maxf << d0) + rebias;
    const uint32_t min_sub32 = emin - m >= -126 ? (uint32_t)(emin - m + 127) << 23
                                                 : 1u << (emin - m + 149);
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
        sig = (a & 0x7fffffu) | fpki_sel(ef != 0, 0x800000u, 0);
        uint32_t gap = (uint32_t)(emin + 127) - (ef > 1 ? ef : 1);
        gap = gap - 1 < 31 ? gap : 31; /* 1 to 31 (other lanes do not use it) */
        uint32_t v_sub = sig >> gap | ((sig << (32 - gap)) != 0);
        dd = d = (uint32_t)d0;
        v = fpki_sel(a < min_normal, v_sub, a - rebias);
    } else {
        uint32_t ef = a >> 23, sub = a < min_normal;
        sig = (a & 0x7fffffu) | fpki_sel(ef != 0, 0x800000u, 0);
        dd = fpki_sel(sub, (uint32_t)(d0 + emin + 127) - fpki_sel(ef != 0, ef, 1), (uint32_t)d0);
        d = fpki_sel(dd < 31, dd, 31);
        v = fpki_sel(sub, sig, a - rebias);
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
            uint32_t up = fpki_sel(dd < 32, 32 - dd, 0);
            uint32_t down = fpki_sel(dd > 32, fpki_sel(dd < 63, dd - 32, 31), 0);
            frac = fpki_sel(dd < 32, disc << up, sig >> down);
        }
        inc = inexact & ((rnd >> sh) < (frac >> sh));
    }
    /* Results below min normal never pass max finite. */
    uint32_t k = kept + inc, of = k > maxf;
    /* Overflow to infinity or to max finite: SR has gone the way of RUP or
     * RDN when it incremented, of RTZ when not, and an exact value
     * overflows as under RNE. */
    uint32_t of_inf = mode == FPK_RNE ? 1 : mode == FPK_RTZ ? 0 : inc | (inexact ^ 1);
    uint32_t tiny_after = mode == FPK_RNE ? tiny_ne
                          : mode == FPK_RTZ ? min_normal
                                            : fpki_sel(inc, tiny_away, min_normal);
    uint32_t uf = inexact & (a < fpki_sel(tb, min_normal, tiny_after));
    uint32_t flushed = ftz & (k != 0) & (k < (1u << m));
    uint32_t fl = (inexact | flushed) * FPK_INEXACT | (uf | flushed) * FPK_UNDERFLOW;

    uint32_t z, z_inf, z_max, z_nan, z_zero;
    if (quant) {
        uint32_t q = ((a >> d) + inc) << d;
        if (emin != -126)
            q = fpki_sel(dd <= 23, q, fpki_sel(inc, min_sub32, 0));
        z = s | fpki_sel(flushed, 0, q);
        z_max = s | max32;
        z_inf = inf ? s | FPKI_F32_INF : FPKI_F32_QNAN;
        z_nan = FPKI_F32_QNAN;
        z_zero = s;
    } else {
        uint32_t zs = s >> sign_shift;
        z = zs | fpki_sel(flushed, 0, k);
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
    z_inf = fpki_sel(sat, z_max, z_inf);
    z = fpki_sel(of, fpki_sel(of_inf, z_inf, z_max), z);
    fl = fpki_sel(of, FPK_OVERFLOW | FPK_INEXACT, fl);
    if (!plain) {
        uint32_t zero = daz & (a < FPKI_F32_MIN_NORMAL);
        z = fpki_sel(zero, z_zero, z);
        fl = fpki_sel(zero, 0, fl);
    }
    /* Infinity: NaN (or max finite) with invalid where F has none; NaN:
     * invalid if signaling. */
    uint32_t special = a >= FPKI_F32_INF, is_nan = a > FPKI_F32_INF;
    z = fpki_sel(special, fpki_sel(is_nan, z_nan, z_inf), z);
    fl = fpki_sel(special,
                  fpki_sel(is_nan, fpki_sel((a & FPKI_F32_QUIET) != 0, 0, FPK_INVALID),
                           inf ? 0 : FPK_INVALID),
                  fl);
    *flags = fl;
    return z;
}

/* One block: Z[i] := fpki_conv1 of X[i]; returns the flags of all. */
FPKI_INLINE unsigned fpki_conv_block(const fpk_format *f, fpk_round mode, bool quant, bool plain,
                                     const fpki_conv *p, const uint32_t *restrict x,
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
            z[i] = fpki_conv1(f, mode, quant, true, 0, 0, 0, 0, sh, x[i],
                              mode == FPK_SR ? rnd[i] : 0, &fe[i], &rr[i]);
        for (int i = 0; i < FPKI_BLOCK; i++)
            rare |= rr[i];
    }
    if (!plain || rare)
        for (int i = 0; i < FPKI_BLOCK; i++)
            z[i] = fpki_conv1(f, mode, quant, plain, ftz, daz, sat, tb, sh, x[i],
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
FPKI_INLINE void fpki_narrow(const uint32_t *restrict block, void *restrict t, size_t size)
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

/* Bytes ahead of a stream's reads to prefetch: the kernels do much per
 * cache line, too much for the hardware alone to keep enough misses in
 * flight.  Into L2, not L1 (T1, locality 2): a prefetch into L1 holds one
 * of its few fill buffers until the line arrives, and the statistics ran
 * at 2.35-2.5 Gelem/s streamed against 2.6-2.8 so; a load from L2 is
 * short enough for the out-of-order core to cover. */
#define FPKI_PREFETCH 4096

/* Prefetches the lines of the block of N bytes at P + FPKI_PREFETCH. */
FPKI_INLINE void fpki_prefetch(const void *p, size_t n)
{
    for (size_t b = 0; b < n; b += 64)
        __builtin_prefetch((const char *)p + FPKI_PREFETCH + b, 0, 2);
}

/* The elements before Z's first 64-byte boundary, or SIZE_MAX if Z is not
 * aligned to its elements (then nothing streams). */
FPKI_INLINE size_t fpki_stream_head(const void *z, size_t size)
{
    uintptr_t at = (uintptr_t)z;
    if (at % size)
        return SIZE_MAX;
    return (64 - at % 64) % 64 / size;
}

/* Converts X[0..N-1] into Z with F and MODE fixed (see fpki_conv_fn). */
FPKI_INLINE unsigned fpki_conv_run(const fpk_format *f, fpk_round mode, bool quant, bool plain,
                                   const fpki_conv *p, const uint32_t *x, void *z, size_t n,
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
        fl |= fpki_conv_block(f, mode, quant, plain, p, src, out, rnd);
        bool full = k == FPKI_BLOCK && head != SIZE_MAX && i >= head;
        if (full)
            store(z, i, out, k, size, true);
        else
            fpki_store_plain(z, i, out, k, size);
        i += k;
    }
    return fl;
}

/* The built-in formats the kernels specialise, as descriptors whose fields
 * the compiler folds. */
static const fpk_format fpki_k_fp16 = FPKI_FORMAT_FP16;
static const fpk_format fpki_k_bf16 = FPKI_FORMAT_BF16;
static const fpk_format fpki_k_tf32 = FPKI_FORMAT_TF32;
static const fpk_format fpki_k_e4m3 = FPKI_FORMAT_E4M3;
static const fpk_format fpki_k_e5m2 = FPKI_FORMAT_E5M2;

/* fpki_conv_run for P's format and mode; options only where P has some. */
FPKI_INLINE unsigned fpki_conv_mode(const fpk_format *f, fpk_round mode, const fpki_conv *p,
                                    const uint32_t *x, void *z, size_t n, uint64_t index,
                                    bool stream, fpki_store_fn *store)
{
    bool plain = !p->ftz && !p->daz && !p->saturate && !p->tiny_before;
    if (p->quant)
        return plain ? fpki_conv_run(f, mode, true, true, p, x, z, n, index, stream, store)
                     : fpki_conv_run(f, mode, true, false, p, x, z, n, index, stream, store);
    return plain ? fpki_conv_run(f, mode, false, true, p, x, z, n, index, stream, store)
                 : fpki_conv_run(f, mode, false, false, p, x, z, n, index, stream, store);
}

FPKI_INLINE unsigned fpki_conv_fmt(const fpk_format *f, const fpki_conv *p, const uint32_t *x,
                                   void *z, size_t n, uint64_t index, bool stream,
                                   fpki_store_fn *store)
{
    switch (p->mode) {
    case FPK_RNE: return fpki_conv_mode(f, FPK_RNE, p, x, z, n, index, stream, store);
    case FPK_RTZ: return fpki_conv_mode(f, FPK_RTZ, p, x, z, n, index, stream, store);
    default: return fpki_conv_mode(f, FPK_SR, p, x, z, n, index, stream, store);
    }
}

/* fpki_conv_fn's body: P's format and mode, each compiled as a constant. */
FPKI_INLINE unsigned fpki_conv_any(const fpki_conv *p, const uint32_t *x, void *z, size_t n,
                                   uint64_t index, bool stream, fpki_store_fn *store)
{
    switch (p->fmt) {
    case FPKI_K_FP16: return fpki_conv_fmt(&fpki_k_fp16, p, x, z, n, index, stream, store);
    case FPKI_K_BF16: return fpki_conv_fmt(&fpki_k_bf16, p, x, z, n, index, stream, store);
    case FPKI_K_TF32: return fpki_conv_fmt(&fpki_k_tf32, p, x, z, n, index, stream, store);
    case FPKI_K_E4M3: return fpki_conv_fmt(&fpki_k_e4m3, p, x, z, n, index, stream, store);
    default: return fpki_conv_fmt(&fpki_k_e5m2, p, x, z, n, index, stream, store);
    }
}

/* A small format's encoding B as float32, exactly (see fpki_widen_fn). */
FPKI_INLINE uint32_t fpki_widen1(const fpk_format *f, uint32_t b, bool daz)
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

/* fp16 to float32 for a whole block: normals, zeros, infinities and NaNs
 * branch-free; returns whether any element was a subnormal, left for
 * fpki_widen1 (or made a zero under DAZ). */
FPKI_INLINE bool fpki_widen_fp16_block(const uint16_t *restrict x, uint32_t *restrict z,
                                       uint32_t daz)
{
    uint32_t any_sub = 0;
    for (int i = 0; i < FPKI_BLOCK; i++) {
        uint32_t h = x[i];
        uint32_t s = (h & 0x8000u) << 16, e = h >> 10 & 31, mag = (h & 0x7fffu) << 13;
        uint32_t r = fpki_sel(e == 31, mag | FPKI_F32_INF, fpki_sel(e != 0, mag + (112u << 23), 0));
        any_sub |= (e == 0) & (mag != 0);
        z[i] = s | r;
    }
    return any_sub & (daz ^ 1);
}

/* fpki_widen_fn's body: a block at a time, the last one padded. */
FPKI_INLINE void fpki_widen_any(fpk_dtype t, const void *restrict x, uint32_t *restrict z,
                                size_t n, bool daz)
{
    const uint32_t flush = daz;
    const fpk_format *f = t == FPK_DTYPE_F16    ? &fpki_k_fp16
                          : t == FPK_DTYPE_BF16 ? &fpki_k_bf16
                          : t == FPK_DTYPE_E4M3 ? &fpki_k_e4m3
                                                : &fpki_k_e5m2;
    size_t size = f->width / 8;
    /* 8-bit: a table of all 256 values. */
    uint32_t tab[256];
    if (size == 1)
        for (uint32_t b = 0; b < 256; b++)
            tab[b] = fpki_widen1(f, b, daz);
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
        if (t == FPK_DTYPE_F16) {
            if (fpki_widen_fp16_block(in, out, flush))
                for (size_t j = 0; j < k; j++)
                    if ((in[j] & 0x7c00u) == 0)
                        out[j] = fpki_widen1(f, in[j], daz);
        } else if (t == FPK_DTYPE_BF16) {
            for (int j = 0; j < FPKI_BLOCK; j++)
                out[j] = (uint32_t)in[j] << 16 &
                         fpki_sel(flush & ((in[j] & 0x7f80u) == 0), FPKI_F32_SIGN, 0xffffffffu);
        } else {
            for (int j = 0; j < FPKI_BLOCK; j++)
                out[j] = tab[in[j] & 0xff];
        }
        memcpy(z + i, out, 4 * k);
    }
}

/* Elements per statistics block. */
#define FPKI_SBLOCK 2048

/* The statistics of whole blocks: a vector pass for the extremes, the
 * special counts and the exponent fields; a scalar histogram of those
 * (eight tables, so that equal neighbours do not wait on each other); a
 * vector pass per four keys that the block's range leaves undecided; and
 * a scalar count of the float32 subnormals, eight at a time, only where
 * there are any. */
FPKI_INLINE void fpki_stats_any(const fpki_skeys *keys, const uint32_t *restrict x, size_t n,
                                fpki_sacc *acc)
{
    uint32_t hist[8][256];
    memset(hist, 0, sizeof hist);
    uint64_t padding = 0;
    uint32_t a[FPKI_SBLOCK], pad[FPKI_SBLOCK], active[FPKI_MAX_KEYS + 3];
    uint8_t e[FPKI_SBLOCK], sb[FPKI_SBLOCK];
    const bool sign = keys->sign;
    const uint32_t keep = sign ? 0xffffffffu : FPKI_F32_MAG;
    for (size_t i0 = 0; i0 < n; i0 += FPKI_SBLOCK) {
        size_t len = n - i0 < FPKI_SBLOCK ? n - i0 : FPKI_SBLOCK;
        const uint32_t *src = x + i0;
        if (len < FPKI_SBLOCK) {
            memcpy(pad, src, 4 * len);
            memset(pad + len, 0, 4 * (FPKI_SBLOCK - len));
            src = pad;
        }
        uint32_t amax = 0, lo = 0xffffffffu, any_sub = 0, zeros = 0, finite = 0;
        if (len == FPKI_SBLOCK)
            fpki_prefetch(src + FPKI_SBLOCK, 4 * FPKI_SBLOCK - FPKI_PREFETCH);
        for (int i = 0; i < FPKI_SBLOCK; i++) {
            uint32_t xi = src[i], mag = xi & FPKI_F32_MAG;
            uint32_t fin = mag < FPKI_F32_INF, finite_mag = fpki_sel(fin, mag, 0);
            uint32_t less = mag - 1; /* zero wraps above everything */
            uint32_t subnormal = less < 0x7fffffu;
            e[i] = (uint8_t)(mag >> 23);
            sb[i] = (uint8_t)subnormal;
            amax = finite_mag > amax ? finite_mag : amax;
            lo = less < lo ? less : lo;
            any_sub |= subnormal;
            zeros += mag == 0;
            finite += fin;
            a[i] = xi & keep;
        }
        /* The padding: zeros, counted out again below. */
        uint32_t padded = (uint32_t)(FPKI_SBLOCK - len);
        zeros -= padded;
        finite -= padded;
        if (amax > acc->amax)
            acc->amax = amax;
        for (size_t i = 0; i < len; i += 8) {
            uint64_t w;
            memcpy(&w, e + i, 8);
            hist[0][w & 0xff]++;
            hist[1][w >> 8 & 0xff]++;
            hist[2][w >> 16 & 0xff]++;
            hist[3][w >> 24 & 0xff]++;
            hist[4][w >> 32 & 0xff]++;
            hist[5][w >> 40 & 0xff]++;
            hist[6][w >> 48 & 0xff]++;
            hist[7][w >> 56]++;
        }
        padding += -len & 7; /* zeros beyond LEN in the last word */
        /* Keys the block's range decides, then the rest four at a time
         * (padded with copies of the last). */
        int na = 0;
        for (int k = 0; k < keys->n; k++) {
            uint32_t key = keys->key[k];
            if (!sign && key <= lo + 1)
                acc->below[k] += zeros; /* only zeros are below */
            else if (!sign && key > amax && key <= FPKI_F32_INF)
                acc->below[k] += finite; /* every finite element is below */
            else
                active[na++] = (uint32_t)k;
        }
        for (int j = 0; j < na; j += 4) {
            uint32_t k0 = keys->key[active[j]];
            uint32_t k1 = j + 1 < na ? keys->key[active[j + 1]] : k0;
            uint32_t k2 = j + 2 < na ? keys->key[active[j + 2]] : k0;
            uint32_t k3 = j + 3 < na ? keys->key[active[j + 3]] : k0;
            uint32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
            for (int i = 0; i < FPKI_SBLOCK; i++) {
                c0 += a[i] < k0;
                c1 += a[i] < k1;
                c2 += a[i] < k2;
                c3 += a[i] < k3;
            }
            uint32_t c[4] = {c0, c1, c2, c3};
            for (int t = 0; t < 4 && j + t < na; t++) {
                uint32_t key = keys->key[active[j + t]];
                acc->below[active[j + t]] += c[t] - (key > 0 ? padded : 0); /* padding zeros */
            }
        }
        if (any_sub)
            for (size_t i = 0; i < len; i += 8) {
                uint64_t w;
                memcpy(&w, sb + i, 8);
                for (size_t j = i; w && j < i + 8 && j < len; j++, w >>= 8)
                    if (w & 1)
                        acc->subnormal[31 - __builtin_clz(src[j] & FPKI_F32_MAG)]++;
            }
    }
    for (int b = 0; b < 256; b++)
        for (int t = 0; t < 8; t++)
            acc->hist[b] += hist[t][b];
    acc->hist[0] -= padding;
}

/* The top 32 bits of the fraction of an ulp that rounding the float32
 * magnitude A (nonzero, finite) times 2^K into a format of EMIN and M
 * discards: A * 2^K = sig * 2^e0 exactly, and d of its bits go. */
FPKI_INLINE uint32_t fpki_sr_frac(uint32_t a, int k, int emin, int m)
{
    uint32_t ef = a >> 23, sig = ef ? (a & 0x7fffffu) | 0x800000u : a;
    int e0 = (ef ? (int)ef : 1) - 150 + k, top = e0 + 31 - __builtin_clz(sig);
    int d = (top > emin ? top : emin) - m - e0;
    if (d <= 0)
        return 0;
    if (d <= 32)
        return (d < 32 ? sig & ((1u << d) - 1) : sig) << (32 - d);
    return d - 32 < 32 ? sig >> (d - 32) : 0;
}

/* fpki_srfix_fn's body, an element at a time. */
FPKI_INLINE void fpki_srfix_any(const fpki_srkeys *k, const uint32_t *x, size_t n,
                                uint64_t index, int64_t (*delta)[4])
{
    const uint64_t seed_mix = fpki_mix64(0);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = x[i] & FPKI_F32_MAG;
        if (a == 0 || a >= FPKI_F32_INF)
            continue;
        for (int j = 0; j < k->n; j++) {
            uint32_t v = x[i] & k->mask[j];
            int lo = fpki_class_below(k->tz[j], v), hi = fpki_class_below(k->away[j], v);
            if (lo == hi)
                continue;
            uint32_t frac = fpki_sr_frac(a, k->k, k->emin[j], k->man_bits[j]);
            if (fpki_sr_bits(seed_mix, index + i) < frac) {
                delta[j][lo]--;
                delta[j][hi]++;
            }
        }
    }
}

/* One tile of fpki_lanes_any: element l of XT and YT into lane l, its
 * terms zero where it is not counted (a sum of squares stays the same
 * when zero is added). */
FPKI_INLINE void fpki_lanes_tile(const float *xt, const float *yt, double *sx, double *se)
{
    for (int l = 0; l < FPK_LANES; l++) {
        uint32_t xb, yb;
        memcpy(&xb, &xt[l], sizeof xb);
        memcpy(&yb, &yt[l], sizeof yb);
        bool counted = (xb & FPKI_F32_MAG) - 1 < FPKI_F32_INF - 1 &&
                       (yb & FPKI_F32_MAG) < FPKI_F32_INF;
        double xd = counted ? (double)xt[l] : 0, ed = counted ? (double)yt[l] - xd : 0;
        sx[l] += xd * xd;
        se[l] += ed * ed;
    }
}

/* fpki_lanes_fn's body: the nonzero elements packed into tiles of
 * sixteen, the first at lane LANE, the lanes a tile leaves empty zeros,
 * so that every set adds the same terms in the same order.  The file
 * that instantiates it turns off fused multiply-adds. */
FPKI_INLINE unsigned fpki_lanes_any(const float *x, const float *y, size_t n, unsigned lane,
                                    double *x2, double *e2)
{
    double sx[FPK_LANES] = {0}, se[FPK_LANES] = {0};
    if (x2)
        memcpy(sx, x2, sizeof sx);
    if (e2)
        memcpy(se, e2, sizeof se);
    float xt[FPK_LANES] = {0}, yt[FPK_LANES] = {0};
    unsigned l = lane;
    for (size_t i = 0; i < n; i++) {
        uint32_t xb;
        memcpy(&xb, &x[i], sizeof xb);
        if ((xb & FPKI_F32_MAG) == 0)
            continue;
        xt[l] = x[i];
        yt[l] = y ? y[i] : 0;
        if (++l == FPK_LANES) {
            fpki_lanes_tile(xt, yt, sx, se);
            l = 0;
        }
    }
    if (l != 0) {
        for (unsigned k = l; k < FPK_LANES; k++)
            xt[k] = yt[k] = 0;
        fpki_lanes_tile(xt, yt, sx, se);
    }
    if (x2)
        memcpy(x2, sx, sizeof sx);
    if (e2)
        memcpy(e2, se, sizeof se);
    return l;
}

/* fpki_mxmax_fn's body. */
FPKI_INLINE uint64_t fpki_mxmax_any(const uint32_t *x, size_t n)
{
    uint32_t amax = 0, nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t mag = x[i] & FPKI_F32_MAG;
        nonfinite |= mag >= FPKI_F32_INF;
        amax = fpki_sel(mag > amax && mag < FPKI_F32_INF, mag, amax);
    }
    return amax | (uint64_t)(nonfinite != 0) << 32;
}

/* Whether magnitude bits MAG lie outside S's window, as 0 or 1. */
FPKI_INLINE uint32_t fpki_mx_outside(const fpki_mxspan *s, uint32_t mag)
{
    return mag - s->lo > s->span;
}

/* fpki_mxdown_fn's body (free of branches: half the elements of a
 * gradient may be zeros, at random). */
FPKI_INLINE bool fpki_mxdown_any(const fpki_mxspan *s, const uint32_t *x, uint32_t *xs,
                                 size_t n, uint8_t *odd)
{
    uint32_t any = 0;
    for (size_t j0 = 0; j0 < n; j0 += 8) {
        uint32_t bits = 0;
        for (size_t j = j0; j < n && j < j0 + 8; j++) {
            uint32_t mag = x[j] & FPKI_F32_MAG;
            uint32_t keep = -(uint32_t)(mag >= s->zero_below); /* all ones, or 0: a zero */
            xs[j] = (x[j] & FPKI_F32_SIGN) | ((mag - s->shift) & keep);
            bits |= (keep & fpki_mx_outside(s, mag)) << (j - j0);
        }
        odd[j0 / 8] = (uint8_t)bits;
        any |= bits;
    }
    return any != 0;
}

/* fpki_mxup_fn's body. */
FPKI_INLINE bool fpki_mxup_any(const fpki_mxspan *s, const uint32_t *q, const uint32_t *xs,
                               uint32_t *y, size_t n, uint32_t counts[2])
{
    uint32_t odd = 0, flushed = 0, subnormal = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t mag = q[j] & FPKI_F32_MAG, nonzero = -(uint32_t)(mag != 0);
        if (y)
            y[j] = q[j] + (s->shift & nonzero);
        odd |= nonzero & fpki_mx_outside(s, mag);
        flushed += ~nonzero & ((xs[j] & FPKI_F32_MAG) != 0);
        subnormal += mag - 1 < s->min_norm - 1; /* (mag - 1 wraps for a zero) */
    }
    counts[0] += flushed;
    counts[1] += subnormal;
    return odd;
}

#endif
