/* Recipes' scales (fpkit-recipe.h): per block, the scale the recipe's
 * rule derives from the block's largest magnitude, and the tensor's plan;
 * the values of codes.  Every step is computed by the core on float32 or
 * float64 bits, in the order the reference implementations compute it
 * (fpk_scale_rule says which), never in host floating point: this is the
 * general path, which recipe_fast.c's keys are checked against. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe-impl.h"

#define F32_SIXTH UINT32_C(0x40c00000)   /* 6.0f */
#define F32_NVFP4 UINT32_C(0x45280000)   /* 2688.0f = 448 * 6 */

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

int fpki_recipe_fail(fpk_error *err, int code, const char *msg)
{
    if (err) {
        err->code = code;
        snprintf(err->msg, sizeof err->msg, "recipe: %s", msg);
    }
    return code;
}

static bool fail(fpk_error *err, const char *msg)
{
    fpki_recipe_fail(err, FPK_ESYNTAX, msg);
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
    if (fpki_nvfp4_rule(r->rule) && (e != &fpk_e2m1 || sf != &fpk_e4m3))
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

/* The power-of-two rules' k, unclamped (INT32_MIN for a block of zeros,
 * or a quotient that is zero). */
static int64_t pow2_key(const fpk_recipe *r, uint32_t amax)
{
    const fpk_format *e = r->elem;
    if (!amax)
        return INT32_MIN;
    switch (r->rule) {
    case FPK_SCALE_FLOOR:
        return floor_log2(amax) - e->emax;
    case FPK_SCALE_CEIL:
        return floor_log2(amax) + !is_pow2(amax) - e->emax;
    case FPK_SCALE_EVEN:
        /* torchao's rounding on the bits: the carry may reach the
         * exponent, and the field alone is read (0 as 2^-127). */
        return (int)((amax + (UINT32_C(1) << (22 - e->man_bits))) >> 23) - 127 - e->emax;
    default: { /* FPK_SCALE_RCEIL */
        uint32_t q = fpki_f32_div(amax, to_f32(e, e->max_finite));
        return q ? floor_log2(q) + !is_pow2(q) : INT32_MIN;
    }
    }
}

fpki_plan_key fpki_plan_key_of(const fpk_recipe_plan *t, uint32_t amax)
{
    const fpk_recipe *r = &t->recipe;
    const fpk_format *e = r->elem, *sf = r->scale;
    fpki_plan_key key = {.k = INT32_MIN};
    if (fpki_pow2_rule(r->rule)) {
        key.k = pow2_key(r, amax);
        return key;
    }
    /* the decoding scale's quotient, clamped to the scale format's
     * normal range (the least only where the rule clamps it) */
    uint32_t q, lo = 0, hi = to_f32(sf, sf->max_finite);
    if (r->rule == FPK_SCALE_NVFP4_TORCHAO) {
        q = fpki_f32_div(fpki_f32_div(amax, F32_SIXTH), t->global);
        lo = to_f32(sf, (fpk_bits)1 << sf->man_bits);
    } else if (fpki_nvfp4_rule(r->rule)) {
        q = fpki_f32_mul(amax, t->g6);
    } else { /* FPK_SCALE_AMAX with a small scale: torchao's one level */
        q = fpki_f32_div(amax, to_f32(e, e->max_finite));
        lo = to_f32(sf, (fpk_bits)1 << sf->man_bits);
    }
    if (q < lo) {
        key.under = amax != 0;
        q = lo;
    } else if (q > hi) {
        key.sat = true;
        q = hi;
    }
    key.code = (uint32_t)from_f32(sf, q);
    return key;
}

fpki_block_plan fpki_plan_of_key(const fpk_recipe_plan *t, fpki_plan_key key, uint32_t amax)
{
    const fpk_recipe *r = &t->recipe;
    const fpk_format *sf = r->scale;
    fpki_block_plan p = {.how = FPKI_SCALE_MUL, .zero = amax == 0};
    if (fpki_pow2_rule(r->rule)) {
        /* clamped to the scale format's powers of two */
        int64_t k = key.k;
        int lo = pow2_min(sf), hi = sf->emax;
        p.how = FPKI_SCALE_POW2;
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
    p.under = key.under;
    p.sat = key.sat;
    p.scale = key.code;
    uint32_t d = to_f32(sf, p.scale);
    if (!fpki_nvfp4_rule(r->rule)) { /* FPK_SCALE_AMAX: elements times 1/D */
        p.decode = d;
        p.m = fpki_f32_div(FPKI_F32_ONE, d);
        return p;
    }
    if (r->rule != FPK_SCALE_NVFP4_TORCHAO && fpki_classify(sf, p.scale) != FPK_CLASS_NORMAL)
        p.under |= !p.zero;
    p.decode = fpki_f32_mul(d, t->global);
    if (r->rule == FPK_SCALE_NVFP4_TORCHAO) {
        p.m = fpki_f32_div(t->inv_t, d);
    } else if (p.decode == 0) {
        p.m = FPKI_F32_MAXF; /* 1/0, clamped to FLT_MAX */
    } else if (r->rule == FPK_SCALE_NVFP4_DIV) {
        p.how = FPKI_SCALE_DIV;
        p.m = p.decode;
    } else {
        uint32_t enc = fpki_f32_div(FPKI_F32_ONE, p.decode);
        p.m = enc > FPKI_F32_MAXF ? FPKI_F32_MAXF : enc;
    }
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

fpki_block_plan fpki_amax_plan(uint32_t m, bool zero)
{
    fpki_block_plan p = {.how = FPKI_SCALE_MUL, .zero = zero, .m = m};
    p.decode = p.scale = fpki_f32_div(FPKI_F32_ONE, m);
    return p;
}

fpki_block_plan fpki_block_plan_of(const fpk_recipe_plan *t, uint32_t amax, bool nonfinite)
{
    const fpk_recipe *r = &t->recipe;
    if (nonfinite) {
        fpki_block_plan p = {.how = FPKI_SCALE_MUL, .nan = true, .decode = FPKI_F32_NAN};
        p.scale = r->scale == &fpk_fp32 ? FPKI_F32_NAN : (uint32_t)r->scale->nan;
        return p;
    }
    if (fpki_keyed(r))
        return fpki_plan_of_key(t, fpki_plan_key_of(t, amax), amax);
    float f;
    memcpy(&f, &amax, sizeof f);
    double a = t->delayed ? t->delayed_amax : (double)f < 1e-12 ? 1e-12 : (double)f;
    uint32_t m = t->delayed && !(a > 0 && a <= DBL_MAX) ? FPKI_F32_ONE : amax_multiplier(r, a);
    return fpki_amax_plan(m, amax == 0);
}

/* The tensor's plan: NVFP4's global scales from its amax, a delayed
 * amax from H. */
int fpk_recipe_plan_init(fpk_recipe_plan *p, const fpk_recipe *r, size_t rows, size_t cols,
                         const fpk_recipe_range *tensor, const fpk_amax_history *h,
                         fpk_error *err)
{
    if (!fpk_recipe_valid(r, err))
        return FPK_ESYNTAX;
    if (r->rht && cols % 16)
        return fpki_recipe_fail(err, FPK_ESYNTAX,
                                "the RHT needs rows of a multiple of 16 elements");
    memset(p, 0, sizeof *p);
    p->recipe = *r;
    p->rows = rows;
    p->cols = cols;
    p->tensor = *tensor;
    p->global = FPKI_F32_ONE;
    uint32_t amax;
    memcpy(&amax, &tensor->amax, sizeof amax);
    amax &= FPKI_F32_MAGNITUDE;
    if (r->rule == FPK_SCALE_NVFP4_TORCHAO) {
        p->global = amax ? fpki_f32_div(amax, F32_NVFP4) : FPKI_F32_ONE;
        p->inv_t = fpki_f32_div(FPKI_F32_ONE, p->global);
    } else if (fpki_nvfp4_rule(r->rule)) {
        uint32_t g = fpki_f32_div(F32_NVFP4, amax);
        g = g > FPKI_F32_MAXF ? FPKI_F32_MAXF : g;
        if (amax == 0 || g == 0)
            g = FPKI_F32_ONE;
        p->global = fpki_f32_div(FPKI_F32_ONE, g);
        p->g6 = fpki_f32_mul(g, fpki_f32_div(FPKI_F32_ONE, F32_SIXTH));
    }
    if (r->history) {
        p->delayed = true;
        p->delayed_amax = h ? fpk_amax_history_amax(h, r->history_max) : 0;
    }
    return FPK_OK;
}

uint32_t fpki_recipe_element_value(const fpk_format *e, uint8_t p, uint32_t decode)
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
    if (fpki_nvfp4_rule(r->rule))
        decode = fpki_f32_mul(decode, global);
    y = fpki_recipe_element_value(r->elem, p, decode);
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

