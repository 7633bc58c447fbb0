/* Tensor statistics element by element: the code the statistics kernel
 * (stats.cu) runs on the device and the CPU-side test runs on the host.
 * C11 and CUDA C++ alike; no globals, no library calls.
 *
 * fpk_stats_add (lib/tensor/stats.c) rounds every nonzero finite x into each
 * format as x * S and counts the result as zero, subnormal, normal or
 * overflowed.  For every mode but SR that class is a nondecreasing function
 * of |x| for each sign (rounding is monotone, and so are ftz and the
 * overflow threshold), so the host finds, once per call and with the
 * library itself, the three magnitudes at which the class steps up
 * (stats_plan.c), and an element costs three comparisons per format.  Under
 * SR the class is that of RTZ or of rounding away from zero, as the random
 * draw decides; the two agree except around the steps, where
 * fpki_ds_sr_away repeats the library's draw (lib/core/round.c, with the
 * hash of lib/core/sr-hash.h) exactly.
 *
 * Magnitudes are compared in the element type's own encoding: magnitudes of
 * one sign order as their encodings do. */
#ifndef FPKIT_CUDA_DEVSTATS_H
#define FPKIT_CUDA_DEVSTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "fpkit-tensor.h"
#include "sr-hash.h"

#ifdef __CUDACC__
#define FPKI_DS_FN static inline __host__ __device__
#else
#define FPKI_DS_FN static inline
#endif

/* The counters a call fills, in this order (uint64_t each): zeros,
 * nonfinite, the largest finite magnitude (an encoding of the element type),
 * underflow, subnormal and overflow of each of FPK_STATS_MAX_FORMATS formats,
 * then one count per floor(log2|x|) from hist_lo up. */
enum {
    FPKI_DS_ZEROS,
    FPKI_DS_NONFINITE,
    FPKI_DS_AMAX,
    FPKI_DS_FMT,
    FPKI_DS_HIST = FPKI_DS_FMT + 3 * FPK_STATS_MAX_FORMATS,
};

/* Classes of a rounded element, in order of magnitude. */
enum { FPKI_DS_ZERO, FPKI_DS_SUBNORMAL, FPKI_DS_NORMAL, FPKI_DS_OVERFLOW };

/* Everything a call needs, by value (it is a kernel parameter). */
typedef struct fpki_ds_plan {
    /* the element type */
    int width;              /* bytes */
    int man_bits, bias;
    uint64_t sign_mask;
    uint64_t nonfinite_min; /* magnitudes from here up are inf or NaN */
    int hist_lo, nbins;     /* floor(log2|x|) of the least and the count of
                               possible values */
    /* the statistics */
    int nformats;
    bool sr;
    uint64_t base; /* elements added before: SR counter of element 0 */
    /* t[j][k][i]: the least magnitude whose class in format j is at least
     * i + 1; k is the sign (0 positive, 1 negative), or under SR twice the
     * sign, plus 1 for rounding away from zero (RTZ's otherwise);
     * nonfinite_min when no finite magnitude is. */
    uint64_t t[FPK_STATS_MAX_FORMATS][4][3];
    /* for SR's draw: each format's fraction bits and the exponent below
     * which its grid is subnormal (INT32_MIN for a grid with none), and the
     * scale as sig * 2^exp */
    int fmt_man_bits[FPK_STATS_MAX_FORMATS], fmt_emin[FPK_STATS_MAX_FORMATS];
    uint64_t scale_sig;
    int scale_exp;
} fpki_ds_plan;

FPKI_DS_FN int fpki_ds_clz64(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return x ? __builtin_clzll(x) : 64;
#endif
}

/* floor(log2|x|) of a nonzero finite magnitude MAG. */
FPKI_DS_FN int fpki_ds_log2(const fpki_ds_plan *p, uint64_t mag)
{
    int e = (int)(mag >> p->man_bits);
    if (e)
        return e - p->bias;
    return 1 - p->bias - p->man_bits + 63 - fpki_ds_clz64(mag); /* subnormal: its top bit */
}

/* SR's draw for the INDEX-th element, of nonzero finite magnitude MAG, in
 * format J: whether it rounds away from zero.  As lib/core/round.c with seed 0
 * and 32 random bits: the exact product x * S, normalised to bit 127, loses
 * its lowest d bits on the format's grid; away iff the top 32 of the
 * random bits are below the top 32 bits of that discarded fraction. */
FPKI_DS_FN bool fpki_ds_sr_away(const fpki_ds_plan *p, int j, uint64_t mag, uint64_t index)
{
    typedef unsigned __int128 u128;
    uint64_t e = mag >> p->man_bits;
    uint64_t sig = mag & (((uint64_t)1 << p->man_bits) - 1);
    if (e)
        sig |= (uint64_t)1 << p->man_bits;
    int64_t exp = (int64_t)(e ? e : 1) - p->bias - p->man_bits + p->scale_exp;
    u128 x = (u128)sig * p->scale_sig;
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    int lz = hi ? fpki_ds_clz64(hi) : 64 + fpki_ds_clz64(lo);
    x <<= lz;
    int64_t lead = exp + 127 - lz; /* exponent of the leading bit */
    int64_t below_normal = lead < p->fmt_emin[j] ? p->fmt_emin[j] - lead : 0;
    int d = below_normal > 64 ? 192 : 127 - p->fmt_man_bits[j] + (int)below_normal;
    if (d > 192)
        d = 192;
    u128 rem = d >= 128 ? x : x & (((u128)1 << d) - 1);
    uint64_t frac = d >= 192 ? 0 : (uint64_t)(rem >> (d - 64));
    return fpki_sr_hash(0, p->base + index) >> 32 < frac >> 32;
}

/* The class (FPKI_DS_ZERO ..) of the INDEX-th element, of nonzero finite
 * magnitude MAG and sign NEG, rounded into format J. */
FPKI_DS_FN int fpki_ds_class(const fpki_ds_plan *p, int j, uint64_t mag, bool neg,
                             uint64_t index)
{
    const uint64_t *t = p->t[j][p->sr ? 2 * neg : neg];
    int lo = (mag >= t[0]) + (mag >= t[1]) + (mag >= t[2]);
    if (!p->sr)
        return lo;
    const uint64_t *u = p->t[j][2 * neg + 1];
    int hi = (mag >= u[0]) + (mag >= u[1]) + (mag >= u[2]);
    if (lo == hi)
        return lo;
    return fpki_ds_sr_away(p, j, mag, index) ? hi : lo;
}

/* How the kernel splits N elements starting at address ADDR, WIDTH bytes
 * each (ADDR a multiple of WIDTH): *HEAD elements up to the first 16-byte
 * boundary, then *NVEC vectors of 16 / WIDTH elements, then the tail. */
FPKI_DS_FN void fpki_ds_split(uint64_t n, uint64_t addr, int width, uint64_t *head,
                              uint64_t *nvec)
{
    uint64_t h = ((16 - addr % 16) % 16) / (uint64_t)width;
    *head = h < n ? h : n;
    *nvec = (n - *head) / (uint64_t)(16 / width);
}

/* The kernel's slot S of that split: first the vectors, then the head's
 * and the tail's elements one by one.  Returns how many elements it holds
 * (16 / WIDTH, 1, or 0 past the last slot) and sets *FIRST to the index of
 * its first. */
FPKI_DS_FN int fpki_ds_slot(uint64_t s, uint64_t n, uint64_t head, uint64_t nvec, int width,
                            uint64_t *first)
{
    int v = 16 / width;
    uint64_t tail = head + nvec * (uint64_t)v;
    *first = 0;
    if (s < nvec) {
        *first = head + s * (uint64_t)v;
        return v;
    }
    uint64_t k = s - nvec;
    if (k >= head + (n - tail))
        return 0;
    *first = k < head ? k : tail + (k - head);
    return 1;
}

/* The counter, after FPKI_DS_FMT + 3 * j, of class CLS; -1 for a normal
 * result, which has none. */
FPKI_DS_FN int fpki_ds_counter(int cls)
{
    return cls == FPKI_DS_NORMAL ? -1 : cls == FPKI_DS_OVERFLOW ? 2 : cls;
}

#endif
