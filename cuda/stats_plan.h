/* The host's half of the device statistics: the plan a call sends to the
 * kernel (its parameters and the image of its tables), and the counters
 * it gets back added into an fpk_stats. */
#ifndef FPKIT_CUDA_STATS_PLAN_H
#define FPKIT_CUDA_STATS_PLAN_H

#include "devstats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest table image: SR bits of every band and the coarse ranges of
 * both sides, and their keys, for float64 elements. */
#define FPKI_DS_IMAGE_BYTES \
    (2 * 4 * FPKI_DS_MAX_BANDS + 2 * 4 * FPKI_DS_MAX_COARSE + 2 * 8 * FPKI_DS_MAX_KEYS + 48)

typedef struct fpki_ds_plan {
    fpki_ds_params k; /* what the kernel gets */
    /* t[j][m][i]: the least magnitude whose class in format j is at least
     * i + 1, for the elements of m's sign (0 positive, 1 negative) or
     * under SR of the sign m / 2 under RTZ (m even) and rounding away from
     * zero (m odd); nonfinite_min when no finite magnitude is. */
    uint64_t t[FPK_STATS_MAX_FORMATS][4][3];
    /* SR: format j's transition m takes an element from class
     * moves[j][m][0] to class moves[j][m][1] (fpki_stats_class) */
    int nmoves[FPK_STATS_MAX_FORMATS];
    unsigned char moves[FPK_STATS_MAX_FORMATS][FPKI_DS_MAX_MOVES][2];
    int hist_lo; /* floor(log2) of the element type's least subnormal */
    uint64_t image[FPKI_DS_IMAGE_BYTES / 8]; /* the tables, k.table_bytes of it */
} fpki_ds_plan;

/* Fills P for adding elements of DTYPE to S: the keys of every format,
 * found with libfpkit's own rounding, the bands and their tables.  Returns
 * FPK_OK, or FPK_EFORMAT with ERR's message for an unknown dtype, a format
 * count outside 0 .. FPK_STATS_MAX_FORMATS, or a scale that is not finite
 * and positive. */
int fpki_ds_plan_init(fpki_ds_plan *p, const fpk_stats *s, fpk_dtype dtype, fpk_error *err);

/* The number of counters a call with P fills (FPKI_DS_BANDS + a count per
 * band). */
size_t fpki_ds_ncounters(const fpki_ds_plan *p);

/* S += the statistics of N elements whose counters (planned with P, for
 * the dtype P was made for) are K. */
void fpki_ds_finish(fpk_stats *s, const fpki_ds_plan *p, fpk_dtype dtype, const uint64_t *k,
                    uint64_t n);

#ifdef __cplusplus
}
#endif

#endif
