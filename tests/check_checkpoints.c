/* Checkpoints as people hold them (lib/tensor/zip.c, pickle.c, torch.c,
 * hf_index.c, quant_*.c): the quantised checkpoints written by
 * tests/data/checkpoints/make-checkpoints.py, each after its published
 * convention, decode bit for bit to the values they were made from
 * (expect/NAME.safetensors); the fast decoding of FP8 under a float32
 * scale equals the recipe's (fpk_recipe_value) for every code and many
 * scales; a sharded model read through its index equals the same tensors
 * in one file; torch.save files written by torch (make-torch.py) equal
 * the same tensors as safetensors, their integer tensors listed and
 * skipped. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit-tensor.h"

#ifndef FPK_TEST_DATA
#error "FPK_TEST_DATA must name the directory of the fixtures"
#endif

static fpk_dump *open_data(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/checkpoints/%s", FPK_TEST_DATA, name);
    fpk_dump *d = NULL;
    fpk_error err = {0, ""};
    int rc = fpk_dump_open(path, NULL, &d, &err);
    ck_assert_msg(rc == FPK_OK, "%s: %s", path, err.msg);
    return d;
}

/* The tensor of D called NAME, or -1. */
static long find(const fpk_dump *d, const char *name)
{
    for (size_t i = 0; i < fpk_dump_ntensors(d); i++)
        if (strcmp(fpk_dump_tensor(d, i)->name, name) == 0)
            return (long)i;
    return -1;
}

/* Every tensor of EXPECT has a tensor of GOT of the same name, shape and
 * values: bit for bit as float32 when BITS, else as doubles. */
static void same_tensors(fpk_dump *got, fpk_dump *expect, bool bits)
{
    fpk_error err;
    ck_assert_uint_gt(fpk_dump_ntensors(expect), 0);
    for (size_t i = 0; i < fpk_dump_ntensors(expect); i++) {
        const fpk_tensor *e = fpk_dump_tensor(expect, i);
        long j = find(got, e->name);
        ck_assert_msg(j >= 0, "%s: no tensor %s", fpk_dump_path(got), e->name);
        const fpk_tensor *g = fpk_dump_tensor(got, (size_t)j);
        ck_assert_int_eq(g->ndim, e->ndim);
        ck_assert_msg(memcmp(g->shape, e->shape, (size_t)e->ndim * sizeof e->shape[0]) == 0,
                      "%s: shape differs", e->name);
        double *x = malloc(e->count * sizeof *x + 8), *y = malloc(e->count * sizeof *y + 8);
        ck_assert_int_eq(fpk_dump_read(got, (size_t)j, 0, e->count, x, &err), FPK_OK);
        ck_assert_int_eq(fpk_dump_read(expect, i, 0, e->count, y, &err), FPK_OK);
        for (uint64_t k = 0; k < e->count; k++)
            ck_assert_msg(memcmp(&x[k], &y[k], sizeof x[k]) == 0 || (isnan(x[k]) && isnan(y[k])),
                          "%s: %s element %" PRIu64 ": %a, expected %a", fpk_dump_path(got),
                          e->name, k, x[k], y[k]);
        if (bits && g->layout == FPK_LAYOUT_DECODED) {
            /* as stored: float32 */
            float *f = malloc(e->count * sizeof *f + 4);
            ck_assert_int_eq(fpk_dump_read_raw(got, (size_t)j, 0, e->count, f, &err), FPK_OK);
            for (uint64_t k = 0; k < e->count; k++)
                ck_assert_msg((double)f[k] == y[k] || (isnan(f[k]) && isnan(y[k])),
                              "%s element %" PRIu64, e->name, k);
            /* in odd pieces, as the tools read */
            for (uint64_t k = 0; k < e->count;) {
                size_t n = (size_t)(e->count - k < 37 ? e->count - k : 37);
                ck_assert_int_eq(fpk_dump_read_raw(got, (size_t)j, k, n, f, &err), FPK_OK);
                for (size_t q = 0; q < n; q++)
                    ck_assert((double)f[q] == y[k + q] || (isnan(f[q]) && isnan(y[k + q])));
                k += n;
            }
            free(f);
        }
        free(x);
        free(y);
    }
}

static void decodes(const char *dir, const char *encoding, const char *expect)
{
    char name[256];
    snprintf(name, sizeof name, "%s/model.safetensors", dir);
    fpk_dump *d = open_data(name), *e = open_data(expect);
    bool any = false;
    for (size_t i = 0; i < fpk_dump_ntensors(d); i++) {
        const fpk_tensor *t = fpk_dump_tensor(d, i);
        if (t->layout == FPK_LAYOUT_DECODED) {
            ck_assert_str_eq(t->encoding, encoding);
            ck_assert_int_eq(t->dtype, FPK_DTYPE_F32);
            any = true;
        }
    }
    ck_assert_msg(any, "%s: no decoded tensor", dir);
    same_tensors(d, e, true);
    fpk_dump_close(d);
    fpk_dump_close(e);
}

START_TEST(test_mxfp4)
{
    decodes("mxfp4", "mxfp4", "expect/mxfp4.safetensors");
}
END_TEST

START_TEST(test_nvfp4)
{
    decodes("nvfp4", "nvfp4", "expect/nvfp4.safetensors");
}
END_TEST

START_TEST(test_fp8_block)
{
    decodes("fp8", "fp8-block", "expect/fp8.safetensors");
}
END_TEST

START_TEST(test_ct_nvfp4)
{
    decodes("ct-nvfp4", "nvfp4", "expect/ct-nvfp4.safetensors");
}
END_TEST

/* The decoding of FP8 codes under a float32 multiplier (a product in
 * double rounded to float32) against the recipe's value, every code. */
START_TEST(test_fp8_product)
{
    fpk_recipe r;
    ck_assert_int_eq(fpk_recipe_parse("e4m3/fp32/amax/128x128", &r, NULL), FPK_OK);
    uint32_t scales[] = {0x3f800000, 0x00000001, 0x00800000, 0x007fffff, 0x7f7fffff,
                         0x39a3d70a, 0x3a83126f, 0x45800000, 0x0b000000, 0x7f000000};
    uint32_t seed = 12345;
    for (int s = 0; s < 10 + 2000; s++) {
        uint32_t scale = s < 10 ? scales[s] : (seed = seed * 1664525u + 1013904223u) & 0x7fffffff;
        if ((scale & 0x7f800000) == 0x7f800000)
            continue;
        float sf;
        memcpy(&sf, &scale, sizeof sf);
        for (int p = 0; p < 256; p++) {
            float want = fpk_recipe_value(&r, (uint8_t)p, scale, 0x3f800000);
            fpk_ctx c = fpk_ctx_default();
            uint32_t pv = (uint32_t)fpk_convert(&fpk_fp32, &fpk_e4m3, (fpk_bits)p, &c);
            float pf;
            memcpy(&pf, &pv, sizeof pf);
            float got = (float)((double)pf * (double)sf);
            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0 || (isnan(got) && isnan(want)),
                          "code 0x%02x scale 0x%08" PRIx32 ": %a, recipe %a", p, scale, got,
                          want);
        }
    }
}
END_TEST

START_TEST(test_sharded)
{
    fpk_dump *d = open_data("sharded/model.safetensors.index.json"),
             *w = open_data("whole.safetensors");
    ck_assert_str_eq(fpk_dump_kind(d), "index");
    ck_assert_uint_eq(fpk_dump_ntensors(d), fpk_dump_ntensors(w));
    for (size_t i = 0; i < fpk_dump_ntensors(w); i++) /* the index's order */
        ck_assert_str_eq(fpk_dump_tensor(d, i)->name, fpk_dump_tensor(w, i)->name);
    same_tensors(d, w, false);
    ck_assert_str_eq(fpk_dump_metadata(d, "total_size"), "15488");
    fpk_dump_close(d);
    fpk_dump_close(w);
}
END_TEST

/* torch.save files written by make-torch.py with each torch installed
 * when the fixtures were made: the same tensors as their safetensors
 * twins, integer ones skipped. */
START_TEST(test_torch)
{
    static const char *const names[] = {"torch1", "torch2"};
    for (int k = 0; k < 2; k++) {
        char pt[64], st[64];
        snprintf(pt, sizeof pt, "torch/%s.pt", names[k]);
        snprintf(st, sizeof st, "torch/%s.safetensors", names[k]);
        fpk_dump *d = open_data(pt), *s = open_data(st);
        ck_assert_str_eq(fpk_dump_kind(d), "torch");
        same_tensors(d, s, false);
        ck_assert_uint_eq(fpk_dump_ntensors(d), fpk_dump_ntensors(s));
        ck_assert_uint_ge(fpk_dump_nskipped(d), 1);
        const fpk_skipped *sk = fpk_dump_skipped(d, 0);
        ck_assert_str_eq(sk->name, "model.position_ids");
        ck_assert_str_eq(sk->dtype, "i64");
        bool strided = false;
        for (size_t i = 0; i < fpk_dump_ntensors(d); i++)
            strided |= fpk_dump_tensor(d, i)->layout == FPK_LAYOUT_STRIDED;
        ck_assert_msg(strided, "%s: no strided view", pt);
        fpk_dump_close(d);
        fpk_dump_close(s);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("checkpoints");
    TCase *tc = tcase_create("checkpoints");
    tcase_add_test(tc, test_mxfp4);
    tcase_add_test(tc, test_nvfp4);
    tcase_add_test(tc, test_fp8_block);
    tcase_add_test(tc, test_ct_nvfp4);
    tcase_add_test(tc, test_fp8_product);
    tcase_add_test(tc, test_sharded);
    tcase_add_test(tc, test_torch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
