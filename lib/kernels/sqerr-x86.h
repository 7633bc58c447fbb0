/* What the x86-64 squared-error kernels of both sets share (sqerr_avx2.c,
 * sqerr_avx512.c, quantize_sqerr_avx512.c): the blocks whose nonzero
 * elements they pack, and the prefetching of the next block while a packed
 * one is summed. */
#ifndef FPKIT_SQERR_X86_H
#define FPKIT_SQERR_X86_H

#include <immintrin.h>

#include "kernel-util.h"

/* Elements whose nonzero ones the squared-error kernels pack at a time. */
#define SQERR_BLOCK 4096

/* The lines of the next block of a stream yet to be prefetched: the
 * packed blocks are summed without reading memory, and would leave it
 * idle. */
typedef struct prefetch_range {
    const char *at, *end;
} prefetch_range;

/* The lines of the block after the one at I0 of the N elements at X
 * (NULL: none). */
static inline prefetch_range next_block_range(const void *x, size_t n, size_t i0)
{
    if (!x)
        return (prefetch_range){NULL, NULL};
    size_t from = i0 + SQERR_BLOCK < n ? i0 + SQERR_BLOCK : n;
    size_t to = i0 + 2 * SQERR_BLOCK < n ? i0 + 2 * SQERR_BLOCK : n;
    const char *base = x;
    return (prefetch_range){base + 4 * from, base + 4 * to};
}

/* *PF (NULL: none) as a local, for a loop to advance in registers: where
 * the loop advanced *PF itself, each step stored it and the next step's
 * load waited on that store; the loop gives it back with prefetch_put. */
static inline prefetch_range prefetch_take(const prefetch_range *pf)
{
    return pf ? *pf : (prefetch_range){NULL, NULL};
}

/* *PF (NULL: none) := AHEAD, where prefetch_take's loop left it. */
static inline void prefetch_put(prefetch_range *pf, prefetch_range ahead)
{
    if (pf)
        *pf = ahead;
}

/* Two lines more of *PF (NULL: none) on their way into L2. */
static inline __attribute__((always_inline)) void prefetch_two_lines(prefetch_range *pf)
{
    if (pf && pf->at < pf->end) {
        _mm_prefetch(pf->at, _MM_HINT_T1);
        _mm_prefetch(pf->at + 64, _MM_HINT_T1);
        pf->at += 128;
    }
}

#endif
