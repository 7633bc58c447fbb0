/* Pieces shared by the arithmetic operations (add.c, mul.c, div.c, fma.c,
 * sqrt.c): 128-bit significands and the IEEE rules for special operands. */
#ifndef FPKIT_ARITH_H
#define FPKIT_ARITH_H

#include "round-impl.h"

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

/* Whether MA and MB, two operands' magnitude bits (sign cleared), both
 * encode normal numbers: one unsigned compare each. */
static inline bool fpki_both_normal(const fpk_format *f, fpk_bits ma, fpk_bits mb)
{
    const fpk_bits one = (fpk_bits)1 << f->man_bits, span = f->max_finite - one;
    return f->max_finite >= one && ma - one <= span && mb - one <= span;
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

/* fpki_round_pack128 inlined, for the bodies that FPKI_INSTANCES instantiates. */
static inline __attribute__((always_inline)) fpk_bits
fpki_round_pack128_body(const fpk_format *f, bool sign, int64_t exp, fpki_u128 sig, fpk_ctx *c)
{
    return fpki_round_pack_body(f, sign, exp, (uint64_t)(sig >> 64), (uint64_t)sig, c);
}

/* Instances of an operation: BODY, an always_inline function whose first
 * parameter is the descriptor, followed by PARAMS (parenthesised, as is
 * ARGS, their names), becomes NAME_generic for any descriptor and NAME_fp16,
 * NAME_bf16, NAME_fp32, NAME_e4m3 and NAME_e5m2, each with a constant copy
 * of that built-in descriptor for the compiler to fold; FPKI_DISPATCH picks
 * one by the descriptor's identity.  They are kept out of line so that each
 * has its own registers. */
#define FPKI_UNPAREN(...) __VA_ARGS__
#define FPKI_INSTANCE(name, body, id, init, params, args)                     \
    static __attribute__((noinline)) fpk_bits name##_##id(FPKI_UNPAREN params) \
    {                                                                         \
        static const fpk_format k = init;                                     \
        return body(&k, FPKI_UNPAREN args);                                   \
    }
#define FPKI_INSTANCES(name, body, params, args)                              \
    static __attribute__((noinline)) fpk_bits name##_generic(                 \
        const fpk_format *f, FPKI_UNPAREN params)                             \
    {                                                                         \
        return body(f, FPKI_UNPAREN args);                                    \
    }                                                                         \
    FPKI_INSTANCE(name, body, fp16, FPKI_FORMAT_FP16, params, args)           \
    FPKI_INSTANCE(name, body, bf16, FPKI_FORMAT_BF16, params, args)           \
    FPKI_INSTANCE(name, body, fp32, FPKI_FORMAT_FP32, params, args)           \
    FPKI_INSTANCE(name, body, e4m3, FPKI_FORMAT_E4M3, params, args)           \
    FPKI_INSTANCE(name, body, e5m2, FPKI_FORMAT_E5M2, params, args)
/* Calls the instance for F, the context C among ARGS.  With
 * --enable-assertions (FPK_ASSERTIONS), a specialised instance's result
 * and its effect on C are checked against the generic one's, as MPFR
 * checks its special-cased additions against the general one. */
#define FPKI_SPECIALISED(name, f, args)                                       \
    ((f) == &fpk_fp16   ? name##_fp16 args                                    \
     : (f) == &fpk_bf16 ? name##_bf16 args                                    \
     : (f) == &fpk_fp32 ? name##_fp32 args                                    \
     : (f) == &fpk_e4m3 ? name##_e4m3 args                                    \
                        : name##_e5m2 args)
#define FPKI_HAS_INSTANCE(f)                                                  \
    ((f) == &fpk_fp16 || (f) == &fpk_bf16 || (f) == &fpk_fp32 ||              \
     (f) == &fpk_e4m3 || (f) == &fpk_e5m2)
#ifdef FPK_ASSERTIONS
#define FPKI_DISPATCH(name, f, c, args)                                       \
    do {                                                                      \
        if (!FPKI_HAS_INSTANCE(f))                                            \
            return name##_generic(f, FPKI_UNPAREN args);                      \
        const fpk_ctx fpki_before = *(c);                                     \
        const fpk_bits fpki_fast = FPKI_SPECIALISED(name, f, args);           \
        const fpk_ctx fpki_after = *(c);                                      \
        *(c) = fpki_before;                                                   \
        const fpk_bits fpki_general = name##_generic(f, FPKI_UNPAREN args);   \
        FPKI_ASSERT(fpki_fast == fpki_general && fpki_ctx_same(&fpki_after, c)); \
        return fpki_fast;                                                     \
    } while (0)
#else
#define FPKI_DISPATCH(name, f, c, args)                                       \
    do {                                                                      \
        if (FPKI_HAS_INSTANCE(f))                                             \
            return FPKI_SPECIALISED(name, f, args);                           \
        return name##_generic(f, FPKI_UNPAREN args);                          \
    } while (0)
#endif

/* An exact zero sum x + y (IEEE 754-2019 §6.3): zeros of one sign keep it;
 * otherwise +0, or -0 under RDN.  SR, which is no rounding-direction
 * attribute toward -inf, gives +0.  (fpki_zero_result: FNUZ has only +0,
 * E8M0 no zero.) */
static inline fpk_bits fpki_zero_sum(const fpk_format *f, bool sign_x, bool sign_y,
                                     fpk_ctx *c)
{
    return fpki_zero_result(f, sign_x == sign_y ? sign_x : c->round == FPK_RDN, c);
}

#endif
