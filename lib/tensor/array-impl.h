/* Internals of the tensor layer's array paths (array.c, array_stats.c,
 * mx.c); not installed: how they call the kernels (lib/kernels/kernels.h),
 * with the tensor layer's dtypes and limits mapped onto the kernels' own,
 * and how they share an array between OpenMP threads. */
#ifndef FPKIT_ARRAY_IMPL_H
#define FPKIT_ARRAY_IMPL_H

#include "core-impl.h"
#include "fpkit-tensor.h"
#include "kernels.h"

/* The kernels sum squared errors in the public API's lanes, and count the
 * statistics of as many formats as an fpk_stats holds. */
_Static_assert(FPKI_SQERR_LANES == FPK_LANES, "the kernels' lanes are fpk_array_sqerr's");
_Static_assert(FPK_STATS_MAX_FORMATS <= FPKI_STATS_MAX_FORMATS,
               "the statistics kernels count every format of an fpk_stats");

/* The kernel format that is F, or FPKI_KFORMAT_NONE. */
fpki_kformat fpki_kformat_of(const fpk_format *f);

/* The kernel format of dtype T's elements (FPKI_KFORMAT_NONE for f32 and
 * f64, which the kernels do not widen). */
static inline fpki_kformat fpki_kformat_of_dtype(fpk_dtype t)
{
    return fpki_kformat_of(fpk_dtype_format(t));
}

/* Whether the kernels convert float32 into F under C (its mode and
 * sr_bits), rather than fpk_convert element by element. */
bool fpki_array_fast(const fpk_format *f, const fpk_ctx *c);

/* *P := the kernels' fake quantisation of float32 into F under C, if they
 * have one (fpki_array_fast). */
bool fpki_quantize_plan(fpki_conv_plan *p, const fpk_format *f, const fpk_ctx *c);

/* Element I of X, an array of SIZE-byte encodings (1, 2, 4 or 8) in host
 * order; of dtype T. */
static inline fpk_bits fpki_load_sized(size_t size, const void *x, size_t i)
{
    switch (size) {
    case 1: return ((const uint8_t *)x)[i];
    case 2: return ((const uint16_t *)x)[i];
    case 4: return ((const uint32_t *)x)[i];
    default: return ((const uint64_t *)x)[i];
    }
}

static inline fpk_bits fpki_load(fpk_dtype t, const void *x, size_t i)
{
    return fpki_load_sized(fpk_dtype_size(t), x, i);
}

/* The general path of the array conversions: A, an encoding of dtype
 * FROM's format, converted into F by fpk_convert under C with SR counter
 * COUNTER, then (QUANT) into float32 exactly; *FLAGS := its flags. */
fpk_bits fpki_convert_one(const fpk_format *f, bool quant, fpk_dtype from, fpk_bits a,
                          uint64_t counter, const fpk_ctx *c, unsigned *flags);

/* An OpenMP directive, or nothing where the library is built without
 * OpenMP (an unknown pragma would be a warning). */
#ifdef _OPENMP
#define FPKI_OMP(directive) _Pragma(#directive)
#else
#define FPKI_OMP(directive)
#endif

/* Where the OpenMP threads of a call split an array: every piece but the
 * last holds FPKI_PIECE elements, so that pieces, not threads, fix which
 * element goes where. */
#define FPKI_PIECE ((size_t)1 << 16)

/* The threads a call over N elements uses: 1 below a few pieces, or
 * without OpenMP. */
int fpki_threads(int threads, size_t n);

/* Runs BODY(ARG, T, NT') for T < NT' on the NT' threads of an OpenMP
 * parallel region of NT (NT' <= NT: OpenMP may give fewer), or BODY(ARG,
 * 0, 1) on the calling thread alone for NT = 1: starting a region, even of
 * one thread, costs much of a small call.  BODY takes the T-th of NT'
 * shares of its work (fpki_share) and guards what it merges (omp atomic,
 * or omp critical named, so as not to wait on a caller's unnamed one); it
 * uses no worksharing construct, which outside a region would bind to a
 * region of the caller's. */
void fpki_parallel(int nt, void (*body)(void *arg, int t, int nt), void *arg);

/* Where the T-th of NT contiguous shares of N items begins (T = NT: the
 * end): floor(N T / NT), without N T. */
static inline uint64_t fpki_share(uint64_t n, int t, int nt)
{
    uint64_t q = n / (unsigned)nt, r = n % (unsigned)nt;
    return q * (unsigned)t + r * (unsigned)t / (unsigned)nt;
}

#endif
