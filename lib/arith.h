/* Pieces shared by the arithmetic operations (add.c, mul.c, div.c, fma.c,
 * sqrt.c): 128-bit significands and the IEEE rules for special operands. */
#ifndef FPKIT_ARITH_H
#define FPKIT_ARITH_H

#include "fpkit-impl.h"

__extension__ typedef unsigned __int128 fpki_u128;

static inline bool fpki_is_nan_class(fpk_class k)
{
    return k == FPK_CLASS_QNAN || k == FPK_CLASS_SNAN;
}

/* True for infinities and NaNs (fpk_class orders them last). */
static inline bool fpki_is_special_class(fpk_class k)
{
    return k >= FPK_CLASS_INF;
}

/* Number of leading zero bits of X; 128 for 0. */
static inline int fpki_clz128(fpki_u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? fpki_clz64(hi) : 64 + fpki_clz64((uint64_t)x);
}

/* X >> N for any N >= 0, every bit shifted out ORed into bit 0 (a sticky
 * bit), so that rounding X >> N at bit 2 or above rounds X the same way. */
static inline fpki_u128 fpki_shr_jam128(fpki_u128 x, int64_t n)
{
    if (n == 0)
        return x;
    if (n >= 128)
        return x != 0;
    return (x >> n) | ((x << (128 - n)) != 0);
}

/* fpki_round_pack of (-1)^SIGN * SIG * 2^EXP, SIG != 0. */
static inline fpk_bits fpki_round_pack128(const fpk_format *f, bool sign, int64_t exp,
                                          fpki_u128 sig, fpk_ctx *c)
{
    return fpki_round_pack(f, sign, exp, (uint64_t)(sig >> 64), (uint64_t)sig, c);
}

/* An exact zero sum x + y (IEEE 754-2019 §6.3): zeros of one sign keep it;
 * otherwise +0, or -0 under RDN.  SR, which is no rounding-direction
 * attribute toward -inf, gives +0. */
static inline fpk_bits fpki_zero_sum(const fpk_format *f, bool sign_x, bool sign_y,
                                     const fpk_ctx *c)
{
    if (sign_x == sign_y)
        return fpki_zero(f, sign_x);
    return fpki_zero(f, c->round == FPK_RDN);
}

#endif
