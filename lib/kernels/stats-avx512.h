/* The AVX-512 statistics as a part of a larger pass: their packed
 * nonzero elements handed to another kernel (stats_avx512.c, used by
 * quantize_sqerr_avx512.c). */
#ifndef FPKIT_STATS_AVX512_H
#define FPKIT_STATS_AVX512_H

#include "kernels.h"

/* Where the statistics pack each block's nonzero elements (magnitudes)
 * when a kernel running alongside wants them too, rather than in a buffer
 * of their own.  ROOM(CTX, LEN, FROM, TO) gives the place for up to LEN
 * of them and a vector of padding after them, and may prefetch the
 * block's input [FROM, TO) while it makes room; FITS(CTX, LEN) says
 * whether ROOM would leave what the buffer holds in place; ADDED(CTX, M,
 * LEAST, TOP) reports the M packed there, of magnitudes in [LEAST, TOP]. */
typedef struct fpki_stats_sink {
    void *ctx;
    bool (*fits)(void *ctx, size_t len);
    uint32_t *(*room)(void *ctx, size_t len, const void *from, const void *to);
    void (*added)(void *ctx, size_t m, uint32_t least, uint32_t top);
} fpki_stats_sink;

/* fpki_stats_avx512 of X[0..N-1] into T, keys on magnitudes only (not
 * k->sign), each block's nonzero elements packed where SINK says. */
void fpki_stats_packed_avx512(const fpki_stats_keys *k, const uint32_t *x, size_t n,
                              fpki_stats_totals *t, const fpki_stats_sink *sink);

#endif
