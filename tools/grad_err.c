/* The sums behind fpgrad's SQNR, over float32 elements X and their results
 * Y in a format: every nonzero finite X[i] whose Y[i] is finite adds
 * X[i]^2 to one sum and (Y[i] - X[i])^2 to the other, in double.  The
 * squares are exact (24-bit significands), the additions are not; but
 * their order is fixed, element i of a call going to lane i % GRAD_LANES
 * and each lane adding in increasing i, so that the sums are the same
 * whichever code computes them: plain C, or AVX-512 where the library's
 * array kernels use it (fpk_array_isa). */
#include <stdint.h>
#include <string.h>

#include "grad.h"

/* A square that rounds (an error spanning more than 53 bits, from a tiny
 * element rounded up to the least subnormal) must round before it is
 * added, as it does without fused multiply-adds. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define MAG 0x7fffffffu
#define INF 0x7f800000u

/* What a call sums: the squares, the errors, or both; with NEAR the error
 * is subtracted in float32, exact when Y is X rounded to nearest or
 * toward zero (Y = 0, or X/2 <= Y <= 2X): the same value as in double. */
typedef struct want {
    bool x2, e2, y_finite, near;
} want;

static inline __attribute__((always_inline)) void lanes_c(const float *x, const float *y,
                                                          size_t n, want w, double *x2,
                                                          double *e2)
{
    double sx[GRAD_LANES] = {0}, se[GRAD_LANES] = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t xb, yb = 0;
        memcpy(&xb, &x[i], sizeof xb);
        if (y)
            memcpy(&yb, &y[i], sizeof yb);
        if ((xb & MAG) - 1 >= INF - 1 || (w.y_finite && (yb & MAG) >= INF))
            continue; /* a zero, infinity or NaN, or a result that is not finite */
        double xd = x[i];
        if (w.x2)
            sx[i % GRAD_LANES] += xd * xd;
        if (w.e2) {
            double ed = w.near ? (double)(y[i] - x[i]) : (double)y[i] - xd;
            se[i % GRAD_LANES] += ed * ed;
        }
    }
    if (w.x2)
        memcpy(x2, sx, sizeof sx);
    if (w.e2)
        memcpy(e2, se, sizeof se);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX512 1
#define TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))

/* Sixteen elements from X and Y into the lane pairs SX and SE. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
add16_avx512(const float *x, const float *y, want w, __m512d *sx, __m512d *se)
{
    const __m512i mag = _mm512_set1_epi32((int)MAG), one = _mm512_set1_epi32(1);
    const __m512i inf = _mm512_set1_epi32((int)INF), below_inf = _mm512_set1_epi32((int)INF - 1);
    __m512 xv = _mm512_loadu_ps(x), yv = w.e2 ? _mm512_loadu_ps(y) : _mm512_setzero_ps();
    __m512i ax = _mm512_and_si512(_mm512_castps_si512(xv), mag);
    __mmask16 k = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ax, one), below_inf);
    if (w.y_finite)
        k &= _mm512_cmplt_epu32_mask(_mm512_and_si512(_mm512_castps_si512(yv), mag), inf);
    __m512 xk = _mm512_maskz_mov_ps(k, xv);
    __m512d xl = _mm512_cvtps_pd(_mm512_castps512_ps256(xk));
    __m512d xh = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xk), 1)));
    if (w.x2) {
        sx[0] = _mm512_add_pd(sx[0], _mm512_mul_pd(xl, xl));
        sx[1] = _mm512_add_pd(sx[1], _mm512_mul_pd(xh, xh));
    }
    if (!w.e2)
        return;
    __m512d el, eh;
    if (w.near) {
        __m512 e = _mm512_maskz_sub_ps(k, yv, xv);
        el = _mm512_cvtps_pd(_mm512_castps512_ps256(e));
        eh = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1)));
    } else {
        __m512 yk = _mm512_maskz_mov_ps(k, yv);
        el = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(yk)), xl);
        eh = _mm512_sub_pd(
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(yk), 1))),
            xh);
    }
    se[0] = _mm512_add_pd(se[0], _mm512_mul_pd(el, el));
    se[1] = _mm512_add_pd(se[1], _mm512_mul_pd(eh, eh));
}

TARGET_AVX512 static inline __attribute__((always_inline)) void
lanes_avx512(const float *x, const float *y, size_t n, want w, double *x2, double *e2)
{
    __m512d sx[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()}, se[2] = {sx[0], sx[1]};
    size_t i = 0;
    for (; n - i >= GRAD_LANES; i += GRAD_LANES)
        add16_avx512(x + i, y ? y + i : NULL, w, sx, se);
    if (i < n) { /* the last, padded with zeros, which count nothing */
        float xt[GRAD_LANES] = {0}, yt[GRAD_LANES] = {0};
        memcpy(xt, x + i, (n - i) * sizeof *xt);
        if (y)
            memcpy(yt, y + i, (n - i) * sizeof *yt);
        add16_avx512(xt, yt, w, sx, se);
    }
    if (w.x2) {
        _mm512_storeu_pd(x2, sx[0]);
        _mm512_storeu_pd(x2 + 8, sx[1]);
    }
    if (w.e2) {
        _mm512_storeu_pd(e2, se[0]);
        _mm512_storeu_pd(e2 + 8, se[1]);
    }
}

TARGET_AVX512 static void x2_avx512(const float *x, size_t n, double *x2)
{
    lanes_avx512(x, NULL, n, (want){true, false, false, false}, x2, NULL);
}
TARGET_AVX512 static void err_avx512(const float *x, const float *y, size_t n, double *x2,
                                     double *e2)
{
    lanes_avx512(x, y, n, (want){true, true, true, false}, x2, e2);
}
TARGET_AVX512 static void e2_avx512(const float *x, const float *y, size_t n, bool near,
                                    double *e2)
{
    if (near)
        lanes_avx512(x, y, n, (want){false, true, false, true}, NULL, e2);
    else
        lanes_avx512(x, y, n, (want){false, true, false, false}, NULL, e2);
}

/* Where the library's array kernels run AVX-512 (so FPK_ISA caps this
 * code too). */
static bool use_avx512(void)
{
    static int have = -1; /* a race writes the same value */
    if (have < 0)
        have = strcmp(fpk_array_isa(), "avx512") == 0;
    return have;
}
#else
#define HAVE_AVX512 0
#endif

void grad_x2_lanes(const float *x, size_t n, double x2[GRAD_LANES])
{
#if HAVE_AVX512
    if (use_avx512()) {
        x2_avx512(x, n, x2);
        return;
    }
#endif
    lanes_c(x, NULL, n, (want){true, false, false, false}, x2, NULL);
}

void grad_err_lanes(const float *x, const float *y, size_t n, double x2[GRAD_LANES],
                    double e2[GRAD_LANES])
{
#if HAVE_AVX512
    if (use_avx512()) {
        err_avx512(x, y, n, x2, e2);
        return;
    }
#endif
    lanes_c(x, y, n, (want){true, true, true, false}, x2, e2);
}

void grad_e2_lanes(const float *x, const float *y, size_t n, bool near, double e2[GRAD_LANES])
{
#if HAVE_AVX512
    if (use_avx512()) {
        e2_avx512(x, y, n, near, e2);
        return;
    }
#endif
    if (near)
        lanes_c(x, y, n, (want){false, true, false, true}, NULL, e2);
    else
        lanes_c(x, y, n, (want){false, true, false, false}, NULL, e2);
}
