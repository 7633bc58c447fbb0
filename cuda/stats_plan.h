/* The host's half of the device statistics: the plan a call sends to the
 * kernel, and the counters it gets back added into an fpk_stats. */
#ifndef FPKIT_CUDA_STATS_PLAN_H
#define FPKIT_CUDA_STATS_PLAN_H

#include "devstats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills P for adding elements of DTYPE to S (devstats.h): the class steps
 * of every format, found with libfpkit's own rounding.  Returns FPK_OK, or
 * FPK_EFORMAT with ERR's message for an unknown dtype, a format count
 * outside 0 .. FPK_STATS_MAX_FORMATS, or a scale that is not finite and
 * positive. */
int fpki_ds_plan_init(fpki_ds_plan *p, const fpk_stats *s, fpk_dtype dtype, fpk_error *err);

/* The number of counters a call with P fills (FPKI_DS_HIST + P->nbins). */
size_t fpki_ds_ncounters(const fpki_ds_plan *p);

/* S += the statistics of N elements whose counters (planned with P, for
 * the dtype P was made for) are K. */
void fpki_ds_finish(fpk_stats *s, const fpki_ds_plan *p, fpk_dtype dtype, const uint64_t *k,
                    uint64_t n);

#ifdef __cplusplus
}
#endif

#endif
