/* Fused multiply-add (IEEE 754-2019 §5.4.1): a*b+d with one rounding. */
#include "arith.h"

/* A 256-bit unsigned integer. */
typedef struct wide {
    fpki_u128 hi, lo;
} wide;

/* V * 2^SH, for V * 2^SH < 2^256; bits that fall below bit 0 are jammed
 * into bit 0. */
static wide wide_place(fpki_u128 v, int64_t sh)
{
    if (sh >= 128)
        return (wide){.hi = v << (sh - 128), .lo = 0};
    if (sh > 0)
        return (wide){.hi = v >> (128 - sh), .lo = v << sh};
    return (wide){.hi = 0, .lo = fpki_shr_jam128(v, -sh)};
}

static bool wide_less(wide a, wide b)
{
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}

static wide wide_add(wide a, wide b)
{
    fpki_u128 lo = a.lo + b.lo;
    return (wide){.hi = a.hi + b.hi + (lo < a.lo), .lo = lo};
}

/* A - B for A >= B. */
static wide wide_sub(wide a, wide b)
{
    return (wide){.hi = a.hi - b.hi - (a.lo < b.lo), .lo = a.lo - b.lo};
}

/* fpki_round_pack of (-1)^SIGN * W * 2^EXP, W != 0: the top 128 bits from
 * W's leading one, with the bits below folded into a sticky bit. */
static fpk_bits wide_round_pack(const fpk_format *f, bool sign, int64_t exp, wide w,
                                fpk_ctx *c)
{
    if (w.hi == 0)
        return fpki_round_pack128(f, sign, exp, w.lo, c);
    int n = fpki_clz128(w.hi);
    fpki_u128 top = n ? (w.hi << n) | (w.lo >> (128 - n)) : w.hi;
    fpki_u128 rest = w.lo << n;
    return fpki_round_pack128(f, sign, exp + 128 - n, top | (rest != 0), c);
}

/* Infinities and NaNs: one of X, Y, Z is special. */
static fpk_bits fma_special(const fpk_format *f, fpki_unpacked x, fpki_unpacked y,
                            fpki_unpacked z, fpk_ctx *c)
{
    bool zero_times_inf = (x.cls == FPK_CLASS_INF && y.cls == FPK_CLASS_ZERO) ||
                          (x.cls == FPK_CLASS_ZERO && y.cls == FPK_CLASS_INF);
    if (fpki_is_nan_class(x.cls) || fpki_is_nan_class(y.cls) || fpki_is_nan_class(z.cls)) {
        /* §7.2: 0*inf is invalid even when the addend is a quiet NaN. */
        bool snan = x.cls == FPK_CLASS_SNAN || y.cls == FPK_CLASS_SNAN ||
                    z.cls == FPK_CLASS_SNAN;
        return fpki_nan(f, snan || zero_times_inf, c);
    }
    if (zero_times_inf)
        return fpki_nan(f, true, c);
    bool sign_p = x.sign != y.sign;
    if (x.cls == FPK_CLASS_INF || y.cls == FPK_CLASS_INF) {
        if (z.cls == FPK_CLASS_INF && z.sign != sign_p)
            return fpki_nan(f, true, c); /* inf - inf */
        return fpki_inf(f, sign_p, c);
    }
    return fpki_inf(f, z.sign, c);
}

fpk_bits fpk_fma(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_bits d, fpk_ctx *c)
{
    fpki_unpacked x = fpki_unpack(f, a, c);
    fpki_unpacked y = fpki_unpack(f, b, c);
    fpki_unpacked z = fpki_unpack(f, d, c);
    if (fpki_is_special_class(x.cls) || fpki_is_special_class(y.cls) ||
        fpki_is_special_class(z.cls))
        return fma_special(f, x, y, z, c);

    bool sign_p = x.sign != y.sign;
    if (x.sig == 0 || y.sig == 0) {
        if (z.sig == 0)
            return fpki_zero_sum(f, sign_p, z.sign, c);
        return fpki_round_pack(f, z.sign, z.exp, 0, z.sig, c);
    }
    fpki_u128 p = (fpki_u128)x.sig * y.sig; /* exact: at most 106 bits */
    int64_t exp_p = (int64_t)x.exp + y.exp;
    if (z.sig == 0)
        return fpki_round_pack128(f, sign_p, exp_p, p, c);

    /* Place the larger of the two terms with its leading bit at bit 253:
     * the sum fits 255 bits, and the smaller term is exact unless it lies
     * wholly below the larger's last bit (the larger ends at bit 148 or
     * above), where it can be jammed, subtraction included (see add.c). */
    int64_t top_p = exp_p + 127 - fpki_clz128(p);
    int64_t top_z = (int64_t)z.exp + 63 - fpki_clz64(z.sig);
    int64_t exp = (top_p > top_z ? top_p : top_z) - 253;
    wide wp = wide_place(p, exp_p - exp);
    wide wz = wide_place(z.sig, z.exp - exp);
    if (sign_p == z.sign)
        return wide_round_pack(f, sign_p, exp, wide_add(wp, wz), c);
    if (wide_less(wz, wp))
        return wide_round_pack(f, sign_p, exp, wide_sub(wp, wz), c);
    if (wide_less(wp, wz))
        return wide_round_pack(f, z.sign, exp, wide_sub(wz, wp), c);
    return fpki_zero_sum(f, sign_p, z.sign, c);
}
