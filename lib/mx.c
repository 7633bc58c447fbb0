/* Block scaling: OCP Microscaling Formats (MX) v1.0.  A block of float32
 * values shares one E8M0 scale 2^k (§6.3 or its rounded-up variant, see
 * fpk_mx_rule); each element is rounded once by the core, exactly as
 * V * 2^-k, so that no quotient is ever formed in floating point. */
#include <string.h>

#include "fpkit-impl.h"

#define F32_INF UINT32_C(0x7f800000)
#define F32_MIN_NORMAL UINT32_C(0x00800000)

/* OCP MX element formats and their like: at most 8 bits, signed, with a
 * normal largest value (emax is then its exponent). */
static bool mx_element(const fpk_format *elem)
{
    return elem && elem->width <= 8 && elem->special != FPK_SPECIAL_E8M0 &&
           fpki_classify(elem, elem->max_finite) == FPK_CLASS_NORMAL;
}

/* The scale exponent k for a block of ELEM whose largest magnitude has the
 * float32 magnitude bits AMAX (finite): floor(log2(amax)) - emax, plus one
 * under FPK_MX_CEIL when amax / 2^k, in [2^emax, 2^(emax+1)), exceeds max
 * finite, i.e. when amax's significand exceeds max finite's; clamped to
 * E8M0's range, and its least for a block of zeros. */
static int scale_exp(const fpk_format *elem, fpk_mx_rule rule, uint32_t amax)
{
    if (amax == 0)
        return fpk_e8m0.emin;
    fpki_unpacked u = fpki_unpack(&fpk_fp32, amax, NULL);
    int lead = 63 - fpki_clz64(u.sig);
    int64_t k = (int64_t)u.exp + lead - elem->emax;
    if (rule == FPK_MX_CEIL) {
        const int m = elem->man_bits;
        uint64_t max_sig = ((elem->max_finite & elem->man_mask) | (fpk_bits)1 << m) << (63 - m);
        k += u.sig << (63 - lead) > max_sig;
    }
    return k < fpk_e8m0.emin ? fpk_e8m0.emin : k > fpk_e8m0.emax ? fpk_e8m0.emax : (int)k;
}

fpk_bits fpk_mx_scale(const fpk_format *elem, fpk_mx_rule rule, float amax)
{
    uint32_t bits;
    memcpy(&bits, &amax, sizeof bits);
    bits &= INT32_MAX;
    if (bits >= F32_INF || !mx_element(elem))
        return fpk_e8m0.nan;
    return (fpk_bits)(scale_exp(elem, rule, bits) + fpk_e8m0.bias);
}

/* P * 2^K as float32 bits, P an encoding of ELEM (not NaN): exact for the
 * OCP element formats (but infinite for 2^128), rounded to nearest even
 * otherwise. */
static uint32_t scaled_value(const fpk_format *elem, fpk_bits p, int k)
{
    fpki_unpacked u = fpki_unpack(elem, p, NULL);
    if (u.cls == FPK_CLASS_ZERO)
        return u.sign ? UINT32_C(0x80000000) : 0;
    fpk_ctx rne = fpk_ctx_default();
    return (uint32_t)fpki_round_pack(&fpk_fp32, u.sign, (int64_t)u.exp + k, 0, u.sig, &rne);
}

bool fpk_mx_quantize(const fpk_format *elem, fpk_mx_rule rule, size_t block, const float *x,
                     size_t n, uint8_t *enc, uint8_t *scales, float *y, fpk_mx_block *blocks,
                     fpk_ctx *c)
{
    if (!mx_element(elem))
        return false;
    if (block == 0)
        block = FPK_MX_BLOCK;
    fpk_ctx ec = *c;
    ec.saturate = true; /* §6.3: "clamping normal numbers" */
    const uint64_t counter = c->sr_counter;
    for (size_t first = 0, b = 0; first < n; first += block, b++) {
        size_t len = n - first < block ? n - first : block;
        uint32_t amax = 0;
        bool nonfinite = false;
        for (size_t i = 0; i < len; i++) {
            uint32_t bits;
            memcpy(&bits, &x[first + i], sizeof bits);
            uint32_t mag = bits & INT32_MAX;
            if (c->daz && mag < F32_MIN_NORMAL)
                mag = 0;
            nonfinite |= mag >= F32_INF;
            amax = mag > amax && mag < F32_INF ? mag : amax;
        }
        fpk_mx_block rep = {.scale = nonfinite ? fpk_e8m0.nan : 0};
        int k = scale_exp(elem, rule, amax);
        if (!nonfinite)
            rep.scale = (fpk_bits)(k + fpk_e8m0.bias);
        for (size_t i = first; i < first + len; i++) {
            uint32_t bits, out = fpk_fp32.nan;
            memcpy(&bits, &x[i], sizeof bits);
            fpk_bits p = elem->nan;
            if (!nonfinite) {
                fpki_unpacked u = fpki_unpack(&fpk_fp32, bits, &ec);
                if (u.cls == FPK_CLASS_ZERO) {
                    p = fpki_zero(elem, u.sign);
                } else {
                    unsigned flags = ec.flags;
                    ec.flags = 0;
                    ec.sr_counter = counter + i;
                    p = fpki_round_pack(elem, u.sign, (int64_t)u.exp - k, 0, u.sig, &ec);
                    rep.saturated += (ec.flags & FPK_OVERFLOW) != 0;
                    fpk_class cls = fpki_classify(elem, p);
                    rep.flushed += cls == FPK_CLASS_ZERO;
                    rep.subnormal += cls == FPK_CLASS_SUBNORMAL;
                    ec.flags |= flags;
                }
                out = scaled_value(elem, p, k);
            }
            if (enc)
                enc[i] = (uint8_t)p;
            if (y)
                memcpy(&y[i], &out, sizeof out);
        }
        if (scales)
            scales[b] = (uint8_t)rep.scale;
        if (blocks)
            blocks[b] = rep;
    }
    c->flags = ec.flags;
    c->sr_counter = counter + n;
    return true;
}
