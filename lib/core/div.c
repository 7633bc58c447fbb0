/* Division (IEEE 754-2019 §5.4.1), rounded once. */
#include "arith.h"

fpk_bits fpk_div(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    fpki_unpacked x = fpki_unpack(f, a, c);
    fpki_unpacked y = fpki_unpack(f, b, c);
    bool sign = x.sign != y.sign;
    if (fpki_is_special_class(x.cls) || fpki_is_special_class(y.cls)) {
        if (fpki_is_nan_class(x.cls) || fpki_is_nan_class(y.cls))
            return fpki_nan(f, x.cls == FPK_CLASS_SNAN || y.cls == FPK_CLASS_SNAN, c);
        if (x.cls == FPK_CLASS_INF)
            return y.cls == FPK_CLASS_INF ? fpki_nan(f, true, c) /* inf/inf (§7.2) */
                                          : fpki_inf(f, sign, c);
        return fpki_zero_result(f, sign, c); /* finite / inf */
    }
    if (y.sig == 0) {
        if (x.sig == 0)
            return fpki_nan(f, true, c); /* 0/0 (§7.2) */
        c->flags |= FPK_DIVBYZERO;       /* an exact infinite result (§7.3) */
        return fpki_inf(f, sign, c);
    }
    if (x.sig == 0)
        return fpki_zero_result(f, sign, c);

    /* With the dividend's leading bit at 62 and the divisor's at 63 the
     * quotient of n:0 by d fits 64 bits and has 63 or 64 of them; a second
     * step on the remainder gives 64 more, then the sticky bit. */
    int la = fpki_clz64(x.sig), lb = fpki_clz64(y.sig);
    uint64_t n = x.sig << la >> 1;
    uint64_t d = y.sig << lb;
    fpki_u128 num = (fpki_u128)n << 64;
    uint64_t q_hi = (uint64_t)(num / d);
    uint64_t r = -(q_hi * d); /* n*2^64 - q_hi*d, which is < d, mod 2^64 */
    num = (fpki_u128)r << 64;
    uint64_t q_lo = (uint64_t)(num / d);
    r = -(q_lo * d); /* r*2^64 - q_lo*d likewise */
    q_lo |= r != 0;
    /* x.sig / y.sig = (n / d) * 2^(lb - la + 1) and n / d = q * 2^-128. */
    int64_t exp = (int64_t)x.exp - y.exp - 128 + lb - la + 1;
    return fpki_round_pack(f, sign, exp, q_hi, q_lo, c);
}
