/* What every kernel source includes: float32's fields, the selects and
 * prefetches the kernels' bodies are made of, the SR hash's random bits,
 * and the kernel formats as descriptors the compiler folds.  The bodies
 * (*-body.h) are instantiated once per instruction set, each time with
 * the format and mode known, so that the compiler folds the format's
 * constants and vectorises the loops. */
#ifndef FPKIT_KERNEL_UTIL_H
#define FPKIT_KERNEL_UTIL_H

#include <string.h>

#include "core-impl.h"
#include "kernels.h"
#include "sr-hash.h"

/* The squared errors' sums round each product before it is added, as
 * fpk_array_sqerr promises (the kernels' bodies included), so nothing is
 * contracted here; the kernels' own fused multiply-adds square only
 * float32 values, exactly in double, where one rounding is the same.
 * Nothing else in the kernels multiplies floats. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define FPKI_INLINE static inline __attribute__((always_inline))

#define FPKI_F32_SIGN 0x80000000u
#define FPKI_F32_MAG 0x7fffffffu
#define FPKI_F32_INF 0x7f800000u
#define FPKI_F32_QNAN 0x7fc00000u
#define FPKI_F32_QUIET 0x00400000u
#define FPKI_F32_MIN_NORMAL 0x00800000u

/* Elements per block of the conversion and widening bodies: a multiple of
 * every vector length, and small enough for a block's temporaries to stay
 * in the L1 cache. */
#define FPKI_BLOCK 256

/* The top 32 bits of fpk_sr_hash(seed, CTR), SEED_MIX being
 * fpki_sr_mix(seed): the random bits of SR with sr_bits <= 32. */
FPKI_INLINE uint32_t fpki_sr_bits(uint64_t seed_mix, uint64_t ctr)
{
    return (uint32_t)(fpki_sr_hash_mixed(seed_mix, ctr) >> 32);
}

/* R[i] := fpki_sr_bits(SEED_MIX, INDEX + i) for a block. */
FPKI_INLINE void fpki_sr_block(uint64_t seed_mix, uint64_t index, uint32_t *restrict r)
{
    for (int i = 0; i < FPKI_BLOCK; i++)
        r[i] = fpki_sr_bits(seed_mix, index + (uint64_t)i);
}

/* C (0 or 1) ? A : B, as a mask, which the vectoriser takes where it
 * would refuse some conditional expressions. */
FPKI_INLINE uint32_t fpki_select(uint32_t c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - c;
    return (a & m) | (b & ~m);
}

/* Bytes ahead of a stream's reads to prefetch: the kernels do much per
 * cache line, too much for the hardware alone to keep enough misses in
 * flight.  Into L2, not L1 (T1, locality 2): a prefetch into L1 holds one
 * of its few fill buffers until the line arrives, which slowed the
 * statistics; a load from L2 is short enough for the out-of-order core to
 * cover. */
#define FPKI_PREFETCH 4096

/* Prefetches the lines of the block of N bytes at P + FPKI_PREFETCH. */
FPKI_INLINE void fpki_prefetch(const void *p, size_t n)
{
    for (size_t b = 0; b < n; b += 64)
        __builtin_prefetch((const char *)p + FPKI_PREFETCH + b, 0, 2);
}

/* The elements before Z's first 64-byte boundary, or SIZE_MAX if Z is not
 * aligned to its elements (then nothing streams). */
FPKI_INLINE size_t fpki_stream_head(const void *z, size_t size)
{
    uintptr_t at = (uintptr_t)z;
    if (at % size)
        return SIZE_MAX;
    return (64 - at % 64) % 64 / size;
}

/* The kernel formats as descriptors whose fields the compiler folds. */
static const fpk_format fpki_kernel_fp16 = FPKI_FORMAT_FP16;
static const fpk_format fpki_kernel_bf16 = FPKI_FORMAT_BF16;
static const fpk_format fpki_kernel_tf32 = FPKI_FORMAT_TF32;
static const fpk_format fpki_kernel_e4m3 = FPKI_FORMAT_E4M3;
static const fpk_format fpki_kernel_e5m2 = FPKI_FORMAT_E5M2;

/* The descriptor of kernel format K (not FPKI_KFORMAT_NONE). */
static inline const fpk_format *fpki_kformat_descriptor(fpki_kformat k)
{
    switch (k) {
    case FPKI_KFORMAT_FP16: return &fpki_kernel_fp16;
    case FPKI_KFORMAT_BF16: return &fpki_kernel_bf16;
    case FPKI_KFORMAT_TF32: return &fpki_kernel_tf32;
    case FPKI_KFORMAT_E4M3: return &fpki_kernel_e4m3;
    default: return &fpki_kernel_e5m2;
    }
}

/* The statement RUN(f) with F the descriptor of kernel format K, known at
 * compile time in each case: a kernel's entry point instantiates its body
 * once per format. */
#define FPKI_KFORMAT_SWITCH(k, RUN)                                                                \
    switch (k) {                                                                                   \
    case FPKI_KFORMAT_FP16: RUN(&fpki_kernel_fp16); break;                                         \
    case FPKI_KFORMAT_BF16: RUN(&fpki_kernel_bf16); break;                                         \
    case FPKI_KFORMAT_TF32: RUN(&fpki_kernel_tf32); break;                                         \
    case FPKI_KFORMAT_E4M3: RUN(&fpki_kernel_e4m3); break;                                         \
    default: RUN(&fpki_kernel_e5m2); break;                                                        \
    }

#endif
