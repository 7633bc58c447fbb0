/* negate, abs, copySign (IEEE 754-2019 §5.5.1): quiet operations on the
 * sign bit alone, NaNs included; no flags. */
#include "fpkit-impl.h"

/* Every encoding bit of F; bits above F's width are dropped from results. */
static fpk_bits width_mask(const fpk_format *f)
{
    return f->sign_mask | (f->sign_mask - 1);
}

fpk_bits fpk_neg(const fpk_format *f, fpk_bits a)
{
    return (a ^ f->sign_mask) & width_mask(f);
}

fpk_bits fpk_abs(const fpk_format *f, fpk_bits a)
{
    return a & (f->sign_mask - 1);
}

fpk_bits fpk_copysign(const fpk_format *f, fpk_bits a, fpk_bits b)
{
    return (a & (f->sign_mask - 1)) | (b & f->sign_mask);
}
