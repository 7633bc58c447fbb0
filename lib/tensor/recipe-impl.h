/* Internals of the recipes (recipe*.c, hadamard.c); not installed. */
#ifndef FPKIT_RECIPE_IMPL_H
#define FPKIT_RECIPE_IMPL_H

#include <string.h>

#include "core-impl.h"
#include "fpkit-tensor.h"
#include "kernels.h"

#define FPKI_F32_ONE UINT32_C(0x3f800000)
#define FPKI_F32_MAXF UINT32_C(0x7f7fffff)
#define FPKI_F32_MAGNITUDE UINT32_C(0x7fffffff)
#define FPKI_F32_INFINITY UINT32_C(0x7f800000)
#define FPKI_F32_NAN UINT32_C(0x7fc00000)

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

/* A float32's bits, and the float32 of bits. */
static inline uint32_t fpki_f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static inline float fpki_f32_value(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* Float32 arithmetic on bits, rounded to nearest even by the core. */
uint32_t fpki_f32_mul(uint32_t a, uint32_t b);
uint32_t fpki_f32_div(uint32_t a, uint32_t b);

/* The rules' plans come in two steps: a key from the block's amax (the
 * scale exponent k of the power-of-two rules before it is clamped, or the
 * code of a small scale format and whether its quotient was clamped),
 * then the plan from the key.  The first step is all the arithmetic on
 * amax; recipe_fast.c does it in host arithmetic and keeps the plans of
 * the keys it meets.  FPK_SCALE_AMAX with an fp32 scale has no key. */
typedef struct fpki_plan_key {
    int64_t k;         /* power-of-two rules: k unclamped (INT32_MIN for
                          a block of zeros) */
    uint32_t code;     /* small scale formats: the scale's encoding */
    bool under, sat;   /* ... whose quotient was clamped */
} fpki_plan_key;

/* Whether R's rule derives a power of two; is one of the NVFP4 rules;
 * has keys (fpki_plan_key). */
static inline bool fpki_pow2_rule(fpk_scale_rule rule)
{
    return rule <= FPK_SCALE_RCEIL;
}

static inline bool fpki_nvfp4_rule(fpk_scale_rule rule)
{
    return rule >= FPK_SCALE_NVFP4 && rule < FPK_SCALE_RULE_COUNT;
}

static inline bool fpki_keyed(const fpk_recipe *r)
{
    return !(r->rule == FPK_SCALE_AMAX && r->scale == &fpk_fp32);
}

/* The key of a block of R whose largest magnitude has float32 bits AMAX
 * (finite; R keyed), by the core; and the plan of KEY for a block of
 * amax AMAX (which only says whether it is zero). */
fpki_plan_key fpki_plan_key_of(const fpk_recipe_plan *t, uint32_t amax);
fpki_block_plan fpki_plan_of_key(const fpk_recipe_plan *t, fpki_plan_key key, uint32_t amax);

/* FPK_SCALE_AMAX with an fp32 scale: the plan for a multiplier M, of a
 * block of zeros (ZERO) or not. */
fpki_block_plan fpki_amax_plan(uint32_t m, bool zero);

/* The plan of a block of T's recipe whose largest magnitude has float32
 * bits AMAX (finite), or that holds a non-finite value (NONFINITE). */
fpki_block_plan fpki_block_plan_of(const fpk_recipe_plan *t, uint32_t amax, bool nonfinite);

/* The float32 Q (not negative, at most F's largest value) rounded into F
 * to nearest even, by integer arithmetic (F no wider than 16 bits, with
 * normal numbers). */
uint32_t fpki_f32_to_small(const fpk_format *f, uint32_t q);

/* P's value in E times DECODE (float32 bits), rounded once to float32. */
uint32_t fpki_recipe_element_value(const fpk_format *e, uint8_t p, uint32_t decode);

/* Whether two recipes quantise alike: their canonical strings agree. */
bool fpki_recipe_same(const fpk_recipe *a, const fpk_recipe *b);

/* The lanes of one block's run along a row, for its statistics' sums
 * (fpk_recipe_stats). */
typedef struct fpki_recipe_lanes {
    double x2[16], e2[16];
} fpki_recipe_lanes;

/* Statistics (recipe_stats.c): one element, its input X (float32 bits),
 * code P, value Y and rounding's flags, in a block of plan BP, its terms
 * into lane LANE of L; a block's run's lanes folded into the sums; the
 * folded sums of N runs added (SUMS[2j] and SUMS[2j + 1], as
 * fpki_blockq_fn gives them);
 * one block, of largest and least nonzero magnitudes AMAX and AMIN
 * (float32 bits; 0 for a block of zeros); and x2 and e2 rounded from the
 * exact sums. */
void fpki_recipe_stats_element(fpk_recipe_stats *s, const fpki_block_plan *bp, uint32_t x,
                               uint8_t p, uint32_t y, unsigned flags, fpki_recipe_lanes *l,
                               int lane);
void fpki_recipe_stats_run(fpk_recipe_stats *s, fpki_recipe_lanes *l);
void fpki_recipe_stats_sums(fpk_recipe_stats *s, const double *sums, size_t n);
void fpki_recipe_stats_block(fpk_recipe_stats *s, const fpki_block_plan *bp, uint32_t amax,
                             uint32_t amin);
void fpki_recipe_stats_round(fpk_recipe_stats *s);

/* An exact sum's bit 0 weighs 2^-FPKI_SUM_LSB; its value rounded to the
 * nearest double (NaN, infinity where such a term was added). */
#define FPKI_SUM_LSB 298
double fpki_recipe_sum_value(const fpk_recipe_sum *s);

/* The N-limb integer W (least significant first) times 2^LSB, negated
 * with NEG, rounded into F to nearest even. */
fpk_bits fpki_limbs_round(const uint64_t *w, int n, int64_t lsb, bool neg, const fpk_format *f);

/* Which path quantises: the general one (every scale and element by the
 * core, in recipe_run.c), or the kernels of a set (recipe_fast.c). */
typedef struct fpki_recipe_path {
    bool general;
    fpki_isa isa;
} fpki_recipe_path;

/* fpk_recipe_quantize, fpk_recipe_scan and fpk_recipe_quantize_rows on a
 * path chosen by the caller (the tests compare them); the public ones
 * take the best kernels for what R asks and this CPU runs. */
int fpki_recipe_quantize(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                         const fpk_amax_history *h, fpk_quantized *q, fpk_recipe_stats *s,
                         fpk_error *err, fpki_recipe_path path);
int fpki_recipe_scan(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                     fpk_recipe_range *e, fpk_error *err, fpki_recipe_path path);
int fpki_recipe_quantize_rows(const fpk_recipe_plan *p, const float *x, size_t row0,
                              size_t nrows, fpk_quantized *q, fpk_recipe_stats *s,
                              fpk_error *err, fpki_recipe_path path);

/* The fast path (recipe_fast.c): whether it takes R's elements (RNE, or
 * SR); and the rows ROW0 .. ROW0 + NROWS - 1 of T's view at IN (their
 * first row, already transformed where R has the RHT), as
 * fpki_recipe_quantize_rows does them (Q's flags ORed in), with the
 * kernels of set ISA. */
bool fpki_recipe_fast(const fpk_recipe *r);
int fpki_recipe_fast_rows(const fpk_recipe_plan *t, const float *in, size_t row0, size_t nrows,
                          fpk_quantized *q, fpk_recipe_stats *s, fpki_isa isa);

/* The rows ROW0 .. END - 1 of a view COLS wide, as blocks BH x BW of a
 * grid BROWS x BCOLS: PART_OF_ONE where they are the view's one block
 * seen in part (its extremes then the tensor's, from the plan). */
typedef struct fpki_recipe_band {
    size_t row0, end, cols;
    size_t bh, bw, brows, bcols;
    bool part_of_one;
} fpki_recipe_band;
fpki_recipe_band fpki_recipe_band_of(const fpk_recipe_plan *t, size_t row0, size_t nrows);

/* Block (BI, BJ) of band B: its rows R0 .. R1 - 1 in the band, its
 * columns C0 .. C1 - 1, and whether its first row is in the band (FIRST:
 * its scale and statistics are this band's to give). */
typedef struct fpki_recipe_block {
    size_t r0, r1, c0, c1;
    bool first;
} fpki_recipe_block;
fpki_recipe_block fpki_recipe_block_at(const fpki_recipe_band *b, size_t bi, size_t bj);

/* The general path (recipe_run.c), one step at a time: block K's plan
 * from its elements in band B of T at IN (the band's first row), *BMAX
 * and *BMIN its extremes as float32 bits; and element V (float32 bits) of
 * a block of plan P rounded by the core with SR counter AT: its code, *Y
 * its value (float32 bits), *FLAGS its flags. */
fpki_block_plan fpki_recipe_general_plan(const fpk_recipe_plan *t, const fpki_recipe_band *b,
                                         const fpki_recipe_block *k, const float *in,
                                         uint32_t *bmax, uint32_t *bmin);
uint8_t fpki_recipe_general_element(const fpk_recipe *r, const fpki_block_plan *p, uint32_t v,
                                    uint64_t at, uint32_t *y, unsigned *flags);

/* The extremes of the N float32s at X into *E (recipe_run.c), with the
 * kernels of set ISA or (GENERAL) by a plain loop. */
void fpki_recipe_extremes(const float *x, size_t n, fpk_recipe_range *e, fpki_recipe_path path);

/* The RHT (hadamard.c) of the N float32s at X (runs of 16) into Z (may be
 * X): with the kernels of set ISA, the runs they cannot round exactly by
 * fpk_rht16; or (GENERAL) fpk_rht16 for all. */
void fpki_rht_rows(const float *x, size_t n, uint16_t signs, float *z, fpki_recipe_path path);

/* An error ERR of CODE with message "recipe: MSG"; returns CODE. */
int fpki_recipe_fail(fpk_error *err, int code, const char *msg);

#endif
