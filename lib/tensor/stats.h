/* Internals shared by stats.c, stats_json.c and array_stats.c. */
#ifndef FPKIT_STATS_H
#define FPKIT_STATS_H

#include "core-impl.h"
#include "fpkit-tensor.h"
#include "stats-thresholds.h"

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

/* K's count of class CLS += BY (normal results are not counted). */
void fpki_stats_count(fpk_format_counts *k, fpki_stats_class cls, int64_t by);

/* Whether A and B define the same format (descriptors may be distinct
 * copies of one). */
static inline bool fpki_same_format(const fpk_format *a, const fpk_format *b)
{
    return a == b || (a->exp_bits == b->exp_bits && a->man_bits == b->man_bits &&
                      a->bias == b->bias && a->special == b->special);
}

#endif
