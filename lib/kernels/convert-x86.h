/* What the x86-64 conversion kernels of both sets share (convert_avx2.c,
 * convert_avx512.c, and the squared errors that round as they do): when
 * F16C converts exactly, how a kernel's findings become the library's
 * flags, and the constants of rounding a kernel format without options
 * ("plain" conversions: fpki_conv_plain), which each set broadcasts. */
#ifndef FPKIT_CONVERT_X86_H
#define FPKIT_CONVERT_X86_H

#include "convert-body.h"

/* Whether P is a conversion F16C does exactly: fp16 under RNE or RTZ, no
 * ftz, daz or saturate (tininess either way: the flags are computed). */
static inline bool f16c_exact(const fpki_conv_plan *p)
{
    return p->format == FPKI_KFORMAT_FP16 && (p->mode == FPK_RNE || p->mode == FPK_RTZ) &&
           !p->ftz && !p->daz && !p->saturate;
}

/* fp16's thresholds for the F16C flags, as float32 encodings: overflow
 * from half an ulp above max finite (RNE) or one ulp (RTZ); tininess as
 * fpki_round_one judges it. */
#define F16C_OF_RNE 0x477ff000u
#define F16C_OF_RTZ 0x47800000u
#define F16C_TINY_RNE 0x387ff000u
#define F16C_MIN_NORMAL 0x38800000u
#define F16C_NAN 0x7e00

/* The library's flags from whether a kernel found an inexact result, a
 * tiny one, an overflow (inexact too) and an invalid operand. */
static inline unsigned library_flags(bool ix, bool uf, bool of, bool inv)
{
    return (ix || of ? FPK_INEXACT : 0) | (uf ? FPK_UNDERFLOW : 0) | (of ? FPK_OVERFLOW : 0) |
           (inv ? FPK_INVALID : 0);
}

/* F's constants for the kernels that round the five kernel formats
 * without options (round16, round8) under MODE, results as float32 values
 * when QUANT: fpki_round_one's, which each set broadcasts. */
typedef struct plain_scalars {
    bool rne, sr, quant, subs, inf_enc, of_signed;
    int d0;
    uint32_t sign_shift;
    uint32_t low, high, half, rebias, min_normal, tiny, maxf, max32;
    uint32_t of_val, inf_val, nan_val; /* overflows', infinities' and NaNs' results, less signs */
    uint32_t sign_bit;                 /* the result's sign bit */
    uint32_t d0_exp, rebias_c;         /* d0 in float32's exponent field; C's shifted, less */
    /* the integer rounding (SR everywhere; min_sub32 round8's RTZ too) */
    uint32_t sub_dd, rebias32, tiny_away, min_sub32, max_val;
    uint32_t sub_scale; /* round8's RTZ: 2^(man_bits - emin), over the least subnormal (subs) */
} plain_scalars;

/* F's plain_scalars under MODE, results as float32 values when QUANT. */
static inline __attribute__((always_inline)) plain_scalars
plain_scalars_of(const fpk_format *f, fpk_round mode, bool quant)
{
    const int m = f->man_bits, d0 = 23 - m, emin = f->emin;
    const bool rne = mode == FPK_RNE;
    const uint32_t min_normal = (uint32_t)(emin + 127) << 23;
    const int lsb_below = emin - 1 >= -126 ? emin - 24 : -149;
    const uint32_t maxf = (uint32_t)f->max_finite, inf_enc = (uint32_t)f->inf;
    const uint32_t nan_enc = (uint32_t)f->nan;
    const uint32_t max32 = (maxf << d0) + ((uint32_t)(127 - f->bias) << 23);
    plain_scalars k;
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
 * RUN(f, mode, quant) with each known at compile time, for the plain
 * conversions' entry points (convert_plain_any). */
#define PLAIN_DISPATCH(RUN, p)                                                                     \
    switch ((p)->format) {                                                                         \
    case FPKI_KFORMAT_FP16: PLAIN_MODES(RUN, &fpki_kernel_fp16, p);                                \
    case FPKI_KFORMAT_BF16: PLAIN_MODES(RUN, &fpki_kernel_bf16, p);                                \
    case FPKI_KFORMAT_TF32: PLAIN_MODES(RUN, &fpki_kernel_tf32, p);                                \
    case FPKI_KFORMAT_E4M3: PLAIN_MODES(RUN, &fpki_kernel_e4m3, p);                                \
    default: PLAIN_MODES(RUN, &fpki_kernel_e5m2, p);                                               \
    }
#define PLAIN_MODES(RUN, f, p)                                                                     \
    if ((p)->mode == FPK_RNE)                                                                      \
        return (p)->quant ? RUN(f, FPK_RNE, true) : RUN(f, FPK_RNE, false);                        \
    if ((p)->mode == FPK_RTZ)                                                                      \
        return (p)->quant ? RUN(f, FPK_RTZ, true) : RUN(f, FPK_RTZ, false);                        \
    return (p)->quant ? RUN(f, FPK_SR, true) : RUN(f, FPK_SR, false)

#endif
