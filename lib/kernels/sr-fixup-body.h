/* The stochastic-rounding fix-up's portable body (kernels.h:
 * fpki_sr_fixup_fn), instantiated by sr_fixup_c.c and, for formats whose
 * thresholds the AVX2 kernel cannot compare, by sr_fixup_avx2.c: the
 * elements whose neighbours under RTZ and away from zero lie in different
 * classes, decided by the SR rule as fpk_stats_add decides them. */
#ifndef FPKIT_SR_FIXUP_BODY_H
#define FPKIT_SR_FIXUP_BODY_H

#include "kernel-util.h"

/* The top 32 bits of the fraction of an ulp that rounding the float32
 * magnitude A (nonzero, finite) times 2^K into a format of EMIN and M
 * discards: A * 2^K = sig * 2^e0 exactly, and d of its bits go. */
FPKI_INLINE uint32_t fpki_sr_discarded_fraction(uint32_t a, int k, int emin, int m)
{
    uint32_t ef = a >> 23, sig = ef ? (a & 0x7fffffu) | 0x800000u : a;
    int e0 = (ef ? (int)ef : 1) - 150 + k, top = e0 + 31 - __builtin_clz(sig);
    int d = (top > emin ? top : emin) - m - e0;
    if (d <= 0)
        return 0;
    if (d <= 32)
        return (d < 32 ? sig & ((1u << d) - 1) : sig) << (32 - d);
    return d - 32 < 32 ? sig >> (d - 32) : 0;
}

/* fpki_sr_fixup_fn's body, an element at a time: for each element whose
 * neighbours under RTZ and away from zero lie in different classes of
 * format j, moves it from the first class to the second in DELTA[j] when
 * the SR rule rounds it away. */
FPKI_INLINE void fpki_sr_fixup_generic(const fpki_sr_fixup_plan *p, const uint32_t *x, size_t n,
                                       uint64_t index, int64_t (*delta)[4])
{
    const uint64_t seed_mix = fpki_sr_mix(0);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = x[i] & FPKI_F32_MAG;
        if (a == 0 || a >= FPKI_F32_INF)
            continue;
        for (int j = 0; j < p->n; j++) {
            uint32_t v = x[i] & p->mask[j];
            int lo = fpki_threshold_class(p->tz[j], v), hi = fpki_threshold_class(p->away[j], v);
            if (lo == hi)
                continue;
            uint32_t frac = fpki_sr_discarded_fraction(a, p->scale_exp, p->emin[j], p->man_bits[j]);
            if (fpki_sr_bits(seed_mix, index + i) < frac) {
                delta[j][lo]--;
                delta[j][hi]++;
            }
        }
    }
}

#endif
