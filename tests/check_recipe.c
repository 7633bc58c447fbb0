/* Recipes (fpkit-recipe.h): known answers worked out by hand for each
 * scale rule; exhaustive checks against MPFR (every E2M1 code and every
 * E4M3 code under every E8M0 scale decoded, every rounding boundary
 * between E4M3 block-scale candidates, every E8M0 scale's thresholds
 * under each power-of-two rule); torchao's outputs committed in
 * tests/data/recipes/golden.bin (make-golden.py), compared bit for bit;
 * parsing, the canonical strings, the packed layouts, the statistics and
 * their JSON.  tests/check_recipe_fast compares the fast paths with the
 * general one. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SUITE "check_recipe"

static fpk_recipe recipe(const char *s)
{
    fpk_recipe r;
    fpk_error err;
    if (fpk_recipe_parse(s, &r, &err))
        ck_abort_msg("%s", err.msg);
    return r;
}

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* Quantises X (ROWS x COLS) under S; returns the scale of block B. */
static uint32_t quant(const char *s, const float *x, size_t rows, size_t cols, uint8_t *codes,
                      uint32_t *scales, float *y)
{
    fpk_recipe r = recipe(s);
    fpk_quantized q = {.codes = codes, .scales = scales, .y = y};
    fpk_error err;
    ck_assert_msg(fpk_recipe_quantize(&r, x, rows, cols, NULL, &q, NULL, &err) == FPK_OK, "%s",
                  err.msg);
    return q.global;
}

typedef struct known {
    const char *recipe;
    float amax;
    uint32_t scale;
} known;

/* One block of 32 whose largest magnitude is AMAX (the rest smaller). */
START_TEST(test_known_scales)
{
    const known cases[] = {
        /* FLOOR: floor(log2 amax) - emax; e4m3 emax 8, e2m1 emax 2 */
        {"e4m3/e8m0/floor/1x32", 448, 127},    /* 8 - 8 */
        {"e4m3/e8m0/floor/1x32", 511, 127},    /* 511 / 1 saturates to 448 */
        {"e4m3/e8m0/floor/1x32", 512, 128},
        {"e2m1/e8m0/floor/1x32", 0.1f, 121},   /* -4 - 2 = -6 */
        {"e4m3/e8m0/floor/1x32", 0, 0},        /* zeros: the least scale */
        {"e4m3/e8m0/floor/1x32", 0x1p-140f, 0}, /* -148 clamped to -127 */
        /* CEIL: ceil(log2 amax) - emax */
        {"e4m3/e8m0/ceil/1x32", 448, 128},     /* log2 448 = 8.8: 9 - 8 */
        {"e4m3/e8m0/ceil/1x32", 256, 127},     /* a power of two: 8 - 8 */
        {"e2m1/e8m0/ceil/1x32", 0.1f, 122},    /* -3 - 2 */
        /* EVEN: amax rounded to the element's precision, ties away */
        {"e2m1/e8m0/even/1x32", 7, 128},       /* 1.75 * 4 -> 2 * 4 = 2^3: 3 - 2 */
        {"e2m1/e8m0/even/1x32", 5.9f, 127},    /* 1.475 * 4 -> 1.5 * 4: k = 0 */
        {"e4m3/e8m0/even/1x32", 511, 128},     /* 1.996 * 256 -> 2 * 256: k = 1 */
        {"e4m3/e8m0/even/1x32", 479, 127},     /* 1.871 * 256 -> 1.875 * 256: k = 0 */
        /* RCEIL: amax / max rounded up to a power of two */
        {"e4m3/e8m0/rceil/1x32", 448, 127},    /* 448 / 448 = 1 = 2^0 */
        {"e4m3/e8m0/rceil/1x32", 449, 128},    /* just above 1: 2^1 */
        {"e2m1/e8m0/rceil/1x32", 6, 127},
        {"e2m1/e8m0/rceil/1x32", 3, 126},      /* 0.5 = 2^-1 */
        {"e2m1/e8m0/rceil/1x32", 3.5f, 127},   /* 0.583: 2^0 */
        /* AMAX, fp32 scale: 1 / fl32(448 / amax) */
        {"e4m3/fp32/amax/1x32", 448, 0x3f800000}, /* 1 */
        {"e4m3/fp32/amax/1x32", 896, 0x40000000}, /* 448/896 = 0.5: 2 */
        {"e4m3/fp32/amax/1x32,pow2", 1000, 0x40800000}, /* S 0.448 -> 0.25: decode 4 */
        {"e4m3/fp32/amax/1x32,margin=1", 448, 0x40000000}, /* 1 / 2^1, decode 2 */
        /* AMAX, UE4M3 scale (single-level NVFP4): E4M3(amax / 6), at
         * least 2^-6 */
        {"e2m1/e4m3/amax/1x32", 6, 0x38},      /* 1.0 */
        {"e2m1/e4m3/amax/1x32", 0.01f, 0x08},  /* 0.00167 clamped to 2^-6 */
        {"e2m1/e4m3/amax/1x32", 60, 0x52},     /* 10 = 1.25 * 2^3: (3+7) << 3 | 2 */
    };
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t want = cases[i].scale;
        float x[32] = {0};
        x[5] = cases[i].amax;
        x[6] = cases[i].amax / 3;
        uint32_t scale;
        quant(cases[i].recipe, x, 1, 32, NULL, &scale, NULL);
        tu_check(&rep, &fpk_fp32, (ref_result){want, 0}, scale, 0, "%s amax %a",
                 cases[i].recipe, (double)cases[i].amax);
    }
    tu_report_line(&rep, "scales by hand");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* NVFP4 by hand: a tensor of amax 2688 makes S_enc 1, so a block's scale
 * is E4M3(amax_b * fl32(1/6)) and elements are x / D (D a power of two
 * here, exactly). */
START_TEST(test_known_nvfp4)
{
    float x[32] = {0};
    x[0] = 2688;  /* block 0: amax 2688: 448, E4M3 0x7e */
    x[1] = 1000;  /* 1000 / 448 = 2.23 -> 2 (code 4) */
    x[16] = 12;   /* block 1: 12 / 6 = 2 (0x40): elements / 2 */
    x[17] = -5;   /* -2.5 -> -2 (tie to even code 4): 0xc */
    x[18] = 0.3f; /* 0.15 -> 0 */
    uint8_t codes[32];
    uint32_t scales[2];
    float y[32];
    uint32_t g = quant("nvfp4", x, 1, 32, codes, scales, y);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_check(&rep, &fpk_fp32, (ref_result){0x3f800000, 0}, g, 0, "global");
    tu_check(&rep, &fpk_e4m3, (ref_result){0x7e, 0}, scales[0], 0, "block 0");
    tu_check(&rep, &fpk_e4m3, (ref_result){0x40, 0}, scales[1], 0, "block 1");
    const uint8_t want[] = {7, 4, 0xc, 0};
    const int at[] = {0, 1, 17, 18};
    for (int i = 0; i < 4; i++)
        tu_check(&rep, &fpk_e2m1, (ref_result){want[i], 0}, codes[at[i]], 0, "element %d",
                 at[i]);
    tu_check(&rep, &fpk_fp32, (ref_result){bits_of(-4.0f), 0}, bits_of(y[17]), 0, "value 17");
    tu_report_line(&rep, "nvfp4 by hand");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* MPFR: the float32 rounding of P's value (format E) times 2^K. */
static ref_result ref_value(const fpk_format *e, fpk_bits p, mpfr_srcptr scale)
{
    mpfr_t v;
    mpfr_init2(v, 256);
    ref_decode(v, e, p);
    mpfr_mul(v, v, scale, MPFR_RNDN); /* exact at 256 bits */
    fpk_ctx c = fpk_ctx_default();
    ref_result r = ref_round(&fpk_fp32, v, 0, &c);
    mpfr_clear(v);
    return r;
}

/* Every E4M3 and E2M1 code under every E8M0 scale, and every E2M1 code
 * under every E4M3 scale, decoded, against MPFR. */
START_TEST(test_exhaustive_values)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    fpk_recipe mx8 = recipe("mxfp8-e4m3"), mx4 = recipe("mxfp4"), nv = recipe("nvfp4");
    mpfr_t s;
    mpfr_init2(s, 64);
    for (uint32_t k = 0; k < 255; k++) {
        mpfr_set_ui_2exp(s, 1, (long)k - 127, MPFR_RNDN);
        for (uint32_t p = 0; p < 256; p++) {
            if (p == 0x7f || p == 0xff)
                continue; /* E4M3's NaNs */
            ref_result w = ref_value(&fpk_e4m3, p, s);
            tu_check(&rep, &fpk_fp32, (ref_result){w.bits, 0},
                     bits_of(fpk_recipe_value(&mx8, (uint8_t)p, k, 0x3f800000)), 0,
                     "e4m3 %02x scale %u", p, k);
        }
        for (uint32_t p = 0; p < 16; p++) {
            ref_result w = ref_value(&fpk_e2m1, p, s);
            tu_check(&rep, &fpk_fp32, (ref_result){w.bits, 0},
                     bits_of(fpk_recipe_value(&mx4, (uint8_t)p, k, 0x3f800000)), 0,
                     "e2m1 %x scale %u", p, k);
        }
    }
    tu_report_line(&rep, "every E4M3 and E2M1 code under every E8M0 scale");
    for (uint32_t d = 0; d < 0x7f; d++) {
        ref_decode(s, &fpk_e4m3, d);
        for (uint32_t p = 0; p < 16; p++) {
            ref_result w = ref_value(&fpk_e2m1, p, s);
            tu_check(&rep, &fpk_fp32, (ref_result){w.bits, 0},
                     bits_of(fpk_recipe_value(&nv, (uint8_t)p, d, 0x3f800000)), 0,
                     "e2m1 %x scale e4m3 %02x", p, d);
        }
    }
    tu_report_line(&rep, "every E2M1 code under every E4M3 scale");
    mpfr_clear(s);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Around every boundary between E4M3 scale candidates (and each
 * candidate itself), a block amax whose quotient by 6 lands there: the
 * scale of "e2m1/e4m3/amax" is E4M3(clamp(fl32(amax / 6), 2^-6, 448)),
 * each rounding by MPFR. */
START_TEST(test_exhaustive_e4m3_scales)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    mpfr_t a, b, t, lo, hi;
    mpfr_inits2(128, a, b, t, lo, hi, (mpfr_ptr)0);
    fpk_ctx c = fpk_ctx_default();
    ref_decode(lo, &fpk_e4m3, 0x08); /* 2^-6 */
    ref_decode(hi, &fpk_e4m3, 0x7e); /* 448 */
    for (uint32_t d = 0; d < 0x7e; d++) {
        ref_decode(a, &fpk_e4m3, d);
        ref_decode(b, &fpk_e4m3, d + 1);
        for (int mid = 0; mid < 2; mid++) {
            /* the candidate itself, or the midpoint to the next one */
            mpfr_set(t, a, MPFR_RNDN);
            if (mid) {
                mpfr_add(t, a, b, MPFR_RNDN);
                mpfr_div_2ui(t, t, 1, MPFR_RNDN);
            }
            mpfr_mul_ui(t, t, 6, MPFR_RNDN);
            uint32_t a0 = (uint32_t)ref_round(&fpk_fp32, t, 0, &c).bits;
            for (int off = -2; off <= 2; off++) {
                uint32_t amax = a0 + (uint32_t)off;
                float x[16] = {0}, f;
                memcpy(&f, &amax, sizeof f);
                x[3] = f;
                uint32_t scale;
                quant("e2m1/e4m3/amax/1x16", x, 1, 16, NULL, &scale, NULL);
                /* expected: amax / 6 rounded to float32, clamped, to E4M3 */
                mpfr_t q;
                mpfr_init2(q, 256);
                ref_decode(q, &fpk_fp32, amax);
                int inex = mpfr_div_ui(q, q, 6, MPFR_RNDZ);
                uint32_t q32 = (uint32_t)ref_round(&fpk_fp32, q, inex ? 1 : 0, &c).bits;
                ref_decode(q, &fpk_fp32, q32);
                if (mpfr_less_p(q, lo))
                    mpfr_set(q, lo, MPFR_RNDN);
                if (mpfr_greater_p(q, hi))
                    mpfr_set(q, hi, MPFR_RNDN);
                ref_result w = ref_round(&fpk_e4m3, q, 0, &c);
                mpfr_clear(q);
                tu_check(&rep, &fpk_e4m3, (ref_result){w.bits, 0}, scale, 0,
                         "amax %a (e4m3 %02x%s)", (double)f, d, mid ? " and up" : "");
            }
        }
    }
    tu_report_line(&rep, "every E4M3 scale candidate and boundary");
    mpfr_clears(a, b, t, lo, hi, (mpfr_ptr)0);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Every E8M0 scale k: block maxima at 2^(k + emax) and one float32 ulp
 * either side, under FLOOR, CEIL and RCEIL (e4m3 elements), against the
 * rules' definitions evaluated with MPFR. */
START_TEST(test_exhaustive_e8m0_scales)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    const char *rules[] = {"e4m3/e8m0/floor/1x32", "e4m3/e8m0/ceil/1x32",
                           "e4m3/e8m0/rceil/1x32"};
    fpk_ctx c = fpk_ctx_default();
    mpfr_t v, q;
    mpfr_inits2(256, v, q, (mpfr_ptr)0);
    for (int k = -127; k <= 127; k++)
        for (int ri = 0; ri < 3; ri++)
            for (int off = -1; off <= 1; off++) {
                /* amax = 2^(k + 8) (rceil: 448 * 2^k), nudged */
                mpfr_set_ui_2exp(v, ri == 2 ? 448 : 1, k + (ri == 2 ? 0 : 8), MPFR_RNDN);
                ref_result a = ref_round(&fpk_fp32, v, 0, &c);
                if (a.bits >= 0x7f800000 || a.bits == 0)
                    continue;
                uint32_t amax = (uint32_t)a.bits + (uint32_t)off;
                if (amax >= 0x7f800000 || amax == 0)
                    continue;
                ref_decode(v, &fpk_fp32, amax);
                long e;
                if (ri == 2) { /* fl32(amax / 448), then the least 2^j >= it */
                    int inex = mpfr_div_ui(q, v, 448, MPFR_RNDZ);
                    ref_decode(q, &fpk_fp32,
                               (uint32_t)ref_round(&fpk_fp32, q, inex ? 1 : 0, &c).bits);
                    mpfr_log2(q, q, MPFR_RNDU);
                    mpfr_ceil(q, q);
                    e = mpfr_get_si(q, MPFR_RNDN);
                } else {
                    mpfr_log2(q, v, ri ? MPFR_RNDU : MPFR_RNDD);
                    ri ? mpfr_ceil(q, q) : mpfr_floor(q, q);
                    e = mpfr_get_si(q, MPFR_RNDN) - 8;
                }
                e = e < -127 ? -127 : e > 127 ? 127 : e;
                float x[32] = {0}, f;
                memcpy(&f, &amax, sizeof f);
                x[31] = -f;
                uint32_t scale;
                quant(rules[ri], x, 1, 32, NULL, &scale, NULL);
                tu_check(&rep, &fpk_e8m0, (ref_result){(fpk_bits)(e + 127), 0}, scale, 0,
                         "%s amax %a", rules[ri], (double)f);
            }
    tu_report_line(&rep, "every E8M0 scale's thresholds under floor, ceil, rceil");
    mpfr_clears(v, q, (mpfr_ptr)0);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* golden.bin's cases (make-golden.py), fpkit against torchao: codes,
 * scales, the global scale and the values, bit for bit. */
static uint32_t rd32(FILE *f)
{
    uint8_t b[4];
    ck_assert(fread(b, 1, 4, f) == 4);
    return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

START_TEST(test_golden)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/recipes/golden.bin", FPK_TEST_DATA);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char magic[6];
    ck_assert(fread(magic, 1, 6, f) == 6 && !memcmp(magic, "FPKR1\n", 6));
    tu_report rep;
    tu_report_init(&rep, SUITE);
    int ncases = 0;
    for (;;) {
        uint8_t b[4];
        if (fread(b, 1, 4, f) != 4)
            break;
        uint32_t len = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
        char name[256], ref[256];
        ck_assert(len < sizeof name && fread(name, 1, len, f) == len);
        name[len] = '\0';
        len = rd32(f);
        ck_assert(len < sizeof ref && fread(ref, 1, len, f) == len);
        ref[len] = '\0';
        size_t rows = rd32(f), cols = rd32(f), n = rows * cols;
        uint32_t glob = rd32(f), has_y = rd32(f);
        fpk_recipe r = recipe(name);
        size_t br, bc, nb = fpk_recipe_blocks(&r, rows, cols, &br, &bc);
        float *x = malloc(n * 4), *y = malloc(n * 4), *gy = malloc(n * 4);
        uint8_t *codes = malloc(n), *gc = malloc(n);
        uint32_t *scales = malloc(nb * 4), *gs = malloc(nb * 4);
        ck_assert(fread(x, 4, n, f) == n && fread(gc, 1, n, f) == n &&
                  fread(gs, 4, nb, f) == nb);
        if (has_y)
            ck_assert(fread(gy, 4, n, f) == n);
        fpk_quantized q = {.codes = codes, .scales = scales, .y = y};
        ck_assert(fpk_recipe_quantize(&r, x, rows, cols, NULL, &q, NULL, NULL) == FPK_OK);
        tu_check(&rep, &fpk_fp32, (ref_result){glob, 0}, q.global, 0, "%s [%s] global", name,
                 ref);
        for (size_t j = 0; j < nb; j++)
            tu_check(&rep, r.scale, (ref_result){gs[j], 0}, scales[j], 0,
                     "%s [%s] scale of block %zu", name, ref, j);
        for (size_t i = 0; i < n; i++) {
            tu_check(&rep, r.elem, (ref_result){gc[i], 0}, codes[i], 0,
                     "%s [%s] code of element %zu (%a)", name, ref, i, (double)x[i]);
            if (has_y && bits_of(y[i]) != bits_of(gy[i]))
                tu_fail(&rep, "%s [%s] value of element %zu: %a, torchao %a", name, ref, i,
                        (double)y[i], (double)gy[i]);
        }
        tu_report_line(&rep, "%s against torchao's %s", name, ref);
        ncases++;
        free(x), free(y), free(gy), free(codes), free(gc), free(scales), free(gs);
    }
    fclose(f);
    ck_assert_int_gt(ncases, 30);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Every preset parses, formats canonically, and reads back the same. */
START_TEST(test_parse)
{
    for (int i = 0; fpk_recipe_presets[i]; i++) {
        fpk_recipe r = recipe(fpk_recipe_presets[i]), r2;
        char s[256], s2[256];
        fpk_recipe_format(&r, s, sizeof s);
        ck_assert_int_eq(fpk_recipe_parse(s, &r2, NULL), FPK_OK);
        fpk_recipe_format(&r2, s2, sizeof s2);
        ck_assert_str_eq(s, s2);
    }
    fpk_recipe r = recipe("NVFP4,round=sr,sr_bits=8,seed=7");
    char s[256];
    fpk_recipe_format(&r, s, sizeof s);
    ck_assert_str_eq(s, "e2m1/e4m3/nvfp4/1x16,round=sr,sr_bits=8,seed=7");
    r = recipe("e4m3/ue8m0/rceil/1x32");
    ck_assert_ptr_eq(r.scale, &fpk_e8m0);
    const char *bad[] = {"", "nope", "e4m3/e8m0/floor", "e4m3/e8m0/floor/1y32",
                         "e4m3/e8m0/sideways/1x32", "e2m1/e8m0/nvfp4/1x16",
                         "e4m3/e8m0/floor/1x32,margin=2", "e4m3/fp32/amax/1x32,history=4",
                         "mxfp4,round=sr,sr_bits=0", "fp16/e8m0/floor/1x32", "mxfp4,bogus"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fpk_error err = {0};
        ck_assert_msg(fpk_recipe_parse(bad[i], &r, &err) == FPK_ESYNTAX, "%s", bad[i]);
        ck_assert_msg(strstr(err.msg, "recipe") != NULL, "%s: %s", bad[i], err.msg);
    }
}
END_TEST

/* Packed codes: two E2M1 a byte, the even element low; every byte. */
START_TEST(test_codec)
{
    fpk_recipe r = recipe("mxfp4");
    for (int b = 0; b < 256; b++) {
        uint8_t in = (uint8_t)b, codes[2], out;
        fpk_recipe_decode(&r, &in, 2, codes);
        ck_assert_uint_eq(codes[0], b & 0xf);
        ck_assert_uint_eq(codes[1], b >> 4);
        ck_assert_uint_eq(fpk_recipe_encode(&r, codes, 2, &out), 1);
        ck_assert_uint_eq(out, b);
    }
    uint8_t odd[3] = {1, 2, 3}, packed[2];
    ck_assert_uint_eq(fpk_recipe_encode(&r, odd, 3, packed), 2);
    ck_assert_uint_eq(packed[1], 3);
    fpk_recipe f = recipe("fp8-block128");
    uint32_t s[2] = {0x3f800000, 0x12345678}, s2[2];
    uint8_t sb[8];
    ck_assert_uint_eq(fpk_recipe_encode_scales(&f, s, 2, sb), 8);
    ck_assert_uint_eq(sb[4], 0x78);
    fpk_recipe_decode_scales(&f, sb, 2, s2);
    ck_assert_uint_eq(s2[1], s[1]);
}
END_TEST

/* Delayed scaling: the history's largest (or latest) amax sets S. */
START_TEST(test_delayed)
{
    fpk_recipe r = recipe("e4m3/fp32/amax/0x0,history=2,max");
    fpk_amax_history h;
    fpk_amax_history_init(&h, 2);
    float x[4] = {1, 2, 3, 4};
    uint32_t scale;
    fpk_quantized q = {.scales = &scale};
    ck_assert(fpk_recipe_quantize(&r, x, 1, 4, &h, &q, NULL, NULL) == FPK_OK);
    ck_assert_uint_eq(scale, 0x3f800000); /* empty history: S = 1 */
    fpk_amax_history_push(&h, 896);
    fpk_amax_history_push(&h, 448);
    ck_assert(fpk_recipe_quantize(&r, x, 1, 4, &h, &q, NULL, NULL) == FPK_OK);
    ck_assert_uint_eq(scale, 0x40000000); /* max 896: S = 0.5, decode 2 */
    fpk_amax_history_push(&h, 224);       /* drops 896 */
    ck_assert(fpk_recipe_quantize(&r, x, 1, 4, &h, &q, NULL, NULL) == FPK_OK);
    ck_assert_uint_eq(scale, 0x3f800000); /* max 448 */
    ck_assert(fpk_amax_history_amax(&h, false) == 224);
}
END_TEST

/* The RHT: H * H = 16 I, so applying it twice with the same signs and no
 * rounding that matters gives the input back; and one spike spreads as
 * +-1/4 with the signs. */
START_TEST(test_rht)
{
    float x[16] = {0}, z[16], w[16];
    x[0] = 4;
    fpk_rht16(x, 0, &fpk_fp32, z);
    for (int j = 0; j < 16; j++)
        ck_assert(z[j] == 1.0f);
    x[0] = 0;
    x[3] = 4;
    fpk_rht16(x, 1u << 3, &fpk_fp32, z);
    for (int j = 0; j < 16; j++)
        ck_assert(z[j] == ((__builtin_popcount(3 & j) & 1) ? 1.0f : -1.0f));
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i * 3 - 7) / 8;
    fpk_rht16(x, FPK_RHT_TE_SIGNS, &fpk_fp32, z);
    /* (D H)^-1 = H D / 16, i.e. the transform with signs applied after:
     * transform without signs, then negate the signed outputs. */
    fpk_rht16(z, 0, &fpk_fp32, w);
    for (int i = 0; i < 16; i++)
        ck_assert(((FPK_RHT_TE_SIGNS >> i & 1) ? -w[i] : w[i]) == x[i]);
    x[5] = NAN;
    fpk_rht16(x, 0, &fpk_bf16, z);
    ck_assert(isnan(z[9]));
    /* tiny and huge terms: the exact sum, rounded once */
    float t[16] = {0x1p100f, 0x1p-100f};
    fpk_rht16(t, 0, &fpk_fp32, z);
    ck_assert(z[0] == 0x1p98f && z[1] == 0x1p98f);
    t[1] = 0x1p100f;
    fpk_rht16(t, 0, &fpk_fp32, z);
    ck_assert(z[1] == 0.0f && z[0] == 0x1p99f);
}
END_TEST

/* Statistics: counts on a crafted tensor, merging parts, JSON round
 * trip. */
START_TEST(test_stats)
{
    fpk_recipe r = recipe("mxfp8-e4m3");
    float x[64] = {0};
    x[0] = 448 * 4; /* block 0: k = 2 */
    x[1] = 0x1p-20f; /* flushed: 2^-22 below e4m3's least subnormal 2^-9 */
    x[2] = 0x1p-8f;  /* 2^-10 after scaling: below half of 2^-9, flushed */
    x[3] = 0x1p-5f;  /* 2^-7: subnormal */
    x[32] = INFINITY; /* block 1: the NaN scale */
    fpk_recipe_stats s, a, b;
    fpk_recipe_stats_init(&s, &r);
    fpk_quantized q = {0};
    ck_assert(fpk_recipe_quantize(&r, x, 1, 64, NULL, &q, &s, NULL) == FPK_OK);
    ck_assert_uint_eq(s.count, 64);
    ck_assert_uint_eq(s.zeros, 59);
    ck_assert_uint_eq(s.nonfinite, 1);
    ck_assert_uint_eq(s.flushed, 2);
    ck_assert_uint_eq(s.subnormal, 1);
    ck_assert_uint_eq(s.blocks, 2);
    ck_assert_uint_eq(s.nan_blocks, 1);
    ck_assert(s.scale_min == 4 && s.scale_max == 4);
    ck_assert_uint_eq(s.scale_hist[2 - FPK_SCALE_LOG2_MIN], 1);
    ck_assert_uint_eq(s.range_hist[30], 1); /* 1792 / 2^-20 = 1.75 * 2^30 */
    fpk_recipe_stats_init(&a, &r);
    fpk_recipe_stats_init(&b, &r);
    ck_assert(fpk_recipe_quantize(&r, x, 1, 32, NULL, &q, &a, NULL) == FPK_OK);
    ck_assert(fpk_recipe_quantize(&r, x + 32, 1, 32, NULL, &q, &b, NULL) == FPK_OK);
    ck_assert(fpk_recipe_stats_merge(&a, &b));
    ck_assert(memcmp(&a, &s, sizeof s) == 0);
    char *json = fpk_recipe_stats_to_json(&s);
    ck_assert_ptr_nonnull(json);
    fpk_recipe_stats t;
    fpk_error err;
    ck_assert_msg(fpk_recipe_stats_from_json(&t, json, &err) == FPK_OK, "%s", err.msg);
    ck_assert(memcmp(&t, &s, sizeof s) == 0);
    free(json);
    ck_assert_int_eq(fpk_recipe_stats_from_json(&t, "{\"recipe\":\"mxfp4\"}", &err),
                     FPK_EFORMAT);
    fpk_recipe other = recipe("mxfp4");
    fpk_recipe_stats_init(&b, &other);
    ck_assert(!fpk_recipe_stats_merge(&a, &b));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recipe");
    TCase *tc = tcase_create("recipe");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_known_scales);
    tcase_add_test(tc, test_known_nvfp4);
    tcase_add_test(tc, test_exhaustive_values);
    tcase_add_test(tc, test_exhaustive_e4m3_scales);
    tcase_add_test(tc, test_exhaustive_e8m0_scales);
    tcase_add_test(tc, test_golden);
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_codec);
    tcase_add_test(tc, test_delayed);
    tcase_add_test(tc, test_rht);
    tcase_add_test(tc, test_stats);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
