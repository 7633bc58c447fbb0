/* fpk_cuda_stats on a GPU against fpk_stats_add on the host, every field
 * equal: every encoding of fp16, bf16, e4m3 and e5m2 and TestFloat-style
 * float32 and float64 samples, under every mode (SR included, added in two
 * calls), ftz and saturate, scales 1 and 0.1875; from offsets 0 to 17
 * elements into the buffer, so that every alignment, the vector body and
 * the scalar head and tail are exercised; the JSON interface; and 2^31 +
 * 300 e4m3 elements, which take two launches (compared with the host's
 * statistics of one period of the repeating pattern, times the periods).  Without a
 * CUDA device it exits 77: skipped, never passed. */
#include <check.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit_cuda.h"
#include "testutil.h"

#define SUITE "check_cuda_device"

static uint64_t seed;

static const char *const names[] = {"fp16", "bf16", "e4m3", "e5m2", "tf32", "e3m2", "e2m1",
                                    "e8m0"};
#define NF ((int)(sizeof names / sizeof names[0]))

static void formats_init(const fpk_format **f)
{
    for (int j = 0; j < NF; j++)
        f[j] = fpk_format_lookup(names[j]);
}

/* Device copy of N elements of SIZE bytes from BITS, at OFFSET elements
 * into the buffer (*BASE is what to free). */
static void *upload(const uint64_t *bits, size_t n, size_t size, size_t offset, void **base)
{
    unsigned char *h = malloc((n + offset) * size);
    ck_assert_ptr_nonnull(h);
    for (size_t i = 0; i < n; i++)
        memcpy(h + (offset + i) * size, &bits[i], size); /* little-endian */
    ck_assert_int_eq(cudaMalloc(base, (n + offset) * size), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(*base, h, (n + offset) * size, cudaMemcpyHostToDevice),
                     cudaSuccess);
    free(h);
    return (unsigned char *)*base + offset * size;
}

static void compare(tu_report *rep, fpk_dtype dtype, const uint64_t *bits, size_t n, fpk_round mode,
                    bool ftz, bool sat, double scale, size_t offset)
{
    const fpk_format *f[NF];
    formats_init(f);
    const fpk_format *d = fpk_dtype_format(dtype);
    double *x = malloc(n * sizeof *x);
    fpk_stats *want = malloc(sizeof *want), *got = malloc(sizeof *got);
    ck_assert(x && want && got);
    for (size_t i = 0; i < n; i++)
        x[i] = fpk_to_double(d, bits[i]);
    fpk_ctx c = fpk_ctx_default();
    c.round = mode;
    c.ftz = ftz;
    c.saturate = sat;
    fpk_stats_init(want, f, NF, scale, &c);
    fpk_stats_add(want, x, n);
    void *base;
    const unsigned char *dev = upload(bits, n, fpk_dtype_size(dtype), offset, &base);
    fpk_error err;
    size_t part = n / 3;
    int rc = fpk_cuda_stats(dev, part, dtype, f, NF, scale, &c, got, 0, &err);
    if (rc == FPK_OK)
        rc = fpk_cuda_stats_add(got, dev + part * fpk_dtype_size(dtype), n - part, dtype, 0, &err);
    ck_assert_msg(rc == FPK_OK, "%s", err.msg);
    cudaFree(base);
    rep->cases += n * NF;
    rep->total_cases += n * NF;
    if (memcmp(got, want, sizeof *got) != 0) {
        const char *field = got->count != want->count         ? "count"
                            : got->zeros != want->zeros       ? "zeros"
                            : got->nonfinite != want->nonfinite ? "nonfinite"
                            : memcmp(&got->amax, &want->amax, sizeof got->amax) ? "amax"
                            : memcmp(got->log2_hist, want->log2_hist, sizeof got->log2_hist)
                                ? "log2_hist"
                                : "format counts";
        tu_fail(rep, "%s x %zu at offset %zu, %s%s%s, scale %a: %s differ", fpk_dtype_name(dtype),
                n, offset, fpk_round_name(mode), ftz ? " ftz" : "", sat ? " saturate" : "", scale,
                field);
    }
    free(x);
    free(want);
    free(got);
}

START_TEST(test_encodings)
{
    static const fpk_dtype dtypes[] = {FPK_DTYPE_F16, FPK_DTYPE_BF16, FPK_DTYPE_E4M3,
                                       FPK_DTYPE_E5M2};
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
        size_t n = (size_t)1 << (8 * fpk_dtype_size(dtypes[t]));
        uint64_t *bits = malloc(n * sizeof *bits);
        ck_assert_ptr_nonnull(bits);
        for (size_t i = 0; i < n; i++)
            bits[i] = i;
        for (int m = 0; m < FPK_ROUND_COUNT; m++)
            for (int o = 0; o < 4; o++)
                compare(&rep, dtypes[t], bits, n, (fpk_round)m, o & 1, o & 2,
                        m % 2 ? 0.1875 : 1.0, (size_t)(m * 4 + o) % 18);
        tu_report_line(&rep, "every %s encoding", fpk_dtype_name(dtypes[t]));
        free(bits);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

START_TEST(test_samples)
{
    static const fpk_dtype dtypes[] = {FPK_DTYPE_F32, FPK_DTYPE_F64};
    const fpk_format *f[NF];
    formats_init(f);
    tu_rng r;
    tu_rng_init(&r, seed);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    enum { N = 200003 };
    uint64_t *bits = malloc(N * sizeof *bits);
    ck_assert_ptr_nonnull(bits);
    for (size_t t = 0; t < 2; t++) {
        const fpk_format *d = fpk_dtype_format(dtypes[t]);
        for (int m = 0; m < FPK_ROUND_COUNT; m++)
            for (int o = 0; o < 4; o++) {
                for (size_t i = 0; i < N; i++)
                    bits[i] = tu_gen(d, f[i % NF], &r);
                compare(&rep, dtypes[t], bits, N, (fpk_round)m, o & 1, o & 2,
                        o == 3 ? 0.1875 : 1.0, (size_t)(m + o) % 5);
            }
        tu_report_line(&rep, "%s samples", fpk_dtype_name(dtypes[t]));
    }
    free(bits);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

START_TEST(test_json)
{
    const fpk_format *f[NF];
    formats_init(f);
    float h[1000];
    for (int i = 0; i < 1000; i++)
        h[i] = (float)(i - 500) / 7e4f;
    double x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = h[i];
    void *dev;
    ck_assert_int_eq(cudaMalloc(&dev, sizeof h), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(dev, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    fpk_error err;
    char *text = fpk_cuda_stats_json(dev, 1000, "float32", "fp16,bf16,e4m3,e5m2,tf32,e3m2,e2m1,e8m0",
                                     1024.0, "sr", true, false, 0, &err);
    cudaFree(dev);
    ck_assert_msg(text != NULL, "%s", err.msg);
    fpk_stats *got = malloc(sizeof *got), *want = malloc(sizeof *want);
    ck_assert(got && want);
    ck_assert_int_eq(fpk_stats_from_json(got, text, &err), FPK_OK);
    fpk_ctx c = fpk_ctx_default();
    c.round = FPK_SR;
    c.ftz = true;
    fpk_stats_init(want, f, NF, 1024.0, &c);
    fpk_stats_add(want, x, 1000);
    ck_assert_mem_eq(got, want, sizeof *got);
    char *expect = fpk_stats_to_json(want);
    ck_assert_str_eq(text, expect);
    fpk_cuda_free(text);
    free(expect);
    free(got);
    free(want);
}
END_TEST

/* 2^31 + 300 elements: every e4m3 encoding over and over. */
START_TEST(test_two_launches)
{
    const fpk_format *f[NF];
    formats_init(f);
    size_t n = ((size_t)1 << 31) + 300;
    unsigned char period[256];
    double x[256];
    for (int i = 0; i < 256; i++) {
        period[i] = (unsigned char)i;
        x[i] = fpk_to_double(&fpk_e4m3, (fpk_bits)i);
    }
    unsigned char *dev;
    cudaError_t rc = cudaMalloc((void **)&dev, n);
    if (rc == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        printf("%s: two launches: not checked, 2 GiB of device memory not available\n", SUITE);
        return;
    }
    ck_assert_int_eq(rc, cudaSuccess);
    /* the period, then doubled in place up to n */
    ck_assert_int_eq(cudaMemcpy(dev, period, 256, cudaMemcpyHostToDevice), cudaSuccess);
    for (size_t have = 256; have < n; have *= 2)
        ck_assert_int_eq(cudaMemcpy(dev + have, dev, n - have < have ? n - have : have,
                                    cudaMemcpyDeviceToDevice),
                         cudaSuccess);
    fpk_ctx c = fpk_ctx_default();
    fpk_stats *got = malloc(sizeof *got), *want = malloc(sizeof *want);
    ck_assert(got && want);
    fpk_error err;
    ck_assert_msg(fpk_cuda_stats(dev, n, FPK_DTYPE_E4M3, f, NF, 1.0, &c, got, 0, &err) == FPK_OK,
                  "%s", err.msg);
    cudaFree(dev);
    /* n / 256 periods: the counts of one period times n / 256 */
    fpk_stats_init(want, f, NF, 1.0, &c);
    fpk_stats_add(want, x, 256);
    uint64_t q = n / 256;
    want->count *= q;
    want->zeros *= q;
    want->nonfinite *= q;
    for (int b = 0; b < FPK_LOG2_BINS; b++)
        want->log2_hist[b] *= q;
    for (int j = 0; j < NF; j++) {
        want->fmt[j].underflow *= q;
        want->fmt[j].subnormal *= q;
        want->fmt[j].overflow *= q;
    }
    fpk_stats_add(want, x, n % 256);
    ck_assert_mem_eq(got, want, sizeof *got);
    printf("%s: %zu e4m3 elements in two launches: equal\n", SUITE, n);
    free(got);
    free(want);
}
END_TEST

int main(void)
{
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver ||
        (rc == cudaSuccess && count == 0)) {
        printf("%s: no GPU (%s): skipped\n", SUITE,
               rc != cudaSuccess ? cudaGetErrorString(rc) : "no CUDA device");
        return 77;
    }
    if (rc != cudaSuccess) {
        printf("%s: counting the CUDA devices: %s\n", SUITE, cudaGetErrorString(rc));
        return 1;
    }
    seed = tu_seed(SUITE);
    Suite *s = suite_create("cuda_device");
    TCase *tc = tcase_create("cuda_device");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_encodings);
    tcase_add_test(tc, test_samples);
    tcase_add_test(tc, test_json);
    tcase_add_test(tc, test_two_launches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    /* The CUDA runtime, set up above, does not survive fork(): the tests
     * run in this process. */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
