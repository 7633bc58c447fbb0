/* Tensor statistics element by element: the code the statistics kernel
 * (stats.cu) runs on the device and the CPU-side test runs on the host, on
 * the same tables.  C11 and CUDA C++ alike; no globals, no library calls.
 *
 * fpk_stats_add (lib/tensor/stats.c) rounds every nonzero finite x into each
 * format as x * S and counts the result as zero, subnormal, normal or
 * overflowed.  For every mode but SR that class is a nondecreasing function
 * of |x| for each sign, so the host finds, once per call and with the
 * library itself, the magnitudes at which some format's class steps up
 * (stats_plan.c): the keys.  The keys and the binades of the element type
 * cut the magnitudes into bands, in each of which the log2 bin and every
 * format's class are constant; an element costs one histogram count, of
 * its band, whatever the number of formats.  Its band comes from integer
 * work on the exponent field alone (its coarse range: the binade) and a
 * compare with the few keys inside that binade (none in most).  The host
 * turns the band counts into the statistics (fpki_ds_finish).
 *
 * Under SR an element rounds to RTZ's neighbour or to the one away from
 * zero, as the random draw decides: the bands cut at both modes' keys, an
 * element is counted with RTZ's class, and in the bands where the two
 * classes differ for some format fpki_ds_sr_away repeats the library's draw
 * (lib/core/round.c, with the hash of lib/core/sr-hash.h) exactly; the
 * elements that go away are counted apart, as moves from one class to
 * another.
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

/* Keys a side can hold: three per format and mode (two modes under SR),
 * and the least nonfinite magnitude. */
#define FPKI_DS_MAX_KEYS (6 * FPK_STATS_MAX_FORMATS + 1)
/* Coarse ranges of the widest element type (float64): zero, 52 subnormal
 * binades, 2047 exponent fields. */
#define FPKI_DS_MAX_COARSE 2100
#define FPKI_DS_MAX_BANDS (FPKI_DS_MAX_COARSE + FPKI_DS_MAX_KEYS)
/* Transitions of a format under SR: from a class to the next one up that
 * rounding away reaches (one per class below overflow). */
#define FPKI_DS_MAX_MOVES 3

/* The counters a call fills, in this order (uint64_t each): the largest
 * finite magnitude (an encoding of the element type); under SR, for each
 * of FPK_STATS_MAX_FORMATS formats and each of its transitions, the
 * elements that moved; then one count per band. */
enum {
    FPKI_DS_AMAX,
    FPKI_DS_MOVED,
    FPKI_DS_BANDS = FPKI_DS_MOVED + FPKI_DS_MAX_MOVES * FPK_STATS_MAX_FORMATS,
};

/* What the kernel needs of a call, by value (it is a kernel parameter).
 * The tables (fpki_ds_tables) lie in one image of TABLE_BYTES bytes: the
 * SR moves of each band (uint32_t, SR only), the coarse ranges (uint32_t)
 * and the keys (uint32_t for elements of up to 4 bytes, else uint64_t),
 * each part at a 16-byte boundary. */
typedef struct fpki_ds_params {
    /* the element type */
    int width; /* bytes */
    int man_bits;
    uint64_t sign_mask;
    uint64_t nonfinite_min; /* magnitudes from here up are inf or NaN */
    /* the bands: NSIDES 1 when both signs share every key, else 2 (the
     * negative elements' bands follow the positive ones'); per side NCOARSE
     * coarse ranges, up to NKEYS keys and NBANDS = NCOARSE + NKEYS bands */
    int nsides, ncoarse, nkeys, nbands;
    unsigned sr_off, range_off, key_off, table_bytes;
    /* the statistics */
    int nformats;
    bool sr;
    uint64_t base; /* elements added before: SR counter of element 0 */
    /* for SR's draw: the element type's bias, each format's fraction bits
     * and the exponent below which its grid is subnormal (INT32_MIN for a
     * grid with none), and the scale as sig * 2^exp */
    int bias;
    int fmt_man_bits[FPK_STATS_MAX_FORMATS], fmt_emin[FPK_STATS_MAX_FORMATS];
    uint64_t scale_sig;
    int scale_exp;
} fpki_ds_params;

/* The tables of a call, where the kernel (or the host) reads them. */
typedef struct fpki_ds_tables {
    /* per band: 2 bits per format, 0 where RTZ and rounding away agree on
     * the class, else 1 + the format's transition (SR only) */
    const uint32_t *sr;
    /* per side and coarse range: the side's keys below the range << 16 |
     * the keys in it */
    const uint32_t *range;
    const void *key; /* per side, NKEYS keys in increasing order */
} fpki_ds_tables;

/* The tables in IMAGE, laid out as P says. */
FPKI_DS_FN fpki_ds_tables fpki_ds_tables_at(const fpki_ds_params *p, const void *image)
{
    const unsigned char *b = (const unsigned char *)image;
    fpki_ds_tables t;
    t.sr = (const uint32_t *)(b + p->sr_off);
    t.range = (const uint32_t *)(b + p->range_off);
    t.key = b + p->key_off;
    return t;
}

/* What one thread of the kernel adds up: the largest finite magnitude, the
 * SR moves, and the band counts (where HIST points: shared memory on the
 * device). */
typedef struct fpki_ds_acc {
    uint64_t amax;
    uint32_t moved[FPK_STATS_MAX_FORMATS][FPKI_DS_MAX_MOVES];
    uint32_t *hist;
} fpki_ds_acc;

FPKI_DS_FN int fpki_ds_clz64(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return x ? __builtin_clzll(x) : 64;
#endif
}

FPKI_DS_FN int fpki_ds_clz32(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __clz((int)x);
#else
    return x ? __builtin_clz(x) : 32;
#endif
}

/* The coarse range of magnitude MAG, elements of W bytes: 0 for zero, the
 * count of significant bits for a subnormal, the exponent field + man_bits
 * for the rest.  Every nonzero finite magnitude of a range has floor(log2)
 * = range - 1 + emin - man_bits. */
FPKI_DS_FN int fpki_ds_coarse(const fpki_ds_params *p, int w, uint64_t mag)
{
    if (w <= 4) {
        uint32_t m = (uint32_t)mag, e = m >> p->man_bits;
        return e ? (int)e + p->man_bits : 32 - fpki_ds_clz32(m);
    }
    int e = (int)(mag >> p->man_bits);
    return e ? e + p->man_bits : 64 - fpki_ds_clz64(mag);
}

/* The least magnitude of coarse range C. */
FPKI_DS_FN uint64_t fpki_ds_range_start(const fpki_ds_params *p, int c)
{
    if (c <= p->man_bits)
        return c ? (uint64_t)1 << (c - 1) : 0;
    return (uint64_t)(c - p->man_bits) << p->man_bits;
}

/* Key K of side S, elements of W bytes. */
FPKI_DS_FN uint64_t fpki_ds_key(const fpki_ds_params *p, const fpki_ds_tables *t, int w, int s,
                                int k)
{
    int i = s * p->nkeys + k;
    return w <= 4 ? ((const uint32_t *)t->key)[i] : ((const uint64_t *)t->key)[i];
}

/* The band of magnitude MAG on side S, elements of W bytes: the side's
 * bands below its coarse range, and the keys in the range at or below
 * MAG. */
FPKI_DS_FN int fpki_ds_band(const fpki_ds_params *p, const fpki_ds_tables *t, int w, uint64_t mag,
                            int s)
{
    int c = fpki_ds_coarse(p, w, mag);
    uint32_t r = t->range[s * p->ncoarse + c];
    int first = (int)(r >> 16), last = first + (int)(r & 0xffff);
    int band = s * p->nbands + c + first;
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
    for (int k = first; k < last; k++) {
        uint64_t key = fpki_ds_key(p, t, w, s, k);
        band += w <= 4 ? (uint32_t)mag >= (uint32_t)key : mag >= key;
    }
    return band;
}

/* SR's draw for an element, up to the format: the exact product x * S,
 * normalised to bit 127, the exponent of its leading bit, and the top 32
 * of the element's random bits (its counter's hash, seed 0). */
typedef struct fpki_ds_draw {
    unsigned __int128 x;
    int64_t lead;
    uint32_t rnd;
} fpki_ds_draw;

/* The draw of the INDEX-th element, of nonzero finite magnitude MAG. */
FPKI_DS_FN fpki_ds_draw fpki_ds_sr_draw(const fpki_ds_params *p, uint64_t mag, uint64_t index)
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
    fpki_ds_draw d;
    d.x = x << lz;
    d.lead = exp + 127 - lz;
    d.rnd = (uint32_t)(fpki_sr_hash(0, p->base + index) >> 32);
    return d;
}

/* Whether the draw D rounds away from zero in format J.  As
 * lib/core/round.c with 32 random bits: the product loses its lowest dd
 * bits on the format's grid; away iff the random bits are below the top
 * 32 bits of that discarded fraction (bits dd - 32 to dd - 1 of x). */
FPKI_DS_FN bool fpki_ds_sr_away(const fpki_ds_params *p, const fpki_ds_draw *d, int j)
{
    int64_t below_normal = d->lead < p->fmt_emin[j] ? p->fmt_emin[j] - d->lead : 0;
    int dd = below_normal > 64 ? 192 : 127 - p->fmt_man_bits[j] + (int)below_normal;
    uint32_t frac = dd - 32 >= 128 ? 0 : (uint32_t)(d->x >> (dd - 32));
    return d->rnd < frac;
}

/* Under SR: the formats whose class the element's band leaves open
 * (SR_BITS, the band's entry) decided by the draw, and the ones that go
 * away counted as moves. */
FPKI_DS_FN void fpki_ds_sr_decide(const fpki_ds_params *p, uint64_t mag, uint64_t index,
                                  uint32_t sr_bits, fpki_ds_acc *acc)
{
    fpki_ds_draw d = fpki_ds_sr_draw(p, mag, index);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int j = 0; j < FPK_STATS_MAX_FORMATS; j++) {
        unsigned move = sr_bits >> 2 * j & 3;
        if (j < p->nformats && move) {
            uint32_t away = fpki_ds_sr_away(p, &d, j);
            acc->moved[j][0] += away & (move == 1);
            acc->moved[j][1] += away & (move == 2);
            acc->moved[j][2] += away & (move == 3);
        }
    }
}

/* Adds the INDEX-th element, of encoding BITS, to ACC: its finite
 * magnitude to the maximum, a count to its band and, under SR, its moves.
 * W is P->width and SR is P->sr, constants where the kernel is compiled
 * for one element width and mode. */
FPKI_DS_FN void fpki_ds_add(const fpki_ds_params *p, const fpki_ds_tables *t, int w, bool sr,
                            uint64_t bits, uint64_t index, fpki_ds_acc *acc)
{
    uint64_t mag;
    int s;
    if (w <= 4) { /* in 32 bits, where W is a constant */
        uint32_t b = (uint32_t)bits, sign = (uint32_t)p->sign_mask, m = b & ~sign;
        uint32_t finite = m < (uint32_t)p->nonfinite_min ? m : 0, top = (uint32_t)acc->amax;
        acc->amax = finite > top ? finite : top;
        s = p->nsides > 1 && (b & sign) != 0;
        mag = m;
    } else {
        mag = bits & ~p->sign_mask;
        uint64_t finite = mag < p->nonfinite_min ? mag : 0;
        acc->amax = finite > acc->amax ? finite : acc->amax;
        s = p->nsides > 1 && (bits & p->sign_mask) != 0;
    }
    int band = fpki_ds_band(p, t, w, mag, s);
#ifdef __CUDA_ARCH__
    atomicAdd(&acc->hist[band], 1u);
#else
    acc->hist[band]++;
#endif
    if (sr) {
        uint32_t sr_bits = t->sr[band];
        if (sr_bits)
            fpki_ds_sr_decide(p, mag, index, sr_bits, acc);
    }
}

/* Element I of the 16 bytes W (little-endian words) holding elements of
 * WIDTH bytes. */
FPKI_DS_FN uint64_t fpki_ds_lane(const uint32_t w[4], int width, int i)
{
    switch (width) {
    case 8: return w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
    case 4: return w[i];
    case 2: return w[i >> 1] >> 16 * (i & 1) & 0xffff;
    default: return w[i >> 2] >> 8 * (i & 3) & 0xff;
    }
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

#endif
