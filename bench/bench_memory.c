/* The memory references of bench_bulk (bench-memory.h). */
#include "bench-memory.h"

#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BENCH_X86 1
#else
#define BENCH_X86 0
#endif

/* Independent sums (one chain of adds would keep too few misses in
 * flight), 128 bytes a step, with AVX2 where the CPU has it: a scalar
 * loop can be slower than memory. */
#if BENCH_X86
__attribute__((target("avx2"))) static uint64_t read_avx2(const uint64_t *w, size_t n)
{
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < n; i += 16) {
        __builtin_prefetch((const char *)(w + i) + 4096, 0, 2);
        __builtin_prefetch((const char *)(w + i) + 4096 + 64, 0, 2);
        s0 = _mm256_add_epi64(s0, _mm256_loadu_si256((const __m256i *)(w + i)));
        s1 = _mm256_add_epi64(s1, _mm256_loadu_si256((const __m256i *)(w + i + 4)));
        s2 = _mm256_add_epi64(s2, _mm256_loadu_si256((const __m256i *)(w + i + 8)));
        s3 = _mm256_add_epi64(s3, _mm256_loadu_si256((const __m256i *)(w + i + 12)));
    }
    uint64_t lanes[4];
    _mm256_storeu_si256((__m256i *)lanes,
                        _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3)));
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

/* A line of 64 bytes out a step: 16, 32 or 64 inputs, shifted to their
 * top WIDTH bytes and packed in order as the conversion kernels pack
 * (WIDTH a constant in each caller). */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void
stream_lines(const uint32_t *x, void *z, size_t n, size_t width)
{
    uint8_t *out = z;
    const __m512i words = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
    const __m512i dwords = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    const size_t per_line = 64 / width;
    for (size_t i = 0; i < n; i += per_line, out += 64) {
        for (size_t b = 0; b < 4 * per_line; b += 64) /* every input line, 4 KiB ahead */
            _mm_prefetch((const char *)(x + i) + 4096 + b, _MM_HINT_T1);
        __m512i line;
        if (width == 4) {
            line = _mm512_loadu_si512(x + i);
        } else if (width == 2) {
            __m512i a = _mm512_srli_epi32(_mm512_loadu_si512(x + i), 16);
            __m512i b = _mm512_srli_epi32(_mm512_loadu_si512(x + i + 16), 16);
            line = _mm512_permutexvar_epi64(words, _mm512_packus_epi32(a, b));
        } else {
            __m512i r[4];
            for (int v = 0; v < 4; v++)
                r[v] = _mm512_srli_epi32(_mm512_loadu_si512(x + i + 16 * v), 24);
            line = _mm512_permutexvar_epi32(
                dwords, _mm512_packus_epi16(_mm512_packus_epi32(r[0], r[1]),
                                            _mm512_packus_epi32(r[2], r[3])));
        }
        _mm512_stream_si512((void *)out, line);
    }
    _mm_sfence();
}

__attribute__((target("avx512f,avx512bw"))) static void stream_avx512(const uint32_t *x, void *z,
                                                                       size_t n, size_t width)
{
    if (width == 1)
        stream_lines(x, z, n, 1);
    else if (width == 2)
        stream_lines(x, z, n, 2);
    else
        stream_lines(x, z, n, 4);
}
#endif

uint64_t bench_read_words(const uint64_t *w, size_t n)
{
#if BENCH_X86
    if (__builtin_cpu_supports("avx2"))
        return read_avx2(w, n);
#endif
    uint64_t s[8] = {0};
    for (size_t i = 0; i < n; i += 8) {
        __builtin_prefetch((const char *)(w + i) + 4096, 0, 2);
        for (int k = 0; k < 8; k++)
            s[k] += w[i + k];
    }
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

const char *bench_stream_top(const uint32_t *x, void *z, size_t n, size_t width)
{
#if BENCH_X86
    if (__builtin_cpu_supports("avx512bw")) {
        stream_avx512(x, z, n, width);
        return "avx512";
    }
#endif
    uint8_t *out = z;
    for (size_t i = 0; i < n; i++) {
        uint32_t top = x[i] >> (32 - 8 * width);
        memcpy(out + width * i, &top, width); /* (little-endian: the low bytes) */
    }
    return "plain stores";
}
