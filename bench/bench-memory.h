/* The memory references of bench_bulk: what the hardware does with the
 * same bytes when nothing is computed. */
#ifndef FPKIT_BENCH_MEMORY_H
#define FPKIT_BENCH_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The sum of the N 64-bit words at W, read as the array paths read
 * (prefetched 4 KiB ahead into L2, many misses in flight). */
uint64_t bench_read_words(const uint64_t *w, size_t n);

/* The streaming store: the top WIDTH bytes (1, 2 or 4) of each of the N
 * float32 encodings at X into Z, a line of Z at a time with non-temporal
 * stores (Z 64-byte aligned, N a multiple of 64): what a conversion into
 * a format of that width would write, with no rounding at all.  Returns
 * the name of the path taken ("avx512", or "plain stores" without
 * AVX-512BW). */
const char *bench_stream_top(const uint32_t *x, void *z, size_t n, size_t width);

#endif
