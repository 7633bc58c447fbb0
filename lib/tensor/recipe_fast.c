/* The recipes' fast path, under RNE and SR: per block row, the blocks'
 * extremes and their elements by the block-quantisation kernels
 * (kernels.h: fpki_blockq_fn), the scales from each block's amax by host
 * arithmetic where recipe.c uses the core.  The host's IEEE operations,
 * in the default environment that fpki_fp_default sets, round to nearest
 * even exactly as the core does (NaNs aside, which never arise here): so
 * the keys (fpki_plan_key) computed here are the core's, and each key's
 * plan is recipe.c's own, computed once per call and kept in a small
 * cache.  tests/check_recipe_fast compares every result with the general
 * path. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "recipe-impl.h"

bool fpki_recipe_fast(const fpk_recipe *r)
{
    return r->round == FPK_RNE || r->round == FPK_SR;
}

/* floor(log2) of the float32 magnitude bits A (finite, nonzero), and
 * whether A is a power of two. */
static int floor_log2(uint32_t a)
{
    return a >> 23 ? (int)(a >> 23) - 127 : 31 - __builtin_clz(a) - 149;
}

static bool is_pow2(uint32_t a)
{
    return a >> 23 ? (a & 0x7fffffu) == 0 : (a & (a - 1)) == 0;
}

/* Plans by key, each computed by recipe.c once a call: indexed by k, or
 * by the scale's code and whether it was clamped, and whether the block
 * is of zeros. */
typedef struct fast_state {
    const fpk_recipe_plan *t;
    float max;             /* the element format's largest value */
    double max64;
    float lo, hi;          /* the small scale format's least normal and largest values */
    float margin;          /* 2^-margin */
    int64_t klo, khi;      /* the k that have plans of their own */
    size_t nplans;
    fpki_block_plan *plan;
    uint8_t *have;
} fast_state;

static bool fast_init(fast_state *f, const fpk_recipe_plan *t)
{
    const fpk_recipe *r = &t->recipe;
    const fpk_format *sf = r->scale;
    fpk_ctx c = fpk_ctx_default();
    memset(f, 0, sizeof *f);
    f->t = t;
    f->max = fpki_f32_value((uint32_t)fpk_convert(&fpk_fp32, r->elem, r->elem->max_finite, &c));
    f->max64 = (double)f->max;
    if (sf != &fpk_fp32) {
        f->lo = fpki_f32_value(
            (uint32_t)fpk_convert(&fpk_fp32, sf, (fpk_bits)1 << sf->man_bits, &c));
        f->hi = fpki_f32_value((uint32_t)fpk_convert(&fpk_fp32, sf, sf->max_finite, &c));
    }
    f->margin = fpki_f32_value((uint32_t)(127 - r->margin) << 23);
    if (!fpki_keyed(r))
        return true;
    /* beyond the scale format's range every k has its clamped plan */
    f->klo = sf->emin - sf->man_bits - 1;
    f->khi = sf->emax + 1;
    f->nplans = fpki_pow2_rule(r->rule) ? (size_t)(f->khi - f->klo + 1) * 2
                                        : (size_t)(sf->max_finite + 1) * 8;
    f->plan = malloc(f->nplans * sizeof *f->plan);
    f->have = calloc(f->nplans, 1);
    return f->plan && f->have;
}

static void fast_free(fast_state *f)
{
    free(f->plan);
    free(f->have);
}

uint32_t fpki_f32_to_small(const fpk_format *f, uint32_t q)
{
    if (q == 0)
        return 0;
    /* Q = SIG * 2^(E - 23), rounded on the grid 2^QE of its binade, or of
     * F's subnormals below them; the multiple N of 2^QE is F's encoding
     * counted from its least subnormal, a carry moving into the
     * exponent. */
    uint32_t ef = q >> 23, sig = (q & 0x7fffffu) | (ef ? 0x800000u : 0);
    int e = (ef ? (int)ef : 1) - 127, lead = 31 - __builtin_clz(sig);
    int fl = e - 23 + lead, m = f->man_bits;
    int qe = (fl > f->emin ? fl : f->emin) - m, shift = qe - (e - 23);
    if (shift > 25)
        return 0;
    uint32_t n = sig >> shift, rem = sig & ((UINT32_C(1) << shift) - 1);
    uint32_t half = UINT32_C(1) << (shift - 1);
    n += rem > half || (rem == half && (n & 1));
    return (uint32_t)(qe - (f->emin - m)) * (UINT32_C(1) << m) + n;
}

/* fpki_plan_key_of in host arithmetic. */
static fpki_plan_key fast_key(const fast_state *f, uint32_t amax)
{
    const fpk_recipe *r = &f->t->recipe;
    const fpk_format *e = r->elem;
    fpki_plan_key key = {.k = INT32_MIN};
    if (fpki_pow2_rule(r->rule)) {
        if (!amax)
            return key;
        switch (r->rule) {
        case FPK_SCALE_FLOOR:
            key.k = floor_log2(amax) - e->emax;
            break;
        case FPK_SCALE_CEIL:
            key.k = floor_log2(amax) + !is_pow2(amax) - e->emax;
            break;
        case FPK_SCALE_EVEN:
            key.k = (int)((amax + (UINT32_C(1) << (22 - e->man_bits))) >> 23) - 127 - e->emax;
            break;
        default: {
            uint32_t q = fpki_f32_bits(fpki_f32_value(amax) / f->max);
            key.k = q ? floor_log2(q) + !is_pow2(q) : INT32_MIN;
            break;
        }
        }
        return key;
    }
    float q, lo = 0;
    if (r->rule == FPK_SCALE_NVFP4_TORCHAO) {
        q = fpki_f32_value(amax) / 6.0f / fpki_f32_value(f->t->global);
        lo = f->lo;
    } else if (fpki_nvfp4_rule(r->rule)) {
        q = fpki_f32_value(amax) * fpki_f32_value(f->t->g6);
    } else {
        q = fpki_f32_value(amax) / f->max;
        lo = f->lo;
    }
    if (q < lo) {
        key.under = amax != 0;
        q = lo;
    } else if (q > f->hi) {
        key.sat = true;
        q = f->hi;
    }
    key.code = fpki_f32_to_small(r->scale, fpki_f32_bits(q));
    return key;
}

/* FPK_SCALE_AMAX with an fp32 scale in host arithmetic: recipe.c's
 * amax_multiplier (the quotient in double, rounded to float32, the
 * margin a product by a power of two, pow2 the exponent's bits alone). */
static uint32_t fast_multiplier(const fast_state *f, uint32_t amax)
{
    const fpk_recipe_plan *t = f->t;
    const fpk_recipe *r = &t->recipe;
    const double v = (double)fpki_f32_value(amax);
    double a = t->delayed ? t->delayed_amax : v < 1e-12 ? 1e-12 : v;
    if (t->delayed && !(a > 0 && a <= DBL_MAX))
        return FPKI_F32_ONE;
    float s = (float)(f->max64 / a);
    if (r->margin)
        s *= f->margin;
    uint32_t b = fpki_f32_bits(s);
    if (r->pow2 && b)
        b = b >> 23 ? b & UINT32_C(0xff800000) : UINT32_C(1) << (31 - __builtin_clz(b));
    return b;
}

/* The plan of a block of extremes AMAX and NONFINITE, as
 * fpki_block_plan_of gives it. */
static fpki_block_plan fast_plan(fast_state *f, uint32_t amax, bool nonfinite)
{
    const fpk_recipe *r = &f->t->recipe;
    if (nonfinite)
        return fpki_block_plan_of(f->t, amax, true);
    if (!fpki_keyed(r)) { /* fpki_amax_plan, the decoding scale 1/m in host arithmetic */
        fpki_block_plan p = {.how = FPKI_SCALE_MUL, .zero = amax == 0};
        p.m = fast_multiplier(f, amax);
        p.decode = p.scale = fpki_f32_bits(1.0f / fpki_f32_value(p.m));
        return p;
    }
    fpki_plan_key key = fast_key(f, amax);
    size_t at;
    if (fpki_pow2_rule(r->rule)) {
        int64_t k = key.k < f->klo ? f->klo : key.k > f->khi ? f->khi : key.k;
        at = (size_t)(k - f->klo);
    } else {
        at = (size_t)key.code << 2 | (size_t)key.under << 1 | key.sat;
    }
    at = at << 1 | (amax == 0);
    if (!f->have[at]) {
        f->plan[at] = fpki_plan_of_key(f->t, key, amax);
        f->have[at] = 1;
    }
    return f->plan[at];
}

/* What the fast rows need, per call: the kernels and their plans; per
 * block of the block rows in hand its extremes and its kernel block;
 * per block run of the rows in hand (one row's part of a block) its
 * kernel block again, its scaling and its sums. */
typedef struct fast_rows {
    fpki_blockq_fn *quantize;
    fpki_blockq_extremes_fn *extremes;
    fpki_blockq_plan kp[3]; /* by fpki_blockq_how */
    uint32_t *amax, *amin;
    uint8_t *nonfinite;
    fpki_blockq_block *kb, *run_kb;
    uint8_t *how, *run_how; /* fpki_blockq_how, 3 for a NaN block (any) */
    double *sums;
} fast_rows;

/* The kernels' scaling for a block's. */
static uint8_t kernel_how(const fpki_block_plan *p)
{
    return p->nan                     ? 3
           : p->how == FPKI_SCALE_POW2 ? FPKI_BLOCKQ_POW2
           : p->how == FPKI_SCALE_DIV  ? FPKI_BLOCKQ_DIV
                                       : FPKI_BLOCKQ_MUL;
}

/* N elements at X, element AT of the view first, in the NB block runs of
 * FR, each W wide (the last maybe shorter): runs of blocks that scale
 * alike, each by one kernel call. */
static void fast_run(const fast_rows *fr, const float *x, size_t at, size_t n, size_t w,
                     size_t nb, fpk_quantized *q, fpk_recipe_stats *s, fpki_blockq_counts *c)
{
    for (size_t j0 = 0; j0 < nb;) {
        size_t j1 = j0 + 1;
        int how = fr->run_how[j0];
        while (j1 < nb && (fr->run_how[j1] == how || fr->run_how[j1] == 3 || how == 3)) {
            how = how == 3 ? fr->run_how[j1] : how;
            j1++;
        }
        size_t c0 = j0 * w, c1 = j1 * w < n ? j1 * w : n;
        fr->quantize(&fr->kp[how == 3 ? 0 : how], fr->run_kb + j0, w,
                     (const uint32_t *)(const void *)(x + c0), c1 - c0, at + c0,
                     q->codes ? q->codes + at + c0 : NULL,
                     q->y ? (uint32_t *)(void *)(q->y + at + c0) : NULL, fr->sums + 2 * j0, c);
        j0 = j1;
    }
    if (s)
        fpki_recipe_stats_sums(s, fr->sums, nb);
}

/* The elements a kernel call takes at most (where rows hold whole
 * blocks, consecutive rows are one run): enough for the calls' own costs
 * to vanish, few enough for their inputs to stay in the cache. */
#define FAST_STEP 4096

int fpki_recipe_fast_rows(const fpk_recipe_plan *t, const float *in, size_t row0, size_t nrows,
                          fpk_quantized *q, fpk_recipe_stats *s, fpki_isa isa)
{
    const fpk_recipe *r = &t->recipe;
    const size_t rows = t->rows, cols = t->cols, end = row0 + nrows;
    if (!rows || !cols)
        return FPK_OK;
    size_t br, bc;
    fpk_recipe_blocks(r, rows, cols, &br, &bc);
    const size_t bh = r->block_rows ? r->block_rows : rows, bw = r->block_cols ? r->block_cols : cols;
    const bool part_of_one = br * bc == 1 && nrows != rows;
    /* rows of whole blocks follow each other as one run; blocks one row
     * high, several block rows a step */
    const bool runs = cols % bw == 0;
    const size_t step_rows = runs && cols < FAST_STEP ? FAST_STEP / cols : 1;
    const size_t step_brows = bh == 1 ? step_rows : 1;
    fast_state f;
    fast_rows fr = {.quantize = fpki_blockq_fns[isa], .extremes = fpki_blockq_extremes_fns[isa]};
    fr.amax = malloc(bc * step_brows * sizeof *fr.amax);
    fr.amin = malloc(bc * step_brows * sizeof *fr.amin);
    fr.nonfinite = malloc(bc * step_brows);
    fr.kb = malloc(bc * step_brows * sizeof *fr.kb);
    fr.how = malloc(bc * step_brows);
    fr.run_kb = bh == 1 ? fr.kb : malloc(bc * step_rows * sizeof *fr.run_kb);
    fr.run_how = bh == 1 ? fr.how : malloc(bc * step_rows);
    fr.sums = malloc(2 * bc * step_rows * sizeof *fr.sums);
    int rc = FPK_OK;
    if (!fast_init(&f, t) || !fr.amax || !fr.amin || !fr.nonfinite || !fr.how || !fr.kb ||
        !fr.run_kb || !fr.run_how || !fr.sums) {
        rc = FPK_ENOMEM;
        goto done;
    }
    for (int how = 0; how < 3; how++)
        fpki_blockq_plan_init(&fr.kp[how], r->elem, (fpki_blockq_how)how, r->round, r->seed,
                              r->sr_bits);
    fpki_fpenv env;
    fpki_fp_default(&env);
    fpki_blockq_counts c = {0};
    for (size_t bi = row0 / bh; bi * bh < end;) {
        /* block rows BI .. BI + NBR - 1, rows R0 .. R1 - 1 of them here */
        size_t nbr = bh == 1 && end - bi < step_brows ? end - bi : step_brows, nb = nbr * bc;
        size_t r0 = bi * bh < row0 ? row0 : bi * bh;
        size_t r1 = (bi + nbr) * bh < end ? (bi + nbr) * bh : end;
        bool first = bi * bh >= row0;
        const float *x0 = in + (r0 - row0) * cols;
        if (part_of_one) {
            memcpy(&fr.amax[0], &t->tensor.amax, sizeof *fr.amax);
            memcpy(&fr.amin[0], &t->tensor.amin, sizeof *fr.amin);
            fr.amin[0] = fr.amin[0] ? fr.amin[0] : FPKI_F32_INFINITY;
            fr.nonfinite[0] = t->tensor.nonfinite;
        } else {
            for (size_t j = 0; j < nb; j++) {
                fr.amax[j] = 0;
                fr.amin[j] = FPKI_F32_INFINITY;
                fr.nonfinite[j] = 0;
            }
            if (runs && bh == 1)
                fr.extremes((const uint32_t *)(const void *)x0, nb * bw, bw, fr.amax, fr.amin,
                            fr.nonfinite);
            else if (bc == 1) /* a block of whole rows: one run */
                fr.extremes((const uint32_t *)(const void *)x0, (r1 - r0) * cols,
                            (r1 - r0) * cols, fr.amax, fr.amin, fr.nonfinite);
            else
                for (size_t i = r0; i < r1; i++)
                    fr.extremes((const uint32_t *)(const void *)(x0 + (i - r0) * cols), cols, bw,
                                fr.amax, fr.amin, fr.nonfinite);
        }
        for (size_t j = 0; j < nb; j++) {
            fpki_block_plan p = fast_plan(&f, fr.amax[j], fr.nonfinite[j]);
            fr.kb[j] = (fpki_blockq_block){.k = p.k, .m = p.m, .decode = p.decode, .nan = p.nan};
            fr.how[j] = kernel_how(&p);
            if (first && q->scales)
                q->scales[bi * bc + j] = p.scale;
            if (first && s)
                fpki_recipe_stats_block(s, &p, fr.amax[j],
                                        fr.amin[j] < FPKI_F32_INFINITY ? fr.amin[j] : 0);
        }
        /* the rows, STEP_ROWS a kernel call where they are one run (each
         * its block row's blocks, in order) */
        for (size_t i0 = r0; i0 < r1;) {
            size_t i1 = runs ? (r1 - i0 < step_rows ? r1 : i0 + step_rows) : i0 + 1;
            if (bh > 1)
                for (size_t i = i0; i < i1; i++) {
                    memcpy(fr.run_kb + (i - i0) * bc, fr.kb, bc * sizeof *fr.kb);
                    memcpy(fr.run_how + (i - i0) * bc, fr.how, bc);
                }
            fast_run(&fr, x0 + (i0 - r0) * cols, i0 * cols, (i1 - i0) * cols, bw, (i1 - i0) * bc,
                     q, s, &c);
            i0 = i1;
        }
        bi += nbr;
    }
    fpki_fp_restore(&env);
    q->flags |= c.flags;
    if (s) {
        s->count += (uint64_t)nrows * cols;
        s->zeros += c.zeros;
        s->nonfinite += c.nonfinite;
        s->flushed += c.flushed;
        s->saturated += c.saturated;
        s->subnormal += c.subnormal;
    }
done:
    fast_free(&f);
    if (bh > 1)
        free(fr.run_kb), free(fr.run_how);
    free(fr.amax), free(fr.amin), free(fr.nonfinite), free(fr.how), free(fr.kb), free(fr.sums);
    return rc;
}
