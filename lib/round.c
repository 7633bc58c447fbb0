/* The single rounding core: an exact value in, an encoding of any format out.
 *
 * Every operation and conversion ends here, so the rules of DESIGN.md's
 * corner-case table live in this file only: rounding modes, overflow,
 * tininess, underflow, ftz, saturate and formats without infinity. */
#include "fpkit-impl.h"

typedef unsigned __int128 u128;

/* Where the discarded bits of a rounding leave the exact value between the
 * two neighbours on the grid. */
typedef struct discard {
    bool half; /* the first discarded bit */
    bool rest; /* any discarded bit below it */
} discard;

/* Keeps SIG >> D (SIG normalised to bit 63, its bit 0 sticky; D >= 11) and
 * says what was discarded. */
static uint64_t split(uint64_t sig, int d, discard *r)
{
    if (d >= 64) {
        *r = (discard){.half = d == 64 && sig >> 63, .rest = d > 64 || (sig << 1) != 0};
        return 0;
    }
    r->half = sig >> (d - 1) & 1;
    r->rest = (sig & (((uint64_t)1 << (d - 1)) - 1)) != 0;
    return sig >> d;
}

/* Whether a deterministic MODE moves the kept significand K one ulp away
 * from zero (ROD never does: it sets the last bit instead). */
static bool increments(fpk_round mode, bool sign, uint64_t k, discard r)
{
    switch (mode) {
    case FPK_RNE: return r.half && (r.rest || (k & 1));
    case FPK_RNA: return r.half;
    case FPK_RUP: return !sign && (r.half || r.rest);
    case FPK_RDN: return sign && (r.half || r.rest);
    default: return false;
    }
}

/* DESIGN.md: "round away iff an sr_bits-bit random number is below the
 * discarded fraction of an ulp scaled to sr_bits bits"; each SR rounding
 * advances the counter, exact or not.  X is the exact significand,
 * normalised to bit 127, of which the lowest D bits (D >= 75) are
 * discarded; the fraction needs up to 64 of them, more than the 64-bit
 * significand of the deterministic modes keeps. */
static bool sr_increments(fpk_ctx *c, u128 x, int d)
{
    int bits = c->sr_bits >= 1 && c->sr_bits <= 64 ? c->sr_bits : 32;
    uint64_t rnd = fpk_sr_hash(c->sr_seed, c->sr_counter++) >> (64 - bits);
    u128 rem = d >= 128 ? x : x & (((u128)1 << d) - 1);
    uint64_t frac = d >= 192 ? 0 : (uint64_t)(rem >> (d - 64)); /* top 64 bits of the fraction */
    return rnd < frac >> (64 - bits);
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

    /* The grid: ulp 2^(e-m) for normals, 2^(emin-m) below them. */
    int64_t below_normal = e < f->emin ? f->emin - e : 0;
    int d = below_normal > 64 ? 65 : 63 - m + (int)below_normal;
    discard r;
    uint64_t k = split(sig | (below != 0), d, &r);
    bool inexact = r.half || r.rest;

    /* SR decides its direction first; from then on it is the directed mode
     * that picks the same neighbour.  An exact value needs no choice: it
     * overflows like any exact value, to infinity (as RNE). */
    fpk_round mode = c->round;
    bool inc;
    if (mode == FPK_SR) {
        int d128 = below_normal > 64 ? 192 : 127 - m + (int)below_normal;
        inc = sr_increments(c, (u128)sig << 64 | below, d128 > 192 ? 192 : d128) && inexact;
        mode = inc ? (sign ? FPK_RDN : FPK_RUP) : inexact ? FPK_RTZ : FPK_RNE;
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
        uint64_t kn = split(sig | (below != 0), 63 - m, &rn);
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
