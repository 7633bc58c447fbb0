/* What the x86-64 kernel sets share: the kernels they export to
 * array_kern.c's tables, the conditions under which their own kernels
 * apply, and the packing of nonzero elements into blocks. */
#ifndef FPKIT_ARRAY_KERN_X86_H
#define FPKIT_ARRAY_KERN_X86_H

#include "array-impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

fpki_conv_fn fpki_conv_avx2, fpki_conv_avx512;
fpki_widen_fn fpki_widen_avx2, fpki_widen_avx512;
fpki_stats_fn fpki_stats_avx2, fpki_stats_avx512;
fpki_srfix_fn fpki_srfix_avx2, fpki_srfix_avx512;
fpki_lanes_fn fpki_lanes_avx2, fpki_lanes_avx512;
fpki_sqerr_fn fpki_sqerr_avx2, fpki_sqerr_avx512;

/* Whether P is a conversion F16C does exactly: fp16 under RNE or RTZ, no
 * ftz, daz or saturate (tininess either way: the flags are computed). */
static inline bool f16c_exact(const fpki_conv *p)
{
    return p->fmt == FPKI_K_FP16 && (p->mode == FPK_RNE || p->mode == FPK_RTZ) && !p->ftz &&
           !p->daz && !p->saturate;
}

/* fp16's thresholds for the F16C flags, as float32 encodings: overflow
 * from half an ulp above max finite (RNE) or one ulp (RTZ); tininess as
 * fpki_conv1 judges it. */
#define F16C_OF_RNE 0x477ff000u
#define F16C_OF_RTZ 0x47800000u
#define F16C_TINY_RNE 0x387ff000u
#define F16C_MIN_NORMAL 0x38800000u
#define F16C_NAN 0x7e00

static inline unsigned f16c_flags(bool ix, bool uf, bool of, bool inv)
{
    return (ix || of ? FPK_INEXACT : 0) | (uf ? FPK_UNDERFLOW : 0) | (of ? FPK_OVERFLOW : 0) |
           (inv ? FPK_INVALID : 0);
}

/* Whether P is a conversion near_avx512 does: any kernel format under
 * RNE, RTZ or SR, without options. */
static inline bool near_plain(const fpki_conv *p)
{
    return !p->ftz && !p->daz && !p->saturate && !p->tiny_before;
}

/* Elements whose nonzero ones the lanes and sqerr kernels pack at a
 * time. */
#define SQ_BLOCK 4096

/* The lines of the next block of a stream yet to be prefetched: the
 * packed blocks are summed without reading memory, and would leave it
 * idle. */
typedef struct sq_ahead {
    const char *at, *end;
} sq_ahead;

/* The block after the one at I0 of the N elements at X (NULL: none). */
static inline sq_ahead sq_next_block(const void *x, size_t n, size_t i0)
{
    if (!x)
        return (sq_ahead){NULL, NULL};
    size_t from = i0 + SQ_BLOCK < n ? i0 + SQ_BLOCK : n;
    size_t to = i0 + 2 * SQ_BLOCK < n ? i0 + 2 * SQ_BLOCK : n;
    const char *base = x;
    return (sq_ahead){base + 4 * from, base + 4 * to};
}

/* Two lines more of *PF (NULL: none) on their way into L2. */
static inline __attribute__((always_inline)) void sq_prefetch(sq_ahead *pf)
{
    if (pf && pf->at < pf->end) {
        _mm_prefetch(pf->at, _MM_HINT_T1);
        _mm_prefetch(pf->at + 64, _MM_HINT_T1);
        pf->at += 128;
    }
}
#endif
#endif
