/* The rounding core's body, for instantiation: fpki_round_pack (round.c) is
 * it with a runtime descriptor, and an operation specialised for a format
 * (see FPKI_INSTANCES in arith.h) inlines it with a descriptor whose fields
 * the compiler folds.  The rare paths stay out of line, in round.c. */
#ifndef FPKIT_ROUND_IMPL_H
#define FPKIT_ROUND_IMPL_H

#include "fpkit-impl.h"

/* Where the discarded bits of a rounding leave the exact value between the
 * two neighbours on the grid. */
typedef struct fpki_discard {
    bool half; /* the first discarded bit */
    bool rest; /* any discarded bit below it */
} fpki_discard;

/* Keeps SIG >> D (SIG normalised to bit 63, its bit 0 sticky; D >= 11) and
 * says what was discarded. */
static inline uint64_t fpki_split(uint64_t sig, int d, fpki_discard *r)
{
    if (d >= 64) {
        *r = (fpki_discard){.half = d == 64 && sig >> 63, .rest = d > 64 || (sig << 1) != 0};
        return 0;
    }
    r->half = sig >> (d - 1) & 1;
    r->rest = (sig & (((uint64_t)1 << (d - 1)) - 1)) != 0;
    return sig >> d;
}

/* Whether a deterministic MODE moves the kept significand K one ulp away
 * from zero (ROD never does: it sets the last bit instead). */
static inline bool fpki_increments(fpk_round mode, bool sign, uint64_t k, fpki_discard r)
{
    switch (mode) {
    case FPK_RNE: return r.half && (r.rest || (k & 1));
    case FPK_RNA: return r.half;
    case FPK_RUP: return !sign && (r.half || r.rest);
    case FPK_RDN: return sign && (r.half || r.rest);
    default: return false;
    }
}

/* SR's direction for the normalised exact significand SIG:BELOW (below
 * the smallest normal by BELOW_NORMAL binades) rounded to M fraction bits;
 * advances the counter. */
bool fpki_round_sr(fpk_ctx *c, uint64_t sig, uint64_t below, int m, int64_t below_normal);

/* The result of an overflow under MODE (the directed mode that SR chose),
 * with its flags raised. */
fpk_bits fpki_round_overflow(const fpk_format *f, bool sign, fpk_round mode, fpk_ctx *c);

/* Tininess after rounding of a value in the binade below the smallest
 * normal: SIG normalised to bit 63 with its bit 0 sticky, M fraction bits. */
bool fpki_round_tiny_after(uint64_t sig, int m, fpk_round mode, bool sign);

/* fpki_round_pack's body (fpkit-impl.h states the contract). */
static inline __attribute__((always_inline)) fpk_bits
fpki_round_pack_body(const fpk_format *f, bool sign, int64_t exp, uint64_t hi, uint64_t lo,
                     fpk_ctx *c)
{
    const int m = f->man_bits;
    /* Normalise: the leading bit to bit 63 of SIG, every bit below SIG's
     * 64 folded into its bit 0.  Two bits past the format's precision and a
     * sticky bit are all a deterministic rounding needs. */
    int lz = hi ? fpki_clz64(hi) : 64 + fpki_clz64(lo);
    int64_t e = exp + 127 - lz; /* exponent of the leading bit */
    uint64_t sig, below = 0;
    if (lz >= 64) {
        sig = lo << (lz - 64);
    } else {
        sig = lz ? hi << lz | lo >> (64 - lz) : hi;
        below = lo << lz;
    }
    uint64_t sticky = sig | (below != 0);

    /* The grid: ulp 2^(e-m) for normals, 2^(emin-m) below them. */
    int64_t below_normal = e < f->emin ? f->emin - e : 0;
    int d = below_normal > 64 ? 65 : 63 - m + (int)below_normal;
    fpki_discard r;
    uint64_t k = fpki_split(sticky, d, &r);
    bool inexact = r.half || r.rest;

    /* SR decides its direction first; from then on it is the directed mode
     * that picks the same neighbour.  An exact value needs no choice: it
     * overflows like any exact value, to infinity (as RNE). */
    fpk_round mode = c->round;
    bool inc;
    if (mode == FPK_RNE) {
        inc = r.half && (r.rest || (k & 1));
    } else if (mode == FPK_SR) {
        inc = fpki_round_sr(c, sig, below, m, below_normal) && inexact;
        mode = inc ? (sign ? FPK_RDN : FPK_RUP) : inexact ? FPK_RTZ : FPK_RNE;
    } else {
        inc = fpki_increments(mode, sign, k, r);
    }
    k += inc;
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
        overflow = false;
        mag = k;
    }
    if (overflow || mag > f->max_finite)
        return fpki_round_overflow(f, sign, mode, c);

    if (inexact) {
        /* Tininess after rounding (IEEE 754-2019 §7.5) differs from before
         * only in the binade below the smallest normal. */
        bool tiny = e < f->emin &&
                    (e != f->emin - 1 || c->tiny_before ||
                     fpki_round_tiny_after(sticky, m, mode, sign));
        c->flags |= tiny ? FPK_INEXACT | FPK_UNDERFLOW : FPK_INEXACT;
    }
    if (c->ftz && mag != 0 && mag < ((fpk_bits)1 << m)) {
        c->flags |= FPK_UNDERFLOW | FPK_INEXACT;
        mag = 0;
    }
    return fpki_zero(f, sign) | mag;
}

#endif
