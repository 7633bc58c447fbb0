/* minimum, maximum, minimumNumber, maximumNumber (IEEE 754-2019 §9.6). */
#include "core-impl.h"

/* A as a result: its encoding within F's width, or, when unpack read it as a
 * zero (a subnormal under daz), the zero of its sign, as hardware that flushes
 * its inputs returns it. */
static fpk_bits result_of(const fpk_format *f, fpk_bits a, fpki_unpacked u)
{
    if (u.cls == FPK_CLASS_ZERO)
        return fpki_zero(f, u.sign);
    return a & (f->sign_mask | f->exp_mask | f->man_mask);
}

static bool is_nan(fpki_unpacked u)
{
    return u.cls == FPK_CLASS_QNAN || u.cls == FPK_CLASS_SNAN;
}

/* The smaller (WANT_MAX false) or larger of A and B under KIND.  A signaling
 * NaN raises invalid, even when minimumNumber/maximumNumber returns the other
 * operand.  Equal values give A. */
static fpk_bits pick(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_minmax kind,
                     bool want_max, fpk_ctx *c)
{
    fpki_unpacked ua = fpki_unpack(f, a, c);
    fpki_unpacked ub = fpki_unpack(f, b, c);
    if (is_nan(ua) || is_nan(ub)) {
        bool snan = ua.cls == FPK_CLASS_SNAN || ub.cls == FPK_CLASS_SNAN;
        if (kind == FPK_MINMAX_NUMBER && !(is_nan(ua) && is_nan(ub))) {
            if (snan)
                c->flags |= FPK_INVALID;
            return is_nan(ua) ? result_of(f, b, ub) : result_of(f, a, ua);
        }
        return fpki_nan(f, snan, c);
    }
    int64_t ka = fpki_order_key(f, a, ua, true), kb = fpki_order_key(f, b, ub, true);
    bool take_b = want_max ? kb > ka : kb < ka;
    return take_b ? result_of(f, b, ub) : result_of(f, a, ua);
}

/* Under daz a subnormal operand reads as the zero of its sign, and that zero
 * is what is returned when it is the result. */
fpk_bits fpk_min(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_minmax kind, fpk_ctx *c)
{
    return pick(f, a, b, kind, false, c);
}

fpk_bits fpk_max(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_minmax kind, fpk_ctx *c)
{
    return pick(f, a, b, kind, true, c);
}
