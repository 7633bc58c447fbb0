/* The elements of one block under FPK_RNE, fast: the scaling step in
 * host float32 arithmetic (IEEE multiplication and division, correctly
 * rounded to nearest even in the default environment, fpki_fp_default:
 * the results of fpki_f32_mul and fpki_f32_div exactly), the rounding
 * into the element format by the kernels' branch-free fpki_round_one, values
 * from a table of the codes' float32 values.  The same bits, flags and
 * statistics as recipe.c's element loop; tests/check_recipe compares
 * them. */
#include <string.h>

#include "convert-body.h"
#include "recipe-impl.h"

bool fpki_recipe_fast(const fpk_recipe *r)
{
    return r->round == FPK_RNE;
}

void fpki_recipe_table(const fpk_format *e, uint32_t *values)
{
    fpk_ctx c = fpk_ctx_default();
    for (unsigned p = 0; p < 256; p++)
        values[p] = p >> e->width ? 0 : (uint32_t)fpk_convert(&fpk_fp32, e, p, &c);
}

static float as_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t as_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The scaling step of plan P for V: POW2 as V * 2^-k, which is exact
 * but where the product falls below float32's normals; there it is
 * rounded, but a product below 2^-126 rounds to zero (with underflow and
 * inexact) in every element format here either way under RNE, as their
 * least subnormals are far above it. */
static uint32_t scaled(const fpki_block_plan *p, float m, uint32_t v)
{
    float x = as_float(v);
    return as_bits(p->how == FPKI_SCALE_DIV ? x / m : x * m);
}

void fpki_recipe_fast_block(const fpk_recipe *r, const fpki_block_plan *p,
                            const uint32_t *values, const float *x, size_t n, uint8_t *codes,
                            float *y, unsigned *flags, fpk_recipe_stats *s, uint32_t *amin)
{
    const fpk_format *e = r->elem;
    float m;
    if (p->how == FPKI_SCALE_POW2) {
        fpk_ctx c = fpk_ctx_default();
        m = as_float((uint32_t)fpki_round_pack(&fpk_fp32, false, -p->k, 0, 1, &c));
    } else {
        m = as_float(p->m);
    }
    const float decode = as_float(p->decode);
    fpki_fpenv env;
    fpki_fp_default(&env);
    unsigned fl = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = as_bits(x[i]), f, code;
        if (p->nan) {
            code = (uint32_t)e->nan;
            f = 0;
        } else {
            code = fpki_round_one(e, FPK_RNE, false, false, 0, 0, 1, 0, 0, scaled(p, m, v), 0, &f,
                              NULL);
        }
        uint32_t yv = p->nan ? UINT32_C(0x7fc00000) : as_bits(as_float(values[code]) * decode);
        fl |= f;
        if (codes)
            codes[i] = (uint8_t)code;
        if (y)
            memcpy(&y[i], &yv, sizeof yv);
        if (s) {
            fpki_recipe_stats_element(s, p, v, (uint8_t)code, yv, f);
            uint32_t a = v & FPKI_F32_MAGNITUDE;
            if (a && a < FPKI_F32_INFINITY && (!*amin || a < *amin))
                *amin = a;
        }
    }
    fpki_fp_restore(&env);
    *flags |= fl;
}
