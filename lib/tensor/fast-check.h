/* Sample checks of the tensor layer's fast paths against their general
 * paths as the library runs (fast_check.c), as MPFR re-checks its special
 * cases in debug builds: with --enable-assertions (FPK_ASSERTIONS) a fast
 * path's call computes what the general path gives for a sample of its
 * elements or blocks before the kernels run (they may write over their
 * input), then FPKI_ASSERT compares.  The checks exist in every build, so
 * that the tests can show that each one tells a wrong result from a right
 * one; only an assertions build calls them.  Not installed. */
#ifndef FPKIT_FAST_CHECK_H
#define FPKIT_FAST_CHECK_H

#include "array-impl.h"
#include "recipe-impl.h"

/* The most elements an array conversion's check takes from one piece. */
#define FPKI_SAMPLE_MAX 32

/* Indices into a range of N: all of them where N <= MAX (ALL), else the
 * first and the last MAX / 4 (at least 1, at most 4) and the rest evenly
 * spaced between, increasing.  MAX is at most FPKI_SAMPLE_MAX and at least 2. */
typedef struct fpki_sample {
    size_t n;
    bool all;
    size_t at[FPKI_SAMPLE_MAX];
} fpki_sample;
void fpki_sample_of(fpki_sample *s, size_t n, size_t max);

/* What fpk_convert gives (fpki_convert_one) for a sample of the elements
 * FIRST .. FIRST+N-1 of an array conversion: their indices, results as
 * the array holds them, and the OR of their flags. */
typedef struct fpki_convert_check {
    fpki_sample s; /* offsets from FIRST */
    size_t first;
    fpk_bits z[FPKI_SAMPLE_MAX];
    unsigned flags;
} fpki_convert_check;

/* *K := the general path's results for F (QUANT: float32 values) of the
 * elements FIRST .. FIRST+N-1 of X, dtype FROM, under C (element i with SR
 * counter c->sr_counter + i). */
void fpki_convert_expect(fpki_convert_check *k, const fpk_format *f, bool quant, fpk_dtype from,
                         const void *x, size_t first, size_t n, const fpk_ctx *c);
/* Whether the fast path's output Z (the whole array, SIZE bytes an
 * element) and FLAGS (its flags for the range) agree with K: the sampled
 * elements' bits equal, their flags among FLAGS, and FLAGS exactly their
 * OR where the sample is the whole range. */
bool fpki_convert_agrees(const fpki_convert_check *k, const void *z, size_t size, unsigned flags);

/* The most blocks a recipe's check takes from one band, and elements
 * from one block. */
#define FPKI_RECIPE_SAMPLE_BLOCKS 16
#define FPKI_RECIPE_SAMPLE_ELEMENTS 16

/* What the general path gives for a sample of a band's blocks: each
 * block's scale where the band gives it (SIZE_MAX: another band does),
 * and a sample of its elements, by their index in the view. */
typedef struct fpki_recipe_check {
    size_t nblocks, n;
    bool all;
    struct {
        size_t at; /* in q->scales, or SIZE_MAX */
        uint32_t scale;
    } block[FPKI_RECIPE_SAMPLE_BLOCKS];
    struct {
        size_t at;
        uint32_t y;
        uint8_t code;
    } elem[FPKI_RECIPE_SAMPLE_BLOCKS * FPKI_RECIPE_SAMPLE_ELEMENTS];
    unsigned flags;
} fpki_recipe_check;

/* *K := the general path's results for a sample of the rows ROW0 ..
 * ROW0+NROWS-1 of T at IN (their first row, transformed where the recipe
 * has the RHT). */
void fpki_recipe_expect(fpki_recipe_check *k, const fpk_recipe_plan *t, const float *in,
                        size_t row0, size_t nrows);
/* Whether Q, as the fast path left it for those rows (its flags theirs
 * alone), agrees with K: scales, codes and values where Q has them, each
 * element's flags among Q's, and Q's flags exactly their OR where the
 * sample is every element of the band. */
bool fpki_recipe_agrees(const fpki_recipe_check *k, const fpk_quantized *q);

/* Whether Z, the RHT's kernels' results for the LEN float32s at X (runs
 * of 16), agrees with fpk_rht16 into bfloat16 on a sample of at most MAX
 * runs. */
bool fpki_rht_agrees(const float *x, size_t len, uint16_t signs, const float *z, size_t max);

#endif
