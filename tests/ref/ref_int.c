/* The reference for fpk_to_int64 and fpk_from_int64: MPFR's integer
 * rounding, with ties-away and round-to-odd handled explicitly. */
#include <stdint.h> /* before mpfr.h: it then declares mpfr_get_sj, mpfr_set_sj */
#include <stdlib.h>

#include "ref.h"

/* Whether A is a subnormal encoding of F: exponent field zero, mantissa not. */
static bool is_subnormal(const fpk_format *f, fpk_bits a)
{
    return (a & f->exp_mask) == 0 && (a & f->man_mask) != 0;
}

/* Y := X rounded to an integer in the deterministic MODE.  Y's precision
 * must hold the result exactly. */
static void round_to_integer(mpfr_ptr y, mpfr_srcptr x, fpk_round mode)
{
    switch (mode) {
    case FPK_RNE: mpfr_rint(y, x, MPFR_RNDN); break;
    case FPK_RNA: mpfr_round(y, x); break; /* halfway cases away from zero */
    case FPK_RTZ: mpfr_trunc(y, x); break;
    case FPK_RUP: mpfr_ceil(y, x); break;
    case FPK_RDN: mpfr_floor(y, x); break;
    case FPK_ROD: {
        /* Of the two integers around an inexact X, the odd one. */
        mpfr_trunc(y, x);
        if (!mpfr_equal_p(y, x)) {
            mpfr_t half;
            mpfr_init2(half, mpfr_get_prec(y));
            mpfr_div_2ui(half, y, 1, MPFR_RNDN);
            if (mpfr_integer_p(half))
                mpfr_add_si(y, y, mpfr_sgn(x), MPFR_RNDN);
            mpfr_clear(half);
        }
        break;
    }
    default:
        abort(); /* FPK_SR has no deterministic reference */
    }
}

ref_result ref_to_int64(const fpk_format *f, fpk_bits a, const fpk_ctx *c, int64_t *z)
{
    ref_result res = {0, 0};
    mpfr_t x, y, lim;
    /* 128 bits hold every value of every format (at most 53 significant
     * bits) and every integer a rounding of one can give. */
    mpfr_inits2(128, x, y, lim, (mpfr_ptr)0);
    if (!ref_decode(x, f, a)) {
        res.flags = FPK_INVALID;
        *z = INT64_MIN;
        goto done;
    }
    if (c->daz && is_subnormal(f, a))
        mpfr_set_zero(x, mpfr_signbit(x) ? -1 : 1);
    if (mpfr_inf_p(x)) {
        res.flags = FPK_INVALID;
        *z = mpfr_signbit(x) ? INT64_MIN : INT64_MAX;
        goto done;
    }
    round_to_integer(y, x, c->round);
    mpfr_set_ui_2exp(lim, 1, 63, MPFR_RNDN);
    if (mpfr_cmp(y, lim) >= 0) {
        res.flags = FPK_INVALID;
        *z = INT64_MAX;
        goto done;
    }
    mpfr_neg(lim, lim, MPFR_RNDN);
    if (mpfr_cmp(y, lim) < 0) {
        res.flags = FPK_INVALID;
        *z = INT64_MIN;
        goto done;
    }
    if (!mpfr_equal_p(x, y))
        res.flags = FPK_INEXACT;
    *z = mpfr_get_sj(y, MPFR_RNDN);
done:
    res.bits = (fpk_bits)*z;
    mpfr_clears(x, y, lim, (mpfr_ptr)0);
    return res;
}

ref_result ref_from_int64(const fpk_format *f, int64_t i, const fpk_ctx *c)
{
    mpfr_t x;
    mpfr_init2(x, 64);
    mpfr_set_sj(x, i, MPFR_RNDN); /* exact: 64 bits hold every int64 */
    ref_result res = ref_round(f, x, 0, c);
    mpfr_clear(x);
    return res;
}
