/* Conversions between formats and int64 (IEEE 754-2019 §5.8 and §5.4.1). */
#include "core-impl.h"

/* Whether stochastic rounding takes the neighbour away from zero for a value
 * whose discarded part is REM / 2^S of a unit (S >= 1, 0 < REM, REM < 2^S
 * when S < 64): the rule of fpk_ctx, r < floor(frac * 2^sr_bits) with r the
 * top sr_bits bits of fpk_sr_hash(sr_seed, sr_counter), and sr_bits outside
 * 1..64 read as 32, as the rounding core does.  The caller advances the
 * counter. */
static bool sr_away(uint64_t rem, int64_t s, const fpk_ctx *c)
{
    int k = c->sr_bits >= 1 && c->sr_bits <= 64 ? c->sr_bits : 32;
    uint64_t threshold;
    if (s <= k)
        threshold = rem << (k - s); /* < 2^k: REM has at most S bits */
    else
        threshold = s - k >= 64 ? 0 : rem >> (s - k);
    uint64_t r = fpk_sr_hash(c->sr_seed, c->sr_counter);
    if (k < 64)
        r >>= 64 - k;
    return r < threshold;
}

/* An integer magnitude MAG with sign SIGN as an int64, or the saturated value
 * with invalid when it does not fit. */
static int64_t fit(bool sign, uint64_t mag, bool inexact, fpk_ctx *c)
{
    if (mag > (sign ? (uint64_t)1 << 63 : (uint64_t)INT64_MAX)) {
        c->flags |= FPK_INVALID;
        return sign ? INT64_MIN : INT64_MAX;
    }
    if (inexact)
        c->flags |= FPK_INEXACT;
    if (sign)
        return mag == (uint64_t)1 << 63 ? INT64_MIN : -(int64_t)mag;
    return (int64_t)mag;
}

/* Rounds like fpki_round_pack with a grid of integers: the unit is the ulp.
 * In SR mode every nonzero finite operand is a rounding and advances
 * sr_counter, exact or not; zeros, infinities and NaNs are not roundings. */
int64_t fpk_to_int64(const fpk_format *f, fpk_bits a, fpk_ctx *c)
{
    fpki_unpacked u = fpki_unpack(f, a, c);
    switch (u.cls) {
    case FPK_CLASS_QNAN:
    case FPK_CLASS_SNAN:
        c->flags |= FPK_INVALID;
        return INT64_MIN;
    case FPK_CLASS_INF:
        c->flags |= FPK_INVALID;
        return u.sign ? INT64_MIN : INT64_MAX;
    case FPK_CLASS_ZERO:
        return 0;
    default:
        break;
    }
    bool sr = c->round == FPK_SR;
    if (u.exp >= 0) {
        /* An integer already: exact, and too large once sig << exp needs
         * more than 64 bits. */
        if (sr)
            c->sr_counter++;
        if (u.exp > 63 || u.sig > UINT64_MAX >> u.exp)
            return fit(u.sign, UINT64_MAX, false, c); /* >= 2^64: out of range */
        return fit(u.sign, u.sig << u.exp, false, c);
    }
    /* value = sig / 2^s: integer part q, discarded part rem / 2^s, with the
     * half-unit (guard) bit and the bits below it (sticky) split out. */
    int64_t s = -(int64_t)u.exp;
    uint64_t q = s < 64 ? u.sig >> s : 0;
    uint64_t rem = s < 64 ? u.sig & (((uint64_t)1 << s) - 1) : u.sig;
    bool guard = s <= 64 && (u.sig >> (s - 1) & 1);
    bool sticky = s <= 64 ? (u.sig & (((uint64_t)1 << (s - 1)) - 1)) != 0 : u.sig != 0;
    bool inexact = rem != 0;
    bool away = false;
    switch (c->round) {
    case FPK_RNE:
        away = guard && (sticky || (q & 1));
        break;
    case FPK_RNA:
        away = guard;
        break;
    case FPK_RTZ:
        break;
    case FPK_RUP:
        away = inexact && !u.sign;
        break;
    case FPK_RDN:
        away = inexact && u.sign;
        break;
    case FPK_ROD:
        q |= inexact; /* truncate, then make the last bit odd if inexact */
        break;
    case FPK_SR:
        away = inexact && sr_away(rem, s, c);
        c->sr_counter++;
        break;
    }
    return fit(u.sign, q + away, inexact, c);
}

fpk_bits fpk_from_int64(const fpk_format *f, int64_t i, fpk_ctx *c)
{
    if (i == 0)
        return fpki_zero_result(f, false, c);
    bool sign = i < 0;
    uint64_t mag = sign ? -(uint64_t)i : (uint64_t)i;
    return fpki_round_pack(f, sign, 0, 0, mag, c);
}
