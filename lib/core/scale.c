/* Scaling: a double times a scale, rounded once (the loss scale of
 * mixed-precision training). */
#include <string.h>

#include "arith.h"

/* X and S are read as fp64 encodings: X under ctx's daz (it is the data),
 * S exactly (it is a parameter, never flushed).  The specials follow IEEE
 * 754-2019 §7.2 for multiplication; an infinite product goes into F as
 * fpk_convert takes an infinity (invalid where F has none).  Otherwise the
 * two significands of at most 53 bits give an exact product of at most 106
 * bits, which the core rounds once. */
fpk_bits fpk_from_double_scaled(const fpk_format *f, double x, double s, fpk_ctx *c)
{
    uint64_t xbits, sbits;
    memcpy(&xbits, &x, sizeof xbits);
    memcpy(&sbits, &s, sizeof sbits);
    fpki_unpacked a = fpki_unpack(&fpk_fp64, xbits, c);
    fpki_unpacked b = fpki_unpack(&fpk_fp64, sbits, NULL);
    bool sign = a.sign != b.sign;
    if (fpki_is_special_class(a.cls) || fpki_is_special_class(b.cls)) {
        if (fpki_is_nan_class(a.cls) || fpki_is_nan_class(b.cls))
            return fpki_nan(f, a.cls == FPK_CLASS_SNAN || b.cls == FPK_CLASS_SNAN, c);
        if (a.cls == FPK_CLASS_ZERO || b.cls == FPK_CLASS_ZERO)
            return fpki_nan(f, true, c); /* 0 * inf */
        if (!f->inf)
            c->flags |= FPK_INVALID;
        return fpki_inf(f, sign, c);
    }
    if (a.sig == 0 || b.sig == 0)
        return fpki_zero_result(f, sign, c);
    return fpki_round_pack128(f, sign, (int64_t)a.exp + b.exp, (fpki_u128)a.sig * b.sig, c);
}
