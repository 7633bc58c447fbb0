/* libfpkit_cuda's API where no device is needed: the refusals that come
 * before any CUDA call (scale, format count, alignment, names), zero
 * elements (the empty statistics, as fpk_stats_init makes them, and their
 * JSON), and memory the device cannot read (host memory from malloc, or no
 * device at all): FPK_EIO with a message, the statistics untouched. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit_cuda.h"
#include "testutil.h"

static const fpk_format *const formats[4] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2};

START_TEST(test_refusals)
{
    fpk_stats *s = malloc(sizeof *s);
    ck_assert_ptr_nonnull(s);
    fpk_error err;
    static const double bad[] = {0.0, -2.0, 1.0 / 0.0};
    float x[4] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.code = FPK_OK;
        ck_assert_int_eq(fpk_cuda_stats(x, 4, FPK_DTYPE_F32, formats, 4, bad[i], NULL, s, 0, &err),
                         FPK_EFORMAT);
        ck_assert_int_eq(err.code, FPK_EFORMAT);
        ck_assert_ptr_nonnull(strstr(err.msg, "scale"));
    }
    ck_assert_int_eq(fpk_cuda_stats(x, 4, FPK_DTYPE_F32, formats, 17, 1.0, NULL, s, 0, &err),
                     FPK_EFORMAT);
    ck_assert_int_eq(fpk_cuda_stats(x, 4, (fpk_dtype)99, formats, 4, 1.0, NULL, s, 0, &err),
                     FPK_EFORMAT);
    ck_assert_int_eq(fpk_cuda_stats((char *)x + 1, 2, FPK_DTYPE_F32, formats, 4, 1.0, NULL, s, 0,
                                    &err),
                     FPK_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "aligned"));
    free(s);
}
END_TEST

START_TEST(test_empty)
{
    fpk_stats *s = malloc(sizeof *s), *want = malloc(sizeof *want);
    ck_assert(s && want);
    fpk_ctx c = fpk_ctx_default();
    c.round = FPK_RTZ;
    c.saturate = true;
    fpk_error err;
    fpk_stats_init(want, formats, 4, 0.5, &c);
    ck_assert_int_eq(fpk_cuda_stats(NULL, 0, FPK_DTYPE_BF16, formats, 4, 0.5, &c, s, 0, &err),
                     FPK_OK);
    ck_assert_mem_eq(s, want, sizeof *s);
    char *text = fpk_cuda_stats_json(NULL, 0, "bfloat16", "fp16,bf16,e4m3,e5m2", 0.5, "rtz",
                                     false, true, 0, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    char *expect = fpk_stats_to_json(want);
    ck_assert_str_eq(text, expect);
    fpk_cuda_free(text);
    free(expect);
    fpk_cuda_free(NULL);
    free(s);
    free(want);
}
END_TEST

START_TEST(test_json_names)
{
    static const struct {
        const char *dtype, *formats, *round, *msg;
    } bad[] = {
        {"f24", "fp16", "rne", "unknown element type \"f24\""},
        {"f32", "fp16,fp17", "rne", "unknown format \"fp17\""},
        {"f32", "fp16,,bf16", "rne", "format list"},
        {"f32", "fp16,", "rne", "format list"},
        {"f32", "fp16,half", "rne", "listed twice"},
        {"f32", "fp16", "nearest", "unknown rounding mode \"nearest\""},
        {"f32",
         "fp16,bf16,e4m3,e5m2,tf32,fp32,fp64,e3m2,e2m3,e2m1,e8m0,e6m9,e7m8,e5m5,e4m4,e3m3,e2m2",
         "rne", "more than 16"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fpk_error err = {0};
        ck_assert_ptr_null(fpk_cuda_stats_json(NULL, 0, bad[i].dtype, bad[i].formats, 1.0,
                                               bad[i].round, false, false, 0, &err));
        ck_assert_int_eq(err.code, FPK_ESYNTAX);
        ck_assert_msg(strstr(err.msg, bad[i].msg), "\"%s\" lacks \"%s\"", err.msg, bad[i].msg);
    }
}
END_TEST

/* Host memory from malloc is not memory the device can read; without a
 * device the runtime's own error comes back.  Either way FPK_EIO. */
START_TEST(test_not_device_memory)
{
    fpk_stats *s = malloc(sizeof *s), *before = malloc(sizeof *before);
    float *x = calloc(1024, sizeof *x);
    ck_assert(s && before && x);
    fpk_error err;
    fpk_ctx c = fpk_ctx_default();
    fpk_stats_init(s, formats, 4, 1.0, &c);
    memcpy(before, s, sizeof *s);
    ck_assert_int_eq(fpk_cuda_stats_add(s, x, 1024, FPK_DTYPE_F32, 0, &err), FPK_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "device statistics: "));
    ck_assert_mem_eq(s, before, sizeof *s);
    free(s);
    free(before);
    free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_api");
    TCase *tc = tcase_create("cuda_api");
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_json_names);
    tcase_add_test(tc, test_not_device_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
