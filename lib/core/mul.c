/* Multiplication (IEEE 754-2019 §5.4.1), rounded once. */
#include "arith.h"

/* A * B, for any operands. */
static __attribute__((noinline)) fpk_bits
mul_any(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    fpki_unpacked x = fpki_unpack(f, a, c);
    fpki_unpacked y = fpki_unpack(f, b, c);
    bool sign = x.sign != y.sign;
    if (fpki_is_special_class(x.cls) || fpki_is_special_class(y.cls)) {
        if (fpki_is_nan_class(x.cls) || fpki_is_nan_class(y.cls))
            return fpki_nan(f, x.cls == FPK_CLASS_SNAN || y.cls == FPK_CLASS_SNAN, c);
        if (x.cls == FPK_CLASS_ZERO || y.cls == FPK_CLASS_ZERO)
            return fpki_nan(f, true, c); /* 0 * inf: invalid (§7.2) */
        return fpki_inf(f, sign, c);
    }
    if (x.sig == 0 || y.sig == 0)
        return fpki_zero_result(f, sign, c);
    /* Two significands of at most 53 bits: the product is exact in 106. */
    return fpki_round_pack128_body(f, sign, (int64_t)x.exp + y.exp,
                                   (fpki_u128)x.sig * y.sig, c);
}

/* A * B.  Two normal operands of a format with at most 31 fraction bits,
 * the common case, multiply exactly in 64 bits (two significands below
 * 2^32). */
static inline __attribute__((always_inline)) fpk_bits
mul_body(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    const int m = f->man_bits;
    const fpk_bits one = (fpk_bits)1 << m, mag = f->exp_mask | f->man_mask;
    fpk_bits ma = a & mag, mb = b & mag;
    if (m > 31 || !fpki_both_normal(f, ma, mb))
        return mul_any(f, a, b, c);
    bool sign = ((a ^ b) & f->sign_mask) != 0;
    int64_t exp = (int64_t)(ma >> m) + (int64_t)(mb >> m) - 2 * (f->bias + m);
    uint64_t prod = ((ma & f->man_mask) | one) * ((mb & f->man_mask) | one);
    return fpki_round_pack_body(f, sign, exp, 0, prod, c);
}

FPKI_INSTANCES(mul, mul_body, (fpk_bits a, fpk_bits b, fpk_ctx *c), (a, b, c))

fpk_bits fpk_mul(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    FPKI_DISPATCH(mul, f, c, (a, b, c));
}
