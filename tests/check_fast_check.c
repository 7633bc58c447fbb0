/* The sample checks of the fast paths (lib/tensor/fast-check.h), which an
 * --enable-assertions build runs inside every array conversion, recipe
 * and Hadamard transform that takes the kernels: each must accept the
 * kernels' own results and refuse them with one sampled bit, scale or
 * flag changed, on every kernel set; and in an assertions build a refused
 * check must abort.  The samples themselves: every index of a short
 * range, both ends and an even spread of a long one.  Linked with the
 * library's layers themselves, for their internal entry points. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fast-check.h"
#include "testutil.h"

#define SUITE "check_fast_check"

static uint64_t seed;
static fpki_isa best; /* the kernel sets are 0 .. best */

/* Float32 values of every magnitude, with zeros, ties of the 8-bit
 * formats, infinities and NaNs among them. */
static void fill(float *x, size_t n, tu_rng *rng)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_rng_next(rng);
        uint32_t sign = (uint32_t)r & 0x80000000u, exp = (uint32_t)(100 + (r >> 40) % 60) << 23;
        switch (r >> 60) {
        case 0: x[i] = 0; break;
        case 1: x[i] = fpki_f32_value(sign | 0x7f800000u | (r % 3 ? 0x400000u : 0)); break;
        case 2: x[i] = fpki_f32_value(sign | exp | 0x80000u); break; /* an e4m3 tie */
        default: x[i] = fpki_f32_value(sign | exp | ((uint32_t)r & 0x7fffffu)); break;
        }
    }
}

START_TEST(test_sample)
{
    static const size_t maxes[] = {2, 3, 8, 16, 32};
    static const size_t ns[] = {0,  1,  2,  3,  5,   8,     9,
                                16, 17, 31, 32, 33, 100, 65536, (size_t)1 << 40};
    size_t cases = 0;
    for (size_t a = 0; a < sizeof maxes / sizeof maxes[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
            size_t max = maxes[a], n = ns[b];
            fpki_sample s;
            fpki_sample_of(&s, n, max);
            ck_assert(s.all == (n <= max));
            ck_assert_uint_eq(s.n, n <= max ? n : max);
            for (size_t i = 0; i < s.n; i++) {
                ck_assert_uint_lt(s.at[i], n);
                if (i)
                    ck_assert_uint_lt(s.at[i - 1], s.at[i]);
                if (s.all)
                    ck_assert_uint_eq(s.at[i], i);
            }
            if (n > max) { /* both ends, and no gap of more than twice the even one */
                ck_assert_uint_eq(s.at[0], 0);
                ck_assert_uint_eq(s.at[s.n - 1], n - 1);
                for (size_t i = 1; i < s.n; i++)
                    ck_assert_uint_le(s.at[i] - s.at[i - 1], 2 * (n / (max - 1)) + 2);
            }
            cases++;
        }
    printf("%s: %zu samples\n", SUITE, cases);
}
END_TEST

/* Array conversions into F on every kernel set: the check accepts the
 * results and refuses each sampled element with its last bit flipped, a
 * flag it raised left out, and, where the sample is the whole range, a
 * flag it did not raise. */
START_TEST(test_convert)
{
    static const char *const isas[] = {"c", "avx2", "avx512"};
    static const fpk_format *const fs[] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2};
    static const fpk_round modes[] = {FPK_RNE, FPK_RTZ, FPK_SR};
    static const size_t ns[] = {1, 7, 32, 33, 1000, 70000};
    enum { MAXN = 70000 };
    static float x[MAXN];
    static uint32_t z[MAXN];
    tu_rng rng;
    tu_rng_init(&rng, seed);
    fill(x, MAXN, &rng);
    size_t accepted = 0, refused = 0;
    for (int isa = 0; isa <= (int)best; isa++) {
        setenv("FPK_ISA", isas[isa], 1);
        for (size_t fi = 0; fi < sizeof fs / sizeof fs[0]; fi++)
            for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++)
                for (int quant = 0; quant < 2; quant++)
                    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                        const fpk_format *f = fs[fi];
                        size_t n = ns[ni], size = quant ? 4 : fpk_array_size(f);
                        fpk_ctx c = fpk_ctx_default(), c0;
                        c.round = modes[mi];
                        c.sr_seed = seed;
                        c.sr_counter = 12345;
                        c0 = c;
                        ck_assert(fpki_array_fast(f, &c));
                        if (quant)
                            fpk_array_quantize(f, (float *)z, FPK_DTYPE_F32, x, n, &c, 1);
                        else
                            fpk_array_convert(f, z, FPK_DTYPE_F32, x, n, &c, 1);
                        /* the first piece: its elements, all the flags
                         * where the call is one piece */
                        size_t len = n < FPKI_PIECE ? n : FPKI_PIECE;
                        fpki_convert_check k;
                        fpki_convert_expect(&k, f, quant, FPK_DTYPE_F32, x, 0, len, &c0);
                        unsigned flags = n == len ? c.flags : k.flags;
                        ck_assert(fpki_convert_agrees(&k, z, size, flags));
                        accepted++;
                        for (size_t j = 0; j < k.s.n; j++) {
                            uint8_t *b = (uint8_t *)z + size * k.s.at[j];
                            *b ^= 1;
                            ck_assert_msg(!fpki_convert_agrees(&k, z, size, flags),
                                          "%s %s element %zu of %zu changed", f->name,
                                          isas[isa], k.s.at[j], n);
                            *b ^= 1;
                            refused++;
                        }
                        for (unsigned bit = 1; bit <= k.flags; bit <<= 1)
                            if (k.flags & bit) {
                                ck_assert(!fpki_convert_agrees(&k, z, size, flags & ~bit));
                                refused++;
                            }
                        unsigned extra = ~flags & FPK_INEXACT ? FPK_INEXACT : FPK_INVALID;
                        if (!(flags & extra)) {
                            ck_assert(fpki_convert_agrees(&k, z, size, flags | extra) ==
                                      !k.s.all);
                            refused += k.s.all;
                        }
                    }
    }
    unsetenv("FPK_ISA");
    printf("%s: array conversions: %zu accepted, %zu changed and refused\n", SUITE, accepted,
           refused);
}
END_TEST

/* Recipes on every kernel set: the check accepts the fast path's codes,
 * values, scales and flags, and refuses each with a sampled one changed. */
START_TEST(test_recipe)
{
    static const char *const names[] = {"mxfp8-e4m3", "mxfp4", "nvfp4", "fp8-block128x128",
                                        "fp8-tensor-current", "e4m3/e8m0/ceil/1x32"};
    static const size_t shapes[][2] = {{1, 32}, {3, 48}, {64, 256}, {300, 160}};
    enum { MAXN = 300 * 256 };
    static float x[MAXN], y[MAXN];
    static uint8_t codes[MAXN];
    static uint32_t scales[MAXN];
    tu_rng rng;
    tu_rng_init(&rng, seed + 1);
    fill(x, MAXN, &rng);
    size_t accepted = 0, refused = 0;
    for (int isa = 0; isa <= (int)best; isa++)
        for (size_t ri = 0; ri < sizeof names / sizeof names[0]; ri++)
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                fpk_recipe r;
                fpk_error err;
                ck_assert_int_eq(fpk_recipe_parse(names[ri], &r, &err), FPK_OK);
                size_t rows = shapes[si][0], cols = shapes[si][1];
                fpk_quantized q = {.codes = codes, .scales = scales, .y = y};
                fpki_recipe_path path = {.general = false, .isa = (fpki_isa)isa};
                ck_assert_int_eq(fpki_recipe_quantize(&r, x, rows, cols, NULL, &q, NULL, &err,
                                                      path),
                                 FPK_OK);
                fpk_recipe_range e = {0};
                fpk_recipe_plan p;
                ck_assert_int_eq(fpk_recipe_scan(&r, x, rows, cols, &e, &err), FPK_OK);
                ck_assert_int_eq(fpk_recipe_plan_init(&p, &r, rows, cols, &e, NULL, &err), FPK_OK);
                static fpki_recipe_check k;
                fpki_recipe_expect(&k, &p, x, 0, rows);
                ck_assert_msg(fpki_recipe_agrees(&k, &q), "%s %zux%zu", names[ri], rows, cols);
                accepted++;
                for (size_t m = 0; m < k.nblocks; m++) {
                    if (k.block[m].at == SIZE_MAX)
                        continue;
                    scales[k.block[m].at] ^= 1;
                    ck_assert(!fpki_recipe_agrees(&k, &q));
                    scales[k.block[m].at] ^= 1;
                    refused++;
                }
                for (size_t j = 0; j < k.n; j++) {
                    size_t at = k.elem[j].at;
                    codes[at] ^= 1;
                    ck_assert(!fpki_recipe_agrees(&k, &q));
                    codes[at] ^= 1;
                    y[at] = fpki_f32_value(fpki_f32_bits(y[at]) ^ 1);
                    ck_assert(!fpki_recipe_agrees(&k, &q));
                    y[at] = fpki_f32_value(fpki_f32_bits(y[at]) ^ 1);
                    refused += 2;
                }
                unsigned all = q.flags;
                for (unsigned bit = 1; bit <= k.flags; bit <<= 1)
                    if (k.flags & bit) {
                        q.flags = all & ~bit;
                        ck_assert(!fpki_recipe_agrees(&k, &q));
                        refused++;
                    }
                q.flags = all;
            }
    printf("%s: recipes: %zu accepted, %zu changed and refused\n", SUITE, accepted, refused);
}
END_TEST

/* The Hadamard kernels: the check accepts their runs and refuses a
 * sampled run with one output changed. */
START_TEST(test_rht)
{
    enum { N = 16 * 200 };
    static float x[N], z[N];
    tu_rng rng;
    tu_rng_init(&rng, seed + 2);
    fill(x, N, &rng);
    for (size_t i = 0; i < N; i++) /* finite: a run with a NaN is all NaN */
        if ((fpki_f32_bits(x[i]) & 0x7f800000u) == 0x7f800000u)
            x[i] = 1.5f;
    size_t refused = 0;
    for (int isa = 0; isa <= (int)best; isa++) {
        fpki_rht_rows(x, N, 0xa5c3, z, (fpki_recipe_path){.general = false, .isa = (fpki_isa)isa});
        ck_assert(fpki_rht_agrees(x, N, 0xa5c3, z, FPKI_SAMPLE_MAX));
        fpki_sample runs;
        fpki_sample_of(&runs, N / 16, FPKI_SAMPLE_MAX);
        for (size_t m = 0; m < runs.n; m++) {
            float *o = z + 16 * runs.at[m] + m % 16;
            *o = fpki_f32_value(fpki_f32_bits(*o) ^ 0x10000);
            ck_assert(!fpki_rht_agrees(x, N, 0xa5c3, z, FPKI_SAMPLE_MAX));
            *o = fpki_f32_value(fpki_f32_bits(*o) ^ 0x10000);
            refused++;
        }
    }
    printf("%s: Hadamard runs: %zu changed and refused\n", SUITE, refused);
}
END_TEST

#ifdef FPK_ASSERTIONS
/* A check that refuses ends the program, as any failed FPKI_ASSERT: in a
 * child of its own, since make check runs the suites unforked
 * (CK_FORK=no). */
START_TEST(test_assertion_aborts)
{
    static float x[64];
    static uint16_t z[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)i / 3;
    fpk_ctx c = fpk_ctx_default();
    fpk_array_convert(&fpk_fp16, z, FPK_DTYPE_F32, x, 64, &c, 1);
    fpki_convert_check k;
    const fpk_ctx d = fpk_ctx_default();
    fpki_convert_expect(&k, &fpk_fp16, false, FPK_DTYPE_F32, x, 0, 64, &d);
    z[63] ^= 1;
    printf("%s: the line \"internal check failed\" that follows is expected\n", SUITE);
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0}); /* no core file */
        FPKI_ASSERT(fpki_convert_agrees(&k, z, 2, c.flags));
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                  "the refused check did not abort (status %d)", status);
}
END_TEST
#endif

int main(void)
{
    seed = tu_seed(SUITE);
    unsetenv("FPK_ISA");
    best = fpki_isa_best();
    printf("%s: kernel sets c to %s\n", SUITE, fpki_isa_name(best));
    Suite *s = suite_create("fast_check");
    TCase *tc = tcase_create("fast_check");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_sample);
    tcase_add_test(tc, test_convert);
    tcase_add_test(tc, test_recipe);
    tcase_add_test(tc, test_rht);
#ifdef FPK_ASSERTIONS
    tcase_add_test(tc, test_assertion_aborts);
    printf("%s: assertions on: a refused check aborts\n", SUITE);
#else
    printf("%s: assertions off (configure --enable-assertions): not checking that a refused "
           "check aborts\n",
           SUITE);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
