/* Addition and subtraction (IEEE 754-2019 §5.4.1), rounded once. */
#include "arith.h"

/* Infinities and NaNs: X or Y is special. */
static fpk_bits add_special(const fpk_format *f, fpki_unpacked x, fpki_unpacked y,
                            fpk_ctx *c)
{
    if (fpki_is_nan_class(x.cls) || fpki_is_nan_class(y.cls))
        return fpki_nan(f, x.cls == FPK_CLASS_SNAN || y.cls == FPK_CLASS_SNAN, c);
    if (x.cls == FPK_CLASS_INF) {
        if (y.cls == FPK_CLASS_INF && x.sign != y.sign)
            return fpki_nan(f, true, c); /* inf - inf: invalid (§7.2) */
        return fpki_inf(f, x.sign, c);
    }
    return fpki_inf(f, y.sign, c);
}

/* A + (-1)^NEGATE_B * B. */
static inline __attribute__((always_inline)) fpk_bits
add_body(const fpk_format *f, fpk_bits a, fpk_bits b, bool negate_b, fpk_ctx *c)
{
    fpki_unpacked x = fpki_unpack(f, a, c);
    fpki_unpacked y = fpki_unpack(f, b, c);
    y.sign ^= negate_b;
    if (fpki_is_special_class(x.cls) || fpki_is_special_class(y.cls))
        return add_special(f, x, y, c);
    if (y.sig == 0) {
        if (x.sig == 0)
            return fpki_zero_sum(f, x.sign, y.sign, c);
        /* Exact, but rounded all the same: ftz may flush a subnormal. */
        return fpki_round_pack(f, x.sign, x.exp, 0, x.sig, c);
    }
    if (x.sig == 0)
        return fpki_round_pack(f, y.sign, y.exp, 0, y.sig, c);

    if (x.exp < y.exp) {
        fpki_unpacked t = x;
        x = y;
        y = t;
    }
    /* Both significands (< 2^(m+1)) in a frame where x's sits at bit 126-m
     * and up: shifted by s >= 74, x's low bits are zero, so y, when it
     * falls below bit 0, can be jammed into a sticky bit even in a
     * subtraction (x - (y|1) keeps the truthful sticky), and the result
     * keeps at least 73 bits below its rounding position. */
    const int s = 126 - f->man_bits;
    int64_t d = (int64_t)x.exp - y.exp;
    fpki_u128 xs = (fpki_u128)x.sig << s;
    fpki_u128 ys = d <= s ? (fpki_u128)y.sig << (s - d) : fpki_shr_jam128(y.sig, d - s);
    int64_t exp = (int64_t)x.exp - s;
    bool sign = x.sign;
    fpki_u128 sum;
    if (x.sign == y.sign) {
        sum = xs + ys;
    } else if (xs > ys) {
        sum = xs - ys;
    } else if (ys > xs) {
        sum = ys - xs;
        sign = y.sign;
    } else {
        return fpki_zero_sum(f, x.sign, y.sign, c);
    }
    return fpki_round_pack128_body(f, sign, exp, sum, c);
}

FPKI_INSTANCES(add, add_body, (fpk_bits a, fpk_bits b, bool negate_b, fpk_ctx *c),
               (a, b, negate_b, c))

fpk_bits fpk_add(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    FPKI_DISPATCH(add, f, (a, b, false, c));
}

fpk_bits fpk_sub(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    FPKI_DISPATCH(add, f, (a, b, true, c));
}
