/* Loss scales and FP8 scales (scaling.h). */
#include <float.h>
#include <math.h>
#include <strings.h>

#include "scaling.h"

static int clamp_log2(int k)
{
    return k < SCALING_LOG2_MIN ? SCALING_LOG2_MIN : k > SCALING_LOG2_MAX ? SCALING_LOG2_MAX : k;
}

/* Whether AMAX or -AMAX times 2^K overflows F under MODE. */
static bool overflows(const fpk_format *f, double amax, int k, fpk_round mode)
{
    double s = ldexp(1.0, k); /* exact: a power of two a double holds */
    for (int neg = 0; neg < 2; neg++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = mode != FPK_SR ? mode : neg ? FPK_RDN : FPK_RUP;
        fpk_bits z = fpk_from_double_scaled(f, neg ? -amax : amax, s, &c);
        fpk_class cls = fpk_classify(f, z);
        if ((c.flags & FPK_OVERFLOW) ||
            (cls != FPK_CLASS_NORMAL && cls != FPK_CLASS_SUBNORMAL && cls != FPK_CLASS_ZERO))
            return true;
    }
    return false;
}

int scaling_loss_log2(const fpk_format *f, double amax, fpk_round mode)
{
    int e;
    frexp(amax, &e); /* amax in [2^(e-1), 2^e); max finite in [2^emax, 2^(emax+1)) */
    int k = clamp_log2(f->emax + 1 - e);
    while (k > SCALING_LOG2_MIN && overflows(f, amax, k, mode))
        k--;
    while (k < SCALING_LOG2_MAX && !overflows(f, amax, k + 1, mode))
        k++;
    return k;
}

const char *scaling_rule_name(scaling_rule r)
{
    return r == SCALING_POW2 ? "pow2" : "exact";
}

bool scaling_rule_lookup(const char *name, scaling_rule *r)
{
    if (strcasecmp(name, "exact") == 0)
        *r = SCALING_EXACT;
    else if (strcasecmp(name, "pow2") == 0)
        *r = SCALING_POW2;
    else
        return false;
    return true;
}

/* Whether AMAX * 2^K <= MAX (fp64 encodings), exactly. */
static bool fits(double amax, int k, fpk_bits max)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits y = fpk_from_double_scaled(&fpk_fp64, amax, ldexp(1.0, k), &c);
    return fpk_le(&fpk_fp64, y, max, &c);
}

double scaling_fp8(const fpk_format *f, double amax, int margin, scaling_rule rule)
{
    fpk_ctx c = fpk_ctx_default();
    if (rule == SCALING_POW2) {
        fpk_bits max = fpk_convert(&fpk_fp64, f, f->max_finite, &c);
        int e;
        frexp(amax, &e);
        int k = clamp_log2(f->emax + 1 - e);
        while (k > SCALING_LOG2_MIN && !fits(amax, k, max))
            k--;
        while (k < SCALING_LOG2_MAX && fits(amax, k + 1, max))
            k++;
        return ldexp(1.0, clamp_log2(k - margin));
    }
    fpk_bits m = fpk_from_double(&fpk_fp32, amax, &c);
    fpk_class k = fpk_classify(&fpk_fp32, m);
    if (k != FPK_CLASS_NORMAL && k != FPK_CLASS_SUBNORMAL)
        return 0;
    fpk_bits max = fpk_convert(&fpk_fp32, f, f->max_finite, &c);
    fpk_bits q = fpk_div(&fpk_fp32, max, m, &c);
    fpk_bits p = fpk_from_double(&fpk_fp32, ldexp(1.0, margin), &c); /* exact to 2^127 */
    q = fpk_div(&fpk_fp32, q, p, &c);
    fpk_class kq = fpk_classify(&fpk_fp32, q);
    if (kq != FPK_CLASS_NORMAL && kq != FPK_CLASS_SUBNORMAL)
        return 0;
    return fpk_to_double(&fpk_fp32, q);
}

bool scaling_fp8_f32(const fpk_format *f, double amax, int margin, scaling_rule rule,
                     fpk_bits *scale)
{
    if (!(amax > 0 && amax <= DBL_MAX))
        return false;
    fpk_ctx c = fpk_ctx_default();
    double q = scaling_fp8(f, amax, margin, rule);
    fpk_bits b = fpk_from_double(&fpk_fp32, q, &c);
    /* q is 0 where the float32 quotient overflows (a small AMAX) or the
     * margin takes it below float32 (a large one); pow2's q is a double
     * power of two, beyond float32 either way in those cases. */
    if (q == 0 || (c.flags & (FPK_OVERFLOW | FPK_INEXACT))) {
        if (amax >= 1)
            return false;
        c = fpk_ctx_default();
        b = rule == SCALING_POW2 ? fpk_from_double(&fpk_fp32, 0x1p127, &c) : fpk_fp32.max_finite;
    }
    *scale = b;
    return true;
}
