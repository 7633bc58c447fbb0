/* Adding a tensor to fpkit.stats' statistics: the library's statistics,
 * and the errors behind the SQNR summed exactly as fpgrad(1) sums them
 * (docs/DESIGN.md "Squared errors and SQNR"), so that fpkit.stats gives
 * fpgrad's figures for the same tensor bit for bit. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "stats.h"

#define PIECE ((size_t)1 << 16) /* elements whose errors share lanes */

/* The elements of the piece that starts at POS: up to the end of a row
 * and whole rows after it, or whole MX blocks within a row longer than a
 * piece (fpgrad cuts a tensor so, for its block-scaled formats too). */
static size_t piece_len(uint64_t pos, uint64_t left, uint64_t rowlen)
{
    uint64_t row_left = rowlen - pos % rowlen, n;
    if (row_left > PIECE)
        n = PIECE - PIECE % FPK_MX_BLOCK;
    else
        n = row_left + (PIECE - row_left) / rowlen * rowlen;
    return (size_t)(n < left ? n : left);
}

/* Format J's result for X, the element of counter COUNTER, divided by the
 * scale again: the path for any scale and format, element by element. */
static double scaled_result(const fpy_stats *s, int j, double x, uint64_t counter)
{
    fpk_ctx c = fpk_ctx_default();
    c.round = s->st.round;
    c.sr_counter = counter;
    const fpk_format *f = s->st.formats[j];
    return fpk_to_double(f, fpk_from_double_scaled(f, x, s->st.scale, &c)) / s->st.scale;
}

/* Format J's errors of X[0..N-1], element by element; element i has
 * counter BASE + i. */
static void add_exact(fpy_stats *s, int j, const double *x, size_t n, uint64_t base)
{
    for (size_t i = 0; i < n; i++) {
        if (x[i] == 0 || !(fabs(x[i]) <= DBL_MAX))
            continue;
        double v = scaled_result(s, j, x[i], base + i);
        if (fabs(v) <= DBL_MAX) {
            exact_add(&s->x2[j], x[i] * x[i]);
            exact_add(&s->e2[j], (v - x[i]) * (v - x[i]));
        }
    }
}

static void add_lanes(exact_sum *sum, const double *lanes)
{
    for (int l = 0; l < FPK_LANES; l++)
        exact_add(sum, lanes[l]);
}

/* One piece of float32 elements X[0..N-1] (counters from BASE): the
 * statistics, and each format's errors; X64 is scratch for N doubles;
 * QUANT32[j], whether fpk_array_quantize takes format j.
 * The formats float32 holds, at scale 1, are rounded and summed in lanes
 * in one pass for all; one whose results all stayed finite shares the
 * squares of every nonzero finite element; one that overflowed sums them
 * again over the elements whose results are finite. */
static void add_f32_piece(fpy_stats *s, const float *x, size_t n, uint64_t base, double *x64,
                          const bool *quant32)
{
    const fpk_stats *st = &s->st;
    const fpk_format *pt[FPK_STATS_MAX_FORMATS];
    fpk_ctx pc[FPK_STATS_MAX_FORMATS];
    double pe2[FPK_STATS_MAX_FORMATS][FPK_LANES] = {{0}}, x2[FPK_LANES] = {0};
    int at[FPK_STATS_MAX_FORMATS], npt = 0;
    for (int j = 0; j < st->nformats; j++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = st->round;
        c.sr_counter = base;
        at[j] = -1;
        if (st->scale == 1 && quant32[j]) {
            at[j] = npt;
            pt[npt] = st->formats[j];
            /* only an overflow matters here: the kernels need not look
             * for the other flags */
            c.flags |= FPK_INEXACT | FPK_UNDERFLOW;
            pc[npt++] = c;
        }
    }
    bool have_x2 = false;
    if (npt) {
        fpk_stats_add_sqerr(&s->st, x, n, npt, pt, pc, x2, &pe2[0][0]);
        have_x2 = !(pc[0].flags & FPK_OVERFLOW); /* all finite: every square is there */
    } else {
        fpk_stats_add_array(&s->st, FPK_DTYPE_F32, x, n, 1);
    }
    bool have_x64 = false;
    for (int j = 0; j < st->nformats; j++) {
        if (at[j] < 0) {
            if (!have_x64)
                for (size_t i = 0; i < n; i++)
                    x64[i] = x[i];
            have_x64 = true;
            add_exact(s, j, x64, n, base);
        } else if (!(pc[at[j]].flags & FPK_OVERFLOW)) {
            if (!have_x2)
                fpk_array_sqerr(x, NULL, n, x2, NULL);
            have_x2 = true;
            add_lanes(&s->x2[j], x2);
            add_lanes(&s->e2[j], pe2[at[j]]);
        } else {
            double fx2[FPK_LANES] = {0}, e2[FPK_LANES] = {0};
            fpk_ctx c = fpk_ctx_default();
            c.round = st->round;
            c.sr_counter = base;
            fpk_array_quantize_sqerr(st->formats[j], x, n, &c, fx2, e2);
            add_lanes(&s->x2[j], fx2);
            add_lanes(&s->e2[j], e2);
        }
    }
}

bool fpy_stats_add(fpy_stats *s, fpk_dtype t, const void *x, size_t n, uint64_t rowlen,
                   int threads)
{
    if (!s->sqnr) {
        fpk_stats_add_array(&s->st, t, x, n, threads);
        return true;
    }
    uint64_t base = s->st.sr_index;
    if (t == FPK_DTYPE_F64) {
        fpk_stats_add_array(&s->st, t, x, n, threads);
        for (int j = 0; j < s->st.nformats; j++)
            add_exact(s, j, x, n, base);
        return true;
    }
    size_t piece = n < PIECE ? n : PIECE;
    double *x64 = PyMem_RawMalloc((piece + 1) * sizeof *x64);
    float *x32 = t == FPK_DTYPE_F32 ? NULL : PyMem_RawMalloc((piece + 1) * sizeof *x32);
    if (!x64 || (t != FPK_DTYPE_F32 && !x32)) {
        PyMem_RawFree(x64);
        PyMem_RawFree(x32);
        return false;
    }
    size_t size = fpk_dtype_size(t);
    bool quant32[FPK_STATS_MAX_FORMATS];
    for (int j = 0; j < s->st.nformats; j++) { /* (no elements: only whether it may) */
        const float none = 0;
        fpk_ctx c = fpk_ctx_default();
        quant32[j] = fpk_array_quantize_sqerr(s->st.formats[j], &none, 0, &c, NULL, NULL);
    }
    for (uint64_t pos = 0; pos < n;) {
        size_t len = piece_len(pos, n - pos, rowlen ? rowlen : 1);
        const void *p = (const char *)x + pos * size;
        if (x32) { /* widened to float32 exactly, as fpgrad reads them */
            fpk_ctx exact = fpk_ctx_default();
            fpk_array_convert(&fpk_fp32, x32, t, p, len, &exact, 1);
            p = x32;
        }
        s->st.sr_index = base + pos;
        add_f32_piece(s, p, len, base + pos, x64, quant32);
        pos += len;
    }
    s->st.sr_index = base + n;
    PyMem_RawFree(x64);
    PyMem_RawFree(x32);
    return true;
}
