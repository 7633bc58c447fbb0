/* Exact sums of nonnegative doubles, so that error sums add up alike in any
 * order and any grouping: a sum is the integer S of the value S * 2^-1074
 * (every double is a whole multiple of 2^-1074), held in EXACT_WORDS
 * 64-bit words, least significant first.  2^64 terms of at most DBL_MAX
 * fit.  An infinite term makes the sum infinite. */
#ifndef FPKIT_PY_EXACT_H
#define FPKIT_PY_EXACT_H

#include <stdbool.h>
#include <stdint.h>

#define EXACT_WORDS 36 /* 2304 bits: 2^-1074 .. 2^1230 */

typedef struct exact_sum {
    uint64_t w[EXACT_WORDS];
    bool inf;
} exact_sum;

/* S += V and S -= V, V >= 0 (a V subtracted was added before or after: the
 * words wrap modulo 2^2304 and come right once it is). */
void exact_add(exact_sum *s, double v);
void exact_sub(exact_sum *s, double v);
/* INTO += FROM. */
void exact_merge(exact_sum *into, const exact_sum *from);

#endif
