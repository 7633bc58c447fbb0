/* Internals of the recipes (recipe*.c, hadamard.c); not installed. */
#ifndef FPKIT_RECIPE_IMPL_H
#define FPKIT_RECIPE_IMPL_H

#include "core-impl.h"
#include "fpkit-tensor.h"

#define FPKI_F32_ONE UINT32_C(0x3f800000)
#define FPKI_F32_MAXF UINT32_C(0x7f7fffff)
#define FPKI_F32_MAGNITUDE UINT32_C(0x7fffffff)
#define FPKI_F32_INFINITY UINT32_C(0x7f800000)

/* How the elements of one block are scaled before they are rounded. */
typedef enum fpki_scaling {
    FPKI_SCALE_POW2, /* exactly, V * 2^-k, rounded once */
    FPKI_SCALE_MUL,  /* V * m rounded to float32, then into the format */
    FPKI_SCALE_DIV,  /* V / m rounded to float32, then into the format */
} fpki_scaling;

/* One block's scale and how its elements are scaled. */
typedef struct fpki_block_plan {
    bool nan;          /* an infinity or a NaN: the NaN scale */
    bool zero;         /* zeros only */
    bool under, sat;   /* the scale was clamped at its least or largest */
    fpki_scaling how;
    int k;             /* FPKI_SCALE_POW2 */
    uint32_t m;        /* float32 bits of the multiplier or divisor */
    uint32_t scale;    /* the stored encoding */
    uint32_t decode;   /* the block's decoding scale, float32 bits (with
                          the tensor's for NVFP4): values are P * decode */
} fpki_block_plan;

/* What the whole tensor fixes: NVFP4's global scales, a delayed amax. */
typedef struct fpki_tensor_plan {
    uint32_t global;   /* the stored per-tensor decoding scale */
    uint32_t g6;       /* NVFP4: S_enc * (1/6) */
    uint32_t inv_t;    /* NVFP4 (torchao): 1 / T */
    bool delayed;
    double amax;       /* delayed: the history's amax */
} fpki_tensor_plan;

/* Float32 arithmetic on bits, rounded to nearest even by the core. */
uint32_t fpki_f32_mul(uint32_t a, uint32_t b);
uint32_t fpki_f32_div(uint32_t a, uint32_t b);

/* The plan of a block of R whose largest magnitude has float32 bits AMAX
 * (finite), or that holds a non-finite value (NONFINITE). */
fpki_block_plan fpki_block_plan_of(const fpk_recipe *r, const fpki_tensor_plan *t,
                                   uint32_t amax, bool nonfinite);

/* Whether two recipes quantise alike: their canonical strings agree. */
bool fpki_recipe_same(const fpk_recipe *a, const fpk_recipe *b);

/* Statistics (recipe_stats.c): one element, its input X (float32 bits),
 * code P, value Y and rounding's flags, in a block of plan BP; and one
 * block, of largest and least nonzero magnitudes AMAX and AMIN (float32
 * bits; 0 for a block of zeros). */
void fpki_recipe_stats_element(fpk_recipe_stats *s, const fpki_block_plan *bp, uint32_t x,
                               uint8_t p, uint32_t y, unsigned flags);
void fpki_recipe_stats_block(fpk_recipe_stats *s, const fpki_block_plan *bp, uint32_t amax,
                             uint32_t amin);

/* The fast element loop (recipe_fast.c): whether it takes R's elements
 * (FPK_RNE); VALUES[p] := the float32 bits of code P of E (256 of them);
 * and the N elements X of one block row of plan P (not a POW2 plan of k
 * below -127), their codes, values, flags and statistics as recipe.c's
 * loop gives them, *AMIN the least nonzero finite magnitude so far. */
bool fpki_recipe_fast(const fpk_recipe *r);
void fpki_recipe_table(const fpk_format *e, uint32_t *values);
void fpki_recipe_fast_block(const fpk_recipe *r, const fpki_block_plan *p,
                            const uint32_t *values, const float *x, size_t n, uint8_t *codes,
                            float *y, unsigned *flags, fpk_recipe_stats *s, uint32_t *amin);

#endif
