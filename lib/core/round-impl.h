/* The rounding core's body, for instantiation: fpki_round_pack (round.c) is
 * it with a runtime descriptor, and an operation specialised for a format
 * (see FPKI_INSTANCES in arith.h) inlines it with a descriptor whose fields
 * the compiler folds.  The rare paths stay out of line, in round.c. */
#ifndef FPKIT_ROUND_IMPL_H
#define FPKIT_ROUND_IMPL_H

#include "core-impl.h"

/* What a deterministic MODE adds to the discarded bits LOW (below 2^D,
 * 1 <= D <= 63) of a significand whose kept part ends in bit LSB, so that
 * bit D of the sum is the kept part's increment: RNE and RNA half an ulp
 * (less one unless a tie goes up), RUP and RDN an ulp less one in their
 * direction, RTZ and ROD nothing (ROD sets the last bit instead).  An
 * addition rather than tests of the discarded bits: no branch on data. */
static inline uint64_t fpki_round_bias(fpk_round mode, bool sign, uint64_t lsb, int d)
{
    uint64_t half = (uint64_t)1 << (d - 1), ulp_less_one = ((uint64_t)1 << d) - 1;
    switch (mode) {
    case FPK_RNE: return half - 1 + lsb;
    case FPK_RNA: return half;
    case FPK_RUP: return sign ? 0 : ulp_less_one;
    case FPK_RDN: return sign ? ulp_less_one : 0;
    default: return 0;
    }
}

/* SR's direction for the normalised exact significand SIG:BELOW (below
 * the smallest normal by BELOW_NORMAL binades) rounded to M fraction bits;
 * advances the counter. */
bool fpki_round_sr(fpk_ctx *c, uint64_t sig, uint64_t below, int m, int64_t below_normal);

/* The result of an overflow under MODE (the directed mode that SR chose),
 * with its flags raised. */
fpk_bits fpki_round_overflow(const fpk_format *f, bool sign, fpk_round mode, fpk_ctx *c);

/* Whether a value below 2^emin, SIG normalised to bit 63 with its bit 0
 * sticky and its leading bit at 2^E, rounded under MODE to F's precision
 * with an unbounded exponent, exceeds max finite: the rule of
 * docs/DESIGN.md "Overflow", which only a format without normal numbers
 * (emax < emin: e1mY, whose one nonzero exponent field is infinity) can
 * meet below 2^emin, its precision's grid there being finer than its
 * subnormal one. */
bool fpki_round_over_below(const fpk_format *f, uint64_t sig, int64_t e, fpk_round mode,
                           bool sign);

/* Tininess after rounding of a value in the binade below the smallest
 * normal: SIG normalised to bit 63 with its bit 0 sticky, M fraction bits. */
bool fpki_round_tiny_after(uint64_t sig, int m, fpk_round mode, bool sign);

/* fpki_round_pack for FPK_SPECIAL_E8M0 formats, whose grid of powers of
 * two has no zero, no subnormals and no sign. */
fpk_bits fpki_round_e8m0(const fpk_format *f, bool sign, int64_t exp, uint64_t hi,
                         uint64_t lo, fpk_ctx *c);

/* Normalises (hi:lo != 0, the value (hi * 2^64 + lo) * 2^exp): the leading
 * bit to bit 63 of *SIG and the 64 bits below it in *BELOW; returns the
 * leading bit's exponent. */
static inline __attribute__((always_inline)) int64_t
fpki_normalise(int64_t exp, uint64_t hi, uint64_t lo, uint64_t *sig, uint64_t *below)
{
    int lz = hi ? fpki_clz64(hi) : 64 + fpki_clz64(lo);
    *below = 0;
    if (lz >= 64) {
        *sig = lo << (lz - 64);
    } else {
        *sig = lz ? hi << lz | lo >> (64 - lz) : hi;
        *below = lo << lz;
    }
    return exp + 127 - lz;
}

/* fpki_round_pack's body (core-impl.h states the contract). */
static inline __attribute__((always_inline)) fpk_bits
fpki_round_pack_body(const fpk_format *f, bool sign, int64_t exp, uint64_t hi, uint64_t lo,
                     fpk_ctx *c)
{
    const int m = f->man_bits;
    if (f->special == FPK_SPECIAL_E8M0)
        return fpki_round_e8m0(f, sign, exp, hi, lo, c);
    /* Normalise: the leading bit to bit 63 of SIG, every bit below SIG's
     * 64 folded into its bit 0.  Two bits past the format's precision and a
     * sticky bit are all a deterministic rounding needs. */
    uint64_t sig, below;
    int64_t e = fpki_normalise(exp, hi, lo, &sig, &below); /* the leading bit's */
    uint64_t sticky = sig | (below != 0);

    /* The grid: ulp 2^(e-m) for normals, 2^(emin-m) below them.  A value
     * at or below half the smallest ulp (D >= 64) keeps its first discarded
     * bit and a sticky bit at D = 63, which rounds it alike. */
    int64_t below_normal = e < f->emin ? f->emin - e : 0;
    int d = below_normal > 64 ? 65 : 63 - m + (int)below_normal;
    uint64_t x = sticky;
    if (d > 63) {
        x = d == 64 ? x >> 1 | (x & 1) : 1;
        d = 63;
    }
    uint64_t k = x >> d, low = x & (((uint64_t)1 << d) - 1);
    bool inexact = low != 0;

    /* SR decides its direction first; from then on it is the directed mode
     * that picks the same neighbour.  An exact value needs no choice: it
     * overflows like any exact value, to infinity (as RNE). */
    fpk_round mode = c->round;
    if (mode == FPK_SR) {
        bool up = fpki_round_sr(c, sig, below, m, below_normal) && inexact;
        mode = up ? (sign ? FPK_RDN : FPK_RUP) : inexact ? FPK_RTZ : FPK_RNE;
        k += up;
    } else {
        k += (low + fpki_round_bias(mode, sign, k & 1, d)) >> d;
    }
    if (mode == FPK_ROD)
        k |= inexact;

    /* Pack with an unbounded exponent: a carry out of the significand
     * moves into the exponent field, so magnitudes compare as integers. */
    fpk_bits mag;
    bool overflow;
    if (e >= f->emin) {
        overflow = e > f->emax + 1;
        mag = overflow ? 0 : ((fpk_bits)(e + f->bias - 1) << m) + k;
    } else {
        overflow = f->emax < f->emin && fpki_round_over_below(f, sticky, e, mode, sign);
        mag = k;
    }
    if (overflow || mag > f->max_finite)
        return fpki_round_overflow(f, sign, mode, c);

    /* Tininess after rounding (IEEE 754-2019 §7.5) differs from before
     * only in the binade below the smallest normal. */
    if (e < f->emin && inexact) {
        if (e != f->emin - 1 || c->tiny_before || fpki_round_tiny_after(sticky, m, mode, sign))
            c->flags |= FPK_UNDERFLOW;
        sign = sign && (mag != 0 || f->special != FPK_SPECIAL_FNUZ); /* FNUZ: no -0 */
    }
    c->flags |= (unsigned)inexact * FPK_INEXACT;
    if (c->ftz && mag != 0 && mag < ((fpk_bits)1 << m)) {
        c->flags |= FPK_UNDERFLOW | FPK_INEXACT;
        return fpki_zero(f, sign);
    }
    return fpki_sign(f, sign) | mag;
}

#endif
