/* The device statistics' element code (cuda/devstats.h) and plan
 * (cuda/stats_plan.c), run on the host, against fpk_stats_add
 * (lib/tensor/stats.c): the statistics of every fp16, bf16, e4m3 and e5m2
 * encoding and of TestFloat-style float32 and float64 samples, for
 * sixteen formats, every rounding mode (SR included, added in two parts
 * so that the counter of the second starts where the first ended), with
 * and without ftz and saturate, under scales 1, 0.1875 and 2^40; and of
 * every element type in every length up to a few vectors, from every
 * alignment.  Elements are counted here as the kernel counts them
 * (add_as_device): from memory in 16-byte vectors and single elements,
 * each into its band by fpki_ds_add over the plan's table image.  Also
 * the SR hash the device inlines (lib/core/sr-hash.h) against known
 * answers and fpk_sr_hash, and the kernel's split of a buffer into slots.
 * The statistics must be equal in every field. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats_plan.h"
#include "testutil.h"

#define SUITE "check_cuda_stats"

static uint64_t seed;

static const char *const format_names[] = {
    "fp64", "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3",
    "e2m1", "e8m0", "e6m9", "e1m3", "e1m1",
};
#define NFORMATS ((int)(sizeof format_names / sizeof format_names[0]))

typedef struct options {
    const char *name;
    bool ftz, saturate;
} options;
static const options option_sets[] = {
    {"plain", false, false}, {"ftz", true, false}, {"saturate", false, true},
    {"ftz+saturate", true, true},
};
static const double scales[] = {1.0, 0.1875, 0x1p40};

/* S += the N elements BITS of DTYPE, counted as the kernel counts them:
 * laid out in memory little-endian from OFFSET elements past a 16-byte
 * boundary, split into the kernel's slots (fpki_ds_split, fpki_ds_slot),
 * each vector read 16 bytes at a time and each element taken from it as
 * the kernel takes it (fpki_ds_lane), added by fpki_ds_add to one
 * thread's counts over the plan's own table image, and the counters
 * turned into statistics by fpki_ds_finish.  The kernel runs the same
 * code on many threads and adds their counts up. */
static void add_as_device(fpk_stats *s, fpk_dtype dtype, const uint64_t *bits, size_t n,
                          size_t offset)
{
    fpki_ds_plan *p = malloc(sizeof *p);
    ck_assert_ptr_nonnull(p);
    fpk_error err;
    ck_assert_msg(fpki_ds_plan_init(p, s, dtype, &err) == FPK_OK, "%s", err.msg);
    const int w = p->k.width;
    unsigned char *mem = aligned_alloc(16, ((n + offset) * (size_t)w + 31) & ~(size_t)15);
    ck_assert_ptr_nonnull(mem);
    unsigned char *data = mem + offset * (size_t)w;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < w; b++)
            data[i * (size_t)w + (size_t)b] = (unsigned char)(bits[i] >> 8 * b);
    uint64_t *k = calloc(fpki_ds_ncounters(p), sizeof *k);
    uint32_t *hist = calloc((size_t)(p->k.nsides * p->k.nbands), sizeof *hist);
    ck_assert(k && hist);
    fpki_ds_acc acc;
    memset(&acc, 0, sizeof acc);
    acc.hist = hist;
    fpki_ds_tables t = fpki_ds_tables_at(&p->k, p->image);
    uint64_t head, nvec, first;
    fpki_ds_split(n, (uintptr_t)data, w, &head, &nvec);
    int got;
    for (uint64_t slot = 0; (got = fpki_ds_slot(slot, n, head, nvec, w, &first)); slot++) {
        uint32_t v[4] = {0, 0, 0, 0};
        const unsigned char *at = data + first * (uint64_t)w;
        if (got > 1)
            ck_assert_uint_eq((uintptr_t)at % 16, 0);
        memcpy(v, at, got > 1 ? 16 : (size_t)w); /* little-endian host */
        for (int i = 0; i < got; i++)
            fpki_ds_add(&p->k, &t, w, p->k.sr, fpki_ds_lane(v, w, i), first + (uint64_t)i, &acc);
    }
    k[FPKI_DS_AMAX] = acc.amax;
    for (int j = 0; j < FPK_STATS_MAX_FORMATS; j++)
        for (int m = 0; m < FPKI_DS_MAX_MOVES; m++)
            k[FPKI_DS_MOVED + FPKI_DS_MAX_MOVES * j + m] = acc.moved[j][m];
    for (int b = 0; b < p->k.nsides * p->k.nbands; b++)
        k[FPKI_DS_BANDS + b] = hist[b];
    fpki_ds_finish(s, p, dtype, k, n);
    free(k);
    free(hist);
    free(mem);
    free(p);
}

/* The statistics of BITS both ways, in two parts split at N/3, compared
 * field by field. */
static void compare(tu_report *rep, fpk_dtype dtype, const uint64_t *bits, size_t n,
                    const fpk_format *const *formats, fpk_round mode, const options *o,
                    double scale, size_t offset)
{
    const fpk_format *d = fpk_dtype_format(dtype);
    double *x = malloc(n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++)
        x[i] = fpk_to_double(d, bits[i]);
    fpk_ctx c = fpk_ctx_default();
    c.round = mode;
    c.ftz = o->ftz;
    c.saturate = o->saturate;
    fpk_stats *want = malloc(sizeof *want), *got = malloc(sizeof *got);
    ck_assert(want && got);
    fpk_stats_init(want, formats, NFORMATS, scale, &c);
    fpk_stats_init(got, formats, NFORMATS, scale, &c);
    size_t part = n / 3;
    fpk_stats_add(want, x, part);
    fpk_stats_add(want, x + part, n - part);
    add_as_device(got, dtype, bits, part, offset);
    add_as_device(got, dtype, bits + part, n - part, offset + part);

    rep->cases += n * NFORMATS;
    rep->total_cases += n * NFORMATS;
    char what[128];
    snprintf(what, sizeof what, "%s x %zu at offset %zu, %s, %s, scale %a",
             fpk_dtype_name(dtype), n, offset, fpk_round_name(mode), o->name, scale);
    if (got->count != want->count || got->zeros != want->zeros ||
        got->nonfinite != want->nonfinite)
        tu_fail(rep, "%s: count/zeros/nonfinite %" PRIu64 "/%" PRIu64 "/%" PRIu64
                     ", expected %" PRIu64 "/%" PRIu64 "/%" PRIu64,
                what, got->count, got->zeros, got->nonfinite, want->count, want->zeros,
                want->nonfinite);
    if (memcmp(&got->amax, &want->amax, sizeof got->amax) != 0)
        tu_fail(rep, "%s: amax %a, expected %a", what, got->amax, want->amax);
    for (int b = 0; b < FPK_LOG2_BINS; b++)
        if (got->log2_hist[b] != want->log2_hist[b])
            tu_fail(rep, "%s: log2 bin %d: %" PRIu64 ", expected %" PRIu64, what,
                    b + FPK_LOG2_MIN, got->log2_hist[b], want->log2_hist[b]);
    for (int j = 0; j < NFORMATS; j++) {
        const fpk_format_counts *g = &got->fmt[j], *w = &want->fmt[j];
        if (g->underflow != w->underflow || g->subnormal != w->subnormal ||
            g->overflow != w->overflow)
            tu_fail(rep,
                    "%s: %s: underflow/subnormal/overflow %" PRIu64 "/%" PRIu64 "/%" PRIu64
                    ", expected %" PRIu64 "/%" PRIu64 "/%" PRIu64,
                    what, formats[j]->name, g->underflow, g->subnormal, g->overflow,
                    w->underflow, w->subnormal, w->overflow);
    }
    ck_assert_msg(memcmp(got, want, sizeof *got) == 0 || rep->total_mismatches > 0,
                  "%s: the statistics differ in a field not compared above", what);
    free(x);
    free(want);
    free(got);
}

static void formats_init(const fpk_format **formats)
{
    for (int j = 0; j < NFORMATS; j++) {
        formats[j] = fpk_format_lookup(format_names[j]);
        ck_assert_ptr_nonnull(formats[j]);
    }
}

START_TEST(test_hash)
{
    /* Known answers, from an independent implementation of SplitMix64's
     * finaliser (seed, counter, hash). */
    static const uint64_t known[][3] = {
        {UINT64_C(0x0), UINT64_C(0x0), UINT64_C(0x6db6ca64564daeaa)},
        {UINT64_C(0x0), UINT64_C(0x1), UINT64_C(0x5cc60547776902ba)},
        {UINT64_C(0x2a), UINT64_C(0x7), UINT64_C(0x68c4a3575204c2f0)},
        {UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff), UINT64_C(0x12d63b539732628e)},
        {UINT64_C(0x123456789abcdef), UINT64_C(0x10000000000), UINT64_C(0xda296d4f2ca997ae)},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        ck_assert_uint_eq(fpki_sr_hash(known[i][0], known[i][1]), known[i][2]);
        ck_assert_uint_eq(fpk_sr_hash(known[i][0], known[i][1]), known[i][2]);
    }
    tu_rng r;
    tu_rng_init(&r, seed);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (int i = 0; i < 100000; i++) {
        uint64_t s = i < 50000 ? 0 : tu_rng_next(&r), k = i % 2 ? (uint64_t)i : tu_rng_next(&r);
        rep.cases++;
        rep.total_cases++;
        if (fpki_sr_hash(s, k) != fpk_sr_hash(s, k))
            tu_fail(&rep, "hash(%#" PRIx64 ", %#" PRIx64 ")", s, k);
    }
    tu_report_line(&rep, "fpki_sr_hash (the device's) against fpk_sr_hash");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Every encoding of each small dtype, in every mode and option set. */
START_TEST(test_exhaustive_small)
{
    static const fpk_dtype dtypes[] = {FPK_DTYPE_F16, FPK_DTYPE_BF16, FPK_DTYPE_E4M3,
                                       FPK_DTYPE_E5M2};
    const fpk_format *formats[NFORMATS];
    formats_init(formats);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
        fpk_dtype dtype = dtypes[t];
        size_t n = (size_t)1 << (8 * fpk_dtype_size(dtype));
        uint64_t *bits = malloc(n * sizeof *bits);
        ck_assert_ptr_nonnull(bits);
        for (size_t i = 0; i < n; i++)
            bits[i] = i;
        for (int m = 0; m < FPK_ROUND_COUNT; m++)
            for (size_t o = 0; o < sizeof option_sets / sizeof option_sets[0]; o++)
                for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
                    compare(&rep, dtype, bits, n, formats, (fpk_round)m, &option_sets[o],
                            scales[k], (size_t)(m + o + k) % (16 / fpk_dtype_size(dtype)));
                }
        tu_report_line(&rep, "every %s encoding", fpk_dtype_name(dtype));
        free(bits);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* TestFloat-style samples near each format's boundaries. */
START_TEST(test_sampled_wide)
{
    static const fpk_dtype dtypes[] = {FPK_DTYPE_F32, FPK_DTYPE_F64};
    const fpk_format *formats[NFORMATS];
    formats_init(formats);
    tu_rng r;
    tu_rng_init(&r, seed);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    enum { N = 6000 };
    uint64_t *bits = malloc(N * sizeof *bits);
    ck_assert_ptr_nonnull(bits);
    for (size_t t = 0; t < 2; t++) {
        const fpk_format *d = fpk_dtype_format(dtypes[t]);
        for (int m = 0; m < FPK_ROUND_COUNT; m++)
            for (size_t o = 0; o < sizeof option_sets / sizeof option_sets[0]; o++)
                for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
                    for (size_t i = 0; i < N; i++)
                        bits[i] = tu_gen(d, formats[i % NFORMATS], &r);
                    compare(&rep, dtypes[t], bits, N, formats, (fpk_round)m, &option_sets[o],
                            scales[k], (size_t)(m + o + k) % (16 / fpk_dtype_size(dtypes[t])));
                }
        tu_report_line(&rep, "%s samples", fpk_dtype_name(dtypes[t]));
    }
    free(bits);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The kernel's slots cover every element once, in vectors that start on
 * 16-byte boundaries, for every width, alignment and small count. */
START_TEST(test_slots)
{
    uint64_t cases = 0;
    static char seen[300];
    for (int width = 1; width <= 8; width *= 2)
        for (uint64_t addr = 0x1000; addr < 0x1010; addr += (uint64_t)width)
            for (uint64_t n = 0; n <= 257; n++) {
                uint64_t head, nvec, first;
                fpki_ds_split(n, addr, width, &head, &nvec);
                memset(seen, 0, sizeof seen);
                int got;
                for (uint64_t s = 0; (got = fpki_ds_slot(s, n, head, nvec, width, &first)); s++) {
                    if (got > 1)
                        ck_assert_uint_eq((addr + first * (uint64_t)width) % 16, 0);
                    for (int i = 0; i < got; i++) {
                        ck_assert_uint_lt(first + (uint64_t)i, n);
                        ck_assert_int_eq(seen[first + (uint64_t)i]++, 0);
                    }
                }
                for (uint64_t i = 0; i < n; i++)
                    ck_assert_msg(seen[i] == 1, "width %d, address %#llx, n %llu: element %llu",
                                  width, (unsigned long long)addr, (unsigned long long)n,
                                  (unsigned long long)i);
                cases++;
            }
    printf("%s: the kernel's slots: %llu splits cover every element once\n", SUITE,
           (unsigned long long)cases);
}
END_TEST

/* Counts of every length up to a few vectors past the head, from every
 * alignment, of each element type: the kernel's head, vectors and tail
 * under RNE, under RUP (each sign its own bands) and under SR (the
 * counters of the elements follow their place). */
START_TEST(test_tails)
{
    static const fpk_round modes[] = {FPK_RNE, FPK_RUP, FPK_SR};
    static const options plain = {"plain", false, false};
    const fpk_format *formats[NFORMATS];
    formats_init(formats);
    tu_rng r;
    tu_rng_init(&r, seed);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    uint64_t bits[70];
    for (int t = 0; t < FPK_DTYPE_COUNT; t++) {
        const fpk_format *d = fpk_dtype_format((fpk_dtype)t);
        size_t v = 16 / fpk_dtype_size((fpk_dtype)t);
        for (size_t offset = 0; offset < v; offset++)
            for (size_t n = 0; n <= 3 * v + 5 && n <= 70; n++)
                for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
                    for (size_t i = 0; i < n; i++)
                        bits[i] = i % 3 ? tu_gen(d, formats[i % NFORMATS], &r)
                                        : tu_rng_next(&r) & (d->sign_mask | (d->sign_mask - 1));
                    compare(&rep, (fpk_dtype)t, bits, n, formats, modes[m], &plain, 0.1875,
                            offset);
                }
        tu_report_line(&rep, "%s: every length to %zu, every alignment", d->name, 3 * v + 5);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* What the plan refuses. */
START_TEST(test_plan_errors)
{
    const fpk_format *formats[1] = {&fpk_fp16};
    fpk_ctx c = fpk_ctx_default();
    fpk_stats *s = malloc(sizeof *s);
    ck_assert_ptr_nonnull(s);
    fpki_ds_plan *p = malloc(sizeof *p);
    ck_assert_ptr_nonnull(p);
    fpk_error err;
    static const double bad_scales[] = {0.0, -1.0, 1.0 / 0.0};
    for (size_t i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++) {
        fpk_stats_init(s, formats, 1, bad_scales[i], &c);
        ck_assert_int_eq(fpki_ds_plan_init(p, s, FPK_DTYPE_F32, &err), FPK_EFORMAT);
        ck_assert_ptr_nonnull(strstr(err.msg, "scale"));
    }
    fpk_stats_init(s, formats, 1, 1.0, &c);
    ck_assert_int_eq(fpki_ds_plan_init(p, s, (fpk_dtype)FPK_DTYPE_COUNT, &err), FPK_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "element type"));
    ck_assert_int_eq(fpki_ds_plan_init(p, s, FPK_DTYPE_F32, &err), FPK_OK);
    /* a coarse range for zero, one for each floor(log2) of a nonzero
     * finite float32, one for infinities and NaNs */
    ck_assert_int_eq(p->k.ncoarse, 1 + 127 + 149 + 1 + 1);
    /* RNE into fp16: both signs share the keys; the least nonfinite
     * magnitude starts a range and is no key */
    ck_assert_int_eq(p->k.nsides, 1);
    ck_assert_int_eq(p->k.nkeys, 3);
    fpk_stats_init(s, formats, 1, 1.0, &(fpk_ctx){.round = FPK_RUP});
    ck_assert_int_eq(fpki_ds_plan_init(p, s, FPK_DTYPE_F32, &err), FPK_OK);
    ck_assert_int_eq(p->k.nsides, 2);
    free(p);
    free(s);
}
END_TEST

static Suite *cuda_stats_suite(void)
{
    Suite *s = suite_create("cuda_stats");
    TCase *tc = tcase_create("cuda_stats");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_hash);
    tcase_add_test(tc, test_exhaustive_small);
    tcase_add_test(tc, test_sampled_wide);
    tcase_add_test(tc, test_slots);
    tcase_add_test(tc, test_tails);
    tcase_add_test(tc, test_plan_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    seed = tu_seed(SUITE);
    SRunner *sr = srunner_create(cuda_stats_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
