/* fpk-hwcheck --probe's inference (cuda/hwcheck_probe.c) without a GPU: a
 * stand-in for the device's hw_dev_dots computes every designed dot
 * product with the model itself under known parameters P, and the probe
 * must find P: every parameter the probes can observe equal to P's, none
 * other left open (the step's rounding only where the window is too
 * narrow for it to matter), and the published set reported as agreeing
 * exactly when P is it.  Then stand-ins that follow no parameter set (the
 * products taken out of order; the accumulator added apart) must leave no
 * set standing and say where the closest fails, and one whose device code
 * swaps results must be caught by the layout probes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcheck.h"

/* How the stand-in departs from the model. */
enum { EXACT, EVENS_FIRST, C_APART, SWAPPED };

static fpk_tc_params device;
static int departure;

int hw_dev_dots(hw_tc_input which, int n, size_t count, const fpk_bits *a, const fpk_bits *b,
                const uint32_t *c, uint32_t *d, char *msg, size_t len)
{
    (void)msg;
    (void)len;
    const fpk_format *in = hw_tcs[which].in;
    int k = hw_tcs[which].k;
    fpk_bits ra[1024], rb[1024];
    ck_assert_int_le(n, 1024);
    ck_assert_int_eq(n % k, 0);
    for (size_t i = 0; i < count; i++) {
        const fpk_bits *x = a + i * (size_t)n, *y = b + i * (size_t)n;
        if (departure == EVENS_FIRST) {
            /* each instruction's even positions before its odd ones */
            for (int j = 0; j < n; j++) {
                int base = j / k * k, r = j % k;
                int from = base + (r < k / 2 ? 2 * r : 2 * (r - k / 2) + 1);
                ra[j] = x[from];
                rb[j] = y[from];
            }
            x = ra;
            y = rb;
        }
        if (departure == SWAPPED && (i ^ 1) < count) {
            /* each pair of results swapped: the device code misplacing them */
            d[i] = (uint32_t)fpk_tc_dot_params(&device, in, &fpk_fp32, a + (i ^ 1) * (size_t)n,
                                               b + (i ^ 1) * (size_t)n, (size_t)n, c[i ^ 1]);
        } else if (departure == C_APART) {
            fpk_ctx rn = fpk_ctx_default();
            fpk_bits s = fpk_tc_dot_params(&device, in, &fpk_fp32, x, y, (size_t)n, 0);
            d[i] = (uint32_t)fpk_add(&fpk_fp32, c[i], s, &rn);
        } else {
            d[i] = (uint32_t)fpk_tc_dot_params(&device, in, &fpk_fp32, x, y, (size_t)n, c[i]);
        }
    }
    return 0;
}

/* Runs the probe on a stand-in with parameters P for WHICH; checks that
 * it finds P, with no open parameter outside OPEN.  The step's rounding
 * may stay open only where no probe can show it: a window below 22 bits,
 * or below 24 with fewer than 4 products a step.  (The probes that carry
 * into a higher binade need 4 products a step for a window of 22 or 23;
 * and as c is an addend of every step, the steps of zero products that
 * follow cut the sum again, to the window under its own exponent.) */
static void recovers(hw_tc_input which, fpk_tc_params p, fpk_tc_arch arch, unsigned open)
{
    if (p.window < 22 || (p.window < 24 && p.terms < 4))
        open |= HW_P_ROUND;
    device = p;
    departure = EXACT;
    hw_probe_result r;
    char msg[256], want[128], got[128];
    ck_assert_msg(hw_probe(which, arch, &r, msg, sizeof msg) == 0, "%s", msg);
    hw_tc_params_text(&p, want, sizeof want);
    hw_tc_params_text(&r.found, got, sizeof got);
    printf("check_cuda_probe: %-9s device %s: %d probes, %ld of %ld sets fit; found %s%s%s\n",
           hw_tcs[which].name, want, r.probes, r.survivors, r.candidates, got,
           r.open ? " (open: round)" : "", r.published[0] ? "" : " (the published set)");
    ck_assert_msg(r.survivors > 0, "%s: %s", want, r.misfit);
    ck_assert_msg((r.open & ~open) == 0, "%s: open parameters %#x", want, r.open);
    ck_assert_int_eq(r.found.terms, p.terms);
    ck_assert_int_eq(r.found.window, p.window);
    ck_assert_int_eq(r.found.wide, p.wide);
    ck_assert_int_eq(r.found.floor, p.floor);
    ck_assert_int_eq(r.found.promote, p.promote);
    if (!(r.open & HW_P_ROUND))
        ck_assert_int_eq(r.found.round, p.round);
    fpk_tc_params pub;
    bool published = hw_tc_published(arch, which, &pub) && pub.terms == p.terms &&
                     pub.window == p.window && pub.wide == p.wide && pub.floor == p.floor &&
                     pub.round == p.round && pub.promote == p.promote;
    ck_assert_msg(published == (r.published[0] == '\0'), "%s: %s", want, r.published);
}

/* Every architecture's published set (for FP8 on Hopper the candidate),
 * for each input whose instruction holds a step of it. */
START_TEST(test_published_sets)
{
    int found = 0;
    for (int which = 0; which < HW_NTC; which++)
        for (int a = 0; a < FPK_TC_ARCH_COUNT; a++) {
            fpk_tc_params p;
            if (hw_tc_published((fpk_tc_arch)a, (hw_tc_input)which, &p) &&
                p.terms <= hw_tcs[which].k) {
                recovers((hw_tc_input)which, p, (fpk_tc_arch)a, 0);
                found++;
            }
        }
    /* fp16: 4 architectures, bf16 and tf32: 2, each FP8 input: 1 */
    ck_assert_int_eq(found, 4 + 2 + 2 + 4);
}
END_TEST

START_TEST(test_other_sets)
{
    recovers(HW_TC_FP16, (fpk_tc_params){8, 24, true, true, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_FP16, (fpk_tc_params){16, 26, false, false, FPK_RNE, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_FP16, (fpk_tc_params){2, 30, true, false, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_BF16, (fpk_tc_params){16, 24, true, true, FPK_RNE, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_BF16, (fpk_tc_params){4, 22, true, false, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_BF16, (fpk_tc_params){8, 22, true, false, FPK_RNE, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_TF32, (fpk_tc_params){8, 22, false, false, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_TF32, (fpk_tc_params){1, 25, true, false, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
}
END_TEST

/* FP8 sets besides the candidate: a window too narrow for the step's
 * rounding to show, or wide enough; promotion intervals other than 128 (and
 * none where the kernel promotes: a chain can't tell). */
START_TEST(test_fp8)
{
    recovers(HW_TC_E4M3, (fpk_tc_params){16, 14, true, false, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_E5M2, (fpk_tc_params){32, 25, false, false, FPK_RNE, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_E4M3, (fpk_tc_params){32, 11, false, true, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_E4M3, (fpk_tc_params){4, 24, true, false, FPK_RTZ, 0}, FPK_TC_HOPPER, 0);
    recovers(HW_TC_E5M2_P128, (fpk_tc_params){8, 14, true, false, FPK_RTZ, 128}, FPK_TC_HOPPER,
             0);
    recovers(HW_TC_E4M3_P128, (fpk_tc_params){16, 12, true, false, FPK_RTZ, 64}, FPK_TC_HOPPER,
             0);
    recovers(HW_TC_E4M3_P128, (fpk_tc_params){32, 13, true, true, FPK_RTZ, 256}, FPK_TC_HOPPER,
             0);
    recovers(HW_TC_E5M2_P128, (fpk_tc_params){32, 25, true, false, FPK_RTZ, 128}, FPK_TC_HOPPER,
             0);
}
END_TEST

/* Devices outside the model: no set fits, and the report says which
 * probe the closest fails. */
START_TEST(test_departures)
{
    static const struct {
        int how;
        const char *what, *misfit;
    } devices[] = {
        {EVENS_FIRST, "taking even positions first", "the closest ("},
        {C_APART, "adding c apart", "the closest ("},
        {SWAPPED, "whose code swaps results", "the device code misplaces its inputs: \"layout: "},
    };
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        device = (fpk_tc_params){8, 24, true, false, FPK_RTZ, 0};
        departure = devices[i].how;
        hw_probe_result r;
        char msg[256];
        ck_assert_msg(hw_probe(HW_TC_FP16, FPK_TC_HOPPER, &r, msg, sizeof msg) == 0, "%s", msg);
        printf("check_cuda_probe: a device %s: %ld sets fit; %s\n", devices[i].what, r.survivors,
               r.misfit);
        ck_assert_int_eq(r.survivors, 0);
        ck_assert_ptr_nonnull(strstr(r.misfit, devices[i].misfit));
        if (devices[i].how != SWAPPED)
            ck_assert_ptr_nonnull(strstr(r.published, "hopper's parameters disagree first on"));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_probe");
    TCase *tc = tcase_create("cuda_probe");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_published_sets);
    tcase_add_test(tc, test_other_sets);
    tcase_add_test(tc, test_fp8);
    tcase_add_test(tc, test_departures);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
