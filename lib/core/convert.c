/* Conversions between formats, and from and to the host double. */
#include <string.h>

#include "core-impl.h"

fpk_bits fpk_convert(const fpk_format *to, const fpk_format *from, fpk_bits a, fpk_ctx *c)
{
    fpki_unpacked u = fpki_unpack(from, a, c);
    switch (u.cls) {
    case FPK_CLASS_QNAN:
    case FPK_CLASS_SNAN:
        return fpki_nan(to, u.cls == FPK_CLASS_SNAN, c);
    case FPK_CLASS_INF:
        /* Infinity into a format without one is invalid (docs/DESIGN.md
         * "Corner cases"). */
        if (!to->inf)
            c->flags |= FPK_INVALID;
        return fpki_inf(to, u.sign, c);
    case FPK_CLASS_ZERO:
        return fpki_zero_result(to, u.sign, c);
    default:
        return fpki_round_pack(to, u.sign, u.exp, 0, u.sig, c);
    }
}

fpk_bits fpk_from_double(const fpk_format *f, double x, fpk_ctx *c)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return fpk_convert(f, &fpk_fp64, bits, c);
}

double fpk_to_double(const fpk_format *f, fpk_bits a)
{
    fpk_ctx exact = fpk_ctx_default();
    uint64_t bits = fpk_convert(&fpk_fp64, f, a, &exact);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}
