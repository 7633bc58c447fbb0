/* Internals shared by the library's sources; not installed. */
#ifndef FPKIT_IMPL_H
#define FPKIT_IMPL_H

#include "fpkit.h"

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
    if (mag > f->max_finite) {
        if (mag == f->inf)
            return FPK_CLASS_INF;
        /* IEEE 754-2019 §6.2.1: the top mantissa bit tells quiet from
         * signaling; FN formats have a single NaN, quiet. */
        bool quiet = f->special != FPK_SPECIAL_IEEE || (a >> (f->man_bits - 1) & 1);
        return quiet ? FPK_CLASS_QNAN : FPK_CLASS_SNAN;
    }
    if (mag == 0)
        return FPK_CLASS_ZERO;
    return (a & f->exp_mask) ? FPK_CLASS_NORMAL : FPK_CLASS_SUBNORMAL;
}

/* Decodes A; with ctx->daz a subnormal reads as a zero of the same sign. */
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
    int64_t mag = u.cls == FPK_CLASS_ZERO ? 0 : (int64_t)(a & (f->sign_mask - 1));
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

/* The canonical NaN; raises invalid if SIGNALING. */
fpk_bits fpki_nan(const fpk_format *f, bool signaling, fpk_ctx *c);

/* +-0 in F. */
static inline fpk_bits fpki_zero(const fpk_format *f, bool sign)
{
    return sign ? f->sign_mask : 0;
}


#endif
