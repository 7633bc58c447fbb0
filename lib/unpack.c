/* Decoding an encoding into class, sign, exponent and integer significand. */
#include "fpkit-impl.h"

fpki_unpacked fpki_unpack(const fpk_format *f, fpk_bits a, const fpk_ctx *c)
{
    fpki_unpacked u = {.cls = fpk_classify(f, a), .sign = fpk_signbit(f, a)};
    fpk_bits exp_field = (a & f->exp_mask) >> f->man_bits;
    fpk_bits man = a & f->man_mask;

    switch (u.cls) {
    case FPK_CLASS_SUBNORMAL:
        if (c && c->daz) {
            u.cls = FPK_CLASS_ZERO;
            break;
        }
        u.exp = f->emin - f->man_bits;
        u.sig = man;
        break;
    case FPK_CLASS_NORMAL:
        u.exp = (int32_t)exp_field - f->bias - f->man_bits;
        u.sig = man | ((fpk_bits)1 << f->man_bits);
        break;
    default:
        break;
    }
    return u;
}
