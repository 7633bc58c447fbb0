/* negate, abs, copySign (IEEE 754-2019 §5.5.1): quiet operations on the
 * sign bit alone, NaNs included; no flags.  E8M0 has no sign bit (its
 * sign_mask is 0): they leave its encodings as they are. */
#include "core-impl.h"

/* Every encoding bit of F; bits above F's width are dropped from results. */
static fpk_bits width_mask(const fpk_format *f)
{
    return f->sign_mask | f->exp_mask | f->man_mask;
}

/* FNUZ has no -0: the sign bit of a zero magnitude makes the NaN, so zero
 * and the NaN keep their sign bits. */
static bool sign_fixed(const fpk_format *f, fpk_bits a)
{
    return f->special == FPK_SPECIAL_FNUZ && (a & (f->exp_mask | f->man_mask)) == 0;
}

fpk_bits fpk_neg(const fpk_format *f, fpk_bits a)
{
    return (sign_fixed(f, a) ? a : a ^ f->sign_mask) & width_mask(f);
}

fpk_bits fpk_abs(const fpk_format *f, fpk_bits a)
{
    return a & (sign_fixed(f, a) ? width_mask(f) : f->exp_mask | f->man_mask);
}

fpk_bits fpk_copysign(const fpk_format *f, fpk_bits a, fpk_bits b)
{
    if (sign_fixed(f, a))
        return a & width_mask(f);
    return (a & (f->exp_mask | f->man_mask)) | (b & f->sign_mask);
}
