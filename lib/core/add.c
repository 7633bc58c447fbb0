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

/* A + (-1)^NEGATE_B * B, for any operands and modes, in a 128-bit frame. */
static __attribute__((noinline)) fpk_bits
add_any(const fpk_format *f, fpk_bits a, fpk_bits b, bool negate_b, fpk_ctx *c)
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

/* A + (-1)^NEGATE_B * B.  Two normal operands under a deterministic mode,
 * the common case, take a 64-bit frame: x's significand (< 2^(m+1)) at bit
 * s = 62 - m >= 10 and up.  An aligned y that falls below bit 0 is jammed
 * into a sticky bit; the sum then loses at most one leading bit to
 * cancellation (d > s >= 2), leaving its rounding position at bit s - 1 or
 * above, two bits clear of the sticky bit, as round-to-nearest needs.  SR
 * needs up to 64 exact bits of the discarded fraction and stays in
 * add_any's frame, as do zeros, subnormals, infinities and NaNs. */
static inline __attribute__((always_inline)) fpk_bits
add_body(const fpk_format *f, fpk_bits a, fpk_bits b, bool negate_b, fpk_ctx *c)
{
    const int m = f->man_bits;
    const fpk_bits one = (fpk_bits)1 << m, mag = f->exp_mask | f->man_mask;
    fpk_bits ma = a & mag, mb = b & mag;
    if (!fpki_both_normal(f, ma, mb) || c->round == FPK_SR)
        return add_any(f, a, b, negate_b, c);

    /* x, the larger magnitude, and y: selections, not branches, for
     * operands whose order and signs are as random as the data. */
    bool sign_a = (a & f->sign_mask) != 0;
    bool sign_b = ((b & f->sign_mask) != 0) != negate_b;
    bool swap = ma < mb;
    bool sign = swap ? sign_b : sign_a;
    bool subtract = sign_a != sign_b;
    fpk_bits mx = swap ? mb : ma, my = swap ? ma : mb;
    const int s = 62 - m;
    int ex = (int)(mx >> m), d = ex - (int)(my >> m);
    uint64_t xs = (uint64_t)((mx & f->man_mask) | one) << s;
    uint64_t yf = (uint64_t)((my & f->man_mask) | one) << s; /* below bit 63 */
    int dc = d < 63 ? d : 63;
    uint64_t ys = yf >> dc | ((yf & (((uint64_t)1 << dc) - 1)) != 0);
    uint64_t neg = -(uint64_t)subtract;
    uint64_t sum = xs + ((ys ^ neg) - neg);
    if (sum == 0)
        return fpki_zero_sum(f, sign_a, sign_b, c);
    return fpki_round_pack_body(f, sign, (int64_t)ex - f->bias - m - s, 0, sum, c);
}

FPKI_INSTANCES(add, add_body, (fpk_bits a, fpk_bits b, bool negate_b, fpk_ctx *c),
               (a, b, negate_b, c))

fpk_bits fpk_add(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    FPKI_DISPATCH(add, f, c, (a, b, false, c));
}

fpk_bits fpk_sub(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c)
{
    FPKI_DISPATCH(add, f, c, (a, b, true, c));
}
