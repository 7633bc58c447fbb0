/* The reference arithmetic: special operands by IEEE 754-2019 §6 and §7.2
 * and the table of docs/DESIGN.md "Corner cases"; finite operands give an exact MPFR
 * result (add, sub, mul, fma at a precision that holds every bit) or a
 * truncated one with its direction (div, sqrt), rounded once by ref_round. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref.h"

/* Leading-bit exponents of F's finite values lie in [lo, hi): lo is the
 * smallest subnormal's, hi one above the all-ones exponent field's.  Bounds
 * for the precisions below; they need not be tight. */
static long exp_lo(const fpk_format *f)
{
    return 1L - f->bias - f->man_bits;
}

static long exp_hi(const fpk_format *f)
{
    return (1L << f->exp_bits) - f->bias;
}

/* +-0 as the sum of two zeros or of an exact cancellation: the common sign
 * if both addends are zeros of the same sign; otherwise +0, -0 under RDN
 * (IEEE 754-2019 §6.3). */
static ref_result zero_sum(const fpk_format *f, bool x_zero, bool x_neg, bool y_zero,
                           bool y_neg, const fpk_ctx *c)
{
    bool neg = (x_zero && y_zero && x_neg == y_neg) ? x_neg : c->round == FPK_RDN;
    MPFR_DECL_INIT(z, 2);
    mpfr_set_zero(z, neg ? -1 : 1);
    return ref_round(f, z, 0, c);
}

static void check_exact(int ternary, const char *op)
{
    if (ternary != 0) {
        fprintf(stderr, "ref_%s: the exact result did not fit its precision\n", op);
        abort();
    }
}

/* A + B, or A - B when NEGATE_B: the sign of B's value (zero included) is
 * flipped after decoding, as its encoding may have no room for it (no -0
 * in FNUZ, no sign bit in E8M0); a NaN stays a NaN. */
static ref_result add_or_sub(const fpk_format *f, fpk_bits a, fpk_bits b, bool negate_b,
                             const fpk_ctx *c)
{
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    bool xn = !ref_decode_ctx(x, f, a, c), yn = !ref_decode_ctx(y, f, b, c);
    if (negate_b)
        mpfr_neg(y, y, MPFR_RNDN);
    if (xn || yn)
        return ref_nan(f, ref_is_snan(f, a) || ref_is_snan(f, b));
    if (mpfr_inf_p(x) && mpfr_inf_p(y) && mpfr_signbit(x) != mpfr_signbit(y))
        return ref_nan(f, true); /* inf - inf */

    /* Both are multiples of 2^lo below 2^hi: the sum needs hi - lo + 1 bits. */
    MPFR_DECL_INIT(s, exp_hi(f) - exp_lo(f) + 2);
    check_exact(mpfr_add(s, x, y, MPFR_RNDN), "add");
    if (mpfr_zero_p(s))
        return zero_sum(f, mpfr_zero_p(x), mpfr_signbit(x), mpfr_zero_p(y), mpfr_signbit(y), c);
    return ref_round(f, s, 0, c);
}

ref_result ref_add(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c)
{
    return add_or_sub(f, a, b, false, c);
}

ref_result ref_sub(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c)
{
    return add_or_sub(f, a, b, true, c);
}

ref_result ref_mul(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c)
{
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    bool xn = !ref_decode_ctx(x, f, a, c), yn = !ref_decode_ctx(y, f, b, c);
    if (xn || yn)
        return ref_nan(f, ref_is_snan(f, a) || ref_is_snan(f, b));
    if ((mpfr_zero_p(x) && mpfr_inf_p(y)) || (mpfr_inf_p(x) && mpfr_zero_p(y)))
        return ref_nan(f, true); /* 0 * inf */

    MPFR_DECL_INIT(p, 2 * (f->man_bits + 1));
    check_exact(mpfr_mul(p, x, y, MPFR_RNDN), "mul");
    mpfr_setsign(p, p, mpfr_signbit(x) != mpfr_signbit(y), MPFR_RNDN);
    return ref_round(f, p, 0, c);
}

ref_result ref_div(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c)
{
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    bool xn = !ref_decode_ctx(x, f, a, c), yn = !ref_decode_ctx(y, f, b, c);
    if (xn || yn)
        return ref_nan(f, ref_is_snan(f, a) || ref_is_snan(f, b));
    if ((mpfr_zero_p(x) && mpfr_zero_p(y)) || (mpfr_inf_p(x) && mpfr_inf_p(y)))
        return ref_nan(f, true); /* 0/0, inf/inf */
    bool neg = mpfr_signbit(x) != mpfr_signbit(y);

    MPFR_DECL_INIT(q, 2 * (f->man_bits + 1) + 16);
    if (mpfr_zero_p(y) && !mpfr_inf_p(x)) {
        /* finite nonzero / 0: an exact infinity, divide-by-zero alone */
        mpfr_set_inf(q, neg ? -1 : 1);
        ref_result r = ref_round(f, q, 0, c);
        r.flags = FPK_DIVBYZERO;
        return r;
    }
    /* Truncated at more than man_bits + 2 bits; the ternary value, the sign
     * of (q - true quotient), says on which side the true quotient lies.
     * Zero and infinite quotients are exact and take the sign rule. */
    int t = mpfr_div(q, x, y, MPFR_RNDZ);
    mpfr_setsign(q, q, neg, MPFR_RNDN);
    return ref_round(f, q, -t, c);
}

ref_result ref_fma(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_bits d, const fpk_ctx *c)
{
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    MPFR_DECL_INIT(z, 64);
    bool xn = !ref_decode_ctx(x, f, a, c), yn = !ref_decode_ctx(y, f, b, c),
         zn = !ref_decode_ctx(z, f, d, c);
    /* 0 * inf is invalid even when the addend is a quiet NaN (docs/DESIGN.md "NaN"). */
    bool zero_inf = (!xn && !yn) && ((mpfr_zero_p(x) && mpfr_inf_p(y)) ||
                                     (mpfr_inf_p(x) && mpfr_zero_p(y)));
    if (xn || yn || zn)
        return ref_nan(f, zero_inf || ref_is_snan(f, a) || ref_is_snan(f, b) ||
                              ref_is_snan(f, d));
    if (zero_inf)
        return ref_nan(f, true);
    bool p_neg = mpfr_signbit(x) != mpfr_signbit(y);
    if ((mpfr_inf_p(x) || mpfr_inf_p(y)) && mpfr_inf_p(z) && p_neg != mpfr_signbit(z))
        return ref_nan(f, true); /* inf - inf */

    /* The product is a multiple of 2^(2 lo) below 2^(2 hi), the addend one of
     * 2^lo below 2^hi: their sum fits in this many bits. */
    long lo = exp_lo(f), hi = exp_hi(f);
    long top = (2 * hi > hi ? 2 * hi : hi) + 1, bottom = 2 * lo < lo ? 2 * lo : lo;
    MPFR_DECL_INIT(s, top - bottom + 2);
    check_exact(mpfr_fma(s, x, y, z, MPFR_RNDN), "fma");
    if (mpfr_zero_p(s)) {
        bool p_zero = mpfr_zero_p(x) || mpfr_zero_p(y);
        return zero_sum(f, p_zero, p_neg, mpfr_zero_p(z), mpfr_signbit(z), c);
    }
    return ref_round(f, s, 0, c);
}

ref_result ref_sqrt(const fpk_format *f, fpk_bits a, const fpk_ctx *c)
{
    MPFR_DECL_INIT(x, 64);
    if (!ref_decode_ctx(x, f, a, c))
        return ref_nan(f, ref_is_snan(f, a));
    if (mpfr_zero_p(x))
        return ref_round(f, x, 0, c); /* sqrt(-0) = -0 */
    if (mpfr_signbit(x))
        return ref_nan(f, true);

    MPFR_DECL_INIT(r, 2 * (f->man_bits + 1) + 16);
    int t = mpfr_sqrt(r, x, MPFR_RNDZ); /* +inf for +inf */
    return ref_round(f, r, -t, c);
}
