/* fpgrad's block-scaled formats (OCP MX v1.0) and the quantisation errors
 * of every format.
 *
 * An MX format is named beside the per-tensor ones and travels through the
 * report as a descriptor: a copy of its element format's under its own
 * name.  Its counts come from fpk_mx_quantize, blocks of 32 along the
 * innermost dimension in storage order (a row's last block may be shorter)
 * with the specification's scale (FPK_MX_FLOOR); the run's --scale does
 * not apply, the block scales choosing their own.  An element in a block
 * holding a NaN or an infinity becomes NaN and counts as overflow. */
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "grad.h"

typedef struct mx_name {
    const char *name, *alias;
    const fpk_format *elem;
} mx_name;

static const mx_name mx_names[] = {
    {"mxfp8", "mxfp8_e4m3", &fpk_e4m3}, {"mxfp8_e5m2", NULL, &fpk_e5m2},
    {"mxfp6", "mxfp6_e3m2", &fpk_e3m2}, {"mxfp6_e2m3", NULL, &fpk_e2m3},
    {"mxfp4", "mxfp4_e2m1", &fpk_e2m1},
};
#define NMX (sizeof mx_names / sizeof mx_names[0])

#define PIECE_BLOCKS 1024 /* blocks quantised at once */

/* The descriptors, filled before any thread starts (grad_parse_formats). */
static fpk_format mx_formats[NMX];

static int mx_index(const fpk_format *f)
{
    for (size_t i = 0; i < NMX; i++)
        if (f == &mx_formats[i])
            return (int)i;
    return -1;
}

bool grad_is_mx(const fpk_format *f)
{
    return mx_index(f) >= 0;
}

static const fpk_format *mx_element(const fpk_format *f)
{
    return mx_names[mx_index(f)].elem;
}

const fpk_format *grad_mx_lookup(const char *name)
{
    for (size_t i = 0; i < NMX; i++) {
        if (strcasecmp(name, mx_names[i].name) != 0 &&
            !(mx_names[i].alias && strcasecmp(name, mx_names[i].alias) == 0))
            continue;
        mx_formats[i] = *mx_names[i].elem;
        mx_formats[i].name = mx_names[i].name;
        mx_formats[i].aliases = mx_names[i].alias ? mx_names[i].alias : "";
        return &mx_formats[i];
    }
    return NULL;
}

int grad_parse_formats(const char *opt, const char *list, const fpk_format **formats, int max)
{
    return cli_parse_formats(opt, list, formats, max, grad_mx_lookup);
}

int grad_mx_scale_log2(const fpk_format *f, double amax)
{
    fpk_ctx c = fpk_ctx_default();
    float a;
    uint32_t bits = (uint32_t)fpk_from_double(&fpk_fp32, amax, &c);
    memcpy(&a, &bits, sizeof a);
    return (int)fpk_mx_scale(mx_element(f), FPK_MX_FLOOR, a) - fpk_e8m0.bias;
}

void grad_quant_init(grad_quant *q, const grad_run *run, const fpk_tensor *t)
{
    memset(q, 0, sizeof *q);
    q->run = run;
    /* Elements of the innermost dimension in storage order lie together. */
    uint64_t inner = t->ndim == 0 ? 1 : t->shape[t->fortran_order ? 0 : t->ndim - 1];
    q->rowlen = inner ? inner : 1;
    q->left = t->count;
    q->exact32 = t->dtype != FPK_DTYPE_F64;
    for (int j = 0; j < run->nformats; j++) { /* (no elements: only whether it may) */
        const float none = 0;
        fpk_ctx c = fpk_ctx_default();
        c.round = run->round;
        q->quant32[j] = fpk_array_quantize_sqerr(run->formats[j], &none, 0, &c, NULL, NULL);
    }
}

size_t grad_quant_next(const grad_quant *q, size_t max)
{
    uint64_t row_left = q->rowlen - q->pos % q->rowlen, n;
    if (row_left > max) /* inside a long row: a whole number of blocks */
        n = max - max % FPK_MX_BLOCK;
    else /* to the end of a row, and whole rows after it */
        n = row_left + (max - row_left) / q->rowlen * q->rowlen;
    return (size_t)(n < q->left ? n : q->left);
}

/* The bucket in use lowest in S, and one past the highest. */
static unsigned sum_lo(const grad_sum *s)
{
    return GRAD_SUM_BUCKETS - s->lo_from_top;
}

/* S's buckets in use now include P, unless M (the term added there) is
 * zero: zeros, which land in bucket 0, would widen the range to it. */
static inline void sum_touch(grad_sum *s, unsigned p, uint64_t m)
{
    uint32_t nonzero = -(uint32_t)(m != 0);
    uint32_t top = (GRAD_SUM_BUCKETS - p) & nonzero, hi = (p + 1) & nonzero;
    s->lo_from_top = top > s->lo_from_top ? top : s->lo_from_top;
    s->hi = hi > s->hi ? hi : s->hi;
}

/* S += V, V a nonnegative finite double; without branches, since the
 * terms of gradients come in no predictable order. */
static inline void sum_add(grad_sum *s, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned e = (unsigned)(bits >> 52), normal = e != 0;
    /* a normal's hidden bit, and the place of 2^(e - 1075) */
    uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | (uint64_t)normal << 52;
    s->bucket[e - normal] += m;
    sum_touch(s, e - normal, m);
}

/* S -= V, V added to S before or after: the buckets wrap modulo 2^128
 * and come right once it is. */
static void sum_sub(grad_sum *s, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned e = (unsigned)(bits >> 52), normal = e != 0;
    uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | (uint64_t)normal << 52;
    s->bucket[e - normal] -= m;
    sum_touch(s, e - normal, m);
}

static void sum_merge(grad_sum *into, const grad_sum *from)
{
    for (unsigned p = sum_lo(from); p < from->hi; p++)
        into->bucket[p] += from->bucket[p];
    if (from->hi > sum_lo(from)) {
        sum_touch(into, sum_lo(from), 1);
        sum_touch(into, from->hi - 1, 1);
    }
}

void grad_sums_merge(grad_sums *into, const grad_sums *from)
{
    sum_merge(&into->x2, &from->x2);
    sum_merge(&into->e2, &from->e2);
}

void grad_sums_widen(grad_sums *s)
{
    s->x2.lo_from_top = s->e2.lo_from_top = GRAD_SUM_BUCKETS;
    s->x2.hi = s->e2.hi = GRAD_SUM_BUCKETS;
}

static void sum_clear(grad_sum *s)
{
    unsigned lo = sum_lo(s);
    if (s->hi > lo)
        memset(&s->bucket[lo], 0, (s->hi - lo) * sizeof s->bucket[0]);
    s->lo_from_top = s->hi = 0;
}

void grad_sums_clear(grad_sums *s)
{
    sum_clear(&s->x2);
    sum_clear(&s->e2);
}

void grad_sums_put(cli_buf *b, const grad_sums *s, int n)
{
    for (int j = 0; j < n; j++) {
        cli_buf_put(b, s[j].x2.bucket, sizeof s[j].x2.bucket);
        cli_buf_put(b, s[j].e2.bucket, sizeof s[j].e2.bucket);
    }
}

void grad_sums_get(cli_buf *b, grad_sums *s, int n)
{
    for (int j = 0; j < n; j++) {
        cli_buf_get(b, s[j].x2.bucket, sizeof s[j].x2.bucket);
        cli_buf_get(b, s[j].e2.bucket, sizeof s[j].e2.bucket);
        grad_sums_widen(&s[j]);
    }
}

/* The sum S rounded to the nearest double. */
static double sum_value(const grad_sum *s)
{
    mpfr_t v, t;
    /* Enough bits for every bucket's place and 128 bits above the last:
     * the additions are exact. */
    mpfr_inits2(GRAD_SUM_BUCKETS + 128 + 64, v, t, (mpfr_ptr)0);
    mpfr_set_zero(v, 1);
    for (unsigned p = sum_lo(s); p < s->hi; p++) {
        unsigned __int128 b = s->bucket[p];
        for (int half = 0; b && half < 2; half++, b >>= 64) {
            mpfr_set_ui_2exp(t, (unsigned long)(uint64_t)b, (long)p - 1074 + 64 * half, MPFR_RNDN);
            mpfr_add(v, v, t, MPFR_RNDN);
        }
    }
    double d = mpfr_get_d(v, MPFR_RNDN);
    mpfr_clears(v, t, (mpfr_ptr)0);
    return d;
}

grad_err grad_sums_value(const grad_sums *s)
{
    return (grad_err){sum_value(&s->x2), sum_value(&s->e2)};
}

/* The context of Q's rounding of its element I on: the run's mode, the
 * SR counter at that element. */
static fpk_ctx quant_ctx(const grad_quant *q, uint64_t i)
{
    fpk_ctx c = fpk_ctx_default();
    c.round = q->run->round;
    c.sr_counter = q->sr_base + q->pos + i;
    return c;
}

/* One MX format on X32[0..N-1], a piece of the stream starting on a block
 * boundary: the results into Y, the blocks' counts into K.  Returns the
 * nonzero finite elements of blocks with the NaN scale, whose results are
 * NaN: the only results that are not finite (FPK_MX_FLOOR's are all below
 * 2^128). */
static uint64_t mx_quantize(const grad_quant *q, const fpk_format *elem, const float *x32,
                            float *y, size_t n, fpk_format_counts *k)
{
    uint64_t nan = 0;
    fpk_mx_block blocks[PIECE_BLOCKS];
    for (size_t done = 0; done < n;) {
        uint64_t row_left = q->rowlen - (q->pos + done) % q->rowlen;
        size_t len = n - done < row_left ? n - done : (size_t)row_left;
        if (len > (size_t)PIECE_BLOCKS * FPK_MX_BLOCK)
            len = (size_t)PIECE_BLOCKS * FPK_MX_BLOCK;
        fpk_ctx c = quant_ctx(q, done);
        fpk_mx_quantize(elem, FPK_MX_FLOOR, FPK_MX_BLOCK, x32 + done, len, NULL, NULL,
                        y + done, blocks, &c);
        for (size_t b = 0; b < (len + FPK_MX_BLOCK - 1) / FPK_MX_BLOCK; b++) {
            k->underflow += blocks[b].flushed;
            k->subnormal += blocks[b].subnormal;
            k->overflow += blocks[b].saturated;
            if (blocks[b].scale != fpk_e8m0.nan)
                continue;
            const float *v = x32 + done + b * FPK_MX_BLOCK;
            for (size_t i = 0; i < FPK_MX_BLOCK && b * FPK_MX_BLOCK + i < len; i++)
                nan += fabsf(v[i]) <= FLT_MAX && v[i] != 0;
        }
        done += len;
    }
    return nan;
}

/* The result of X * S in the per-tensor format F, divided by S again, in
 * double: the path for any scale, element by element. */
static double scaled_result(const grad_quant *q, const fpk_format *f, double x, size_t i)
{
    fpk_ctx c = quant_ctx(q, i);
    return fpk_to_double(f, fpk_from_double_scaled(f, x, q->run->scale, &c)) / q->run->scale;
}

/* Adds lanes X2 and E2 (either NULL) to E's exact sums. */
static void add_lanes(grad_sums *e, const double *x2, const double *e2)
{
    for (int l = 0; l < FPK_LANES; l++) {
        if (x2)
            sum_add(&e->x2, x2[l]);
        if (e2)
            sum_add(&e->e2, e2[l]);
    }
}

/* X2 := the lanes of the squares of X[0..N-1]'s nonzero finite elements,
 * unless *HAVE_X2 says they are there already. */
static void share_x2(const float *x, size_t n, double *x2, bool *have_x2)
{
    if (*have_x2)
        return;
    memset(x2, 0, FPK_LANES * sizeof *x2);
    fpk_array_sqerr(x, NULL, n, x2, NULL);
    *have_x2 = true;
}

/* The float32 path: the array kernels' rounding and squared errors in
 * lanes, added to the exact sums lane by lane; at scale 1 the per-tensor
 * formats float32 holds are rounded and summed in one pass for all
 * (fpk_array_quantize_sqerr_formats), the MX formats quantised and
 * summed one by one (fpk_array_sqerr).  Formats whose results are all
 * finite (nothing overflowed to an infinity or a NaN) share the squares
 * of the elements, summed once; the others sum them again, over the
 * elements whose results are finite. */
static void add_f32(grad_quant *q, fpk_stats *st, double *x, const float *x32, size_t n,
                    float *y, fpk_format_counts *k, grad_sums *e)
{
    const grad_run *run = q->run;
    bool have_x = false, have_x2 = false;
    double x2[FPK_LANES] = {0};
    const fpk_format *pt[FPK_STATS_MAX_FORMATS];
    fpk_ctx pc[FPK_STATS_MAX_FORMATS];
    double pe2[FPK_STATS_MAX_FORMATS][FPK_LANES] = {{0}};
    int at[FPK_STATS_MAX_FORMATS], npt = 0;
    for (int j = 0; j < run->nformats; j++) {
        const fpk_format *f = run->formats[j];
        fpk_ctx c = quant_ctx(q, 0);
        at[j] = run->scale == 1 && !grad_is_mx(f) && q->quant32[j] ? npt : -1;
        if (at[j] >= 0) {
            pt[npt] = f;
            /* Of the flags, only an overflow matters here: the others
             * raised already, the kernels need not look for them. */
            c.flags |= FPK_INEXACT | FPK_UNDERFLOW;
            pc[npt++] = c;
        }
    }
    if (npt) {
        if (st)
            fpk_stats_add_sqerr(st, x32, n, npt, pt, pc, x2, &pe2[0][0]);
        else
            fpk_array_quantize_sqerr_formats(npt, pt, x32, n, pc, x2, &pe2[0][0]);
        have_x2 = !(pc[0].flags & FPK_OVERFLOW); /* every result finite: X's squares are all */
    } else if (st) {
        fpk_stats_add_array(st, FPK_DTYPE_F32, x32, n, 1);
    }
    for (int j = 0; j < run->nformats; j++) {
        const fpk_format *f = run->formats[j];
        double fx2[FPK_LANES] = {0}, e2[FPK_LANES] = {0};
        if (grad_is_mx(f)) {
            uint64_t nan = mx_quantize(q, mx_element(f), x32, y, n, &k[j]);
            k[j].overflow += nan;
            if (nan == 0)
                share_x2(x32, n, x2, &have_x2);
            fpk_array_sqerr(x32, y, n, nan ? fx2 : NULL, e2);
            add_lanes(&e[j], nan ? fx2 : x2, e2);
        } else if (at[j] >= 0) {
            if (!(pc[at[j]].flags & FPK_OVERFLOW)) {
                share_x2(x32, n, x2, &have_x2);
                add_lanes(&e[j], x2, pe2[at[j]]);
                continue;
            }
            /* again, for the squares of those whose results are finite */
            fpk_ctx c = quant_ctx(q, 0);
            fpk_array_quantize_sqerr(f, x32, n, &c, fx2, e2);
            add_lanes(&e[j], fx2, e2);
        } else {
            /* any scale: element by element, summed exactly */
            if (!have_x)
                for (size_t i = 0; i < n; i++)
                    x[i] = x32[i];
            have_x = true;
            for (size_t i = 0; i < n; i++) {
                if (x[i] == 0 || !(fabs(x[i]) <= DBL_MAX))
                    continue;
                double v = scaled_result(q, f, x[i], i);
                if (fabs(v) <= DBL_MAX) {
                    sum_add(&e[j].x2, x[i] * x[i]);
                    sum_add(&e[j].e2, (v - x[i]) * (v - x[i]));
                }
            }
        }
    }
}

/* Adds the error of X's result V to E, X nonzero and finite, if V is
 * finite; else takes X^2 back out of E->x2, where add_f64 puts the X^2 of
 * every nonzero finite element, once for all formats. */
static inline void add_error(grad_sums *e, double x, double v)
{
    if (fabs(v) <= DBL_MAX)
        sum_add(&e->e2, (v - x) * (v - x));
    else
        sum_sub(&e->x2, x * x);
}

/* IDX[0..] := the positions of X[0..N-1]'s nonzero finite elements, the
 * only ones the errors count (found without branches: zeros come in no
 * predictable order); returns how many. */
static size_t counted(const double *x, size_t n, uint32_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        idx[m] = (uint32_t)i;
        m += (size_t)((x[i] != 0) & (fabs(x[i]) <= DBL_MAX));
    }
    return m;
}

/* The float64 path: each element rounded to float32 as the statistics
 * round it for the MX formats; the per-tensor formats round the double
 * itself; every error summed exactly. */
static void add_f64(grad_quant *q, const double *x, float *x32, size_t n, float *y,
                    fpk_format_counts *k, grad_sums *e)
{
    fpk_ctx c = fpk_ctx_default();
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)fpk_from_double(&fpk_fp32, x[i], &c);
        memcpy(&x32[i], &bits, sizeof bits);
    }
    uint32_t *idx = cli_xcalloc(n ? n : 1, sizeof *idx);
    size_t m = counted(x, n, idx);
    grad_sum *x2 = cli_xcalloc(1, sizeof *x2);
    for (size_t j = 0; j < m; j++)
        sum_add(x2, x[idx[j]] * x[idx[j]]);
    for (int j = 0; j < q->run->nformats; j++) {
        const fpk_format *f = q->run->formats[j];
        if (grad_is_mx(f)) {
            mx_quantize(q, mx_element(f), x32, y, n, &k[j]);
            for (size_t i = 0; i < m; i++) {
                bool nan_block = isnan(y[idx[i]]); /* one with a NaN or an infinity */
                k[j].overflow += nan_block;
                /* below float32's range: the blocks took it for a zero */
                k[j].underflow += !nan_block && x32[idx[i]] == 0;
                add_error(&e[j], x[idx[i]], y[idx[i]]);
            }
        } else {
            for (size_t i = 0; i < m; i++)
                add_error(&e[j], x[idx[i]], scaled_result(q, f, x[idx[i]], idx[i]));
        }
        sum_merge(&e[j].x2, x2);
    }
    free(x2);
    free(idx);
}

void grad_quant_add(grad_quant *q, double *x, float *x32, size_t n, float *y,
                    fpk_format_counts *k, grad_sums *e)
{
    if (q->exact32)
        add_f32(q, NULL, x, x32, n, y, k, e);
    else
        add_f64(q, x, x32, n, y, k, e);
    q->pos += n;
    q->left -= n;
}

void grad_quant_add_f32(grad_quant *q, fpk_stats *st, double *x, const float *x32, size_t n,
                        float *y, fpk_format_counts *k, grad_sums *e)
{
    add_f32(q, st, x, x32, n, y, k, e);
    q->pos += n;
    q->left -= n;
}

double grad_sqnr_db(const grad_err *e, bool *none)
{
    *none = e->x2 == 0 || e->e2 == 0;
    return *none ? 0 : 10 * log10(e->x2 / e->e2);
}
