/* The single rounding core: an exact value in, an encoding of any format out.
 *
 * Every operation and conversion ends here, so the rules of DESIGN.md's
 * corner-case table live in this file only: rounding modes, overflow,
 * tininess, underflow, ftz, saturate and formats without infinity. */
#include "fpkit-impl.h"

typedef unsigned __int128 u128;

/* Where the discarded bits of a rounding put the exact value between the
 * two neighbours on the grid. */
typedef struct discard {
    uint64_t frac;  /* the discarded fraction of an ulp, top 64 bits */
    bool below;     /* nonzero bits below those 64 */
} discard;

/* Splits X (normalised: bit 127 set) at D discarded bits, D >= 65. */
static uint64_t split(u128 x, int d, discard *r)
{
    if (d >= 192) {
        *r = (discard){.frac = 0, .below = x != 0};
        return 0;
    }
    u128 rem = d >= 128 ? x : x & (((u128)1 << d) - 1);
    int low = d - 64; /* bits of rem below the 64-bit window */
    r->frac = (uint64_t)(rem >> low);
    r->below = (rem & (((u128)1 << low) - 1)) != 0;
    return d >= 128 ? 0 : (uint64_t)(x >> d);
}

static bool inexact_of(discard r)
{
    return r.frac || r.below;
}

/* Whether a deterministic MODE moves the kept significand K one ulp away
 * from zero (ROD never does: it sets the last bit instead). */
static bool increments(fpk_round mode, bool sign, uint64_t k, discard r)
{
    bool half = r.frac >> 63;
    bool rest = (r.frac << 1) != 0 || r.below;
    switch (mode) {
    case FPK_RNE: return half && (rest || (k & 1));
    case FPK_RNA: return half;
    case FPK_RUP: return !sign && inexact_of(r);
    case FPK_RDN: return sign && inexact_of(r);
    default: return false;
    }
}

/* DESIGN.md: "round away iff an sr_bits-bit random number is below the
 * discarded fraction of an ulp scaled to sr_bits bits"; each SR rounding
 * advances the counter, exact or not. */
static bool sr_increments(fpk_ctx *c, discard r)
{
    int bits = c->sr_bits >= 1 && c->sr_bits <= 64 ? c->sr_bits : 32;
    uint64_t rnd = fpk_sr_hash(c->sr_seed, c->sr_counter++) >> (64 - bits);
    uint64_t threshold = r.frac >> (64 - bits);
    return rnd < threshold;
}

/* Whether MODE, having the final choice of direction, sends an overflow to
 * infinity rather than to the largest finite number. */
static bool overflows_to_inf(fpk_round mode, bool sign)
{
    switch (mode) {
    case FPK_RNE:
    case FPK_RNA: return true;
    case FPK_RUP: return !sign;
    case FPK_RDN: return sign;
    default: return false;
    }
}

fpk_bits fpki_inf(const fpk_format *f, bool sign, const fpk_ctx *c)
{
    if (c->saturate)
        return fpki_zero(f, sign) | f->max_finite;
    if (!f->inf)
        return f->nan;
    return fpki_zero(f, sign) | f->inf;
}

fpk_bits fpki_nan(const fpk_format *f, bool signaling, fpk_ctx *c)
{
    if (signaling)
        c->flags |= FPK_INVALID;
    return f->nan;
}

fpk_bits fpki_round_pack(const fpk_format *f, bool sign, int64_t exp,
                         uint64_t hi, uint64_t lo, fpk_ctx *c)
{
    const int m = f->man_bits;
    int lz = hi ? fpki_clz64(hi) : 64 + fpki_clz64(lo);
    u128 x = (((u128)hi << 64) | lo) << lz;
    int64_t e = exp + 127 - lz; /* exponent of the leading bit */

    /* The grid: ulp 2^(e-m) for normals, 2^(emin-m) below them. */
    int64_t below_normal = e < f->emin ? f->emin - e : 0;
    int d = below_normal > 192 ? 192 : 127 - m + (int)below_normal;
    if (d > 192)
        d = 192;
    discard r;
    uint64_t k = split(x, d, &r);
    bool inexact = inexact_of(r);

    /* SR decides its direction first; from then on it is the directed mode
     * that picks the same neighbour. */
    fpk_round mode = c->round;
    bool inc;
    if (mode == FPK_SR) {
        inc = inexact && sr_increments(c, r);
        mode = inc ? (sign ? FPK_RDN : FPK_RUP) : FPK_RTZ;
    } else {
        inc = increments(mode, sign, k, r);
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
    overflow = overflow || mag > f->max_finite;

    if (overflow) {
        c->flags |= FPK_OVERFLOW | FPK_INEXACT;
        if (overflows_to_inf(mode, sign))
            return fpki_inf(f, sign, c);
        return fpki_zero(f, sign) | f->max_finite;
    }

    bool tiny;
    if (c->tiny_before || e != f->emin - 1) {
        tiny = e < f->emin;
    } else {
        /* Tininess after rounding (IEEE 754-2019 §7.5): would the value,
         * rounded to the format's precision with an unbounded exponent,
         * reach the smallest normal? */
        discard rn;
        uint64_t kn = split(x, 127 - m, &rn);
        bool carry = mode != FPK_ROD && increments(mode, sign, kn, rn) &&
                     kn == ((uint64_t)2 << m) - 1;
        tiny = !carry;
    }

    if (inexact)
        c->flags |= FPK_INEXACT;
    if (tiny && inexact)
        c->flags |= FPK_UNDERFLOW;
    if (c->ftz && mag != 0 && mag < ((fpk_bits)1 << m)) {
        c->flags |= FPK_UNDERFLOW | FPK_INEXACT;
        mag = 0;
    }
    return fpki_zero(f, sign) | mag;
}
