/* Classification of encodings. */
#include "fpkit-impl.h"

bool fpk_signbit(const fpk_format *f, fpk_bits a)
{
    return (a & f->sign_mask) != 0;
}

fpk_class fpk_classify(const fpk_format *f, fpk_bits a)
{
    fpk_bits mag = a & (f->exp_mask | f->man_mask);
    if (mag > f->max_finite) {
        if (mag == f->inf)
            return FPK_CLASS_INF;
        /* IEEE 754-2019 §6.2.1: the top mantissa bit tells quiet from
         * signaling; FN formats have a single NaN, quiet. */
        bool quiet = f->special != FPK_SPECIAL_IEEE ||
                     (a >> (f->man_bits - 1) & 1);
        return quiet ? FPK_CLASS_QNAN : FPK_CLASS_SNAN;
    }
    if (mag == 0)
        return FPK_CLASS_ZERO;
    return (a & f->exp_mask) ? FPK_CLASS_NORMAL : FPK_CLASS_SUBNORMAL;
}

bool fpk_is_nan(const fpk_format *f, fpk_bits a)
{
    fpk_class k = fpk_classify(f, a);
    return k == FPK_CLASS_QNAN || k == FPK_CLASS_SNAN;
}
