/* A model of the NVIDIA tensor cores' dot-product step, bit for bit as
 * published: Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of
 * NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330 (2021), for Volta, Turing
 * and Ampere; Khattak and Mikaitis, "Accurate models of NVIDIA tensor
 * cores", arXiv:2512.07004 (2025), for Hopper and for the alignment of a
 * leading product whose significand lies in [2, 4).
 *
 * One step computes c + a1*b1 + ... + ak*bk, k up to the architecture's
 * block size, as one fused operation:
 *  - the products are exact (Fasi et al., section "Accuracy of the dot
 *    products": 4(1 - 2^-11)^2 comes out exact);
 *  - every addend is aligned to the largest exponent E among them and
 *    truncated (toward zero) below 2^(E - 23 - x), x the architecture's
 *    extra alignment bits: 0 on Volta ("Features of the accumulator", test
 *    1: 1 - (1 - 2^-24) gives 2^-23), 1 on Turing and Ampere (the same
 *    test gives 2^-24), 2 on Hopper; a product's exponent is that of its
 *    factors' encodings summed, plus one when its significand reaches 2, and
 *    when such a product holds E the window keeps one bit more;
 *  - the truncated addends are summed exactly (the carry-out bits suffice:
 *    test 4, 1 + 1.5 + 1.75 + 1.875 + 1.875 = 8) and the sum is normalised
 *    once, at the end (tests 2 and 3, and the non-monotonicity of test 5);
 *  - the sum is rounded toward zero into binary32 (section "Rounding
 *    modes": 2 + 2^-23 + 2^-24 gives 2, its negative -2), subnormals
 *    included, an overflow giving infinity; into binary16, in the binary16
 *    accumulation mode, to nearest even.
 * Longer dot products are blocks of k, each step's result the next one's c. */
#include <string.h>

#include "arith.h"

static const struct {
    const char *name;
    int terms;      /* products per step, fp16 and bf16 inputs */
    int terms_tf32; /* the same for tf32 inputs; 0: not taken */
    bool bf16;      /* bf16 inputs taken */
    int extra;      /* alignment bits below binary32's precision */
} archs[FPK_TC_ARCH_COUNT] = {
    [FPK_TC_VOLTA] = {"volta", 4, 0, false, 0},
    [FPK_TC_TURING] = {"turing", 4, 0, false, 1},
    [FPK_TC_AMPERE] = {"ampere", 8, 4, true, 1},
    [FPK_TC_HOPPER] = {"hopper", 16, 8, true, 2},
};

const char *fpk_tc_arch_name(fpk_tc_arch arch)
{
    return (unsigned)arch < FPK_TC_ARCH_COUNT ? archs[arch].name : "?";
}

bool fpk_tc_arch_lookup(const char *name, fpk_tc_arch *arch)
{
    for (int i = 0; name && i < FPK_TC_ARCH_COUNT; i++)
        if (strcmp(name, archs[i].name) == 0) {
            *arch = (fpk_tc_arch)i;
            return true;
        }
    return false;
}

int fpk_tc_terms(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc)
{
    if ((unsigned)arch >= FPK_TC_ARCH_COUNT || !in || !acc)
        return 0;
    bool fp16 = in == &fpk_fp16, bf16 = in == &fpk_bf16, tf32 = in == &fpk_tf32;
    if (acc != &fpk_fp32 && !(acc == &fpk_fp16 && fp16))
        return 0;
    if (fp16 || (bf16 && archs[arch].bf16))
        return archs[arch].terms;
    return tf32 ? archs[arch].terms_tf32 : 0;
}

/* The exponent of A's encoding: floor(log2|A|), or emin for a subnormal. */
static int enc_exp(const fpk_format *f, fpk_bits a)
{
    int field = (int)((a & f->exp_mask) >> f->man_bits);
    return (field ? field : 1) - f->bias;
}

static int floor_log2(uint64_t sig, int32_t exp)
{
    return exp + 63 - fpki_clz64(sig);
}

/* An addend of a step: (-1)^sign * sig * 2^exp, aligned by exponent ALIGN. */
typedef struct addend {
    bool sign;
    uint64_t sig;
    int32_t exp;
    int align;
} addend;

/* One step: C (in ACC) + the K products of A and B (in IN). */
static fpk_bits step(const fpk_format *in, const fpk_format *acc, int extra, const fpk_bits *a,
                     const fpk_bits *b, size_t k, fpk_bits c)
{
    enum { MAXK = 16 };
    fpki_unpacked uc = fpki_unpack(acc, c, NULL);
    bool nan = fpki_is_nan_class(uc.cls);
    bool pinf = uc.cls == FPK_CLASS_INF && !uc.sign, ninf = uc.cls == FPK_CLASS_INF && uc.sign;
    addend t[MAXK + 1];
    size_t m = 0;
    int top = 0;       /* the largest exponent of a product */
    bool wide = false; /* a product of that exponent has a significand in [2, 4) */
    for (size_t i = 0; i < k; i++) {
        fpki_unpacked ua = fpki_unpack(in, a[i], NULL), ub = fpki_unpack(in, b[i], NULL);
        bool sign = ua.sign != ub.sign;
        if (fpki_is_nan_class(ua.cls) || fpki_is_nan_class(ub.cls)) {
            nan = true;
        } else if (ua.cls == FPK_CLASS_INF || ub.cls == FPK_CLASS_INF) {
            if (ua.cls == FPK_CLASS_ZERO || ub.cls == FPK_CLASS_ZERO)
                nan = true; /* 0 * inf */
            pinf |= !sign;
            ninf |= sign;
        } else if (ua.cls != FPK_CLASS_ZERO && ub.cls != FPK_CLASS_ZERO) {
            int ea = enc_exp(in, a[i]), eb = enc_exp(in, b[i]);
            addend p = {sign, ua.sig * ub.sig, ua.exp + ub.exp, ea + eb};
            bool two = floor_log2(p.sig, p.exp) == ea + eb + 1;
            p.align += two;
            if (m == 0 || p.align > top) {
                top = p.align;
                wide = two;
            } else if (p.align == top) {
                wide |= two;
            }
            t[m++] = p;
        }
    }
    if (nan || (pinf && ninf))
        return acc->nan;
    if (pinf || ninf)
        return fpki_zero(acc, ninf) | acc->inf;

    /* c, by its exponent as a binary32 encoding holds it (a subnormal by
     * binary32's least normal exponent); it may hold E, a product then
     * only if it has c's exponent. */
    if (uc.cls != FPK_CLASS_ZERO) {
        int ec = floor_log2(uc.sig, uc.exp);
        ec = ec < fpk_fp32.emin ? fpk_fp32.emin : ec;
        if (m == 0 || ec > top) {
            top = ec;
            wide = false;
        }
        t[m++] = (addend){uc.sign, uc.sig, uc.exp, ec};
    }
    if (m == 0)
        return 0;

    /* Aligned and truncated, in units of 2^low: every addend's leading bit
     * is at most 2^top, so each is below 2^27 units and the sum of 17 fits. */
    int low = top - 23 - extra - wide;
    int64_t sum = 0;
    for (size_t i = 0; i < m; i++) {
        int d = t[i].exp - low;
        uint64_t u = d >= 0 ? t[i].sig << d : -d < 64 ? t[i].sig >> -d : 0;
        sum += t[i].sign ? -(int64_t)u : (int64_t)u;
    }
    if (sum == 0)
        return 0;
    fpk_ctx rc = fpk_ctx_default();
    rc.round = acc == &fpk_fp32 ? FPK_RTZ : FPK_RNE;
    bool neg = sum < 0;
    fpk_bits z = fpki_round_pack(acc, neg, low, 0, neg ? (uint64_t)-sum : (uint64_t)sum, &rc);
    if (rc.flags & FPK_OVERFLOW)
        return fpki_zero(acc, neg) | acc->inf;
    return z;
}

fpk_bits fpk_tc_dot(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc,
                    const fpk_bits *a, const fpk_bits *b, size_t n, fpk_bits c)
{
    int k = fpk_tc_terms(arch, in, acc);
    if (k == 0)
        return acc ? acc->nan : fpk_fp32.nan;
    for (size_t i = 0; i < n; i += (size_t)k)
        c = step(in, acc, archs[arch].extra, a + i, b + i, n - i < (size_t)k ? n - i : (size_t)k,
                 c);
    return c;
}
