/* fpk_from_double_scaled against the MPFR reference (the exact product,
 * rounded once by ref_round), bits and flags, with hand-written cases that
 * host arithmetic would get wrong; and the tensor statistics (fpk_stats_*)
 * on tensors whose answers are known: the thresholds of docs/DESIGN.md "Thresholds" written out by
 * hand, the reference for scales that are not powers of two, the documented
 * stochastic-rounding stream (seed 0, counter = element index), merges of
 * parts, and the JSON form, read back exactly and rejected when malformed. */
#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SUITE "check_stats"
#define OF (FPK_OVERFLOW | FPK_INEXACT)
#define UF (FPK_UNDERFLOW | FPK_INEXACT)
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t seed;

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static const double dbl_qnan_neg = -NAN;

/* The reference: X * S, X read under C's daz and S exactly, multiplied
 * exactly by MPFR (106 bits hold the product of two doubles) with IEEE's
 * rules for special operands, then rounded once by ref_round. */
static ref_result ref_scaled(const fpk_format *f, double x, double s, const fpk_ctx *c)
{
    MPFR_DECL_INIT(a, 53);
    MPFR_DECL_INIT(b, 53);
    MPFR_DECL_INIT(p, 106);
    bool a_nan = !ref_decode_ctx(a, &fpk_fp64, bits_of(x), c);
    bool b_nan = !ref_decode(b, &fpk_fp64, bits_of(s));
    bool zero_inf = !a_nan && !b_nan && ((mpfr_zero_p(a) && mpfr_inf_p(b)) ||
                                         (mpfr_inf_p(a) && mpfr_zero_p(b)));
    if (a_nan || b_nan || zero_inf) {
        mpfr_set_nan(p);
        ref_result r = ref_round(f, p, 0, c);
        if (zero_inf || ref_is_snan(&fpk_fp64, bits_of(x)) || ref_is_snan(&fpk_fp64, bits_of(s)))
            r.flags |= FPK_INVALID;
        return r;
    }
    if (mpfr_mul(p, a, b, MPFR_RNDN) != 0)
        ck_abort_msg("the product of two doubles is not exact in 106 bits");
    return ref_round(f, p, 0, c);
}

/* Compares fpk_from_double_scaled with the reference under C. */
static void check_scaled(tu_report *rep, const fpk_format *f, double x, double s,
                         const fpk_ctx *c, const char *variant)
{
    ref_result want = ref_scaled(f, x, s, c);
    fpk_ctx lc = *c;
    fpk_bits got = fpk_from_double_scaled(f, x, s, &lc);
    tu_check(rep, f, want, got, lc.flags, "%s %s %s x=%a s=%a", f->name, tu_mode_name(c->round),
             variant, x, s);
}

/* Scales: powers of two, the ones training uses, and any double. */
static const double fixed_scales[] = {
    1, 3, 1000, 0.1, 1.0 / 3, 0.7, 65536, 0x1p-24, 0x1p40, 1e-3, 448.0 / 3, 57344,
    6.02214076e23, 1e-30, 0x1.fffffffffffffp0, 0x1.0000000000001p0, -2, -0.1,
    DBL_MAX, DBL_MIN, 0x1p-1074, 0x1.8p-1070, 0x0.fffffffffffffp-1022,
};

static double gen_scale(tu_rng *r)
{
    switch (tu_rng_below(r, 4)) {
    case 0: return ldexp(1, (int)tu_rng_below(r, 121) - 60);
    case 1: return fixed_scales[tu_rng_below(r, COUNT(fixed_scales))];
    case 2: return double_of(tu_gen(&fpk_fp64, NULL, r));
    default: /* a random significand, a moderate exponent */
        return ldexp(double_of(UINT64_C(0x3ff0000000000000) | (tu_rng_next(r) >> 12)),
                     (int)tu_rng_below(r, 81) - 40);
    }
}

/* An X for which X * S lands near F's boundaries: an fp64 operand aimed at
 * F (tu_gen), divided by S in host arithmetic (this only picks operands),
 * then moved a few ulps either way, so that products fall on, just beside
 * and far from F's ties and thresholds. */
static double gen_x(const fpk_format *f, double s, tu_rng *r)
{
    double y = double_of(tu_gen(&fpk_fp64, f, r));
    if (tu_rng_below(r, 4) == 0)
        return y;
    double x = y / s;
    if (isfinite(x) && x != 0 && tu_rng_below(r, 2)) {
        int steps = (int)tu_rng_below(r, 5) - 2;
        for (; steps > 0; steps--)
            x = nextafter(x, INFINITY);
        for (; steps < 0; steps++)
            x = nextafter(x, -INFINITY);
    }
    return x;
}

/* Random pairs in every built-in format, deterministic mode and option
 * variant (the variant rotating over the pairs). */
START_TEST(test_scaled_random)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed);
    uint64_t pairs = tu_exhaustive() ? 1000000 : 24000;
    for (const fpk_format *const *f = fpk_formats; *f; f++) {
        for (int m = 0; m < TU_MODE_COUNT; m++)
            for (uint64_t i = 0; i < pairs; i++) {
                const tu_variant *v = &tu_variants[i % TU_VARIANT_COUNT];
                fpk_ctx c = tu_ctx(tu_modes[m], v);
                double s = gen_scale(&rng);
                check_scaled(&rep, *f, gen_x(*f, s, &rng), s, &c, v->name);
            }
        tu_report_line(&rep, "scaled random %s (%" PRIu64 " pairs x %d modes)", (*f)->name,
                       pairs, TU_MODE_COUNT);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Every pair of a list of edge values: specials, the extremes of fp64 and
 * the thresholds of the small formats, times specials, powers of two and
 * scales with long significands. */
START_TEST(test_scaled_edges)
{
    static const double xs[] = {
        0, -0.0, INFINITY, -INFINITY, NAN, 1, -1, 0x1p-1074, -0x1p-1074, DBL_MIN,
        0x0.fffffffffffffp-1022, DBL_MAX, -DBL_MAX, 65520, 65504, 464, 448, 480, 61440,
        57344, 0x1p-25, 0x1p-24, 0x1p-30, 0x1p-150, 0x1p-149, 21840, 0.1, 0x1.02p0,
        0x1.0200000000001p0, 0x1.0100000000001p0,
    };
    static const double ss[] = {
        0, -0.0, INFINITY, -INFINITY, NAN, 1, -1, 2, 0.5, 0x1p10, 0x1p-10, 3, 1000, 0.1,
        0x1p-1074, 0x1p1023, DBL_MAX, 0x1.fffffffffffffp-1, 0x1.0000000000001p0, -0x1p-40,
    };
    /* signaling NaNs and a negative quiet one, by their bits */
    const double snan = double_of(UINT64_C(0x7ff0000000000001));
    const double snan_neg = double_of(UINT64_C(0xfff4000000000000));
    double x[COUNT(xs) + 3], s[COUNT(ss) + 2];
    memcpy(x, xs, sizeof xs);
    x[COUNT(xs)] = snan;
    x[COUNT(xs) + 1] = snan_neg;
    x[COUNT(xs) + 2] = dbl_qnan_neg;
    memcpy(s, ss, sizeof ss);
    s[COUNT(ss)] = snan;
    s[COUNT(ss) + 1] = dbl_qnan_neg;

    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (const fpk_format *const *f = fpk_formats; *f; f++) {
        for (int m = 0; m < TU_MODE_COUNT; m++)
            for (int v = 0; v < TU_VARIANT_COUNT; v++) {
                fpk_ctx c = tu_ctx(tu_modes[m], &tu_variants[v]);
                for (size_t i = 0; i < COUNT(x); i++)
                    for (size_t j = 0; j < COUNT(s); j++)
                        check_scaled(&rep, *f, x[i], s[j], &c, tu_variants[v].name);
            }
        tu_report_line(&rep, "scaled edges %s (%zu x %zu pairs, every mode and variant)",
                       (*f)->name, COUNT(x), COUNT(s));
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Expected values worked out by hand, several of which rounding the
 * product in host double arithmetic first would get wrong. */
START_TEST(test_scaled_hand)
{
    static const struct {
        const fpk_format *f;
        bool saturate, daz;
        double x, s;
        fpk_bits bits;
        unsigned flags;
    } cases[] = {
        {&fpk_fp16, false, false, 0x1p-30, 0x1p10, 0x0010, 0},  /* 2^-20: 16 * 2^-24 */
        {&fpk_fp16, false, false, 21840, 3, 0x7c00, OF},        /* 65520 ties up: inf */
        {&fpk_fp16, false, false, 0x1.553ffffffffffp14, 3, 0x7bff, FPK_INEXACT},
        /* 0.1 * 10 is 1 + 2^-54 exactly; a double product would be 1, exact */
        {&fpk_fp16, false, false, 0.1, 10, 0x3c00, FPK_INEXACT},
        /* (1 + 2^-8 + 2^-52)(1 - 2^-53) lies just above bf16's tie 1 + 2^-8;
         * the double product is the tie itself, which goes to even 0x3f80 */
        {&fpk_bf16, false, false, 0x1.0100000000001p0, 0x1.fffffffffffffp-1, 0x3f81,
         FPK_INEXACT},
        {&fpk_e4m3, false, false, INFINITY, 2, 0x7f, FPK_INVALID},
        {&fpk_e4m3, true, false, INFINITY, 2, 0x7e, FPK_INVALID},
        {&fpk_e4m3, true, false, -INFINITY, 2, 0xfe, FPK_INVALID},
        {&fpk_e4m3, false, false, 232, 2, 0x7e, FPK_INEXACT},   /* 464 ties to 448 */
        {&fpk_e4m3, false, false, 0x1.d000000000001p7, 2, 0x7f, OF},
        {&fpk_e5m2, false, false, 0x1p-20, 0x1p3, 0x00, UF},    /* 2^-17 ties to 0 */
        {&fpk_fp32, false, false, 1e300, 1e300, 0x7f800000, OF},
        {&fpk_fp32, false, false, -1e-300, 1e-300, 0x80000000, UF},
        {&fpk_fp16, false, false, INFINITY, 0, 0x7e00, FPK_INVALID},
        {&fpk_fp16, false, false, 0, -INFINITY, 0x7e00, FPK_INVALID},
        {&fpk_fp16, false, false, INFINITY, -3, 0xfc00, 0},
        {&fpk_fp16, false, false, -0.0, 5, 0x8000, 0},
        {&fpk_fp16, false, false, 3, -0.0, 0x8000, 0},
        {&fpk_fp32, false, false, 0x1p-1050, 0x1p1000, 0x26800000, 0}, /* 2^-50 */
        {&fpk_fp32, false, true, 0x1p-1050, 0x1p1000, 0x00000000, 0},  /* daz: X is 0 */
        {&fpk_fp32, false, true, 0x1p1000, 0x1p-1050, 0x26800000, 0},  /* S is not flushed */
        {&fpk_fp64, false, false, 0x1p-1074, 0.5, 0, UF},
        {&fpk_fp64, false, false, 0x1p-1074, 1.5, 2, UF},
        {&fpk_fp64, false, false, 0x1.0000000000001p0, 0x1.0000000000001p0,
         UINT64_C(0x3ff0000000000002), FPK_INEXACT},
        {&fpk_fp64, false, false, DBL_MAX, 0.5, UINT64_C(0x7fdfffffffffffff), 0},
        {&fpk_fp64, false, false, 0x1p1000, 0x1p24, UINT64_C(0x7ff0000000000000), OF},
    };
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t i = 0; i < COUNT(cases); i++) {
        fpk_ctx c = fpk_ctx_default();
        c.saturate = cases[i].saturate;
        c.daz = cases[i].daz;
        fpk_bits got = fpk_from_double_scaled(cases[i].f, cases[i].x, cases[i].s, &c);
        ref_result want = {cases[i].bits, cases[i].flags};
        tu_check(&rep, cases[i].f, want, got, c.flags, "hand case %zu: %s x=%a s=%a", i,
                 cases[i].f->name, cases[i].x, cases[i].s);
    }
    /* NaN operands: the canonical NaN; invalid only for a signaling one. */
    const double snan = double_of(UINT64_C(0x7ff0000000000001));
    fpk_ctx c = fpk_ctx_default();
    fpk_bits got = fpk_from_double_scaled(&fpk_fp16, dbl_qnan_neg, 1, &c);
    tu_check(&rep, &fpk_fp16, (ref_result){0x7e00, 0}, got, c.flags, "hand: -qNaN * 1");
    c = fpk_ctx_default();
    got = fpk_from_double_scaled(&fpk_fp16, 1, snan, &c);
    tu_check(&rep, &fpk_fp16, (ref_result){0x7e00, FPK_INVALID}, got, c.flags, "hand: 1 * sNaN");
    tu_report_line(&rep, "scaled, by hand");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Stochastic rounding of X * S: the neighbour that fpk_ctx's rule picks,
 * r < floor(frac * 2^sr_bits) with r the top sr_bits of
 * fpk_sr_hash(seed, counter), with its flags; the counter advances by one.
 * The rule is checked where the reference's frac (a double) is exact, S a
 * power of two; for any S, the result must be one of the two neighbours. */
START_TEST(test_scaled_sr)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 1);
    uint64_t n = tu_exhaustive() ? 200000 : 10000;
    for (const fpk_format *const *f = fpk_formats; *f; f++) {
        for (uint64_t i = 0; i < n; i++) {
            const tu_variant *v = &tu_variants[i % TU_VARIANT_COUNT];
            fpk_ctx c = tu_ctx(FPK_SR, v);
            c.sr_seed = tu_rng_next(&rng);
            c.sr_counter = tu_rng_next(&rng);
            c.sr_bits = 1 + (int)tu_rng_below(&rng, 64);
            bool pow2 = tu_rng_below(&rng, 2);
            double s = pow2 ? ldexp(1, (int)tu_rng_below(&rng, 81) - 40) : gen_scale(&rng);
            double x = gen_x(*f, s, &rng);

            fpk_ctx lc = c;
            fpk_bits got = fpk_from_double_scaled(*f, x, s, &lc);
            MPFR_DECL_INIT(a, 53);
            MPFR_DECL_INIT(b, 53);
            MPFR_DECL_INIT(p, 106);
            bool finite = ref_decode_ctx(a, &fpk_fp64, bits_of(x), &c) &&
                          ref_decode(b, &fpk_fp64, bits_of(s)) && mpfr_number_p(a) &&
                          mpfr_number_p(b);
            if (!finite || mpfr_zero_p(a) || mpfr_zero_p(b)) {
                fpk_ctx rc = c;
                rc.round = FPK_RTZ; /* an exact result: every mode gives it */
                tu_check(&rep, *f, ref_scaled(*f, x, s, &rc), got, lc.flags,
                         "SR %s %s x=%a s=%a (special)", (*f)->name, v->name, x, s);
                continue;
            }
            mpfr_mul(p, a, b, MPFR_RNDN); /* exact */
            ref_result lo, hi;
            double frac;
            bool inexact = ref_neighbours(*f, p, &c, &lo, &hi, &frac);
            ref_result want = lo;
            if (!inexact) { /* exact: no choice, overflows as under RNE */
                fpk_ctx rc = c;
                rc.round = FPK_RNE;
                want = ref_round(*f, p, 0, &rc);
            } else if (pow2) {
                uint64_t r = fpk_sr_hash(c.sr_seed, c.sr_counter) >> (64 - c.sr_bits);
                if (r < (uint64_t)ldexp(frac, c.sr_bits)) /* frac is exact: floor */
                    want = hi;
            } else if (got == hi.bits && lc.flags == hi.flags) {
                want = hi;
            }
            if (tu_check(&rep, *f, want, got, lc.flags,
                         "SR %s %s x=%a s=%a seed %" PRIx64 " counter %" PRIx64 " bits %d",
                         (*f)->name, v->name, x, s, c.sr_seed, c.sr_counter, c.sr_bits) &&
                lc.sr_counter != c.sr_counter + 1)
                tu_fail(&rep, "SR counter advanced by %" PRIu64 ": %s x=%a s=%a",
                        lc.sr_counter - c.sr_counter, (*f)->name, x, s);
        }
        tu_report_line(&rep, "scaled SR %s", (*f)->name);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The thresholds of docs/DESIGN.md "Thresholds", by hand: for each format, the magnitudes where
 * rounding to nearest even starts to give a nonzero subnormal (above
 * rne_zero), a normal (from rne_normal: the tie below 2^emin rounds up to
 * it) and an overflow (from rne_over, or above it in e4m3, whose 464 ties
 * to 448); toward zero, the smallest subnormal, 2^emin and 2^(emax+1)
 * (e4m3: 480). */
typedef struct thresholds {
    const fpk_format *f;
    double rne_zero, rne_normal, rne_over;
    bool rne_over_strict;
    double rtz_sub, rtz_normal, rtz_over;
    double max; /* the largest finite number */
} thresholds;

static const thresholds thr[] = {
    {&fpk_fp32, 0x1p-150, 0x1.fffffep-127, 0x1.ffffffp127, false, 0x1p-149, 0x1p-126, 0x1p128,
     0x1.fffffep127},
    {&fpk_tf32, 0x1p-137, 0x1.ffcp-127, 0x1.ffep127, false, 0x1p-136, 0x1p-126, 0x1p128,
     0x1.ff8p127},
    {&fpk_fp16, 0x1p-25, 0x1.ffcp-15, 65520, false, 0x1p-24, 0x1p-14, 65536, 65504},
    {&fpk_bf16, 0x1p-134, 0x1.fep-127, 0x1.ffp127, false, 0x1p-133, 0x1p-126, 0x1p128,
     0x1.fep127},
    {&fpk_e4m3, 0x1p-10, 0x1.ep-7, 464, true, 0x1p-9, 0x1p-6, 480, 448},
    {&fpk_e5m2, 0x1p-17, 0x1.cp-15, 61440, false, 0x1p-16, 0x1p-14, 65536, 57344},
};

enum { UNDER, SUB, NORMAL, OVER };

/* What rounding the nonzero finite A (exact; may be 0 or inf when a host
 * product left the double range, beyond every threshold) does in T's
 * format, by the thresholds above. */
static int expected_class(const thresholds *t, fpk_round mode, bool ftz, double a)
{
    a = fabs(a);
    int k;
    if (mode == FPK_RNE)
        k = a <= t->rne_zero ? UNDER
            : a < t->rne_normal ? SUB
            : (t->rne_over_strict ? a > t->rne_over : a >= t->rne_over) ? OVER
                                                                        : NORMAL;
    else
        k = a < t->rtz_sub ? UNDER : a < t->rtz_normal ? SUB : a >= t->rtz_over ? OVER : NORMAL;
    return ftz && k == SUB ? UNDER : k;
}

static void add_class(fpk_format_counts *k, int cls)
{
    k->underflow += cls == UNDER;
    k->subnormal += cls == SUB;
    k->overflow += cls == OVER;
}

/* Counts a passing case (tu_fail counts the failing ones) and returns
 * FAILED: "if (bad(rep, failed)) tu_fail(rep, ...)". */
static bool bad(tu_report *rep, bool failed)
{
    if (!failed) {
        rep->cases++;
        rep->total_cases++;
    }
    return failed;
}

static bool counts_equal(tu_report *rep, const fpk_format_counts *want,
                         const fpk_format_counts *got, const char *what, const char *name)
{
    if (!bad(rep, want->underflow != got->underflow || want->subnormal != got->subnormal ||
                      want->overflow != got->overflow))
        return true;
    tu_fail(rep, "%s %s: expected underflow/subnormal/overflow %" PRIu64 "/%" PRIu64 "/%" PRIu64
            " got %" PRIu64 "/%" PRIu64 "/%" PRIu64,
            what, name, want->underflow, want->subnormal, want->overflow, got->underflow,
            got->subnormal, got->overflow);
    return false;
}

static void expect_u64(tu_report *rep, uint64_t want, uint64_t got, const char *what)
{
    if (bad(rep, want != got))
        tu_fail(rep, "%s: expected %" PRIu64 " got %" PRIu64, what, want, got);
}

/* Every threshold T of a mode, just below, at and just above, both signs,
 * with +-0, +-inf and a NaN: hand-counted answers per format. */
START_TEST(test_stats_thresholds_by_hand)
{
    static const struct {
        fpk_round mode;
        bool ftz, saturate;
        fpk_format_counts ieee, e4m3; /* underflow, subnormal, overflow */
    } runs[] = {
        {FPK_RNE, false, false, {4, 4, 4}, {4, 4, 2}},
        {FPK_RNE, false, true, {4, 4, 4}, {4, 4, 2}},
        {FPK_RNE, true, false, {8, 0, 4}, {8, 0, 2}},
        {FPK_RTZ, false, false, {2, 6, 4}, {2, 6, 4}},
        {FPK_RTZ, true, true, {8, 0, 4}, {8, 0, 4}},
    };
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t t = 0; t < COUNT(thr); t++)
        for (size_t r = 0; r < COUNT(runs); r++) {
            const thresholds *h = &thr[t];
            double ts[4];
            if (runs[r].mode == FPK_RNE) {
                ts[0] = h->rne_zero, ts[1] = h->rne_normal, ts[3] = h->rne_over;
            } else {
                ts[0] = h->rtz_sub, ts[1] = h->rtz_normal, ts[3] = h->rtz_over;
            }
            /* RNE: 2^emin, normal and so is just below it (above the tie);
             * RTZ: max finite, whose neighbours truncate to normals too */
            ts[2] = runs[r].mode == FPK_RNE ? ldexp(1, h->f->emin) : h->max;
            double x[28];
            size_t n = 0;
            for (int i = 0; i < 4; i++)
                for (int sign = 1; sign >= -1; sign -= 2) {
                    x[n++] = sign * nextafter(ts[i], 0);
                    x[n++] = sign * ts[i];
                    x[n++] = sign * nextafter(ts[i], INFINITY);
                }
            x[n++] = 0;
            x[n++] = -0.0;
            x[n++] = INFINITY;
            x[n++] = NAN;
            fpk_ctx c = fpk_ctx_default();
            c.round = runs[r].mode;
            c.ftz = runs[r].ftz;
            c.saturate = runs[r].saturate;
            fpk_stats s;
            fpk_stats_init(&s, &h->f, 1, 1, &c);
            fpk_stats_add(&s, x, n);
            char what[64];
            snprintf(what, sizeof what, "thresholds %s%s%s", tu_mode_name(c.round),
                     c.ftz ? " ftz" : "", c.saturate ? " saturate" : "");
            expect_u64(&rep, 28, s.count, "count");
            expect_u64(&rep, 2, s.zeros, "zeros");
            expect_u64(&rep, 2, s.nonfinite, "nonfinite");
            const fpk_format_counts *want = h->f == &fpk_e4m3 ? &runs[r].e4m3 : &runs[r].ieee;
            counts_equal(&rep, want, &s.fmt[0], what, h->f->name);
        }
    tu_report_line(&rep, "statistics at the thresholds, counted by hand");

    /* Scaled: 2^-30 * 2^10 is fp16's subnormal 2^-20, e4m3's zero, bf16's
     * normal; 21840 * 3 = 65520 overflows fp16, its predecessor does not. */
    const fpk_format *fmts[] = {&fpk_fp16, &fpk_e4m3, &fpk_bf16};
    fpk_ctx c = fpk_ctx_default();
    fpk_stats s;
    fpk_stats_init(&s, fmts, 3, 0x1p10, &c);
    fpk_stats_add(&s, (const double[]){0x1p-30}, 1);
    counts_equal(&rep, &(fpk_format_counts){0, 1, 0}, &s.fmt[0], "2^-30 * 2^10", "fp16");
    counts_equal(&rep, &(fpk_format_counts){1, 0, 0}, &s.fmt[1], "2^-30 * 2^10", "e4m3");
    counts_equal(&rep, &(fpk_format_counts){0, 0, 0}, &s.fmt[2], "2^-30 * 2^10", "bf16");
    expect_u64(&rep, 1, s.log2_hist[-30 - FPK_LOG2_MIN], "2^-30 in bin -30 (unscaled)");
    fpk_stats_init(&s, fmts, 1, 3, &c);
    fpk_stats_add(&s, (const double[]){21840, 0x1.553ffffffffffp14}, 2);
    counts_equal(&rep, &(fpk_format_counts){0, 0, 1}, &s.fmt[0], "21840 * 3", "fp16");
    expect_u64(&rep, 2, s.log2_hist[14 - FPK_LOG2_MIN], "21840 in bin 14");

    /* The histogram and amax by hand, subnormal doubles included. */
    static const struct {
        double x;
        int bin;
    } bins[] = {
        {1, 0}, {1.5, 0}, {0.75, -1}, {-3, 1}, {0x1p-30, -30}, {0x1.fffffffffffffp-31, -31},
        {DBL_MAX, 1023}, {-0x1p-1074, -1074}, {0x1p-1022, -1022},
        {0x0.fffffffffffffp-1022, -1023}, {0x1.8p-1073, -1073},
    };
    fpk_stats_init(&s, NULL, 0, 1, &c);
    for (size_t i = 0; i < COUNT(bins); i++)
        fpk_stats_add(&s, &bins[i].x, 1);
    for (size_t i = 0; i < COUNT(bins); i++) {
        char what[64];
        snprintf(what, sizeof what, "bin %d", bins[i].bin);
        uint64_t want = 0;
        for (size_t j = 0; j < COUNT(bins); j++)
            want += bins[j].bin == bins[i].bin;
        expect_u64(&rep, want, s.log2_hist[bins[i].bin - FPK_LOG2_MIN], what);
    }
    expect_u64(&rep, bits_of(DBL_MAX), bits_of(s.amax), "amax (bits)");
    tu_report_line(&rep, "scaled statistics and the histogram, by hand");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* A tensor: log-uniform magnitudes over every format's range and beyond,
 * each format's thresholds and their neighbours, zeros, infinities, NaNs
 * and subnormal doubles. */
static void gen_tensor(double *x, size_t n, tu_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        double sign = (tu_rng_next(r) & 1) ? -1 : 1;
        uint64_t k = tu_rng_below(r, 100);
        if (k < 70) {
            double m = double_of(UINT64_C(0x3ff0000000000000) | (tu_rng_next(r) >> 12));
            x[i] = sign * ldexp(m, (int)tu_rng_below(r, 301) - 160);
        } else if (k < 90) {
            const thresholds *t = &thr[tu_rng_below(r, COUNT(thr))];
            const double ts[] = {t->rne_zero, t->rne_normal, t->rne_over, t->rtz_sub,
                                 t->rtz_normal, t->rtz_over, t->max};
            double v = ts[tu_rng_below(r, COUNT(ts))];
            int step = (int)tu_rng_below(r, 3) - 1;
            x[i] = sign * (step ? nextafter(v, step * INFINITY) : v);
        } else if (k < 93) {
            x[i] = sign * 0.0;
        } else if (k < 95) {
            x[i] = sign * INFINITY;
        } else if (k < 96) {
            x[i] = NAN;
        } else if (k < 98) {
            x[i] = sign * double_of(tu_rng_next(r) >> 12); /* subnormal double */
        } else {
            x[i] = sign * double_of(tu_rng_next(r) >> 1); /* any bits */
        }
    }
}

/* The statistics of a tensor worked out independently: counts, amax,
 * the histogram from frexp, and each format's counts from the thresholds
 * (the product X * S in host arithmetic, exact for a power of two S
 * wherever a threshold could matter). */
static void expected_stats(fpk_stats *e, const double *x, size_t n, double scale, fpk_round mode,
                           bool ftz)
{
    for (size_t i = 0; i < n; i++) {
        e->count++;
        if (x[i] == 0) {
            e->zeros++;
        } else if (!isfinite(x[i])) {
            e->nonfinite++;
        } else {
            int ex;
            frexp(x[i], &ex);
            e->log2_hist[ex - 1 - FPK_LOG2_MIN]++;
            if (fabs(x[i]) > e->amax)
                e->amax = fabs(x[i]);
            for (size_t t = 0; t < COUNT(thr); t++)
                add_class(&e->fmt[t], expected_class(&thr[t], mode, ftz, x[i] * scale));
        }
    }
}

static void compare_stats(tu_report *rep, const fpk_stats *want, const fpk_stats *got,
                          const char *what)
{
    char w[128];
    snprintf(w, sizeof w, "%s: count", what);
    expect_u64(rep, want->count, got->count, w);
    snprintf(w, sizeof w, "%s: zeros", what);
    expect_u64(rep, want->zeros, got->zeros, w);
    snprintf(w, sizeof w, "%s: nonfinite", what);
    expect_u64(rep, want->nonfinite, got->nonfinite, w);
    snprintf(w, sizeof w, "%s: amax bits", what);
    expect_u64(rep, bits_of(want->amax), bits_of(got->amax), w);
    if (bad(rep, memcmp(want->log2_hist, got->log2_hist, sizeof want->log2_hist) != 0)) {
        for (int i = 0; i < FPK_LOG2_BINS; i++)
            if (want->log2_hist[i] != got->log2_hist[i]) {
                tu_fail(rep, "%s: histogram bin %d: expected %" PRIu64 " got %" PRIu64, what,
                        i + FPK_LOG2_MIN, want->log2_hist[i], got->log2_hist[i]);
                break;
            }
    }
    for (int j = 0; j < got->nformats; j++)
        counts_equal(rep, &want->fmt[j], &got->fmt[j], what, got->formats[j]->name);
}

static const fpk_format *thr_formats[COUNT(thr)];

/* Random tensors against the thresholds, in the modes the thresholds are
 * written for, with and without ftz and saturate, unscaled and scaled by
 * powers of two. */
START_TEST(test_stats_thresholds_random)
{
    for (size_t t = 0; t < COUNT(thr); t++)
        thr_formats[t] = thr[t].f;
    static const struct {
        fpk_round mode;
        bool ftz, saturate;
    } runs[] = {
        {FPK_RNE, false, false}, {FPK_RNE, true, false}, {FPK_RNE, false, true},
        {FPK_RTZ, false, false}, {FPK_RTZ, true, true},
    };
    static const double scales[] = {1, 0x1p10, 0x1p-10, 0x1p24, 0x1p-100, 0x1p100};
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 2);
    size_t n = tu_exhaustive() ? 1000000 : 50000;
    double *x = malloc(n * sizeof *x);
    fpk_stats *got = malloc(sizeof *got), *want = malloc(sizeof *want);
    ck_assert(x && got && want);
    gen_tensor(x, n, &rng);
    for (size_t r = 0; r < COUNT(runs); r++)
        for (size_t k = 0; k < COUNT(scales); k++) {
            fpk_ctx c = fpk_ctx_default();
            c.round = runs[r].mode;
            c.ftz = runs[r].ftz;
            c.saturate = runs[r].saturate;
            fpk_stats_init(got, thr_formats, (int)COUNT(thr), scales[k], &c);
            fpk_stats_add(got, x, n);
            memset(want, 0, sizeof *want);
            expected_stats(want, x, n, scales[k], c.round, c.ftz);
            char what[96];
            snprintf(what, sizeof what, "%s%s%s S=%a", tu_mode_name(c.round),
                     c.ftz ? " ftz" : "", c.saturate ? " saturate" : "", scales[k]);
            compare_stats(&rep, want, got, what);
            tu_report_line(&rep, "random tensor of %zu, %zu formats, %s", n, COUNT(thr), what);
        }
    free(x);
    free(got);
    free(want);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The class of R, a result of F from the reference. */
static int result_class(const fpk_format *f, ref_result r)
{
    fpk_bits mag = r.bits & (f->exp_mask | f->man_mask);
    if ((r.flags & FPK_OVERFLOW) || mag > f->max_finite)
        return OVER;
    if (f->special == FPK_SPECIAL_E8M0) /* no zero, no subnormals: 0 is 2^-127 */
        return NORMAL;
    if (mag == 0)
        return UNDER;
    return mag < ((fpk_bits)1 << f->man_bits) ? SUB : NORMAL;
}

/* What the reference makes of X * S in F. */
static int ref_class(const fpk_format *f, double x, double s, const fpk_ctx *c)
{
    return result_class(f, ref_scaled(f, x, s, c));
}

/* Scales that are not powers of two, every built-in format and
 * deterministic mode: each element's class from the reference. */
START_TEST(test_stats_scaled_ref)
{
    static const double scales[] = {1000, 0.1, 3, 0x1.fffffffffffffp-1, 6.02214076e23};
    const fpk_format *fmts[FPK_STATS_MAX_FORMATS];
    int nf = 0;
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        fmts[nf++] = *f;
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 3);
    size_t n = tu_exhaustive() ? 100000 : 1500;
    double *x = malloc(n * sizeof *x);
    fpk_stats *got = malloc(sizeof *got);
    ck_assert(x && got);
    for (size_t k = 0; k < COUNT(scales); k++) {
        gen_tensor(x, n, &rng);
        for (size_t i = 0; i < n; i++) /* aim the products at the thresholds */
            if (isfinite(x[i]) && tu_rng_below(&rng, 2))
                x[i] /= scales[k];
        for (int m = 0; m < TU_MODE_COUNT; m++) {
            const tu_variant *v = &tu_variants[m % TU_VARIANT_COUNT];
            fpk_ctx c = tu_ctx(tu_modes[m], v);
            c.daz = c.tiny_before = false; /* statistics keep mode, ftz, saturate */
            fpk_stats_init(got, fmts, nf, scales[k], &c);
            fpk_stats_add(got, x, n);
            for (int j = 0; j < nf; j++) {
                fpk_format_counts want = {0, 0, 0};
                for (size_t i = 0; i < n; i++)
                    if (x[i] != 0 && isfinite(x[i]))
                        add_class(&want, ref_class(fmts[j], x[i], scales[k], &c));
                char what[96];
                snprintf(what, sizeof what, "S=%a %s %s", scales[k], tu_mode_name(c.round),
                         v->name);
                counts_equal(&rep, &want, &got->fmt[j], what, fmts[j]->name);
            }
        }
        tu_report_line(&rep, "tensors of %zu scaled by %a, %d formats x %d modes, against the "
                       "reference", n, scales[k], nf, TU_MODE_COUNT);
    }
    free(x);
    free(got);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Formats without normal numbers (e1mY: max finite is a subnormal, and
 * overflow, judged at the format's precision, starts below 2^emin): every
 * multiple of 2^-10 in (-4, 4) through both statistics paths (enough
 * elements for fpk_stats_add_array's thresholds), in every
 * deterministic mode and variant, each element's class from the
 * reference. */
START_TEST(test_stats_no_normals)
{
    static const char *const names[] = {"e1m0", "e1m1", "e1m3", "e1m6"};
    const fpk_format *fmts[COUNT(names)];
    for (size_t j = 0; j < COUNT(names); j++)
        fmts[j] = fpk_format_lookup(names[j]);
    enum { N = 2 * 4 * 1024 - 1 };
    double x[N];
    float xf[N];
    for (int i = 0; i < N; i++)
        xf[i] = (float)(x[i] = (i - 4 * 1024 + 1) * 0x1p-10);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    fpk_stats *got = malloc(sizeof *got), *arr = malloc(sizeof *arr);
    ck_assert(got && arr);
    for (int m = 0; m < TU_MODE_COUNT; m++)
        for (int v = 0; v < TU_VARIANT_COUNT; v++) {
            fpk_ctx c = tu_ctx(tu_modes[m], &tu_variants[v]);
            if (c.round == FPK_SR || c.daz || c.tiny_before)
                continue;
            fpk_stats_init(got, fmts, (int)COUNT(names), 1, &c);
            fpk_stats_init(arr, fmts, (int)COUNT(names), 1, &c);
            fpk_stats_add(got, x, N);
            fpk_stats_add_array(arr, FPK_DTYPE_F32, xf, N, 1);
            for (size_t j = 0; j < COUNT(names); j++) {
                fpk_format_counts want = {0, 0, 0};
                for (int i = 0; i < N; i++)
                    if (x[i] != 0)
                        add_class(&want, ref_class(fmts[j], x[i], 1, &c));
                char what[64];
                snprintf(what, sizeof what, "%s %s", tu_mode_name(c.round), tu_variants[v].name);
                counts_equal(&rep, &want, &got->fmt[j], what, fmts[j]->name);
                counts_equal(&rep, &want, &arr->fmt[j], what, fmts[j]->name);
            }
        }
    tu_report_line(&rep, "e1m0, e1m1, e1m3, e1m6: every multiple of 2^-10 in (-4, 4), both paths");
    free(got);
    free(arr);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Formats for the merge and JSON tests: the built-ins and some eXmY. */
static int some_formats(const fpk_format **out)
{
    static const char *const extra[] = {"e3m4", "e3m3fnuz", "e2m2fn"};
    int n = 0;
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        out[n++] = *f;
    for (size_t i = 0; i < COUNT(extra); i++) {
        out[n] = fpk_format_lookup(extra[i]);
        ck_assert_msg(out[n] != NULL, "fpk_format_lookup(\"%s\")", extra[i]);
        n++;
    }
    return n;
}

/* Two halves merged equal the whole, byte for byte; statistics that
 * differ in formats, scale or options are refused and left alone. */
START_TEST(test_stats_merge)
{
    const fpk_format *fmts[FPK_STATS_MAX_FORMATS];
    int nf = some_formats(fmts);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 4);
    size_t n = 40000;
    double *x = malloc(n * sizeof *x);
    fpk_stats *whole = malloc(sizeof *whole), *a = malloc(sizeof *a), *b = malloc(sizeof *b),
              *keep = malloc(sizeof *keep);
    ck_assert(x && whole && a && b && keep);
    gen_tensor(x, n, &rng);
    for (int m = 0; m < TU_MODE_COUNT; m++) {
        fpk_ctx c = tu_ctx(tu_modes[m], &tu_variants[m % TU_VARIANT_COUNT]);
        double scale = m % 2 ? 0.1 : 0x1p-8;
        size_t cut = (size_t)tu_rng_below(&rng, n + 1);
        fpk_stats_init(whole, fmts, nf, scale, &c);
        fpk_stats_add(whole, x, n);
        fpk_stats_init(a, fmts, nf, scale, &c);
        fpk_stats_add(a, x, cut);
        fpk_stats_init(b, fmts, nf, scale, &c);
        fpk_stats_add(b, x + cut, n - cut);
        if (bad(&rep, !fpk_stats_merge(a, b) || memcmp(a, whole, sizeof *whole) != 0))
            tu_fail(&rep, "merge %s at %zu of %zu differs from the whole", tu_mode_name(c.round),
                    cut, n);
    }

    /* Refused: one property differs at a time. */
    fpk_ctx c = fpk_ctx_default();
    fpk_stats_init(a, fmts, nf, 1, &c);
    fpk_stats_add(a, x, 100);
    for (int k = 0; k < 6; k++) {
        fpk_ctx o = c;
        double scale = 1;
        const fpk_format *ofmts[FPK_STATS_MAX_FORMATS];
        memcpy(ofmts, fmts, sizeof ofmts);
        int onf = nf;
        switch (k) {
        case 0: scale = 2; break;
        case 1: o.round = FPK_RTZ; break;
        case 2: o.ftz = true; break;
        case 3: o.saturate = true; break;
        case 4: onf = nf - 1; break;
        default: ofmts[2] = &fpk_bf16; break;
        }
        fpk_stats_init(b, ofmts, onf, scale, &o);
        fpk_stats_add(b, x, 100);
        memcpy(keep, a, sizeof *keep);
        if (bad(&rep, fpk_stats_merge(a, b) || memcmp(a, keep, sizeof *keep) != 0))
            tu_fail(&rep, "merge of unlike statistics (difference %d) was not refused", k);
    }
    /* A copy of a descriptor is the same format. */
    fpk_format copy = fpk_fp16;
    const fpk_format *one = &fpk_fp16, *other = &copy;
    fpk_stats_init(a, &one, 1, 1, &c);
    fpk_stats_init(b, &other, 1, 1, &c);
    fpk_stats_add(b, (const double[]){0x1p-20}, 1);
    if (bad(&rep, !fpk_stats_merge(a, b) || a->fmt[0].subnormal != 1))
        tu_fail(&rep, "merge with a copy of fp16's descriptor was refused");
    tu_report_line(&rep, "merges");
    free(x);
    free(whole);
    free(a);
    free(b);
    free(keep);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Stochastic rounding: element i is rounded with seed 0 and counter i in
 * every format, so chunks give the whole's bits, and the counts follow
 * fpk_ctx's rule element by element (S a power of two: the reference's
 * frac is exact); about half of the halfway cases round up. */
START_TEST(test_stats_sr)
{
    const fpk_format *fmts[FPK_STATS_MAX_FORMATS];
    int nf = some_formats(fmts);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 5);
    size_t n = 30000;
    double *x = malloc(n * sizeof *x);
    fpk_stats *whole = malloc(sizeof *whole), *parts = malloc(sizeof *parts);
    ck_assert(x && whole && parts);
    gen_tensor(x, n, &rng);
    static const double scales[] = {1, 0x1p-7};
    for (size_t k = 0; k < COUNT(scales); k++)
        for (int v = 0; v < 2; v++) {
            fpk_ctx c = fpk_ctx_default();
            c.round = FPK_SR;
            c.ftz = v == 1;
            c.saturate = v == 1;
            fpk_stats_init(whole, fmts, nf, scales[k], &c);
            fpk_stats_add(whole, x, n);
            fpk_stats_init(parts, fmts, nf, scales[k], &c);
            for (size_t i = 0; i < n;) {
                size_t len = 1 + (size_t)tu_rng_below(&rng, 2000);
                len = len < n - i ? len : n - i;
                fpk_stats_add(parts, x + i, len);
                i += len;
            }
            if (bad(&rep, memcmp(whole, parts, sizeof *whole) != 0))
                tu_fail(&rep, "SR statistics added in chunks differ from the whole (S=%a)",
                        scales[k]);

            /* The rule, element by element. */
            fpk_ctx rc = c;
            rc.sr_seed = 0;
            for (int j = 0; j < nf; j++) {
                fpk_format_counts want = {0, 0, 0};
                for (size_t i = 0; i < n; i++) {
                    if (x[i] == 0 || !isfinite(x[i]))
                        continue;
                    MPFR_DECL_INIT(p, 53);
                    mpfr_set_d(p, x[i], MPFR_RNDN);
                    mpfr_mul_d(p, p, scales[k], MPFR_RNDN); /* exact: a power of two */
                    ref_result lo, hi;
                    double frac;
                    bool inexact = ref_neighbours(fmts[j], p, &rc, &lo, &hi, &frac);
                    bool away = inexact && (fpk_sr_hash(0, i) >> 32) < (uint64_t)ldexp(frac, 32);
                    if (!inexact) { /* exact: overflows as under RNE */
                        fpk_ctx ne = rc;
                        ne.round = FPK_RNE;
                        lo = ref_round(fmts[j], p, 0, &ne);
                    }
                    add_class(&want, result_class(fmts[j], away ? hi : lo));
                }
                char what[64];
                snprintf(what, sizeof what, "SR S=%a%s", scales[k], v ? " ftz saturate" : "");
                counts_equal(&rep, &want, &whole->fmt[j], what, fmts[j]->name);
            }
        }
    tu_report_line(&rep, "SR: chunks and the rule, %zu elements, %d formats", n, nf);

    /* Halfway between 0 and fp16's smallest subnormal: 2^-25. */
    for (size_t i = 0; i < n; i++)
        x[i] = 0x1p-25;
    fpk_ctx c = fpk_ctx_default();
    c.round = FPK_SR;
    fpk_stats_init(whole, &fmts[3], 1, 1, &c);
    fpk_stats_add(whole, x, n);
    uint64_t under = whole->fmt[0].underflow;
    if (bad(&rep, whole->formats[0] != &fpk_fp16 || under < n / 2 - n / 20 ||
                      under > n / 2 + n / 20))
        tu_fail(&rep, "SR: %" PRIu64 " of %zu halfway values became zero", under, n);
    tu_report_line(&rep, "SR halfway frequency");
    free(x);
    free(whole);
    free(parts);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The JSON text read back gives the same bytes; the text itself, by hand. */
START_TEST(test_json_round_trip)
{
    const fpk_format *fmts[FPK_STATS_MAX_FORMATS];
    int nf = some_formats(fmts);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 6);
    size_t n = 5000;
    double *x = malloc(n * sizeof *x);
    fpk_stats *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    ck_assert(x && a && b);
    static const double scales[] = {1, 0.1, 0x1p-1074, DBL_MAX, 1000, 0x1.fffffffffffffp-1};
    for (int t = 0; t < 40; t++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = (fpk_round)tu_rng_below(&rng, FPK_ROUND_COUNT);
        c.ftz = tu_rng_below(&rng, 2);
        c.saturate = tu_rng_below(&rng, 2);
        int k = (int)tu_rng_below(&rng, (uint64_t)nf + 1);
        size_t len = t == 0 ? 0 : (size_t)tu_rng_below(&rng, n + 1);
        gen_tensor(x, len, &rng);
        if (t == 1 && len > 0) /* amax a subnormal double */
            for (size_t i = 0; i < len; i++)
                x[i] = double_of(tu_rng_next(&rng) >> 13);
        fpk_stats_init(a, fmts + (nf - k), k, scales[t % COUNT(scales)], &c);
        fpk_stats_add(a, x, len);
        char *text = fpk_stats_to_json(a);
        ck_assert(text != NULL);
        memset(b, 0xa5, sizeof *b);
        fpk_error err = {0};
        int rc = fpk_stats_from_json(b, text, &err);
        if (bad(&rep, rc != FPK_OK || memcmp(a, b, sizeof *a) != 0))
            tu_fail(&rep, "JSON round trip %d (rc %d: %s): %.200s", t, rc, err.msg, text);
        free(text);
    }
    tu_report_line(&rep, "JSON round trips");

    /* One small case, written out. */
    const fpk_format *fp16 = &fpk_fp16;
    fpk_ctx c = fpk_ctx_default();
    fpk_stats_init(a, &fp16, 1, 1, &c);
    fpk_stats_add(a, (const double[]){1, 0, INFINITY, -0x1p-30, 0x1p-20}, 5);
    char *text = fpk_stats_to_json(a);
    ck_assert(text != NULL);
    const char *want = "{\"round\":\"rne\",\"scale\":1.0,\"ftz\":false,\"saturate\":false,"
                       "\"count\":5,\"zeros\":1,\"nonfinite\":1,\"amax\":1.0,"
                       "\"log2_hist\":{\"min\":-30,\"counts\":[1,0,0,0,0,0,0,0,0,0,1,0,0,0,0,"
                       "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]},"
                       "\"formats\":{\"fp16\":{\"underflow\":1,\"subnormal\":1,\"overflow\":0}}}";
    if (bad(&rep, strcmp(text, want) != 0))
        tu_fail(&rep, "JSON text:\n  expected %s\n  got      %s", want, text);
    free(text);

    /* Empty statistics: an empty histogram, amax 0. */
    fpk_stats_init(a, NULL, 0, 0.5, &c);
    text = fpk_stats_to_json(a);
    ck_assert(text != NULL);
    want = "{\"round\":\"rne\",\"scale\":0.5,\"ftz\":false,\"saturate\":false,\"count\":0,"
           "\"zeros\":0,\"nonfinite\":0,\"amax\":0.0,\"log2_hist\":{\"min\":0,\"counts\":[]},"
           "\"formats\":{}}";
    if (bad(&rep, strcmp(text, want) != 0))
        tu_fail(&rep, "JSON text:\n  expected %s\n  got      %s", want, text);
    free(text);

    /* What to_json cannot write: a format twice. */
    const fpk_format *twice[] = {&fpk_fp16, &fpk_fp16};
    fpk_stats_init(a, twice, 2, 1, &c);
    text = fpk_stats_to_json(a);
    if (bad(&rep, text != NULL))
        tu_fail(&rep, "JSON of a format listed twice: %s", text);
    free(text);
    tu_report_line(&rep, "JSON texts");
    free(x);
    free(a);
    free(b);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* A valid text with one piece replaced: OLD (which must occur) by NEW. */
static char *replaced(const char *text, const char *old, const char *new)
{
    const char *at = strstr(text, old);
    ck_assert_msg(at != NULL, "\"%s\" not in the base text", old);
    size_t head = (size_t)(at - text), lo = strlen(old), ln = strlen(new);
    char *out = malloc(strlen(text) - lo + ln + 1);
    ck_assert(out != NULL);
    memcpy(out, text, head);
    memcpy(out + head, new, ln);
    strcpy(out + head + ln, at + lo);
    return out;
}

/* TEXT must be rejected with FPK_EFORMAT, a message containing MESSAGE,
 * and the destination untouched. */
static void expect_rejected(tu_report *rep, const char *text, const char *message)
{
    fpk_stats *s = malloc(sizeof *s), *keep = malloc(sizeof *keep);
    ck_assert(s && keep);
    memset(s, 0x5a, sizeof *s);
    memcpy(keep, s, sizeof *s);
    fpk_error err = {0};
    int rc = fpk_stats_from_json(s, text, &err);
    bool untouched = memcmp(s, keep, sizeof *s) == 0;
    if (bad(rep, rc != FPK_EFORMAT || err.code != FPK_EFORMAT || !strstr(err.msg, message) ||
                     strncmp(err.msg, "stats JSON: ", 12) != 0 || !untouched))
        tu_fail(rep, "rc %d, message \"%s\", wanted one containing \"%s\"%s; text %s", rc,
                err.msg, message, untouched ? "" : " (and the destination changed)",
                text ? text : "(null)");
    free(s);
    free(keep);
}

/* Malformed statistics are rejected with FPK_EFORMAT and a message naming
 * what is wrong; the destination is left alone. */
START_TEST(test_json_malformed)
{
    const char *base =
        "{\"round\":\"rne\",\"scale\":1.0,\"ftz\":false,\"saturate\":false,"
        "\"count\":5,\"zeros\":1,\"nonfinite\":1,\"amax\":1.0,"
        "\"log2_hist\":{\"min\":-30,\"counts\":[1,0,0,0,0,0,0,0,0,0,1,0,0,0,0,"
        "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]},"
        "\"formats\":{\"fp16\":{\"underflow\":1,\"subnormal\":1,\"overflow\":0}}}";
    static const struct {
        const char *old, *new, *message;
    } cases[] = {
        {"{\"round\"", "[{\"round\"", "line 1"},                       /* bad JSON */
        {"\"ftz\":false", "\"ftz\":false,\"ftz\":true", "duplicate"},   /* key twice */
        {"\"round\":\"rne\",", "", "\"round\" is missing"},
        {"\"rne\"", "\"nearest\"", "\"round\" must be one of"},
        {"\"rne\"", "3", "\"round\" must be one of"},
        {"\"scale\":1.0", "\"scale\":\"1\"", "\"scale\" must be a number"},
        {"\"scale\":1.0", "\"scale\":0", "\"scale\" must be finite and positive"},
        {"\"scale\":1.0", "\"scale\":-1.0", "\"scale\" must be finite and positive"},
        {"\"scale\":1.0", "\"scale\":9007199254740993", "\"scale\" must be a number"},
        {"\"ftz\":false", "\"ftz\":0", "\"ftz\" must be true or false"},
        {"\"saturate\":false,", "", "\"saturate\" is missing"},
        {"\"count\":5", "\"count\":-5", "\"count\" is negative"},
        {"\"count\":5", "\"count\":5.0", "\"count\" must be an integer"},
        {"\"count\":5", "\"count\":6", "\"count\" 6 is not zeros + nonfinite"},
        {"\"zeros\":1", "\"zeros\":null", "\"zeros\" must be an integer"},
        {"\"amax\":1.0", "\"amax\":-1.0", "\"amax\" must not be negative"},
        {"\"amax\":1.0", "\"amax\":2.0", "\"amax\" does not lie in the histogram's top bin"},
        {"\"amax\":1.0,", "", "\"amax\" is missing"},
        {"\"log2_hist\":{", "\"log2_hist\":[],\"x\":{", "\"log2_hist\" must be an object"},
        {"\"min\":-30", "\"min\":-2000", "\"min\" must be an integer from -1080 to 1029"},
        {"\"min\":-30", "\"min\":\"-30\"", "\"min\" must be an integer"},
        {"\"min\":-30", "\"min\":1020", "counts from min 1020 run past the last bin 1029"},
        {"\"counts\":[1,", "\"counts\":[-1,", "\"counts[0]\" is negative"},
        {"\"counts\":[1,", "\"counts\":[true,", "\"counts[0]\" must be an integer count"},
        {"\"counts\":[", "\"counts\":{\"a\":1},\"x\":[", "\"counts\" must be an array"},
        {"\"fp16\":", "\"fp17\":", "unknown format \"fp17\""},
        {"\"fp16\":{", "\"half\":{\"underflow\":0,\"subnormal\":0,\"overflow\":0},\"fp16\":{",
         "format \"fp16\" appears twice"},
        {"\"underflow\":1", "\"underflow\":-1", "\"underflow\" is negative"},
        {"\"underflow\":1", "\"underflow\":4", "fp16 counts more elements than the 3"},
        {",\"overflow\":0", "", "\"overflow\" is missing"},
        {"\"fp16\":{", "\"bf16\":[],\"fp16\":{", "\"bf16\" must be an object of counts"},
        {"\"formats\":{", "\"formats\":[],\"y\":{", "\"formats\" must be an object"},
        {"\"formats\":{", "\"formats\":{\"fp64\":{},\"fp32\":{},\"tf32\":{},\"bf16\":{},"
                          "\"e4m3\":{},\"e5m2\":{},\"e2m1\":{},\"e3m2\":{},\"e2m3\":{},"
                          "\"e3m4\":{},\"e6m1\":{},\"e4m2\":{},\"e5m3\":{},\"e3m3\":{},"
                          "\"e2m2\":{},\"e6m2\":{},",
         "17 formats, more than 16"},
    };
    tu_report rep;
    tu_report_init(&rep, SUITE);
    fpk_stats *s = malloc(sizeof *s), *keep = malloc(sizeof *keep);
    ck_assert(s && keep);

    fpk_error err = {0};
    if (bad(&rep, fpk_stats_from_json(s, base, &err) != FPK_OK))
        tu_fail(&rep, "the base text was rejected: %s", err.msg);
    /* unknown keys are ignored: statistics may sit in a larger report */
    char *extra = replaced(base, "\"count\"", "\"name\":\"grad/w\",\"count\"");
    if (bad(&rep, fpk_stats_from_json(keep, extra, &err) != FPK_OK ||
                      memcmp(s, keep, sizeof *s) != 0))
        tu_fail(&rep, "an unknown key changed the result: %s", err.msg);
    free(extra);

    for (size_t i = 0; i < COUNT(cases); i++) {
        char *text = replaced(base, cases[i].old, cases[i].new);
        expect_rejected(&rep, text, cases[i].message);
        free(text);
    }
    expect_rejected(&rep, NULL, "stats JSON: no text");
    expect_rejected(&rep, "", "stats JSON: line 1");
    /* No fpk_error: the code alone. */
    if (bad(&rep, fpk_stats_from_json(s, "{}", NULL) != FPK_EFORMAT))
        tu_fail(&rep, "\"{}\" without an fpk_error was not rejected");
    tu_report_line(&rep, "malformed JSON");
    free(s);
    free(keep);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

static Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("stats");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_scaled_hand);
    tcase_add_test(tc, test_scaled_edges);
    tcase_add_test(tc, test_scaled_random);
    tcase_add_test(tc, test_scaled_sr);
    tcase_add_test(tc, test_stats_thresholds_by_hand);
    tcase_add_test(tc, test_stats_thresholds_random);
    tcase_add_test(tc, test_stats_scaled_ref);
    tcase_add_test(tc, test_stats_no_normals);
    tcase_add_test(tc, test_stats_merge);
    tcase_add_test(tc, test_stats_sr);
    tcase_add_test(tc, test_json_round_trip);
    tcase_add_test(tc, test_json_malformed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    seed = tu_seed(SUITE);
    SRunner *sr = srunner_create(stats_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
