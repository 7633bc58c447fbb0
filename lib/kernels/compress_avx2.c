/* The table of the AVX2 kernels' compress8 (avx2-util.h), which packs the
 * lanes of a vector that a mask keeps. */
#include "kernel-sets.h"

#if FPKI_X86
#include "avx2-util.h"

/* For each 8-bit mask M, the byte indices of its set bits from the
 * lowest, packed into a uint64_t: vpermd's indices that move M's lanes to
 * the front, in order (AVX2 has no vpcompressd). */
#define COMPRESS_BIT(m, i) (((m) >> (i)) & 1u)
#define COMPRESS_BELOW(m, i) __builtin_popcount((m) & ((1u << (i)) - 1))
#define COMPRESS_LANE(m, i) ((uint64_t)(COMPRESS_BIT(m, i) * (i)) << (8 * COMPRESS_BELOW(m, i)))
#define COMPRESS_ENTRY(m)                                                                              \
    (COMPRESS_LANE(m, 1) | COMPRESS_LANE(m, 2) | COMPRESS_LANE(m, 3) | COMPRESS_LANE(m, 4) | COMPRESS_LANE(m, 5) |     \
     COMPRESS_LANE(m, 6) | COMPRESS_LANE(m, 7))
#define COMPRESS_4(m) COMPRESS_ENTRY(m), COMPRESS_ENTRY(m + 1), COMPRESS_ENTRY(m + 2), COMPRESS_ENTRY(m + 3)
#define COMPRESS_16(m) COMPRESS_4(m), COMPRESS_4(m + 4), COMPRESS_4(m + 8), COMPRESS_4(m + 12)
#define COMPRESS_64(m) COMPRESS_16(m), COMPRESS_16(m + 16), COMPRESS_16(m + 32), COMPRESS_16(m + 48)
const uint64_t fpki_compress8_table[256] = {COMPRESS_64(0u), COMPRESS_64(64u), COMPRESS_64(128u),
                                            COMPRESS_64(192u)};
#undef COMPRESS_64
#undef COMPRESS_16
#undef COMPRESS_4
#undef COMPRESS_ENTRY
#undef COMPRESS_LANE
#undef COMPRESS_BELOW
#undef COMPRESS_BIT
#endif
