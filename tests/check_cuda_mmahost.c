/* fpk-hwcheck --mma's host side (cuda/hwcheck_mma.c) without a GPU: a
 * stand-in for the device's hw_dev_mma computes each tile from the buffers
 * as the WMMA layouts read them (A row-major, B column-major, C and D
 * row-major; tf32 in binary32 containers) with the Hopper model, so the
 * host's comparison must find the Hopper model in full agreement: that
 * checks the tiles' layout and indexing end to end.  The adversarial tiles
 * must tell the architectures apart: the Volta, Turing and Ampere models
 * each disagree somewhere, and the first disagreements are listed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcheck.h"

int hw_dev_mma(const fpk_format *in, size_t nt, const void *a, const void *b, const float *c,
               float *d, char *msg, size_t len)
{
    (void)msg;
    (void)len;
    bool tf32 = in == &fpk_tf32;
    int k = tf32 ? 8 : 16;
    for (size_t t = 0; t < nt; t++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) {
                fpk_bits row[16], col[16];
                for (int q = 0; q < k; q++) {
                    size_t ai = t * 16 * (size_t)k + (size_t)i * k + q;
                    size_t bi = t * 16 * (size_t)k + (size_t)j * k + q;
                    row[q] = tf32 ? ((const uint32_t *)a)[ai] >> 13 : ((const uint16_t *)a)[ai];
                    col[q] = tf32 ? ((const uint32_t *)b)[bi] >> 13 : ((const uint16_t *)b)[bi];
                }
                uint32_t cij, dij;
                memcpy(&cij, &c[t * 256 + (size_t)i * 16 + j], sizeof cij);
                dij = (uint32_t)fpk_tc_dot(FPK_TC_HOPPER, in, &fpk_fp32, row, col, (size_t)k, cij);
                memcpy(&d[t * 256 + (size_t)i * 16 + j], &dij, sizeof dij);
            }
    return 0;
}

START_TEST(test_layout_and_models)
{
    hw_device d = {.name = "stand-in", .major = 9, .minor = 0, .ampere = true};
    uint64_t agree[3][FPK_TC_ARCH_COUNT] = {{0}}, total[3] = {0};
    hw_tally first[3];
    memset(first, 0, sizeof first);
    char msg[256];
    enum { NT = 64 };
    ck_assert_int_eq(hw_mma_check(&d, NT, 7, 2, agree, total, first, msg, sizeof msg), 0);
    static const char *const names[3] = {"fp16", "bf16", "tf32"};
    for (int f = 0; f < 3; f++) {
        ck_assert_uint_eq(total[f], NT * 256);
        printf("check_cuda_mmahost: %s: %u dot products; agreement:", names[f], NT * 256);
        for (int a = 0; a < FPK_TC_ARCH_COUNT; a++)
            printf(" %s %llu", fpk_tc_arch_name((fpk_tc_arch)a), (unsigned long long)agree[f][a]);
        printf("\n");
        ck_assert_uint_eq(agree[f][FPK_TC_HOPPER], total[f]);
        ck_assert_uint_eq(first[f].agree, total[f]);
        ck_assert_uint_lt(agree[f][FPK_TC_AMPERE], total[f]);
    }
    ck_assert_uint_lt(agree[0][FPK_TC_VOLTA], total[0]);
    ck_assert_uint_lt(agree[0][FPK_TC_TURING], total[0]);
    ck_assert_uint_eq(agree[1][FPK_TC_VOLTA], 0); /* no bf16 on Volta: not compared */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_mmahost");
    TCase *tc = tcase_create("cuda_mmahost");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_layout_and_models);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
