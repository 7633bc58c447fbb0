/* The device statistics' speed: fpk_cuda_stats over a tensor in device
 * memory against cudaMemcpy of the same bytes from device to device (which
 * reads them once and writes them once), best of a few runs each, for
 * float32, bfloat16 and fp16 tensors and fpgrad's four formats; and the
 * counts of a slice checked against fpk_stats_add on the host.
 *
 * usage: stats-bench [GIB]   (the tensor's size, default 4) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit_cuda.h"

#define RUNS 5

static void check(cudaError_t rc, const char *what)
{
    if (rc != cudaSuccess) {
        fprintf(stderr, "stats-bench: %s: %s\n", what, cudaGetErrorString(rc));
        exit(3);
    }
}

/* SplitMix64, for gradient-like data: random signs and significands,
 * exponents spread over 2^-40 .. 2^0 like a gradient's, some zeros. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static float time_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms;
    check(cudaEventElapsedTime(&ms, a, b), "timing");
    return ms;
}

int main(int argc, char **argv)
{
    double gib = argc > 1 ? atof(argv[1]) : 4.0;
    size_t bytes = (size_t)(gib * (1 << 30)) & ~(size_t)15;
    if (bytes == 0) {
        fprintf(stderr, "usage: stats-bench [GIB]\n");
        return 2;
    }
    size_t n32 = bytes / 4;
    uint32_t *host = malloc(bytes);
    if (!host) {
        fprintf(stderr, "stats-bench: out of memory\n");
        return 3;
    }
    uint64_t s = 1;
    for (size_t i = 0; i < n32; i++) {
        uint64_t r = mix(&s);
        uint32_t e = 127 - (uint32_t)(r >> 58) % 41; /* 2^-40 .. 2^0 */
        host[i] = r % 64 == 0 ? 0 : (uint32_t)(r >> 63) << 31 | e << 23 | ((uint32_t)r & 0x7fffff);
    }
    void *dev, *copy;
    check(cudaMalloc(&dev, bytes), "allocating");
    check(cudaMalloc(&copy, bytes), "allocating");
    check(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "copying in");
    struct cudaDeviceProp p;
    int d;
    check(cudaGetDevice(&d), "device");
    check(cudaGetDeviceProperties(&p, d), "device");
    cudaEvent_t e0, e1;
    check(cudaEventCreate(&e0), "events");
    check(cudaEventCreate(&e1), "events");

    float best_copy = 1e30f;
    for (int r = 0; r < RUNS; r++) {
        check(cudaEventRecord(e0, 0), "timing");
        check(cudaMemcpy(copy, dev, bytes, cudaMemcpyDeviceToDevice), "copying");
        check(cudaEventRecord(e1, 0), "timing");
        check(cudaEventSynchronize(e1), "timing");
        float ms = time_ms(e0, e1);
        best_copy = ms < best_copy ? ms : best_copy;
    }
    printf("stats-bench: %s, %.2f GiB in device memory\n", p.name, (double)bytes / (1 << 30));
    printf("%-34s %9s %9s %8s\n", "", "ms", "GB/s", "of copy");
    printf("%-34s %9.3f %9.1f %8s\n", "cudaMemcpy device to device", best_copy,
           (double)bytes / best_copy / 1e6, "1.00");

    static const struct {
        fpk_dtype dtype;
        fpk_round mode;
        int nformats;
    } runs[] = {
        {FPK_DTYPE_F32, FPK_RNE, 4}, {FPK_DTYPE_F32, FPK_RNE, 1}, {FPK_DTYPE_F32, FPK_SR, 4},
        {FPK_DTYPE_BF16, FPK_RNE, 4}, {FPK_DTYPE_F16, FPK_RNE, 4},
    };
    const fpk_format *formats[4] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2};
    fpk_stats *st = malloc(sizeof *st), *ref = malloc(sizeof *ref);
    double *x = malloc((1 << 20) * sizeof *x);
    if (!st || !ref || !x)
        return 3;
    int status = 0;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = runs[k].mode;
        size_t n = bytes / fpk_dtype_size(runs[k].dtype);
        fpk_error err;
        float best = 1e30f;
        for (int r = 0; r < RUNS; r++) {
            check(cudaEventRecord(e0, 0), "timing");
            if (fpk_cuda_stats(dev, n, runs[k].dtype, formats, runs[k].nformats, 1.0, &c, st, 0,
                               &err) != FPK_OK) {
                fprintf(stderr, "stats-bench: %s\n", err.msg);
                return 3;
            }
            check(cudaEventRecord(e1, 0), "timing");
            check(cudaEventSynchronize(e1), "timing");
            float ms = time_ms(e0, e1);
            best = ms < best ? ms : best;
        }
        char what[64];
        snprintf(what, sizeof what, "stats %s, %d format%s, %s", fpk_dtype_name(runs[k].dtype),
                 runs[k].nformats, runs[k].nformats > 1 ? "s" : "", fpk_round_name(runs[k].mode));
        printf("%-34s %9.3f %9.1f %8.2f\n", what, best, (double)bytes / best / 1e6,
               best_copy / best);

        /* The first 2^20 elements, on the device and on the host. */
        size_t m = n < (1 << 20) ? n : (1 << 20);
        const fpk_format *df = fpk_dtype_format(runs[k].dtype);
        for (size_t i = 0; i < m; i++) {
            uint64_t b = runs[k].dtype == FPK_DTYPE_F32 ? host[i]
                                                         : ((const uint16_t *)host)[i];
            x[i] = fpk_to_double(df, b);
        }
        fpk_stats_init(ref, formats, runs[k].nformats, 1.0, &c);
        fpk_stats_add(ref, x, m);
        if (fpk_cuda_stats(dev, m, runs[k].dtype, formats, runs[k].nformats, 1.0, &c, st, 0,
                           &err) != FPK_OK || memcmp(st, ref, sizeof *st) != 0) {
            printf("stats-bench: %s: the device's statistics of %zu elements differ from the "
                   "host's\n",
                   what, m);
            status = 1;
        }
    }
    cudaFree(dev);
    cudaFree(copy);
    free(host);
    free(st);
    free(ref);
    free(x);
    return status;
}
