/* Comparisons (IEEE 754-2019 §5.11): compareQuietEqual, compareQuietLess,
 * compareQuietLessEqual and their signaling counterparts. */
#include "fpkit-impl.h"

/* The position of a non-NaN operand on the real line, as an integer that
 * orders like the values: for non-NaN encodings the magnitude orders like
 * the unsigned encoding without its sign bit, so the signed magnitude does
 * the rest.  Zeros (and subnormals under daz, which unpack reads as zeros)
 * all map to 0, so -0 == +0. */
static int64_t order_key(const fpk_format *f, fpk_bits a, fpki_unpacked u)
{
    if (u.cls == FPK_CLASS_ZERO)
        return 0;
    int64_t mag = (int64_t)(a & (f->sign_mask - 1));
    return u.sign ? -mag : mag;
}

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
    *ka = order_key(f, a, ua);
    *kb = order_key(f, b, ub);
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
