/* The single rounding core: an exact value in, an encoding of any format out.
 *
 * Every operation and conversion ends here, so the rules of docs/DESIGN.md
 * "Rounding modes", "Overflow", "Tininess and underflow", "Options" and
 * "Special-value rules" live in this file and its body, round-impl.h,
 * only. */
#include "round-impl.h"

typedef unsigned __int128 u128;

/* docs/DESIGN.md "Stochastic rounding": round away iff an sr_bits-bit
 * random number is below the discarded fraction of an ulp scaled to
 * sr_bits bits; each SR rounding advances the counter, exact or not.  X is the exact significand,
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

bool fpki_round_sr(fpk_ctx *c, uint64_t sig, uint64_t below, int m, int64_t below_normal)
{
    int d128 = below_normal > 64 ? 192 : 127 - m + (int)below_normal;
    return sr_increments(c, (u128)sig << 64 | below, d128 > 192 ? 192 : d128);
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

fpk_bits fpki_round_overflow(const fpk_format *f, bool sign, fpk_round mode, fpk_ctx *c)
{
    c->flags |= FPK_OVERFLOW | FPK_INEXACT;
    if (overflows_to_inf(mode, sign))
        return fpki_inf(f, sign, c);
    return fpki_sign(f, sign) | f->max_finite;
}

/* The significand SIG (normalised to bit 63, bit 0 sticky) rounded under
 * MODE to M fraction bits: 2^M to 2^(M+1). */
static uint64_t round_to_precision(uint64_t sig, int m, fpk_round mode, bool sign)
{
    int d = 63 - m;
    uint64_t kn = sig >> d, low = sig & (((uint64_t)1 << d) - 1);
    kn += (low + fpki_round_bias(mode, sign, kn & 1, d)) >> d;
    return mode == FPK_ROD ? kn | (low != 0) : kn;
}

/* r = kp * 2^(e - m) against max finite = max * 2^(emin - m), the
 * largest subnormal (zero in e1m0): kp > max * 2^s, s = emin - e >= 1. */
bool fpki_round_over_below(const fpk_format *f, uint64_t sig, int64_t e, fpk_round mode,
                           bool sign)
{
    uint64_t kp = round_to_precision(sig, f->man_bits, mode, sign), max = f->max_finite;
    int64_t s = f->emin - e;
    uint64_t whole = s >= 64 ? 0 : kp >> s;
    bool part = s >= 64 ? kp != 0 : (kp & (((uint64_t)1 << s) - 1)) != 0;
    return whole > max || (whole == max && part);
}

/* Would the value, rounded to the format's precision with an unbounded
 * exponent, reach the smallest normal? */
bool fpki_round_tiny_after(uint64_t sig, int m, fpk_round mode, bool sign)
{
    return round_to_precision(sig, m, mode, sign) >> (m + 1) == 0;
}

/* E8M0 has no negative numbers; NONE formats saturate in every case. */
fpk_bits fpki_inf(const fpk_format *f, bool sign, const fpk_ctx *c)
{
    if (sign && f->special == FPK_SPECIAL_E8M0)
        return f->nan;
    if (c->saturate || f->special == FPK_SPECIAL_NONE)
        return fpki_sign(f, sign) | f->max_finite;
    if (!f->inf)
        return f->nan;
    return fpki_sign(f, sign) | f->inf;
}

fpk_bits fpki_nan(const fpk_format *f, bool signaling, fpk_ctx *c)
{
    if (signaling || f->special == FPK_SPECIAL_NONE)
        c->flags |= FPK_INVALID;
    return f->nan;
}

/* The grid is 2^e for every e, from 2^emin to 2^emax: with no fraction
 * bits the kept significand is always 1 (odd), so RNE and RNA send a tie
 * up, and ROD truncates.  A value that rounds below 2^emin has nothing
 * smaller to go to: it gives 2^emin (encoding 0) with underflow and
 * inexact, whatever its tininess before rounding; one at or above 2^emin
 * is tiny only before rounding.  A negative value has no encoding: the NaN,
 * invalid (under FPK_SR it still takes its counter value). */
fpk_bits fpki_round_e8m0(const fpk_format *f, bool sign, int64_t exp, uint64_t hi,
                         uint64_t lo, fpk_ctx *c)
{
    if (sign) {
        c->sr_counter += c->round == FPK_SR; /* a rounding all the same */
        return fpki_nan(f, true, c);
    }
    uint64_t sig, below;
    int64_t e = fpki_normalise(exp, hi, lo, &sig, &below);
    uint64_t low = (sig | (below != 0)) & INT64_MAX; /* the fraction: 63 bits, sticky */
    bool inexact = low != 0;
    fpk_round mode = c->round;
    bool up;
    if (mode == FPK_SR) {
        up = fpki_round_sr(c, sig, below, 0, 0) && inexact;
        mode = up ? FPK_RUP : inexact ? FPK_RTZ : FPK_RNE;
    } else {
        up = (low + fpki_round_bias(mode, false, 1, 63)) >> 63;
    }
    int64_t r = e + up;
    if (r > f->emax)
        return fpki_round_overflow(f, false, mode, c);
    if (r < f->emin) {
        c->flags |= FPK_UNDERFLOW | FPK_INEXACT;
        return 0;
    }
    if (inexact)
        c->flags |= FPK_INEXACT | (e < f->emin && c->tiny_before ? FPK_UNDERFLOW : 0);
    return (fpk_bits)(r + f->bias);
}

fpk_bits fpki_round_pack(const fpk_format *f, bool sign, int64_t exp,
                         uint64_t hi, uint64_t lo, fpk_ctx *c)
{
    return fpki_round_pack_body(f, sign, exp, hi, lo, c);
}
