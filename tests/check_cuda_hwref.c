/* fpk-hwcheck's host side without a device (cuda/hwcheck_ref.c): the
 * comparison of device results with the library's, on results made to
 * agree and then with planted differences of every kind (a NaN pattern, a
 * NaN into FP4, a NaN given as infinity, a value rounded the other way, an
 * overflow, a sign, a container with low bits set, an __hfma result), each counted in its
 * class, with the first examples in input order; and the classes
 * themselves, one example each. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcheck.h"

/* A chunk of float32 inputs with the library's own results as the
 * "device's", then planted differences. */
START_TEST(test_compare_conv)
{
    enum { N = 1 << 17 };
    const uint32_t first = 0x7f7f0000; /* up to the largest finite, inf, NaNs */
    void *out[HW_NCONV];
    for (int k = 0; k < HW_NCONV; k++) {
        out[k] = calloc(N, (size_t)hw_convs[k].bytes);
        ck_assert_ptr_nonnull(out[k]);
        fpk_ctx c = fpk_ctx_default();
        c.round = hw_convs[k].mode;
        c.saturate = hw_convs[k].saturate;
        for (size_t i = 0; i < N; i++) {
            uint64_t v = fpk_convert(hw_convs[k].f, &fpk_fp32, first + (uint32_t)i, &c)
                         << hw_convs[k].shift;
            memcpy((char *)out[k] + i * (size_t)hw_convs[k].bytes, &v, (size_t)hw_convs[k].bytes);
        }
    }
    hw_tally t[HW_NCONV];
    memset(t, 0, sizeof t);
    hw_compare_conv(first, N, out, t, 3);
    for (int k = 0; k < HW_NCONV; k++) {
        ck_assert_uint_eq(t[k].cases, N);
        ck_assert_uint_eq(t[k].agree, N);
    }
    printf("check_cuda_hwref: %d conversions x %d inputs compared, all agree\n", HW_NCONV, N);

    uint16_t *h = out[HW_FP16];
    size_t nan_i = 0x7f800001 - first; /* a NaN input: fp16 NaN 0x7fff, as CUDA gives */
    size_t max_i = 0x7f7fffff - first; /* the largest finite float32: fp16 inf */
    h[nan_i] = 0x7fff;
    h[max_i] = 0x7bff;                 /* saturated instead: an overflow mismatch */
    h[max_i - 1] ^= 0x8000;            /* -inf: a sign mismatch */
    uint8_t *e1 = out[HW_E2M1];
    e1[nan_i] = 0x0;                   /* NaN into FP4: a convention */
    uint32_t *tf = out[HW_TF32_RNA];
    tf[5] |= 1;                        /* a container with a low bit set */
    tf[nan_i] = 0x7f800000;            /* NaN 0x7f800001 given as +inf */
    uint32_t *tn = out[HW_TF32_RN];
    tn[7] += 1 << 13;                  /* rounded the other way */
    memset(t, 0, sizeof t);
    hw_compare_conv(first, N, out, t, 4);
    ck_assert_uint_eq(t[HW_FP16].nan_pattern.n, 1);
    ck_assert_uint_eq(t[HW_FP16].nan_pattern.want, 0x7e00);
    ck_assert_uint_eq(t[HW_FP16].nan_pattern.got, 0x7fff);
    ck_assert_uint_eq(t[HW_FP16].by_class[HW_OVERFLOW], 1);
    ck_assert_uint_eq(t[HW_FP16].by_class[HW_SIGN], 1);
    ck_assert_uint_eq(hw_tally_mismatches(&t[HW_FP16]), 2);
    ck_assert_uint_eq(t[HW_FP16].agree, N - 3);
    ck_assert_uint_eq(t[HW_E2M1].nan_into.n, 1);
    ck_assert_uint_eq(hw_tally_mismatches(&t[HW_E2M1]), 0);
    ck_assert_uint_eq(t[HW_TF32_RNA].by_class[HW_OTHER], 1);
    ck_assert_uint_eq(t[HW_TF32_RNA].nan_to_inf.n, 1);
    ck_assert_uint_eq(t[HW_TF32_RNA].nan_to_inf.got, 0x3fc00);
    ck_assert_uint_eq(hw_tally_mismatches(&t[HW_TF32_RNA]), 1);
    ck_assert_uint_eq(t[HW_TF32_RN].by_class[HW_ROUNDING], 1);
    ck_assert_uint_eq(t[HW_TF32_RN].ex[0].in[0], first + 7);
    /* examples in input order, whatever the threads */
    ck_assert_int_eq(t[HW_FP16].nex, 2);
    ck_assert(t[HW_FP16].ex[0].in[0] < t[HW_FP16].ex[1].in[0]);
    printf("check_cuda_hwref: 7 planted differences, each counted in its class\n");
    for (int k = 0; k < HW_NCONV; k++)
        free(out[k]);
}
END_TEST

START_TEST(test_classify)
{
    ck_assert_int_eq(hw_classify(&fpk_fp16, 0x3c00, 0x3c01), HW_ROUNDING);
    ck_assert_int_eq(hw_classify(&fpk_fp16, 0x0001, 0x0000), HW_SUBNORMAL);
    ck_assert_int_eq(hw_classify(&fpk_fp16, 0x7c00, 0x7bff), HW_OVERFLOW);
    ck_assert_int_eq(hw_classify(&fpk_fp16, 0x7e00, 0x3c00), HW_NAN);
    ck_assert_int_eq(hw_classify(&fpk_fp16, 0x3c00, 0xbc00), HW_SIGN);
    ck_assert_int_eq(hw_classify(&fpk_fp16, 0x3c00, 0x4000), HW_OTHER);
}
END_TEST

/* Pairs with the first operand 0x3c00 (1.0 in fp16), the library's results,
 * one planted __hfma difference. */
START_TEST(test_compare_arith)
{
    enum { N = 1 << 16 };
    const uint64_t first = (uint64_t)0x3c00 << 16;
    uint16_t *out[HW_NOPS];
    fpk_ctx c = fpk_ctx_default();
    for (int k = 0; k < HW_NOPS; k++) {
        out[k] = malloc(N * sizeof **out);
        ck_assert_ptr_nonnull(out[k]);
    }
    for (size_t i = 0; i < N; i++) {
        out[HW_ADD][i] = (uint16_t)fpk_add(&fpk_fp16, 0x3c00, i, &c);
        out[HW_MUL][i] = (uint16_t)fpk_mul(&fpk_fp16, 0x3c00, i, &c);
        for (int j = 0; j < HW_NFMA_C; j++)
            out[HW_FMA0 + j][i] = (uint16_t)fpk_fma(&fpk_fp16, 0x3c00, i, hw_fma_c[0][j], &c);
    }
    out[HW_FMA1][0x1234] ^= 1;
    hw_tally t[HW_NOPS];
    memset(t, 0, sizeof t);
    hw_compare_arith(0, first, N, (const uint16_t *const *)out, t, 2);
    ck_assert_uint_eq(t[HW_ADD].agree, N);
    ck_assert_uint_eq(t[HW_MUL].agree, N);
    ck_assert_uint_eq(t[HW_FMA0].agree, N);
    ck_assert_uint_eq(hw_tally_mismatches(&t[HW_FMA1]), 1);
    ck_assert_uint_eq(t[HW_FMA1].ex[0].in[0], 0x3c00);
    ck_assert_uint_eq(t[HW_FMA1].ex[0].in[1], 0x1234);
    ck_assert_uint_eq(t[HW_FMA1].ex[0].in[2], hw_fma_c[0][1]);
    printf("check_cuda_hwref: %d fp16 pairs x %d operations compared, one planted mismatch "
           "found\n",
           N, HW_NOPS);
    for (int k = 0; k < HW_NOPS; k++)
        free(out[k]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_hwref");
    TCase *tc = tcase_create("cuda_hwref");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_compare_conv);
    tcase_add_test(tc, test_classify);
    tcase_add_test(tc, test_compare_arith);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
