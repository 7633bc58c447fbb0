/* Scaled quantisation by recipe (fpkit-recipe.h): per block, the scale
 * the recipe's rule derives from the block's largest magnitude, then
 * every element rounded into the element format.  Every step is computed
 * by the core on float32 or float64 bits, in the order the reference
 * implementations compute it (fpk_scale_rule says which), never in host
 * floating point. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe-impl.h"

#define F32_MAG UINT32_C(0x7fffffff)
#define F32_INF UINT32_C(0x7f800000)
#define F32_SIXTH UINT32_C(0x40c00000)   /* 6.0f */
#define F32_NVFP4 UINT32_C(0x45280000)   /* 2688.0f = 448 * 6 */
#define F32_E4M3_MAX UINT32_C(0x43e00000) /* 448.0f */

uint32_t fpki_f32_mul(uint32_t a, uint32_t b)
{
    fpk_ctx c = fpk_ctx_default();
    return (uint32_t)fpk_mul(&fpk_fp32, a, b, &c);
}

uint32_t fpki_f32_div(uint32_t a, uint32_t b)
{
    fpk_ctx c = fpk_ctx_default();
    return (uint32_t)fpk_div(&fpk_fp32, a, b, &c);
}

/* F's value A as float32 bits, rounded to nearest even. */
static uint32_t to_f32(const fpk_format *f, fpk_bits a)
{
    fpk_ctx c = fpk_ctx_default();
    return (uint32_t)fpk_convert(&fpk_fp32, f, a, &c);
}

/* The float32 value X rounded into F to nearest even (no saturation). */
static fpk_bits from_f32(const fpk_format *f, uint32_t x)
{
    fpk_ctx c = fpk_ctx_default();
    return fpk_convert(f, &fpk_fp32, x, &c);
}

/* 2^K exactly in F (K within F's range). */
static fpk_bits pow2_in(const fpk_format *f, int k)
{
    fpk_ctx c = fpk_ctx_default();
    return fpki_round_pack(f, false, k, 0, 1, &c);
}

/* floor(log2 A) for the float32 magnitude bits A (finite, nonzero). */
static int floor_log2(uint32_t a)
{
    fpki_unpacked u = fpki_unpack(&fpk_fp32, a, NULL);
    return u.exp + 63 - fpki_clz64(u.sig);
}

/* Whether A (as above) is a power of two. */
static bool is_pow2(uint32_t a)
{
    fpki_unpacked u = fpki_unpack(&fpk_fp32, a, NULL);
    return (u.sig & (u.sig - 1)) == 0;
}

/* The least and largest exponent k of a power of two 2^k in F. */
static int pow2_min(const fpk_format *f)
{
    return f->emin - f->man_bits;
}

const char *fpk_scale_rule_name(fpk_scale_rule rule)
{
    static const char *const names[FPK_SCALE_RULE_COUNT] = {
        "floor", "ceil", "even", "rceil", "amax", "nvfp4", "nvfp4-torchao", "nvfp4-div"};
    return (unsigned)rule < FPK_SCALE_RULE_COUNT ? names[rule] : "?";
}

/* Whether the recipe's rule derives a power of two. */
static bool pow2_rule(fpk_scale_rule rule)
{
    return rule <= FPK_SCALE_RCEIL;
}

static bool nvfp4_rule(fpk_scale_rule rule)
{
    return rule >= FPK_SCALE_NVFP4 && rule < FPK_SCALE_RULE_COUNT;
}

static bool fail(fpk_error *err, const char *msg)
{
    if (err) {
        err->code = FPK_ESYNTAX;
        snprintf(err->msg, sizeof err->msg, "recipe: %s", msg);
    }
    return false;
}

bool fpk_recipe_valid(const fpk_recipe *r, fpk_error *err)
{
    const fpk_format *e = r ? r->elem : NULL, *sf = r ? r->scale : NULL;
    if (!e || e->width > 8 || e->special == FPK_SPECIAL_E8M0 ||
        fpki_classify(e, e->max_finite) != FPK_CLASS_NORMAL)
        return fail(err, "the element format must be at most 8 bits wide, signed, "
                         "with a normal largest value");
    bool small = sf && sf != &fpk_e8m0 && sf->width <= 9 && sf->exp_bits >= 2 &&
                 sf->special != FPK_SPECIAL_NONE;
    if (!sf || (sf != &fpk_fp32 && sf != &fpk_e8m0 && !small))
        return fail(err, "the scale format must be fp32, e8m0, e4m3 or e5m3");
    if ((unsigned)r->rule >= FPK_SCALE_RULE_COUNT)
        return fail(err, "unknown scale rule");
    if (r->rule == FPK_SCALE_AMAX && sf == &fpk_e8m0)
        return fail(err, "the amax rule needs an fp32, e4m3 or e5m3 scale");
    if (nvfp4_rule(r->rule) && (e != &fpk_e2m1 || sf != &fpk_e4m3))
        return fail(err, "NVFP4 rules need e2m1 elements and an e4m3 scale");
    if ((unsigned)r->round >= FPK_ROUND_COUNT)
        return fail(err, "unknown rounding mode");
    if (r->round == FPK_SR && (r->sr_bits < 1 || r->sr_bits > 32))
        return fail(err, "sr_bits must be 1 to 32");
    if (r->margin < 0 || r->margin > 64)
        return fail(err, "margin must be 0 to 64");
    if (r->history < 0 || r->history > FPK_HISTORY_MAX)
        return fail(err, "history must be 0 to 1024");
    if ((r->history || r->margin || r->pow2) &&
        (r->rule != FPK_SCALE_AMAX || sf != &fpk_fp32))
        return fail(err, "margin, pow2 and history go with the amax rule and an fp32 scale");
    if (r->history && (r->block_rows || r->block_cols))
        return fail(err, "delayed scaling needs one block, 0x0");
    return true;
}

size_t fpk_recipe_blocks(const fpk_recipe *r, size_t rows, size_t cols, size_t *brows,
                         size_t *bcols)
{
    size_t h = r->block_rows ? r->block_rows : rows, w = r->block_cols ? r->block_cols : cols;
    *brows = rows && h ? (rows + h - 1) / h : 0;
    *bcols = cols && w ? (cols + w - 1) / w : 0;
    return *brows * *bcols;
}

/* A power-of-two plan: k unclamped from the rule, clamped to the scale
 * format's powers of two. */
static fpki_block_plan pow2_plan(const fpk_recipe *r, uint32_t amax)
{
    const fpk_format *e = r->elem, *sf = r->scale;
    fpki_block_plan p = {.how = FPKI_SCALE_POW2, .zero = amax == 0};
    int64_t k = INT32_MIN;
    switch (r->rule) {
    case FPK_SCALE_FLOOR:
        if (amax)
            k = floor_log2(amax) - e->emax;
        break;
    case FPK_SCALE_CEIL:
        if (amax)
            k = floor_log2(amax) + !is_pow2(amax) - e->emax;
        break;
    case FPK_SCALE_EVEN: {
        /* torchao's rounding on the bits: the carry may reach the
         * exponent, and the field alone is read (0 as 2^-127). */
        uint32_t a = amax + (UINT32_C(1) << (22 - e->man_bits));
        if (amax)
            k = (int)(a >> 23) - 127 - e->emax;
        break;
    }
    default: { /* FPK_SCALE_RCEIL */
        uint32_t q = fpki_f32_div(amax, to_f32(e, e->max_finite));
        if (q)
            k = floor_log2(q) + !is_pow2(q);
        break;
    }
    }
    int lo = pow2_min(sf), hi = sf->emax;
    if (k < lo) {
        p.under = !p.zero;
        k = lo;
    } else if (k > hi) {
        p.sat = true;
        k = hi;
    }
    p.k = (int)k;
    p.scale = (uint32_t)pow2_in(sf, p.k);
    p.decode = to_f32(sf, p.scale);
    return p;
}

/* The multiplier of FPK_SCALE_AMAX with an fp32 scale: MAX / AMAX (AMAX
 * a double, nonzero) rounded once to float32, then the margin and pow2. */
static uint32_t amax_multiplier(const fpk_recipe *r, double amax)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits max64 = fpk_convert(&fpk_fp64, r->elem, r->elem->max_finite, &c), a64;
    memcpy(&a64, &amax, sizeof a64);
    uint32_t s = (uint32_t)fpk_convert(&fpk_fp32, &fpk_fp64, fpk_div(&fpk_fp64, max64, a64, &c),
                                       &c);
    if (r->margin) {
        fpki_unpacked u = fpki_unpack(&fpk_fp32, s, NULL);
        s = (uint32_t)fpki_round_pack(&fpk_fp32, false, (int64_t)u.exp - r->margin, 0, u.sig,
                                      &c);
    }
    if (r->pow2 && s)
        s = (uint32_t)pow2_in(&fpk_fp32, floor_log2(s));
    return s;
}

/* FPK_SCALE_AMAX with a small scale format: the decoding scale AMAX /
 * MAX in float32, clamped to the format's normal range and rounded into
 * it; the elements multiplied by its reciprocal (torchao's single-level
 * NVFP4). */
static void amax_small_plan(const fpk_recipe *r, uint32_t amax, fpki_block_plan *p)
{
    const fpk_format *sf = r->scale;
    uint32_t q = fpki_f32_div(amax, to_f32(r->elem, r->elem->max_finite));
    uint32_t lo = to_f32(sf, (fpk_bits)1 << sf->man_bits), hi = to_f32(sf, sf->max_finite);
    if (q < lo) {
        p->under = !p->zero;
        q = lo;
    } else if (q > hi) {
        p->sat = true;
        q = hi;
    }
    p->scale = (uint32_t)from_f32(sf, q);
    p->decode = to_f32(sf, p->scale);
    p->m = fpki_f32_div(FPKI_F32_ONE, p->decode);
}

/* The NVFP4 rules' block scale D, the multiplier (or divisor) and the
 * decoding scale; T holds the tensor's scales. */
static void nvfp4_plan(const fpk_recipe *r, const fpki_tensor_plan *t, uint32_t amax,
                       fpki_block_plan *p)
{
    uint32_t q;
    if (r->rule == FPK_SCALE_NVFP4_TORCHAO) {
        q = fpki_f32_div(fpki_f32_div(amax, F32_SIXTH), t->global);
        uint32_t lo = to_f32(&fpk_e4m3, (fpk_bits)1 << fpk_e4m3.man_bits);
        if (q < lo) {
            p->under = !p->zero;
            q = lo;
        }
    } else {
        q = fpki_f32_mul(amax, t->g6);
    }
    if (q > F32_E4M3_MAX) {
        p->sat = true;
        q = F32_E4M3_MAX;
    }
    p->scale = (uint32_t)from_f32(&fpk_e4m3, q);
    uint32_t d = to_f32(&fpk_e4m3, p->scale);
    if (r->rule != FPK_SCALE_NVFP4_TORCHAO &&
        fpki_classify(&fpk_e4m3, p->scale) != FPK_CLASS_NORMAL)
        p->under |= !p->zero;
    p->decode = fpki_f32_mul(d, t->global);
    if (r->rule == FPK_SCALE_NVFP4_TORCHAO) {
        p->m = fpki_f32_div(t->inv_t, d);
    } else if (p->decode == 0) {
        p->m = FPKI_F32_MAXF; /* 1/0, clamped to FLT_MAX */
    } else if (r->rule == FPK_SCALE_NVFP4_DIV) {
        p->how = FPKI_SCALE_DIV;
        p->m = p->decode;
    } else {
        uint32_t enc = fpki_f32_div(FPKI_F32_ONE, p->decode);
        p->m = enc > FPKI_F32_MAXF ? FPKI_F32_MAXF : enc;
    }
}

fpki_block_plan fpki_block_plan_of(const fpk_recipe *r, const fpki_tensor_plan *t,
                                   uint32_t amax, bool nonfinite)
{
    fpki_block_plan p = {.how = FPKI_SCALE_MUL, .zero = amax == 0 && !nonfinite};
    if (nonfinite) {
        p.nan = true;
        p.scale = r->scale == &fpk_fp32 ? UINT32_C(0x7fc00000) : (uint32_t)r->scale->nan;
        p.decode = UINT32_C(0x7fc00000);
        return p;
    }
    if (pow2_rule(r->rule))
        return pow2_plan(r, amax);
    if (nvfp4_rule(r->rule)) {
        nvfp4_plan(r, t, amax, &p);
    } else if (r->scale != &fpk_fp32) {
        amax_small_plan(r, amax, &p);
    } else {
        double a;
        float f;
        memcpy(&f, &amax, sizeof f);
        a = t->delayed ? t->amax : (double)f < 1e-12 ? 1e-12 : (double)f;
        p.m = t->delayed && !(a > 0 && a <= DBL_MAX) ? FPKI_F32_ONE : amax_multiplier(r, a);
        p.decode = p.scale = fpki_f32_div(FPKI_F32_ONE, p.m);
    }
    return p;
}

/* The tensor's plan: NVFP4's global scales from AMAX (float32 bits), a
 * delayed amax from H. */
static fpki_tensor_plan tensor_plan(const fpk_recipe *r, uint32_t amax,
                                    const fpk_amax_history *h)
{
    fpki_tensor_plan t = {.global = FPKI_F32_ONE};
    if (r->rule == FPK_SCALE_NVFP4_TORCHAO) {
        t.global = amax ? fpki_f32_div(amax, F32_NVFP4) : FPKI_F32_ONE;
        t.inv_t = fpki_f32_div(FPKI_F32_ONE, t.global);
    } else if (nvfp4_rule(r->rule)) {
        uint32_t g = fpki_f32_div(F32_NVFP4, amax);
        g = g > FPKI_F32_MAXF ? FPKI_F32_MAXF : g;
        if (amax == 0 || g == 0)
            g = FPKI_F32_ONE;
        t.global = fpki_f32_div(FPKI_F32_ONE, g);
        t.g6 = fpki_f32_mul(g, fpki_f32_div(FPKI_F32_ONE, F32_SIXTH));
    }
    if (r->history) {
        t.delayed = true;
        t.amax = h ? fpk_amax_history_amax(h, r->history_max) : 0;
    }
    return t;
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

/* P's value times DECODE (float32 bits), rounded once to float32. */
static uint32_t element_value(const fpk_format *e, uint8_t p, uint32_t decode)
{
    return fpki_f32_mul(to_f32(e, p), decode);
}

float fpk_recipe_value(const fpk_recipe *r, uint8_t p, uint32_t scale, uint32_t global)
{
    uint32_t decode, y;
    const fpk_format *sf = r->scale;
    if (fpki_classify(sf, scale) >= FPK_CLASS_INF)
        decode = UINT32_C(0x7fc00000);
    else
        decode = sf == &fpk_fp32 ? scale : to_f32(sf, scale);
    if (nvfp4_rule(r->rule))
        decode = fpki_f32_mul(decode, global);
    y = element_value(r->elem, p, decode);
    float f;
    memcpy(&f, &y, sizeof f);
    return f;
}

void fpk_recipe_dequantize(const fpk_recipe *r, const uint8_t *codes, const uint32_t *scales,
                           uint32_t global, size_t rows, size_t cols, float *y)
{
    size_t br, bc;
    fpk_recipe_blocks(r, rows, cols, &br, &bc);
    size_t h = r->block_rows ? r->block_rows : rows, w = r->block_cols ? r->block_cols : cols;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            y[i * cols + j] =
                fpk_recipe_value(r, codes[i * cols + j], scales[(i / h) * bc + j / w], global);
}

/* The largest finite magnitude of the N float32s at X (bits), and
 * whether one is not finite. */
static uint32_t amax_of(const float *x, size_t n, bool *nonfinite)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a;
        memcpy(&a, &x[i], sizeof a);
        a &= F32_MAG;
        if (a >= F32_INF)
            *nonfinite = true;
        else if (a > m)
            m = a;
    }
    return m;
}

/* The RHT of each row's runs of 16 elements of X into Z (may be X). */
static void rht_rows(const fpk_recipe *r, const float *x, size_t n, float *z)
{
    for (size_t i = 0; i < n; i += 16) {
        float in[16];
        memcpy(in, x + i, sizeof in);
        fpk_rht16(in, r->rht_signs, &fpk_bf16, z + i);
    }
}

int fpk_recipe_quantize(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                        const fpk_amax_history *h, fpk_quantized *q, fpk_recipe_stats *s,
                        fpk_error *err)
{
    if (!fpk_recipe_valid(r, err))
        return FPK_ESYNTAX;
    if (r->rht && cols % 16) {
        fail(err, "the RHT needs rows of a multiple of 16 elements");
        return FPK_ESYNTAX;
    }
    if (s && !fpki_recipe_same(&s->recipe, r)) {
        fail(err, "statistics of another recipe");
        return FPK_ESYNTAX;
    }
    size_t n = rows * cols;
    const float *in = x;
    float *own = NULL;
    if (r->rht) {
        float *z = q->xt;
        if (!z && !(z = own = malloc(n ? n * sizeof *z : 1))) {
            if (err) {
                err->code = FPK_ENOMEM;
                snprintf(err->msg, sizeof err->msg, "recipe: out of memory");
            }
            return FPK_ENOMEM;
        }
        rht_rows(r, x, n, z);
        in = z;
    } else if (q->xt && q->xt != x) {
        memcpy(q->xt, x, n * sizeof *x);
    }
    bool nf = false;
    uint32_t amax = amax_of(in, n, &nf);
    memcpy(&q->amax, &amax, sizeof amax);
    const fpki_tensor_plan t = tensor_plan(r, amax, h);
    q->global = t.global;
    q->flags = 0;
    size_t br, bc;
    fpk_recipe_blocks(r, rows, cols, &br, &bc);
    size_t bh = r->block_rows ? r->block_rows : rows, bw = r->block_cols ? r->block_cols : cols;
    /* FPK_RECIPE_SCALAR, set, keeps to the reference loop (for tests). */
    const char *scalar = getenv("FPK_RECIPE_SCALAR");
    const bool fast = fpki_recipe_fast(r) && !(scalar && *scalar && strcmp(scalar, "0"));
    uint32_t values[256];
    if (fast)
        fpki_recipe_table(r->elem, values);
    for (size_t bi = 0; bi < br; bi++) {
        size_t r0 = bi * bh, r1 = r0 + bh < rows ? r0 + bh : rows;
        for (size_t bj = 0; bj < bc; bj++) {
            size_t c0 = bj * bw, c1 = c0 + bw < cols ? c0 + bw : cols;
            bool bnf = false;
            uint32_t bmax = 0, bmin = 0;
            for (size_t i = r0; i < r1; i++) {
                uint32_t m = amax_of(in + i * cols + c0, c1 - c0, &bnf);
                bmax = m > bmax ? m : bmax;
            }
            const fpki_block_plan p = fpki_block_plan_of(r, &t, bmax, bnf);
            if (q->scales)
                q->scales[bi * bc + bj] = p.scale;
            if (fast && !(p.how == FPKI_SCALE_POW2 && p.k < -127)) {
                for (size_t i = r0; i < r1; i++) {
                    size_t at = i * cols + c0;
                    fpki_recipe_fast_block(r, &p, values, in + at, c1 - c0,
                                           q->codes ? q->codes + at : NULL,
                                           q->y ? q->y + at : NULL, &q->flags, s, &bmin);
                }
                if (s)
                    fpki_recipe_stats_block(s, &p, bmax, bmin);
                continue;
            }
            for (size_t i = r0; i < r1; i++)
                for (size_t j = c0; j < c1; j++) {
                    size_t at = i * cols + j;
                    uint32_t v, y;
                    unsigned fl;
                    memcpy(&v, &in[at], sizeof v);
                    uint8_t code = (uint8_t)round_element(r, &p, v, at, &fl);
                    y = p.nan ? UINT32_C(0x7fc00000) : element_value(r->elem, code, p.decode);
                    q->flags |= fl;
                    if (q->codes)
                        q->codes[at] = code;
                    if (q->y)
                        memcpy(&q->y[at], &y, sizeof y);
                    if (s) {
                        fpki_recipe_stats_element(s, &p, v, code, y, fl);
                        uint32_t a = v & F32_MAG;
                        if (a && a < F32_INF && (!bmin || a < bmin))
                            bmin = a;
                    }
                }
            if (s)
                fpki_recipe_stats_block(s, &p, bmax, bmin);
        }
    }
    free(own);
    return FPK_OK;
}
