/* fpkit on the GPU: the tensor statistics of libfpkit (fpk_stats_add)
 * computed where the tensor lives, in one pass over device memory.  The
 * results are the same counts, bit for bit, as the host computes from the
 * same elements.  C and C++; the statistics are plain fpk_stats, so they
 * merge with host ones and print with fpk_stats_to_json. */
#ifndef FPKIT_CUDA_H
#define FPKIT_CUDA_H

#include <cuda_runtime_api.h>

#include "fpkit-tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds N elements of DTYPE at device address DEV (device, managed or
 * pinned host memory the current device can read; aligned to the element
 * size) to S, as fpk_stats_add would add them converted to double: the same
 * formats, scale, mode, ftz and saturate (those fpk_stats_init gave S), and
 * under FPK_SR the same stream (counter = S's count before the call + the
 * element's index).  The work is queued on STREAM (0: the default stream)
 * and the call returns when it is done.  Returns FPK_OK; FPK_EFORMAT for
 * statistics or a dtype the kernel cannot take (a scale that is not finite
 * and positive); FPK_ENOMEM when device memory runs out; FPK_EIO for any
 * other CUDA failure (no device, memory the device cannot read) with the
 * CUDA error's text in ERR.  S is unchanged unless FPK_OK is returned. */
int fpk_cuda_stats_add(fpk_stats *s, const void *dev, size_t n, fpk_dtype dtype,
                       cudaStream_t stream, fpk_error *err);

/* fpk_stats_init(OUT, FORMATS, NFORMATS, SCALE, C) and then
 * fpk_cuda_stats_add(OUT, DEV, N, DTYPE, STREAM, ERR).  C may be NULL: the
 * default context (RNE, no ftz, no saturate). */
int fpk_cuda_stats(const void *dev, size_t n, fpk_dtype dtype, const fpk_format *const *formats,
                   int nformats, double scale, const fpk_ctx *c, fpk_stats *out,
                   cudaStream_t stream, fpk_error *err);

/* For callers that hold no C structures (Python's ctypes): the statistics
 * of N elements at DEV as fpk_stats_to_json text (one line), everything
 * named: DTYPE as fpk_dtype_lookup reads it ("f32", "bfloat16"), FORMATS
 * comma-separated ("fp16,e4m3"), ROUND a mode name ("rne").  Returns the
 * text, to be released with fpk_cuda_free, or NULL with ERR filled
 * (FPK_ESYNTAX for a name that is not known, else as fpk_cuda_stats_add).
 * N = 0 touches no device. */
char *fpk_cuda_stats_json(const void *dev, size_t n, const char *dtype, const char *formats,
                          double scale, const char *round, bool ftz, bool saturate,
                          cudaStream_t stream, fpk_error *err);

/* Releases text fpk_cuda_stats_json returned; NULL is ignored. */
void fpk_cuda_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
