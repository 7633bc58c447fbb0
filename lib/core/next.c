/* nextUp and nextDown (IEEE 754-2019 §5.3.1). */
#include "core-impl.h"

/* The neighbour of A toward +inf or -inf: encodings of one sign are ordered
 * like their magnitudes, so a step is +-1 on the magnitude bits. */
static fpk_bits step(const fpk_format *f, fpk_bits a, bool toward_plus, fpk_ctx *c)
{
    fpk_class k = fpk_classify(f, a);
    if (k == FPK_CLASS_QNAN || k == FPK_CLASS_SNAN)
        return fpki_nan(f, k == FPK_CLASS_SNAN, c);
    bool sign = fpk_signbit(f, a);
    fpk_bits mag = a & (f->exp_mask | f->man_mask);
    if (f->special == FPK_SPECIAL_E8M0) /* positive, from 2^emin (0) up */
        return toward_plus ? (mag == f->max_finite ? f->nan : mag + 1)
                           : (mag == 0 ? f->nan : mag - 1);
    if (mag == 0) /* +-0: the smallest subnormal of the direction's sign */
        return fpki_sign(f, !toward_plus) | 1;
    if (k == FPK_CLASS_INF) {
        if (toward_plus != sign) /* +inf up, -inf down: stays */
            return a;
        return fpki_sign(f, sign) | f->max_finite;
    }
    if (toward_plus == sign) /* toward zero */
        return mag == 1 ? fpki_zero(f, sign) : fpki_sign(f, sign) | (mag - 1);
    if (mag == f->max_finite) {
        if (f->special == FPK_SPECIAL_NONE) /* infinite results are +-max */
            return a & (f->sign_mask | f->exp_mask | f->man_mask);
        return f->inf ? fpki_sign(f, sign) | f->inf : f->nan;
    }
    return fpki_sign(f, sign) | (mag + 1);
}

fpk_bits fpk_next_up(const fpk_format *f, fpk_bits a, fpk_ctx *c)
{
    return step(f, a, true, c);
}

fpk_bits fpk_next_down(const fpk_format *f, fpk_bits a, fpk_ctx *c)
{
    return step(f, a, false, c);
}
