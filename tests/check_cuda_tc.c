/* The tensor-core model (fpk_tc_dot, lib/core/tc.c) against the published
 * experiments of Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of
 * NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330 (2021): the inputs of the
 * tests of their sections A (subnormal numbers), B (accuracy of the dot
 * products), C (rounding modes) and D (features of the accumulator: 1 extra
 * alignment bits, 2 normalisation in addition, 3 in subtraction, 4 carry-out
 * bits, 5 monotonicity), as their test suite runs them on the V100, the T4
 * and the A100 (binary16 and bfloat16), with the outputs they report.  Each
 * expected value is written out below as the paper states it (1 + 2^-23 is
 * 0x3f800001), never computed.  Then cases worked out by hand from the
 * published parameters: the block sizes (4, 8, 16 products), Hopper's two
 * extra bits, the window of a leading product in [2, 4) (Khattak and
 * Mikaitis, arXiv:2512.07004), tf32, overflow and the special values; the
 * published parameter sets (fpk_tc_params_of), and other parameter sets
 * (fpk_tc_dot_params) worked out by hand: cutting toward minus infinity,
 * rounding a step to nearest, no wide window, FP8's 13-bit window, step
 * sizes, and promotion to a binary32 accumulator along K. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#define SUITE "check_cuda_tc"

#define V (1u << FPK_TC_VOLTA)
#define T (1u << FPK_TC_TURING)
#define A (1u << FPK_TC_AMPERE)
#define H (1u << FPK_TC_HOPPER)

/* fp16 */
#define H1 0x3c00     /* 1 */
#define HM1 0xbc00    /* -1 */
#define H2 0x4000     /* 2 */
#define HM2 0xc000    /* -2 */
#define HHALF 0x3800  /* 0.5 */
#define HSUB 0x0001   /* 2^-24, the least subnormal */
#define HBELOW 0x3bff /* 1 - 2^-11 */
/* bf16 */
#define B1 0x3f80
#define BM1 0xbf80
#define BHALF 0x3f00
#define B24 0x3380 /* 2^-24 */
/* fp32 */
#define F1 0x3f800000
#define FBELOW 0x3f7fffff  /* 1 - 2^-24 */
#define FMBELOW 0xbf7fffff /* -(1 - 2^-24) */
#define FABOVE 0x3f800001  /* 1 + 2^-23 */
#define F23 0x34000000     /* 2^-23 */
#define F24 0x33800000     /* 2^-24 */
#define FC3 0x3f800003     /* 1 + 2^-22 + 2^-23 */

typedef struct tc_case {
    const char *what;
    unsigned archs; /* the architectures WANT holds for */
    const fpk_format *in, *acc;
    int n;
    fpk_bits a[16], b[16], c, want;
} tc_case;

static const tc_case cases[] = {
    /* Fasi et al., section A: subnormals in and out. */
    {"A: binary16 subnormal input, binary16 mode: 2^-24 * 4 = 2^-22", V | T | A | H, &fpk_fp16,
     &fpk_fp16, 1, {HSUB}, {0x4400}, 0, 0x0004},
    {"A: binary16 subnormal input, binary32 mode", V | T | A | H, &fpk_fp16, &fpk_fp32, 1,
     {HSUB}, {0x4400}, 0, 0x34800000},
    {"A: binary32 subnormal input 2^-149 is returned", V | T | A | H, &fpk_fp16, &fpk_fp32, 4,
     {0}, {0}, 0x00000001, 0x00000001},
    {"A: binary16 subnormal output: 2^-14 * 2^-1", V | T | A | H, &fpk_fp16, &fpk_fp16, 1,
     {0x0400}, {HHALF}, 0, 0x0200},
    {"A: binary16 subnormal output: 2^-14 - 2^-15", V | T | A | H, &fpk_fp16, &fpk_fp16, 1,
     {0x0400}, {H1}, 0x8200, 0x0200},
    {"A: binary16 subnormal output, binary32 mode: 2^-14 * 2^-1", V | T | A | H, &fpk_fp16,
     &fpk_fp32, 1, {0x0400}, {HHALF}, 0, 0x38000000},
    {"A: binary16 subnormal output, binary32 mode: 2^-14 - 2^-15", V | T | A | H, &fpk_fp16,
     &fpk_fp32, 1, {0x0400}, {H1}, 0xb8000000, 0x38000000},
    {"A: bfloat16 subnormal input: 2^-133 * 2^7 = 2^-126", A, &fpk_bf16, &fpk_fp32, 1, {0x0001},
     {0x4300}, 0, 0x00800000},
    {"A: binary32 subnormal input (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4, {0}, {0}, 0x00000001,
     0x00000001},
    {"A: binary32 subnormal output: 2^-126 * 2^-1", A, &fpk_bf16, &fpk_fp32, 1, {0x0080},
     {BHALF}, 0, 0x00400000},
    {"A: binary32 subnormal output: 2^-126 - 2^-127", A, &fpk_bf16, &fpk_fp32, 1, {0x0080}, {B1},
     0x80400000, 0x00400000},

    /* Section B: exact products, binary32 accumulation, largest first. */
    {"B: (1 - 2^-11)^2 exact", V | T | A | H, &fpk_fp16, &fpk_fp32, 1, {HBELOW}, {HBELOW}, 0,
     0x3f7fc004},
    {"B: 4 (1 - 2^-11)^2 exact", V | T | A | H, &fpk_fp16, &fpk_fp32, 4,
     {HBELOW, HBELOW, HBELOW, HBELOW}, {HBELOW, HBELOW, HBELOW, HBELOW}, 0, 0x407fc004},
    {"B: products exact in binary16 mode: (1 - 2^-11)(1 - 2^-11 + 2^-11)", V | T | A | H,
     &fpk_fp16, &fpk_fp16, 2, {HBELOW, HBELOW}, {HBELOW, 0x1000}, 0, HBELOW},
    {"B: binary32 accumulation: 1 + 4 * 2^-24 (V100 inputs)", V, &fpk_fp16, &fpk_fp32, 4,
     {H1, H1, H1, H1}, {HSUB, HSUB, HSUB, HSUB}, F1, F1},
    {"B: binary32 accumulation: 1 + 4 * 2^-25 (T4/A100 inputs)", V | T | A, &fpk_fp16,
     &fpk_fp32, 4, {HHALF, HHALF, HHALF, HHALF}, {HSUB, HSUB, HSUB, HSUB}, F1, F1},
    {"B: largest first, 1 at 0 (V100 inputs)", V, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {H1, HSUB, HSUB, HSUB}, F24, F1},
    {"B: largest first, 1 at 1 (V100 inputs)", V, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {HSUB, H1, HSUB, HSUB}, F24, F1},
    {"B: largest first, 1 at 2 (V100 inputs)", V, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {HSUB, HSUB, H1, HSUB}, F24, F1},
    {"B: largest first, 1 at 3 (V100 inputs)", V, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {HSUB, HSUB, HSUB, H1}, F24, F1},
    {"B: largest first, 1 at 0 (T4/A100 inputs)", V | T | A, &fpk_fp16, &fpk_fp32, 4,
     {H1, HHALF, HHALF, HHALF}, {H1, HSUB, HSUB, HSUB}, F24, F1},
    {"B: largest first, 1 at 3 (T4/A100 inputs)", V | T | A, &fpk_fp16, &fpk_fp32, 4,
     {HHALF, HHALF, HHALF, H1}, {HSUB, HSUB, HSUB, H1}, F24, F1},
    {"B: 4 (1 - 2^-8)^2 exact (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4,
     {0x3f7f, 0x3f7f, 0x3f7f, 0x3f7f}, {0x3f7f, 0x3f7f, 0x3f7f, 0x3f7f}, 0, 0x407e0100},
    {"B: binary32 accumulation (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4,
     {BHALF, BHALF, BHALF, BHALF}, {B24, B24, B24, B24}, F1, F1},

    /* Section C: truncation, and round to nearest in binary16 mode. */
    {"C: round-down for positive values: 2 + 2^-23 + 2^-24", V | T | A | H, &fpk_fp16,
     &fpk_fp32, 4, {H1, H1, H1, H1}, {H2, 0x0003}, 0, 0x40000000},
    {"C: round-up for negative values", V | T | A | H, &fpk_fp16, &fpk_fp32, 4,
     {H1, H1, H1, H1}, {HM2, 0x8003}, 0, 0xc0000000},
    {"C: binary16 mode rounds to nearest: 3 * 2^-26", V | T | A | H, &fpk_fp16, &fpk_fp16, 2,
     {HSUB, HSUB}, {HHALF, 0x3400}, 0, HSUB},
    {"C: round-down for positive values (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4,
     {B1, B1, B1, B1}, {0x4000, 0x3440}, 0, 0x40000000},
    {"C: round-up for negative values (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4, {B1, B1, B1, B1},
     {0xc000, 0xb440}, 0, 0xc0000000},

    /* Section D: the accumulator. */
    {"D1: 1 - (1 - 2^-24), no extra bit", V, &fpk_fp16, &fpk_fp32, 1, {H1}, {H1}, FMBELOW, F23},
    {"D1: 1 - (1 - 2^-24), an extra bit", T | A, &fpk_fp16, &fpk_fp32, 1, {H1}, {H1}, FMBELOW,
     F24},
    {"D1: 1 - (1 - 2^-24), an extra bit (bfloat16)", A, &fpk_bf16, &fpk_fp32, 1, {B1}, {B1},
     FMBELOW, F24},
    {"D2: (1 - 2^-24) + 4 * 2^-24 normalised at the end", V | T | A, &fpk_fp16, &fpk_fp32, 4,
     {H1, H1, H1, H1}, {HSUB, HSUB, HSUB, HSUB}, FBELOW, FABOVE},
    {"D2: (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4, {B1, B1, B1, B1}, {B24, B24, B24, B24},
     FBELOW, FABOVE},
    {"D3: 1 - 2^-24 - (1 - 2^-24), no extra bit", V, &fpk_fp16, &fpk_fp32, 2, {H1, H1},
     {H1, 0x8001}, FMBELOW, F23},
    {"D3: 1 - 2^-24 - (1 - 2^-24), an extra bit", T | A, &fpk_fp16, &fpk_fp32, 2, {H1, H1},
     {H1, 0x8001}, FMBELOW, 0},
    {"D3: (bfloat16)", A, &fpk_bf16, &fpk_fp32, 2, {B1, B1}, {B1, 0xb380}, FMBELOW, 0},
    {"D4: carry out, 2^-23 at 0", V | T | A, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {0x0002, H1, H1, H1}, FC3, 0x40800001},
    {"D4: carry out, 2^-23 at 1", V | T | A, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {H1, 0x0002, H1, H1}, FC3, 0x40800001},
    {"D4: carry out, 2^-23 at 2", V | T | A, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {H1, H1, 0x0002, H1}, FC3, 0x40800001},
    {"D4: carry out, 2^-23 at 3", V | T | A, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {H1, H1, H1, 0x0002}, FC3, 0x40800001},
    {"D4: the third carry bit: 1 + 1.5 + 1.75 + 1.875 + 1.875 = 8", V | T | A, &fpk_fp16,
     &fpk_fp32, 4, {H1, H1, H1, H1}, {H1, 0x3e00, 0x3f00, 0x3f80}, 0x3ff00000, 0x41000000},
    {"D4: truncated in normalisation: 4 + 1 + 2^-22 + 2^-23 = 5", V | T | A, &fpk_fp16,
     &fpk_fp32, 4, {H1, H1, H1, H1}, {H1, H1, H1, H1}, FC3, 0x40a00000},
    {"D4: truncated in normalisation, negative", V | T | A, &fpk_fp16, &fpk_fp32, 4,
     {H1, H1, H1, H1}, {HM1, HM1, HM1, HM1}, 0xbf800003, 0xc0a00000},
    {"D4: the third carry bit (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4, {B1, B1, B1, B1},
     {B1, 0x3fc0, 0x3fe0, 0x3ff0}, 0x3ff00000, 0x41000000},
    {"D4: carry out (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4, {B1, B1, B1, B1},
     {B1, 0x3400, B1, B1}, FC3, 0x40800001},
    {"D4: truncated in normalisation, negative (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4,
     {B1, B1, B1, B1}, {BM1, BM1, BM1, BM1}, 0xbf800003, 0xc0a00000},
    /* D5 is the pair of a sum with c = 1 - 2^-24 above one with c = 1
     * (test_monotonicity checks the order). */
    {"D5: c = 1 - 2^-24 (V100 inputs)", V, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {HSUB, HSUB, HSUB, HSUB}, FBELOW, FABOVE},
    {"D5: c = 1 (V100 inputs)", V, &fpk_fp16, &fpk_fp32, 4, {H1, H1, H1, H1},
     {HSUB, HSUB, HSUB, HSUB}, F1, F1},
    {"D5: c = 1 - 2^-24 (T4/A100 inputs)", T | A, &fpk_fp16, &fpk_fp32, 4,
     {HHALF, HHALF, HHALF, HHALF}, {HSUB, HSUB, HSUB, 0x0003}, FBELOW, FABOVE},
    {"D5: c = 1 (T4/A100 inputs)", T | A, &fpk_fp16, &fpk_fp32, 4, {HHALF, HHALF, HHALF, HHALF},
     {HSUB, HSUB, HSUB, 0x0003}, F1, F1},
    {"D5: c = 1 - 2^-24 (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4, {BHALF, BHALF, BHALF, BHALF},
     {B24, B24, B24, 0x3440}, FBELOW, FABOVE},
    {"D5: c = 1 (bfloat16)", A, &fpk_bf16, &fpk_fp32, 4, {BHALF, BHALF, BHALF, BHALF},
     {B24, B24, B24, 0x3440}, F1, F1},

    /* Worked out by hand from the published parameters. */
    {"steps: 1 + 4 * 2^-24 in steps of 4, no extra bit: every 2^-24 lost", V, &fpk_fp16,
     &fpk_fp32, 5, {H1, H1, H1, H1, H1}, {H1, HSUB, HSUB, HSUB, HSUB}, 0, F1},
    {"steps: steps of 4, an extra bit: the first step truncates 2^-24", T, &fpk_fp16, &fpk_fp32,
     5, {H1, H1, H1, H1, H1}, {H1, HSUB, HSUB, HSUB, HSUB}, 0, FABOVE},
    {"steps: one fused step of 8 or 16 keeps all: 1 + 2^-22", A | H, &fpk_fp16, &fpk_fp32, 5,
     {H1, H1, H1, H1, H1}, {H1, HSUB, HSUB, HSUB, HSUB}, 0, 0x3f800002},
    {"steps: 1 + 8 * 2^-24: steps of 8 lose the last 2^-24", T | A, &fpk_fp16, &fpk_fp32, 9,
     {H1, H1, H1, H1, H1, H1, H1, H1, H1},
     {H1, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB}, 0, 0x3f800003},
    {"steps: 1 + 8 * 2^-24: one step of 16 keeps it", H, &fpk_fp16, &fpk_fp32, 9,
     {H1, H1, H1, H1, H1, H1, H1, H1, H1},
     {H1, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB}, 0, 0x3f800004},
    {"steps: 1 + 8 * 2^-24: steps of 4, no extra bit", V, &fpk_fp16, &fpk_fp32, 9,
     {H1, H1, H1, H1, H1, H1, H1, H1, H1},
     {H1, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB, HSUB}, 0, F1},
    {"extra bits: 1 + 4 * 2^-25 keeps them with two", H, &fpk_fp16, &fpk_fp32, 4,
     {0x0c00, 0x0c00, 0x0c00, 0x0c00}, {0x0800, 0x0800, 0x0800, 0x0800}, F1, FABOVE},
    {"extra bits: 1 + 4 * 2^-25 loses them with one or none", V | T | A, &fpk_fp16, &fpk_fp32, 4,
     {0x0c00, 0x0c00, 0x0c00, 0x0c00}, {0x0800, 0x0800, 0x0800, 0x0800}, F1, F1},
    {"wide: 1.5^2 leads at c's exponent: its window keeps 2^-23", V | T | A | H, &fpk_fp16,
     &fpk_fp32, 2, {0x3e00, H1}, {0x3e00, 0x0002}, 0xc0100000, F23},
    {"wide: c = -4.5 leads alone: 2^-23 lost", V | T | A, &fpk_fp16, &fpk_fp32, 2, {0x3e00, H1},
     {0x3e00, 0x0002}, 0xc0900000, 0xc0100000},
    {"tf32: 1 - (1 - 2^-24), an extra bit", A | H, &fpk_tf32, &fpk_fp32, 1, {0x1fc00},
     {0x1fc00}, FMBELOW, F24},
    {"overflow: 2^127 * 2^127 is infinite", A | H, &fpk_bf16, &fpk_fp32, 1, {0x7f00}, {0x7f00},
     0, 0x7f800000},
    {"overflow: -(2^127 * 2^127)", A | H, &fpk_bf16, &fpk_fp32, 1, {0xff00}, {0x7f00}, 0,
     0xff800000},
    {"cancellation: 1 - 1 is +0", V | T | A | H, &fpk_fp16, &fpk_fp32, 2, {H1, H1}, {H1, HM1},
     0, 0},
    {"special: NaN", V | T | A | H, &fpk_fp16, &fpk_fp32, 2, {H1, 0x7e00}, {H1, H1}, 0,
     0x7fc00000},
    {"special: 0 * inf", V | T | A | H, &fpk_fp16, &fpk_fp32, 1, {0x7c00}, {0}, F1, 0x7fc00000},
    {"special: inf - inf", V | T | A | H, &fpk_fp16, &fpk_fp32, 1, {0x7c00}, {H1}, 0xff800000,
     0x7fc00000},
    {"special: inf", V | T | A | H, &fpk_fp16, &fpk_fp32, 2, {0x7c00, H1}, {HM1, H1}, F1,
     0xff800000},
    {"special: a NaN accumulator", V | T | A | H, &fpk_fp16, &fpk_fp32, 1, {H1}, {H1},
     0x7f800001, 0x7fc00000},
    {"unsupported: bfloat16 before Ampere", V | T, &fpk_bf16, &fpk_fp32, 1, {B1}, {B1}, 0,
     0x7fc00000},
    {"unsupported: bfloat16 into binary16", A | H, &fpk_bf16, &fpk_fp16, 1, {B1}, {B1}, 0,
     0x7e00},
};
#define NCASES (sizeof cases / sizeof cases[0])

START_TEST(test_published)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (int arch = 0; arch < FPK_TC_ARCH_COUNT; arch++) {
        for (size_t i = 0; i < NCASES; i++) {
            const tc_case *k = &cases[i];
            if (!(k->archs & 1u << arch))
                continue;
            fpk_bits got = fpk_tc_dot((fpk_tc_arch)arch, k->in, k->acc, k->a, k->b,
                                      (size_t)k->n, k->c);
            tu_check(&rep, k->acc, (ref_result){k->want, 0}, got, 0, "%s: %s",
                     fpk_tc_arch_name((fpk_tc_arch)arch), k->what);
        }
        tu_report_line(&rep, "%s", fpk_tc_arch_name((fpk_tc_arch)arch));
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Section D, test 5: the larger accumulator gives the smaller result. */
START_TEST(test_monotonicity)
{
    static const struct {
        fpk_tc_arch arch;
        const fpk_format *in;
        fpk_bits a, b3;
    } runs[] = {
        {FPK_TC_VOLTA, &fpk_fp16, H1, HSUB},        {FPK_TC_TURING, &fpk_fp16, HHALF, 0x0003},
        {FPK_TC_AMPERE, &fpk_fp16, HHALF, 0x0003},  {FPK_TC_AMPERE, &fpk_bf16, BHALF, 0x3440},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        fpk_bits a[4] = {runs[i].a, runs[i].a, runs[i].a, runs[i].a};
        fpk_bits sub = runs[i].in == &fpk_fp16 ? HSUB : B24;
        fpk_bits b[4] = {sub, sub, sub, runs[i].b3};
        fpk_bits below = fpk_tc_dot(runs[i].arch, runs[i].in, &fpk_fp32, a, b, 4, FBELOW);
        fpk_bits one = fpk_tc_dot(runs[i].arch, runs[i].in, &fpk_fp32, a, b, 4, F1);
        ck_assert_msg(below > one, "%s %s: c = 1 - 2^-24 gives %#" PRIx64 ", c = 1 %#" PRIx64,
                      fpk_tc_arch_name(runs[i].arch), runs[i].in->name, below, one);
    }
}
END_TEST

START_TEST(test_api)
{
    static const struct {
        fpk_tc_arch arch;
        int fp16, fp16_acc, bf16, tf32, fp8;
    } terms[] = {
        {FPK_TC_VOLTA, 4, 4, 0, 0, 0},
        {FPK_TC_TURING, 4, 4, 0, 0, 0},
        {FPK_TC_AMPERE, 8, 8, 8, 4, 0},
        {FPK_TC_HOPPER, 16, 16, 16, 8, 32},
    };
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        fpk_tc_arch arch = terms[i].arch, back;
        ck_assert(fpk_tc_arch_lookup(fpk_tc_arch_name(arch), &back) && back == arch);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_fp16, &fpk_fp32), terms[i].fp16);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_fp16, &fpk_fp16), terms[i].fp16_acc);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_bf16, &fpk_fp32), terms[i].bf16);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_tf32, &fpk_fp32), terms[i].tf32);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_e4m3, &fpk_fp32), terms[i].fp8);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_e5m2, &fpk_fp32), terms[i].fp8);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_e4m3, &fpk_fp16), 0);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_e2m1, &fpk_fp32), 0);
        ck_assert_int_eq(fpk_tc_terms(arch, &fpk_fp16, &fpk_bf16), 0);
    }
    fpk_tc_arch x;
    ck_assert(!fpk_tc_arch_lookup("blackwell", &x));
    ck_assert(!fpk_tc_arch_lookup(NULL, &x));
    ck_assert_str_eq(fpk_tc_arch_name((fpk_tc_arch)FPK_TC_ARCH_COUNT), "?");
    /* N = 0 gives C, as it is. */
    ck_assert_uint_eq(fpk_tc_dot(FPK_TC_VOLTA, &fpk_fp16, &fpk_fp32, NULL, NULL, 0, FBELOW),
                      FBELOW);
    /* A zero sum is +0: zero products and a -0 accumulator too. */
    const fpk_bits mzero[2] = {0x8000, 0x8000}, one[2] = {H1, H1};
    ck_assert_uint_eq(fpk_tc_dot(FPK_TC_HOPPER, &fpk_fp16, &fpk_fp32, mzero, one, 2, 0x80000000u),
                      0);
    ck_assert_uint_eq(fpk_tc_dot(FPK_TC_AMPERE, &fpk_fp16, &fpk_fp16, mzero, one, 2, 0x8000), 0);
}
END_TEST

/* The published parameter sets, as the sources give them (lib/core/tc.c):
 * the block sizes, 23 + the extra bits, truncation toward zero, RTZ into
 * binary32 and RNE into binary16; FP8 on Hopper the DeepSeek-V3 candidate. */
START_TEST(test_params_of)
{
    static const struct {
        fpk_tc_arch arch;
        const fpk_format *in, *acc;
        fpk_tc_params want;
    } sets[] = {
        {FPK_TC_VOLTA, &fpk_fp16, &fpk_fp32, {4, 23, true, false, FPK_RTZ, 0}},
        {FPK_TC_VOLTA, &fpk_fp16, &fpk_fp16, {4, 23, true, false, FPK_RNE, 0}},
        {FPK_TC_TURING, &fpk_fp16, &fpk_fp32, {4, 24, true, false, FPK_RTZ, 0}},
        {FPK_TC_AMPERE, &fpk_bf16, &fpk_fp32, {8, 24, true, false, FPK_RTZ, 0}},
        {FPK_TC_AMPERE, &fpk_tf32, &fpk_fp32, {4, 24, true, false, FPK_RTZ, 0}},
        {FPK_TC_HOPPER, &fpk_fp16, &fpk_fp32, {16, 25, true, false, FPK_RTZ, 0}},
        {FPK_TC_HOPPER, &fpk_tf32, &fpk_fp32, {8, 25, true, false, FPK_RTZ, 0}},
        {FPK_TC_HOPPER, &fpk_e4m3, &fpk_fp32, {32, 13, true, false, FPK_RTZ, 128}},
        {FPK_TC_HOPPER, &fpk_e5m2, &fpk_fp32, {32, 13, true, false, FPK_RTZ, 128}},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        fpk_tc_params p;
        const fpk_tc_params *w = &sets[i].want;
        ck_assert(fpk_tc_params_of(sets[i].arch, sets[i].in, sets[i].acc, &p));
        ck_assert(p.terms == w->terms && p.window == w->window && p.wide == w->wide &&
                  p.floor == w->floor && p.round == w->round && p.promote == w->promote);
    }
    fpk_tc_params p = {0};
    ck_assert(!fpk_tc_params_of(FPK_TC_AMPERE, &fpk_e4m3, &fpk_fp32, &p));
    ck_assert(!fpk_tc_params_of(FPK_TC_TURING, &fpk_bf16, &fpk_fp32, &p));
    ck_assert_int_eq(p.terms, 0); /* untouched */
}
END_TEST

/* Parameter sets other than the published ones, worked out by hand. */
typedef struct params_case {
    const char *what;
    fpk_tc_params p;
    const fpk_format *in;
    int n;
    fpk_bits a[4], b[4], c, want;
} params_case;

/* e4m3 */
#define Q1 0x38    /* 1 */
#define QM1 0xb8   /* -1 */
#define Q2M6 0x08  /* 2^-6 */
#define Q2M7 0x04  /* 2^-7, subnormal */
#define Q2M8 0x02  /* 2^-8, subnormal */

static const params_case params_cases[] = {
    {"floor: 1 - 1 - 1.75 * 2^-24 cut toward zero: -2^-24", {4, 24, true, false, FPK_RTZ, 0},
     &fpk_fp16, 3, {H1, H1, 0xbf00}, {H1, HM1, HSUB}, 0, 0xb3800000},
    {"floor: 1 - 1 - 1.75 * 2^-24 cut toward -inf: -2^-23", {4, 24, true, true, FPK_RTZ, 0},
     &fpk_fp16, 3, {H1, H1, 0xbf00}, {H1, HM1, HSUB}, 0, 0xb4000000},
    {"floor: a positive addend is cut the same: 1 - 1 + 1.75 * 2^-24",
     {4, 24, true, true, FPK_RTZ, 0}, &fpk_fp16, 3, {H1, H1, 0x3f00}, {H1, HM1, HSUB}, 0,
     0x33800000},
    {"round rtz: 1 + 2^-23 + 2^-24 gives 1 + 2^-23", {4, 24, true, false, FPK_RTZ, 0}, &fpk_fp16,
     2, {H1, 0x3e00}, {H1, 0x0002}, 0, 0x3f800001},
    {"round rne: 1 + 2^-23 + 2^-24, a tie, gives 1 + 2^-22", {4, 24, true, false, FPK_RNE, 0},
     &fpk_fp16, 2, {H1, 0x3e00}, {H1, 0x0002}, 0, 0x3f800002},
    {"round rne: -(1 + 2^-23 + 2^-24) gives -(1 + 2^-22)", {4, 24, true, false, FPK_RNE, 0},
     &fpk_fp16, 2, {HM1, 0xbe00}, {H1, 0x0002}, 0, 0xbf800002},
    {"wide off: 1.5^2 - 2.25 + 2^-23 with window 23: 2^-23 lost", {4, 23, false, false, FPK_RTZ, 0},
     &fpk_fp16, 2, {0x3e00, H1}, {0x3e00, 0x0002}, 0xc0100000, 0},
    {"window 13 (e4m3): 1 + 2^-13 keeps it", {32, 13, true, false, FPK_RTZ, 0}, &fpk_e4m3, 2,
     {Q1, Q2M6}, {Q1, Q2M7}, 0, 0x3f800400},
    {"window 13 (e4m3): 1 + 2^-14 loses it", {32, 13, true, false, FPK_RTZ, 0}, &fpk_e4m3, 2,
     {Q1, Q2M7}, {Q1, Q2M7}, 0, 0x3f800000},
    {"window 13 (e5m2): 1 - 1 + 2^-14 keeps it once 1 - 1 leaves the step",
     {2, 13, true, false, FPK_RTZ, 0}, &fpk_e5m2, 3, {0x3c, 0x3c, 0x04}, {0x3c, 0xbc, 0x3c}, 0,
     0x38800000},
    {"terms 4: 1 - 1 + 2^-16 in one step: 2^-16 lost", {4, 13, true, false, FPK_RTZ, 0},
     &fpk_e4m3, 3, {Q1, Q1, Q2M8}, {Q1, QM1, Q2M8}, 0, 0},
    {"terms 1: 1, then 0, then 2^-16 alone: kept", {1, 13, true, false, FPK_RTZ, 0}, &fpk_e4m3,
     3, {Q1, Q1, Q2M8}, {Q1, QM1, Q2M8}, 0, 0x37800000},
    {"terms 1: 1 + 2^-16 in the next step: lost against c = 1", {1, 13, true, false, FPK_RTZ, 0},
     &fpk_e4m3, 2, {Q1, Q2M8}, {Q1, Q2M8}, 0, 0x3f800000},
};
#define NPARAMS_CASES (sizeof params_cases / sizeof params_cases[0])

START_TEST(test_params)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t i = 0; i < NPARAMS_CASES; i++) {
        const params_case *k = &params_cases[i];
        fpk_bits got = fpk_tc_dot_params(&k->p, k->in, &fpk_fp32, k->a, k->b, (size_t)k->n, k->c);
        tu_check(&rep, &fpk_fp32, (ref_result){k->want, 0}, got, 0, "%s", k->what);
    }
    tu_report_line(&rep, "parameter sets worked out by hand");
    ck_assert_uint_eq(tu_report_done(&rep), 0);

    /* Promotion: 1 at position 0 and 2^-14 at position 40 of 64 (e4m3),
     * lost in a chain of 32-product steps, kept when products 32 on start
     * a chain of their own whose sum is added in binary32. */
    fpk_bits a[64], b[64];
    for (int i = 0; i < 64; i++)
        a[i] = b[i] = 0;
    a[0] = b[0] = Q1;
    a[40] = b[40] = Q2M7;
    fpk_tc_params p = {32, 13, true, false, FPK_RTZ, 0};
    ck_assert_uint_eq(fpk_tc_dot_params(&p, &fpk_e4m3, &fpk_fp32, a, b, 64, 0), 0x3f800000);
    p.promote = 32;
    ck_assert_uint_eq(fpk_tc_dot_params(&p, &fpk_e4m3, &fpk_fp32, a, b, 64, 0), 0x3f800200);
    /* c joins the binary32 accumulator first: c = 2^-30 survives 1 + ... */
    ck_assert_uint_eq(fpk_tc_dot_params(&p, &fpk_e4m3, &fpk_fp32, a, b, 64, 0x30800000),
                      0x3f800200);
    /* ... and with 40 products a segment of 64 the chain holds them all */
    p.promote = 64;
    ck_assert_uint_eq(fpk_tc_dot_params(&p, &fpk_e4m3, &fpk_fp32, a, b, 64, 0), 0x3f800000);
    /* The Hopper candidate promotes every 128: position 130 of 160. */
    fpk_bits a2[160], b2[160];
    for (int i = 0; i < 160; i++)
        a2[i] = b2[i] = 0;
    a2[0] = b2[0] = Q1;
    a2[130] = b2[130] = Q2M7;
    ck_assert_uint_eq(fpk_tc_dot(FPK_TC_HOPPER, &fpk_e4m3, &fpk_fp32, a2, b2, 160, 0), 0x3f800200);
    a2[130] = b2[130] = 0;
    a2[100] = b2[100] = Q2M7;
    ck_assert_uint_eq(fpk_tc_dot(FPK_TC_HOPPER, &fpk_e4m3, &fpk_fp32, a2, b2, 160, 0), 0x3f800000);

    /* What the model refuses: the canonical NaN. */
    static const fpk_tc_params bad[] = {
        {0, 23, true, false, FPK_RTZ, 0},  {65, 23, true, false, FPK_RTZ, 0},
        {4, 0, true, false, FPK_RTZ, 0},   {4, 53, true, false, FPK_RTZ, 0},
        {4, 23, true, false, FPK_RNA, 0},  {4, 23, true, false, FPK_RTZ, -1},
    };
    const fpk_bits one[1] = {H1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_uint_eq(fpk_tc_dot_params(&bad[i], &fpk_fp16, &fpk_fp32, one, one, 1, 0),
                          0x7fc00000);
    p = (fpk_tc_params){4, 23, true, false, FPK_RTZ, 0};
    ck_assert_uint_eq(fpk_tc_dot_params(NULL, &fpk_fp16, &fpk_fp32, one, one, 1, 0), 0x7fc00000);
    ck_assert_uint_eq(fpk_tc_dot_params(&p, &fpk_fp64, &fpk_fp32, one, one, 1, 0), 0x7fc00000);
    ck_assert_uint_eq(fpk_tc_dot_params(&p, &fpk_fp16, &fpk_bf16, one, one, 1, 0), 0x7fc00000);
}
END_TEST

static Suite *tc_suite(void)
{
    Suite *s = suite_create("cuda_tc");
    TCase *tc = tcase_create("cuda_tc");
    tcase_add_test(tc, test_published);
    tcase_add_test(tc, test_monotonicity);
    tcase_add_test(tc, test_api);
    tcase_add_test(tc, test_params_of);
    tcase_add_test(tc, test_params);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tc_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
