/* Quantisation by recipe (fpkit-recipe.h): the RHT first where the recipe
 * has it, the tensor's extremes and plan, then per block its scale and
 * every element rounded into the element format, on the kernels
 * (recipe_fast.c) where they take the recipe's rounding, or on the
 * general path here: every element rounded by the core, with its
 * statistics, the reference the kernels are compared with. */
#include <stdlib.h>
#include <string.h>

#include "fast-check.h"
#include "recipe-impl.h"

/* The best path for R on this CPU. */
static fpki_recipe_path best_path(void)
{
    return (fpki_recipe_path){.general = false, .isa = fpki_isa_best()};
}

void fpki_recipe_extremes(const float *x, size_t n, fpk_recipe_range *e, fpki_recipe_path path)
{
    uint32_t hi = fpki_f32_bits(e->amax);
    uint32_t lo = e->amin != 0 ? fpki_f32_bits(e->amin) : FPKI_F32_INFINITY;
    uint8_t nonfinite = e->nonfinite;
    if (n && !path.general) {
        fpki_blockq_extremes_fns[path.isa]((const uint32_t *)(const void *)x, n, n, &hi, &lo,
                                           &nonfinite);
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t a = fpki_f32_bits(x[i]) & FPKI_F32_MAGNITUDE;
            if (a >= FPKI_F32_INFINITY)
                nonfinite = 1;
            else if (a > hi)
                hi = a;
            if (a && a < lo)
                lo = a;
        }
    }
    e->amax = fpki_f32_value(hi);
    e->amin = lo < FPKI_F32_INFINITY ? fpki_f32_value(lo) : 0;
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

uint8_t fpki_recipe_general_element(const fpk_recipe *r, const fpki_block_plan *p, uint32_t v,
                                    uint64_t at, uint32_t *y, unsigned *flags)
{
    uint8_t code = (uint8_t)round_element(r, p, v, at, flags);
    *y = p->nan ? FPKI_F32_NAN : fpki_recipe_element_value(r->elem, code, p->decode);
    return code;
}

fpki_recipe_band fpki_recipe_band_of(const fpk_recipe_plan *t, size_t row0, size_t nrows)
{
    const fpk_recipe *r = &t->recipe;
    fpki_recipe_band b = {.row0 = row0, .end = row0 + nrows, .cols = t->cols};
    fpk_recipe_blocks(r, t->rows, t->cols, &b.brows, &b.bcols);
    b.bh = r->block_rows ? r->block_rows : t->rows;
    b.bw = r->block_cols ? r->block_cols : t->cols;
    b.part_of_one = b.brows * b.bcols == 1 && nrows != t->rows;
    return b;
}

fpki_recipe_block fpki_recipe_block_at(const fpki_recipe_band *b, size_t bi, size_t bj)
{
    fpki_recipe_block k = {.first = bi * b->bh >= b->row0, .c0 = bj * b->bw};
    k.r0 = bi * b->bh < b->row0 ? b->row0 : bi * b->bh;
    k.r1 = bi * b->bh + b->bh < b->end ? bi * b->bh + b->bh : b->end;
    k.c1 = k.c0 + b->bw < b->cols ? k.c0 + b->bw : b->cols;
    return k;
}

fpki_block_plan fpki_recipe_general_plan(const fpk_recipe_plan *t, const fpki_recipe_band *b,
                                         const fpki_recipe_block *k, const float *in,
                                         uint32_t *bmax, uint32_t *bmin)
{
    fpk_recipe_range e = {0};
    if (b->part_of_one)
        e = t->tensor;
    else
        for (size_t i = k->r0; i < k->r1; i++)
            fpki_recipe_extremes(in + (i - b->row0) * b->cols + k->c0, k->c1 - k->c0, &e,
                                 (fpki_recipe_path){.general = true});
    *bmax = fpki_f32_bits(e.amax);
    *bmin = fpki_f32_bits(e.amin);
    return fpki_block_plan_of(t, *bmax, e.nonfinite);
}

/* The general path over rows ROW0 .. ROW0 + NROWS - 1 (at IN). */
static void general_rows(const fpk_recipe_plan *t, const float *in, size_t row0, size_t nrows,
                         fpk_quantized *q, fpk_recipe_stats *s)
{
    const fpk_recipe *r = &t->recipe;
    const size_t cols = t->cols;
    const fpki_recipe_band b = fpki_recipe_band_of(t, row0, nrows);
    for (size_t bi = row0 / b.bh; bi * b.bh < b.end; bi++) {
        for (size_t bj = 0; bj < b.bcols; bj++) {
            const fpki_recipe_block k = fpki_recipe_block_at(&b, bi, bj);
            uint32_t bmax, bmin;
            const fpki_block_plan p = fpki_recipe_general_plan(t, &b, &k, in, &bmax, &bmin);
            if (k.first && q->scales)
                q->scales[bi * b.bcols + bj] = p.scale;
            for (size_t i = k.r0; i < k.r1; i++) {
                fpki_recipe_lanes lanes = {{0}, {0}};
                for (size_t j = k.c0; j < k.c1; j++) {
                    size_t at = i * cols + j;
                    uint32_t v = fpki_f32_bits(in[(i - row0) * cols + j]), y;
                    unsigned fl;
                    uint8_t code = fpki_recipe_general_element(r, &p, v, at, &y, &fl);
                    q->flags |= fl;
                    if (q->codes)
                        q->codes[at] = code;
                    if (q->y)
                        q->y[at] = fpki_f32_value(y);
                    if (s)
                        fpki_recipe_stats_element(s, &p, v, code, y, fl, &lanes,
                                                  (int)((j - k.c0) % 16));
                }
                if (s)
                    fpki_recipe_stats_run(s, &lanes);
            }
            if (k.first && s)
                fpki_recipe_stats_block(s, &p, bmax, bmin);
        }
    }
}

/* Whether rows ROW0 .. ROW0 + NROWS - 1 are a band of T (see
 * fpk_recipe_quantize_rows). */
static bool whole_blocks(const fpk_recipe_plan *t, size_t row0, size_t nrows, fpk_error *err)
{
    const fpki_recipe_band b = fpki_recipe_band_of(t, row0, nrows);
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
    if (!path.general && fpki_recipe_fast(&t->recipe)) {
#ifdef FPK_ASSERTIONS
        /* the general path's results for a sample, before Q's values
         * may write over IN */
        fpki_recipe_check check;
        fpki_recipe_expect(&check, t, in, row0, nrows);
#endif
        rc = fpki_recipe_fast_rows(t, in, row0, nrows, q, s, path.isa);
        FPKI_ASSERT(rc || fpki_recipe_agrees(&check, q));
    } else {
        general_rows(t, in, row0, nrows, q, s);
    }
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
