/* What the x86-64 kernel sets share: the kernels they export to
 * array_kern.c's tables, the conditions under which their own kernels
 * apply, the packing of nonzero elements into blocks, and the exponent
 * histogram's window and adders. */
#ifndef FPKIT_ARRAY_KERN_X86_H
#define FPKIT_ARRAY_KERN_X86_H

#include "kernels.h"
#include "array-kern.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

fpki_conv_fn fpki_conv_avx2, fpki_conv_avx512;
fpki_widen_fn fpki_widen_avx2, fpki_widen_avx512;
fpki_stats_fn fpki_stats_avx2, fpki_stats_avx512;
fpki_srfix_fn fpki_srfix_avx2, fpki_srfix_avx512;
fpki_lanes_fn fpki_lanes_avx2, fpki_lanes_avx512;
fpki_sqerr_fn fpki_sqerr_avx2, fpki_sqerr_avx512;
fpki_stats_sqerr_fn fpki_stats_sqerr_avx512;
fpki_mxmax_fn fpki_mxmax_avx2, fpki_mxmax_avx512;
fpki_mxdown_fn fpki_mxdown_avx2, fpki_mxdown_avx512;
fpki_mxup_fn fpki_mxup_avx2, fpki_mxup_avx512;

/* The exponent histograms of the statistics (stats_avx512, stats_avx2)
 * count a window of 64 exponent fields in carry-save adders, from the
 * exponent field BASE; the first nonzero elements, of largest finite
 * magnitude TOP (0: none), place it with their exponent 8 below its top.
 * Those outside it are counted one at a time. */
#define EH_WINDOW 64
static inline uint32_t eh_window_base(uint32_t top)
{
    uint32_t e = top ? top >> 23 : 255;
    return e < 56 ? 1 : e > 247 ? 192 : e - 55;
}

/* A group of the histogram's adders (eh_group, eh8_group) over H's
 * planes of vector type T, sixteen vectors a half: PAIR(k, t0, t1) makes
 * the one-hot vectors of both halves of the group's vectors k and k + 1 and
 * adds them into ones0 and ones1, their carries into t0 and t1; CSA(hi,
 * lo, a, b) adds a and b into lo, its carry into hi; CARRY(h, w, p, c) adds
 * c, of weight 2^p, to half w's planes. */
#define EH_QUAD(CSA, PAIR, k, f0, f1)                                                              \
    do {                                                                                           \
        PAIR(k, twos_a0, twos_a1);                                                                 \
        PAIR(k + 2, twos_b0, twos_b1);                                                             \
        CSA(f0, twos0, twos_a0, twos_b0);                                                          \
        CSA(f1, twos1, twos_a1, twos_b1);                                                          \
    } while (0)
#define EH_ADDERS(T, CSA, PAIR, CARRY, h)                                                          \
    do {                                                                                           \
        T ones0 = (h)->plane[0][0], twos0 = (h)->plane[0][1], fours0 = (h)->plane[0][2];           \
        T eights0 = (h)->plane[0][3], ones1 = (h)->plane[1][0], twos1 = (h)->plane[1][1];          \
        T fours1 = (h)->plane[1][2], eights1 = (h)->plane[1][3];                                   \
        T twos_a0, twos_b0, fours_a0, fours_b0, eights_a0, eights_b0, sixteens0;                   \
        T twos_a1, twos_b1, fours_a1, fours_b1, eights_a1, eights_b1, sixteens1;                   \
        EH_QUAD(CSA, PAIR, 0, fours_a0, fours_a1);                                                 \
        EH_QUAD(CSA, PAIR, 4, fours_b0, fours_b1);                                                 \
        CSA(eights_a0, fours0, fours_a0, fours_b0);                                                \
        CSA(eights_a1, fours1, fours_a1, fours_b1);                                                \
        EH_QUAD(CSA, PAIR, 8, fours_a0, fours_a1);                                                 \
        EH_QUAD(CSA, PAIR, 12, fours_b0, fours_b1);                                                \
        CSA(eights_b0, fours0, fours_a0, fours_b0);                                                \
        CSA(eights_b1, fours1, fours_a1, fours_b1);                                                \
        CSA(sixteens0, eights0, eights_a0, eights_b0);                                             \
        CSA(sixteens1, eights1, eights_a1, eights_b1);                                             \
        (h)->plane[0][0] = ones0, (h)->plane[0][1] = twos0, (h)->plane[0][2] = fours0;             \
        (h)->plane[0][3] = eights0, (h)->plane[1][0] = ones1, (h)->plane[1][1] = twos1;            \
        (h)->plane[1][2] = fours1, (h)->plane[1][3] = eights1;                                     \
        CARRY(h, 0, 4, sixteens0);                                                                 \
        CARRY(h, 1, 4, sixteens1);                                                                 \
    } while (0)

/* Whether P is a conversion F16C does exactly: fp16 under RNE or RTZ, no
 * ftz, daz or saturate (tininess either way: the flags are computed). */
static inline bool f16c_exact(const fpki_conv *p)
{
    return p->fmt == FPKI_K_FP16 && (p->mode == FPK_RNE || p->mode == FPK_RTZ) && !p->ftz &&
           !p->daz && !p->saturate;
}

/* fp16's thresholds for the F16C flags, as float32 encodings: overflow
 * from half an ulp above max finite (RNE) or one ulp (RTZ); tininess as
 * fpki_conv1 judges it. */
#define F16C_OF_RNE 0x477ff000u
#define F16C_OF_RTZ 0x47800000u
#define F16C_TINY_RNE 0x387ff000u
#define F16C_MIN_NORMAL 0x38800000u
#define F16C_NAN 0x7e00

/* The library's flags from whether a kernel found an inexact result, a
 * tiny one, an overflow (inexact too) and an invalid operand. */
static inline unsigned kern_flags(bool ix, bool uf, bool of, bool inv)
{
    return (ix || of ? FPK_INEXACT : 0) | (uf ? FPK_UNDERFLOW : 0) | (of ? FPK_OVERFLOW : 0) |
           (inv ? FPK_INVALID : 0);
}

/* Whether P is a conversion near_avx512 does: any kernel format under
 * RNE, RTZ or SR, without options. */
static inline bool near_plain(const fpki_conv *p)
{
    return !p->ftz && !p->daz && !p->saturate && !p->tiny_before;
}

/* F's constants for the kernels that round the five kernel formats
 * without options (near16, near8) under MODE, results as float32 values
 * when QUANT: fpki_conv1's, which each set broadcasts. */
typedef struct near_scalars {
    bool rne, sr, quant, subs, inf_enc, of_signed;
    int d0;
    uint32_t sign_shift;
    uint32_t low, high, half, rebias, min_normal, tiny, maxf, max32;
    uint32_t of_val, inf_val, nan_val; /* overflows', infinities' and NaNs' results, less signs */
    uint32_t sign_bit;                 /* the result's sign bit */
    uint32_t d0_exp, rebias_c;         /* d0 in float32's exponent field; C's shifted, less */
    /* the integer rounding (SR everywhere; min_sub32 near8's RTZ too) */
    uint32_t sub_dd, rebias32, tiny_away, min_sub32, max_val;
    uint32_t sub_scale; /* near8's RTZ: 2^(man_bits - emin), over the least subnormal (subs) */
} near_scalars;

static inline __attribute__((always_inline)) near_scalars
near_scalars_of(const fpk_format *f, fpk_round mode, bool quant)
{
    const int m = f->man_bits, d0 = 23 - m, emin = f->emin;
    const bool rne = mode == FPK_RNE;
    const uint32_t min_normal = (uint32_t)(emin + 127) << 23;
    const int lsb_below = emin - 1 >= -126 ? emin - 24 : -149;
    const uint32_t maxf = (uint32_t)f->max_finite, inf_enc = (uint32_t)f->inf;
    const uint32_t nan_enc = (uint32_t)f->nan;
    const uint32_t max32 = (maxf << d0) + ((uint32_t)(127 - f->bias) << 23);
    near_scalars k;
    k.rne = rne;
    k.sr = mode == FPK_SR;
    k.quant = quant;
    k.subs = emin != -126;
    k.inf_enc = inf_enc != 0;
    k.of_signed = !rne || inf_enc != 0; /* NaN results carry no sign */
    k.d0 = d0;
    k.sign_shift = (uint32_t)(32 - f->width);
    k.low = (1u << d0) - 1;
    k.high = ~k.low;
    k.half = (1u << (d0 - 1)) - 1;
    k.rebias = (uint32_t)(127 - f->bias) << m;
    k.min_normal = min_normal;
    k.tiny = rne ? min_normal - (1u << (emin - m - 2 - lsb_below)) : min_normal;
    k.maxf = maxf;
    k.max32 = max32;
    k.of_val = quant ? (rne ? (inf_enc ? FPKI_F32_INF : FPKI_F32_QNAN) : max32)
                     : (rne ? (inf_enc ? inf_enc : nan_enc) : maxf);
    k.inf_val = quant ? (inf_enc ? FPKI_F32_INF : FPKI_F32_QNAN) : (inf_enc ? inf_enc : nan_enc);
    k.nan_val = quant ? FPKI_F32_QNAN : nan_enc;
    k.sign_bit = 1u << (f->width - 1);
    k.d0_exp = (uint32_t)d0 << 23;
    k.rebias_c = (uint32_t)((d0 + 128 - f->bias) << m);
    k.sub_dd = (uint32_t)(d0 + emin + 127);
    k.rebias32 = (uint32_t)(127 - f->bias) << 23;
    k.tiny_away = min_normal - (1u << (emin - m - 1 - lsb_below)) + 1;
    k.min_sub32 = emin - m >= -126 ? (uint32_t)(emin - m + 127) << 23 : 1u << (emin - m + 149);
    k.max_val = quant ? max32 : maxf;
    k.sub_scale = k.subs ? (uint32_t)(m - emin + 127) << 23 : 0;
    return k;
}

/* The switch over P's kernel format, mode and output that calls
 * RUN(f, mode, quant) with each known at compile time, for the near
 * kernels' entry points. */
#define NEAR_DISPATCH(RUN, p)                                                                      \
    switch ((p)->fmt) {                                                                            \
    case FPKI_K_FP16: NEAR_MODES(RUN, &fpki_k_fp16, p);                                            \
    case FPKI_K_BF16: NEAR_MODES(RUN, &fpki_k_bf16, p);                                            \
    case FPKI_K_TF32: NEAR_MODES(RUN, &fpki_k_tf32, p);                                            \
    case FPKI_K_E4M3: NEAR_MODES(RUN, &fpki_k_e4m3, p);                                            \
    default: NEAR_MODES(RUN, &fpki_k_e5m2, p);                                                     \
    }
#define NEAR_MODES(RUN, f, p)                                                                      \
    if ((p)->mode == FPK_RNE)                                                                      \
        return (p)->quant ? RUN(f, FPK_RNE, true) : RUN(f, FPK_RNE, false);                        \
    if ((p)->mode == FPK_RTZ)                                                                      \
        return (p)->quant ? RUN(f, FPK_RTZ, true) : RUN(f, FPK_RTZ, false);                        \
    return (p)->quant ? RUN(f, FPK_SR, true) : RUN(f, FPK_SR, false)

/* Elements whose nonzero ones the lanes and sqerr kernels pack at a
 * time. */
#define SQ_BLOCK 4096

/* The lines of the next block of a stream yet to be prefetched: the
 * packed blocks are summed without reading memory, and would leave it
 * idle. */
typedef struct sq_ahead {
    const char *at, *end;
} sq_ahead;

/* The block after the one at I0 of the N elements at X (NULL: none). */
static inline sq_ahead sq_next_block(const void *x, size_t n, size_t i0)
{
    if (!x)
        return (sq_ahead){NULL, NULL};
    size_t from = i0 + SQ_BLOCK < n ? i0 + SQ_BLOCK : n;
    size_t to = i0 + 2 * SQ_BLOCK < n ? i0 + 2 * SQ_BLOCK : n;
    const char *base = x;
    return (sq_ahead){base + 4 * from, base + 4 * to};
}

/* *PF (NULL: none) as a local, for a loop to advance in registers: where
 * the loop advanced *PF itself, each step stored it and the next step's
 * load waited on that store (3% of the squared errors' time); the loop
 * gives it back with sq_ahead_put. */
static inline sq_ahead sq_ahead_take(const sq_ahead *pf)
{
    return pf ? *pf : (sq_ahead){NULL, NULL};
}

static inline void sq_ahead_put(sq_ahead *pf, sq_ahead ahead)
{
    if (pf)
        *pf = ahead;
}

/* Two lines more of *PF (NULL: none) on their way into L2. */
static inline __attribute__((always_inline)) void sq_prefetch(sq_ahead *pf)
{
    if (pf && pf->at < pf->end) {
        _mm_prefetch(pf->at, _MM_HINT_T1);
        _mm_prefetch(pf->at + 64, _MM_HINT_T1);
        pf->at += 128;
    }
}
#endif
#endif
