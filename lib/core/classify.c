/* Classification of encodings. */
#include "core-impl.h"

bool fpk_signbit(const fpk_format *f, fpk_bits a)
{
    return (a & f->sign_mask) != 0;
}

fpk_class fpk_classify(const fpk_format *f, fpk_bits a)
{
    return fpki_classify(f, a);
}

bool fpk_is_nan(const fpk_format *f, fpk_bits a)
{
    fpk_class k = fpk_classify(f, a);
    return k == FPK_CLASS_QNAN || k == FPK_CLASS_SNAN;
}
