/* fpk-hwcheck --mma's host side (cuda/hwcheck_mma.c) without a GPU: a
 * stand-in for the device's hw_dev_mma computes each tile from the buffers
 * as the WMMA layouts read them (A row-major, B column-major, C and D
 * row-major; tf32 in binary32 containers), and one for hw_dev_dots the FP8
 * dot products, with the Hopper model, so the host's comparison must find
 * the Hopper model in full agreement: that checks the tiles' layout and
 * indexing end to end.  The adversarial tiles must tell the architectures
 * apart: the Volta, Turing and Ampere models each disagree somewhere.  A
 * measured parameter set is counted apart, and a wrong one found wrong. */
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

/* ... and of hw_dev_dots, the dot products one after the other, each
 * under Hopper's published set for its input. */
int hw_dev_dots(hw_tc_input which, int n, size_t count, const fpk_bits *a, const fpk_bits *b,
                const uint32_t *c, uint32_t *d, char *msg, size_t len)
{
    (void)msg;
    (void)len;
    fpk_tc_params p;
    ck_assert(hw_tc_published(FPK_TC_HOPPER, which, &p));
    ck_assert_int_eq(n % hw_tcs[which].k, 0);
    for (size_t i = 0; i < count; i++)
        d[i] = (uint32_t)fpk_tc_dot_params(&p, hw_tcs[which].in, &fpk_fp32, a + i * (size_t)n,
                                           b + i * (size_t)n, (size_t)n, c[i]);
    return 0;
}

enum { NT = 64 };

static const hw_device hopper = {
    .name = "stand-in", .major = 9, .minor = 0, .ampere = true, .fp8 = true};

START_TEST(test_layout_and_models)
{
    hw_mma_tally t[HW_NTC];
    memset(t, 0, sizeof t);
    char msg[256];
    ck_assert_int_eq(hw_mma_check(&hopper, NT, 7, 2, NULL, t, msg, sizeof msg), 0);
    for (int w = 0; w < HW_NTC; w++) {
        bool fp8 = hw_tcs[w].in == &fpk_e4m3 || hw_tcs[w].in == &fpk_e5m2;
        ck_assert_uint_eq(t[w].total, fp8 ? NT * 16 : NT * 256);
        printf("check_cuda_mmahost: %s: %llu dot products; agreement:", hw_tcs[w].name,
               (unsigned long long)t[w].total);
        for (int a = 0; a < FPK_TC_ARCH_COUNT; a++)
            printf(" %s %llu", fpk_tc_arch_name((fpk_tc_arch)a), (unsigned long long)t[w].agree[a]);
        printf("\n");
        ck_assert_uint_eq(t[w].agree[FPK_TC_HOPPER], t[w].total);
        ck_assert_uint_eq(t[w].first.agree, t[w].total);
        ck_assert_uint_eq(t[w].agree_measured, 0); /* none given */
        if (!fp8)
            ck_assert_uint_lt(t[w].agree[FPK_TC_AMPERE], t[w].total);
    }
    ck_assert_uint_lt(t[HW_TC_FP16].agree[FPK_TC_VOLTA], t[HW_TC_FP16].total);
    ck_assert_uint_lt(t[HW_TC_FP16].agree[FPK_TC_TURING], t[HW_TC_FP16].total);
    ck_assert_uint_eq(t[HW_TC_BF16].agree[FPK_TC_VOLTA], 0); /* no bf16 on Volta: not compared */
}
END_TEST

/* Measured sets: the device's own agrees everywhere; another (a narrower
 * window, a different promotion interval) is told apart, and the first
 * disagreements are then listed against it. */
START_TEST(test_measured)
{
    fpk_tc_params same[HW_NTC], other[HW_NTC];
    const fpk_tc_params *m_same[HW_NTC], *m_other[HW_NTC];
    for (int w = 0; w < HW_NTC; w++) {
        ck_assert(hw_tc_published(FPK_TC_HOPPER, (hw_tc_input)w, &same[w]));
        other[w] = same[w];
        if (other[w].promote)
            other[w].promote = 64;
        else
            other[w].window--;
        m_same[w] = &same[w];
        m_other[w] = &other[w];
    }
    m_same[HW_TC_BF16] = m_other[HW_TC_BF16] = NULL; /* not measured */
    hw_mma_tally a[HW_NTC], b[HW_NTC];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    char msg[256];
    ck_assert_int_eq(hw_mma_check(&hopper, NT, 9, 2, m_same, a, msg, sizeof msg), 0);
    ck_assert_int_eq(hw_mma_check(&hopper, NT, 9, 2, m_other, b, msg, sizeof msg), 0);
    for (int w = 0; w < HW_NTC; w++) {
        printf("check_cuda_mmahost: %s: measured set agrees on %llu and %llu of %llu\n",
               hw_tcs[w].name, (unsigned long long)a[w].agree_measured,
               (unsigned long long)b[w].agree_measured, (unsigned long long)a[w].total);
        ck_assert_uint_eq(a[w].first.agree, a[w].total);
        if (w == HW_TC_BF16) {
            ck_assert_uint_eq(a[w].agree_measured, 0);
            ck_assert_uint_eq(b[w].first.agree, b[w].total); /* against Hopper's */
            continue;
        }
        ck_assert_uint_eq(a[w].agree_measured, a[w].total);
        ck_assert_uint_lt(b[w].agree_measured, b[w].total);
        ck_assert_uint_eq(b[w].first.agree, b[w].agree_measured);
        ck_assert_int_gt(b[w].first.nex, 0);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_mmahost");
    TCase *tc = tcase_create("cuda_mmahost");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_layout_and_models);
    tcase_add_test(tc, test_measured);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
