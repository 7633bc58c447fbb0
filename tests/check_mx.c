/* Block scaling (fpk_mx_scale, fpk_mx_quantize) on crafted blocks whose
 * scales, element encodings, values and reports were worked out by hand
 * from OCP MX v1.0 §6.3 (k = floor(log2(amax)) - emax, elements rounded to
 * nearest even and clamped to the largest normal) and the rounded-up
 * variant (the least k with amax / 2^k <= max finite).  The comments give
 * the arithmetic.  tests/check_mldtypes.py checks random blocks against
 * ml_dtypes. */
#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SUITE "check_mx"

typedef struct scale_case {
    const fpk_format *elem;
    fpk_mx_rule rule;
    float amax;
    fpk_bits scale;
} scale_case;

START_TEST(test_scale)
{
    const fpk_format *e4 = &fpk_e4m3, *e5 = &fpk_e5m2, *m4 = &fpk_e2m1, *m6a = &fpk_e3m2,
                     *m6b = &fpk_e2m3;
    const fpk_mx_rule F = FPK_MX_FLOOR, C = FPK_MX_CEIL;
    const scale_case cases[] = {
        {e4, F, 448, 127},          /* log2 448 = 8.8: k = 8 - 8 = 0 */
        {e4, C, 448, 127},          /* 448 is max finite: no need to round up */
        {e4, F, 449, 127},
        {e4, C, 449, 128},          /* 449 / 1 > 448: k = 1 */
        {e4, F, 1, 119},            /* 0 - 8 */
        {e4, C, 1, 119},
        {e4, F, 0, 0},              /* a block of zeros: the least scale */
        {e4, C, 0, 0},
        {e4, F, 0x1p-140f, 0},      /* -140 - 8 clamped to -127 */
        {e4, F, 0x1.fffffep127f, 246}, /* 127 - 8 = 119 */
        {e4, C, 0x1.fffffep127f, 247},
        {e4, F, INFINITY, 0xff},
        {e4, C, NAN, 0xff},
        {m4, F, 6, 127},            /* E2M1: emax 2, max 6 = 1.5 * 2^2 */
        {m4, C, 6, 127},
        {m4, F, 7, 127},
        {m4, C, 7, 128},
        {m4, F, -6, 127},           /* a magnitude */
        {m4, F, 0.1f, 121},         /* 0.1 = 1.6 * 2^-4: k = -4 - 2 = -6 */
        {m4, C, 0.1f, 122},         /* 1.6 > 1.5: k = -5 */
        {m6b, F, 7.5, 127},         /* E2M3: emax 2, max 7.5 = 1.875 * 2^2 */
        {m6b, F, 7.6f, 127},
        {m6b, C, 7.6f, 128},
        {m6a, F, 28, 127},          /* E3M2: emax 4, max 28 = 1.75 * 2^4 */
        {m6a, C, 29, 128},
        {m6a, F, 1, 123},           /* 0 - 4 */
        {e5, F, 57344, 127},        /* E5M2: emax 15, max 57344 = 1.75 * 2^15 */
        {e5, F, 61440, 127},
        {e5, C, 61440, 128},
    };
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const scale_case *k = &cases[i];
        ref_result want = {k->scale, 0};
        tu_check(&rep, &fpk_e8m0, want, fpk_mx_scale(k->elem, k->rule, k->amax), 0,
                 "fpk_mx_scale(%s, %s, %a)", k->elem->name, k->rule == F ? "floor" : "ceil",
                 (double)k->amax);
    }
    tu_report_line(&rep, "scales by hand");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* One crafted quantisation: N inputs in blocks of BLOCK, and for each
 * element the encoding and the value P * X it stands for; for each block
 * the scale and the report. */
#define MAXN 32
#define MAXB 4
typedef struct mx_case {
    const char *what;
    const fpk_format *elem;
    fpk_mx_rule rule;
    fpk_round mode;
    size_t block, n;
    float x[MAXN];
    uint8_t enc[MAXN];
    float y[MAXN];
    fpk_mx_block rep[MAXB];
} mx_case;

static bool same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static void run_case(tu_report *rep, const mx_case *k)
{
    size_t block = k->block ? k->block : FPK_MX_BLOCK, nb = (k->n + block - 1) / block;
    uint8_t enc[MAXN], scales[MAXB];
    float y[MAXN];
    fpk_mx_block blocks[MAXB];
    fpk_ctx c = fpk_ctx_default();
    c.round = k->mode;
    ck_assert(fpk_mx_quantize(k->elem, k->rule, k->block, k->x, k->n, enc, scales, y, blocks,
                              &c));
    for (size_t b = 0; b < nb; b++) {
        const fpk_mx_block *w = &k->rep[b], *g = &blocks[b];
        if (scales[b] != w->scale || g->scale != w->scale || g->saturated != w->saturated ||
            g->flushed != w->flushed || g->subnormal != w->subnormal)
            tu_fail(rep, "%s: block %zu: scale %02x (%02x) saturated %u flushed %u subnormal %u, "
                         "expected %02x %u %u %u",
                    k->what, b, scales[b], (unsigned)g->scale, (unsigned)g->saturated,
                    (unsigned)g->flushed, (unsigned)g->subnormal, (unsigned)w->scale,
                    (unsigned)w->saturated, (unsigned)w->flushed, (unsigned)w->subnormal);
        else
            tu_check(rep, &fpk_e8m0, (ref_result){w->scale, 0}, g->scale, 0, "-");
    }
    for (size_t i = 0; i < k->n; i++) {
        tu_check(rep, k->elem, (ref_result){k->enc[i], 0}, enc[i], 0, "%s: element %zu (%a)",
                 k->what, i, (double)k->x[i]);
        if (!same_float(y[i], k->y[i]))
            tu_fail(rep, "%s: element %zu (%a) stands for %a, expected %a", k->what, i,
                    (double)k->x[i], (double)y[i], (double)k->y[i]);
    }
    /* In place, and with every output left out but one: the same results. */
    float z[MAXN];
    memcpy(z, k->x, sizeof z);
    fpk_ctx c2 = fpk_ctx_default();
    c2.round = k->mode;
    ck_assert(fpk_mx_quantize(k->elem, k->rule, k->block, z, k->n, NULL, NULL, z, NULL, &c2));
    for (size_t i = 0; i < k->n; i++)
        if (!same_float(z[i], y[i]))
            tu_fail(rep, "%s: element %zu in place: %a, expected %a", k->what, i, (double)z[i],
                    (double)y[i]);
    if (c2.flags != c.flags)
        tu_fail(rep, "%s: flags %s in place, %s otherwise", k->what, tu_flags_name(c2.flags).s,
                tu_flags_name(c.flags).s);
}

START_TEST(test_quantize)
{
    const float nan = NAN, inf = INFINITY;
    static mx_case cases[16];
    size_t nc = 0;
    /* E2M1 (0, 0.5, 1, 1.5, 2, 3, 4, 6), blocks of 4. */
    cases[nc++] = (mx_case){
        "e2m1 floor", &fpk_e2m1, FPK_MX_FLOOR, FPK_RNE, 4, 10,
        /* block 0: amax 6, k = 0: 0.75 ties to 1, 0.1 flushes;
         * block 1: amax 100 = 1.5625 * 2^6, k = 6 - 2 = 4: V / 16 is
         *   0.4375 (to 0.5, subnormal), 0.03125 and -0.015625 (flushed to
         *   +-0), 6.25 (to 6);
         * block 2: zeros, k = -127 */
        {6, -3, 0.75f, 0.1f, 7, 0.5f, -0.25f, 100, 0, -0.0f},
        {0x7, 0xd, 0x2, 0x0, 0x1, 0x0, 0x8, 0x7, 0x0, 0x8},
        {6, -3, 1, 0, 8, 0, -0.0f, 96, 0, -0.0f},
        {{127, 0, 1, 0}, {131, 0, 2, 1}, {0, 0, 0, 0}}};
    cases[nc++] = (mx_case){
        "e2m1 ceil", &fpk_e2m1, FPK_MX_CEIL, FPK_RNE, 4, 10,
        /* block 1: 1.5625 > 1.5, k = 5: V / 32 is 0.21875, 0.015625,
         *   -0.0078125 (all flushed) and 3.125 (to 3) */
        {6, -3, 0.75f, 0.1f, 7, 0.5f, -0.25f, 100, 0, -0.0f},
        {0x7, 0xd, 0x2, 0x0, 0x0, 0x0, 0x8, 0x5, 0x0, 0x8},
        {6, -3, 1, 0, 0, 0, -0.0f, 96, 0, -0.0f},
        {{127, 0, 1, 0}, {132, 0, 3, 0}, {0, 0, 0, 0}}};
    cases[nc++] = (mx_case){
        "e2m1 floor saturating", &fpk_e2m1, FPK_MX_FLOOR, FPK_RNE, 4, 4,
        /* amax 7, k = 0: 7 ties to 8, beyond 6: saturates */
        {7, 1, 2, 3}, {0x7, 0x2, 0x4, 0x5}, {6, 1, 2, 3}, {{127, 1, 0, 0}}};
    cases[nc++] = (mx_case){
        "e2m1 ceil no saturation", &fpk_e2m1, FPK_MX_CEIL, FPK_RNE, 4, 4,
        /* 1.75 > 1.5, k = 1: 3.5 ties to 4 (even), 0.5 is subnormal */
        {7, 1, 2, 3}, {0x6, 0x1, 0x2, 0x3}, {8, 1, 2, 3}, {{128, 0, 0, 1}}};
    cases[nc++] = (mx_case){
        "e2m1 rtz", &fpk_e2m1, FPK_MX_FLOOR, FPK_RTZ, 4, 4,
        /* k = 0; truncation: 5.9 to 4, 0.6 to 0.5, -1.9 to -1.5 */
        {6, 5.9f, 0.6f, -1.9f}, {0x7, 0x6, 0x1, 0xb}, {6, 4, 0.5f, -1.5f}, {{127, 0, 0, 1}}};
    cases[nc++] = (mx_case){
        "e2m1 NaN and infinity", &fpk_e2m1, FPK_MX_FLOOR, FPK_RNE, 2, 6,
        /* a block holding a NaN or an infinity: the NaN scale and E2M1's
         * stand-in for NaN (the sign bit alone) in every element */
        /* the last block: amax 3, k = 1 - 2 = -1, V * 2 is 6 and 1 */
        {1, nan, -inf, 2, 3, 0.5f},
        {0x8, 0x8, 0x8, 0x8, 0x7, 0x2},
        {nan, nan, nan, nan, 3, 0.5f},
        {{0xff, 0, 0, 0}, {0xff, 0, 0, 0}, {126, 0, 0, 0}}};
    /* MXFP8 (E4M3), one block of the default 32: (i % 8) / 2 for i < 28,
     * then 3 * 2^-9, 2^-9, 2^-12 and 1000.  amax 1000 = 1.953 * 2^9, k =
     * 9 - 8 = 1: V / 2 is exact for the first 28; 1.5 * 2^-9 ties to 2^-8
     * (even, subnormal); 2^-10 ties to 0; 2^-13 flushes; 500 rounds to 512
     * on the unbounded grid, beyond 448: saturates. */
    mx_case fp8 = {"e4m3 floor", &fpk_e4m3, FPK_MX_FLOOR, FPK_RNE, 0, 32, {0}, {0}, {0},
                   {{128, 1, 2, 1}}};
    /* Rounded up: 1.953 > 1.75, k = 2: V / 4; 0.75 * 2^-9 rounds to 2^-9,
     * 2^-11 and 2^-14 flush, 250 rounds to 256 (240 and 256 are 16 apart). */
    mx_case fp8c = {"e4m3 ceil", &fpk_e4m3, FPK_MX_CEIL, FPK_RNE, 0, 32, {0}, {0}, {0},
                    {{129, 0, 2, 1}}};
    /* E4M3 (bias 7) of j/4 and j/8, j = 0..7: 0.25 is 1.000 * 2^(5-7),
     * 0.375 is 1.100 * 2^(5-7), ... */
    static const uint8_t quarters[8] = {0x00, 0x28, 0x30, 0x34, 0x38, 0x3a, 0x3c, 0x3e};
    static const uint8_t eighths[8] = {0x00, 0x20, 0x28, 0x2c, 0x30, 0x32, 0x34, 0x36};
    for (int i = 0; i < 28; i++) {
        fp8.x[i] = fp8c.x[i] = fp8.y[i] = fp8c.y[i] = (float)(i % 8) / 2;
        fp8.enc[i] = quarters[i % 8];
        fp8c.enc[i] = eighths[i % 8];
    }
    const float tail_x[4] = {0x3p-9f, 0x1p-9f, 0x1p-12f, 1000};
    const uint8_t tail_fp8[4] = {0x02, 0x00, 0x00, 0x7e}, tail_fp8c[4] = {0x01, 0x00, 0x00, 0x78};
    const float tail_y[4] = {0x1p-7f, 0, 0, 896}, tail_yc[4] = {0x1p-7f, 0, 0, 1024};
    for (int i = 0; i < 4; i++) {
        fp8.x[28 + i] = fp8c.x[28 + i] = tail_x[i];
        fp8.enc[28 + i] = tail_fp8[i];
        fp8c.enc[28 + i] = tail_fp8c[i];
        fp8.y[28 + i] = tail_y[i];
        fp8c.y[28 + i] = tail_yc[i];
    }
    cases[nc++] = fp8;
    cases[nc++] = fp8c;

    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t i = 0; i < nc; i++)
        run_case(&rep, &cases[i]);
    tu_report_line(&rep, "crafted blocks by hand (%zu quantisations)", nc);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Flags and the SR counter: every nonzero element outside a NaN block is
 * one rounding; saturation raises overflow, a flushed element underflow. */
START_TEST(test_flags_and_counter)
{
    const float x[8] = {7, 1, 0, 0.1f, NAN, 1, 2, 3};
    fpk_ctx c = fpk_ctx_default();
    ck_assert(fpk_mx_quantize(&fpk_e2m1, FPK_MX_FLOOR, 4, x, 8, NULL, NULL, NULL, NULL, &c));
    ck_assert_uint_eq(c.flags, FPK_OVERFLOW | FPK_UNDERFLOW | FPK_INEXACT);
    c = fpk_ctx_default();
    c.round = FPK_SR;
    c.sr_counter = 5;
    ck_assert(fpk_mx_quantize(&fpk_e2m1, FPK_MX_FLOOR, 4, x, 8, NULL, NULL, NULL, NULL, &c));
    ck_assert_uint_eq(c.sr_counter, 5 + 8);
    /* Elements the MX formats cannot take: wider than 8 bits, or E8M0. */
    c = fpk_ctx_default();
    uint8_t enc[8] = {0};
    ck_assert(!fpk_mx_quantize(&fpk_fp16, FPK_MX_FLOOR, 4, x, 8, enc, NULL, NULL, NULL, &c));
    ck_assert(!fpk_mx_quantize(&fpk_e8m0, FPK_MX_FLOOR, 4, x, 8, enc, NULL, NULL, NULL, &c));
    ck_assert(!fpk_mx_quantize(NULL, FPK_MX_FLOOR, 4, x, 8, enc, NULL, NULL, NULL, &c));
    ck_assert_uint_eq(c.flags, 0);
    ck_assert_uint_eq(enc[0], 0);
    ck_assert_uint_eq(fpk_mx_scale(&fpk_fp16, FPK_MX_FLOOR, 1), fpk_e8m0.nan);
    ck_assert_uint_eq(fpk_mx_scale(NULL, FPK_MX_FLOOR, 1), fpk_e8m0.nan);
    /* Rounded up, FLT_MAX's scale is 2^120 and it stands for 256 * 2^120:
     * exact, but beyond float32. */
    const float big[2] = {FLT_MAX, -FLT_MAX / 2};
    float y[2];
    uint8_t sc;
    ck_assert(fpk_mx_quantize(&fpk_e4m3, FPK_MX_CEIL, 0, big, 2, enc, &sc, y, NULL, &c));
    ck_assert_uint_eq(sc, 127 + 120);
    ck_assert_uint_eq(enc[0], 0x78);
    ck_assert(isinf(y[0]) && y[0] > 0);
    ck_assert(y[1] == -0x1p127f);
    ck_assert_uint_eq(c.flags, FPK_INEXACT);
    c = fpk_ctx_default();
    enc[0] = 0;
    /* Nothing to do: no blocks, no flags. */
    ck_assert(fpk_mx_quantize(&fpk_e4m3, FPK_MX_FLOOR, 0, x, 0, enc, NULL, NULL, NULL, &c));
    ck_assert_uint_eq(c.flags, 0);
    printf("%s: flags, SR counter, refusals and 2^128: 18 cases\n", SUITE);
}
END_TEST

/* Under SR element i rounds with counter sr_counter + i: a tensor
 * quantised in pieces (on block boundaries) gets one call's results,
 * zeros among the elements or not, and its counter advances by N. */
START_TEST(test_sr_pieces)
{
    enum { N = 4 * FPK_MX_BLOCK };
    float x[N];
    tu_rng r;
    tu_rng_init(&r, tu_seed(SUITE));
    for (size_t i = 0; i < N; i++) {
        double v = ldexp((double)(tu_rng_next(&r) >> 11) * 0x1p-53,
                         (int)tu_rng_below(&r, 24) - 12);
        x[i] = tu_rng_below(&r, 3) == 0 ? 0.0f : (float)(tu_rng_next(&r) & 1 ? -v : v);
    }
    const fpk_format *elems[] = {&fpk_e2m1, &fpk_e3m2, &fpk_e4m3, &fpk_e5m2};
    size_t cases = 0;
    for (size_t e = 0; e < sizeof elems / sizeof *elems; e++) {
        uint8_t whole[N], piece[N];
        fpk_ctx c = fpk_ctx_default();
        c.round = FPK_SR;
        c.sr_seed = tu_rng_next(&r);
        c.sr_counter = 1000;
        ck_assert(fpk_mx_quantize(elems[e], FPK_MX_FLOOR, 0, x, N, whole, NULL, NULL, NULL, &c));
        ck_assert_uint_eq(c.sr_counter, 1000 + N);
        for (size_t first = 0; first < N; first += FPK_MX_BLOCK) {
            c.sr_counter = 1000 + first;
            ck_assert(fpk_mx_quantize(elems[e], FPK_MX_FLOOR, 0, x + first, FPK_MX_BLOCK,
                                      piece + first, NULL, NULL, NULL, &c));
        }
        for (size_t i = 0; i < N; i++, cases++)
            ck_assert_msg(whole[i] == piece[i], "%s element %zu: 0x%02x in one call, 0x%02x in pieces",
                          elems[e]->name, i, whole[i], piece[i]);
    }
    printf("%s: SR in pieces against one call: %zu elements\n", SUITE, cases);
}
END_TEST

/* A block's elements: near a random exponent, some far below it (their
 * products may fall below float32's normal range), with tu_gen's significands
 * (ties for ELEM among them) and signs, and zeros, float32 subnormals,
 * and now and then an infinity or a NaN. */
static void gen_block(tu_rng *r, const fpk_format *elem, float *x, size_t len)
{
    int base = (int)tu_rng_below(r, 280) - 20; /* biased: subnormal to FLT_MAX */
    bool tiny_block = tu_rng_below(r, 16) == 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t bits = (uint32_t)tu_gen(&fpk_fp32, elem, r), pick = (uint32_t)tu_rng_below(r, 20);
        int e = base;
        if (pick < 3)
            bits &= UINT32_C(0x80000000); /* a zero */
        else if (pick < 4 || tiny_block)
            bits &= UINT32_C(0x807fffff); /* a subnormal */
        else if (pick < 5 && tu_rng_below(r, 20) == 0)
            bits |= UINT32_C(0x7f800000); /* an infinity or a NaN */
        else {
            e -= pick < 12   ? (int)tu_rng_below(r, 3)
                 : pick < 17 ? (int)tu_rng_below(r, 170)
                             : 120 + (int)tu_rng_below(r, 40); /* about float32's range */
            e = e < 1 ? 1 : e > 254 ? 254 : e;
            bits = (bits & UINT32_C(0x807fffff)) | (uint32_t)e << 23;
        }
        memcpy(&x[i], &bits, sizeof bits);
    }
}

/* fpk_mx_quantize against the core element by element: each element
 * rounded alone by fpk_from_double_scaled (X * 2^-k rounded once, under
 * saturation) with its SR counter; its value P * 2^k, its block's counts
 * and the call's flags from those results. */
static void check_against_core(tu_report *rep, const fpk_format *elem, fpk_mx_rule rule,
                               size_t block, const float *x, size_t n, fpk_ctx c0)
{
    enum { MOST = 3000 };
    uint8_t enc[MOST], scales[MOST];
    float y[MOST];
    fpk_mx_block blocks[MOST];
    ck_assert(n <= MOST);
    fpk_ctx c = c0;
    ck_assert(fpk_mx_quantize(elem, rule, block, x, n, enc, scales, y, blocks, &c));
    unsigned flags = c0.flags;
    for (size_t first = 0, b = 0; first < n; first += block, b++) {
        size_t len = n - first < block ? n - first : block;
        float amax = 0;
        bool nonfinite = false;
        for (size_t i = first; i < first + len; i++) {
            float v = fabsf(x[i]);
            nonfinite |= !isfinite(v);
            if (isfinite(v) && v > amax && !(c0.daz && v < FLT_MIN))
                amax = v;
        }
        fpk_mx_block want = {nonfinite ? fpk_e8m0.nan : fpk_mx_scale(elem, rule, amax), 0, 0, 0};
        int k = (int)want.scale - fpk_e8m0.bias;
        for (size_t i = first; i < first + len; i++) {
            fpk_bits p = elem->nan;
            double value = NAN;
            unsigned f = 0;
            if (!nonfinite) {
                double v = c0.daz && fabsf(x[i]) < FLT_MIN ? copysign(0.0, x[i]) : x[i];
                fpk_ctx e = c0;
                e.flags = 0;
                e.saturate = true;
                e.daz = false;
                e.sr_counter = c0.sr_counter + i;
                p = fpk_from_double_scaled(elem, v, ldexp(1, -k), &e);
                f = e.flags;
                value = ldexp(fpk_to_double(elem, p), k); /* exact, or 2^128 */
                fpk_class cls = fpk_classify(elem, p);
                want.saturated += (f & FPK_OVERFLOW) != 0;
                want.flushed += v != 0 && cls == FPK_CLASS_ZERO;
                want.subnormal += cls == FPK_CLASS_SUBNORMAL;
            }
            flags |= f;
            float w = (float)value;
            tu_check(rep, elem, (ref_result){p, 0}, enc[i], 0, "%s %s %s block %zu: element %zu (%a)",
                     elem->name, tu_mode_name(c0.round), rule == FPK_MX_CEIL ? "ceil" : "floor",
                     block, i, (double)x[i]);
            if (!same_float(y[i], w) || (isnan(w) && memcmp(&y[i], &(float){NAN}, 4)))
                tu_fail(rep, "%s %s: element %zu (%a) stands for %a, expected %a", elem->name,
                        tu_mode_name(c0.round), i, (double)x[i], (double)y[i], (double)w);
        }
        const fpk_mx_block *g = &blocks[b];
        if (scales[b] != want.scale || g->scale != want.scale || g->saturated != want.saturated ||
            g->flushed != want.flushed || g->subnormal != want.subnormal)
            tu_fail(rep, "%s %s: block %zu: scale %02x saturated %u flushed %u subnormal %u, "
                         "expected %02x %u %u %u",
                    elem->name, tu_mode_name(c0.round), b, (unsigned)g->scale, (unsigned)g->saturated,
                    (unsigned)g->flushed, (unsigned)g->subnormal, (unsigned)want.scale,
                    (unsigned)want.saturated, (unsigned)want.flushed, (unsigned)want.subnormal);
    }
    if (c.flags != flags || c.sr_counter != c0.sr_counter + n)
        tu_fail(rep, "%s %s: flags %s, counter +%" PRIu64 ", expected %s, +%zu", elem->name,
                tu_mode_name(c0.round), tu_flags_name(c.flags).s, c.sr_counter - c0.sr_counter,
                tu_flags_name(flags).s, n);
}

/* Every set of kernels (FPK_ISA caps the choice: a set this CPU lacks
 * runs the best it has). */
START_TEST(test_against_core)
{
    enum { N = 3000 }; /* (pieces of 1024 inside) */
    static const size_t block_sizes[] = {FPK_MX_BLOCK, 5, 1, 13, 100, 1500};
    static const char *const isas[] = {"c", "avx2", "avx512"};
    static float x[N];
    tu_rng r;
    tu_rng_init(&r, tu_seed(SUITE));
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t s = 0; s < sizeof isas / sizeof *isas; s++) {
        setenv("FPK_ISA", isas[s], 1);
        for (size_t f = 0; fpk_formats[f]; f++) {
            const fpk_format *elem = fpk_formats[f];
            if (fpk_mx_scale(elem, FPK_MX_FLOOR, 1) == fpk_e8m0.nan)
                continue; /* not an MX element format */
            for (size_t bs = 0; bs < sizeof block_sizes / sizeof *block_sizes; bs++) {
                size_t block = block_sizes[bs];
                for (size_t first = 0; first < N; first += block)
                    gen_block(&r, elem, x + first, N - first < block ? N - first : block);
                for (int m = 0; m <= FPK_SR; m++)
                    for (int v = 0; v < TU_VARIANT_COUNT; v++) {
                        if (tu_variants[v].saturate)
                            continue; /* (MX always saturates) */
                        fpk_ctx c = tu_ctx((fpk_round)m, &tu_variants[v]);
                        c.sr_seed = tu_rng_next(&r);
                        c.sr_counter = tu_rng_next(&r) >> 1;
                        c.flags = tu_rng_below(&r, 2) ? FPK_INVALID : 0; /* kept */
                        check_against_core(&rep, elem, FPK_MX_FLOOR, block, x, N, c);
                        check_against_core(&rep, elem, FPK_MX_CEIL, block, x, N, c);
                    }
            }
            tu_report_line(&rep, "%s against the core, every mode and option (FPK_ISA=%s)",
                           elem->name, isas[s]);
        }
    }
    unsetenv("FPK_ISA");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mx");
    TCase *tc = tcase_create("mx");
    tcase_add_test(tc, test_scale);
    tcase_add_test(tc, test_quantize);
    tcase_add_test(tc, test_flags_and_counter);
    tcase_add_test(tc, test_sr_pieces);
    tcase_add_test(tc, test_against_core);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
