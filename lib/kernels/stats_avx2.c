/* The statistics kernel with AVX2 (fpki_stats_fn). */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx2-util.h"
#include "stats-x86.h"

/* ACC->below[KEY[q]] += how many of the M magnitudes at V (padded with
 * 0x7fffffff to a whole vector) are below the key, for the NK <= 8 keys
 * indexed by KEY, each at most 0x7fffffff. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
count_below_n(const fpki_stats_keys *keys, const int *key, int nk, const uint32_t *v, size_t m,
              fpki_stats_totals *acc)
{
    __m256i kv[8], cv[8];
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++) {
        kv[q] = _mm256_set1_epi32((int)keys->key[key[q]]);
        cv[q] = _mm256_setzero_si256();
    }
    for (size_t r = 0; r < m; r += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(v + r));
#pragma GCC unroll 8
        for (int q = 0; q < nk; q++) /* (signed compares: both below 2^31) */
            cv[q] = _mm256_sub_epi32(cv[q], _mm256_cmpgt_epi32(kv[q], a));
    }
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++) {
        uint32_t c[8];
        _mm256_storeu_si256((__m256i *)c, cv[q]);
        acc->below[key[q]] += (uint64_t)c[0] + c[1] + c[2] + c[3] + c[4] + c[5] + c[6] + c[7];
    }
}

/* count_below_n with a loop for each count, its counters in registers. */
TARGET_AVX2 static void count_below(const fpki_stats_keys *keys, const int *key, int nk,
                                    const uint32_t *v, size_t m, fpki_stats_totals *acc)
{
    switch (nk) {
#define COUNT_CASE(K)                                                                              \
    case K: count_below_n(keys, key, K, v, m, acc); break;
        COUNT_CASE(1) COUNT_CASE(2) COUNT_CASE(3) COUNT_CASE(4)
        COUNT_CASE(5) COUNT_CASE(6) COUNT_CASE(7) default: COUNT_CASE(8)
#undef COUNT_CASE
    }
}

/* The exponent histogram with AVX2, as stats_avx512's: each magnitude's
 * exponent field e, when in the window [base, base + 63], sets bit
 * e - base - 32w of a one-hot vector for half w, and carry-save adders
 * sum sixteen such vectors at a time into bitsliced counters: bit j of
 * lane l of plane p is bit p of how many of lane l's elements set bit j. */
#define EXP_PLANES 40
#define EXP_GROUP 128   /* elements a group of adders sums */
#define RANGE_PIECE 256 /* elements of a block whose range is looked at */
#define RANGE_PIECES (FPKI_STATS_BLOCK / RANGE_PIECE)

typedef struct exp_hist {
    __m256i plane[2][EXP_PLANES];
    uint32_t base; /* 0 until the first nonzero element chose it */
    int nplanes;
} exp_hist;

/* HI:LO = LO + A + B, bit by bit. */
#define CSA(hi, lo, a, b)                                                                          \
    do {                                                                                           \
        __m256i a_ = (a), b_ = (b), u_ = _mm256_xor_si256(lo, a_);                                 \
        hi = _mm256_or_si256(_mm256_and_si256(lo, a_), _mm256_and_si256(u_, b_));                  \
        lo = _mm256_xor_si256(u_, b_);                                                             \
    } while (0)

/* Adds C, of weight 2^P, to half W's counters. */
TARGET_AVX2 static inline __attribute__((always_inline)) void exp_hist_carry(exp_hist *h, int w,
                                                                             int p, __m256i c)
{
    for (; !_mm256_testz_si256(c, c); p++) {
        __m256i t = _mm256_and_si256(h->plane[w][p], c);
        h->plane[w][p] = _mm256_xor_si256(h->plane[w][p], c);
        c = t;
    }
    if (p > h->nplanes)
        h->nplanes = p;
}

/* The one-hot vectors for both halves of the 8 magnitudes at P (vpsllvd
 * gives 0 for counts past 31, which those below the half wrap to). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
exp_onehot(const uint32_t *p, __m256i b0, __m256i b1, __m256i *h0, __m256i *h1)
{
    const __m256i one = _mm256_set1_epi32(1);
    __m256i e = _mm256_srli_epi32(_mm256_load_si256((const __m256i *)p), 23);
    *h0 = _mm256_sllv_epi32(one, _mm256_sub_epi32(e, b0));
    *h1 = _mm256_sllv_epi32(one, _mm256_sub_epi32(e, b1));
}

/* Counts the exponents of the EXP_GROUP magnitudes at NZ (aligned; zeros
 * count nowhere, the window starting above them). */
TARGET_AVX2 static inline __attribute__((always_inline)) void exp_hist_group(exp_hist *h,
                                                                             const uint32_t *nz)
{
    const __m256i b0 = _mm256_set1_epi32((int)h->base);
    const __m256i b1 = _mm256_set1_epi32((int)h->base + 32);
    __m256i x0, x1, y0, y1;
#define ONEHOT_PAIR(k, t0, t1)                                                                     \
    do {                                                                                           \
        exp_onehot(nz + 8 * (k), b0, b1, &x0, &x1);                                                \
        exp_onehot(nz + 8 * (k) + 8, b0, b1, &y0, &y1);                                            \
        CSA(t0, ones0, x0, y0);                                                                    \
        CSA(t1, ones1, x1, y1);                                                                    \
    } while (0)
    EXP_ADDERS(__m256i, CSA, ONEHOT_PAIR, exp_hist_carry, h);
#undef ONEHOT_PAIR
}

/* Adds the counters into HIST: each half's 8 lanes summed into lane 0
 * first, by bitsliced adds of lanes R.. onto lanes 0.. (R = 4, 2, 1),
 * then lane 0's bits read out. */
TARGET_AVX2 static void exp_hist_flush(const exp_hist *h, uint64_t *hist)
{
    for (int w = 0; w < 2; w++) {
        __m256i pl[EXP_PLANES + 3];
        int np = h->nplanes;
        for (int p = 0; p < np; p++)
            pl[p] = h->plane[w][p];
        for (int r = 4; r >= 1; r /= 2) {
            const __m256i from = _mm256_setr_epi32(r, r + 1, r + 2, r + 3, r + 4, r + 5, r + 6,
                                                   r + 7); /* (past 7: wraps round, not read) */
            __m256i carry = _mm256_setzero_si256();
            for (int p = 0; p < np; p++) {
                CSA(carry, pl[p], _mm256_permutevar8x32_epi32(pl[p], from), carry);
            }
            pl[np++] = carry;
        }
        uint64_t *half = hist + h->base + 32 * w;
        for (int p = 0; p < np; p++)
            for (uint32_t b = (uint32_t)_mm256_cvtsi256_si32(pl[p]); b; b &= b - 1)
                half[__builtin_ctz(b)] += UINT64_C(1) << p;
    }
}

/* Adds to HIST the exponents of the M magnitudes at V (padded to a whole
 * vector) outside the window from BASE. */
TARGET_AVX2 static void count_outside_window(const uint32_t *v, size_t m, uint32_t base,
                                             uint64_t *hist)
{
    const __m256i b = _mm256_set1_epi32((int)base), last = _mm256_set1_epi32(EXP_WINDOW - 1);
    for (size_t r = 0; r < m; r += 8) {
        __m256i e = _mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(v + r)), 23);
        __m256i d = _mm256_sub_epi32(e, b); /* outside: above 63 as unsigned */
        __m256i inside = _mm256_cmpeq_epi32(_mm256_max_epu32(d, last), last);
        for (unsigned out = kept_lanes8(inside); out; out &= out - 1) {
            size_t q = r + (size_t)__builtin_ctz(out);
            if (q < m)
                hist[v[q] >> 23]++;
        }
    }
}

/* fpki_stats_fn with AVX2, for magnitudes (keys on the encodings, SIGN,
 * take the portable body): as fpki_stats_avx512, the zeros left out at
 * once and the other magnitudes packed (compress8); the keys the block's
 * range leaves undecided counted over them, eight a pass; their exponents
 * counted by carry-save adders, a group at a time; the float32 subnormals
 * among them counted only where the least is one. */
TARGET_AVX2 void fpki_stats_avx2(const fpki_stats_keys *keys, const uint32_t *x, size_t n,
                                 fpki_stats_totals *acc)
{
    if (keys->sign) {
        fpki_stats_generic(keys, x, n, acc);
        return;
    }
    exp_hist eh;
    memset(&eh, 0, sizeof eh);
    eh.nplanes = 4;
    /* The histogram's leftovers (fewer than a group), then a block's
     * magnitudes and a vector of padding. */
    uint32_t nz[EXP_GROUP + FPKI_STATS_BLOCK + 8] __attribute__((aligned(32)));
    size_t npending = 0;
    for (size_t i0 = 0; i0 < n; i0 += FPKI_STATS_BLOCK) {
        size_t len = n - i0 < FPKI_STATS_BLOCK ? n - i0 : FPKI_STATS_BLOCK, m = 0, i = 0;
        uint32_t *bz = nz + npending; /* the block's */
        /* Each piece's extremes and where its elements start at BZ: the
         * few far below the others (which gradients often have, in a few
         * pieces of a block) are looked for in their pieces only. */
        uint32_t piece_top[RANGE_PIECES], piece_least[RANGE_PIECES];
        size_t piece_at[RANGE_PIECES + 1], np = 0;
        for (; i < len; i += RANGE_PIECE, np++) {
            piece_at[np] = m, piece_top[np] = 0, piece_least[np] = UINT32_MAX;
            m += pack_nonzero(x + i0 + i, len - i < RANGE_PIECE ? len - i : RANGE_PIECE, bz + m,
                              &piece_least[np], &piece_top[np]);
        }
        piece_at[np] = m;
        uint32_t block_top = 0, block_least = UINT32_MAX;
        for (size_t q = 0; q < np; q++) {
            block_top = piece_top[q] > block_top ? piece_top[q] : block_top;
            block_least = piece_least[q] < block_least ? piece_least[q] : block_least;
        }
        uint32_t zeros = (uint32_t)(len - m), amax = block_top;
        if (block_top >= FPKI_F32_INF) { /* seldom: the largest finite one */
            amax = 0;
            for (size_t r = 0; r < m; r++)
                amax = bz[r] < FPKI_F32_INF && bz[r] > amax ? bz[r] : amax;
        }
        if (amax > acc->amax)
            acc->amax = amax;
        acc->hist[0] += zeros;
        if (m && !eh.base)
            eh.base = exp_window_base(amax);
        for (size_t r = m; r < m + 8; r++) /* a whole vector: above every key */
            bz[r] = FPKI_F32_MAG;
        for (size_t q = 0; q < np; q++)
            if (piece_at[q + 1] > piece_at[q] &&
                (piece_least[q] >> 23 < eh.base || piece_top[q] >> 23 >= eh.base + EXP_WINDOW))
                count_outside_window(bz + piece_at[q], piece_at[q + 1] - piece_at[q], eh.base,
                                     acc->hist);
        if (block_least < 0x800000u)
            for (size_t r = 0; r < m; r++)
                if (bz[r] < 0x800000u)
                    acc->subnormal[31 - __builtin_clz(bz[r])]++;
        /* Keys: zeros are below every positive one; none of the packed
         * is below the least of them, and all below one above the top. */
        int undecided[FPKI_STATS_MAX_KEYS], nu = 0;
        for (int k = 0; k < keys->n; k++) {
            uint32_t key = keys->key[k];
            acc->below[k] += key > 0 ? zeros : 0;
            if (key > block_top)
                acc->below[k] += m;
            else if (key > block_least)
                undecided[nu++] = k;
        }
        for (int q = 0; q < nu; q += 8)
            count_below(keys, undecided + q, nu - q < 8 ? nu - q : 8, bz, m, acc);
        /* The histogram, whole groups at a time; the rest waits for more. */
        size_t have = npending + m, r = 0;
        for (; r + EXP_GROUP <= have; r += EXP_GROUP)
            exp_hist_group(&eh, nz + r);
        npending = have - r;
        memmove(nz, nz + r, npending * sizeof *nz);
    }
    if (npending) {
        memset(nz + npending, 0, (EXP_GROUP - npending) * sizeof *nz);
        exp_hist_group(&eh, nz);
    }
    if (eh.base)
        exp_hist_flush(&eh, acc->hist);
}
#endif
