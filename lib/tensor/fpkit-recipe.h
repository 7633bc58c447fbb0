/* fpkit's scaled-quantisation recipes (fpkit-recipes(7)): how a training
 * framework turns a float32 tensor into low-precision elements and scales
 * (FP8 with a per-tensor scale, DeepSeek-V3's blockwise FP8, OCP MX,
 * NVFP4), described by one descriptor, computed bit-exactly, encoded in the
 * layouts checkpoints use, and measured per block.  Included by
 * fpkit-tensor.h. */
#ifndef FPKIT_RECIPE_H
#define FPKIT_RECIPE_H

#include "fpkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a block's scale follows from its largest magnitude AMAX (a float32,
 * NaN and infinity excepted), for element format E with largest finite
 * value MAX = m * 2^emax.  The power-of-two rules give a scale X = 2^k and
 * store k in the scale format; each element V is rounded once, exactly as
 * V * 2^-k, into E (saturating).  Their names and results are torchao's
 * ScaleCalculationMode's (prototype/mx_formats, to_mx). */
typedef enum fpk_scale_rule {
    FPK_SCALE_FLOOR, /* k = floor(log2 AMAX) - emax (OCP MX v1.0 §6.3) */
    FPK_SCALE_CEIL,  /* k = ceil(log2 AMAX) - emax */
    FPK_SCALE_EVEN,  /* k = floor(log2 A) - emax, A = AMAX rounded to E's
                        precision, ties away from zero, on float32's bits:
                        a subnormal A counts as 2^-127 and one rounded
                        beyond float32's range as 2^128, as torchao's */
    FPK_SCALE_RCEIL, /* 2^k = the float32 quotient AMAX / MAX rounded up to a
                        power of two (cuBLAS "Computing scaling and
                        conversion factors ... with UE8M0 scales"): the
                        least k with AMAX / 2^k <= MAX */
    /* A float32 multiplier S (DeepSeek-V3 blockwise FP8, torchao's
     * amax_to_scale and torch_blockwise_scale_*): S = MAX / max(AMAX,
     * 1e-12) rounded once to float32 (the quotient in double, then to
     * float32: the same value), divided by 2^margin, and with pow2 rounded
     * down to a power of two; each element is V * S rounded to float32 and
     * then into E (two roundings, as the references compute it).  The
     * stored scale is the decoding one, 1/S rounded to float32.  With a
     * delayed history (fpk_amax_history) AMAX comes from the history, and
     * an AMAX of 0 there gives S = 1. */
    FPK_SCALE_AMAX,
    /* NVFP4's two-level rule as Transformer Engine computes it
     * (core_nvfp4.cuh): per tensor S_enc = 2688 / AMAX_tensor (448 * 6) in
     * float32, 1 where AMAX_tensor is 0 or S_enc underflows; per block the
     * decoding scale D = E4M3(min(AMAX * (S_enc * (1/6)), 448)), rounded to
     * nearest even, every step in float32; each element V * enc rounded to
     * float32, enc = min(1 / (D * (1/S_enc)), FLT_MAX), then into E2M1
     * (saturating, to nearest even).  The tensor's decoding scale is
     * 1/S_enc; a value decodes as P * (D * (1/S_enc)). */
    FPK_SCALE_NVFP4,
    /* The same computed as torchao's mx_formats.nvfp4_quantize does: per
     * tensor T = AMAX_tensor / 2688; D = E4M3(clamp((AMAX / 6) / T, 2^-6,
     * 448)); elements V * ((1/T) / D); a value decodes as P * (T * D). */
    FPK_SCALE_NVFP4_TORCHAO,
    /* The NVFP4 scales of FPK_SCALE_NVFP4, each element divided instead:
     * V / (D * (1/S_enc)) rounded to float32, then into E2M1. */
    FPK_SCALE_NVFP4_DIV,
} fpk_scale_rule;
#define FPK_SCALE_RULE_COUNT 8

/* "floor", "ceil", "even", "rceil", "amax", "nvfp4", "nvfp4-torchao",
 * "nvfp4-div"; "?" for another value. */
const char *fpk_scale_rule_name(fpk_scale_rule rule);

/* The most amaxes a delayed-scaling history holds. */
#define FPK_HISTORY_MAX 1024

/* A recipe.  Blocks tile a 2-D view of the tensor (rows x cols: a tensor
 * of shape (d0, ..., dn) is viewed as d0*...*d(n-1) rows of dn, the last
 * dimension): a block is block_rows x block_cols elements, where 0 means
 * the whole dimension, so 0 x 0 is the whole tensor, 1 x 32 an MX block
 * along the last dimension, 16 x 16 and 128 x 128 2-D tiles, 1 x 0 one
 * block per row and 0 x 1 one per column.  Blocks at the right and bottom
 * edges may be smaller. */
typedef struct fpk_recipe {
    const fpk_format *elem;  /* element format: at most 8 bits, not E8M0 */
    const fpk_format *scale; /* scale format: fpk_fp32, fpk_e8m0, fpk_e4m3
                                (used as UE4M3) or e5m3 (UE5M3) */
    fpk_scale_rule rule;
    uint32_t block_rows, block_cols;
    fpk_round round;         /* element rounding; scales always as above */
    int sr_bits;             /* FPK_SR: random bits, 1..32 */
    uint64_t seed;           /* FPK_SR: the stream; element i of the view
                                (row-major) rounds with counter i */
    int margin;              /* FPK_SCALE_AMAX: S divided by 2^margin */
    bool pow2;               /* FPK_SCALE_AMAX: S rounded down to 2^k */
    int history;             /* FPK_SCALE_AMAX: 0 current scaling, else
                                delayed from the last HISTORY amaxes */
    bool history_max;        /* delayed: their largest, else the latest */
    bool rht;                /* 16-point random Hadamard transform first */
    uint16_t rht_signs;      /* its signs: bit i set negates input i */
} fpk_recipe;

/* Transformer Engine's default RHT sign vector (get_wgrad_sign_vector's
 * fixed one), as fpk_recipe.rht_signs. */
#define FPK_RHT_TE_SIGNS 0xd7e8u

/* The recipe called S: a preset name (fpkit-recipes(7): "fp8-tensor-
 * current", "mxfp8-e4m3", "nvfp4", ...) or a spelled-out recipe
 * "ELEM/SCALE/RULE/ROWSxCOLS[,OPTION...]" ("e4m3/e8m0/floor/1x32",
 * "e2m1/e4m3/nvfp4/16x16,rht", "e4m3/fp32/amax/0x0,margin=1,pow2,
 * history=16,max", "e5m2/e8m0/rceil/1x32,round=sr,sr_bits=8,seed=3").
 * Case-insensitive.  Returns FPK_OK, or FPK_ESYNTAX with ERR naming what
 * is wrong and where; *R is untouched then. */
int fpk_recipe_parse(const char *s, fpk_recipe *r, fpk_error *err);

/* R's canonical spelled-out string (every field that differs from the
 * defaults), written like snprintf; fpk_recipe_parse reads it back to R.
 * Returns the length the whole text needs. */
size_t fpk_recipe_format(const fpk_recipe *r, char *buf, size_t len);

/* The preset names, in the man page's order, terminated by NULL. */
extern const char *const fpk_recipe_presets[];

/* Whether R is a recipe the functions below take (its fields in range,
 * its element and scale formats as described, NVFP4 rules with E2M1
 * elements and a UE4M3 scale); false with ERR's message otherwise. */
bool fpk_recipe_valid(const fpk_recipe *r, fpk_error *err);

/* The block grid of R over a ROWS x COLS view: *BROWS x *BCOLS blocks,
 * returned as their product (0 for an empty view). */
size_t fpk_recipe_blocks(const fpk_recipe *r, size_t rows, size_t cols, size_t *brows,
                         size_t *bcols);

/* A delayed-scaling history: the amaxes of the last LEN tensors. */
typedef struct fpk_amax_history {
    int len, count, next;
    double amax[FPK_HISTORY_MAX];
} fpk_amax_history;
/* An empty history of LEN (1..FPK_HISTORY_MAX) amaxes. */
void fpk_amax_history_init(fpk_amax_history *h, int len);
/* Records a tensor's amax, dropping the oldest when full. */
void fpk_amax_history_push(fpk_amax_history *h, double amax);
/* Their largest (MAX) or the latest; 0 for an empty history. */
double fpk_amax_history_amax(const fpk_amax_history *h, bool max);

/* What one quantisation produced: each array optional (NULL), sized by
 * the caller, row-major.  Block b = (i, j) of the grid is scales[i *
 * bcols + j]. */
typedef struct fpk_quantized {
    uint8_t *codes;   /* rows * cols element encodings, one a byte */
    uint32_t *scales; /* per block: the scale's encoding in R's scale
                         format (E8M0 k + 127 and 0xff, its NaN, for a
                         block holding a NaN or an infinity; UE4M3 the
                         E4M3 byte; FP32 its bits) */
    float *y;         /* rows * cols dequantised values (may be X) */
    float *xt;        /* rows * cols: the quantiser's input, X after the
                         RHT (may be X) */
    /* out: */
    uint32_t global;  /* the per-tensor decoding scale's float32 bits
                         (NVFP4 rules: 1/S_enc, or T); 1.0f otherwise */
    float amax;       /* the largest finite |X|: what a delayed history
                         records next */
    unsigned flags;   /* the elements' exception flags, ORed */
} fpk_quantized;

typedef struct fpk_recipe_stats fpk_recipe_stats;

/* Quantises the ROWS x COLS float32 view X under R: with rht, each run of
 * 16 elements along a row (COLS a multiple of 16) is transformed first
 * (fpk_rht16, rounded to bfloat16 as Transformer Engine does); then per
 * block the scale by R's rule and every element rounded into R->elem
 * under R->round.  H is the delayed history (NULL for current scaling; R
 * with history needs it).  Results go to Q's arrays; S, if given, gets
 * the statistics added (struct fpk_recipe_stats).  A block holding a NaN or
 * an infinity gets the NaN scale (E8M0 0xff, UE4M3 0x7f, FP32 NaN) and
 * ELEM's canonical NaN in every element.  Results are the same on every
 * CPU and for every split of work (fpk_recipe_quantize_rows).  Returns
 * FPK_OK, FPK_ESYNTAX for a recipe fpk_recipe_valid refuses or a view the
 * RHT cannot take, or FPK_ENOMEM, with ERR's message. */
int fpk_recipe_quantize(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                        const fpk_amax_history *h, fpk_quantized *q, fpk_recipe_stats *s,
                        fpk_error *err);

/* The extremes of a tensor, or of a band of its rows, as a recipe sees
 * them: what the scales of blocks spanning it follow from. */
typedef struct fpk_recipe_range {
    float amax;     /* the largest finite |X|, 0 if none */
    float amin;     /* the least nonzero finite |X|, 0 if none */
    bool nonfinite; /* whether one is an infinity or a NaN */
} fpk_recipe_range;

/* Combines into *E the extremes of the ROWS x COLS float32 view X as R
 * quantises it: after the RHT where R has it.  Start from {0}; bands of
 * rows scanned apart (on separate threads) combine into the whole's.
 * Returns FPK_OK, or FPK_ESYNTAX as fpk_recipe_quantize would. */
int fpk_recipe_scan(const fpk_recipe *r, const float *x, size_t rows, size_t cols,
                    fpk_recipe_range *e, fpk_error *err);

/* What one tensor's quantisation fixes before its blocks are done: its
 * extremes, NVFP4's per-tensor scales, a delayed history's amax.  With a
 * plan, bands of whole block rows can be quantised by separate calls of
 * fpk_recipe_quantize_rows (on separate threads), whose results are those
 * of one fpk_recipe_quantize and whose statistics, merged in any order
 * (fpk_recipe_stats_merge), are its statistics. */
typedef struct fpk_recipe_plan {
    fpk_recipe recipe;
    size_t rows, cols;
    fpk_recipe_range tensor; /* the whole view's extremes */
    uint32_t global;         /* the per-tensor decoding scale, float32 bits
                                (as fpk_quantized.global) */
    /* derived by fpk_recipe_plan_init, for the library: */
    uint32_t g6;             /* NVFP4: S_enc * (1/6) */
    uint32_t inv_t;          /* NVFP4 (torchao): 1 / T */
    bool delayed;            /* the amax of blocks comes from a history */
    double delayed_amax;
} fpk_recipe_plan;

/* *P := the plan of R over a ROWS x COLS view whose extremes are *TENSOR
 * (fpk_recipe_scan of the whole view), with H the delayed history as for
 * fpk_recipe_quantize.  Returns FPK_OK, or FPK_ESYNTAX as
 * fpk_recipe_quantize would. */
int fpk_recipe_plan_init(fpk_recipe_plan *p, const fpk_recipe *r, size_t rows, size_t cols,
                         const fpk_recipe_range *tensor, const fpk_amax_history *h,
                         fpk_error *err);

/* Quantises rows ROW0 .. ROW0 + NROWS - 1 of the view X (its first row at
 * X) under plan P, as fpk_recipe_quantize does them: Q's arrays are the
 * whole view's, written where these rows' elements and blocks are (a
 * block's scale by the call that holds its first row); Q->flags := these
 * elements' flags, Q->amax and Q->global the plan's; S, if given, gets
 * their statistics (the blocks counted by the call that holds their
 * first row).  ROW0 must be a multiple of the block height, and so must
 * NROWS unless the band ends the view; a block of every row (ROWS x 0
 * and 0 x 0) may be split only where it spans the whole row.  Returns
 * FPK_OK, or FPK_ESYNTAX with ERR's message for rows that are not such a
 * band. */
int fpk_recipe_quantize_rows(const fpk_recipe_plan *p, const float *x, size_t row0, size_t nrows,
                             fpk_quantized *q, fpk_recipe_stats *s, fpk_error *err);

/* The value of element code P in block scale SCALE (an encoding of R's
 * scale format) and tensor decoding scale GLOBAL (float32 bits), as
 * float32: P's value times the block's decoding scale (2^k; 1/S as
 * stored; D * GLOBAL rounded to float32 for NVFP4), rounded once to
 * float32; NaN for a NaN scale. */
float fpk_recipe_value(const fpk_recipe *r, uint8_t p, uint32_t scale, uint32_t global);

/* Y := the ROWS x COLS values of CODES in the blocks of SCALES
 * (fpk_recipe_value each). */
void fpk_recipe_dequantize(const fpk_recipe *r, const uint8_t *codes, const uint32_t *scales,
                           uint32_t global, size_t rows, size_t cols, float *y);

/* Packed layouts, as public checkpoints store them: elements of 4 bits
 * two to a byte, element 2i in the low nibble and 2i+1 in the high one
 * (an odd count leaves the last high nibble 0); wider elements one to a
 * byte.  Scales one byte each (E8M0, UE4M3, UE5M3's low byte), or four
 * (float32, little-endian).  fpk_recipe_encode writes N codes into OUT
 * and returns the bytes written (fpk_recipe_code_bytes); _decode reads
 * them back. */
size_t fpk_recipe_code_bytes(const fpk_recipe *r, size_t n);
size_t fpk_recipe_encode(const fpk_recipe *r, const uint8_t *codes, size_t n, uint8_t *out);
void fpk_recipe_decode(const fpk_recipe *r, const uint8_t *in, size_t n, uint8_t *codes);
size_t fpk_recipe_scale_bytes(const fpk_recipe *r, size_t nblocks);
size_t fpk_recipe_encode_scales(const fpk_recipe *r, const uint32_t *scales, size_t nblocks,
                                uint8_t *out);
void fpk_recipe_decode_scales(const fpk_recipe *r, const uint8_t *in, size_t nblocks,
                              uint32_t *scales);

/* The 16-point random Hadamard transform: Z_j = sum_i X_i * s_i *
 * H_ij / 4, s_i = -1 where bit i of SIGNS is set, H the Sylvester
 * Hadamard matrix (H_ij = (-1)^popcount(i & j)), the sum exact and
 * rounded once into F (fpk_bf16 as Transformer Engine, or fpk_fp32) to
 * nearest even (an overflow gives an infinity); returned as float32.  A
 * NaN or infinite input gives the canonical NaN in every output. */
void fpk_rht16(const float *x, uint16_t signs, const fpk_format *f, float *z);

/* An exact sum of nonnegative terms that are multiples of 2^-298 (as
 * the squares of float32 values and of their differences in double, and
 * their sums in double, are), in fixed point: bit 0 of limb 0 weighs
 * 2^-298, and 640 bits hold the sum of fewer than 2^64 such squares, each
 * below 2^258.  Infinite and NaN terms are noted apart. */
#define FPK_RECIPE_SUM_LIMBS 10
typedef struct fpk_recipe_sum {
    uint64_t limb[FPK_RECIPE_SUM_LIMBS]; /* least significant first */
    uint32_t inf, nan;                   /* whether such a term was added */
} fpk_recipe_sum;

/* Statistics of one recipe over tensors: element counts, the error's
 * energy (SQNR), and per block the scale and its dynamic range.  Counts
 * and sums are exact, so that fpk_recipe_stats_merge of the statistics of
 * parts (whole blocks, or bands of fpk_recipe_quantize_rows) equals those
 * of the whole, bit for bit, whatever the order.  The sums' terms are
 * those of each block's run along a row: its elements' squares, element
 * i of the run in lane i % 16, each lane summed in order in double and
 * the lanes folded as L[i] += L[i + h] for h = 8, 4, 2, 1. */
#define FPK_SCALE_LOG2_MIN (-160) /* scale histogram: floor(log2 scale) */
#define FPK_SCALE_LOG2_BINS 320
#define FPK_RANGE_BINS 300        /* dynamic range: floor(log2(max/min)) */

struct fpk_recipe_stats {
    fpk_recipe recipe;
    uint64_t count;      /* elements */
    uint64_t zeros;      /* exact zeros in */
    uint64_t nonfinite;  /* infinities and NaNs in */
    uint64_t flushed;    /* nonzero finite elements that became zeros
                            (either sign) */
    uint64_t saturated;  /* ... whose scaled value exceeded max finite
                            (clipped to it) */
    uint64_t subnormal;  /* ... stored as nonzero subnormals */
    double x2, e2;       /* sums of X^2 and (Y - X)^2 over finite elements
                            of finite blocks: SQNR = 10 log10(x2 / e2);
                            x2_sum and e2_sum rounded to nearest */
    fpk_recipe_sum x2_sum, e2_sum; /* the same, exact */
    uint64_t blocks;     /* blocks */
    uint64_t zero_blocks;      /* blocks of zeros only */
    uint64_t nan_blocks;       /* blocks with an infinity or a NaN */
    uint64_t scale_underflow;  /* nonzero blocks whose scale was clamped
                                  at the scale format's least value or
                                  rounded to zero or below its normals */
    uint64_t scale_saturated;  /* blocks whose scale was clamped at its
                                  largest */
    double scale_min, scale_max; /* decoding scales of nonzero finite
                                    blocks (0 when none) */
    uint64_t scale_hist[FPK_SCALE_LOG2_BINS]; /* their floor(log2) */
    uint64_t range_hist[FPK_RANGE_BINS]; /* per nonzero finite block,
                                            floor(log2(largest / least
                                            nonzero |X|)), clamped */
};

/* Empty statistics for R. */
void fpk_recipe_stats_init(fpk_recipe_stats *s, const fpk_recipe *r);
/* INTO += FROM; false (no change) unless both are of the same recipe. */
bool fpk_recipe_stats_merge(fpk_recipe_stats *into, const fpk_recipe_stats *from);
/* SQNR in dB: 10 log10(x2 / e2); +inf when e2 is 0. */
double fpk_recipe_stats_sqnr(const fpk_recipe_stats *s);
/* As JSON text (malloc'd; NULL if out of memory) and back, exactly:
 * fpk_recipe_stats_from_json(fpk_recipe_stats_to_json(s)) == s. */
char *fpk_recipe_stats_to_json(const fpk_recipe_stats *s);
int fpk_recipe_stats_from_json(fpk_recipe_stats *s, const char *json, fpk_error *err);

#ifdef __cplusplus
}
#endif

#endif
