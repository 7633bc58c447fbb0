/* The squared errors of fake quantisation with AVX-512
 * (fpki_quantize_sqerr_fn), and with the statistics in the same pass
 * (fpki_stats_quantize_sqerr_fn).  Formats under RNE or RTZ without
 * options round as the conversion kernel does (round-avx512.h) and their
 * errors are summed without storing a result. */
#include "kernel-sets.h"

#if FPKI_X86
#include "round-avx512.h"
#include "sqerr-avx512.h"
#include "stats-avx512.h"

/* The lanes of the squared errors' sums: X2's, then E2's. */
typedef struct sqerr_sums {
    __m512d x[2], e[2];
} sqerr_sums;

/* S with the squared errors of the LIVE ones of the 16 elements at X
 * added, rounded as round16 rounds them (any element), FL with their
 * flags: the tail, out of line, one copy for every format (S by value, so
 * that the caller's sums stay in registers). */
TARGET_AVX512 static __attribute__((noinline)) sqerr_sums
sqerr_tail(const round16_consts *c, const uint32_t *x, __mmask16 live, bool want_x2, sqerr_sums s,
           flag_masks *fl)
{
    __m512 yv = _mm512_castsi512_ps(round16(c, x, live, 0, fl));
    __m512 xv = _mm512_maskz_loadu_ps(live, x);
    sqerr_add16(xv, yv, sqerr_counted16(xv, yv), want_x2, s.x, s.e);
    return s;
}

/* One format's squared errors between blocks: its lanes and flags, and
 * whether it has raised the inexact flag and the underflow flag, after
 * which rounding can raise no flag that counts (but on an overflow). */
typedef struct format_state {
    sqerr_sums s;
    flag_masks fl;
    bool inexact, underflow;
} format_state;

/* Whether ST, whose format's scalars are K, has no flag left to find in
 * magnitudes from LEAST to TOP: none above max32 (no overflow), and
 * inexact raised, and underflow too unless none is tiny. */
static inline bool flags_all_raised(const plain_scalars *k, const format_state *st, uint32_t least,
                                    uint32_t top)
{
    return top <= k->max32 && st->inexact && (st->underflow || least >= k->tiny);
}

/* LANE's two sums of eight plus the squares of the 16 float32 values V,
 * exact in double (so that fused multiply-adds give the same sums). */
TARGET_AVX512 static inline __attribute__((always_inline)) void add_squares16(__m512 v,
                                                                              __m512d *lane)
{
    __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    lane[0] = _mm512_fmadd_pd(lo, lo, lane[0]);
    lane[1] = _mm512_fmadd_pd(hi, hi, lane[1]);
}

/* S with the squared errors of the 16 magnitudes A, none above max32, and
 * their results Q: each error is exact in float32 (Q is zero or within a
 * factor of two of A), so its square is exact in double. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
add_exact_sqerr16(__m512i a, __m512i q, bool want_x2, sqerr_sums *s)
{
    __m512 af = _mm512_castsi512_ps(a);
    add_squares16(_mm512_sub_ps(_mm512_castsi512_ps(q), af), s->e);
    if (want_x2)
        add_squares16(af, s->x);
}

/* Adds to *ST F's squared errors under MODE (RNE or RTZ, no options) of
 * the M nonzero magnitudes at NZ (M a multiple of 16), all in [LEAST,
 * TOP], and of the TAIL lanes of the 16 after them (X2 too, if WANT_X2).
 * Where none of 16 is above max32 every result is finite, so the 16 are
 * summed unmasked (add_exact_sqerr16); round16 and masked sums take the
 * others, sqerr_tail the tail.  Where none is above max32 and the flags the
 * rounding could raise are raised already (none is tiny, or the
 * underflow flag is), the loop only rounds and sums. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sqerr_run(const fpk_format *f, fpk_round mode, bool want_x2, const fpki_conv_plan *p,
          format_state *st, const uint32_t *nz, size_t m, uint32_t least, uint32_t top,
          __mmask16 tail, prefetch_range *pf)
{
    const round16_consts c = round16_setup(f, mode, true, p);
    prefetch_range ahead = prefetch_take(pf);
    sqerr_sums s = st->s;
    flag_masks fl = st->fl;
    if (flags_all_raised(&c.k, st, least, top)) {
        for (size_t r = 0; r < m; r += 16) {
            prefetch_two_lines(&ahead);
            __m512i a = _mm512_loadu_si512(nz + r), kv, qv;
            round16_rne_rtz(&c, a, &kv, &qv);
            add_exact_sqerr16(a, qv, want_x2, &s);
        }
        m = 0;
    }
    __m512i inexact_least = _mm512_set1_epi32(-1);
    for (size_t r = 0; r < m; r += 16) {
        prefetch_two_lines(&ahead);
        __m512i a = _mm512_loadu_si512(nz + r);
        if (__builtin_expect(_mm512_cmpgt_epu32_mask(a, c.max32) != 0, 0)) {
            __m512 xv = _mm512_castsi512_ps(a);
            __m512 yv = _mm512_castsi512_ps(round16(&c, nz + r, 0xffff, 0, &fl));
            sqerr_add16(xv, yv, sqerr_counted16(xv, yv), want_x2, s.x, s.e);
            continue;
        }
        __m512i kv, qv;
        round16_rne_rtz(&c, a, &kv, &qv);
        inexact_least =
            _mm512_mask_min_epu32(inexact_least, _mm512_cmpneq_epi32_mask(qv, a), inexact_least, a);
        add_exact_sqerr16(a, qv, want_x2, &s);
    }
    if (tail)
        s = sqerr_tail(&c, nz + m, tail, want_x2, s, &fl);
    fl.ix |= _mm512_cmpneq_epi32_mask(inexact_least, _mm512_set1_epi32(-1));
    fl.uf |= _mm512_cmplt_epu32_mask(inexact_least, c.tiny);
    prefetch_put(pf, ahead);
    st->s = s;
    st->fl = fl;
    st->inexact |= fl.ix != 0 || fl.of != 0;
    st->underflow |= fl.uf != 0;
}

/* sqerr_run with P's mode and WANT_X2 compiled in. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
sqerr_mode(const fpk_format *f, const fpki_conv_plan *p, bool want_x2, format_state *st,
           const uint32_t *nz, size_t m, uint32_t least, uint32_t top, __mmask16 tail,
           prefetch_range *pf)
{
    if (p->mode == FPK_RNE) {
        if (want_x2)
            sqerr_run(f, FPK_RNE, true, p, st, nz, m, least, top, tail, pf);
        else
            sqerr_run(f, FPK_RNE, false, p, st, nz, m, least, top, tail, pf);
    } else {
        if (want_x2)
            sqerr_run(f, FPK_RTZ, true, p, st, nz, m, least, top, tail, pf);
        else
            sqerr_run(f, FPK_RTZ, false, p, st, nz, m, least, top, tail, pf);
    }
}

/* sqerr_run with P's format, mode and WANT_X2 compiled in. */
TARGET_AVX512 static void sqerr_block(const fpki_conv_plan *p, bool want_x2, format_state *st,
                                      const uint32_t *nz, size_t m, uint32_t least, uint32_t top,
                                      __mmask16 tail, prefetch_range *pf)
{
#define RUN(f) sqerr_mode(f, p, want_x2, st, nz, m, least, top, tail, pf)
    FPKI_KFORMAT_SWITCH(p->format, RUN)
#undef RUN
}

/* LANE's two sums of eight plus the squares of the 16 float32 values at
 * P, converted to double from memory: where the upper eight are taken
 * from a register (vextractf64x4), the shuffle competes with the
 * conversions and the sums for the vector unit. */
TARGET_AVX512 static inline __attribute__((always_inline)) void add_squares_at(const float *p,
                                                                               __m512d *lane)
{
    __m512d lo = _mm512_cvtps_pd(_mm256_loadu_ps(p));
    __m512d hi = _mm512_cvtps_pd(_mm256_loadu_ps(p + 8));
    lane[0] = _mm512_fmadd_pd(lo, lo, lane[0]);
    lane[1] = _mm512_fmadd_pd(hi, hi, lane[1]);
}

/* Up to GROUP_FORMATS formats' squared errors in one loop, where sqerr_run
 * would take its flagless loop for each and each rounds in the vector unit
 * (rounds_in_vector_unit): the magnitudes are loaded once, one prefetch
 * check serves all, and the sums of all are in flight.  Each step stores
 * its errors, and the next step converts them to double from there
 * (add_squares_at).  The formats' constants are set up at run time, so
 * that one loop serves every group of NK; only NK, the mode (RNE or RTZ) and
 * WANT_X2 are compiled in.  Adds to ST[j]'s lanes the squared errors of the
 * M magnitudes at NZ (M a multiple of 16) under P[j], and to ST[0]'s their
 * squares when WANT_X2.  (Faster than loops of two formats that took the
 * errors' upper halves from registers.) */
#define GROUP_FORMATS 4
TARGET_AVX512 static inline __attribute__((always_inline)) void
sqerr_group_loop(int nk, bool rne, bool want_x2, const fpki_conv_plan *p, format_state *st,
                 const uint32_t *nz, size_t m, prefetch_range *pf)
{
    round16_consts c[GROUP_FORMATS];
    __m512d e[GROUP_FORMATS][2], x[2] = {st[0].s.x[0], st[0].s.x[1]};
#pragma GCC unroll 4
    for (int j = 0; j < nk; j++) {
        c[j] = round16_setup(fpki_kformat_descriptor(p[j].format), p[j].mode, true, &p[j]);
        c[j].k.subs = true, c[j].k.rne = rne;
        e[j][0] = st[j].s.e[0], e[j][1] = st[j].s.e[1];
    }
    /* a step's errors, and the one before's */
    float err[2][GROUP_FORMATS][16] __attribute__((aligned(64)));
    prefetch_range ahead = prefetch_take(pf);
    for (size_t r = 0; r < m; r += 16) {
        prefetch_two_lines(&ahead);
        __m512i a = _mm512_loadu_si512(nz + r), kv, qv;
        float(*now)[16] = err[r / 16 % 2], (*before)[16] = err[(r / 16 + 1) % 2];
#pragma GCC unroll 4
        for (int j = 0; j < nk; j++) {
            round16_rne_rtz(&c[j], a, &kv, &qv);
            _mm512_store_ps(now[j], _mm512_sub_ps(_mm512_castsi512_ps(qv), _mm512_castsi512_ps(a)));
        }
        if (want_x2)
            add_squares_at((const float *)(nz + r), x);
#pragma GCC unroll 4
        for (int j = 0; r && j < nk; j++)
            add_squares_at(before[j], e[j]);
    }
#pragma GCC unroll 4
    for (int j = 0; m && j < nk; j++)
        add_squares_at(err[(m / 16 + 1) % 2][j], e[j]);
    prefetch_put(pf, ahead);
#pragma GCC unroll 4
    for (int j = 0; j < nk; j++)
        st[j].s.e[0] = e[j][0], st[j].s.e[1] = e[j][1];
    st[0].s.x[0] = x[0], st[0].s.x[1] = x[1];
}

/* Whether round16_rne_rtz may round magnitudes up to TOP in the vector unit
 * for a format of scalars K: always where its exponent range is narrower
 * than float32's; else (bfloat16, tf32) where C, 2^(e + d0), is finite.
 * (The vector unit sees float32 subnormals here: the kernels run with DAZ
 * off, in the default environment.) */
static bool rounds_in_vector_unit(const plain_scalars *k, uint32_t top)
{
    return k->subs || (top >> 23) + (uint32_t)k->d0 < 255;
}

/* sqerr_block for the first formats of P[0..NF-1] (M magnitudes, no tail)
 * in one loop, X2 with the first when WANT_X2: as many as GROUP_FORMATS,
 * which share P[0]'s mode, have no flag left to find (flags_all_raised)
 * and round in the vector unit; returns how many, 0 when nothing was
 * done. */
TARGET_AVX512 static int sqerr_group(const fpki_conv_plan *p, int nf, bool want_x2,
                                     format_state *st, const uint32_t *nz, size_t m, uint32_t least,
                                     uint32_t top, prefetch_range *pf)
{
    int nk = 0;
    for (; nk < nf && nk < GROUP_FORMATS && p[nk].mode == p[0].mode; nk++) {
        plain_scalars k = plain_scalars_of(fpki_kformat_descriptor(p[nk].format), p[nk].mode, true);
        if (!flags_all_raised(&k, &st[nk], least, top) || !rounds_in_vector_unit(&k, top))
            break;
    }
    bool rne = p[0].mode == FPK_RNE;
#define GROUP_CASE(n)                                                                              \
    case n:                                                                                        \
        if (rne)                                                                                   \
            want_x2 ? sqerr_group_loop(n, true, true, p, st, nz, m, pf)                            \
                    : sqerr_group_loop(n, true, false, p, st, nz, m, pf);                          \
        else                                                                                       \
            want_x2 ? sqerr_group_loop(n, false, true, p, st, nz, m, pf)                           \
                    : sqerr_group_loop(n, false, false, p, st, nz, m, pf);                         \
        break;
    switch (nk) {
        GROUP_CASE(1) GROUP_CASE(2) GROUP_CASE(3) GROUP_CASE(4)
    }
#undef GROUP_CASE
    return nk;
}

/* One call's squared errors: nonzero magnitudes packed as they come, a
 * block at a time, into a buffer of SQERR_BUFFER; each format sums the
 * whole vectors of 16 there in one loop (few loops: starting one costs as
 * much as many vectors), and the fewer than 16 left wait at the buffer's
 * start for the next magnitudes, so that the k-th nonzero element of the
 * call goes to lane k % 16 whatever the blocks. */
#define SQERR_BUFFER 8192
typedef struct sqerr_pass {
    const fpki_conv_plan *p;
    int nf;
    bool want_x2;
    format_state st[FPKI_QUANTIZE_SQERR_MAX_FORMATS];
    size_t n;                                                     /* magnitudes in BUF */
    uint32_t least, top;                                          /* bounds on them */
    uint32_t buf[SQERR_BUFFER + 16] __attribute__((aligned(64))); /* (a vector of slack) */
} sqerr_pass;

/* Whether P[0..NF-1] have kernels here: RNE or RTZ without options. */
static bool has_kernels(const fpki_conv_plan *p, int nf)
{
    for (int j = 0; j < nf; j++)
        if (!fpki_conv_plain(&p[j]) || !p[j].quant ||
            (p[j].mode != FPK_RNE && p[j].mode != FPK_RTZ))
            return false;
    return true;
}

/* Starts Q for P[0..NF-1] from the lanes X2 (NULL: no squares) and E2,
 * FLAGS[j] the flags format j has raised already. */
TARGET_AVX512 static void sqerr_pass_start(sqerr_pass *q, const fpki_conv_plan *p, int nf,
                                           const double *x2, const double *e2,
                                           const unsigned *flags)
{
    q->p = p;
    q->nf = nf;
    q->want_x2 = x2 != NULL;
    for (int j = 0; j < nf; j++) {
        sums_load(j ? NULL : x2, e2 + FPKI_SQERR_LANES * j, q->st[j].s.x, q->st[j].s.e);
        q->st[j].fl = (flag_masks){0, 0, 0, 0};
        q->st[j].inexact = flags[j] & FPK_INEXACT;
        q->st[j].underflow = flags[j] & FPK_UNDERFLOW;
    }
    q->n = 0;
    q->least = UINT32_MAX;
    q->top = 0;
}

/* The magnitudes at the start of a buffer that each format rounds on its
 * own, looking for flags, when a flag not yet raised is all that keeps
 * one out of sqerr_group's loops (a call's first buffer, unless its caller
 * raised them): the rest of the buffer can then take those loops. */
#define FLAG_PROBE 512

/* Whether a format of Q's, none of whose magnitudes overflow, has a flag
 * left to find. */
static bool flags_wanted(const sqerr_pass *q)
{
    for (int j = 0; j < q->nf; j++) {
        plain_scalars k =
            plain_scalars_of(fpki_kformat_descriptor(q->p[j].format), q->p[j].mode, true);
        if (q->top <= k.max32 && !flags_all_raised(&k, &q->st[j], q->least, q->top))
            return true;
    }
    return false;
}

/* Sums the whole vectors in Q's buffer, the rest moved to its start (PF:
 * lines to prefetch meanwhile, or NULL). */
TARGET_AVX512 static void sqerr_pass_flush(sqerr_pass *q, prefetch_range *pf)
{
    size_t whole = q->n & ~(size_t)15, rest = q->n - whole;
    if (!whole)
        return;
    const uint32_t *nz = q->buf;
    size_t m = whole;
    if (m > FLAG_PROBE && flags_wanted(q)) {
        for (int j = 0; j < q->nf; j++)
            sqerr_block(&q->p[j], j == 0 && q->want_x2, &q->st[j], nz, FLAG_PROBE, q->least, q->top,
                        0, pf);
        nz += FLAG_PROBE, m -= FLAG_PROBE;
    }
    for (int j = 0, done; j < q->nf; j += done) {
        bool x2 = j == 0 && q->want_x2;
        done = sqerr_group(&q->p[j], q->nf - j, x2, &q->st[j], nz, m, q->least, q->top, pf);
        if (!done) {
            sqerr_block(&q->p[j], x2, &q->st[j], nz, m, q->least, q->top, 0, pf);
            done = 1;
        }
    }
    memcpy(q->buf, q->buf + whole, 4 * rest);
    q->n = rest;
    if (!rest)
        q->least = UINT32_MAX, q->top = 0;
}

/* Whether LEN more magnitudes fit in Q's buffer as it is (else sqerr_pass_room
 * sums it first). */
static bool sqerr_pass_fits(const sqerr_pass *q, size_t len)
{
    return q->n + len <= SQERR_BUFFER;
}

/* The place for up to LEN more magnitudes (LEN <= SQERR_BUFFER - 15), and a
 * vector of slack after them, at the end of Q's buffer. */
TARGET_AVX512 static uint32_t *sqerr_pass_room(sqerr_pass *q, size_t len, prefetch_range *pf)
{
    if (!sqerr_pass_fits(q, len))
        sqerr_pass_flush(q, pf);
    return q->buf + q->n;
}

/* The M magnitudes written at sqerr_pass_room's place, all in [LEAST, TOP]. */
static void sqerr_pass_added(sqerr_pass *q, size_t m, uint32_t least, uint32_t top)
{
    q->n += m;
    q->least = least < q->least ? least : q->least;
    q->top = top > q->top ? top : q->top;
}

/* Sums what Q's buffer holds (the last fewer than 16 masked), then Q's
 * lanes into X2 and E2 and its flags into FLAGS. */
TARGET_AVX512 static void sqerr_pass_finish(sqerr_pass *q, double *x2, double *e2, unsigned *flags)
{
    sqerr_pass_flush(q, NULL);
    for (int j = 0; j < q->nf; j++) {
        if (q->n)
            sqerr_block(&q->p[j], j == 0 && q->want_x2, &q->st[j], q->buf, 0, q->least, q->top,
                        first_lanes(q->n), NULL);
        sums_store(j ? NULL : x2, e2 + FPKI_SQERR_LANES * j, q->st[j].s.x, q->st[j].s.e);
        flag_masks fl = q->st[j].fl;
        flags[j] |= library_flags(fl.ix, fl.uf, fl.of, fl.inv);
    }
}

/* fpki_quantize_sqerr_fn with AVX-512, for formats under RNE or RTZ without
 * options: the nonzero magnitudes of SQERR_BLOCK elements packed
 * (vpcompressd: zeros add nothing and raise nothing, and the signs
 * change no square) into the pass's buffer, whose each format sums 16 at
 * a time once it is full (FLAGS[j] on entry: the flags raised already,
 * not looked for again where nothing else can be raised). */
TARGET_AVX512 bool fpki_quantize_sqerr_avx512(const fpki_conv_plan *p, int nf, const uint32_t *x,
                                              size_t n, double *x2, double *e2, unsigned *flags)
{
    if (!has_kernels(p, nf))
        return false;
    sqerr_pass q;
    sqerr_pass_start(&q, p, nf, x2, e2, flags);
    for (size_t i0 = 0; i0 < n; i0 += SQERR_BLOCK) {
        size_t len = n - i0 < SQERR_BLOCK ? n - i0 : SQERR_BLOCK;
        /* this block's lines asked for while the buffer is summed */
        prefetch_range pf = {(const char *)(x + i0), (const char *)(x + i0 + len)};
        uint32_t *nz = sqerr_pass_room(&q, len, &pf);
        __m512i top = _mm512_setzero_si512(), least = _mm512_set1_epi32(-1);
        uint32_t neg_zeros = 0;
        size_t m =
            len == SQERR_BLOCK
                ? pack_nonzero(x + i0, len, false, true, nz, &top, &least, &neg_zeros, NULL)
                : pack_nonzero(x + i0, len, false, false, nz, &top, &least, &neg_zeros, NULL);
        sqerr_pass_added(&q, m, _mm512_reduce_min_epu32(least), _mm512_reduce_max_epu32(top));
    }
    sqerr_pass_finish(&q, x2, e2, flags);
    return true;
}

/* The squared errors' pass as the statistics' sink (stats-avx512.h). */
static bool sink_fits(void *q, size_t len)
{
    return sqerr_pass_fits(q, len);
}

TARGET_AVX512 static uint32_t *sink_room(void *q, size_t len, const void *from, const void *to)
{
    prefetch_range pf = {from, to};
    return sqerr_pass_room(q, len, &pf);
}

static void sink_added(void *q, size_t m, uint32_t least, uint32_t top)
{
    sqerr_pass_added(q, m, least, top);
}

/* fpki_stats_quantize_sqerr_fn with AVX-512: the statistics' packing of
 * each block's nonzero magnitudes feeds the squared errors' buffer. */
TARGET_AVX512 bool fpki_stats_quantize_sqerr_avx512(const fpki_stats_keys *k, const uint32_t *x,
                                                    size_t n, fpki_stats_totals *t,
                                                    const fpki_conv_plan *p, int nf, double *x2,
                                                    double *e2, unsigned *flags)
{
    if (k->sign || !has_kernels(p, nf))
        return false;
    sqerr_pass q;
    sqerr_pass_start(&q, p, nf, x2, e2, flags);
    const fpki_stats_sink sink = {&q, sink_fits, sink_room, sink_added};
    fpki_stats_packed_avx512(k, x, n, t, &sink);
    sqerr_pass_finish(&q, x2, e2, flags);
    return true;
}
#endif
