/* Comparisons (IEEE 754-2019 §5.11): compareQuietEqual, compareQuietLess,
 * compareQuietLessEqual and their signaling counterparts. */
#include "core-impl.h"

/* Sets *ka, *kb to the order keys of A and B and returns true, or returns
 * false when either is NaN, raising invalid if SIGNALING or either NaN is
 * signaling. */
static bool ordered(const fpk_format *f, fpk_bits a, fpk_bits b, bool signaling,
                    int64_t *ka, int64_t *kb, fpk_ctx *c)
{
    fpki_unpacked ua = fpki_unpack(f, a, c);
    fpki_unpacked ub = fpki_unpack(f, b, c);
    bool nan_a = ua.cls == FPK_CLASS_QNAN || ua.cls == FPK_CLASS_SNAN;
    bool nan_b = ub.cls == FPK_CLASS_QNAN || ub.cls == FPK_CLASS_SNAN;
    if (nan_a || nan_b) {
        if (signaling || ua.cls == FPK_CLASS_SNAN || ub.cls == FPK_CLASS_SNAN)
            c->flags |= FPK_INVALID;
        return false;
    }
    *ka = fpki_order_key(f, a, ua, false);
    *kb = fpki_order_key(f, b, ub, false);
    return true;
}

bool fpk_eq(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    int64_t ka, kb;
    return ordered(f, a, b, false, &ka, &kb, c) && ka == kb;
}

bool fpk_lt(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    int64_t ka, kb;
    return ordered(f, a, b, false, &ka, &kb, c) && ka < kb;
}

bool fpk_le(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    int64_t ka, kb;
    return ordered(f, a, b, false, &ka, &kb, c) && ka <= kb;
}

bool fpk_eq_signaling(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    int64_t ka, kb;
    return ordered(f, a, b, true, &ka, &kb, c) && ka == kb;
}

bool fpk_lt_signaling(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    int64_t ka, kb;
    return ordered(f, a, b, true, &ka, &kb, c) && ka < kb;
}

bool fpk_le_signaling(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    int64_t ka, kb;
    return ordered(f, a, b, true, &ka, &kb, c) && ka <= kb;
}
