/* The squared errors with AVX2: of given results (fpki_sqerr_fn), and of
 * fake quantisation (fpki_quantize_sqerr_fn), where formats under RNE or
 * RTZ without options round as the conversion kernel does (round-avx2.h)
 * and their errors are summed without storing a result. */
#include "kernel-sets.h"

#if FPKI_X86
#include "round-avx2.h"
#include "sqerr-x86.h"

/* The squared errors of the 16 float32 elements at XT and their results
 * at YT (as fpki_sqerr_generic adds them: the uncounted ones add zeros) into
 * the lanes SX and SE, four to a vector. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
sqerr_add16(const float *xt, const float *yt, bool want_x2, __m256d *sx, __m256d *se)
{
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG);
    const __m256i inf = _mm256_set1_epi32((int)FPKI_F32_INF);
    for (int g = 0; g < 2; g++) {
        __m256 xv = _mm256_load_ps(xt + 8 * g), yv = _mm256_load_ps(yt + 8 * g);
        __m256i ax = _mm256_and_si256(_mm256_castps_si256(xv), mag);
        __m256i ay = _mm256_and_si256(_mm256_castps_si256(yv), mag);
        __m256i counted =
            _mm256_and_si256(_mm256_and_si256(_mm256_cmpgt_epi32(ax, _mm256_setzero_si256()),
                                              _mm256_cmpgt_epi32(inf, ax)),
                             _mm256_cmpgt_epi32(inf, ay));
        __m256 xk = _mm256_and_ps(xv, _mm256_castsi256_ps(counted));
        __m256 yk = _mm256_and_ps(yv, _mm256_castsi256_ps(counted));
        for (int h = 0; h < 2; h++) {
            __m128 xq = h ? _mm256_extractf128_ps(xk, 1) : _mm256_castps256_ps128(xk);
            __m128 yq = h ? _mm256_extractf128_ps(yk, 1) : _mm256_castps256_ps128(yk);
            __m256d xd = _mm256_cvtps_pd(xq);
            __m256d ed = _mm256_sub_pd(_mm256_cvtps_pd(yq), xd);
            if (want_x2)
                sx[2 * g + h] = _mm256_add_pd(sx[2 * g + h], _mm256_mul_pd(xd, xd));
            se[2 * g + h] = _mm256_add_pd(se[2 * g + h], _mm256_mul_pd(ed, ed));
        }
    }
}

/* fpki_sqerr_fn with AVX2, as fpki_sqerr_avx512: the nonzero elements of
 * SQERR_BLOCK and their results packed (compress8) behind the fewer than 16
 * left from the last block, then summed 16 at a time. */
TARGET_AVX2 unsigned fpki_sqerr_avx2(const float *x, const float *y, size_t n, unsigned lane,
                                     double *x2, double *e2)
{
    __m256d sx[4], se[4];
    for (int k = 0; k < 4; k++) {
        sx[k] = x2 ? _mm256_loadu_pd(x2 + 4 * k) : _mm256_setzero_pd();
        se[k] = e2 ? _mm256_loadu_pd(e2 + 4 * k) : _mm256_setzero_pd();
    }
    float xp[SQERR_BLOCK + 32] __attribute__((aligned(32)));
    float yp[SQERR_BLOCK + 32] __attribute__((aligned(32)));
    memset(xp, 0, 16 * sizeof *xp); /* lanes before LANE: zeros, which add nothing */
    memset(yp, 0, 16 * sizeof *yp);
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG);
    size_t left = lane;
    for (size_t i0 = 0; i0 < n; i0 += SQERR_BLOCK) {
        size_t len = n - i0 < SQERR_BLOCK ? n - i0 : SQERR_BLOCK, m = left, i = 0;
        for (; len - i >= 8; i += 8) {
            __m256 xv = _mm256_loadu_ps(x + i0 + i);
            __m256 yv = y ? _mm256_loadu_ps(y + i0 + i) : _mm256_setzero_ps();
            unsigned keep = kept_lanes8(_mm256_cmpeq_epi32(
                _mm256_and_si256(_mm256_castps_si256(xv), mag), _mm256_setzero_si256()));
            compress8(_mm256_castps_si256(yv), keep, yp + m);
            m += compress8(_mm256_castps_si256(xv), keep, xp + m);
        }
        for (; i < len; i++) {
            uint32_t xb;
            memcpy(&xb, &x[i0 + i], sizeof xb);
            xp[m] = x[i0 + i];
            yp[m] = y ? y[i0 + i] : 0;
            m += (xb & FPKI_F32_MAG) != 0;
        }
        size_t whole = m & ~(size_t)15;
        prefetch_range px = next_block_range(x, n, i0), py = next_block_range(y, n, i0);
        for (size_t r = 0; r < whole; r += 16) {
            prefetch_two_lines(&px);
            prefetch_two_lines(&py);
            sqerr_add16(xp + r, yp + r, x2 != NULL, sx, se);
        }
        left = m - whole;
        memmove(xp, xp + whole, 16 * sizeof *xp);
        memmove(yp, yp + whole, 16 * sizeof *yp);
    }
    if (left) {
        memset(xp + left, 0, (16 - left) * sizeof *xp);
        memset(yp + left, 0, (16 - left) * sizeof *yp);
        sqerr_add16(xp, yp, x2 != NULL, sx, se);
    }
    for (int k = 0; k < 4; k++) {
        if (x2)
            _mm256_storeu_pd(x2 + 4 * k, sx[k]);
        if (e2)
            _mm256_storeu_pd(e2 + 4 * k, se[k]);
    }
    return (unsigned)left;
}

/* Adds the squares of the float32 values A (if WANT_X2) and of the
 * errors E to the lanes *X0 and *E0 (from A's and E's lanes 0-3) and *X1
 * and *E1 (4-7).  Each square is exact in double, so one FMA rounds as a
 * product and a sum would. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
add_exact_squares8(__m256 a, __m256 e, bool want_x2, __m256d *x0, __m256d *x1, __m256d *e0,
                   __m256d *e1)
{
    __m256d el = _mm256_cvtps_pd(_mm256_castps256_ps128(e));
    __m256d eh = _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1));
    *e0 = _mm256_fmadd_pd(el, el, *e0);
    *e1 = _mm256_fmadd_pd(eh, eh, *e1);
    if (want_x2) {
        __m256d al = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
        __m256d ah = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
        *x0 = _mm256_fmadd_pd(al, al, *x0);
        *x1 = _mm256_fmadd_pd(ah, ah, *x1);
    }
}

/* One format's squared errors between blocks with AVX2: its lanes, the
 * least magnitude rounded inexactly on the fast path, and its flags. */
typedef struct format_state {
    __m256d x[4], e[4];
    __m256i least;
    unsigned flags;
} format_state;

/* Adds to *ST the squared errors of the 16 magnitudes at A (and their
 * squares if WANT_X2) rounded by the set's conversion of P (its general
 * code where round8_rne_rtz does not apply). */
TARGET_AVX2 static void sqerr_general16(const fpki_conv_plan *p, const uint32_t *a, bool want_x2,
                                        format_state *st)
{
    float y[16] __attribute__((aligned(32)));
    st->flags |= fpki_convert_avx2(p, a, y, 16, 0, false);
    sqerr_add16((const float *)a, y, want_x2, st->x, st->e);
}

/* Adds to the lanes *X0, *X1, *E0 and *E1 (as add_exact_squares8) the
 * squared errors of the 8 magnitudes A (none above C's max32) rounded by
 * round8_rne_rtz, and their squares if WANT_X2; if TRACK, lowers *LEAST to
 * the least of them rounded inexactly. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
round_add_sqerr8(const round8_consts *c, __m256i a, bool want_x2, bool track, __m256i *least,
                 __m256d *x0, __m256d *x1, __m256d *e0, __m256d *e1)
{
    __m256i k, q;
    round8_rne_rtz(c, a, &k, &q);
    if (track) /* exact results read as all ones, above every magnitude */
        *least = _mm256_min_epu32(*least, _mm256_or_si256(a, _mm256_cmpeq_epi32(q, a)));
    __m256 af = _mm256_castsi256_ps(a);
    add_exact_squares8(af, _mm256_sub_ps(_mm256_castsi256_ps(q), af), want_x2, x0, x1, e0, e1);
}

/* Adds to *ST P's squared errors (F under MODE, RNE or RTZ, no options) of
 * the M nonzero magnitudes at NZ (aligned; M a multiple of 16, and the
 * M + 16 after them zeros when TAIL, the last call's), and of X2 too if
 * WANT_X2; none of the M is above TOP nor below BOTTOM.  Sixteen with none
 * above max32 are rounded by round8_rne_rtz: every result is finite and
 * each error exact in float32 (the result is zero or within a factor of two
 * of the magnitude); sixteen with one, and the tail, by the portable
 * kernel, their terms as fpk_array_sqerr adds them.  The sums stay in
 * registers between (in memory, each sum's chain of adds waited on a
 * store).  Once the flags hold inexact, and underflow unless no magnitude
 * is tiny, and none is above max32, the loop looks only at the sums (a
 * third fewer operations). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
sqerr_run(const fpk_format *f, fpk_round mode, bool want_x2, const fpki_conv_plan *p,
          format_state *st, const uint32_t *nz, size_t m, bool tail, uint32_t top, uint32_t bottom,
          prefetch_range *pf)
{
    const round8_consts c = round8_setup(f, mode, true, p);
    prefetch_range ahead = prefetch_take(pf);
    __m256d x0 = st->x[0], x1 = st->x[1], x2 = st->x[2], x3 = st->x[3];
    __m256d e0 = st->e[0], e1 = st->e[1], e2 = st->e[2], e3 = st->e[3];
    __m256i least = st->least;
    bool flagged = (st->flags & FPK_INEXACT) && ((st->flags & FPK_UNDERFLOW) || bottom >= c.k.tiny);
    if (!tail && flagged && top <= c.k.max32) {
        for (size_t r = 0; r < m; r += 16) {
            prefetch_two_lines(&ahead);
            round_add_sqerr8(&c, _mm256_load_si256((const __m256i *)(nz + r)), want_x2, false,
                             &least, &x0, &x1, &e0, &e1);
            round_add_sqerr8(&c, _mm256_load_si256((const __m256i *)(nz + r + 8)), want_x2, false,
                             &least, &x2, &x3, &e2, &e3);
        }
        m = 0;
    }
    for (size_t r = 0; r < m + (tail ? 16 : 0); r += 16) {
        prefetch_two_lines(&ahead);
        __m256i a0 = _mm256_load_si256((const __m256i *)(nz + r));
        __m256i a1 = _mm256_load_si256((const __m256i *)(nz + r + 8));
        __m256i over =
            _mm256_or_si256(_mm256_cmpgt_epi32(a0, c.max32), _mm256_cmpgt_epi32(a1, c.max32));
        if (__builtin_expect(r >= m || !_mm256_testz_si256(over, over), 0)) {
            st->x[0] = x0, st->x[1] = x1, st->x[2] = x2, st->x[3] = x3;
            st->e[0] = e0, st->e[1] = e1, st->e[2] = e2, st->e[3] = e3;
            sqerr_general16(p, nz + r, want_x2, st);
            x0 = st->x[0], x1 = st->x[1], x2 = st->x[2], x3 = st->x[3];
            e0 = st->e[0], e1 = st->e[1], e2 = st->e[2], e3 = st->e[3];
            continue;
        }
        round_add_sqerr8(&c, a0, want_x2, true, &least, &x0, &x1, &e0, &e1);
        round_add_sqerr8(&c, a1, want_x2, true, &least, &x2, &x3, &e2, &e3);
    }
    prefetch_put(pf, ahead);
    st->x[0] = x0, st->x[1] = x1, st->x[2] = x2, st->x[3] = x3;
    st->e[0] = e0, st->e[1] = e1, st->e[2] = e2, st->e[3] = e3;
    const __m256i ones = _mm256_set1_epi32(-1);
    if (!_mm256_testc_si256(_mm256_cmpeq_epi32(least, ones), ones))
        st->flags |= FPK_INEXACT;
    if (!_mm256_testc_si256(_mm256_cmpeq_epi32(_mm256_min_epu32(least, c.tiny), c.tiny), ones))
        st->flags |= FPK_UNDERFLOW;
    st->least = least;
}

/* sqerr_run with P's format, mode and WANT_X2 compiled in. */
TARGET_AVX2 static void sqerr_block(const fpki_conv_plan *p, bool want_x2, format_state *st,
                                    const uint32_t *nz, size_t m, bool tail, uint32_t top,
                                    uint32_t bottom, prefetch_range *pf)
{
#define RUN_MODE(f, mode)                                                                          \
    (want_x2 ? sqerr_run(f, mode, true, p, st, nz, m, tail, top, bottom, pf)                       \
             : sqerr_run(f, mode, false, p, st, nz, m, tail, top, bottom, pf))
#define RUN(f) (p->mode == FPK_RNE ? RUN_MODE(f, FPK_RNE) : RUN_MODE(f, FPK_RTZ))
    FPKI_KFORMAT_SWITCH(p->format, RUN)
#undef RUN
#undef RUN_MODE
}

/* fpki_quantize_sqerr_fn with AVX2, for formats under RNE or RTZ without
 * options, as fpki_quantize_sqerr_avx512: the nonzero magnitudes of
 * SQERR_BLOCK elements packed (compress8) behind the fewer than 16 left
 * from the last block, their largest and least noted, then each format's
 * errors summed 16 at a time over them while they are in L1. */
TARGET_AVX2 bool fpki_quantize_sqerr_avx2(const fpki_conv_plan *p, int nf, const uint32_t *x,
                                          size_t n, double *x2, double *e2, unsigned *flags)
{
    for (int j = 0; j < nf; j++)
        if (!fpki_conv_plain(&p[j]) || !p[j].quant ||
            (p[j].mode != FPK_RNE && p[j].mode != FPK_RTZ))
            return false;
    format_state st[FPKI_QUANTIZE_SQERR_MAX_FORMATS];
    for (int j = 0; j < nf; j++) {
        for (int k = 0; k < 4; k++) {
            st[j].x[k] = j == 0 && x2 ? _mm256_loadu_pd(x2 + 4 * k) : _mm256_setzero_pd();
            st[j].e[k] = _mm256_loadu_pd(e2 + FPKI_SQERR_LANES * j + 4 * k);
        }
        st[j].least = _mm256_set1_epi32(-1);
        st[j].flags = 0;
    }
    uint32_t nz[SQERR_BLOCK + 32] __attribute__((aligned(32)));
    size_t left = 0;
    for (size_t i0 = 0; i0 < n; i0 += SQERR_BLOCK) {
        size_t len = n - i0 < SQERR_BLOCK ? n - i0 : SQERR_BLOCK, m = left;
        uint32_t top = 0, bottom = UINT32_MAX;
        for (size_t k = 0; k < left; k++)
            top = nz[k] > top ? nz[k] : top, bottom = nz[k] < bottom ? nz[k] : bottom;
        m += pack_nonzero(x + i0, len, nz + m, &bottom, &top);
        size_t whole = m & ~(size_t)15;
        prefetch_range pf = next_block_range(x, n, i0);
        for (int j = 0; j < nf; j++)
            sqerr_block(&p[j], j == 0 && x2, &st[j], nz, whole, false, top, bottom, &pf);
        left = m - whole;
        memmove(nz, nz + whole, 16 * sizeof *nz);
    }
    if (left)
        memset(nz + left, 0, (16 - left) * sizeof *nz);
    for (int j = 0; j < nf; j++) {
        if (left)
            sqerr_block(&p[j], j == 0 && x2, &st[j], nz, 0, true, UINT32_MAX, 0, NULL);
        for (int k = 0; k < 4; k++) {
            if (j == 0 && x2)
                _mm256_storeu_pd(x2 + 4 * k, st[j].x[k]);
            _mm256_storeu_pd(e2 + FPKI_SQERR_LANES * j + 4 * k, st[j].e[k]);
        }
        flags[j] |= st[j].flags;
    }
    return true;
}
#endif
