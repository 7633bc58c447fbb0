/* The statistics kernel's portable body (kernels.h: fpki_stats_fn),
 * instantiated by stats_c.c and, for keys on whole encodings, by
 * stats_avx2.c: for a block of float32 encodings, the exponent-field
 * histogram, the float32 subnormals by binade, the largest finite
 * magnitude, and how many elements lie below each key. */
#ifndef FPKIT_STATS_BODY_H
#define FPKIT_STATS_BODY_H

#include "kernel-util.h"

/* Elements per statistics block, in every set. */
#define FPKI_STATS_BLOCK 2048

/* fpki_stats_fn's body: adds X[0..N-1] to ACC, a block at a time: a vector
 * pass for the extremes, the special counts and the exponent fields; a
 * scalar histogram of those (eight tables, so that equal neighbours do not
 * wait on each other); a vector pass per four keys that the block's range
 * leaves undecided; and a scalar count of the float32 subnormals, eight at
 * a time, only where there are any. */
FPKI_INLINE void fpki_stats_generic(const fpki_stats_keys *keys, const uint32_t *restrict x,
                                    size_t n, fpki_stats_totals *acc)
{
    uint32_t hist[8][256];
    memset(hist, 0, sizeof hist);
    uint64_t padding = 0;
    uint32_t a[FPKI_STATS_BLOCK], pad[FPKI_STATS_BLOCK], active[FPKI_STATS_MAX_KEYS + 3];
    uint8_t e[FPKI_STATS_BLOCK], sb[FPKI_STATS_BLOCK];
    const bool sign = keys->sign;
    const uint32_t keep = sign ? 0xffffffffu : FPKI_F32_MAG;
    for (size_t i0 = 0; i0 < n; i0 += FPKI_STATS_BLOCK) {
        size_t len = n - i0 < FPKI_STATS_BLOCK ? n - i0 : FPKI_STATS_BLOCK;
        const uint32_t *src = x + i0;
        if (len < FPKI_STATS_BLOCK) {
            memcpy(pad, src, 4 * len);
            memset(pad + len, 0, 4 * (FPKI_STATS_BLOCK - len));
            src = pad;
        }
        uint32_t amax = 0, lo = 0xffffffffu, any_sub = 0, zeros = 0, finite = 0;
        if (len == FPKI_STATS_BLOCK)
            fpki_prefetch(src + FPKI_STATS_BLOCK, 4 * FPKI_STATS_BLOCK - FPKI_PREFETCH);
        for (int i = 0; i < FPKI_STATS_BLOCK; i++) {
            uint32_t xi = src[i], mag = xi & FPKI_F32_MAG;
            uint32_t fin = mag < FPKI_F32_INF, finite_mag = fpki_select(fin, mag, 0);
            uint32_t less = mag - 1; /* zero wraps above everything */
            uint32_t subnormal = less < 0x7fffffu;
            e[i] = (uint8_t)(mag >> 23);
            sb[i] = (uint8_t)subnormal;
            amax = finite_mag > amax ? finite_mag : amax;
            lo = less < lo ? less : lo;
            any_sub |= subnormal;
            zeros += mag == 0;
            finite += fin;
            a[i] = xi & keep;
        }
        /* The padding: zeros, counted out again below. */
        uint32_t padded = (uint32_t)(FPKI_STATS_BLOCK - len);
        zeros -= padded;
        finite -= padded;
        if (amax > acc->amax)
            acc->amax = amax;
        for (size_t i = 0; i < len; i += 8) {
            uint64_t w;
            memcpy(&w, e + i, 8);
            hist[0][w & 0xff]++;
            hist[1][w >> 8 & 0xff]++;
            hist[2][w >> 16 & 0xff]++;
            hist[3][w >> 24 & 0xff]++;
            hist[4][w >> 32 & 0xff]++;
            hist[5][w >> 40 & 0xff]++;
            hist[6][w >> 48 & 0xff]++;
            hist[7][w >> 56]++;
        }
        padding += -len & 7; /* zeros beyond LEN in the last word */
        /* Keys the block's range decides, then the rest four at a time
         * (padded with copies of the last). */
        int na = 0;
        for (int k = 0; k < keys->n; k++) {
            uint32_t key = keys->key[k];
            if (!sign && key <= lo + 1)
                acc->below[k] += zeros; /* only zeros are below */
            else if (!sign && key > amax && key <= FPKI_F32_INF)
                acc->below[k] += finite; /* every finite element is below */
            else
                active[na++] = (uint32_t)k;
        }
        for (int j = 0; j < na; j += 4) {
            uint32_t k0 = keys->key[active[j]];
            uint32_t k1 = j + 1 < na ? keys->key[active[j + 1]] : k0;
            uint32_t k2 = j + 2 < na ? keys->key[active[j + 2]] : k0;
            uint32_t k3 = j + 3 < na ? keys->key[active[j + 3]] : k0;
            uint32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
            for (int i = 0; i < FPKI_STATS_BLOCK; i++) {
                c0 += a[i] < k0;
                c1 += a[i] < k1;
                c2 += a[i] < k2;
                c3 += a[i] < k3;
            }
            uint32_t c[4] = {c0, c1, c2, c3};
            for (int t = 0; t < 4 && j + t < na; t++) {
                uint32_t key = keys->key[active[j + t]];
                acc->below[active[j + t]] += c[t] - (key > 0 ? padded : 0); /* padding zeros */
            }
        }
        if (any_sub)
            for (size_t i = 0; i < len; i += 8) {
                uint64_t w;
                memcpy(&w, sb + i, 8);
                for (size_t j = i; w && j < i + 8 && j < len; j++, w >>= 8)
                    if (w & 1)
                        acc->subnormal[31 - __builtin_clz(src[j] & FPKI_F32_MAG)]++;
            }
    }
    for (int b = 0; b < 256; b++)
        for (int t = 0; t < 8; t++)
            acc->hist[b] += hist[t][b];
    acc->hist[0] -= padding;
}

#endif
