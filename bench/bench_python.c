/* The C library's side of bench/bench_python.py: the calls that
 * fpkit.quantize(x, "bf16") and fpkit.stats(x) make, timed on the same
 * float32 data, so that the binding's overhead shows as a ratio.
 *
 *     bench_python FILE THREADS REPS
 *
 * FILE holds the float32 elements (host byte order).  Each row is the best
 * of REPS runs, in seconds of CPU time on one thread (THREADS 1) or of
 * wall time, printed as "name seconds":
 *   quantize-new     fpk_array_quantize into bf16 values, into memory
 *                    newly allocated for each call as NumPy allocates a
 *                    new array
 *   quantize-out     the same into memory written before (out=)
 *   stats            fpk_stats_init and, a piece of 2^16 elements at a
 *                    time, fpk_stats_add_sqerr for fp16, bf16, e4m3 and
 *                    e5m2 (the statistics and the SQNR's squared errors,
 *                    as fpgrad makes them for a one-dimensional tensor)
 *   stats-nosqnr     fpk_stats_add_array on THREADS threads */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fpkit-tensor.h"

#define PIECE ((size_t)1 << 16)

/* Seconds: of this thread's CPU time when the calls run on it alone (the
 * machine may be shared: its wall clock counts other jobs too), else of
 * the wall clock. */
static clockid_t clock_id = CLOCK_THREAD_CPUTIME_ID;

static double now(void)
{
    struct timespec t;
    clock_gettime(clock_id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_python: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* N bytes as NumPy allocates an array's data: malloc, and for 4 MiB or
 * more, the kernel asked for huge pages from the first page boundary on
 * (fewer page faults and TLB misses than plain malloc's memory). */
static void *alloc_like_numpy(size_t n)
{
    char *p = malloc(n);
    if (!p)
        die("malloc");
    if (n >= (size_t)1 << 22) {
        size_t offset = 4096 - (size_t)((uintptr_t)p % 4096);
        madvise(p + offset, n - offset, MADV_HUGEPAGE);
    }
    return p;
}

static const fpk_format *const formats[] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2};
static double sink;

static double quantize(const float *x, size_t n, float *out, int threads)
{
    fpk_ctx c = fpk_ctx_default();
    double t0 = now();
    float *z = out ? out : alloc_like_numpy(n * sizeof *z);
    fpk_array_quantize(&fpk_bf16, z, FPK_DTYPE_F32, x, n, &c, threads);
    double t = now() - t0;
    sink += z[n / 2];
    if (!out)
        free(z);
    return t;
}

static double stats(const float *x, size_t n, bool sqnr, int threads)
{
    static fpk_stats s;
    fpk_ctx c = fpk_ctx_default();
    double t0 = now();
    fpk_stats_init(&s, formats, 4, 1, &c);
    if (!sqnr)
        fpk_stats_add_array(&s, FPK_DTYPE_F32, x, n, threads);
    for (size_t pos = 0; sqnr && pos < n; pos += PIECE) {
        size_t len = n - pos < PIECE ? n - pos : PIECE;
        fpk_ctx pc[4];
        double x2[FPK_LANES] = {0}, e2[4][FPK_LANES] = {{0}};
        for (int j = 0; j < 4; j++) {
            pc[j] = c;
            pc[j].sr_counter = pos;
            pc[j].flags = FPK_INEXACT | FPK_UNDERFLOW;
        }
        fpk_stats_add_sqerr(&s, x + pos, len, 4, formats, pc, x2, &e2[0][0]);
        sink += x2[0] + e2[3][0];
    }
    double t = now() - t0;
    sink += (double)s.fmt[2].underflow;
    return t;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_python FILE THREADS REPS\n");
        return 2;
    }
    int threads = atoi(argv[2]), reps = atoi(argv[3]);
    if (threads > 1)
        clock_id = CLOCK_MONOTONIC;
    FILE *f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        die(argv[1]);
    size_t n = (size_t)ftell(f) / sizeof(float);
    float *x = alloc_like_numpy(n * sizeof *x), *out = alloc_like_numpy(n * sizeof *out);
    rewind(f);
    if (fread(x, sizeof *x, n, f) != n)
        die(argv[1]);
    fclose(f);
    memset(out, 0, n * sizeof *out);
    const char *names[] = {"quantize-new", "quantize-out", "stats", "stats-nosqnr"};
    for (int k = 0; k < 4; k++) {
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t = k == 0   ? quantize(x, n, NULL, threads)
                       : k == 1 ? quantize(x, n, out, threads)
                                : stats(x, n, k == 2, threads);
            best = t < best ? t : best;
        }
        printf("%s %.6f\n", names[k], best);
    }
    free(x);
    free(out);
    return sink == 42.0; /* (never: keeps the results alive) */
}
