/* The device statistics' speed: fpk_cuda_stats over a tensor in device
 * memory against cudaMemcpy of the same bytes from device to device (which
 * reads them once and writes them once), best of a few runs each, for
 * float32, bfloat16, fp16 and e4m3 tensors and fpgrad's four formats, in
 * the same run; each figure beside the copy's, and its goal where it has
 * one: half the copy's bandwidth under RNE, a quarter under SR, and the
 * 16-bit inputs at least as many elements a second as float32.  The
 * counts of a slice of each are checked against fpk_stats_add on the
 * host.  Exit status 0, or 1 when a check or a goal fails.
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
    printf("%-30s %9s %9s %9s %8s %6s\n", "", "ms", "GB/s", "Gelem/s", "of copy", "goal");
    printf("%-30s %9.3f %9.1f %9s %8s\n", "cudaMemcpy device to device", best_copy,
           (double)bytes / best_copy / 1e6, "", "1.00");

    static const struct {
        fpk_dtype dtype;
        fpk_round mode;
        int nformats;
        double goal; /* of the copy's bandwidth; 0: none */
    } runs[] = {
        {FPK_DTYPE_F32, FPK_RNE, 4, 0.5},  {FPK_DTYPE_F32, FPK_RNE, 1, 0},
        {FPK_DTYPE_F32, FPK_SR, 4, 0.25},  {FPK_DTYPE_BF16, FPK_RNE, 4, 0.5},
        {FPK_DTYPE_F16, FPK_RNE, 4, 0.5},  {FPK_DTYPE_BF16, FPK_SR, 4, 0.25},
        {FPK_DTYPE_F16, FPK_SR, 4, 0.25},  {FPK_DTYPE_E4M3, FPK_RNE, 4, 0},
    };
    const fpk_format *formats[4] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2};
    fpk_stats *st = malloc(sizeof *st), *ref = malloc(sizeof *ref);
    double *x = malloc((1 << 20) * sizeof *x);
    if (!st || !ref || !x)
        return 3;
    int status = 0, missed = 0, goals = 0;
    double f32_rate = 0; /* elements a second, float32 under RNE with four formats */
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
        char what[64], goal[16] = "";
        snprintf(what, sizeof what, "stats %s, %d format%s, %s", fpk_dtype_name(runs[k].dtype),
                 runs[k].nformats, runs[k].nformats > 1 ? "s" : "", fpk_round_name(runs[k].mode));
        double ratio = best_copy / best, rate = (double)n / best / 1e6;
        if (runs[k].goal > 0) {
            bool met = ratio >= runs[k].goal;
            snprintf(goal, sizeof goal, "%.2f %s", runs[k].goal, met ? "met" : "MISSED");
            goals++;
            missed += !met;
        }
        printf("%-30s %9.3f %9.1f %9.2f %8.2f %s\n", what, best, (double)bytes / best / 1e6, rate,
               ratio, goal);
        if (runs[k].dtype == FPK_DTYPE_F32 && runs[k].mode == FPK_RNE && runs[k].nformats == 4)
            f32_rate = rate;
        if (fpk_dtype_size(runs[k].dtype) == 2 && runs[k].mode == FPK_RNE) {
            goals++;
            if (rate < f32_rate) {
                missed++;
                printf("stats-bench: %s: fewer elements a second than float32: MISSED\n", what);
            }
        }

        /* The first 2^20 elements, on the device and on the host. */
        size_t m = n < (1 << 20) ? n : (1 << 20);
        const fpk_format *df = fpk_dtype_format(runs[k].dtype);
        size_t size = fpk_dtype_size(runs[k].dtype);
        for (size_t i = 0; i < m; i++) {
            uint64_t b = 0;
            memcpy(&b, (const unsigned char *)host + i * size, size); /* little-endian */
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
    printf("stats-bench: goals met: %d of %d\n", goals - missed, goals);
    if (missed)
        status = 1;
    cudaFree(dev);
    cudaFree(copy);
    free(host);
    free(st);
    free(ref);
    free(x);
    return status;
}
