/* A model of the NVIDIA tensor cores' dot-product step, bit for bit as
 * published: Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of
 * NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330 (2021), for Volta, Turing
 * and Ampere; Khattak and Mikaitis, "Accurate models of NVIDIA tensor
 * cores", arXiv:2512.07004 (2025), for Hopper and for the alignment of a
 * leading product whose significand lies in [2, 4).  The model is
 * parameterised (fpk_tc_params); each architecture's published parameters
 * are one set of them (fpk_tc_params_of), and fpk-hwcheck --probe measures
 * a device's.
 *
 * One step computes c + a1*b1 + ... + ak*bk, k up to the parameters'
 * terms, as one fused operation:
 *  - the products are exact (Fasi et al., section "Accuracy of the dot
 *    products": 4(1 - 2^-11)^2 comes out exact);
 *  - every addend is aligned to the largest exponent E among them and
 *    truncated below 2^(E - window): toward zero, or with floor toward
 *    minus infinity (two's complement).  The window is 23 + x, x the
 *    architecture's extra alignment bits: 0 on Volta ("Features of the
 *    accumulator", test 1: 1 - (1 - 2^-24) gives 2^-23), 1 on Turing and
 *    Ampere (the same test gives 2^-24), 2 on Hopper; a product's exponent
 *    is that of its factors' encodings summed, plus one when its
 *    significand reaches 2, and when such a product holds E the window
 *    keeps one bit more (wide);
 *  - the truncated addends are summed exactly (the carry-out bits suffice:
 *    test 4, 1 + 1.5 + 1.75 + 1.875 + 1.875 = 8) and the sum is normalised
 *    once, at the end (tests 2 and 3, and the non-monotonicity of test 5);
 *  - the sum is rounded into the accumulator's format as the parameters
 *    say: toward zero into binary32 (section "Rounding modes": 2 + 2^-23 +
 *    2^-24 gives 2, its negative -2), subnormals included, an overflow
 *    giving infinity; to nearest even into binary16, in the binary16
 *    accumulation mode.
 * Longer dot products are steps of k, each step's result the next one's c.
 * With a promotion interval P (FP8 inputs on Hopper, as DeepSeek-V3's
 * kernels run them: DeepSeek-AI, "DeepSeek-V3 Technical Report",
 * arXiv:2412.19437, section 3.3.2), every P products start a chain of
 * steps from +0 whose result is added to a binary32 accumulator, c at
 * first, by an addition rounded to nearest even. */
#include <string.h>

#include "arith.h"

static const struct {
    const char *name;
    int terms;      /* products per step, fp16 and bf16 inputs */
    int terms_tf32; /* the same for tf32 inputs; 0: not taken */
    bool bf16;      /* bf16 inputs taken */
    int extra;      /* alignment bits below binary32's precision */
    int terms_fp8;  /* products per step, e4m3 and e5m2 inputs; 0: not taken */
} archs[FPK_TC_ARCH_COUNT] = {
    [FPK_TC_VOLTA] = {"volta", 4, 0, false, 0, 0},
    [FPK_TC_TURING] = {"turing", 4, 0, false, 1, 0},
    [FPK_TC_AMPERE] = {"ampere", 8, 4, true, 1, 0},
    [FPK_TC_HOPPER] = {"hopper", 16, 8, true, 2, 32},
};

/* FP8 on Hopper: not measured in public bit for bit.  DeepSeek-V3's report
 * (section 3.3.2) finds the accumulation keeping about 14 bits, and the
 * accumulator format reported for it is e8m13: 13 fraction bits below the
 * leading exponent, truncated; its kernels promote the partial sums to
 * binary32 every 128 products along K.  A candidate until fpk-hwcheck
 * --probe measures it on a device (cuda/RESULTS.md). */
#define FP8_WINDOW 13
#define FP8_PROMOTE 128

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
    bool fp8 = in == &fpk_e4m3 || in == &fpk_e5m2;
    if (acc != &fpk_fp32 && !(acc == &fpk_fp16 && fp16))
        return 0;
    if (fp16 || (bf16 && archs[arch].bf16))
        return archs[arch].terms;
    if (fp8)
        return archs[arch].terms_fp8;
    return tf32 ? archs[arch].terms_tf32 : 0;
}

bool fpk_tc_params_of(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc,
                      fpk_tc_params *p)
{
    int k = fpk_tc_terms(arch, in, acc);
    if (k == 0)
        return false;
    bool fp8 = in == &fpk_e4m3 || in == &fpk_e5m2;
    p->terms = k;
    p->window = fp8 ? FP8_WINDOW : 23 + archs[arch].extra;
    p->wide = true;
    p->floor = false;
    p->round = acc == &fpk_fp32 ? FPK_RTZ : FPK_RNE;
    p->promote = fp8 ? FP8_PROMOTE : 0;
    return true;
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

/* One step under P: C (in ACC) + the K products of A and B (in IN). */
static fpk_bits step(const fpk_tc_params *p, const fpk_format *in, const fpk_format *acc,
                     const fpk_bits *a, const fpk_bits *b, size_t k, fpk_bits c)
{
    enum { MAXK = FPK_TC_MAX_TERMS };
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
            addend q = {sign, ua.sig * ub.sig, ua.exp + ub.exp, ea + eb};
            bool two = floor_log2(q.sig, q.exp) == ea + eb + 1;
            q.align += two;
            if (m == 0 || q.align > top) {
                top = q.align;
                wide = two;
            } else if (q.align == top) {
                wide |= two;
            }
            t[m++] = q;
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
     * is at most 2^top, so each is below 2^(window + 3) units and the sum
     * of FPK_TC_MAX_TERMS + 1 fits. */
    int low = top - p->window - (p->wide && wide);
    int64_t sum = 0;
    for (size_t i = 0; i < m; i++) {
        int d = t[i].exp - low;
        uint64_t u = d >= 0 ? t[i].sig << d : -d < 64 ? t[i].sig >> -d : 0;
        /* floor: a negative addend that lost bits is one unit further down */
        bool cut = d < 0 && (-d >= 64 || (t[i].sig & (((uint64_t)1 << -d) - 1)) != 0);
        if (p->floor && t[i].sign && cut)
            u++;
        sum += t[i].sign ? -(int64_t)u : (int64_t)u;
    }
    if (sum == 0)
        return 0;
    fpk_ctx rc = fpk_ctx_default();
    rc.round = p->round;
    bool neg = sum < 0;
    fpk_bits z = fpki_round_pack(acc, neg, low, 0, neg ? (uint64_t)-sum : (uint64_t)sum, &rc);
    if (rc.flags & FPK_OVERFLOW)
        return fpki_zero(acc, neg) | acc->inf;
    return z;
}

/* C + the N products of A and B as steps of P->terms, C their first
 * accumulator. */
static fpk_bits chain(const fpk_tc_params *p, const fpk_format *in, const fpk_format *acc,
                      const fpk_bits *a, const fpk_bits *b, size_t n, fpk_bits c)
{
    size_t k = (size_t)p->terms;
    for (size_t i = 0; i < n; i += k)
        c = step(p, in, acc, a + i, b + i, n - i < k ? n - i : k, c);
    return c;
}

/* Whether P is a parameter set the model takes. */
static bool valid(const fpk_tc_params *p)
{
    return p && p->terms >= 1 && p->terms <= FPK_TC_MAX_TERMS && p->window >= 1 &&
           p->window <= FPK_TC_MAX_WINDOW && (p->round == FPK_RTZ || p->round == FPK_RNE) &&
           p->promote >= 0;
}

fpk_bits fpk_tc_dot_params(const fpk_tc_params *p, const fpk_format *in, const fpk_format *acc,
                           const fpk_bits *a, const fpk_bits *b, size_t n, fpk_bits c)
{
    if (!acc || (acc != &fpk_fp32 && acc != &fpk_fp16))
        return fpk_fp32.nan;
    if (!valid(p) || !in || in->man_bits > 23 || in->width > 32)
        return acc->nan;
    if (p->promote == 0)
        return chain(p, in, acc, a, b, n, c);
    size_t every = (size_t)p->promote;
    fpk_ctx rn = fpk_ctx_default();
    for (size_t i = 0; i < n; i += every) {
        fpk_bits part = chain(p, in, acc, a + i, b + i, n - i < every ? n - i : every, 0);
        c = fpk_add(acc, c, part, &rn);
    }
    return c;
}

fpk_bits fpk_tc_dot(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc,
                    const fpk_bits *a, const fpk_bits *b, size_t n, fpk_bits c)
{
    fpk_tc_params p;
    if (!fpk_tc_params_of(arch, in, acc, &p))
        return acc ? acc->nan : fpk_fp32.nan;
    return fpk_tc_dot_params(&p, in, acc, a, b, n, c);
}
