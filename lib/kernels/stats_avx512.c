/* The statistics kernel with AVX-512 (fpki_stats_fn): the zeros left
 * out at once, the other elements packed together (vpcompressd), the keys
 * counted over those, and the exponent histogram summed by carry-save
 * adders (exphist-avx512.h).  Each block's packed elements may go to a
 * caller's buffer instead of the statistics' own (fpki_stats_sink), so
 * that a kernel running alongside reuses them: the squared errors of
 * fpki_stats_quantize_sqerr_avx512. */
#include "kernel-sets.h"

#if FPKI_X86
#include "exphist-avx512.h"
#include "stats-avx512.h"

/* C[q] = how many of the M elements at V (and padding to a whole vector)
 * are below KEY[q], for q < NK; meanwhile the lines from PF up to PF_END
 * are prefetched, one a step. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
count_below(const uint32_t *v, size_t m, const uint32_t *key, int nk, uint32_t *c, const char *pf,
            const char *pf_end)
{
    const __m512i minus1 = _mm512_set1_epi32(-1);
    __m512i kv[8], cv[8];
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++) {
        kv[q] = _mm512_set1_epi32((int)key[q]);
        cv[q] = _mm512_setzero_si512();
    }
    for (size_t r = 0; r < m; r += 16) {
        __m512i x = _mm512_loadu_si512(v + r);
        if (pf < pf_end) {
            _mm_prefetch(pf, _MM_HINT_T1);
            pf += 64;
        }
#pragma GCC unroll 8
        for (int q = 0; q < nk; q++)
            cv[q] = _mm512_mask_sub_epi32(cv[q], _mm512_cmplt_epu32_mask(x, kv[q]), cv[q], minus1);
    }
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++)
        c[q] = (uint32_t)_mm512_reduce_add_epi32(cv[q]);
}

/* The elements of HIST's exponent fields below J (at most 256), eight
 * fields an add (every call sums up to 255 fields a key, twice). */
TARGET_AVX512 static uint64_t hist_sum_below(const uint64_t *hist, uint32_t j)
{
    __m512i sum = _mm512_setzero_si512();
    uint32_t e = 0;
    for (; e + 8 <= j; e += 8)
        sum = _mm512_add_epi64(sum, _mm512_loadu_si512(hist + e));
    __mmask8 rest = (__mmask8)((1u << (j - e)) - 1);
    sum = _mm512_add_epi64(sum, _mm512_maskz_loadu_epi64(rest, hist + e));
    return (uint64_t)_mm512_reduce_add_epi64(sum);
}

/* Keys the histogram decides, with no compare an element (magnitudes
 * only): below 2^j are the elements whose exponent field is below j
 * (zeros and subnormals in field 0), and below 2^j + 1 ulp those and the
 * ones equal to 2^j, which the first pass notices.  Under RNE those are
 * the thresholds of rounding to zero; under RTZ and SR, every key. */
typedef struct pow2_keys {
    uint64_t decided;                     /* bit k: key k is one (the first 64, which without the
                                             sign are all) */
    uint64_t before[FPKI_STATS_MAX_KEYS]; /* hist_sum_below its field, on entry */
    uint64_t equal[FPKI_STATS_MAX_KEYS];  /* elements equal to 2^j, so far */
} pow2_keys;

static void pow2_keys_start(pow2_keys *h, const fpki_stats_keys *keys, const fpki_stats_totals *acc)
{
    h->decided = 0;
    for (int k = 0; !keys->sign && k < keys->n && k < 64; k++) {
        uint32_t key = keys->key[k];
        if (key >> 23 && key <= FPKI_F32_INF && (key & 0x7fffff) <= 1) {
            h->decided |= UINT64_C(1) << k;
            h->before[k] = hist_sum_below(acc->hist, key >> 23);
            h->equal[k] = 0;
        }
    }
}

/* Adds to each key 2^j + 1 ulp in [LEAST, TOP] the M elements at BZ
 * equal to 2^j (a vector of padding after them). */
TARGET_AVX512 static void pow2_keys_equal(pow2_keys *h, const fpki_stats_keys *keys,
                                          const uint32_t *bz, size_t m, uint32_t least,
                                          uint32_t top)
{
    for (uint64_t d = h->decided; d; d &= d - 1) {
        int k = __builtin_ctzll(d);
        uint32_t p = keys->key[k] - 1;
        if (!(keys->key[k] & 1) || p < least || p > top)
            continue;
        const __m512i pv = _mm512_set1_epi32((int)p);
        for (size_t r = 0; r < m; r += 16)
            h->equal[k] += (uint64_t)__builtin_popcount(
                _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(bz + r), pv));
    }
}

static void pow2_keys_finish(const pow2_keys *h, const fpki_stats_keys *keys,
                             fpki_stats_totals *acc)
{
    for (uint64_t d = h->decided; d; d &= d - 1) {
        int k = __builtin_ctzll(d);
        acc->below[k] += hist_sum_below(acc->hist, keys->key[k] >> 23) - h->before[k] + h->equal[k];
    }
}

/* The largest finite magnitude of the M nonzero elements at BZ, of which
 * some are infinities or NaNs (seldom); *NONZERO_FINITE less those. */
TARGET_AVX512 static inline __attribute__((always_inline)) uint32_t
finite_max(const uint32_t *bz, size_t m, uint32_t *nonzero_finite)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    __m512i fin_max = _mm512_setzero_si512();
    for (size_t r = 0; r < m; r += 16) {
        __mmask16 t = first_lanes(m - r);
        __m512i a = _mm512_and_si512(_mm512_loadu_si512(bz + r), mag);
        __mmask16 fin = _mm512_mask_cmplt_epu32_mask(t, a, inf);
        *nonzero_finite -= (uint32_t)__builtin_popcount((__mmask16)(t & ~fin));
        fin_max = _mm512_mask_max_epu32(fin_max, fin, fin_max, a);
    }
    return _mm512_reduce_max_epu32(fin_max);
}

/* A block's range, for the keys: its ZEROS zeros and NEG_ZEROS -0s (keys
 * on encodings), and of its M nonzero elements the least magnitude less
 * one (LO; all ones: none), the largest finite one (MAX) and how many are
 * finite. */
typedef struct block_range {
    uint32_t zeros, neg_zeros, lo, max, nonzero_finite;
} block_range;

/* ACC->below[k] += how many of a block's elements lie below key k, but for
 * the keys HK decides: its zeros, then for the nonzero ones at BZ (M, and a
 * vector of padding above every key) what the block's range B decides, and
 * the rest counted over them up to eight keys at a time.  Meanwhile the
 * lines [PF, PF_END) of the next block are prefetched (memory would idle
 * while the keys are counted). */
TARGET_AVX512 static inline __attribute__((always_inline)) void
block_keys(const fpki_stats_keys *keys, const pow2_keys *hk, const uint32_t *bz, size_t m,
           block_range b, const char *pf, const char *pf_end, fpki_stats_totals *acc)
{
    const bool sign = keys->sign;
    uint32_t active[FPKI_STATS_MAX_KEYS];
    int na = 0;
    for (int k = 0; k < keys->n; k++) {
        uint32_t key = keys->key[k];
        if (k < 64 && hk->decided >> k & 1)
            continue;
        acc->below[k] += b.zeros - (sign && key <= 0x80000000u ? b.neg_zeros : 0);
        if (!sign && key <= b.lo + 1)
            continue; /* no nonzero element is below */
        if (!sign && key > b.max && key <= 0x7f800000u)
            acc->below[k] += b.nonzero_finite; /* every nonzero finite one is */
        else
            active[na++] = (uint32_t)k;
    }
    for (int j = 0; j < na; j += 8, pf = pf_end) {
        uint32_t k[8], c[8];
        int nk = na - j < 8 ? na - j : 8;
        for (int q = 0; q < nk; q++)
            k[q] = keys->key[active[j + q]];
        switch (nk) { /* a loop for each count, its counters in registers */
#define COUNT_CASE(K)                                                                              \
    case K: count_below(bz, m, k, K, c, pf, pf_end); break;
            COUNT_CASE(1) COUNT_CASE(2) COUNT_CASE(3) COUNT_CASE(4)
            COUNT_CASE(5) COUNT_CASE(6) COUNT_CASE(7) default: COUNT_CASE(8)
#undef COUNT_CASE
        }
        for (int q = 0; q < nk; q++)
            acc->below[active[j + q]] += c[q];
    }
    for (; !na && pf < pf_end; pf += 64) /* (no keys counted to ask for them meanwhile) */
        _mm_prefetch(pf, _MM_HINT_T1);
}

/* ACC->subnormal += the float32 subnormals among the M nonzero elements at
 * BZ (and a vector of padding), by binade. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
block_subnormals(const uint32_t *bz, size_t m, fpki_stats_totals *acc)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff);
    for (size_t r = 0; r < m; r += 16) {
        __m512i a = _mm512_and_si512(_mm512_loadu_si512(bz + r), mag);
        for (unsigned s = _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(0x800000)); s; s &= s - 1) {
            size_t q = r + (size_t)__builtin_ctz(s);
            if (q < m)
                acc->subnormal[31 - __builtin_clz(bz[q] & 0x7fffffffu)]++;
        }
    }
}

/* The exponent histogram's feed: its adders, and the nonzero elements a
 * block left over (fewer than a group), which wait for more at PENDING:
 * in NZ, or where they lie in a sink's buffer, right before the next
 * block's.  NZ holds the leftovers, then (without a sink) a block's
 * nonzero elements and a vector of padding. */
typedef struct hist_feed {
    exp_hist eh;
    const uint32_t *pending;
    size_t npending;
    bool pending_outside; /* whether those may lie outside the window */
    uint32_t nz[EXP_GROUP + FPKI_STATS_BLOCK + 16] __attribute__((aligned(64)));
} hist_feed;

/* Where the LEN elements at X pack their nonzero ones: after F's
 * leftovers, or where SINK says (the block's lines asked for, should it
 * make room first; the leftovers moved to NZ first if that would move
 * them). */
TARGET_AVX512 static inline __attribute__((always_inline)) uint32_t *
block_place(hist_feed *f, const fpki_stats_sink *sink, const uint32_t *x, size_t len)
{
    if (!sink)
        return f->nz + f->npending;
    if (f->pending != f->nz && !sink->fits(sink->ctx, len)) {
        memcpy(f->nz, f->pending, 4 * f->npending);
        f->pending = f->nz;
    }
    return sink->room(sink->ctx, len, x, x + len);
}

/* Adds a block's M nonzero elements at BZ (magnitudes, or encodings when
 * SIGN) to F's histogram, whole groups at a time, with the leftovers
 * first; the rest waits at PENDING.  CHECK: whether the groups may hold
 * elements outside the window; BLOCK_OUTSIDE: whether the block's may. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
hist_feed_block(hist_feed *f, const uint32_t *bz, size_t m, bool sign, bool check,
                bool block_outside, uint64_t *hist)
{
    size_t r = 0;
    /* (the leftovers: the block's alone once a group has taken the
     * older ones) */
    f->pending_outside = check;
    if (bz == f->nz + f->npending || f->pending + f->npending == bz) {
        /* the block right after the leftovers */
        const uint32_t *from = f->pending;
        size_t have = f->npending + m;
        for (; r + EXP_GROUP <= have; r += EXP_GROUP) {
            exp_hist_add(&f->eh, from + r, EXP_GROUP, sign, false, check, hist);
            f->pending_outside = block_outside;
        }
        f->npending = have - r;
        if (f->pending == f->nz)
            memmove(f->nz, f->nz + r, 4 * f->npending);
        else
            f->pending = from + r;
        return;
    }
    /* elsewhere: the leftovers in NZ topped up to a group first */
    if (f->npending) {
        r = m < EXP_GROUP - f->npending ? m : EXP_GROUP - f->npending;
        memcpy(f->nz + f->npending, bz, 4 * r);
        f->npending += r;
        if (f->npending < EXP_GROUP)
            return; /* (the whole block taken) */
        exp_hist_add(&f->eh, f->nz, EXP_GROUP, sign, false, check, hist);
    }
    for (; r + EXP_GROUP <= m; r += EXP_GROUP)
        exp_hist_add(&f->eh, bz + r, EXP_GROUP, sign, false, block_outside, hist);
    f->npending = m - r;
    f->pending = bz + r;
    f->pending_outside = block_outside;
}

/* The statistics with AVX-512: as fpki_stats_generic, but the zeros (half
 * of many gradients, after a ReLU) are left out at once, the other
 * elements packed together (vpcompressd) for the keys, where each key's
 * count is a masked add (but for pow2_keys), and for the histogram of
 * carry-save adders.  The first pass keeps only running extremes (float32
 * subnormals are there when the least nonzero magnitude is one);
 * infinities and NaNs, seen in the largest, take a second look.  (SINK not
 * NULL: each block's nonzero magnitudes are packed where it says.) */
TARGET_AVX512 static inline __attribute__((always_inline)) void
stats_run(const fpki_stats_keys *keys, const uint32_t *x, size_t n, fpki_stats_totals *acc,
          const fpki_stats_sink *sink)
{
    pow2_keys hk;
    pow2_keys_start(&hk, keys, acc);
    hist_feed feed;
    memset(&feed.eh, 0, sizeof feed.eh);
    feed.eh.nplanes = 4;
    feed.pending = feed.nz;
    feed.npending = 0;
    feed.pending_outside = false;
    const bool sign = keys->sign;
    for (size_t i0 = 0; i0 < n; i0 += FPKI_STATS_BLOCK) {
        size_t len = n - i0 < FPKI_STATS_BLOCK ? n - i0 : FPKI_STATS_BLOCK, m = 0;
        uint32_t *bz = block_place(&feed, sink, x + i0, len);
        __m512i top = _mm512_setzero_si512(), least = _mm512_set1_epi32(-1);
        uint32_t neg_zeros = 0;
        __mmask16 pow2 = 0;
        if (len == FPKI_STATS_BLOCK && !sign)
            m = pack_nonzero(x + i0, len, false, true, bz, &top, &least, &neg_zeros, &pow2);
        else if (sign)
            m = pack_nonzero(x + i0, len, true, false, bz, &top, &least, &neg_zeros, NULL);
        else
            m = pack_nonzero(x + i0, len, false, false, bz, &top, &least, &neg_zeros, &pow2);
        uint32_t block_max = _mm512_reduce_max_epu32(top);
        uint32_t block_least = _mm512_reduce_min_epu32(least); /* all ones: no nonzero */
        if (sink)
            sink->added(sink->ctx, m, block_least, block_max);
        /* Padding above every key, so that whole vectors can be read. */
        _mm512_storeu_si512(bz + m, _mm512_set1_epi32(-1));
        if (pow2)
            pow2_keys_equal(&hk, keys, bz, m, block_least, block_max);
        block_range b = {(uint32_t)(len - m), neg_zeros, block_least - 1, block_max, (uint32_t)m};
        uint32_t top_exp = block_max >> 23, lo_exp = (b.lo + 1) >> 23;
        if (block_max >= FPKI_F32_INF)
            b.max = finite_max(bz, m, &b.nonzero_finite);
        if (b.max > acc->amax)
            acc->amax = b.max;
        acc->hist[0] += b.zeros;
        if (m && !feed.eh.base)
            feed.eh.base = exp_window_base(b.max);
        /* whether the block's may lie outside the window, and so whether
         * the groups that take them, or those pending, look for such */
        bool block_outside =
            m && (lo_exp < feed.eh.base || top_exp >= feed.eh.base + EXP_WINDOW);
        /* the next block's lines that the first pass has not asked for */
        const char *pf = (const char *)(x + i0 + len) + FPKI_PREFETCH;
        const char *pf_end =
            (const char *)(x + (n - i0 - len < FPKI_STATS_BLOCK ? n : i0 + len + FPKI_STATS_BLOCK));
        block_keys(keys, &hk, bz, m, b, pf, pf_end, acc);
        if (b.lo < 0x7fffffu)
            block_subnormals(bz, m, acc);
        hist_feed_block(&feed, bz, m, sign, block_outside || feed.pending_outside, block_outside,
                        acc->hist);
    }
    if (feed.npending)
        exp_hist_add(&feed.eh, feed.pending, (ptrdiff_t)feed.npending, sign, true,
                     feed.pending_outside, acc->hist);
    if (feed.eh.base)
        exp_hist_flush(&feed.eh, acc->hist);
    pow2_keys_finish(&hk, keys, acc);
}

TARGET_AVX512 void fpki_stats_avx512(const fpki_stats_keys *k, const uint32_t *x, size_t n,
                                     fpki_stats_totals *t)
{
    stats_run(k, x, n, t, NULL);
}

TARGET_AVX512 void fpki_stats_packed_avx512(const fpki_stats_keys *k, const uint32_t *x, size_t n,
                                            fpki_stats_totals *t, const fpki_stats_sink *sink)
{
    stats_run(k, x, n, t, sink);
}
#endif
