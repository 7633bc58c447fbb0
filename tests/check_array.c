/* The array paths against the scalar core they must equal, bit for bit and
 * flag for flag, on every set of vector kernels this CPU runs (FPK_ISA
 * selects each in turn):
 *   - fpk_array_convert and fpk_array_quantize of every fp16 and bf16
 *     encoding and every 8-bit one, and of random float32 values (half of
 *     them near the target's thresholds, half any bits), into the fast
 *     formats and a few others, in every mode and option variant, against
 *     fpk_convert element by element (the flags compared per call of a
 *     few elements); also with MXCSR set to flush, read denormals as zero
 *     and round toward zero, which must change nothing;
 *   - fpk_stats_add_array and fpk_stats_add_tensor against fpk_stats_add
 *     on the same values as doubles, for every dtype, mode, option, a
 *     range of scales and two sets of formats;
 *   - fpk_array_quantize_sqerr and fpk_array_sqerr against the squared
 *     errors of fpk_convert's results, lane by lane, flags and SR counters
 *     too, also under that MXCSR;
 *   - the same results with 1 and 2 threads, from an array split into
 *     calls anywhere, and from calls made by the threads of the caller's
 *     own OpenMP region;
 *   - with every floating-point exception trapped: no trap, no host flag
 *     left raised, the same results.
 * fpk_convert and fpk_stats_add are themselves checked against MPFR
 * (check_convert, check_stats).  FPK_EXHAUSTIVE raises the random count
 * to 10^7 float32 per format and mode. */
#define _GNU_SOURCE /* feenableexcept */
#include <check.h>
#include <fenv.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "testutil.h"

#define SUITE "check_array"

static uint64_t seed;

/* The sets of kernels this CPU runs, by their FPK_ISA names. */
static const char *isas[3];
static int nisas;

static void find_isas(void)
{
    static const char *const names[] = {"c", "avx2", "avx512"};
    for (int i = 0; i < 3; i++) {
        setenv("FPK_ISA", names[i], 1);
        if (strcmp(fpk_array_isa(), names[i]) == 0)
            isas[nisas++] = names[i];
    }
    unsetenv("FPK_ISA");
    printf("%s: kernel sets:", SUITE);
    for (int i = 0; i < nisas; i++)
        printf(" %s", isas[i]);
    printf("\n");
}

static const fpk_round all_modes[] = {FPK_RNE, FPK_RNA, FPK_RTZ, FPK_RUP,
                                      FPK_RDN, FPK_ROD, FPK_SR};
#define MODE_COUNT 7

/* Targets: the fast ones, then some the scalar path serves. */
static const fpk_format *target(int i)
{
    static const char *const names[] = {"fp16", "bf16", "tf32", "e4m3", "e5m2",
                                        "fp32", "fp64", "e3m2"};
    return i < 8 ? fpk_format_lookup(names[i]) : NULL;
}
#define FAST_TARGETS 5
#define TARGETS 8

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    return p;
}

static uint64_t load(const void *x, size_t size, size_t i)
{
    uint64_t b = 0;
    switch (size) {
    case 1: b = ((const uint8_t *)x)[i]; break;
    case 2: b = ((const uint16_t *)x)[i]; break;
    case 4: b = ((const uint32_t *)x)[i]; break;
    default: memcpy(&b, (const uint8_t *)x + 8 * i, 8); break;
    }
    return b;
}

/* One conversion to check. */
typedef struct conv {
    const fpk_format *to;
    bool quant;
    fpk_ctx c;
    const char *variant;
} conv;

static const char *conv_name(const conv *k)
{
    return k->quant ? "quantize" : "convert";
}

/* Converts X[0..N-1] (dtype FROM) as K says with every kernel set, GROUP
 * elements a call, and compares each element with fpk_convert's and each
 * call's flags with the OR of the elements'. */
static void check_conv(tu_report *rep, const conv *k, fpk_dtype from, const void *x, size_t n,
                       size_t group)
{
    const fpk_format *src = fpk_dtype_format(from);
    size_t esize = fpk_dtype_size(from), osize = k->quant ? 4 : fpk_array_size(k->to);
    size_t groups = (n + group - 1) / group;
    uint64_t *want = xmalloc(n * sizeof *want);
    unsigned *want_flags = calloc(groups, sizeof *want_flags);
    void *got = xmalloc(n * osize);
    ck_assert_ptr_nonnull(want_flags);
    fpk_ctx e = k->c;
    for (size_t i = 0; i < n; i++) {
        e.flags = 0;
        e.sr_counter = k->c.sr_counter + i;
        fpk_bits b = fpk_convert(k->to, src, load(x, esize, i), &e);
        if (k->quant) {
            fpk_ctx exact = fpk_ctx_default();
            b = fpk_convert(&fpk_fp32, k->to, b, &exact);
        }
        want[i] = b;
        want_flags[i / group] |= e.flags;
    }
    for (int s = 0; s < nisas; s++) {
        setenv("FPK_ISA", isas[s], 1);
        memset(got, 0xa5, n * osize);
        for (size_t g = 0; g < groups; g++) {
            size_t first = g * group, len = n - first < group ? n - first : group;
            fpk_ctx c = k->c;
            c.sr_counter += first;
            const void *xs = (const uint8_t *)x + esize * first;
            void *zs = (uint8_t *)got + osize * first;
            if (k->quant)
                ck_assert(fpk_array_quantize(k->to, zs, from, xs, len, &c, 1));
            else
                fpk_array_convert(k->to, zs, from, xs, len, &c, 1);
            uint64_t counter = k->c.sr_counter + first + (k->c.round == FPK_SR ? len : 0);
            if (c.flags != want_flags[g] || c.sr_counter != counter)
                tu_fail(rep,
                        "%s %s %s->%s %s %s elements %zu..%zu: flags %s, counter %" PRIu64
                        "; expected %s, %" PRIu64,
                        isas[s], conv_name(k), fpk_dtype_name(from), k->to->name,
                        tu_mode_name(k->c.round), k->variant, first, first + len - 1,
                        tu_flags_name(c.flags).s, c.sr_counter, tu_flags_name(want_flags[g]).s,
                        counter);
            else
                rep->cases++, rep->total_cases++;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t z = load(got, osize, i);
            if (z != want[i])
                tu_fail(rep, "%s %s %s->%s %s %s x=%0*" PRIx64 ": %" PRIx64 ", expected %" PRIx64,
                        isas[s], conv_name(k), fpk_dtype_name(from), k->to->name,
                        tu_mode_name(k->c.round), k->variant, (int)(2 * esize),
                        load(x, esize, i), z, want[i]);
            else
                rep->cases++, rep->total_cases++;
        }
    }
    unsetenv("FPK_ISA");
    free(got);
    free(want_flags);
    free(want);
}

/* X[0..N-1] of dtype FROM into the targets T0 .. T1-1, as encodings and
 * float32 values, in every mode and VARIANTS variants. */
static void check_targets(tu_report *rep, fpk_dtype from, const void *x, size_t n, int t0,
                          int t1, int variants, size_t group)
{
    for (int t = t0; t < t1; t++)
        for (int v = 0; v < variants; v++)
            for (int m = 0; m < MODE_COUNT; m++)
                for (int q = 0; q < 2; q++) {
                    conv k = {target(t), q, tu_ctx(all_modes[m], &tu_variants[v]),
                              tu_variants[v].name};
                    if (q && k.to->man_bits > 23)
                        continue;
                    k.c.sr_seed = seed + (uint64_t)t;
                    k.c.sr_counter = (uint64_t)v << 40;
                    check_conv(rep, &k, from, x, n, group);
                }
}

/* Every encoding of the 16- and 8-bit dtypes. */
START_TEST(test_every_small_input)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    static const fpk_dtype dtypes[] = {FPK_DTYPE_F16, FPK_DTYPE_BF16, FPK_DTYPE_E4M3,
                                       FPK_DTYPE_E5M2};
    for (size_t d = 0; d < 4; d++) {
        fpk_dtype t = dtypes[d];
        size_t size = fpk_dtype_size(t), n = (size_t)1 << (8 * size);
        /* The 8-bit encodings repeated, so that calls reach the kernels in
         * whole blocks. */
        size_t reps = size == 1 ? 16 : 1;
        void *x = xmalloc(n * reps * size);
        for (size_t i = 0; i < n * reps; i++)
            if (size == 1)
                ((uint8_t *)x)[i] = (uint8_t)i;
            else
                ((uint16_t *)x)[i] = (uint16_t)i;
        check_targets(&rep, t, x, n * reps, 0, FAST_TARGETS, TU_VARIANT_COUNT, 64);
        check_targets(&rep, t, x, n * reps, FAST_TARGETS, TARGETS, 1, 4096);
        tu_report_line(&rep, "every %s into %d formats x %d modes x %d variants x 2",
                       fpk_dtype_name(t), TARGETS, MODE_COUNT, TU_VARIANT_COUNT);
        free(x);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* N float32 encodings: half near F's thresholds (tu_gen), half any bits. */
static uint32_t *random_f32(tu_rng *rng, const fpk_format *f, size_t n)
{
    uint32_t *x = xmalloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (uint32_t)(i % 2 ? tu_rng_next(rng) >> 32 : tu_gen(&fpk_fp32, f, rng));
    return x;
}

/* N float32 encodings none above F's largest finite value, so that the
 * kernels' lines take their common path: half near F's thresholds, half
 * any bits below it. */
static uint32_t *finite_f32(tu_rng *rng, const fpk_format *f, size_t n)
{
    fpk_ctx exact = fpk_ctx_default();
    uint32_t max = (uint32_t)fpk_convert(&fpk_fp32, f, f->max_finite, &exact);
    uint32_t *x = xmalloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        do
            x[i] = (uint32_t)(i % 2 ? tu_rng_next(rng) >> 32 : tu_gen(&fpk_fp32, f, rng));
        while ((x[i] & 0x7fffffffu) > max);
    return x;
}

START_TEST(test_random_f32)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed);
    size_t n = tu_exhaustive() ? 10000000 : 100000;
    for (int t = 0; t < TARGETS; t++) {
        size_t count = t < FAST_TARGETS ? n : n / 10;
        uint32_t *x = random_f32(&rng, target(t), count);
        check_targets(&rep, FPK_DTYPE_F32, x, count, t, t + 1, 1, 64);
        /* The other variants on a tenth. */
        check_targets(&rep, FPK_DTYPE_F32, x, count / 10, t, t + 1, TU_VARIANT_COUNT, 64);
        free(x);
        tu_report_line(&rep, "%zu random float32 into %s x %d modes", count, target(t)->name,
                       MODE_COUNT);
        if (t >= FAST_TARGETS)
            continue;
        x = finite_f32(&rng, target(t), count);
        check_targets(&rep, FPK_DTYPE_F32, x, count, t, t + 1, 1, 64);
        check_targets(&rep, FPK_DTYPE_F32, x, count / 10, t, t + 1, TU_VARIANT_COUNT, 64);
        free(x);
        tu_report_line(&rep, "%zu random finite float32 into %s x %d modes", count,
                       target(t)->name, MODE_COUNT);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* SR with sr_bits from 1 to 64: the kernels take up to 32, the scalar
 * path the rest. */
START_TEST(test_sr_bits)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 1);
    static const int bits[] = {1, 2, 7, 13, 31, 32, 33, 64, 0};
    for (int t = 0; t < FAST_TARGETS; t++) {
        uint32_t *x = random_f32(&rng, target(t), 20000);
        for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++)
            for (int q = 0; q < 2; q++) {
                conv k = {target(t), q, tu_ctx(FPK_SR, &tu_variants[0]), "plain"};
                k.c.sr_bits = bits[b];
                k.c.sr_seed = tu_rng_next(&rng);
                k.c.sr_counter = tu_rng_next(&rng);
                check_conv(&rep, &k, FPK_DTYPE_F32, x, 20000, 1000);
            }
        free(x);
    }
    tu_report_line(&rep, "SR with sr_bits 0 to 64");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* SR at its boundaries, where each bit of the random number decides:
 * float32 values far enough below half of F's least subnormal that the
 * fraction of an ulp they make is their significand sig times 2^-32
 * (exponent field 118 + emin - man_bits), so sig can be made one more
 * than element k's random number r (rounded away, to the least
 * subnormal) or r itself (to zero); with sr_bits b, r's top b bits and
 * sig's.  For the elements whose r lies in [2^23, 2^24 - 1), a 512th;
 * the others get random values. */
START_TEST(test_sr_edges)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 3);
    enum { N = 1 << 18 };
    static const int subnormal_targets[] = {0, 3, 4}; /* fp16, e4m3, e5m2 */
    static const int bits[] = {32, 24};
    uint32_t *x = xmalloc(N * sizeof *x);
    for (size_t t = 0; t < sizeof subnormal_targets / sizeof subnormal_targets[0]; t++)
        for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
            const fpk_format *f = target(subnormal_targets[t]);
            fpk_ctx c = tu_ctx(FPK_SR, &tu_variants[0]);
            c.sr_seed = tu_rng_next(&rng);
            c.sr_counter = tu_rng_next(&rng) >> 16;
            c.sr_bits = bits[b];
            const uint32_t exp_field = (uint32_t)(118 + f->emin - f->man_bits) << 23;
            const uint32_t low = (UINT32_C(1) << (32 - bits[b])) - 1; /* bits the rule ignores */
            size_t edges = 0, away = 0;
            for (size_t k = 0; k < N; k++) {
                uint32_t r = (uint32_t)(fpk_sr_hash(c.sr_seed, c.sr_counter + k) >> 32);
                uint32_t sig = k % 2 ? (r | low) + 1 : r & ~low; /* away, or not */
                if (r < (UINT32_C(1) << 23) || r >= (UINT32_C(1) << 24) - 1 - low) {
                    x[k] = (uint32_t)(tu_rng_next(&rng) >> 32);
                    continue;
                }
                x[k] = (k % 4 < 2 ? 0 : 0x80000000u) | exp_field | (sig & 0x7fffffu);
                fpk_ctx e = c;
                e.sr_counter = c.sr_counter + k;
                fpk_bits z = fpk_convert(f, &fpk_fp32, x[k], &e);
                edges++;
                away += (z & ~f->sign_mask) == 1;
                if ((z & ~f->sign_mask) != (k % 2 ? 1u : 0u))
                    tu_fail(&rep, "fpk_convert SR %s bits %d x=%08" PRIx32 " r=%08" PRIx32
                                  ": %" PRIx64 ", expected the %s neighbour",
                            f->name, bits[b], x[k], r, z, k % 2 ? "away" : "zero");
            }
            for (int q = 0; q < 2; q++) {
                conv k = {f, q, c, "plain"};
                check_conv(&rep, &k, FPK_DTYPE_F32, x, N, N);
                check_conv(&rep, &k, FPK_DTYPE_F32, x, N / 4, 100);
            }
            tu_report_line(&rep, "SR edges into %s, sr_bits %d: %zu elements, %zu rounded away",
                           f->name, bits[b], edges, away);
        }
    free(x);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The squared errors' lanes, as fpk_array_sqerr defines them: the terms
 * of the K-th nonzero element of X and its result Y (float32 encodings)
 * added to lane K % FPK_LANES of X2 and E2. */
static void sqerr_ref(const uint32_t *x, const uint32_t *y, size_t n, double *x2, double *e2)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t ax = x[i] & 0x7fffffffu, ay = y[i] & 0x7fffffffu;
        if (ax == 0)
            continue;
        size_t lane = k++ % FPK_LANES;
        if (ax >= 0x7f800000u || ay >= 0x7f800000u)
            continue;
        float xf, yf;
        memcpy(&xf, &x[i], sizeof xf);
        memcpy(&yf, &y[i], sizeof yf);
        volatile double xd = xf, ed = (double)yf - xd, xx = xd * xd, ee = ed * ed;
        x2[lane] += xx;
        e2[lane] += ee;
    }
}

/* fpk_array_quantize_sqerr of X[0..N-1] into F under C, GROUP elements a
 * call, the lanes carried from call to call (with X2 and without, which
 * must not change E2), and fpk_array_sqerr of X against the scalar
 * core's results, against sqerr_ref and fpk_convert's flags and SR
 * counters, with every kernel set.  Calls of 16 elements make each
 * lane's sum one element's term, so that no term can hide in a sum. */
static void check_sqerr(tu_report *rep, const fpk_format *f, const fpk_ctx *c0,
                        const char *variant, const uint32_t *x, size_t n, size_t group)
{
    uint32_t *y = xmalloc(n * sizeof *y);
    size_t groups = (n + group - 1) / group;
    unsigned *want_flags = calloc(groups, sizeof *want_flags);
    double (*want)[2][FPK_LANES] = calloc(groups, sizeof *want);
    ck_assert_ptr_nonnull(want_flags);
    ck_assert_ptr_nonnull(want);
    for (size_t g = 0; g < groups; g++)
        want_flags[g] = c0->flags; /* (raised before the call, and kept) */
    fpk_ctx e = *c0;
    for (size_t i = 0; i < n; i++) {
        fpk_ctx exact = fpk_ctx_default();
        e.flags = 0;
        e.sr_counter = c0->sr_counter + i;
        y[i] = (uint32_t)fpk_convert(&fpk_fp32, f, fpk_convert(f, &fpk_fp32, x[i], &e), &exact);
        want_flags[i / group] |= e.flags;
    }
    double lx[FPK_LANES] = {0}, le[FPK_LANES] = {0};
    fenv_t env; /* the sums' environment, whatever the test's */
    fegetenv(&env);
    fesetenv(FE_DFL_ENV);
    for (size_t g = 0; g < groups; g++) {
        size_t first = g * group, len = n - first < group ? n - first : group;
        sqerr_ref(x + first, y + first, len, lx, le);
        memcpy(want[g][0], lx, sizeof lx);
        memcpy(want[g][1], le, sizeof le);
    }
    fesetenv(&env);
    for (int s = 0; s < nisas; s++) {
        setenv("FPK_ISA", isas[s], 1);
        double gx[FPK_LANES] = {0}, ge[FPK_LANES] = {0}, ge_only[FPK_LANES] = {0};
        double sx[FPK_LANES] = {0}, se[FPK_LANES] = {0};
        for (size_t g = 0; g < groups; g++) {
            size_t first = g * group, len = n - first < group ? n - first : group;
            const float *xs = (const float *)(const void *)(x + first);
            fpk_ctx c = *c0, d = *c0;
            c.sr_counter += first;
            d.sr_counter += first;
            ck_assert(fpk_array_quantize_sqerr(f, xs, len, &c, gx, ge));
            ck_assert(fpk_array_quantize_sqerr(f, xs, len, &d, NULL, ge_only));
            fpk_array_sqerr(xs, (const float *)(const void *)(y + first), len, sx, se);
            uint64_t counter = c0->sr_counter + first + (c0->round == FPK_SR ? len : 0);
            bool flags_ok = c.flags == want_flags[g] && d.flags == want_flags[g] &&
                            c.sr_counter == counter && d.sr_counter == counter;
            bool sums_ok = memcmp(gx, want[g][0], sizeof gx) == 0 &&
                           memcmp(ge, want[g][1], sizeof ge) == 0 &&
                           memcmp(ge_only, want[g][1], sizeof ge) == 0;
            bool given_ok = memcmp(sx, want[g][0], sizeof sx) == 0 &&
                            memcmp(se, want[g][1], sizeof se) == 0;
            if (!flags_ok || !sums_ok || !given_ok) {
                int l = 0;
                while (l < FPK_LANES - 1 && gx[l] == want[g][0][l] && ge[l] == want[g][1][l])
                    l++;
                tu_fail(rep,
                        "%s sqerr %s %s %s elements %zu..%zu (x %08" PRIx32
                        "...): flags %s, counter %" PRIu64 "%s%s; lane %d x2 %a e2 %a, "
                        "expected flags %s, x2 %a e2 %a",
                        isas[s], f->name, tu_mode_name(c0->round), variant, first,
                        first + len - 1, x[first], tu_flags_name(c.flags).s, c.sr_counter,
                        given_ok ? "" : ", fpk_array_sqerr differs",
                        memcmp(ge_only, ge, sizeof ge) == 0 ? "" : ", e2 without x2 differs",
                        l, gx[l], ge[l], tu_flags_name(want_flags[g]).s, want[g][0][l],
                        want[g][1][l]);
                memcpy(gx, want[g][0], sizeof gx);
                memcpy(ge, want[g][1], sizeof ge);
                memcpy(ge_only, want[g][1], sizeof ge);
                memcpy(sx, want[g][0], sizeof sx);
                memcpy(se, want[g][1], sizeof se);
            } else {
                rep->cases++, rep->total_cases++;
            }
        }
    }
    unsetenv("FPK_ISA");
    free(want);
    free(want_flags);
    free(y);
}

/* X[0..N-1] into every target float32 holds, in every mode and VARIANTS
 * variants, in calls of GROUP elements, and without options in calls of
 * 16 too (the options only choose the quantise-and-sum path, which plain
 * SR takes as well); each call's context has the flags RAISED already. */
static void check_sqerr_raised(tu_report *rep, const uint32_t *x, size_t n, int t0, int t1,
                               int variants, size_t group, unsigned raised)
{
    for (int t = t0; t < t1; t++) {
        const fpk_format *f = target(t);
        if (f->man_bits > 23) {
            double x2[FPK_LANES] = {0}, e2[FPK_LANES] = {1};
            fpk_ctx c = fpk_ctx_default();
            if (fpk_array_quantize_sqerr(f, (const float *)(const void *)x, n, &c, x2, e2) ||
                c.flags || e2[0] != 1)
                tu_fail(rep, "sqerr %s: not refused", f->name);
            continue;
        }
        for (int v = 0; v < variants; v++)
            for (int m = 0; m < MODE_COUNT; m++) {
                fpk_ctx c = tu_ctx(all_modes[m], &tu_variants[v]);
                c.sr_seed = seed + (uint64_t)t;
                c.sr_counter = (uint64_t)v << 40;
                c.flags = raised;
                if (v == 0)
                    check_sqerr(rep, f, &c, tu_variants[v].name, x, n, 16);
                check_sqerr(rep, f, &c, tu_variants[v].name, x, n, group);
            }
    }
}

static void check_sqerr_targets(tu_report *rep, const uint32_t *x, size_t n, int t0, int t1,
                                int variants, size_t group)
{
    check_sqerr_raised(rep, x, n, t0, t1, variants, group, 0);
}

START_TEST(test_sqerr)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    /* Every fp16 and bf16 value, as float32. */
    uint32_t *x = xmalloc(2 * 65536 * sizeof *x);
    fpk_ctx exact = fpk_ctx_default();
    for (uint32_t i = 0; i < 65536; i++) {
        x[i] = (uint32_t)fpk_convert(&fpk_fp32, &fpk_fp16, i, &exact);
        x[65536 + i] = i << 16;
    }
    check_sqerr_targets(&rep, x, 2 * 65536, 0, FAST_TARGETS, TU_VARIANT_COUNT, 1000);
    check_sqerr_targets(&rep, x, 2 * 65536, FAST_TARGETS, TARGETS, 1, 1000);
    tu_report_line(&rep, "every fp16 and bf16 value: squared errors in %d formats x %d modes "
                         "(x %d variants in the fast ones)",
                   TARGETS, MODE_COUNT, TU_VARIANT_COUNT);
    free(x);
    tu_rng rng;
    tu_rng_init(&rng, seed + 3);
    size_t n = tu_exhaustive() ? 10000000 : 100000;
    for (int t = 0; t < TARGETS; t++) {
        size_t count = t < FAST_TARGETS ? n : n / 10;
        x = random_f32(&rng, target(t), count);
        check_sqerr_targets(&rep, x, count, t, t + 1, 1, 4099);
        free(x);
        x = finite_f32(&rng, target(t), count);
        check_sqerr_targets(&rep, x, count, t, t + 1, 1, 65536);
        check_sqerr_targets(&rep, x, count / 10, t, t + 1, TU_VARIANT_COUNT, 333);
        /* half of them zeros (+0 or -0), as after a ReLU: the lanes follow
         * the nonzero elements' ranks, across the kernels' blocks */
        for (size_t i = 0; i < count; i++)
            if (tu_rng_next(&rng) >> 63)
                x[i] &= 0x80000000u;
        check_sqerr_targets(&rep, x, count, t, t + 1, 1, 4099);
        free(x);
        tu_report_line(&rep, "%zu random float32, %zu finite ones, and those half zeros: "
                             "squared errors in %s x %d modes",
                       count, count, target(t)->name, MODE_COUNT);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* fpk_array_quantize_sqerr_formats of X[0..N-1] into the NF formats F
 * (all under C0, or when MIXED every other one toward zero), GROUP
 * elements a call, against fpk_array_quantize_sqerr of each format in
 * turn (which check_sqerr holds to sqerr_ref): the same lanes, X2 from
 * F[0], flags and SR counters, with every kernel set. */
static void check_sqerr_formats(tu_report *rep, const fpk_format *const *f, int nf,
                                const fpk_ctx *c0, bool mixed, const uint32_t *x, size_t n,
                                size_t group)
{
    enum { MAXF = 12 };
    ck_assert_int_le(nf, MAXF);
    for (int s = 0; s < nisas; s++) {
        setenv("FPK_ISA", isas[s], 1);
        double gx[FPK_LANES] = {0}, ge[MAXF][FPK_LANES] = {{0}};
        double wx[FPK_LANES] = {0}, we[MAXF][FPK_LANES] = {{0}};
        for (size_t first = 0; first < n; first += group) {
            size_t len = n - first < group ? n - first : group;
            const float *xs = (const float *)(const void *)(x + first);
            fpk_ctx c[MAXF], d[MAXF];
            for (int j = 0; j < nf; j++) {
                c[j] = d[j] = *c0;
                if (mixed && j % 2)
                    c[j].round = d[j].round = FPK_RTZ;
                c[j].sr_counter = d[j].sr_counter = c0->sr_counter + first;
                ck_assert(fpk_array_quantize_sqerr(f[j], xs, len, &d[j], j ? NULL : wx, we[j]));
            }
            ck_assert(fpk_array_quantize_sqerr_formats(nf, f, xs, len, c, gx, &ge[0][0]));
            int bad = memcmp(gx, wx, sizeof gx) != 0 ? 0 : -1;
            for (int j = 0; j < nf && bad < 0; j++)
                if (memcmp(ge[j], we[j], sizeof ge[j]) != 0 || c[j].flags != d[j].flags ||
                    c[j].sr_counter != d[j].sr_counter)
                    bad = j;
            if (bad >= 0) {
                tu_fail(rep,
                        "%s sqerr_formats (%d, the first %s) %s%s elements %zu..%zu: format %d "
                        "(%s) differs from its own call: flags %s, expected %s",
                        isas[s], nf, f[0]->name, tu_mode_name(c0->round),
                        mixed ? " (every other rtz)" : "", first,
                        first + len - 1, bad, f[bad]->name, tu_flags_name(c[bad].flags).s,
                        tu_flags_name(d[bad].flags).s);
                memcpy(gx, wx, sizeof gx);
                memcpy(ge, we, sizeof ge);
            } else {
                rep->cases++, rep->total_cases++;
            }
        }
    }
    unsetenv("FPK_ISA");
}

/* One call over more than two kernel blocks of nonzero elements in which a
 * flag's first cause, or the first magnitude too large for a format, comes
 * only in the third: the kernels may look at less once a block (or an
 * earlier call) has raised the flags, and must not miss what comes later.  The first 8192 are 1.0
 * (exact in every format) or inexact ones in [1, 2) (none tiny, or one
 * tiny), the first few zeros so that blocks leave elements to the next;
 * then a tiny one (below every format's least normal), an inexact one,
 * float32's largest (overflowing or clamped), infinity or NaN, 100
 * elements later or last.  N is not a multiple of 8, so the last is
 * packed after the vectors, and the nonzero elements are a multiple of 16,
 * so in the call over all N it is rounded in a whole group of them. */
START_TEST(test_sqerr_late)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    static const uint32_t late[] = {0x00100001u, 0x3f800001u, 0x7f7fffffu, 0x7f800000u,
                                    0x7fc00000u};
    enum { FIRST = 8192, N = FIRST + 1005, ZEROS = N % 16 };
    uint32_t *x = xmalloc(N * sizeof *x);
    tu_rng rng;
    tu_rng_init(&rng, seed + 9);
    for (int start = 0; start < 3; start++) /* inexact, exact, inexact with a tiny one */
        for (size_t k = 0; k < sizeof late / sizeof *late; k++)
            for (int w = 0; w < 2; w++) {
                for (size_t i = 0; i < N; i++)
                    x[i] = i < ZEROS ? 0
                           : start == 1 && i < FIRST
                               ? 0x3f800000u
                               : 0x3f800001u | (uint32_t)(tu_rng_next(&rng) >> 41);
                if (start == 2)
                    x[20] = late[0];
                x[w ? N - 1 : FIRST + 100] = late[k];
                check_sqerr_targets(&rep, x, N, 0, FAST_TARGETS, 1, N);
                /* the flags a caller's earlier calls raised: nothing to
                 * look for from the start but an overflow or a NaN */
                check_sqerr_raised(&rep, x, N, 0, FAST_TARGETS, 1, N,
                                   FPK_INEXACT | FPK_UNDERFLOW);
            }
    free(x);
    tu_report_line(&rep, "a flag's first cause or an overflow after two blocks or last: "
                         "squared errors in %d formats x %d modes",
                   FAST_TARGETS, MODE_COUNT);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Several formats at once: the fast ones (all five, two and three of
 * them, and all five with every other one toward zero), the fast ones with
 * a slow one among them, and more than a kernel takes in one pass, in
 * every mode (SR: no kernel) and variant, over random float32 (a few above
 * every format's range), those half zeros, half zeros none above e4m3's
 * range (where, once the flags are raised, the kernels round up to four
 * formats of a mode a loop), and half zeros none at or above 2^113, or
 * 2^112, but many just below (bfloat16 rounds in the vector unit below
 * 2^112, tf32 below 2^115, and in the integers above), in calls that cut
 * the kernels' blocks anywhere. */
START_TEST(test_sqerr_formats)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    const fpk_format *fast[5], *mixed[6], *many[12];
    for (int t = 0; t < 5; t++)
        fast[t] = mixed[t] = target(t);
    mixed[5] = mixed[2];
    mixed[2] = target(7); /* e3m2: no kernel */
    for (int j = 0; j < 12; j++)
        many[j] = target(j % FAST_TARGETS);
    const struct {
        const fpk_format *const *f;
        int n;
        bool mixed;
    } sets[] = {{fast, 5, false}, {fast, 2, false}, {fast + 2, 3, false}, {fast, 5, true},
                {mixed, 6, false}, {many, 12, false}, {fast + 3, 1, false}};
    tu_rng rng;
    tu_rng_init(&rng, seed + 5);
    size_t n = tu_exhaustive() ? 1000000 : 60000;
    uint32_t *x = random_f32(&rng, target(3), n);
    for (int zeros = 0; zeros < 5; zeros++) {
        if (zeros == 2) { /* none above e4m3's range: every format's loops without flags */
            free(x);
            x = finite_f32(&rng, target(3), n);
        }
        /* many just below 2^113 (bfloat16's C, 2^(e + 16), would be
         * infinite), then below 2^112 (the largest finite) */
        uint32_t edge = zeros == 3 ? 0x77ffffffu : 0x777fffffu;
        for (size_t i = 0; zeros >= 3 && i < n; i++) {
            uint32_t v = (uint32_t)(tu_rng_next(&rng) >> 32), mag = v & 0x7fffffffu;
            x[i] = (v & 0x80000000u) | (mag > edge ? edge - (mag & 0xffff) : mag);
        }
        for (size_t i = 0; zeros && i < n; i++)
            if (tu_rng_next(&rng) >> 63)
                x[i] &= 0x80000000u;
        for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++)
            for (int v = 0; v < TU_VARIANT_COUNT; v++)
                for (int m = 0; m < MODE_COUNT; m++) {
                    fpk_ctx c = tu_ctx(all_modes[m], &tu_variants[v]);
                    c.sr_seed = seed;
                    check_sqerr_formats(&rep, sets[k].f, sets[k].n, &c, sets[k].mixed, x, n,
                                        3001);
                    if (v == 0)
                        check_sqerr_formats(&rep, sets[k].f, sets[k].n, &c, sets[k].mixed, x, n,
                                            n);
                }
    }
    free(x);
    tu_report_line(&rep, "%zu random float32, then half zeros, then half zeros and none above "
                         "e4m3's range, then half zeros and none at or above 2^113, or 2^112: "
                         "squared errors of 1, 2, 3, 5 (and 5 of two modes), 6 and 12 formats "
                         "at once x %d modes x %d variants",
                   n, MODE_COUNT, TU_VARIANT_COUNT);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* MXCSR (x86) set to FTZ, DAZ and round toward zero changes nothing: the
 * hardware paths give their rounding mode in the instruction, and the squared errors
 * are summed in the default environment. */
START_TEST(test_mxcsr)
{
#if defined(__x86_64__)
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 2);
    unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | 0x8040 | 0x6000); /* FTZ, DAZ, round toward zero */
    for (int t = 0; t < FAST_TARGETS; t++) {
        uint32_t *x = random_f32(&rng, target(t), 50000);
        check_targets(&rep, FPK_DTYPE_F32, x, 50000, t, t + 1, 1, 50);
        free(x);
    }
    uint32_t *sub = xmalloc(65536 * sizeof *sub); /* float32 subnormals among them */
    for (uint32_t i = 0; i < 65536; i++)
        sub[i] = i % 3 ? i << 16 : (i * 0x9e3779b9u) >> 8;
    check_sqerr_targets(&rep, sub, 65536, 0, FAST_TARGETS, 1, 1000);
    free(sub);
    if ((_mm_getcsr() & 0xffc0) != ((saved | 0x8040 | 0x6000) & 0xffc0))
        tu_fail(&rep, "MXCSR's modes changed by a call");
    _mm_setcsr(saved);
    tu_report_line(&rep, "under MXCSR FTZ|DAZ|RZ");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
#else
    printf("%s: MXCSR: not an x86-64 host\n", SUITE);
#endif
}
END_TEST

#if defined(__GLIBC__)
/* A's ctx: mode M (RNE, RTZ, SR) and, with V, tininess before rounding
 * (the F16C path). */
static fpk_ctx trap_ctx(int m, int v)
{
    static const fpk_round modes[] = {FPK_RNE, FPK_RTZ, FPK_SR};
    fpk_ctx c = fpk_ctx_default();
    c.round = modes[m];
    c.tiny_before = v;
    return c;
}

/* Traps every floating-point exception (ON) or none, with the flags
 * clear, in this thread and in OpenMP's, which the library's calls of 2
 * threads use too. */
static void set_traps(bool on)
{
#ifdef _OPENMP
#pragma omp parallel num_threads(2)
#endif
    {
        feclearexcept(FE_ALL_EXCEPT);
        if (on)
            feenableexcept(FE_ALL_EXCEPT);
        else
            fedisableexcept(FE_ALL_EXCEPT);
    }
}

/* Runs CALL with every floating-point exception trapped and the flags
 * clear; returns the flags it left raised in this thread. */
#define TRAPPED(call)                                                        \
    ({                                                                       \
        set_traps(true);                                                     \
        call;                                                                \
        int raised_ = fetestexcept(FE_ALL_EXCEPT);                           \
        set_traps(false);                                                    \
        raised_;                                                             \
    })
#endif

/* With every floating-point exception trapped (feenableexcept), the array
 * calls neither trap nor leave a host flag raised (their vector
 * instructions run in the default environment), and give what they give
 * untrapped: signaling NaNs, the largest float32, tiny values and float32
 * subnormals among the inputs, float32 and fp16 sources, 2 threads (the
 * OpenMP threads trapping too). */
START_TEST(test_traps)
{
#if defined(__GLIBC__)
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 9);
    size_t n = 3 * 65536 + 77;
    uint32_t *x = random_f32(&rng, &fpk_e4m3, n);
    static const uint32_t odd[] = {0x7fa00000, 0xffc00001, 0x7f7fffff, 0xff800000,
                                   0x33800001, 0x00000001, 0x80400000, 0x477ff000};
    for (size_t i = 0; i < n; i += 97)
        x[i] = odd[(i / 97) % (sizeof odd / sizeof odd[0])];
    uint16_t *h = xmalloc(n * sizeof *h); /* fp16: 0x7d00 a signaling NaN */
    for (size_t i = 0; i < n; i++)
        h[i] = i % 89 ? (uint16_t)(x[i] >> 16) : 0x7d00;
    float *za = xmalloc(n * 4), *zb = xmalloc(n * 4);
    fpk_stats *sa = xmalloc(sizeof *sa), *sb = xmalloc(sizeof *sb);
    const fpk_format *fmts[FAST_TARGETS];
    for (int t = 0; t < FAST_TARGETS; t++)
        fmts[t] = target(t);
    for (int s = 0; s < nisas; s++) {
        setenv("FPK_ISA", isas[s], 1);
        for (int t = 0; t < FAST_TARGETS; t++)
            for (int m = 0; m < 3; m++)
                for (int v = 0; v < 2; v++) {
                    const fpk_format *f = target(t);
                    fpk_ctx a = trap_ctx(m, v), b = a;
                    int raised = TRAPPED(fpk_array_quantize(f, za, FPK_DTYPE_F32, x, n, &a, 2));
                    ck_assert(fpk_array_quantize(f, zb, FPK_DTYPE_F32, x, n, &b, 2));
                    bool same = memcmp(za, zb, n * 4) == 0 && a.flags == b.flags;
                    a = b = trap_ctx(m, v);
                    raised |= TRAPPED(fpk_array_convert(f, za, FPK_DTYPE_F16, h, n, &a, 2));
                    fpk_array_convert(f, zb, FPK_DTYPE_F16, h, n, &b, 2);
                    same = same && memcmp(za, zb, n * fpk_array_size(f)) == 0 && a.flags == b.flags;
                    if (raised || !same)
                        tu_fail(&rep, "%s %s %s%s: %s, host flags %#x left raised", isas[s],
                                f->name, tu_mode_name(a.round), v ? " tiny_before" : "",
                                same ? "same results" : "other results", (unsigned)raised);
                    else
                        rep.cases++, rep.total_cases++;
                }
        for (int m = 0; m < 3; m++) {
            fpk_ctx c = trap_ctx(m, 0);
            fpk_stats_init(sb, fmts, FAST_TARGETS, 3.0, &c);
            fpk_stats_init(sa, fmts, FAST_TARGETS, 3.0, &c);
            int raised = TRAPPED(fpk_stats_add_array(sa, FPK_DTYPE_F32, x, n, 2));
            raised |= TRAPPED(fpk_stats_add_array(sa, FPK_DTYPE_F16, h, n, 2));
            fpk_stats_add_array(sb, FPK_DTYPE_F32, x, n, 2);
            fpk_stats_add_array(sb, FPK_DTYPE_F16, h, n, 2);
            fpk_ctx ca[FAST_TARGETS], cb[FAST_TARGETS];
            double x2a[FPK_LANES] = {0}, x2b[FPK_LANES] = {0};
            double e2a[FPK_LANES * FAST_TARGETS] = {0}, e2b[FPK_LANES * FAST_TARGETS] = {0};
            for (int t = 0; t < FAST_TARGETS; t++)
                ca[t] = cb[t] = trap_ctx(m == 2 ? 0 : m, 0);
            ck_assert(fpk_array_quantize_sqerr_formats(FAST_TARGETS, fmts, (const float *)x, n,
                                                       cb, x2b, e2b));
            raised |= TRAPPED(fpk_array_quantize_sqerr_formats(FAST_TARGETS, fmts,
                                                               (const float *)x, n, ca, x2a, e2a));
            bool same = memcmp(sa, sb, sizeof *sa) == 0 && memcmp(x2a, x2b, sizeof x2a) == 0 &&
                        memcmp(e2a, e2b, sizeof e2a) == 0;
            if (raised || !same)
                tu_fail(&rep, "%s statistics and squared errors, %s: %s, host flags %#x left raised",
                        isas[s], tu_mode_name(c.round), same ? "same results" : "other results",
                        (unsigned)raised);
            else
                rep.cases++, rep.total_cases++;
        }
    }
    unsetenv("FPK_ISA");
    free(x);
    free(h);
    free(za);
    free(zb);
    free(sa);
    free(sb);
    tu_report_line(&rep, "every exception trapped: no trap, no flag left, the same results");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
#else
    printf("%s: traps: feenableexcept is glibc's\n", SUITE);
#endif
}
END_TEST

/* Sizes, the formats fpk_array_quantize refuses, and quantising in place. */
START_TEST(test_sizes_and_in_place)
{
    static const struct {
        const char *name;
        size_t size;
        bool quant;
    } cases[] = {{"e4m3", 1, true}, {"e5m2", 1, true}, {"e3m4", 1, true}, {"fp16", 2, true},
                 {"bf16", 2, true}, {"e8m7", 2, true}, {"tf32", 4, true}, {"fp32", 4, true},
                 {"e8m24", 8, false}, {"e9m2", 2, false}, {"fp64", 8, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const fpk_format *f = fpk_format_lookup(cases[i].name);
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fpk_array_size(f), cases[i].size);
        float z = 5;
        uint32_t x = 0x3f800000;
        fpk_ctx c = fpk_ctx_default();
        ck_assert_int_eq(fpk_array_quantize(f, &z, FPK_DTYPE_F32, &x, 1, &c, 1), cases[i].quant);
        if (!cases[i].quant)
            ck_assert(z == 5 && c.flags == 0);
    }
    tu_rng rng;
    tu_rng_init(&rng, seed + 3);
    size_t n = 3 * 65536 + 5;
    uint32_t *x = random_f32(&rng, &fpk_fp16, n), *y = xmalloc(n * 4), *z = xmalloc(n * 4);
    memcpy(y, x, n * 4);
    for (int s = 0; s < nisas; s++) {
        setenv("FPK_ISA", isas[s], 1);
        fpk_ctx c = fpk_ctx_default(), d = fpk_ctx_default();
        c.round = d.round = FPK_SR;
        ck_assert(fpk_array_quantize(&fpk_fp16, (float *)z, FPK_DTYPE_F32, x, n, &c, 2));
        memcpy(y, x, n * 4);
        ck_assert(fpk_array_quantize(&fpk_fp16, (float *)y, FPK_DTYPE_F32, y, n, &d, 2));
        ck_assert_msg(memcmp(y, z, n * 4) == 0 && c.flags == d.flags, "%s: in place differs",
                      isas[s]);
    }
    unsetenv("FPK_ISA");
    printf("%s: sizes, refusals and quantising in place: %zu elements\n", SUITE, n);
    free(x);
    free(y);
    free(z);
}
END_TEST

/* One array converted whole with 1 and 2 threads and in two calls split
 * at SPLIT: the same bits, flags and counter. */
static void check_split(tu_report *rep, const conv *k, const uint32_t *x, size_t n, size_t split)
{
    size_t osize = k->quant ? 4 : fpk_array_size(k->to);
    uint8_t *z[3];
    fpk_ctx c[3];
    for (int r = 0; r < 3; r++) {
        z[r] = xmalloc(n * osize);
        c[r] = k->c;
        size_t cut = r == 2 ? split : n;
        for (size_t first = 0; first < n; first = cut, cut = n) {
            if (k->quant)
                fpk_array_quantize(k->to, (float *)(z[r] + osize * first), FPK_DTYPE_F32,
                                   x + first, cut - first, &c[r], r == 1 ? 2 : 1);
            else
                fpk_array_convert(k->to, z[r] + osize * first, FPK_DTYPE_F32, x + first,
                                  cut - first, &c[r], r == 1 ? 2 : 1);
        }
    }
    for (int r = 1; r < 3; r++) {
        bool same = memcmp(z[0], z[r], n * osize) == 0 && c[0].flags == c[r].flags &&
                    c[0].sr_counter == c[r].sr_counter;
        if (!same)
            tu_fail(rep, "%s %s %s: %s differs from one thread in one call", conv_name(k),
                    k->to->name, tu_mode_name(k->c.round),
                    r == 1 ? "2 threads" : "two calls");
        else
            rep->cases++, rep->total_cases++;
    }
    for (int r = 0; r < 3; r++)
        free(z[r]);
}

START_TEST(test_threads)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 4);
    size_t n = 5 * 65536 + 77;
    /* The kernels' modes with every set; the scalar path (RNA, and a
     * target without kernels) with one. */
    static const fpk_round modes[] = {FPK_RNE, FPK_RTZ, FPK_SR, FPK_RNA};
    for (int t = 0; t < TARGETS; t++) {
        uint32_t *x = random_f32(&rng, target(t), n);
        for (int m = 0; m < 4; m++)
            for (int q = 0; q < 2; q++) {
                conv k = {target(t), q, tu_ctx(modes[m], &tu_variants[0]), "plain"};
                bool kernels = t < FAST_TARGETS && m < 3;
                if ((q && k.to->man_bits > 23) || (!kernels && t != 0 && t != TARGETS - 1))
                    continue;
                k.c.sr_seed = seed;
                for (int s = 0; s < (kernels ? nisas : 1); s++) {
                    setenv("FPK_ISA", isas[s], 1);
                    size_t split = 65536 + 1000 + (size_t)(tu_rng_next(&rng) % 9999);
                    check_split(&rep, &k, x, n, split);
                }
            }
        free(x);
    }
    unsetenv("FPK_ISA");
    tu_report_line(&rep, "1 and 2 threads, one call and two, %zu elements", n);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

#ifdef _OPENMP
/* The statistics of the N float32 at X into fp16 and e4m3, as JSON. */
static char *stats_json(const uint32_t *x, size_t n, int threads)
{
    static const fpk_format *const fmts[] = {&fpk_fp16, &fpk_e4m3};
    fpk_stats s;
    fpk_ctx c = fpk_ctx_default();
    fpk_stats_init(&s, fmts, 2, 1, &c);
    fpk_stats_add_array(&s, FPK_DTYPE_F32, x, n, threads);
    return fpk_stats_to_json(&s);
}

/* Calls made from the threads of the caller's own OpenMP region, each on
 * its own array, with 1 thread and 2 (nesting off: a one-thread region of
 * the call's own), then 2 nested, and from inside the caller's critical
 * section: the results of the same calls made alone.  A
 * call's threads must not share its work with the caller's, nor wait on
 * the caller's lock. */
START_TEST(test_callers_threads)
{
    enum { CALLERS = 3 };
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 9);
    size_t n = 3 * 65536 + 333;
    uint32_t *x[CALLERS];
    uint8_t *want[CALLERS];
    unsigned want_flags[CALLERS];
    char *want_stats[CALLERS];
    for (int k = 0; k < CALLERS; k++) {
        x[k] = random_f32(&rng, &fpk_e4m3, n);
        want[k] = xmalloc(n);
        fpk_ctx c = fpk_ctx_default();
        fpk_array_convert(&fpk_e4m3, want[k], FPK_DTYPE_F32, x[k], n, &c, 1);
        want_flags[k] = c.flags;
        want_stats[k] = stats_json(x[k], n, 1);
    }
    bool same[3][CALLERS];
    int levels = omp_get_max_active_levels();
    /* 1 or 2 threads a call, then 2 as a team of their own (nesting) */
    for (int threads = 1, run = 0; run < 3; run++, threads = 2) {
        omp_set_max_active_levels(run == 2 ? 2 : 1);
#pragma omp parallel num_threads(CALLERS)
        {
#pragma omp for schedule(static, 1)
            for (int k = 0; k < CALLERS; k++) {
                uint8_t *z = xmalloc(n);
                fpk_ctx c = fpk_ctx_default();
                fpk_array_convert(&fpk_e4m3, z, FPK_DTYPE_F32, x[k], n, &c, threads);
                char *st = stats_json(x[k], n, threads), *held;
#pragma omp critical
                held = stats_json(x[k], n, threads); /* inside the caller's critical section */
                same[run][k] = memcmp(z, want[k], n) == 0 && c.flags == want_flags[k] &&
                               strcmp(st, want_stats[k]) == 0 &&
                               strcmp(held, want_stats[k]) == 0;
                free(held);
                free(st);
                free(z);
            }
        }
    }
    omp_set_max_active_levels(levels);
    for (int run = 0; run < 3; run++)
        for (int k = 0; k < CALLERS; k++) {
            if (same[run][k])
                rep.cases++, rep.total_cases++;
            else
                tu_fail(&rep, "array %d of the caller's threads, %d thread(s) a call%s: not the"
                        " results alone", k, run ? 2 : 1, run == 2 ? " (nested)" : "");
        }
    for (int k = 0; k < CALLERS; k++) {
        free(x[k]);
        free(want[k]);
        free(want_stats[k]);
    }
    tu_report_line(&rep, "calls from %d threads of the caller's own, %zu elements each",
                   CALLERS, n);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST
#endif

/* Outputs of 8 MiB and more are written a line at a time with
 * non-temporal stores after a head up to the first line: the same bits,
 * flags and counter as the same array converted in calls too small for
 * that (which the tests above compare with fpk_convert), with the output
 * aligned and not. */
START_TEST(test_streaming)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 5);
    const size_t stream_bytes = (size_t)8 << 20, call = (size_t)1 << 18;
    static const fpk_round modes[] = {FPK_RNE, FPK_RTZ, FPK_SR};
    size_t most = stream_bytes + 4099;
    uint32_t *x = xmalloc(most * 4);
    uint8_t *whole = xmalloc(4 * most + 4), *parts = xmalloc(4 * most + 4);
    for (int t = 0; t < FAST_TARGETS; t++) {
        /* in range but for one element in 4096 (the rare path) */
        uint32_t *in = finite_f32(&rng, target(t), most), *odd = random_f32(&rng, target(t), 64);
        memcpy(x, in, most * 4);
        for (size_t i = 4096; i < most; i += 4096)
            x[i - 1 - tu_rng_next(&rng) % 64] = odd[i / 4096 % 64];
        free(in);
        free(odd);
        for (int m = 0; m < 3; m++)
            for (int q = 0; q < 2; q++) {
                size_t osize = q ? 4 : fpk_array_size(target(t)), n = stream_bytes / osize + 77;
                for (size_t off = 0; off < 2; off++)
                    for (int s = 0; s < nisas; s++) {
                        setenv("FPK_ISA", isas[s], 1);
                        fpk_ctx c[2] = {tu_ctx(modes[m], &tu_variants[0]),
                                        tu_ctx(modes[m], &tu_variants[0])};
                        c[0].sr_seed = c[1].sr_seed = seed;
                        uint8_t *z[2] = {whole + osize * off, parts + osize * off};
                        memset(z[0], 0xa5, n * osize);
                        memset(z[1], 0x5a, n * osize);
                        for (int r = 0; r < 2; r++)
                            for (size_t first = 0; first < n; first += r ? call : n) {
                                size_t len = r == 0 ? n : n - first < call ? n - first : call;
                                if (q)
                                    fpk_array_quantize(target(t), (float *)(z[r] + 4 * first),
                                                       FPK_DTYPE_F32, x + first, len, &c[r], 1);
                                else
                                    fpk_array_convert(target(t), z[r] + osize * first,
                                                      FPK_DTYPE_F32, x + first, len, &c[r], 1);
                            }
                        if (memcmp(z[0], z[1], n * osize) != 0 || c[0].flags != c[1].flags ||
                            c[0].sr_counter != c[1].sr_counter)
                            tu_fail(&rep, "%s %s%s, %zu elements at offset %zu: differs", isas[s],
                                    target(t)->name, q ? " quantize" : "", n, off);
                        else
                            rep.cases++, rep.total_cases++;
                    }
            }
    }
    unsetenv("FPK_ISA");
    tu_report_line(&rep, "streamed outputs of 8 MiB and more, aligned and not");
    free(x);
    free(whole);
    free(parts);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Statistics: fpk_stats_add_array (and its threads, and calls split) against
 * fpk_stats_add on the same values as doubles. */

static const fpk_format *const stats_sets[3][4] = {
    {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2},
    {&fpk_fp32, &fpk_tf32, &fpk_fp64, &fpk_e5m2},
    {&fpk_e8m0, &fpk_e4m3fnuz, &fpk_e2m1, &fpk_e3m2}, /* no sign, no -0, no NaN */
};

static bool same_stats(const fpk_stats *a, const fpk_stats *b, char *why, size_t len)
{
    if (a->count != b->count || a->zeros != b->zeros || a->nonfinite != b->nonfinite) {
        snprintf(why, len, "count/zeros/nonfinite %" PRIu64 "/%" PRIu64 "/%" PRIu64
                 ", expected %" PRIu64 "/%" PRIu64 "/%" PRIu64,
                 b->count, b->zeros, b->nonfinite, a->count, a->zeros, a->nonfinite);
        return false;
    }
    if (memcmp(&a->amax, &b->amax, sizeof a->amax) != 0) {
        snprintf(why, len, "amax %a, expected %a", b->amax, a->amax);
        return false;
    }
    for (int i = 0; i < FPK_LOG2_BINS; i++)
        if (a->log2_hist[i] != b->log2_hist[i]) {
            snprintf(why, len, "log2 bin %d: %" PRIu64 ", expected %" PRIu64, i + FPK_LOG2_MIN,
                     b->log2_hist[i], a->log2_hist[i]);
            return false;
        }
    for (int j = 0; j < a->nformats; j++) {
        const fpk_format_counts *x = &a->fmt[j], *y = &b->fmt[j];
        if (x->underflow != y->underflow || x->subnormal != y->subnormal ||
            x->overflow != y->overflow) {
            snprintf(why, len,
                     "%s: underflow/subnormal/overflow %" PRIu64 "/%" PRIu64 "/%" PRIu64
                     ", expected %" PRIu64 "/%" PRIu64 "/%" PRIu64,
                     a->formats[j]->name, y->underflow, y->subnormal, y->overflow,
                     x->underflow, x->subnormal, x->overflow);
            return false;
        }
    }
    return true;
}

/* X[0..N-1] of dtype T as doubles (exact). */
static double *as_doubles(fpk_dtype t, const void *x, size_t n)
{
    double *d = xmalloc(n * sizeof *d);
    fpk_ctx exact = fpk_ctx_default();
    for (size_t i = 0; i < n; i++) {
        fpk_bits b = fpk_convert(&fpk_fp64, fpk_dtype_format(t), load(x, fpk_dtype_size(t), i),
                                 &exact);
        memcpy(&d[i], &b, sizeof b);
    }
    return d;
}

/* fpk_stats_add_sqerr of the float32 X[0..N-1] into GOT (fresh), in two
 * calls split at SPLIT, against WANT (the same statistics) and
 * fpk_array_quantize_sqerr_formats of the same calls into the formats F
 * under C0: the same statistics, lanes, flags and SR counters. */
static bool same_fused(const fpk_stats *want, fpk_stats *got, const uint32_t *x, size_t n,
                       size_t split, const fpk_format *const *f, const fpk_ctx *c0, char *why,
                       size_t len)
{
    fpk_ctx c[4], d[4];
    double gx[FPK_LANES] = {0}, ge[4][FPK_LANES] = {{0}};
    double wx[FPK_LANES] = {0}, we[4][FPK_LANES] = {{0}};
    for (int j = 0; j < 4; j++)
        c[j] = d[j] = *c0;
    bool want_rc = true, got_rc = true;
    const size_t cut[3] = {0, split, n};
    for (int k = 0; k < 2; k++) {
        size_t first = cut[k], m = cut[k + 1] - first;
        const float *xs = (const float *)(const void *)(x + first);
        want_rc &= fpk_array_quantize_sqerr_formats(4, f, xs, m, d, wx, &we[0][0]);
        got_rc &= fpk_stats_add_sqerr(got, xs, m, 4, f, c, gx, &ge[0][0]);
    }
    if (!same_stats(want, got, why, len))
        return false;
    bool ok = want_rc == got_rc && memcmp(gx, wx, sizeof gx) == 0 &&
              memcmp(ge, we, sizeof ge) == 0;
    for (int j = 0; j < 4; j++)
        ok &= c[j].flags == d[j].flags && c[j].sr_counter == d[j].sr_counter;
    if (!ok)
        snprintf(why, len, "squared errors: returned %d (expected %d), lanes, flags or counters "
                 "differ from fpk_array_quantize_sqerr_formats'", got_rc, want_rc);
    return ok;
}

/* The statistics of X (N elements of T) in every mode, option and scale,
 * with every kernel set, 1 and 2 threads, whole and split; float32 also
 * with squared errors in the same pass (fpk_stats_add_sqerr, its formats
 * the set's under the same context), whole and split. */
static void check_stats_all(tu_report *rep, fpk_dtype t, const void *x, size_t n)
{
    static const double scales[] = {1, 0x1p-24, 0x1p+16, 3, 0x1p-1000, 0x1p+120, 1e-30};
    double *d = as_doubles(t, x, n);
    const uint32_t *x32 = x; /* (when T is FPK_DTYPE_F32) */
    fpk_stats *want = xmalloc(sizeof *want), *got = xmalloc(sizeof *got);
    size_t esize = fpk_dtype_size(t), split = n / 3 + 17;
    char why[200];
    /* Every mode and option at scale 1; every scale in RNE, RUP and SR;
     * the second set of formats plain. */
    for (int set = 0; set < 3; set++)
        for (int m = 0; m < MODE_COUNT; m++)
            for (int o = 0; o < 3; o++)
                for (size_t sc = 0; sc < sizeof scales / sizeof scales[0]; sc++) {
                    fpk_round mode = all_modes[m];
                    bool scaled = mode == FPK_RNE || mode == FPK_RUP || mode == FPK_SR;
                    if ((sc && (o || !scaled)) || (set == 1 && (o || sc)))
                        continue;
                    fpk_ctx c = fpk_ctx_default();
                    c.round = all_modes[m];
                    c.ftz = o == 1;
                    c.saturate = o == 2;
                    fpk_stats_init(want, stats_sets[set], 4, scales[sc], &c);
                    fpk_stats_add(want, d, split);
                    fpk_stats_add(want, d + split, n - split);
                    for (int s = 0; s < nisas; s++) {
                        setenv("FPK_ISA", isas[s], 1);
                        for (int r = 0; r < (t == FPK_DTYPE_F32 ? 5 : 3); r++) {
                            fpk_stats_init(got, stats_sets[set], 4, scales[sc], &c);
                            if (r >= 3) {
                                if (!same_fused(want, got, x32, n, r == 3 ? n : split,
                                                stats_sets[set], &c, why, sizeof why))
                                    tu_fail(rep, "%s fused stats set %d %s %s scale %a%s: %s",
                                            isas[s], set, tu_mode_name(c.round),
                                            o == 1 ? "ftz" : o == 2 ? "saturate" : "plain",
                                            scales[sc], r == 4 ? " split" : "", why);
                                else
                                    rep->cases++, rep->total_cases++;
                                continue;
                            }
                            if (r == 2) {
                                fpk_stats_add_array(got, t, x, split, 1);
                                fpk_stats_add_array(got, t, (const uint8_t *)x + esize * split,
                                                    n - split, 1);
                            } else {
                                fpk_stats_add_array(got, t, x, n, r + 1);
                            }
                            if (!same_stats(want, got, why, sizeof why))
                                tu_fail(rep, "%s stats %s set %d %s %s scale %a %s: %s",
                                        isas[s], fpk_dtype_name(t), set, tu_mode_name(c.round),
                                        o == 1 ? "ftz" : o == 2 ? "saturate" : "plain",
                                        scales[sc], r == 2 ? "split" : r ? "2 threads" : "",
                                        why);
                            else
                                rep->cases++, rep->total_cases++;
                        }
                    }
                }
    unsetenv("FPK_ISA");
    free(want);
    free(got);
    free(d);
}

START_TEST(test_stats)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    /* Every fp16 and bf16 encoding, and every 8-bit one 64 times over. */
    static const fpk_dtype dtypes[] = {FPK_DTYPE_F16, FPK_DTYPE_BF16, FPK_DTYPE_E4M3,
                                       FPK_DTYPE_E5M2};
    for (size_t k = 0; k < 4; k++) {
        size_t size = fpk_dtype_size(dtypes[k]), n = size == 1 ? 256 * 64 : 65536;
        void *x = xmalloc(n * size);
        for (size_t i = 0; i < n; i++)
            if (size == 1)
                ((uint8_t *)x)[i] = (uint8_t)i;
            else
                ((uint16_t *)x)[i] = (uint16_t)i;
        check_stats_all(&rep, dtypes[k], x, n);
        free(x);
        tu_report_line(&rep, "statistics of every %s", fpk_dtype_name(dtypes[k]));
    }
    /* Random float32: near each format's thresholds, any bits, and
     * subnormals. */
    tu_rng rng;
    tu_rng_init(&rng, seed + 5);
    size_t n = 3 * 65536 + 999;
    uint32_t *x = xmalloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        switch (i % 6) {
        case 0: x[i] = (uint32_t)(tu_rng_next(&rng) >> 32); break;
        case 1: x[i] = (uint32_t)(tu_rng_next(&rng) >> 41) | (uint32_t)(i & 8) << 28; break;
        default: x[i] = (uint32_t)tu_gen(&fpk_fp32, stats_sets[0][i % 6 - 2], &rng); break;
        }
    }
    check_stats_all(&rep, FPK_DTYPE_F32, x, n);
    tu_report_line(&rep, "statistics of %zu random float32", n);
    /* The same with each NaN an infinity: blocks whose largest magnitude
     * is an infinity. */
    for (size_t i = 0; i < n; i++)
        if ((x[i] & 0x7fffffffu) > 0x7f800000u)
            x[i] = (x[i] & 0x80000000u) | 0x7f800000u;
    check_stats_all(&rep, FPK_DTYPE_F32, x, n);
    tu_report_line(&rep, "statistics of %zu random float32, infinities but no NaN", n);
    /* Gradient-like: half zeros, the rest within 2^-40..2^0 (most blocks
     * within the AVX-512 histogram's window) but for a few outliers up to
     * 2^24; then the same after a block of infinities and NaNs, which
     * places the window above them all. */
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_rng_next(&rng);
        uint32_t e = 87 + (uint32_t)(r % 21 + r / 21 % 21); /* 2^-40..2^0, peaked */
        if (i >= 2048 && i % 997 == 0)
            e = 128 + (uint32_t)(i / 997 % 24); /* outliers above the first block's range */
        x[i] = r >> 63 ? 0 : (uint32_t)(r >> 62 & 1) << 31 | e << 23 | (uint32_t)(r >> 32 & 0x7fffff);
    }
    check_stats_all(&rep, FPK_DTYPE_F32, x, n);
    tu_report_line(&rep, "statistics of %zu gradient-like float32", n);
    /* The largest magnitude and the least, a float32 subnormal, last: n is
     * not a multiple of 8, so the kernels see them after their vectors. */
    uint32_t last[2] = {x[n - 2], x[n - 1]};
    x[n - 2] = 0x80000001u, x[n - 1] = 0x7f000000u;
    check_stats_all(&rep, FPK_DTYPE_F32, x, n);
    tu_report_line(&rep, "statistics of %zu gradient-like float32, extremes last", n);
    x[n - 2] = last[0], x[n - 1] = last[1];
    for (size_t i = 0; i < 2048; i++)
        x[i] = (uint32_t)(i & 1) << 31 | 0x7f800000u | (uint32_t)(i & 2) << 20;
    check_stats_all(&rep, FPK_DTYPE_F32, x, n);
    free(x);
    tu_report_line(&rep, "statistics of %zu gradient-like float32 after infinities and NaNs", n);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Writes X (N elements of DESCR, SIZE bytes each, as given) to a new .npy
 * file at PATH. */
static void write_npy(const char *path, const char *descr, const void *x, size_t n, size_t size)
{
    char dict[128];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                       descr, n);
    int total = (10 + len + 1 + 63) / 64 * 64;
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)((total - 10) & 0xff),
                              (unsigned char)((total - 10) >> 8)};
    fwrite(head, 1, 10, f);
    fprintf(f, "%s%*s\n", dict, total - 10 - len - 1, "");
    fwrite(x, size, n, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* fpk_stats_add_tensor on .npy files of every dtype and both byte orders
 * against fpk_dump_read and fpk_stats_add, two statistics at once; a range
 * outside the tensor and a file cut short leave the statistics alone. */
START_TEST(test_stats_tensor)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed + 6);
    size_t n = 2 * 65536 + 4321;
    uint64_t *raw = xmalloc(n * 8);
    for (size_t i = 0; i < n; i++)
        raw[i] = tu_gen(&fpk_fp64, &fpk_e4m3, &rng);
    static const struct {
        const char *descr;
        fpk_dtype t;
        bool big;
    } files[] = {{"<f4", FPK_DTYPE_F32, false}, {">f4", FPK_DTYPE_F32, true},
                 {"<f2", FPK_DTYPE_F16, false}, {">V2", FPK_DTYPE_BF16, true},
                 {"<f8", FPK_DTYPE_F64, false}};
    char path[64];
    snprintf(path, sizeof path, "check_array.%ld.npy", (long)getpid());
    fpk_stats *want = xmalloc(2 * sizeof *want), *got = xmalloc(2 * sizeof *got);
    double *buf = xmalloc(n * sizeof *buf);
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        size_t size = fpk_dtype_size(files[k].t);
        uint8_t *data = xmalloc(n * size);
        fpk_ctx exact = fpk_ctx_default();
        for (size_t i = 0; i < n; i++) {
            fpk_bits b = fpk_convert(fpk_dtype_format(files[k].t), &fpk_fp64, raw[i], &exact);
            for (size_t j = 0; j < size; j++)
                data[size * i + j] = (uint8_t)(b >> 8 * (files[k].big ? size - 1 - j : j));
        }
        write_npy(path, files[k].descr, data, n, size);
        free(data);
        fpk_dump *d;
        fpk_error err;
        ck_assert_int_eq(fpk_dump_open(path, NULL, &d, &err), FPK_OK);
        ck_assert_int_eq(fpk_dump_read(d, 0, 0, n, buf, &err), FPK_OK);
        for (int m = 0; m < MODE_COUNT; m++)
            for (int s = 0; s < nisas; s++) {
                setenv("FPK_ISA", isas[s], 1);
                fpk_ctx c = fpk_ctx_default();
                c.round = all_modes[m];
                for (int j = 0; j < 2; j++) {
                    fpk_stats_init(&want[j], stats_sets[j], 4, j ? 0x1p-3 : 1, &c);
                    fpk_stats_add(&want[j], buf + 5, n - 5);
                    fpk_stats_init(&got[j], stats_sets[j], 4, j ? 0x1p-3 : 1, &c);
                }
                int rc = fpk_stats_add_tensor(got, 2, d, 0, 5, n - 5, 2, &err);
                char why[200] = "";
                bool ok = rc == FPK_OK && same_stats(&want[0], &got[0], why, sizeof why) &&
                          same_stats(&want[1], &got[1], why, sizeof why);
                if (!ok)
                    tu_fail(&rep, "%s stats_add_tensor %s %s: rc %d %s", isas[s],
                            files[k].descr, tu_mode_name(c.round), rc, rc ? err.msg : why);
                else
                    rep.cases++, rep.total_cases++;
            }
        unsetenv("FPK_ISA");
        /* A range beyond the tensor. */
        memcpy(&want[0], &got[0], sizeof want[0]);
        ck_assert_int_eq(fpk_stats_add_tensor(got, 1, d, 0, n - 3, 4, 1, &err), FPK_ERANGE);
        ck_assert_msg(strstr(err.msg, "4 elements from element") != NULL, "%s", err.msg);
        ck_assert(memcmp(&want[0], &got[0], sizeof want[0]) == 0);
        ck_assert_int_eq(fpk_stats_add_tensor(got, 1, d, 1, 0, 1, 1, &err), FPK_ERANGE);
        /* The file cut short after opening. */
        ck_assert_int_eq(truncate(path, 4096), 0);
        ck_assert_int_eq(fpk_stats_add_tensor(got, 1, d, 0, 0, n, 2, &err), FPK_EIO);
        ck_assert(memcmp(&want[0], &got[0], sizeof want[0]) == 0);
        fpk_dump_close(d);
        unlink(path);
        tu_report_line(&rep, "stats_add_tensor of %s, %zu elements", files[k].descr, n);
    }
    free(buf);
    free(want);
    free(got);
    free(raw);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

static Suite *array_suite(void)
{
    Suite *s = suite_create("array");
    TCase *tc = tcase_create("array");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_sizes_and_in_place);
    tcase_add_test(tc, test_every_small_input);
    tcase_add_test(tc, test_random_f32);
    tcase_add_test(tc, test_sr_bits);
    tcase_add_test(tc, test_sr_edges);
    tcase_add_test(tc, test_mxcsr);
    tcase_add_test(tc, test_traps);
    tcase_add_test(tc, test_threads);
#ifdef _OPENMP
    tcase_add_test(tc, test_callers_threads);
#endif
    tcase_add_test(tc, test_streaming);
    tcase_add_test(tc, test_stats);
    tcase_add_test(tc, test_stats_tensor);
    tcase_add_test(tc, test_sqerr);
    tcase_add_test(tc, test_sqerr_late);
    tcase_add_test(tc, test_sqerr_formats);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    seed = tu_seed(SUITE);
    find_isas();
    SRunner *sr = srunner_create(array_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
