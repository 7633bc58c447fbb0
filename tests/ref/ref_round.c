/* The reference rounding: decodes encodings from the descriptor's field
 * widths and rounds exact values with MPFR, following docs/DESIGN.md "The reference".
 *
 * Method.  A nonzero finite value y = 1.f * 2^E lies on F's grid of ulp
 * 2^q, q = max(E - man_bits, emin - man_bits) (the second term is the
 * subnormal grid).  y * 2^-q is exact in MPFR, and rounding it to an integer
 * n with mpfr_rint/mpfr_round/mpfr_trunc/mpfr_ceil implements each mode on
 * the magnitude (ties-to-even, ties-away, toward zero, away from zero; odd is
 * truncation with the last bit set when inexact).  The rounded value is
 * n * 2^q, with the exponent unbounded above.  The same rounding on the
 * grid of F's precision with the exponent unbounded both ways, 2^(E -
 * man_bits), decides overflow (above max finite: e4m3's 480 overflows; in a
 * format without normal numbers, e1mY, values below 2^emin can too) and
 * tininess after rounding (below 2^emin); before rounding tininess is
 * E < emin.  MPFR's own exponent
 * range, subnormalisation and flags are never used.
 *
 * The special-value rules (fpk_special) are applied around it from the
 * field widths and the rule alone: FNUZ (the sign bit alone is the NaN, so
 * a zero result is +0), NONE (no infinity or NaN: every infinite result is
 * +-max finite, a NaN result the sign bit alone with invalid) and E8M0 (no
 * sign bit; 2^(field - bias) for every field but all ones, the NaN; rounded
 * on the grid of powers of two, see round_e8m0). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref.h"

/* Rounding of a magnitude: the five ways a mode can act on |y|. */
typedef enum mag_mode {
    MAG_NEAR_EVEN,
    MAG_NEAR_AWAY,
    MAG_ZERO,
    MAG_AWAY,
    MAG_ODD,
} mag_mode;

static uint64_t low_mask(int n)
{
    return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

static bool is_e8m0(const fpk_format *f)
{
    return f->special == FPK_SPECIAL_E8M0;
}

/* FNUZ and NONE: every magnitude is finite. */
static bool all_finite(const fpk_format *f)
{
    return f->special == FPK_SPECIAL_FNUZ || f->special == FPK_SPECIAL_NONE;
}

/* The exponent of the smallest normal: E8M0's field 0 is normal. */
static int emin_of(const fpk_format *f)
{
    return (is_e8m0(f) ? 0 : 1) - f->bias;
}

static fpk_bits sign_bit(const fpk_format *f)
{
    return is_e8m0(f) ? 0 : UINT64_C(1) << (f->exp_bits + f->man_bits);
}

/* The sign bit of a zero result: FNUZ has no -0. */
static fpk_bits zero_sign(const fpk_format *f, bool neg)
{
    return neg && f->special != FPK_SPECIAL_FNUZ ? sign_bit(f) : 0;
}

static uint64_t exp_all_ones(const fpk_format *f)
{
    return low_mask(f->exp_bits);
}

/* The canonical NaN: positive; IEEE: all-ones exponent, top mantissa bit;
 * FN and E8M0: all ones; FNUZ: the sign bit alone, which NONE gives for a
 * NaN result too (ml_dtypes' encoding). */
static fpk_bits nan_of(const fpk_format *f)
{
    if (all_finite(f))
        return UINT64_C(1) << (f->exp_bits + f->man_bits);
    fpk_bits e = exp_all_ones(f) << f->man_bits;
    if (f->special != FPK_SPECIAL_IEEE || f->man_bits == 0)
        return e | low_mask(f->man_bits);
    return e | (UINT64_C(1) << (f->man_bits - 1));
}

/* The largest finite encoding: IEEE: exponent all ones minus one, mantissa
 * all ones; FN: all ones but the last mantissa bit (exponent all ones minus
 * one when there is no mantissa, as in E8M0); FNUZ and NONE: all ones. */
static fpk_bits max_of(const fpk_format *f)
{
    int m = f->man_bits;
    if (all_finite(f))
        return (exp_all_ones(f) << m) | low_mask(m);
    if (f->special == FPK_SPECIAL_FN && m > 0)
        return (exp_all_ones(f) << m) | (low_mask(m) - 1);
    return ((exp_all_ones(f) - 1) << m) | low_mask(m);
}

ref_result ref_nan(const fpk_format *f, bool invalid)
{
    return (ref_result){nan_of(f), invalid || f->special == FPK_SPECIAL_NONE ? FPK_INVALID : 0};
}

/* +-infinity, or 0 when F has none. */
static fpk_bits inf_of(const fpk_format *f)
{
    return f->special == FPK_SPECIAL_IEEE ? exp_all_ones(f) << f->man_bits : 0;
}

bool ref_is_snan(const fpk_format *f, fpk_bits a)
{
    int m = f->man_bits;
    uint64_t ef = (a >> m) & exp_all_ones(f), mf = a & low_mask(m);
    return f->special == FPK_SPECIAL_IEEE && m >= 1 && ef == exp_all_ones(f) &&
           mf != 0 && !((mf >> (m - 1)) & 1);
}

/* Raises X's precision to man_bits + 1 when it is lower, so that the value
 * is exact; a higher precision is kept. */
bool ref_decode(mpfr_ptr x, const fpk_format *f, fpk_bits a)
{
    int m = f->man_bits;
    bool neg = !is_e8m0(f) && ((a >> (f->exp_bits + m)) & 1);
    uint64_t ef = (a >> m) & exp_all_ones(f), mf = a & low_mask(m);

    if (mpfr_get_prec(x) < m + 1)
        mpfr_set_prec(x, m + 1);
    bool nan = false;
    if (all_finite(f))
        nan = f->special == FPK_SPECIAL_FNUZ && neg && ef == 0 && mf == 0;
    else if (ef == exp_all_ones(f))
        nan = f->special == FPK_SPECIAL_IEEE ? mf != 0 : mf == low_mask(m);
    if (nan) {
        mpfr_set_nan(x);
        return false;
    }
    if (ef == exp_all_ones(f) && f->special == FPK_SPECIAL_IEEE) {
        mpfr_set_inf(x, neg ? -1 : 1);
        return true;
    }
    /* value = mantissa * 2^(emin - m) (subnormal) or
     * (2^m + mantissa) * 2^(ef - bias - m) (normal; every E8M0 field) */
    int ret;
    if (ef == 0 && !is_e8m0(f))
        ret = mpfr_set_uj_2exp(x, mf, emin_of(f) - m, MPFR_RNDN);
    else
        ret = mpfr_set_uj_2exp(x, (UINT64_C(1) << m) | mf,
                               (intmax_t)ef - f->bias - m, MPFR_RNDN);
    if (ret != 0)
        abort(); /* cannot happen: the precision holds m + 1 bits */
    if (neg)
        mpfr_neg(x, x, MPFR_RNDN);
    return true;
}

bool ref_decode_ctx(mpfr_ptr x, const fpk_format *f, fpk_bits a, const fpk_ctx *c)
{
    int m = f->man_bits;
    uint64_t ef = (a >> m) & exp_all_ones(f), mf = a & low_mask(m);
    if (c->daz && ef == 0 && mf != 0) /* a subnormal reads as the zero of its sign */
        a &= f->special == FPK_SPECIAL_FNUZ ? 0 : sign_bit(f);
    return ref_decode(x, f, a);
}

static mag_mode mag_mode_of(fpk_round r, bool neg)
{
    switch (r) {
    case FPK_RNE:
        return MAG_NEAR_EVEN;
    case FPK_RNA:
        return MAG_NEAR_AWAY;
    case FPK_RTZ:
        return MAG_ZERO;
    case FPK_RUP:
        return neg ? MAG_ZERO : MAG_AWAY;
    case FPK_RDN:
        return neg ? MAG_AWAY : MAG_ZERO;
    case FPK_ROD:
        return MAG_ODD;
    default:
        fprintf(stderr, "ref_round: rounding mode %d is not deterministic\n", (int)r);
        abort();
    }
}

/* Returns |Y| * 2^-Q rounded to an integer in mode MM, which must be below
 * 2^63; *INEXACT tells whether it changed. */
static uint64_t round_to_grid(mpfr_srcptr y, long q, mag_mode mm, bool *inexact)
{
    MPFR_DECL_INIT(t, mpfr_get_prec(y));
    MPFR_DECL_INIT(n, 64);
    mpfr_abs(t, y, MPFR_RNDN);
    mpfr_mul_2si(t, t, -q, MPFR_RNDN); /* exact: a power of two */
    switch (mm) {
    case MAG_NEAR_EVEN:
        mpfr_rint(n, t, MPFR_RNDN); /* ties to even */
        break;
    case MAG_NEAR_AWAY:
        mpfr_round(n, t); /* ties away from zero */
        break;
    case MAG_ZERO:
    case MAG_ODD:
        mpfr_trunc(n, t);
        break;
    case MAG_AWAY:
        mpfr_ceil(n, t);
        break;
    }
    *inexact = !mpfr_equal_p(n, t);
    uint64_t z = mpfr_get_uj(n, MPFR_RNDN);
    if (mm == MAG_ODD && *inexact)
        z |= 1;
    return z;
}

/* Compares N * 2^Q with V. */
static int cmp_scaled(uint64_t n, long q, mpfr_srcptr v)
{
    MPFR_DECL_INIT(r, 64);
    mpfr_set_uj_2exp(r, n, q, MPFR_RNDN); /* exact */
    return mpfr_cmp(r, v);
}

/* The result "+-infinity" in F with FLAGS: +-max finite under saturate and
 * always in NONE, the canonical NaN where F has no infinity (and for -inf
 * in E8M0, which has no negative numbers). */
static ref_result inf_result(const fpk_format *f, bool neg, unsigned flags, const fpk_ctx *c)
{
    fpk_bits s = neg ? sign_bit(f) : 0;
    if (is_e8m0(f) && neg)
        return (ref_result){nan_of(f), flags};
    if (c->saturate || f->special == FPK_SPECIAL_NONE)
        return (ref_result){s | max_of(f), flags};
    if (inf_of(f) == 0)
        return (ref_result){nan_of(f), flags};
    return (ref_result){s | inf_of(f), flags};
}

/* The exponent of the ulp of F's grid at a value whose leading bit is 2^E:
 * its normal grid, and below 2^emin the subnormal one; E8M0 has no
 * subnormals, its grid is every power of two. */
static long grid_exp(const fpk_format *f, long e)
{
    int m = f->man_bits, emin = emin_of(f);
    return is_e8m0(f) || e - m > emin - m ? e - m : emin - m;
}

/* round_exact for E8M0: Y rounded to a power of two 2^r (the exponent
 * unbounded both ways) with magnitude rounding MM; r > emax overflows as in
 * formats without infinity; r < emin gives 2^emin (field 0) with underflow
 * and inexact; otherwise field r + bias, inexact as the rounding was, and
 * underflow only for tininess before rounding (E < emin).  A negative Y is
 * invalid. */
static ref_result round_e8m0(const fpk_format *f, mpfr_srcptr y, mag_mode mm, const fpk_ctx *c)
{
    if (mpfr_signbit(y))
        return (ref_result){nan_of(f), FPK_INVALID};
    long e = (long)mpfr_get_exp(y) - 1, emin = emin_of(f);
    long emax = (long)exp_all_ones(f) - 1 - f->bias;
    bool inexact;
    uint64_t n = round_to_grid(y, e, mm, &inexact); /* 1, or 2 when it rounded up */
    long r = e + (n == 2);
    if (r > emax) {
        unsigned flags = FPK_OVERFLOW | FPK_INEXACT;
        if (mm == MAG_ZERO || mm == MAG_ODD)
            return (ref_result){max_of(f), flags};
        return inf_result(f, false, flags, c);
    }
    if (r < emin)
        return (ref_result){0, FPK_UNDERFLOW | FPK_INEXACT};
    unsigned flags = inexact ? FPK_INEXACT : 0;
    if (inexact && c->tiny_before && e < emin)
        flags |= FPK_UNDERFLOW;
    return (ref_result){(fpk_bits)(r + f->bias), flags};
}

/* Rounds Y (exact, finite, nonzero) into F with magnitude rounding MM, and
 * C's tiny_before, ftz and saturate. */
static ref_result round_exact(const fpk_format *f, mpfr_srcptr y, mag_mode mm, const fpk_ctx *c)
{
    if (is_e8m0(f))
        return round_e8m0(f, y, mm, c);
    int m = f->man_bits, emin = emin_of(f);
    bool neg = mpfr_signbit(y);
    fpk_bits sign = neg ? sign_bit(f) : 0;
    long e = (long)mpfr_get_exp(y) - 1; /* MPFR: y = 0.1f * 2^exp; IEEE: 1.f * 2^e */
    long q = grid_exp(f, e);
    bool inexact, unused;
    uint64_t n = round_to_grid(y, q, mm, &inexact);
    uint64_t np = round_to_grid(y, e - m, mm, &unused); /* the precision's grid */

    MPFR_DECL_INIT(maxv, 64);
    ref_decode(maxv, f, max_of(f));
    if (cmp_scaled(np, e - m, maxv) > 0) {
        unsigned flags = FPK_OVERFLOW | FPK_INEXACT;
        if (mm == MAG_ZERO || mm == MAG_ODD)
            return (ref_result){sign | max_of(f), flags};
        return inf_result(f, neg, flags, c);
    }

    /* |y| >= 2^emin rounds to at least 2^emin in every mode: not tiny. */
    bool tiny;
    if (c->tiny_before || e >= emin) {
        tiny = e < emin;
    } else {
        MPFR_DECL_INIT(minnorm, 64);
        mpfr_set_ui_2exp(minnorm, 1, emin, MPFR_RNDN);
        tiny = cmp_scaled(np, e - m, minnorm) < 0;
    }
    unsigned flags = inexact ? FPK_INEXACT : 0;
    if (tiny && inexact)
        flags |= FPK_UNDERFLOW;

    if (n >> (m + 1)) { /* rounded up to 2^(m+1): the next binade */
        n >>= 1;
        q++;
    }
    if (n >> m) /* normal: n = 2^m + mantissa, leading bit at 2^(q+m) */
        return (ref_result){sign | ((uint64_t)(q + m + f->bias) << m) | (n - (UINT64_C(1) << m)),
                            flags};
    if (n != 0 && c->ftz) /* a nonzero subnormal result */
        return (ref_result){zero_sign(f, neg), flags | FPK_UNDERFLOW | FPK_INEXACT};
    if (n == 0)
        return (ref_result){zero_sign(f, neg), flags};
    return (ref_result){sign | n, flags}; /* subnormal: q = emin - m */
}

/* Where ref.h leaves it open: an infinite X gives +-inf (+-max under
 * saturate) with no flags; where F has no infinity, the canonical NaN (+-max
 * under saturate, always in NONE) with invalid, the rule for converting
 * infinity.  Callers with other rules (x/0) replace the flags.  An exact
 * zero is +-0 (FNUZ: +0); E8M0 has none: the NaN with invalid. */
ref_result ref_round(const fpk_format *f, mpfr_srcptr x, int dir, const fpk_ctx *c)
{
    bool neg = mpfr_signbit(x);

    mag_mode_of(c->round, neg); /* rejects FPK_SR */
    if (mpfr_nan_p(x))
        return ref_nan(f, false);
    if (mpfr_inf_p(x))
        return inf_result(f, neg, inf_of(f) == 0 ? FPK_INVALID : 0, c);
    if (mpfr_zero_p(x) && dir == 0)
        return is_e8m0(f) ? (ref_result){nan_of(f), FPK_INVALID}
                          : (ref_result){zero_sign(f, neg), 0};

    /* Replace X + DIR*epsilon by an exact value y in the same open interval
     * between neighbours of X's precision: the grid of F, its midpoints and
     * 2^emin are numbers of that precision too (or coarser), so y rounds
     * exactly as the true value does. */
    MPFR_DECL_INIT(y, mpfr_get_prec(x) + 4);
    dir = (dir > 0) - (dir < 0);
    if (mpfr_zero_p(x)) {
        /* a nonzero value far below half the smallest subnormal */
        mpfr_set_si_2exp(y, dir, emin_of(f) - f->man_bits - 8, MPFR_RNDN);
    } else {
        MPFR_DECL_INIT(eps, 2);
        mpfr_set_si_2exp(eps, dir, mpfr_get_exp(x) - (mpfr_exp_t)mpfr_get_prec(x) - 2,
                         MPFR_RNDN);
        if (mpfr_add(y, x, eps, MPFR_RNDN) != 0)
            abort(); /* cannot happen: y has room for every bit */
    }
    return round_exact(f, y, mag_mode_of(c->round, mpfr_signbit(y)), c);
}

ref_result ref_convert(const fpk_format *to, const fpk_format *from, fpk_bits a, const fpk_ctx *c)
{
    MPFR_DECL_INIT(x, 64);
    if (!ref_decode_ctx(x, from, a, c))
        return ref_nan(to, ref_is_snan(from, a));
    return ref_round(to, x, 0, c);
}

bool ref_neighbours(const fpk_format *f, mpfr_srcptr x, const fpk_ctx *c,
                    ref_result *lo, ref_result *hi, double *frac)
{
    long q = grid_exp(f, (long)mpfr_get_exp(x) - 1);

    MPFR_DECL_INIT(t, mpfr_get_prec(x));
    mpfr_abs(t, x, MPFR_RNDN);
    mpfr_mul_2si(t, t, -q, MPFR_RNDN);
    mpfr_frac(t, t, MPFR_RNDN); /* exact: fewer bits than t */
    *frac = mpfr_get_d(t, MPFR_RNDN);

    *lo = round_exact(f, x, MAG_ZERO, c);
    if (mpfr_zero_p(t)) {
        *hi = *lo;
        return false;
    }
    *hi = round_exact(f, x, MAG_AWAY, c);
    return true;
}
