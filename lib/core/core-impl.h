/* Internals shared by the library's sources; not installed. */
#ifndef FPKIT_IMPL_H
#define FPKIT_IMPL_H

#ifdef HAVE_CONFIG_H
#include "config.h" /* FPK_ASSERTIONS */
#endif
#include "fpkit.h"

/* Internal checks, compiled in with --enable-assertions (FPK_ASSERTIONS):
 * a fast path against the general one, an invariant.  A failed check is a
 * bug in fpkit; it prints where and what to standard error and aborts, the
 * one place where the library writes or ends the program. */
#ifdef FPK_ASSERTIONS
_Noreturn void fpki_assert_fail(const char *file, int line, const char *what);
#define FPKI_ASSERT(x) ((x) ? (void)0 : fpki_assert_fail(__FILE__, __LINE__, #x))
#else
#define FPKI_ASSERT(x) ((void)0)
#endif

/* Whether two contexts hold the same settings, flags and SR counter. */
static inline bool fpki_ctx_same(const fpk_ctx *a, const fpk_ctx *b)
{
    return a->round == b->round && a->flags == b->flags && a->tiny_before == b->tiny_before &&
           a->ftz == b->ftz && a->daz == b->daz && a->saturate == b->saturate &&
           a->sr_seed == b->sr_seed && a->sr_counter == b->sr_counter && a->sr_bits == b->sr_bits;
}

#define FPKI_MASK(n) (((fpk_bits)1 << (n)) - 1)
#define FPKI_EXP_MASK(e, m) (FPKI_MASK(e) << (m))
/* The NaN rule decides the largest finite encoding: IEEE reserves the
 * all-ones exponent, FN and E8M0 only its all-ones mantissa; FNUZ and NONE
 * keep every magnitude finite. */
#define FPKI_MAX_FINITE(e, m, sp)                                             \
    ((sp) == FPK_SPECIAL_IEEE                                   ? FPKI_EXP_MASK(e, m) - 1 \
     : (sp) == FPK_SPECIAL_FNUZ || (sp) == FPK_SPECIAL_NONE ? FPKI_EXP_MASK(e, m) | FPKI_MASK(m) \
                                                            : (FPKI_EXP_MASK(e, m) | FPKI_MASK(m)) - 1)
/* E8M0 has no sign bit, and its exponent field 0 is normal. */
#define FPKI_SIGN_BITS(sp) ((sp) == FPK_SPECIAL_E8M0 ? 0 : 1)
#define FPKI_SIGN_MASK(e, m, sp) ((fpk_bits)FPKI_SIGN_BITS(sp) << ((e) + (m)))
/* The canonical NaN: IEEE quiet with only the top mantissa bit; FN and E8M0
 * all ones; FNUZ the sign bit alone, as NONE's stand-in (ml_dtypes'). */
#define FPKI_NAN(e, m, sp)                                                    \
    ((sp) == FPK_SPECIAL_IEEE                                                 \
         ? FPKI_EXP_MASK(e, m) | ((fpk_bits)1 << ((m) > 0 ? (m) - 1 : 0))    \
     : (sp) == FPK_SPECIAL_FNUZ || (sp) == FPK_SPECIAL_NONE ? FPKI_SIGN_MASK(e, m, sp) \
                                                            : FPKI_EXP_MASK(e, m) | FPKI_MASK(m))

/* A descriptor with every derived field, as a constant initialiser. */
#define FPKI_FORMAT(nm, al, e, m, b, sp)                                      \
    {                                                                         \
        .name = (nm), .aliases = (al), .exp_bits = (e), .man_bits = (m),      \
        .bias = (b), .special = (sp), .width = FPKI_SIGN_BITS(sp) + (e) + (m), \
        .emin = ((sp) == FPK_SPECIAL_E8M0 ? 0 : 1) - (b),                     \
        .emax = (int)(FPKI_MAX_FINITE(e, m, sp) >> (m)) - (b),                \
        .sign_mask = FPKI_SIGN_MASK(e, m, sp),                                \
        .exp_mask = FPKI_EXP_MASK(e, m), .man_mask = FPKI_MASK(m),            \
        .max_finite = FPKI_MAX_FINITE(e, m, sp),                              \
        .inf = (sp) == FPK_SPECIAL_IEEE ? FPKI_EXP_MASK(e, m) : 0,            \
        .nan = FPKI_NAN(e, m, sp),                                            \
    }

/* The built-in formats' initialisers, the one list of their parameters:
 * format.c defines the public descriptors with them, and a source that
 * specialises an operation for a format defines a copy whose fields the
 * compiler can fold. */
#define FPKI_FORMAT_FP64 FPKI_FORMAT("fp64", "binary64,double,float64,f64", 11, 52, 1023, FPK_SPECIAL_IEEE)
#define FPKI_FORMAT_FP32 FPKI_FORMAT("fp32", "binary32,single,float,float32,f32", 8, 23, 127, FPK_SPECIAL_IEEE)
#define FPKI_FORMAT_TF32 FPKI_FORMAT("tf32", "tensorfloat32,tensorfloat-32", 8, 10, 127, FPK_SPECIAL_IEEE)
#define FPKI_FORMAT_FP16 FPKI_FORMAT("fp16", "binary16,half,float16,f16", 5, 10, 15, FPK_SPECIAL_IEEE)
#define FPKI_FORMAT_BF16 FPKI_FORMAT("bf16", "bfloat16,bfloat,brainfloat16", 8, 7, 127, FPK_SPECIAL_IEEE)
#define FPKI_FORMAT_E4M3 FPKI_FORMAT("e4m3", "e4m3fn,fp8e4m3,fp8_e4m3,fp8e4m3fn,float8_e4m3fn,f8e4m3fn,f8e4m3", 4, 3, 7, FPK_SPECIAL_FN)
#define FPKI_FORMAT_E5M2 FPKI_FORMAT("e5m2", "fp8e5m2,fp8_e5m2,float8_e5m2,f8e5m2", 5, 2, 15, FPK_SPECIAL_IEEE)
#define FPKI_FORMAT_E4M3FNUZ FPKI_FORMAT("e4m3fnuz", "float8_e4m3fnuz,fp8e4m3fnuz,fp8_e4m3fnuz,f8e4m3fnuz", 4, 3, 8, FPK_SPECIAL_FNUZ)
#define FPKI_FORMAT_E5M2FNUZ FPKI_FORMAT("e5m2fnuz", "float8_e5m2fnuz,fp8e5m2fnuz,fp8_e5m2fnuz,f8e5m2fnuz", 5, 2, 16, FPK_SPECIAL_FNUZ)
#define FPKI_FORMAT_E3M2 FPKI_FORMAT("e3m2", "fp6_e3m2,float6_e3m2fn,e3m2fn,fp6e3m2", 3, 2, 3, FPK_SPECIAL_NONE)
#define FPKI_FORMAT_E2M3 FPKI_FORMAT("e2m3", "fp6_e2m3,float6_e2m3fn,e2m3fn,fp6e2m3", 2, 3, 1, FPK_SPECIAL_NONE)
#define FPKI_FORMAT_E2M1 FPKI_FORMAT("e2m1", "fp4,fp4_e2m1,float4_e2m1fn,e2m1fn,fp4e2m1", 2, 1, 1, FPK_SPECIAL_NONE)
#define FPKI_FORMAT_E8M0 FPKI_FORMAT("e8m0", "e8m0fnu,float8_e8m0fnu,ue8m0,fp8_e8m0,fp8e8m0", 8, 0, 127, FPK_SPECIAL_E8M0)

/* Number of leading zero bits; 64 for 0. */
static inline int fpki_clz64(uint64_t x)
{
    return x ? __builtin_clzll(x) : 64;
}

/* A decoded operand.  For zero, subnormal and normal values the value is
 * (-1)^sign * sig * 2^exp with sig an integer (0 for zero; the hidden bit
 * included for normals); exp and sig are 0 for inf and NaN. */
typedef struct fpki_unpacked {
    fpk_class cls;
    bool sign;
    int32_t exp;
    uint64_t sig;
} fpki_unpacked;

/* What A encodes (fpk_classify, inlined for the hot paths). */
static inline fpk_class fpki_classify(const fpk_format *f, fpk_bits a)
{
    fpk_bits mag = a & (f->exp_mask | f->man_mask);
    if ((a & f->exp_mask) && mag <= f->max_finite)
        return FPK_CLASS_NORMAL;
    if (mag > f->max_finite) {
        if (mag == f->inf)
            return FPK_CLASS_INF;
        /* IEEE 754-2019 §6.2.1: the top mantissa bit tells quiet from
         * signaling; the other rules have a single NaN, quiet. */
        bool quiet = f->special != FPK_SPECIAL_IEEE || (a >> (f->man_bits - 1) & 1);
        return quiet ? FPK_CLASS_QNAN : FPK_CLASS_SNAN;
    }
    if (mag != 0)
        return FPK_CLASS_SUBNORMAL;
    /* FNUZ's -0 is its NaN; E8M0's field 0 is 2^-bias. */
    if (f->special == FPK_SPECIAL_FNUZ && (a & f->sign_mask))
        return FPK_CLASS_QNAN;
    return f->special == FPK_SPECIAL_E8M0 ? FPK_CLASS_NORMAL : FPK_CLASS_ZERO;
}

/* Decodes A; with ctx->daz a subnormal reads as a zero of the same sign
 * (+0 in FNUZ, whose only zero it is). */
static inline fpki_unpacked fpki_unpack(const fpk_format *f, fpk_bits a, const fpk_ctx *c)
{
    fpki_unpacked u = {.cls = fpki_classify(f, a), .sign = (a & f->sign_mask) != 0};
    fpk_bits man = a & f->man_mask;
    if (u.cls == FPK_CLASS_NORMAL) {
        u.exp = (int32_t)((a & f->exp_mask) >> f->man_bits) - f->bias - f->man_bits;
        u.sig = man | ((fpk_bits)1 << f->man_bits);
    } else if (u.cls == FPK_CLASS_SUBNORMAL) {
        if (c && c->daz) {
            u.cls = FPK_CLASS_ZERO;
            u.sign = u.sign && f->special != FPK_SPECIAL_FNUZ;
        } else {
            u.exp = f->emin - f->man_bits;
            u.sig = man;
        }
    }
    return u;
}

/* An integer that orders non-NaN operands like their values: the signed
 * magnitude bits (which order like the magnitudes).  Zeros, and subnormals
 * that unpack read as zeros under daz, map to 0 (-0 == +0), or with
 * SIGNED_ZERO -0 to -1, below +0, for minimum and maximum. */
static inline int64_t fpki_order_key(const fpk_format *f, fpk_bits a, fpki_unpacked u,
                                     bool signed_zero)
{
    int64_t mag = u.cls == FPK_CLASS_ZERO ? 0 : (int64_t)(a & (f->exp_mask | f->man_mask));
    if (!u.sign)
        return mag;
    return signed_zero ? -mag - 1 : -mag;
}

/* The one rounding core.  Rounds the exact value
 *     (-1)^sign * (hi * 2^64 + lo) * 2^exp,   hi:lo != 0,
 * into F under every rule of ctx (mode, tininess, ftz, saturate, the format's
 * special values) and ORs the flags into ctx->flags.  Bits of the exact value
 * below lo must be folded into lo's lowest bit (a sticky bit): the core needs
 * only that they are nonzero.  Callers handle exact zeros themselves. */
fpk_bits fpki_round_pack(const fpk_format *f, bool sign, int64_t exp,
                         uint64_t hi, uint64_t lo, fpk_ctx *c);

/* The result "+-infinity" in F: +-max finite under saturate, the canonical
 * NaN where F has no infinity, otherwise +-inf.  Raises nothing. */
fpk_bits fpki_inf(const fpk_format *f, bool sign, const fpk_ctx *c);

/* The canonical NaN; raises invalid if SIGNALING, and always in a
 * FPK_SPECIAL_NONE format, whose .nan only stands in for a NaN. */
fpk_bits fpki_nan(const fpk_format *f, bool signaling, fpk_ctx *c);

/* F's sign bit if SIGN, else 0: the sign of a nonzero magnitude. */
static inline fpk_bits fpki_sign(const fpk_format *f, bool sign)
{
    return sign ? f->sign_mask : 0;
}

/* +-0 in F: FNUZ has only +0.  (E8M0 has no zero: see fpki_zero_result.) */
static inline fpk_bits fpki_zero(const fpk_format *f, bool sign)
{
    return sign && f->special != FPK_SPECIAL_FNUZ ? f->sign_mask : 0;
}

/* An operation's zero result of SIGN in F: fpki_zero, or in E8M0, which has
 * no zero, the NaN with invalid. */
static inline fpk_bits fpki_zero_result(const fpk_format *f, bool sign, fpk_ctx *c)
{
    if (f->special == FPK_SPECIAL_E8M0)
        return fpki_nan(f, true, c);
    return fpki_zero(f, sign);
}

#endif
