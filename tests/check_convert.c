/* fpk_convert and fpk_from_double against the MPFR reference, bits and
 * flags: every encoding of the 8- and 16-bit formats (and tf32) into every
 * format, in every deterministic mode and option variant; random and
 * edge-case fp32 and fp64 values; stochastic rounding checked against the
 * two neighbours and statistically; docs/DESIGN.md "Thresholds" and the OCP MX
 * values by hand.
 *
 * The formats of the rarer kinds (FNUZ, NONE, E8M0) keep the default run
 * short: as targets of the 16-bit sweeps they take the option variants in
 * turn over the encodings (every mode still sees every encoding), of the
 * tf32 sweep only under FPK_EXHAUSTIVE, and of the random values a
 * twentieth, as the eXmY extras do. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SUITE "check_convert"

static uint64_t seed;

/* Extra eXmY formats (fpk_format_lookup) used as sources and targets. */
static const char *const extra_names[] = {"e3m4", "e2m5", "e6m1", "e5m0", "e3m3fnuz"};
#define EXTRA_COUNT (sizeof extra_names / sizeof extra_names[0])
#define MAX_FORMATS 24

/* A built-in format of the original kinds: the full weight of the sweeps. */
static bool classic(const fpk_format *f)
{
    bool builtin = false;
    for (const fpk_format *const *b = fpk_formats; *b != NULL; b++)
        builtin |= *b == f;
    return builtin && (f->special == FPK_SPECIAL_IEEE || f->special == FPK_SPECIAL_FN);
}

/* Of the original kinds (IEEE, FN), built in or not. */
static bool classic_kind(const fpk_format *f)
{
    return f->special == FPK_SPECIAL_IEEE || f->special == FPK_SPECIAL_FN;
}

/* The built-in formats (walking fpk_formats[]), then the extras. */
static size_t all_formats(const fpk_format **out)
{
    size_t n = 0;
    for (const fpk_format *const *f = fpk_formats; *f != NULL; f++) {
        ck_assert_uint_lt(n, MAX_FORMATS - EXTRA_COUNT);
        out[n++] = *f;
    }
    for (size_t i = 0; i < EXTRA_COUNT; i++) {
        const fpk_format *f = fpk_format_lookup(extra_names[i]);
        ck_assert_msg(f != NULL, "fpk_format_lookup(\"%s\") failed", extra_names[i]);
        out[n++] = f;
    }
    return n;
}

/* Converts A from FROM into TO under C with the library and the reference,
 * records the comparison and returns the reference's result. */
static ref_result check_one(tu_report *rep, const fpk_format *to, const fpk_format *from,
                            fpk_bits a, const fpk_ctx *c, const char *variant)
{
    ref_result want = ref_convert(to, from, a, c);
    fpk_ctx lc = *c;
    fpk_bits got = fpk_convert(to, from, a, &lc);
    tu_check(rep, to, want, got, lc.flags, "%s->%s %s %s a=%0*" PRIx64, from->name,
             to->name, tu_mode_name(c->round), variant, tu_hex_digits(from), a);
    return want;
}

/* Every encoding of FROM into every format of TO[0..NTO-1], every mode,
 * under variant V. */
static void every_encoding(tu_report *rep, const fpk_format *from, const fpk_format *const *to,
                           size_t nto, const tu_variant *v)
{
    uint64_t count = UINT64_C(1) << from->width;
    for (size_t t = 0; t < nto; t++)
        for (int m = 0; m < TU_MODE_COUNT; m++) {
            fpk_ctx c = tu_ctx(tu_modes[m], v);
            for (uint64_t a = 0; a < count; a++)
                check_one(rep, to[t], from, a, &c, v->name);
        }
    tu_report_line(rep, "every %s %s (%zu targets x %d modes)", from->name, v->name, nto,
                   TU_MODE_COUNT);
}

/* Every encoding of FROM into TO in every mode, the option variants in
 * turn over the encodings. */
static void every_encoding_variants_in_turn(tu_report *rep, const fpk_format *from,
                                            const fpk_format *to)
{
    uint64_t count = UINT64_C(1) << from->width;
    for (int m = 0; m < TU_MODE_COUNT; m++)
        for (uint64_t a = 0; a < count; a++) {
            const tu_variant *v = &tu_variants[a % TU_VARIANT_COUNT];
            fpk_ctx c = tu_ctx(tu_modes[m], v);
            check_one(rep, to, from, a, &c, v->name);
        }
    tu_report_line(rep, "every %s -> %s, every mode, variants in turn", from->name, to->name);
}

START_TEST(test_exhaustive_small)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    const fpk_format *from[MAX_FORMATS], *to[MAX_FORMATS], *light[MAX_FORMATS];
    size_t n = all_formats(from), nto = 0, nlight = 0;
    for (size_t i = 0; i < n; i++) {
        if (tu_exhaustive() || classic_kind(from[i]))
            to[nto++] = from[i];
        else
            light[nlight++] = from[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (from[i]->width > 16)
            continue;
        bool wide = from[i]->width > 8;
        for (int v = 0; v < TU_VARIANT_COUNT; v++)
            every_encoding(&rep, from[i], wide ? to : from, wide ? nto : n, &tu_variants[v]);
        for (size_t t = 0; wide && t < nlight; t++)
            every_encoding_variants_in_turn(&rep, from[i], light[t]);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* tf32's 2^19 encodings: plain always, the option variants when exhaustive;
 * the targets of the added kinds only when exhaustive. */
START_TEST(test_exhaustive_tf32)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    const fpk_format *all[MAX_FORMATS], *to[MAX_FORMATS];
    size_t n = all_formats(all), nto = 0;
    for (size_t i = 0; i < n; i++)
        if (tu_exhaustive() || classic_kind(all[i]))
            to[nto++] = all[i];
    int variants = tu_exhaustive() ? TU_VARIANT_COUNT : 1;
    for (int v = 0; v < variants; v++)
        every_encoding(&rep, &fpk_tf32, to, nto, &tu_variants[v]);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Random and edge-case values of FROM (fp32 or fp64) into every format,
 * N per target and mode in the plain variant, N/10 in the others; for fp64
 * fpk_from_double is checked on the same values. */
static void random_values(const fpk_format *from, uint64_t n)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed ^ (uint64_t)from->width);
    const fpk_format *to[MAX_FORMATS];
    size_t nto = all_formats(to);
    for (int v = 0; v < TU_VARIANT_COUNT; v++) {
        const tu_variant *var = &tu_variants[v];
        for (size_t t = 0; t < nto; t++) {
            /* the built-in targets of the original kinds get the full
             * count, the others a twentieth */
            uint64_t count = (v == 0 ? n : n / 10) / (classic(to[t]) ? 1 : 20);
            for (int m = 0; m < TU_MODE_COUNT; m++) {
                fpk_ctx c = tu_ctx(tu_modes[m], var);
                for (uint64_t i = 0; i < count; i++) {
                    fpk_bits a = tu_gen(from, to[t], &rng);
                    ref_result want = check_one(&rep, to[t], from, a, &c, var->name);
                    if (from == &fpk_fp64) {
                        double x;
                        memcpy(&x, &a, sizeof x);
                        fpk_ctx lc = c;
                        fpk_bits got = fpk_from_double(to[t], x, &lc);
                        tu_check(&rep, to[t], want, got, lc.flags,
                                 "fpk_from_double(%s, %a = 0x%016" PRIx64 ") %s %s",
                                 to[t]->name, x, a, tu_mode_name(c.round), var->name);
                    }
                }
            }
        }
        tu_report_line(&rep, "random %s %s (%zu targets x %d modes)", from->name, var->name,
                       nto, TU_MODE_COUNT);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}

START_TEST(test_random_fp32)
{
    random_values(&fpk_fp32, tu_exhaustive() ? 4000000 : 1000000);
}
END_TEST

START_TEST(test_random_fp64)
{
    random_values(&fpk_fp64, tu_exhaustive() ? 4000000 : 1000000);
}
END_TEST

/* The two named cases, on their own. */
START_TEST(test_fp16_to_e4m3_rne)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    fpk_ctx c = tu_ctx(FPK_RNE, &tu_variants[0]);
    for (fpk_bits a = 0; a < 0x10000; a++)
        check_one(&rep, &fpk_e4m3, &fpk_fp16, a, &c, "plain");
    tu_report_line(&rep, "every fp16 -> e4m3 rne");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

START_TEST(test_bf16_to_fp16_rtz_ftz)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    fpk_ctx c = tu_ctx(FPK_RTZ, &tu_variants[1]);
    ck_assert(c.ftz);
    for (fpk_bits a = 0; a < 0x10000; a++)
        check_one(&rep, &fpk_fp16, &fpk_bf16, a, &c, "ftz");
    tu_report_line(&rep, "every bf16 -> fp16 rtz ftz");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* docs/DESIGN.md "Thresholds" and "Corner cases", expected bits written by hand;
 * the library and the reference must both give them. */
enum { NONE = 0, IV = FPK_INVALID, OF = FPK_OVERFLOW | FPK_INEXACT,
       UF = FPK_UNDERFLOW | FPK_INEXACT, IX = FPK_INEXACT };
enum { PLAIN = 0, FTZ = 1, DAZ = 2, SAT = 4, BEFORE = 8 };

typedef struct hand_case {
    const fpk_format *to;
    fpk_round mode;
    int opts;
    double x;
    fpk_bits z;
    unsigned flags;
} hand_case;

START_TEST(test_thresholds)
{
    const fpk_format *h = &fpk_fp16, *e4 = &fpk_e4m3, *e5 = &fpk_e5m2, *bf = &fpk_bf16;
    const fpk_format *n4 = &fpk_e4m3fnuz, *n5 = &fpk_e5m2fnuz, *m6a = &fpk_e3m2,
                     *m6b = &fpk_e2m3, *m4 = &fpk_e2m1, *s8 = &fpk_e8m0;
    const fpk_format *e34 = fpk_format_lookup("e3m4");
    const hand_case cases[] = {
        /* fp16: |x| <= 2^-25 to zero, >= 65520 to infinity */
        {h, FPK_RNE, PLAIN, 0x1p-25, 0x0000, UF},
        {h, FPK_RNE, PLAIN, -0x1p-25, 0x8000, UF},
        {h, FPK_RNE, PLAIN, 0x1.0000000000001p-25, 0x0001, UF},
        {h, FPK_RUP, PLAIN, 0x1p-25, 0x0001, UF},
        {h, FPK_RNE, PLAIN, 0x1p-24, 0x0001, NONE},
        {h, FPK_RNE, PLAIN, 65520, 0x7c00, OF},
        {h, FPK_RNE, PLAIN, -65520, 0xfc00, OF},
        {h, FPK_RNE, PLAIN, 0x1.ffdffffffffffp15, 0x7bff, IX},
        {h, FPK_RNE, PLAIN, 65504, 0x7bff, NONE},
        {h, FPK_RNA, PLAIN, 65520, 0x7c00, OF},
        {h, FPK_RTZ, PLAIN, 65520, 0x7bff, IX}, /* truncates to 65504: no overflow */
        {h, FPK_RTZ, PLAIN, 65536, 0x7bff, OF},
        {h, FPK_RUP, PLAIN, 65505, 0x7c00, OF},
        {h, FPK_RUP, PLAIN, -65536, 0xfbff, OF},
        {h, FPK_RDN, PLAIN, 65536, 0x7bff, OF},
        {h, FPK_RDN, PLAIN, -65505, 0xfc00, OF},
        {h, FPK_ROD, PLAIN, 65520, 0x7bff, IX},
        {h, FPK_ROD, PLAIN, 65536, 0x7bff, OF},
        {h, FPK_RNE, SAT, 65520, 0x7bff, OF},
        {h, FPK_RNE, SAT, -INFINITY, 0xfbff, NONE},
        {h, FPK_RNE, PLAIN, INFINITY, 0x7c00, NONE},
        {h, FPK_RNE, PLAIN, -NAN, 0x7e00, NONE},
        /* fp16 tininess: 2^-14 - 2^-26 rounds to min normal at p = 11 with
         * an unbounded exponent (a tie to even), so it is not tiny after
         * rounding; ftz keeps it; under RTZ it stays subnormal. */
        {h, FPK_RNE, PLAIN, 0x1.ffep-15, 0x0400, IX},
        {h, FPK_RNE, BEFORE, 0x1.ffep-15, 0x0400, UF},
        {h, FPK_RNE, FTZ, 0x1.ffep-15, 0x0400, IX},
        {h, FPK_RTZ, PLAIN, 0x1.ffep-15, 0x03ff, UF},
        {h, FPK_RTZ, FTZ, 0x1.ffep-15, 0x0000, UF},
        {h, FPK_RTZ, FTZ, -0x1.ffep-15, 0x8000, UF},
        /* 2^-14 - 2^-25 is exact at p = 11: tiny either way */
        {h, FPK_RNE, PLAIN, 0x1.ffcp-15, 0x0400, UF},
        {h, FPK_RNE, FTZ, 0x1p-15, 0x0000, UF}, /* exact subnormal, flushed */
        {h, FPK_RNE, PLAIN, 0x1p-15, 0x0200, NONE},
        /* daz: an fp64 subnormal reads as zero */
        {h, FPK_RUP, DAZ, 0x1p-1070, 0x0000, NONE},
        {h, FPK_RDN, DAZ, -0x1p-1070, 0x8000, NONE},
        {h, FPK_RUP, PLAIN, 0x1p-1070, 0x0001, UF},
        /* e4m3: |x| <= 2^-10 to zero; 464 ties to 448, 465 overflows to NaN */
        {e4, FPK_RNE, PLAIN, 0x1p-10, 0x00, UF},
        {e4, FPK_RNE, PLAIN, 0x1.0000000000001p-10, 0x01, UF},
        {e4, FPK_RNE, PLAIN, 464, 0x7e, IX},
        {e4, FPK_RNE, PLAIN, -464, 0xfe, IX},
        {e4, FPK_RNE, PLAIN, 465, 0x7f, OF},
        {e4, FPK_RNE, PLAIN, -465, 0x7f, OF},
        {e4, FPK_RNE, SAT, 465, 0x7e, OF},
        {e4, FPK_RNE, SAT, -465, 0xfe, OF},
        {e4, FPK_RNE, SAT, 464, 0x7e, IX},
        {e4, FPK_RNA, PLAIN, 464, 0x7f, OF},
        {e4, FPK_RNA, PLAIN, 463.99, 0x7e, IX},
        {e4, FPK_RUP, PLAIN, 448.5, 0x7f, OF},
        {e4, FPK_RUP, PLAIN, -448.5, 0xfe, IX},
        {e4, FPK_RDN, PLAIN, -448.5, 0x7f, OF},
        {e4, FPK_RTZ, PLAIN, 1000, 0x7e, OF},
        {e4, FPK_RTZ, PLAIN, 479, 0x7e, IX},
        {e4, FPK_ROD, PLAIN, 450, 0x7e, OF},
        {e4, FPK_ROD, PLAIN, 479, 0x7e, OF},
        {e4, FPK_ROD, PLAIN, 480, 0x7e, OF},
        {e4, FPK_ROD, PLAIN, 448, 0x7e, NONE},
        {e4, FPK_RNE, PLAIN, INFINITY, 0x7f, IV},
        {e4, FPK_RNE, SAT, -INFINITY, 0xfe, IV},
        {e4, FPK_RNE, PLAIN, NAN, 0x7f, NONE},
        /* e4m3 tininess: 2^-6 - 2^-11 rounds to min normal either way */
        {e4, FPK_RNE, PLAIN, 0x1.fp-7, 0x08, IX},
        {e4, FPK_RNE, BEFORE, 0x1.fp-7, 0x08, UF},
        {e4, FPK_RNE, PLAIN, 0x1.ep-7, 0x08, UF}, /* exact at p = 4: tiny */
        /* e5m2: |x| <= 2^-17 to zero, >= 61440 to infinity */
        {e5, FPK_RNE, PLAIN, 0x1p-17, 0x00, UF},
        {e5, FPK_RNE, PLAIN, 0x1.0000000000001p-17, 0x01, UF},
        {e5, FPK_RNE, PLAIN, 61440, 0x7c, OF},
        {e5, FPK_RNE, PLAIN, 61439, 0x7b, IX},
        {e5, FPK_RNE, PLAIN, 57344, 0x7b, NONE},
        {e5, FPK_RNE, SAT, 61440, 0x7b, OF},
        /* bf16: |x| <= 2^-134 to zero */
        {bf, FPK_RNE, PLAIN, 0x1p-134, 0x0000, UF},
        {bf, FPK_RNE, PLAIN, 0x1.0000000000001p-134, 0x0001, UF},
        {bf, FPK_RNE, PLAIN, 0x1p-133, 0x0001, NONE},
        {bf, FPK_RNE, PLAIN, 0x1.ffp127, 0x7f80, OF},
        /* OCP MX v1.0 §5.3.3: E2M1 holds 0, 0.5, 1, 1.5, 2, 3, 4, 6 and
         * their negatives; E2M3's largest value is 7.5, E3M2's 28.  No
         * infinity, no NaN: overflow saturates with the overflow flag,
         * infinity gives max with invalid, NaN the sign bit alone with
         * invalid (ml_dtypes' encoding of NaN). */
        {m4, FPK_RNE, PLAIN, 0, 0x0, NONE},
        {m4, FPK_RNE, PLAIN, 0.5, 0x1, NONE},
        {m4, FPK_RNE, PLAIN, 1, 0x2, NONE},
        {m4, FPK_RNE, PLAIN, 1.5, 0x3, NONE},
        {m4, FPK_RNE, PLAIN, 2, 0x4, NONE},
        {m4, FPK_RNE, PLAIN, 3, 0x5, NONE},
        {m4, FPK_RNE, PLAIN, 4, 0x6, NONE},
        {m4, FPK_RNE, PLAIN, 6, 0x7, NONE},
        {m4, FPK_RNE, PLAIN, -6, 0xf, NONE},
        {m4, FPK_RNE, PLAIN, -0.0, 0x8, NONE},
        {m4, FPK_RNE, PLAIN, 0.25, 0x0, UF},  /* a tie, to even: 0 */
        {m4, FPK_RNE, PLAIN, 0.75, 0x2, UF},  /* a tie, to even: 1 */
        {m4, FPK_RNE, PLAIN, 5, 0x6, IX},     /* a tie, to even: 4 */
        {m4, FPK_RNE, PLAIN, 6.5, 0x7, IX},
        {m4, FPK_RNE, PLAIN, 7, 0x7, OF},     /* a tie, to 8: saturates */
        {m4, FPK_RNE, PLAIN, 100, 0x7, OF},
        {m4, FPK_RNE, PLAIN, -100, 0xf, OF},
        {m4, FPK_RTZ, PLAIN, 7.9, 0x7, IX},
        {m4, FPK_RTZ, PLAIN, 8, 0x7, OF},
        {m4, FPK_RUP, PLAIN, -100, 0xf, OF},
        {m4, FPK_RUP, PLAIN, 6.5, 0x7, OF},
        {m4, FPK_RNE, PLAIN, INFINITY, 0x7, IV},
        {m4, FPK_RNE, PLAIN, -INFINITY, 0xf, IV},
        {m4, FPK_RNE, PLAIN, NAN, 0x8, IV},
        {m6b, FPK_RNE, PLAIN, 7.5, 0x1f, NONE},
        {m6b, FPK_RNE, PLAIN, 7.75, 0x1f, OF},
        {m6b, FPK_RNE, PLAIN, 0.125, 0x01, NONE},
        {m6b, FPK_RNE, PLAIN, -1, 0x28, NONE},
        {m6a, FPK_RNE, PLAIN, 28, 0x1f, NONE},
        {m6a, FPK_RNE, PLAIN, 29, 0x1f, IX},
        {m6a, FPK_RNE, PLAIN, 30, 0x1f, OF},
        {m6a, FPK_RNE, PLAIN, 0.0625, 0x01, NONE},
        {m6a, FPK_RNE, PLAIN, -28, 0x3f, NONE},
        /* FNUZ: bias 8 and 16, no -0, 0x80 the NaN */
        {n4, FPK_RNE, PLAIN, 240, 0x7f, NONE},
        {n4, FPK_RNE, PLAIN, 247, 0x7f, IX},
        {n4, FPK_RNE, PLAIN, 248, 0x80, OF},
        {n4, FPK_RNE, SAT, 248, 0x7f, OF},
        {n4, FPK_RNE, SAT, -1000, 0xff, OF},
        {n4, FPK_RNE, PLAIN, 1, 0x40, NONE},
        {n4, FPK_RNE, PLAIN, -0.0, 0x00, NONE},
        {n4, FPK_RNE, PLAIN, 0x1p-10, 0x01, NONE},
        {n4, FPK_RNE, PLAIN, -0x1p-11, 0x00, UF},
        {n4, FPK_RDN, PLAIN, -0x1p-11, 0x81, UF},
        {n4, FPK_RNE, FTZ, -0x1p-8, 0x00, UF},
        {n4, FPK_RNE, PLAIN, INFINITY, 0x80, IV},
        {n4, FPK_RNE, SAT, -INFINITY, 0xff, IV},
        {n4, FPK_RNE, PLAIN, NAN, 0x80, NONE},
        {n5, FPK_RNE, PLAIN, 57344, 0x7f, NONE},
        {n5, FPK_RNE, PLAIN, 61440, 0x80, OF},
        {n5, FPK_RNE, PLAIN, 0x1p-17, 0x01, NONE},
        {n5, FPK_RNE, PLAIN, 0x1p-15, 0x04, NONE},
        /* E8M0: 2^-127 .. 2^127, ties up, no zero, no sign */
        {s8, FPK_RNE, PLAIN, 1, 0x7f, NONE},
        {s8, FPK_RNE, PLAIN, 0x1p-127, 0x00, NONE},
        {s8, FPK_RNE, PLAIN, 0x1p127, 0xfe, NONE},
        {s8, FPK_RNE, PLAIN, 1.5, 0x80, IX},
        {s8, FPK_RNE, PLAIN, 1.4, 0x7f, IX},
        {s8, FPK_RNE, PLAIN, 3, 0x81, IX},
        {s8, FPK_RNE, PLAIN, 0.75, 0x7f, IX},
        {s8, FPK_RTZ, PLAIN, 1.9, 0x7f, IX},
        {s8, FPK_RUP, PLAIN, 1.1, 0x80, IX},
        {s8, FPK_RNE, PLAIN, 0, 0xff, IV},
        {s8, FPK_RNE, PLAIN, -0.0, 0xff, IV},
        {s8, FPK_RNE, PLAIN, -1, 0xff, IV},
        {s8, FPK_RNE, PLAIN, 0x1p-128, 0x00, UF},
        {s8, FPK_RNE, PLAIN, 0x1.8p-128, 0x00, IX}, /* rounds up to 2^-127 */
        {s8, FPK_RNE, BEFORE, 0x1.8p-128, 0x00, UF},
        {s8, FPK_RNE, PLAIN, 0x1.6p-128, 0x00, UF},
        {s8, FPK_RUP, PLAIN, 0x1p-200, 0x00, UF},
        {s8, FPK_RNE, PLAIN, 0x1.8p127, 0xff, OF},
        {s8, FPK_RNE, SAT, 0x1.8p127, 0xfe, OF},
        {s8, FPK_RTZ, PLAIN, 0x1.fp127, 0xfe, IX},
        {s8, FPK_RTZ, PLAIN, 0x1p128, 0xfe, OF},
        {s8, FPK_RNE, PLAIN, INFINITY, 0xff, IV},
        {s8, FPK_RNE, SAT, INFINITY, 0xfe, IV},
        {s8, FPK_RNE, SAT, -INFINITY, 0xff, IV},
        {s8, FPK_RNE, PLAIN, NAN, 0xff, NONE},
        /* e3m4, the IEEE-like eXmY (ml_dtypes' float8_e3m4): max 15.5 */
        {e34, FPK_RNE, PLAIN, 15.5, 0x6f, NONE},
        {e34, FPK_RNE, PLAIN, 15.75, 0x70, OF},
        {e34, FPK_RNE, PLAIN, 0x1p-6, 0x01, NONE},
    };
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const hand_case *k = &cases[i];
        fpk_ctx c = fpk_ctx_default();
        c.round = k->mode;
        c.ftz = k->opts & FTZ;
        c.daz = k->opts & DAZ;
        c.saturate = k->opts & SAT;
        c.tiny_before = k->opts & BEFORE;
        uint64_t a;
        memcpy(&a, &k->x, sizeof a);
        ref_result want = {k->z, k->flags};
        fpk_ctx lc = c;
        fpk_bits got = fpk_from_double(k->to, k->x, &lc);
        tu_check(&rep, k->to, want, got, lc.flags, "fpk_from_double(%s, %a) %s opts %d",
                 k->to->name, k->x, tu_mode_name(k->mode), k->opts);
        ref_result r = ref_convert(k->to, &fpk_fp64, a, &c);
        tu_check(&rep, k->to, want, r.bits, r.flags, "ref_convert(%s, %a) %s opts %d",
                 k->to->name, k->x, tu_mode_name(k->mode), k->opts);
    }
    /* Encodings as sources: signaling NaNs raise invalid, quiet ones nothing. */
    const struct {
        const fpk_format *to, *from;
        fpk_bits a, z;
        unsigned flags;
    } enc[] = {
        {&fpk_fp16, &fpk_fp32, 0x7f800001, 0x7e00, IV},
        {&fpk_fp16, &fpk_fp32, 0xffc00001, 0x7e00, NONE},
        {&fpk_fp32, &fpk_e5m2, 0xfd, 0x7fc00000, IV},
        {&fpk_fp32, &fpk_e5m2, 0x7e, 0x7fc00000, NONE},
        {&fpk_fp16, &fpk_e4m3, 0xff, 0x7e00, NONE},
        {&fpk_fp16, &fpk_e4m3, 0x7e, 0x5f00, NONE}, /* 448 */
        {&fpk_e4m3, &fpk_fp16, 0x3c01, 0x38, IX},   /* 1 + 2^-10 */
        {&fpk_tf32, &fpk_fp32, 0x7f7fffff, 0x3fc00, OF},
        {&fpk_bf16, &fpk_tf32, 0x3fbff, 0x7f80, OF},
        {&fpk_tf32, &fpk_fp64, 0x7ff0000000000000, 0x3fc00, NONE},
        {&fpk_fp32, &fpk_e8m0, 0x00, 0x00400000, NONE}, /* 2^-127 */
        {&fpk_fp32, &fpk_e8m0, 0xff, 0x7fc00000, NONE},
        {&fpk_fp16, &fpk_e4m3fnuz, 0x80, 0x7e00, NONE},
        {&fpk_e4m3fnuz, &fpk_fp16, 0x8000, 0x00, NONE},
        {&fpk_fp32, &fpk_e2m1, 0x8, 0x80000000, NONE},
        {&fpk_e2m1, &fpk_fp32, 0x7fc00000, 0x8, IV},
        {&fpk_e2m1, &fpk_fp32, 0xffc00001, 0x8, IV},
        {&fpk_e8m0, &fpk_fp32, 0x7f800001, 0xff, IV},
        {&fpk_e4m3fnuz, &fpk_e4m3, 0x7e, 0x80, OF}, /* 448 beyond 240: NaN */
        {&fpk_e4m3, &fpk_e4m3fnuz, 0x7f, 0x77, NONE}, /* 240 */
        {&fpk_e2m1, &fpk_e8m0, 0x81, 0x6, NONE},      /* 4 */
        {&fpk_e8m0, &fpk_e2m1, 0x5, 0x81, IX},        /* 3 ties up to 4 */
    };
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++) {
        fpk_ctx c = fpk_ctx_default();
        ref_result want = {enc[i].z, enc[i].flags};
        fpk_bits got = fpk_convert(enc[i].to, enc[i].from, enc[i].a, &c);
        tu_check(&rep, enc[i].to, want, got, c.flags, "fpk_convert %s->%s a=%" PRIx64,
                 enc[i].from->name, enc[i].to->name, enc[i].a);
        c = fpk_ctx_default();
        ref_result r = ref_convert(enc[i].to, enc[i].from, enc[i].a, &c);
        tu_check(&rep, enc[i].to, want, r.bits, r.flags, "ref_convert %s->%s a=%" PRIx64,
                 enc[i].from->name, enc[i].to->name, enc[i].a);
    }
    /* Flags are sticky: a conversion ORs its flags in and clears none. */
    fpk_ctx c = fpk_ctx_default();
    c.flags = FPK_DIVBYZERO;
    fpk_from_double(&fpk_fp16, 65520, &c);
    fpk_from_double(&fpk_fp16, 1, &c);
    if (c.flags != (FPK_DIVBYZERO | OF))
        tu_fail(&rep, "sticky flags: %s", tu_flags_name(c.flags).s);
    tu_report_line(&rep, "hand-written thresholds");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Stochastic rounding of A from FROM into TO under C.  A finite nonzero
 * source must give the neighbour predicted by fpk_ctx's rule,
 * r < floor(frac * 2^sr_bits) with r the top sr_bits bits of
 * fpk_sr_hash(seed, counter), with the flags of the directed mode that picks
 * it, and advance the counter by one; an exact value converts as under RNE
 * (beyond the largest finite value: to infinity); zeros, infinities and
 * NaNs convert as in any mode. */
static void sr_one(tu_report *rep, const fpk_format *to, const fpk_format *from, fpk_bits a,
                   const fpk_ctx *c, const char *variant)
{
    MPFR_DECL_INIT(x, 64);
    fpk_ctx lc = *c;
    fpk_bits got = fpk_convert(to, from, a, &lc);
    ref_result want;
    bool inexact = false;
    if (!ref_decode_ctx(x, from, a, c) || !mpfr_regular_p(x)) {
        fpk_ctx rc = *c;
        rc.round = FPK_RTZ; /* an exact result: every mode gives it */
        want = ref_convert(to, from, a, &rc);
    } else {
        ref_result lo, hi;
        double frac;
        inexact = ref_neighbours(to, x, c, &lo, &hi, &frac);
        want = lo;
        if (!inexact) {
            fpk_ctx rc = *c;
            rc.round = FPK_RNE;
            want = ref_convert(to, from, a, &rc);
        } else {
            uint64_t r = fpk_sr_hash(c->sr_seed, c->sr_counter) >> (64 - c->sr_bits);
            uint64_t threshold = (uint64_t)ldexp(frac, c->sr_bits); /* exact */
            if (r < threshold)
                want = hi;
        }
    }
    bool same = tu_check(rep, to, want, got, lc.flags,
                         "SR %s->%s %s a=%0*" PRIx64 " seed %" PRIx64 " counter %" PRIx64
                         " bits %d",
                         from->name, to->name, variant, tu_hex_digits(from), a, c->sr_seed,
                         c->sr_counter, c->sr_bits);
    if (same && mpfr_regular_p(x) && lc.sr_counter != c->sr_counter + 1)
        tu_fail(rep, "SR counter advanced by %" PRIu64 " (%s) %s->%s a=%0*" PRIx64,
                lc.sr_counter - c->sr_counter, inexact ? "inexact" : "exact", from->name,
                to->name, tu_hex_digits(from), a);
}

START_TEST(test_sr_neighbours)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 1);
    const fpk_format *sources[] = {&fpk_fp32, &fpk_fp64, &fpk_fp16};
    const fpk_format *to[MAX_FORMATS];
    size_t nto = all_formats(to);
    uint64_t n = tu_exhaustive() ? 200000 : 20000;
    for (int v = 0; v < TU_VARIANT_COUNT; v++) {
        const tu_variant *var = &tu_variants[v];
        for (size_t s = 0; s < sizeof sources / sizeof sources[0]; s++) {
            for (size_t t = 0; t < nto; t++)
                for (uint64_t i = 0; i < n; i++) {
                    fpk_bits a = tu_gen(sources[s], to[t], &rng);
                    fpk_ctx c = tu_ctx(FPK_SR, var);
                    c.sr_seed = tu_rng_next(&rng);
                    c.sr_counter = tu_rng_next(&rng);
                    c.sr_bits = 1 + (int)tu_rng_below(&rng, 64);
                    sr_one(&rep, to[t], sources[s], a, &c, var->name);
                }
            tu_report_line(&rep, "SR neighbours %s %s (%zu targets)", sources[s]->name,
                           var->name, nto);
        }
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The frequency of rounding away matches floor(frac * 2^sr_bits) / 2^sr_bits
 * within 5 sigma, for fp32 values 1 + j/8192 ulp of fp16 and their negatives,
 * over consecutive counters from a fresh context. */
START_TEST(test_sr_frequency)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    const int js[] = {1, 819, 2048, 4096, 6144, 8191};
    const int bits[] = {32, 3, 1, 64};
    const uint64_t trials = tu_exhaustive() ? 1000000 : 100000;
    for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++)
        for (size_t i = 0; i < sizeof js / sizeof js[0]; i++)
            for (int neg = 0; neg < 2; neg++) {
                /* fp32 1 + 2^-10 * j/8192: the 13 bits below fp16's ulp */
                fpk_bits a = 0x3f800000 | ((fpk_bits)1 << 13) | (fpk_bits)js[i];
                a |= neg ? 0x80000000 : 0;
                fpk_bits lo = (neg ? 0x8000 : 0) | 0x3c01, hi = lo + 1;
                fpk_ctx c = fpk_ctx_default();
                c.round = FPK_SR;
                c.sr_seed = seed ^ (uint64_t)(b * 100 + i);
                c.sr_bits = bits[b];
                uint64_t away = 0, other = 0;
                for (uint64_t k = 0; k < trials; k++) {
                    fpk_bits z = fpk_convert(&fpk_fp16, &fpk_fp32, a, &c);
                    away += z == hi;
                    other += z != hi && z != lo;
                }
                /* p = floor(j/8192 * 2^bits) / 2^bits */
                double p = bits[b] >= 13 ? js[i] / 8192.0
                                         : floor(js[i] / 8192.0 * (1 << bits[b])) /
                                               (1 << bits[b]);
                double mean = p * (double)trials;
                double sigma = sqrt((double)trials * p * (1 - p));
                if (other == 0 && fabs((double)away - mean) <= 5 * sigma &&
                    c.sr_counter == trials) {
                    rep.cases++;
                    rep.total_cases++;
                } else {
                    tu_fail(&rep,
                            "SR fp32 %08" PRIx64 " -> fp16 bits %d: %" PRIu64 " of %" PRIu64
                            " away (expected %.1f +- %.1f), %" PRIu64 " not a neighbour, counter %" PRIu64,
                            a, bits[b], away, trials, mean, 5 * sigma, other, c.sr_counter);
                }
            }
    tu_report_line(&rep, "SR frequency (%" PRIu64 " trials each)", trials);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The same seed gives the same bits from a fresh context; another seed
 * gives other bits. */
START_TEST(test_sr_reproducible)
{
    enum { N = 2000 };
    static fpk_bits first[N], again[N], other[N];
    tu_rng rng;
    fpk_bits *runs[3] = {first, again, other};
    for (int run = 0; run < 3; run++) {
        tu_rng_init(&rng, seed + 2);
        fpk_ctx c = fpk_ctx_default();
        c.round = FPK_SR;
        c.sr_seed = run == 2 ? seed + 1 : seed;
        for (int i = 0; i < N; i++) {
            fpk_bits a = (tu_rng_next(&rng) & 0x7fffff) | 0x3f800000; /* [1, 2) */
            runs[run][i] = fpk_convert(&fpk_e4m3, &fpk_fp32, a, &c);
        }
        ck_assert_uint_eq(c.sr_counter, N);
    }
    ck_assert_msg(memcmp(first, again, sizeof first) == 0, "SR: same seed, other bits");
    ck_assert_msg(memcmp(first, other, sizeof first) != 0, "SR: other seed, same bits");
    printf("%s: SR reproducible: %d conversions x 3 runs\n", SUITE, N);
}
END_TEST

static Suite *convert_suite(void)
{
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("convert");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_thresholds);
    tcase_add_test(tc, test_fp16_to_e4m3_rne);
    tcase_add_test(tc, test_bf16_to_fp16_rtz_ftz);
    tcase_add_test(tc, test_exhaustive_small);
    tcase_add_test(tc, test_exhaustive_tf32);
    tcase_add_test(tc, test_random_fp32);
    tcase_add_test(tc, test_random_fp64);
    tcase_add_test(tc, test_sr_neighbours);
    tcase_add_test(tc, test_sr_frequency);
    tcase_add_test(tc, test_sr_reproducible);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    seed = tu_seed(SUITE);
    SRunner *sr = srunner_create(convert_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
