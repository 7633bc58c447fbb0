/* Internals shared by stats.c, stats_json.c and array_stats.c. */
#ifndef FPKIT_STATS_H
#define FPKIT_STATS_H

#include "core-impl.h"
#include "fpkit-tensor.h"

#define FPKI_F64_SIGN ((uint64_t)1 << 63)
#define FPKI_F64_EXP_ALL ((uint64_t)0x7ff << 52)

/* floor(log2 |x|) of a nonzero finite double given by its magnitude bits
 * (sign cleared); -1074 .. 1023. */
static inline int fpki_f64_floor_log2(uint64_t mag)
{
    int e = (int)(mag >> 52);
    if (e)
        return e - 1023;
    return -1074 + 63 - fpki_clz64(mag); /* subnormal: its top set bit */
}

/* What rounding a nonzero finite element does in a format, as the
 * statistics count it, in increasing order of magnitude: for a fixed
 * format, scale and deterministic mode it never decreases as |x| grows. */
typedef enum fpki_stats_class {
    FPKI_STATS_ZERO,      /* underflow: the result is zero */
    FPKI_STATS_SUBNORMAL, /* a nonzero subnormal */
    FPKI_STATS_NORMAL,
    FPKI_STATS_OVERFLOW,  /* infinity or NaN, or the overflow flag raised */
} fpki_stats_class;

/* The class of X * SCALE rounded into F under C (its flags overwritten). */
fpki_stats_class fpki_stats_classify(const fpk_format *f, double x, double scale, fpk_ctx *c);

/* K's count of class CLS += BY (normal results are not counted). */
void fpki_stats_count(fpk_format_counts *k, fpki_stats_class cls, int64_t by);

/* The context the statistics S round in: its mode, ftz and saturate,
 * tininess after rounding, no daz, seed 0, 32 random bits. */
fpk_ctx fpki_stats_ctx(const fpk_stats *s);

/* Whether A and B define the same format (descriptors may be distinct
 * copies of one). */
static inline bool fpki_same_format(const fpk_format *a, const fpk_format *b)
{
    return a == b || (a->exp_bits == b->exp_bits && a->man_bits == b->man_bits &&
                      a->bias == b->bias && a->special == b->special);
}

#endif
