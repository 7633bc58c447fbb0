/* The 16-point Hadamard transform's portable body (kernels.h:
 * fpki_rht16_fn), instantiated by rht_c.c and rht_avx2.c, a run of 16 at
 * a time: the fast Walsh-Hadamard transform of the signed inputs over 4
 * in double, each output then rounded once.
 *
 * Why the doubles give fpk_rht16's results.  Each input X_i * s_i / 4 is
 * exact in double.  Every nonzero X_i is a multiple of its ulp, at least
 * Q = 2^(max(E_lo, 1) - 150) for E_lo the least exponent field of the
 * nonzero inputs, and |X_i| < 2^(E_hi - 126) for E_hi the largest; so
 * every partial sum the transform forms is a multiple of Q / 4 below 16 *
 * 2^(E_hi - 126) / 4 in magnitude: fewer than 2^(E_hi - max(E_lo, 1) +
 * 28) multiples, all exact in double when E_hi - max(E_lo, 1) <= 25.
 * Then every output is the exact sum, rounded once here.
 *
 * Otherwise each output went through 4 roundings, so it lies within
 * gamma_4 * A of the exact sum T, A = sum |X_i| / 4 and gamma_4 = 4u / (1
 * - 4u) < 4.001u (u = 2^-53; the textbook bound for a sum by a tree of
 * depth 4).  A as computed (15 roundings) is at least A (1 - 16u), so E
 * = A * 2^-48 >= 31.9u A; Lo = fl(T~ - E) and Hi = fl(T~ + E) err by at
 * most u (|T~| + E) < 1.01u A more, so Lo <= T <= Hi.  Rounding is
 * monotone: where Lo and Hi round to the same encoding (the sign of a
 * zero included), so does T, and that is the result; where they do not,
 * the run is left to the exact path (fpk_rht16).  An exact zero sum is
 * +0, as fpk_rht16 gives it: in the exact case a zero output is made +0;
 * otherwise Lo and Hi rounding to equal zeros means T is not 0 unless it
 * is +0 (Hi = -0 cannot occur: a difference of equal values is +0). */
#ifndef FPKIT_RHT_BODY_H
#define FPKIT_RHT_BODY_H

#include <math.h>

#include "kernel-util.h"

/* The largest E_hi - max(E_lo, 1) for which a run's sums are exact. */
#define FPKI_RHT_EXACT_SPAN 25

FPKI_INLINE double fpki_rht_f64(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

FPKI_INLINE uint64_t fpki_rht_bits64(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* V (a double of magnitude below 2^131 and 0 or at least 2^-152) rounded
 * to nearest even at PREC bits with float32's exponent range, as float32
 * bits (infinite beyond its largest value): |V| + C - C, C = 2^(q + 52)
 * for the result's ulp 2^q, leaves |V| rounded on that grid (the sum's
 * ulp is 2^q, and C's own bits are even). */
FPKI_INLINE uint32_t fpki_rht_round(double v, int prec)
{
    uint64_t b = fpki_rht_bits64(v), a = b & ~(UINT64_C(1) << 63);
    uint32_t sign = (uint32_t)(b >> 63) << 31;
    int64_t e = (int64_t)(a >> 52) - 1023;
    int64_t q = (e > -126 ? e : -126) - (prec - 1);
    double c = fpki_rht_f64((uint64_t)(q + 52 + 1023) << 52);
    double r = (fpki_rht_f64(a) + c) - c;
    float f = (float)r;
    uint32_t fb;
    memcpy(&fb, &f, sizeof fb);
    return a == 0 ? sign : sign | fb;
}

/* One run: Z := its transform; returns whether it is left to the exact
 * path. */
FPKI_INLINE bool fpki_rht_run(const uint32_t *x, uint16_t signs, int prec, uint32_t *z)
{
    double v[16], sum = 0;
    uint32_t hi = 0, lo = FPKI_F32_INF, special = 0;
    for (int i = 0; i < 16; i++) {
        uint32_t a = x[i] & FPKI_F32_MAG;
        special |= a >= FPKI_F32_INF;
        hi = a > hi ? a : hi;
        lo = a - 1 < lo - 1 ? a : lo;
        float f;
        memcpy(&f, &x[i], sizeof f);
        v[i] = (double)f * (signs >> i & 1 ? -0.25 : 0.25);
        sum += fabs(v[i]);
    }
    if (special) {
        for (int j = 0; j < 16; j++)
            z[j] = FPKI_F32_QNAN;
        return false;
    }
    for (int h = 1; h < 16; h *= 2)
        for (int i = 0; i < 16; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                double a = v[j], b = v[j + h];
                v[j] = a + b;
                v[j + h] = a - b;
            }
    uint32_t lo_exp = (lo >> 23) > 1 ? lo >> 23 : 1;
    bool exact = lo == FPKI_F32_INF || (int)(hi >> 23) - (int)lo_exp <= FPKI_RHT_EXACT_SPAN;
    bool redo = false;
    double eps = sum * 0x1p-48;
    for (int j = 0; j < 16; j++) {
        if (exact) {
            z[j] = v[j] == 0 ? 0 : fpki_rht_round(v[j], prec);
        } else {
            uint32_t down = fpki_rht_round(v[j] - eps, prec), up = fpki_rht_round(v[j] + eps, prec);
            redo |= down != up;
            z[j] = down;
        }
    }
    return redo;
}

/* fpki_rht16_fn's body. */
FPKI_INLINE size_t fpki_rht16_generic(const uint32_t *x, size_t n, uint16_t signs, int prec,
                                      uint32_t *z, uint8_t *redo)
{
    size_t left = 0;
    for (size_t g = 0; g < n / 16; g++) {
        if (g % 4 == 0)
            fpki_prefetch(x + 16 * g, 256);
        bool r = fpki_rht_run(x + 16 * g, signs, prec, z + 16 * g);
        redo[g] = r;
        left += r;
    }
    return left;
}

#endif
