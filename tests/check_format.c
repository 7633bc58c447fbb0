/* The format table, lookup by name, classification, neighbours and the
 * exact double conversion, checked against docs/DESIGN.md "Formats" and MPFR. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core-impl.h"
#include "ref.h"
#include "testutil.h"

/* The format table of docs/DESIGN.md "Formats" and the OCP MX v1.0 and ml_dtypes figures of
 * the formats added to it (E2M1 max 6, E2M3 max 7.5, E3M2 max 28, E8M0
 * 2^-127 .. 2^127), written out by hand: the encodings of the smallest
 * normal and the smallest positive value, and the special encodings. */
static const struct {
    const fpk_format *f;
    const char *name;
    int width, e, m, bias;
    fpk_special special;
    double max_finite;
    int min_normal_exp, min_positive_exp;
    fpk_bits min_normal, min_positive, inf, nan;
} design[] = {
    {&fpk_fp64, "fp64", 64, 11, 52, 1023, FPK_SPECIAL_IEEE, 0x1.fffffffffffffp+1023, -1022, -1074, 0x0010000000000000, 1, 0x7ff0000000000000, 0x7ff8000000000000},
    {&fpk_fp32, "fp32", 32, 8, 23, 127, FPK_SPECIAL_IEEE, 0x1.fffffep+127, -126, -149, 0x00800000, 1, 0x7f800000, 0x7fc00000},
    {&fpk_tf32, "tf32", 19, 8, 10, 127, FPK_SPECIAL_IEEE, 0x1.ffcp+127, -126, -136, 0x00400, 1, 0x3fc00, 0x3fe00},
    {&fpk_fp16, "fp16", 16, 5, 10, 15, FPK_SPECIAL_IEEE, 65504, -14, -24, 0x0400, 1, 0x7c00, 0x7e00},
    {&fpk_bf16, "bf16", 16, 8, 7, 127, FPK_SPECIAL_IEEE, 0x1.fep+127, -126, -133, 0x0080, 1, 0x7f80, 0x7fc0},
    {&fpk_e4m3, "e4m3", 8, 4, 3, 7, FPK_SPECIAL_FN, 448, -6, -9, 0x08, 1, 0, 0x7f},
    {&fpk_e5m2, "e5m2", 8, 5, 2, 15, FPK_SPECIAL_IEEE, 57344, -14, -16, 0x04, 1, 0x7c, 0x7e},
    {&fpk_e4m3fnuz, "e4m3fnuz", 8, 4, 3, 8, FPK_SPECIAL_FNUZ, 240, -7, -10, 0x08, 1, 0, 0x80},
    {&fpk_e5m2fnuz, "e5m2fnuz", 8, 5, 2, 16, FPK_SPECIAL_FNUZ, 57344, -15, -17, 0x04, 1, 0, 0x80},
    {&fpk_e3m2, "e3m2", 6, 3, 2, 3, FPK_SPECIAL_NONE, 28, -2, -4, 0x04, 1, 0, 0x20},
    {&fpk_e2m3, "e2m3", 6, 2, 3, 1, FPK_SPECIAL_NONE, 7.5, 0, -3, 0x08, 1, 0, 0x20},
    {&fpk_e2m1, "e2m1", 4, 2, 1, 1, FPK_SPECIAL_NONE, 6, 0, -1, 0x2, 1, 0, 0x8},
    {&fpk_e8m0, "e8m0", 8, 8, 0, 127, FPK_SPECIAL_E8M0, 0x1p127, -127, -127, 0x00, 0x00, 0, 0xff},
};
#define NDESIGN (sizeof design / sizeof design[0])

START_TEST(table_matches_design)
{
    size_t n = 0;
    while (fpk_formats[n])
        n++;
    ck_assert_uint_eq(n, NDESIGN);
    for (size_t i = 0; i < NDESIGN; i++) {
        const fpk_format *f = design[i].f;
        ck_assert_ptr_eq(fpk_formats[i], f);
        ck_assert_str_eq(f->name, design[i].name);
        ck_assert_int_eq(f->exp_bits, design[i].e);
        ck_assert_int_eq(f->man_bits, design[i].m);
        ck_assert_int_eq(f->bias, design[i].bias);
        ck_assert_int_eq(f->special, design[i].special);
        ck_assert_int_eq(f->width, design[i].width);
        ck_assert_int_eq(f->emin, design[i].min_normal_exp);
        ck_assert_uint_eq(f->inf, design[i].inf);
        ck_assert_uint_eq(f->nan, design[i].nan);

        mpfr_t x;
        mpfr_init2(x, 64);
        ck_assert(ref_decode(x, f, f->max_finite));
        ck_assert(mpfr_get_d(x, MPFR_RNDN) == design[i].max_finite);
        ck_assert(fpk_to_double(f, f->max_finite) == design[i].max_finite);
        ck_assert(ref_decode(x, f, design[i].min_normal));
        ck_assert(mpfr_cmp_si_2exp(x, 1, design[i].min_normal_exp) == 0);
        ck_assert_int_eq(fpk_classify(f, design[i].min_normal), FPK_CLASS_NORMAL);
        ck_assert(ref_decode(x, f, design[i].min_positive));
        ck_assert(mpfr_cmp_si_2exp(x, 1, design[i].min_positive_exp) == 0);
        ck_assert(!ref_decode(x, f, design[i].nan) || f->special == FPK_SPECIAL_NONE);
        mpfr_clear(x);
    }
    printf("check_format: %zu built-in formats match docs/DESIGN.md and OCP MX\n", NDESIGN);
}
END_TEST

START_TEST(lookup_names_and_aliases)
{
    size_t names = 0;
    for (const fpk_format *const *f = fpk_formats; *f; f++) {
        char buf[64];
        const char *p = (*f)->name;
        ck_assert_ptr_eq(fpk_format_lookup(p), *f);
        for (size_t i = 0; i <= strlen(p); i++)
            buf[i] = (char)(i % 2 ? p[i] - ('a' <= p[i] && p[i] <= 'z' ? 32 : 0) : p[i]);
        ck_assert_ptr_eq(fpk_format_lookup(buf), *f);
        names++;
        for (const char *a = (*f)->aliases; *a;) {
            size_t len = strcspn(a, ",");
            ck_assert_uint_lt(len, sizeof buf);
            for (size_t i = 0; i < len; i++)
                buf[i] = (char)(a[i] >= 'a' && a[i] <= 'z' ? a[i] - 32 : a[i]);
            buf[len] = '\0';
            ck_assert_msg(fpk_format_lookup(buf) == *f, "alias %s", buf);
            names++;
            a += len + (a[len] == ',');
        }
    }
    /* The names users type, as the issue lists them. */
    static const struct { const char *name; const fpk_format *f; } typed[] = {
        {"E4M3FN", &fpk_e4m3}, {"bfloat16", &fpk_bf16}, {"binary16", &fpk_fp16},
        {"half", &fpk_fp16}, {"f16", &fpk_fp16}, {"fp8e4m3", &fpk_e4m3},
        {"e4m3fn", &fpk_e4m3}, {"fp8e5m2", &fpk_e5m2}, {"float32", &fpk_fp32},
        {"Float64", &fpk_fp64}, {"TF32", &fpk_tf32}, {"e5m10", &fpk_fp16},
        {"e8m23", &fpk_fp32}, {"e8m7", &fpk_bf16}, {"e8m10", &fpk_tf32},
        {"e11m52", &fpk_fp64}, {"e5m2", &fpk_e5m2}, {"e4m3", &fpk_e4m3},
        {"e4m3fnuz", &fpk_e4m3fnuz}, {"float8_e4m3fnuz", &fpk_e4m3fnuz},
        {"fp8e4m3fnuz", &fpk_e4m3fnuz}, {"E5M2FNUZ", &fpk_e5m2fnuz},
        {"float8_e5m2fnuz", &fpk_e5m2fnuz}, {"fp6_e3m2", &fpk_e3m2},
        {"float6_e3m2fn", &fpk_e3m2}, {"e3m2fn", &fpk_e3m2}, {"fp6_e2m3", &fpk_e2m3},
        {"float6_e2m3fn", &fpk_e2m3}, {"e2m3fn", &fpk_e2m3}, {"fp4", &fpk_e2m1},
        {"fp4_e2m1", &fpk_e2m1}, {"float4_e2m1fn", &fpk_e2m1}, {"e2m1fn", &fpk_e2m1},
        {"e8m0fnu", &fpk_e8m0}, {"float8_e8m0fnu", &fpk_e8m0}, {"ue8m0", &fpk_e8m0},
        {"e4m3fn", &fpk_e4m3}, {"e3m2", &fpk_e3m2}, {"e2m1", &fpk_e2m1}, {"e8m0", &fpk_e8m0},
    };
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
        ck_assert_msg(fpk_format_lookup(typed[i].name) == typed[i].f, "%s", typed[i].name);
    printf("check_format: %zu names and aliases, %zu typed names found\n", names,
           sizeof typed / sizeof typed[0]);
}
END_TEST

/* The built-in format that NAME (case-insensitive) names or aliases, from
 * the table's own strings; NULL if none. */
static const fpk_format *builtin_named(const char *name)
{
    for (const fpk_format *const *f = fpk_formats; *f; f++) {
        if (strcasecmp((*f)->name, name) == 0)
            return *f;
        for (const char *a = (*f)->aliases; *a;) {
            size_t len = strcspn(a, ",");
            if (len == strlen(name) && strncasecmp(a, name, len) == 0)
                return *f;
            a += len + (a[len] == ',');
        }
    }
    return NULL;
}

START_TEST(lookup_exmy_family)
{
    static const char *const suffixes[] = {"", "fn", "FNUZ"};
    size_t n = 0, builtins = 0;
    for (int x = 1; x <= 11; x++)
        for (int y = 0; y <= 52; y++)
            for (int k = 0; k < 3; k++) {
                char name[32];
                snprintf(name, sizeof name, "E%dm%d%s", x, y, suffixes[k]);
                const fpk_format *f = fpk_format_lookup(name);
                ck_assert_msg(f != NULL, "%s", name);
                const fpk_format *named = builtin_named(name);
                n++;
                if (named) { /* a built-in name or alias wins: "e2m1" is OCP FP4 */
                    ck_assert_msg(f == named, "%s", name);
                    builtins++;
                    continue;
                }
                ck_assert_int_eq(f->exp_bits, x);
                ck_assert_int_eq(f->man_bits, y);
                ck_assert_int_eq(f->width, 1 + x + y);
                ck_assert_int_eq(f->bias, (1 << (x - 1)) - (k != 2));
                ck_assert_int_eq(f->special, k == 2   ? FPK_SPECIAL_FNUZ
                                             : k == 1 || y == 0 ? FPK_SPECIAL_FN
                                                               : FPK_SPECIAL_IEEE);
                bool builtin = false;
                for (const fpk_format *const *b = fpk_formats; *b; b++)
                    builtin |= f == *b;
                if (!builtin)
                    ck_assert_msg(strcasecmp(f->name, name) == 0, "%s named %s", name, f->name);
                /* The derived encodings are what they claim. */
                ck_assert_int_eq(fpk_classify(f, f->nan), FPK_CLASS_QNAN);
                ck_assert(fpk_signbit(f, f->nan) == (k == 2));
                if (f->inf)
                    ck_assert_int_eq(fpk_classify(f, f->inf), FPK_CLASS_INF);
                fpk_class mk = fpk_classify(f, f->max_finite);
                ck_assert(mk == FPK_CLASS_NORMAL || mk == FPK_CLASS_SUBNORMAL ||
                          (f->max_finite == 0 && mk == FPK_CLASS_ZERO));
                ck_assert(fpk_classify(f, f->max_finite + 1) == FPK_CLASS_INF ||
                          fpk_is_nan(f, f->max_finite + 1));
            }
    printf("check_format: %zu eXmY, eXmYfn and eXmYfnuz names (%zu of them built-in names)\n",
           n, builtins);
}
END_TEST

START_TEST(lookup_rejects)
{
    static const char *bad[] = {
        "", "fp", "fp17", "e0m1", "e12m1", "e4m53", "e1m100", "e01m2", "e4m03",
        "e4m", "em3", "e4m3x", " fp16", "fp16 ", "e-1m2", "e4m-1", "e4 m3",
        "fp16\n", "half,", ",", "e4m3fn,fp8e4m3", "e99999999999999999999m1",
        "\xff\xfe", "bfloat16z", "e4m3f", "e4m3fnu", "e4m3fnuzz", "e4m3fnfnuz", "e4m3 fn",
        "e5m2nuz", "e3m2uz", "fnuz", "e4fnuz", "e4m03fn", "e12m1fn", "e4m53fnuz",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(fpk_format_lookup(bad[i]) == NULL, "'%s' accepted", bad[i]);
    ck_assert_ptr_null(fpk_format_lookup(NULL));

    /* No input crashes it: random byte strings, and a long one. */
    tu_rng r;
    tu_rng_init(&r, tu_seed("check_format lookup"));
    char buf[16];
    size_t found = 0;
    for (int i = 0; i < 200000; i++) {
        size_t len = tu_rng_below(&r, sizeof buf);
        for (size_t j = 0; j < len; j++) {
            static const char alpha[] = "emEM0123456789fpbt,\x80";
            buf[j] = alpha[tu_rng_below(&r, sizeof alpha - 1)];
        }
        buf[len] = '\0';
        found += fpk_format_lookup(buf) != NULL;
    }
    static char huge[1 << 20];
    memset(huge, 'e', sizeof huge - 1);
    ck_assert_ptr_null(fpk_format_lookup(huge));
    printf("check_format: 200000 random names looked up (%zu valid)\n", found);
}
END_TEST

/* Formats small enough to enumerate: the built-ins of 16 bits or fewer and
 * a few eXmY of each kind. */
static const char *const small_formats[] = {
    "fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1", "e8m0",
    "e3m4", "e2m5", "e6m1", "e5m0", "e3m3fn", "e2m0fn", "e3m3fnuz", "e2m0fnuz", "e1m2fnuz"};
#define NSMALL (sizeof small_formats / sizeof small_formats[0])

START_TEST(classify_and_to_double)
{
    const fpk_format *f = fpk_format_lookup(small_formats[_i]);
    ck_assert_ptr_nonnull(f);
    mpfr_t x, minnorm;
    mpfr_inits2(64, x, minnorm, (mpfr_ptr)0);
    mpfr_set_si_2exp(minnorm, 1, f->emin, MPFR_RNDN);
    uint64_t n = (uint64_t)1 << f->width;
    for (fpk_bits a = 0; a < n; a++) {
        fpk_class k = fpk_classify(f, a);
        double d = fpk_to_double(f, a);
        if (!ref_decode(x, f, a)) {
            ck_assert_msg(k == FPK_CLASS_QNAN || k == FPK_CLASS_SNAN, "%s %llx", f->name, (unsigned long long)a);
            ck_assert(isnan(d));
            continue;
        }
        fpk_class want = mpfr_zero_p(x) ? FPK_CLASS_ZERO
                         : mpfr_inf_p(x) ? FPK_CLASS_INF
                         : mpfr_cmpabs(x, minnorm) < 0 ? FPK_CLASS_SUBNORMAL
                                                       : FPK_CLASS_NORMAL;
        ck_assert_msg(k == want, "%s %llx: class %d, want %d", f->name, (unsigned long long)a, k, want);
        ck_assert(fpk_signbit(f, a) == (mpfr_signbit(x) != 0));
        /* fpk_to_double is exact: compare the doubles' bits. */
        double w = mpfr_get_d(x, MPFR_RNDN);
        ck_assert_msg(memcmp(&d, &w, sizeof d) == 0, "%s %llx: %a, want %a", f->name, (unsigned long long)a, d, w);
        fpk_ctx c = fpk_ctx_default();
        ck_assert_uint_eq(fpk_from_double(f, d, &c), a);
        ck_assert_uint_eq(c.flags, 0);
    }
    mpfr_clears(x, minnorm, (mpfr_ptr)0);
    printf("check_format: %s: %llu encodings classified and read exactly\n", f->name, (unsigned long long)n);
}
END_TEST

/* Sorts encodings by value: the reference order for nextUp and nextDown. */
static const fpk_format *sort_fmt;
static int by_value(const void *pa, const void *pb)
{
    fpk_bits a = *(const fpk_bits *)pa, b = *(const fpk_bits *)pb;
    mpfr_t x, y;
    mpfr_inits2(64, x, y, (mpfr_ptr)0);
    ref_decode(x, sort_fmt, a);
    ref_decode(y, sort_fmt, b);
    int r = mpfr_cmp(x, y);
    if (r == 0) /* -0 before +0 */
        r = (mpfr_signbit(y) != 0) - (mpfr_signbit(x) != 0);
    mpfr_clears(x, y, (mpfr_ptr)0);
    return r;
}

START_TEST(next_up_and_down)
{
    const fpk_format *f = fpk_format_lookup(small_formats[_i]);
    uint64_t n = (uint64_t)1 << f->width;
    fpk_bits *v = malloc(n * sizeof *v);
    size_t count = 0;
    mpfr_t x;
    mpfr_init2(x, 64);
    for (fpk_bits a = 0; a < n; a++)
        if (ref_decode(x, f, a))
            v[count++] = a;
    mpfr_clear(x);
    sort_fmt = f;
    qsort(v, count, sizeof *v, by_value);

    /* v is sorted with -0 (where there is one) just before +0.  nextUp of
     * the i-th is the next entry of greater value; a zero result is -0 (IEEE
     * 754-2019 §5.3.1 gives nextUp(-min subnormal) = -0; +0 in FNUZ, which
     * has no -0), and +0 for nextDown.  Past either end: infinity stays;
     * FPK_SPECIAL_NONE, whose infinite results are +-max finite, stays at
     * +-max finite; other formats give the NaN. */
    bool has_neg_zero = f->special != FPK_SPECIAL_FNUZ && f->special != FPK_SPECIAL_E8M0;
    mpfr_t xi, xj;
    mpfr_inits2(64, xi, xj, (mpfr_ptr)0);
    size_t checked = 0;
    for (size_t i = 0; i < count; i++) {
        fpk_bits a = v[i];
        ref_decode(xi, f, a);
        size_t j = i + 1;
        while (j < count && (ref_decode(xj, f, v[j]), mpfr_equal_p(xi, xj)))
            j++;
        fpk_ctx c = fpk_ctx_default();
        fpk_bits up = fpk_next_up(f, a, &c);
        fpk_bits want_up;
        if (j < count)
            want_up = mpfr_zero_p(xj) ? (has_neg_zero ? f->sign_mask : 0) : v[j];
        else
            want_up = mpfr_inf_p(xi) || f->special == FPK_SPECIAL_NONE ? a : f->nan;
        ck_assert_msg(up == want_up, "%s nextUp(%llx) = %llx, want %llx", f->name,
                      (unsigned long long)a, (unsigned long long)up, (unsigned long long)want_up);
        fpk_bits down = fpk_next_down(f, a, &c);
        fpk_bits want_down;
        j = i;
        while (j > 0 && (ref_decode(xj, f, v[j - 1]), mpfr_equal_p(xi, xj)))
            j--;
        if (j > 0)
            want_down = mpfr_zero_p(xj) ? 0 : v[j - 1];
        else
            want_down = mpfr_inf_p(xi) || f->special == FPK_SPECIAL_NONE ? a : f->nan;
        ck_assert_msg(down == want_down, "%s nextDown(%llx) = %llx, want %llx", f->name,
                      (unsigned long long)a, (unsigned long long)down, (unsigned long long)want_down);
        ck_assert_uint_eq(c.flags, 0);
        checked += 2;
    }
    mpfr_clears(xi, xj, (mpfr_ptr)0);
    free(v);

    /* NaNs: canonical result, invalid only for signaling ones. */
    for (fpk_bits a = 0; a < n; a++) {
        fpk_class k = fpk_classify(f, a);
        if (k != FPK_CLASS_QNAN && k != FPK_CLASS_SNAN)
            continue;
        fpk_ctx c = fpk_ctx_default();
        ck_assert_uint_eq(fpk_next_up(f, a, &c), f->nan);
        ck_assert_uint_eq(fpk_next_down(f, a, &c), f->nan);
        ck_assert_uint_eq(c.flags, k == FPK_CLASS_SNAN ? FPK_INVALID : 0);
        checked += 2;
    }
    printf("check_format: %s: %zu nextUp/nextDown cases\n", f->name, checked);
}
END_TEST

/* The library's operations specialised for a built-in format fold a copy
 * of its descriptor made from the initialiser in core-impl.h: every field
 * of such a copy must equal the public descriptor's. */
START_TEST(specialised_copies_match)
{
    static const struct {
        const fpk_format *pub;
        fpk_format copy;
    } pairs[] = {
        {&fpk_fp64, FPKI_FORMAT_FP64}, {&fpk_fp32, FPKI_FORMAT_FP32},
        {&fpk_tf32, FPKI_FORMAT_TF32}, {&fpk_fp16, FPKI_FORMAT_FP16},
        {&fpk_bf16, FPKI_FORMAT_BF16}, {&fpk_e4m3, FPKI_FORMAT_E4M3},
        {&fpk_e5m2, FPKI_FORMAT_E5M2}, {&fpk_e4m3fnuz, FPKI_FORMAT_E4M3FNUZ},
        {&fpk_e5m2fnuz, FPKI_FORMAT_E5M2FNUZ}, {&fpk_e3m2, FPKI_FORMAT_E3M2},
        {&fpk_e2m3, FPKI_FORMAT_E2M3}, {&fpk_e2m1, FPKI_FORMAT_E2M1},
        {&fpk_e8m0, FPKI_FORMAT_E8M0},
    };
    size_t n = sizeof pairs / sizeof pairs[0];
    for (size_t i = 0; i < n; i++) {
        const fpk_format *p = pairs[i].pub, *k = &pairs[i].copy;
        ck_assert_str_eq(k->name, p->name);
        ck_assert_str_eq(k->aliases, p->aliases);
        ck_assert_int_eq(k->exp_bits, p->exp_bits);
        ck_assert_int_eq(k->man_bits, p->man_bits);
        ck_assert_int_eq(k->bias, p->bias);
        ck_assert_int_eq(k->special, p->special);
        ck_assert_int_eq(k->width, p->width);
        ck_assert_int_eq(k->emin, p->emin);
        ck_assert_int_eq(k->emax, p->emax);
        ck_assert_uint_eq(k->sign_mask, p->sign_mask);
        ck_assert_uint_eq(k->exp_mask, p->exp_mask);
        ck_assert_uint_eq(k->man_mask, p->man_mask);
        ck_assert_uint_eq(k->max_finite, p->max_finite);
        ck_assert_uint_eq(k->inf, p->inf);
        ck_assert_uint_eq(k->nan, p->nan);
    }
    printf("check_format: %zu specialised descriptor copies match the public ones\n", n);
}
END_TEST

START_TEST(ctx_default)
{
    fpk_ctx c = fpk_ctx_default();
    ck_assert_int_eq(c.round, FPK_RNE);
    ck_assert_uint_eq(c.flags, 0);
    ck_assert(!c.tiny_before && !c.ftz && !c.daz && !c.saturate);
    ck_assert_int_eq(c.sr_bits, 32);
    ck_assert_uint_eq(c.sr_counter, 0);
    ck_assert_ptr_nonnull(strstr(fpk_version(), "fpkit"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("format");
    TCase *t = tcase_create("format");
    tcase_set_timeout(t, 0);
    tcase_add_test(t, table_matches_design);
    tcase_add_test(t, lookup_names_and_aliases);
    tcase_add_test(t, lookup_exmy_family);
    tcase_add_test(t, lookup_rejects);
    tcase_add_loop_test(t, classify_and_to_double, 0, NSMALL);
    tcase_add_loop_test(t, next_up_and_down, 0, NSMALL);
    tcase_add_test(t, specialised_copies_match);
    tcase_add_test(t, ctx_default);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
