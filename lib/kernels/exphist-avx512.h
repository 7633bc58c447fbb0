/* The exponent histogram of the AVX-512 statistics (stats_avx512.c):
 * bitsliced counters of a window of exponent fields, summed by carry-save
 * adders sixteen vectors at a time. */
#ifndef FPKIT_EXPHIST_AVX512_H
#define FPKIT_EXPHIST_AVX512_H

#include "avx512-util.h"
#include "stats-x86.h"

/* The exponent histogram under AVX-512, for the nonzero elements a
 * block packs together: each element's exponent field e, when in the
 * window [base, base + 63], sets bit e - base - 32w of a one-hot vector
 * for half w of the window, and carry-save adders (Harley and Seal's) sum
 * sixteen such vectors at a time into bitsliced counters: bit j of lane l
 * of plane p is bit p of how many of lane l's elements set bit j.  The
 * groups that may hold elements outside the window (from blocks whose
 * range leaves it) count those one at a time. */
#define EXP_PLANES 40
#define EXP_GROUP 256 /* elements a group of adders sums */

typedef struct exp_hist {
    __m512i plane[2][EXP_PLANES];
    uint32_t base; /* 0 until the first nonzero element chose it */
    int nplanes;
} exp_hist;

/* HI:LO = LO + A + B, bit by bit: the majority is the carry, the parity
 * the sum. */
#define CSA(hi, lo, a, b)                                                                          \
    do {                                                                                           \
        __m512i a_ = (a), b_ = (b);                                                                \
        hi = _mm512_ternarylogic_epi32(lo, a_, b_, 0xe8); /* majority */                           \
        lo = _mm512_ternarylogic_epi32(lo, a_, b_, 0x96); /* parity */                             \
    } while (0)

/* Adds C, of weight 2^P, to half W's counters. */
TARGET_AVX512 static inline __attribute__((always_inline)) void exp_hist_carry(exp_hist *h, int w,
                                                                               int p, __m512i c)
{
    for (; _mm512_test_epi32_mask(c, c); p++) {
        __m512i t = _mm512_and_si512(h->plane[w][p], c);
        h->plane[w][p] = _mm512_xor_si512(h->plane[w][p], c);
        c = t;
    }
    if (p > h->nplanes)
        h->nplanes = p;
}

/* The one-hot vectors of the 16 elements V for both halves, and (CHECK)
 * in *OUT those of them (of LIVE) outside the window. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
exp_onehot(__m512i v, bool sign, __m512i b0, __m512i b1, bool check, __mmask16 live, __m512i *h0,
           __m512i *h1, __mmask16 *out)
{
    const __m512i one = _mm512_set1_epi32(1);
    if (sign)
        v = _mm512_and_si512(v, _mm512_set1_epi32(0x7fffffff));
    __m512i e = _mm512_srli_epi32(v, 23), d = _mm512_sub_epi32(e, b0);
    *h0 = _mm512_sllv_epi32(one, d); /* counts past 31 give 0 */
    *h1 = _mm512_sllv_epi32(one, _mm512_sub_epi32(e, b1));
    if (check)
        *out = _mm512_mask_cmpge_epu32_mask(live, d, _mm512_set1_epi32(EXP_WINDOW));
}

/* The 16 elements at P, of which VALID are there (TAIL) or all. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
group_load(const uint32_t *p, ptrdiff_t valid, bool tail)
{
    if (!tail)
        return _mm512_loadu_si512(p);
    __mmask16 t = first_lanes(valid > 0 ? (size_t)valid : 0);
    return _mm512_maskz_loadu_epi32(t, p); /* zeros: outside the window */
}

/* Which of the 16 elements at P, of which VALID are there (TAIL) or all,
 * are there. */
static inline __mmask16 group_live(ptrdiff_t valid, bool tail)
{
    return tail ? first_lanes(valid > 0 ? (size_t)valid : 0) : 0xffff;
}

/* Counts the exponents of 256 elements at NZ (magnitudes, or encodings
 * when SIGN), of which VALID are there when TAIL.  When CHECK, some may lie
 * outside the window, which the adders leave out: the compares that find
 * them are kept a vector, and those vectors' ones counted into HIST one at
 * a time (cheaper than a separate pass over every block that has some,
 * which gradients of a wide range have often). */
TARGET_AVX512 static inline __attribute__((always_inline)) void
exp_hist_group(exp_hist *h, const uint32_t *nz, ptrdiff_t valid, bool sign, bool tail, bool check,
               uint64_t *hist)
{
    const __m512i b0 = _mm512_set1_epi32((int)h->base), b1 = _mm512_set1_epi32((int)h->base + 32);
    __m512i x0, x1, y0, y1;
    __mmask16 out[EXP_GROUP / 16] = {0};
#define ONEHOT_PAIR(k, t0, t1)                                                                     \
    do {                                                                                           \
        ptrdiff_t v0_ = valid - 16 * (k), v1_ = v0_ - 16;                                          \
        exp_onehot(group_load(nz + 16 * (k), v0_, tail), sign, b0, b1, check,                      \
                   group_live(v0_, tail), &x0, &x1, &out[k]);                                      \
        exp_onehot(group_load(nz + 16 * (k) + 16, v1_, tail), sign, b0, b1, check,                 \
                   group_live(v1_, tail), &y0, &y1, &out[(k) + 1]);                                \
        CSA(t0, ones0, x0, y0);                                                                    \
        CSA(t1, ones1, x1, y1);                                                                    \
    } while (0)
    EXP_ADDERS(__m512i, CSA, ONEHOT_PAIR, exp_hist_carry, h);
#undef ONEHOT_PAIR
    for (int k = 0; check && k < EXP_GROUP / 16; k++)
        for (__mmask16 o = out[k]; o; o &= (__mmask16)(o - 1))
            hist[(nz[16 * k + __builtin_ctz(o)] & 0x7fffffffu) >> 23]++;
}

/* exp_hist_group, with CHECK known only at run time. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
exp_hist_add(exp_hist *h, const uint32_t *nz, ptrdiff_t valid, bool sign, bool tail, bool check,
             uint64_t *hist)
{
    if (check)
        exp_hist_group(h, nz, valid, sign, tail, true, hist);
    else
        exp_hist_group(h, nz, valid, sign, tail, false, hist);
}

/* Adds the counters into HIST: each half's 16 lanes summed into lane 0
 * first, by bitsliced adds of lanes R.. onto lanes 0.. (R = 8, 4, 2, 1),
 * then that one lane's bits read out (not sixteen lanes' each), eight
 * fields a masked add (not bit by bit). */
TARGET_AVX512 static void exp_hist_flush(const exp_hist *h, uint64_t *hist)
{
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int w = 0; w < 2; w++) {
        __m512i pl[EXP_PLANES + 4];
        int np = h->nplanes;
        for (int p = 0; p < np; p++)
            pl[p] = h->plane[w][p];
        for (int r = 8; r >= 1; r /= 2) {
            const __m512i from = _mm512_add_epi32(lane, _mm512_set1_epi32(r));
            __m512i carry = _mm512_setzero_si512();
            for (int p = 0; p < np; p++) { /* (lanes past 15 wrap round: not read) */
                __m512i b = _mm512_permutexvar_epi32(from, pl[p]);
                __m512i sum = _mm512_ternarylogic_epi32(pl[p], b, carry, 0x96);
                carry = _mm512_ternarylogic_epi32(pl[p], b, carry, 0xe8);
                pl[p] = sum;
            }
            pl[np++] = carry;
        }
        /* bit j of plane p adds 2^p to field base + 32 w + j (which the
         * window keeps below 256), eight fields a masked add */
        uint64_t *half = hist + h->base + 32 * w;
        __m512i count[4];
        for (int k = 0; k < 4; k++)
            count[k] = _mm512_setzero_si512();
        for (int p = 0; p < np; p++) {
            uint32_t b = (uint32_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(pl[p]));
            const __m512i weight = _mm512_set1_epi64((long long)(UINT64_C(1) << p));
            for (int k = 0; k < 4; k++)
                count[k] =
                    _mm512_mask_add_epi64(count[k], (__mmask8)(b >> 8 * k), count[k], weight);
        }
        for (int k = 0; k < 4; k++)
            _mm512_storeu_si512(half + 8 * k,
                                _mm512_add_epi64(_mm512_loadu_si512(half + 8 * k), count[k]));
    }
}

#endif
