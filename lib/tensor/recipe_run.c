/* Quantisation by recipe (fpkit-recipe.h): the RHT first where the recipe
 * has it, the tensor's extremes and plan, then per block its scale and
 * every element rounded into the element format, on the kernels
 * (recipe_fast.c) where they take the recipe's rounding, or on the
 * general path here: every element rounded by the core, with its
 * statistics, the reference the kernels are compared with. */
#include <stdlib.h>
#include <string.h>

#include "recipe-impl.h"

/* The best path for R on this CPU. */
static fpki_recipe_path best_path(void)
{
    return (fpki_recipe_path){.general = false, .isa = fpki_isa_best()};
}

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float float_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

void fpki_recipe_extremes(const float *x, size_t n, fpk_recipe_range *e, fpki_recipe_path path)
{
    uint32_t hi = bits_of(e->amax), lo = e->amin != 0 ? bits_of(e->amin) : FPKI_F32_INFINITY;
    uint8_t nonfinite = e->nonfinite;
    if (n && !path.general) {
        fpki_blockq_extremes_fns[path.isa]((const uint32_t *)(const void *)x, n, n, &hi, &lo,
                                           &nonfinite);
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t a = bits_of(x[i]) & FPKI_F32_MAGNITUDE;
            if (a >= FPKI_F32_INFINITY)
                nonfinite = 1;
            else if (a > hi)
                hi = a;
            if (a && a < lo)
                lo = a;
        }
    }
    e->amax = float_of(hi);
    e->amin = lo < FPKI_F32_INFINITY ? float_of(lo) : 0;
    e->nonfinite = nonfinite;
}

/* Element V (float32 bits) of plan P rounded into R's element format
 * with SR counter I; *FLAGS := its flags. */
static fpk_bits round_element(const fpk_recipe *r, const fpki_block_plan *p, uint32_t v,
                              uint64_t i, unsigned *flags)
{
    const fpk_format *e = r->elem;
    fpk_ctx c = fpk_ctx_default();
    c.round = r->round;
    c.saturate = true;
    c.sr_seed = r->seed;
    c.sr_bits = r->sr_bits;
    c.sr_counter = i;
    fpk_bits z;
    if (p->nan) {
        z = e->nan;
    } else if (p->how == FPKI_SCALE_POW2) {
        fpki_unpacked u = fpki_unpack(&fpk_fp32, v, NULL);
        z = u.cls == FPK_CLASS_ZERO
                ? fpki_zero(e, u.sign)
                : fpki_round_pack(e, u.sign, (int64_t)u.exp - p->k, 0, u.sig, &c);
    } else {
        uint32_t t = p->how == FPKI_SCALE_MUL ? fpki_f32_mul(v, p->m) : fpki_f32_div(v, p->m);
        z = fpk_convert(e, &fpk_fp32, t, &c);
    }
    *flags = c.flags;
    return z;
}

/* The block rows of a band: block height BH, and whether the band's
 * blocks are the one block of the whole view, seen in part (its extremes
 * then from the plan). */
typedef struct band {
    size_t bh, bw, brows, bcols;
    bool part_of_one;
} band;

static band band_of(const fpk_recipe_plan *t, size_t nrows)
{
    const fpk_recipe *r = &t->recipe;
    band b;
    fpk_recipe_blocks(r, t->rows, t->cols, &b.brows, &b.bcols);
    b.bh = r->block_rows ? r->block_rows : t->rows;
    b.bw = r->block_cols ? r->block_cols : t->cols;
    b.part_of_one = b.brows * b.bcols == 1 && nrows != t->rows;
    return b;
}

/* The general path over rows ROW0 .. ROW0 + NROWS - 1 (at IN). */
static void general_rows(const fpk_recipe_plan *t, const float *in, size_t row0, size_t nrows,
                         fpk_quantized *q, fpk_recipe_stats *s)
{
    const fpk_recipe *r = &t->recipe;
    const size_t cols = t->cols, end = row0 + nrows;
    const band b = band_of(t, nrows);
    for (size_t bi = row0 / b.bh; bi * b.bh < end; bi++) {
        size_t r0 = bi * b.bh < row0 ? row0 : bi * b.bh;
        size_t r1 = bi * b.bh + b.bh < end ? bi * b.bh + b.bh : end;
        bool first = bi * b.bh >= row0;
        for (size_t bj = 0; bj < b.bcols; bj++) {
            size_t c0 = bj * b.bw, c1 = c0 + b.bw < cols ? c0 + b.bw : cols;
            fpk_recipe_range e = {0};
            if (b.part_of_one)
                e = t->tensor;
            else
                for (size_t i = r0; i < r1; i++)
                    fpki_recipe_extremes(in + (i - row0) * cols + c0, c1 - c0, &e,
                                         (fpki_recipe_path){.general = true});
            uint32_t bmax = bits_of(e.amax), bmin = bits_of(e.amin);
            const fpki_block_plan p = fpki_block_plan_of(t, bmax, e.nonfinite);
            if (first && q->scales)
                q->scales[bi * b.bcols + bj] = p.scale;
            for (size_t i = r0; i < r1; i++) {
                fpki_recipe_lanes lanes = {{0}, {0}};
                for (size_t j = c0; j < c1; j++) {
                    size_t at = i * cols + j;
                    uint32_t v = bits_of(in[(i - row0) * cols + j]), y;
                    unsigned fl;
                    uint8_t code = (uint8_t)round_element(r, &p, v, at, &fl);
                    y = p.nan ? FPKI_F32_NAN : fpki_recipe_element_value(r->elem, code, p.decode);
                    q->flags |= fl;
                    if (q->codes)
                        q->codes[at] = code;
                    if (q->y)
                        q->y[at] = float_of(y);
                    if (s)
                        fpki_recipe_stats_element(s, &p, v, code, y, fl, &lanes,
                                                  (int)((j - c0) % 16));
                }
                if (s)
                    fpki_recipe_stats_run(s, &lanes);
            }
            if (first && s)
                fpki_recipe_stats_block(s, &p, bmax, bmin);
        }
    }
}

/* Whether rows ROW0 .. ROW0 + NROWS - 1 are a band of T (see
 * fpk_recipe_quantize_rows). */
static bool whole_blocks(const fpk_recipe_plan *t, size_t row0, size_t nrows, fpk_error *err)
{
    const band b = band_of(t, nrows);
    const char *why = NULL;
    if (row0 > t->rows || nrows > t->rows - row0)
        why = "rows beyond the view";
    else if (b.bh && (row0 % b.bh || (nrows % b.bh && row0 + nrows != t->rows)) &&
             !b.part_of_one)
        why = "a band must hold whole block rows";
    if (why)
        fpki_recipe_fail(err, FPK_ESYNTAX, why);
    return why == NULL;
}

static int no_memory(fpk_error *err)
{
    return fpki_recipe_fail(err, FPK_ENOMEM, "out of memory");
}

/* The rows of T at IN (already transformed), on PATH. */
static int quantize_band(const fpk_recipe_plan *t, const float *in, size_t row0, size_t nrows,
                         fpk_quantized *q, fpk_recipe_stats *s, fpk_error *err,
                         fpki_recipe_path path)
{
    q->flags = 0;
    q->amax = t->tensor.amax;
    q->global = t->global;
    int rc = FPK_OK;
    if (!path.general && fpki_recipe_fast(&t->recipe))
        rc = fpki_recipe_fast_rows(t, in, row0, nrows, q, s, path.isa);
    else
        general_rows(t, in, row0, nrows, q, s);
    if (s)
        fpki_recipe_stats_round(s);
    return rc ? no_memory(err) : FPK_OK;
}

/* Checks common to the entry points: R valid, rows the RHT can take, S
 * of R. */
static int check(const fpk_recipe *r, size_t cols, const fpk_recipe_stats *s, fpk_error *err)
{
    if (!fpk_recipe_valid(r, err))
        return FPK_ESYNTAX;
    if (r->rht && cols % 16)
        return fpki_recipe_fail(err, FPK_ESYNTAX,
                                "the RHT needs rows of a multiple of 16 elements");
    if (s && !fpki_recipe_same(&s->recipe, r))
        return fpki_recipe_fail(err, FPK_ESYNTAX, "statistics of another recipe");
    return FPK_OK;
}

int fpki_recipe_scan(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                     fpk_recipe_range *e, fpk_error *err, fpki_recipe_path path)
{
    int rc = check(r, cols, NULL, err);
    if (rc)
        return rc;
    size_t n = rows * cols;
    if (!r->rht) {
        fpki_recipe_extremes(x, n, e, path);
        return FPK_OK;
    }
    enum { PIECE = 4096 }; /* runs of 16 */
    float *z = malloc(PIECE * sizeof *z);
    if (!z)
        return no_memory(err);
    for (size_t i = 0; i < n; i += PIECE) {
        size_t len = n - i < PIECE ? n - i : PIECE;
        fpki_rht_rows(x + i, len, r->rht_signs, z, path);
        fpki_recipe_extremes(z, len, e, path);
    }
    free(z);
    return FPK_OK;
}

int fpk_recipe_scan(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                    fpk_recipe_range *e, fpk_error *err)
{
    return fpki_recipe_scan(r, x, rows, cols, e, err, best_path());
}

int fpki_recipe_quantize_rows(const fpk_recipe_plan *p, const float *x, size_t row0,
                              size_t nrows, fpk_quantized *q, fpk_recipe_stats *s,
                              fpk_error *err, fpki_recipe_path path)
{
    const fpk_recipe *r = &p->recipe;
    int rc = check(r, p->cols, s, err);
    if (rc)
        return rc;
    if (!whole_blocks(p, row0, nrows, err))
        return FPK_ESYNTAX;
    size_t n = nrows * p->cols, at = row0 * p->cols;
    const float *in = x + at;
    float *own = NULL;
    if (r->rht) {
        float *z = q->xt ? q->xt + at : (own = malloc(n ? n * sizeof *own : 1));
        if (!z)
            return no_memory(err);
        fpki_rht_rows(in, n, r->rht_signs, z, path);
        in = z;
    } else if (q->xt && q->xt != x) {
        memcpy(q->xt + at, in, n * sizeof *in);
    }
    rc = quantize_band(p, in, row0, nrows, q, s, err, path);
    free(own);
    return rc;
}

int fpk_recipe_quantize_rows(const fpk_recipe_plan *p, const float *x, size_t row0, size_t nrows,
                             fpk_quantized *q, fpk_recipe_stats *s, fpk_error *err)
{
    return fpki_recipe_quantize_rows(p, x, row0, nrows, q, s, err, best_path());
}

int fpki_recipe_quantize(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                         const fpk_amax_history *h, fpk_quantized *q, fpk_recipe_stats *s,
                         fpk_error *err, fpki_recipe_path path)
{
    int rc = check(r, cols, s, err);
    if (rc)
        return rc;
    /* one transform, which the scan and the rows share */
    size_t n = rows * cols;
    const float *in = x;
    float *own = NULL;
    if (r->rht) {
        float *z = q->xt ? q->xt : (own = malloc(n ? n * sizeof *own : 1));
        if (!z)
            return no_memory(err);
        fpki_rht_rows(x, n, r->rht_signs, z, path);
        in = z;
    } else if (q->xt && q->xt != x) {
        memcpy(q->xt, x, n * sizeof *x);
    }
    fpk_recipe_range e = {0};
    fpki_recipe_extremes(in, n, &e, path);
    fpk_recipe_plan p;
    rc = fpk_recipe_plan_init(&p, r, rows, cols, &e, h, err);
    if (!rc)
        rc = quantize_band(&p, in, 0, rows, q, s, err, path);
    free(own);
    return rc;
}

int fpk_recipe_quantize(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                        const fpk_amax_history *h, fpk_quantized *q, fpk_recipe_stats *s,
                        fpk_error *err)
{
    return fpki_recipe_quantize(r, x, rows, cols, h, q, s, err, best_path());
}
