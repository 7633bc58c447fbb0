/* Exact sums of doubles (exact.h). */
#include <string.h>

#include "exact.h"

/* V = M * 2^(P - 1074): M its integer significand, P its biased exponent
 * less one for a normal (whose hidden bit M holds), 0 for a subnormal.
 * False for an infinity or a NaN. */
static bool split(double v, uint64_t *m, unsigned *p)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned e = (unsigned)(bits >> 52) & 0x7ff, normal = e != 0;
    if (e == 0x7ff)
        return false;
    *m = (bits & ((UINT64_C(1) << 52) - 1)) | (uint64_t)normal << 52;
    *p = e - normal;
    return true;
}

void exact_add(exact_sum *s, double v)
{
    uint64_t m;
    unsigned p;
    if (!split(v, &m, &p)) {
        s->inf = true;
        return;
    }
    unsigned k = p / 64, off = p % 64;
    uint64_t lo = m << off, hi = off ? m >> (64 - off) : 0;
    s->w[k] += lo;
    uint64_t carry = s->w[k] < lo;
    for (k++; k < EXACT_WORDS && (hi | carry); k++) {
        uint64_t add = hi + carry; /* hi < 2^53: no overflow */
        s->w[k] += add;
        carry = s->w[k] < add;
        hi = 0;
    }
}

void exact_sub(exact_sum *s, double v)
{
    uint64_t m;
    unsigned p;
    if (!split(v, &m, &p))
        return; /* an infinity taken out of an infinite sum leaves it so */
    unsigned k = p / 64, off = p % 64;
    uint64_t lo = m << off, hi = off ? m >> (64 - off) : 0;
    uint64_t borrow = s->w[k] < lo;
    s->w[k] -= lo;
    for (k++; k < EXACT_WORDS && (hi | borrow); k++) {
        uint64_t sub = hi + borrow;
        uint64_t b = s->w[k] < sub;
        s->w[k] -= sub;
        borrow = b;
        hi = 0;
    }
}

void exact_merge(exact_sum *into, const exact_sum *from)
{
    uint64_t carry = 0;
    for (int k = 0; k < EXACT_WORDS; k++) {
        uint64_t a = into->w[k], b = from->w[k], t = a + b;
        uint64_t c1 = t < a;
        into->w[k] = t + carry;
        carry = c1 | (into->w[k] < t);
    }
    into->inf |= from->inf;
}
