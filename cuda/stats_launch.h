/* The statistics kernel's entry point (stats.cu), called by stats.c. */
#ifndef FPKIT_CUDA_STATS_LAUNCH_H
#define FPKIT_CUDA_STATS_LAUNCH_H

#include <cuda_runtime_api.h>

#include "stats_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Queues on STREAM the kernel that adds the counters (devstats.h) of the N
 * elements at device address DATA, as P says, to OUT, zeroed device
 * counters (fpki_ds_ncounters); IMAGE is the device's copy of the plan's
 * table image (P->table_bytes, 16-byte aligned).  DATA is aligned to the
 * element size.  Returns the first CUDA error. */
cudaError_t fpki_ds_launch(const fpki_ds_params *p, const void *image, const void *data, size_t n,
                           unsigned long long *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
