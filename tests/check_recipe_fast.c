/* The recipes' fast paths against their general path (recipe-impl.h:
 * fpki_recipe_path), on every kernel set this CPU runs: codes, scales,
 * values, transformed inputs, flags, the tensor's scale and amax, and
 * every statistic, bit for bit, for every preset and rule on random and
 * edge data; bands of rows (fpk_recipe_quantize_rows) against one call;
 * the Hadamard kernels against fpk_rht16 on hard cases; the fast scale
 * keys around every boundary; the exact sums against MPFR.  Linked with
 * the library's layers themselves, for their internal entry points. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe-impl.h"
#include "testutil.h"

#define SUITE "check_recipe_fast"

static uint64_t seed;
static fpki_isa best; /* the kernel sets are 0 .. best */

static const fpki_recipe_path general = {.general = true};

static fpki_recipe_path set(int isa)
{
    return (fpki_recipe_path){.general = false, .isa = (fpki_isa)isa};
}

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

static float float_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* Every preset, and every rule, scale format and option the presets
 * leave out. */
static const char *const recipes[] = {
    "fp8-tensor-current", "fp8-tensor-delayed", "fp8-block128", "fp8-block128x128",
    "mxfp8-e4m3", "mxfp8-e5m2", "mxfp6-e2m3", "mxfp6-e3m2", "mxfp4", "nvfp4", "nvfp4-2d",
    "nvfp4-rht", "nvfp4-sr", "e4m3/e8m0/ceil/1x32", "e2m1/e8m0/even/1x32",
    "e5m2/e8m0/rceil/1x32", "e4m3/fp32/floor/1x32", "e2m3/fp32/ceil/1x16",
    "e2m1/e4m3/rceil/1x16", "e4m3/fp32/amax/1x0,margin=2,pow2", "e5m2/fp32/amax/0x0,margin=60",
    "e2m1/e4m3/amax/1x16", "e3m2/e5m3/amax/1x32", "e2m1/e4m3/nvfp4-torchao/1x16",
    "e2m1/e4m3/nvfp4-div/16x16", "e4m3fnuz/e8m0/floor/1x32", "e5m2fnuz/fp32/amax/1x128",
    "e4m3/e8m0/floor/1x32,round=sr,sr_bits=7,seed=3", "e2m1/e8m0/floor/1x32,round=sr",
    "e5m2/fp32/amax/1x128,round=sr,sr_bits=32", "e3m2/e8m0/floor/0x1", "e2m1/e4m3/nvfp4/1x16,rht=5",
    "e2m3/e8m0/floor/5x7", "e4m3/fp32/amax/1x128,round=rtz", "e2m1/e8m0/floor/1x32,round=rna"};
#define NRECIPES (sizeof recipes / sizeof recipes[0])

/* Data of kind K for element I, with a scale per row (R the row): 0 a
 * mixture of every magnitude with zeros, subnormals and short
 * significands (ties); 1 the same with infinities and NaNs; 2 edge
 * blocks: maxima at powers of two, saturating blocks, blocks of zeros,
 * tiny blocks; 3 values near 1. */
static uint32_t datum(int k, size_t i, size_t r, uint64_t u)
{
    uint32_t row_exp = (uint32_t)((r * 37 + (size_t)k * 11) % 256);
    uint32_t e = row_exp < 8 ? (uint32_t)(u >> 40) % 8 : row_exp - (uint32_t)(u >> 60 & 7);
    uint32_t b = (uint32_t)(u & 0x807fffff) | (e > 254 ? 254 : e) << 23;
    switch (u >> 56 & 31) {
    case 0: b = 0; break;
    case 1: b = (uint32_t)u & 0x807fffff; break; /* subnormal */
    case 2: b &= 0xfff00000; break;               /* short: ties */
    case 3: b = (uint32_t)u & 0x80000000; break;  /* signed zero */
    }
    if (k == 1 && i % 97 == 5)
        b = i % 2 ? 0x7f800000 : 0xffc00001 + (uint32_t)(u & 0xff);
    if (k == 2) {
        switch (i / 16 % 8) {
        case 0: b = 0; break;                                              /* zeros */
        case 1: b = (b & 0x80000000) | (e > 254 ? 254 : e) << 23; break; /* powers of two */
        case 2: b = (b & 0xff000000) | 0x7f7fffff; break;                  /* near FLT_MAX */
        case 3: b &= 0x807fffff; break;                                    /* subnormals */
        case 4: b = (b & 0x80000000) | 0x00000001u << (u >> 59); break;   /* tiny */
        case 5: b = (b & 0x80000000) | 0x3f800000 | (uint32_t)(u >> 44 & 0xfffff) << 3; break;
        }
    }
    if (k == 3)
        b = (uint32_t)(u & 0x80ffffff) + 0x3f000000;
    return b;
}

static void fill(float *x, size_t rows, size_t cols, int k, uint64_t salt)
{
    for (size_t i = 0; i < rows * cols; i++) {
        uint32_t b = datum(k, i, i / cols, fpk_sr_hash(seed ^ salt, i));
        memcpy(&x[i], &b, sizeof b);
    }
}

/* Data at the rounding boundaries of R's element format: in each run of
 * a block along a row, the first element the format's largest value
 * times 2^k (k by the row), which makes the power-of-two rules' scale
 * 2^k, the others the boundaries times 2^k (half the least subnormal,
 * the least subnormal, the tininess thresholds of rounding to nearest and
 * away, the least normal, the largest value and half an ulp above it),
 * of either sign, nudged by up to one float32 ulp. */
static void fill_boundaries(float *x, size_t rows, size_t cols, const fpk_recipe *r)
{
    const fpk_format *e = r->elem;
    const int m = e->man_bits;
    fpk_ctx c = fpk_ctx_default();
    float maxv = float_of((uint32_t)fpk_convert(&fpk_fp32, e, e->max_finite, &c));
    float b[] = {ldexpf(1, e->emin - m - 1), ldexpf(1, e->emin - m),
                 ldexpf(1, e->emin) - ldexpf(1, e->emin - m - 2),
                 ldexpf(1, e->emin) - ldexpf(1, e->emin - m - 1), ldexpf(1, e->emin),
                 maxv, maxv + ldexpf(1, e->emax - m - 1), ldexpf(3, e->emin - m - 2)};
    const size_t nb = sizeof b / sizeof b[0], w = r->block_cols ? r->block_cols : cols;
    for (size_t i = 0; i < rows; i++) {
        int k = (int)(i % 41) - 20;
        for (size_t j = 0; j < cols; j++) {
            uint64_t u = fpk_sr_hash(seed, i * cols + j);
            float v = j % w == 0 ? maxv : b[u % nb];
            uint32_t bits = bits_of(ldexpf(v, k)) + (uint32_t)((int)(u >> 8 & 3) - 1) * (j % w != 0);
            x[i * cols + j] = float_of(bits | (uint32_t)(u >> 20 & 1) << 31);
        }
    }
}

/* What one quantisation gave. */
typedef struct result {
    uint8_t *codes;
    uint32_t *scales;
    float *y, *xt;
    fpk_quantized q;
    fpk_recipe_stats st;
    int rc;
} result;

static void result_init(result *res, size_t n, size_t nb, const fpk_recipe *r)
{
    res->codes = malloc(n + 1);
    res->scales = malloc(nb * 4 + 4);
    res->y = malloc(n * 4 + 4);
    res->xt = malloc(n * 4 + 4);
    memset(res->codes, 0xa5, n + 1);
    memset(res->scales, 0xa5, nb * 4 + 4);
    memset(res->y, 0xa5, n * 4 + 4);
    memset(res->xt, 0xa5, n * 4 + 4);
    res->q = (fpk_quantized){.codes = res->codes, .scales = res->scales, .y = res->y,
                             .xt = res->xt};
    fpk_recipe_stats_init(&res->st, r);
}

static void result_free(result *res)
{
    free(res->codes), free(res->scales), free(res->y), free(res->xt);
}

/* B against A, the general path's: every output bit for bit. */
static void compare(tu_report *rep, const char *what, const fpk_recipe *r, const result *a,
                    const result *b, size_t n, size_t nb, const float *x)
{
    if (a->rc != b->rc) {
        tu_fail(rep, "%s: status %d, general %d", what, b->rc, a->rc);
        return;
    }
    for (size_t j = 0; j < nb; j++)
        tu_check(rep, r->scale, (ref_result){a->scales[j], 0}, b->scales[j], 0, "%s scale %zu",
                 what, j);
    for (size_t i = 0; i < n; i++) {
        tu_check(rep, r->elem, (ref_result){a->codes[i], 0}, b->codes[i], 0, "%s code %zu (%a)",
                 what, i, (double)x[i]);
        if (bits_of(a->y[i]) != bits_of(b->y[i]))
            tu_fail(rep, "%s value %zu (%a): %a, general %a", what, i, (double)x[i],
                    (double)b->y[i], (double)a->y[i]);
        if (bits_of(a->xt[i]) != bits_of(b->xt[i]))
            tu_fail(rep, "%s input %zu after the RHT: %a, general %a", what, i, (double)b->xt[i],
                    (double)a->xt[i]);
    }
    if (a->scales[nb] != b->scales[nb] || a->codes[n] != b->codes[n])
        tu_fail(rep, "%s: written beyond the outputs", what);
    if (a->q.flags != b->q.flags || a->q.global != b->q.global ||
        bits_of(a->q.amax) != bits_of(b->q.amax))
        tu_fail(rep, "%s: flags %x, general %x; global %08x, %08x; amax %a, %a", what, b->q.flags,
                a->q.flags, b->q.global, a->q.global, (double)b->q.amax, (double)a->q.amax);
    if (memcmp(&a->st, &b->st, sizeof a->st))
        tu_fail(rep, "%s: statistics differ (x2 %a e2 %a flushed %llu, general %a %a %llu)", what,
                b->st.x2, b->st.e2, (unsigned long long)b->st.flushed, a->st.x2, a->st.e2,
                (unsigned long long)a->st.flushed);
}

/* Every recipe on every kind of data (fill, fill_boundaries) and shape,
 * every set against the general path. */
START_TEST(test_paths)
{
    static const size_t shapes[][2] = {{64, 256}, {37, 208}, {1, 1008}, {130, 48}, {3, 16}};
    tu_report rep;
    tu_report_init(&rep, SUITE);
    fpk_amax_history h;
    fpk_amax_history_init(&h, 1024);
    fpk_amax_history_push(&h, 3.5e3);
    fpk_amax_history_push(&h, 1e-3);
    for (size_t k = 0; k < NRECIPES; k++) {
        fpk_recipe r = recipe(recipes[k]);
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
            for (int kind = 0; kind < 5; kind++) {
                size_t rows = shapes[sh][0], cols = shapes[sh][1], n = rows * cols, br, bc;
                size_t nb = fpk_recipe_blocks(&r, rows, cols, &br, &bc);
                float *x = malloc(n * 4);
                if (kind == 4)
                    fill_boundaries(x, rows, cols, &r);
                else
                    fill(x, rows, cols, kind, k * 131 + sh * 7);
                result a, b;
                result_init(&a, n, nb, &r);
                a.rc = fpki_recipe_quantize(&r, x, rows, cols, &h, &a.q, &a.st, NULL, general);
                for (int s = 0; s <= (int)best; s++) {
                    result_init(&b, n, nb, &r);
                    b.rc = fpki_recipe_quantize(&r, x, rows, cols, &h, &b.q, &b.st, NULL, set(s));
                    char what[160];
                    snprintf(what, sizeof what, "%s %zux%zu data %d %s", recipes[k], rows, cols,
                             kind, fpki_isa_name((fpki_isa)s));
                    compare(&rep, what, &r, &a, &b, n, nb, x);
                    result_free(&b);
                }
                result_free(&a);
                free(x);
            }
    }
    tu_report_line(&rep, "every recipe, every set against the general path");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The flags of one element at a time (a call's flags are its elements'
 * ORed): each boundary value of fill_boundaries alone in a block beside
 * its anchor and zeros, which raise none, on every set against the
 * general path. */
START_TEST(test_flags)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    enum { W = 48 };
    float x[W * 4], y[W * 4];
    for (size_t k = 0; k < NRECIPES; k++) {
        fpk_recipe r = recipe(recipes[k]);
        size_t cols = r.rht ? 16 : 3;
        /* boundary values from fill_boundaries, one at a time */
        float all[W * 41];
        fill_boundaries(all, 41, W, &r);
        for (size_t at = 0; at < 41 * W; at++) {
            if (at % W == 0)
                continue;
            memset(x, 0, sizeof x);
            x[0] = all[at - at % W]; /* the row's anchor */
            x[1] = all[at];
            fpk_quantized g = {.y = y}, q = g;
            ck_assert_int_eq(fpki_recipe_quantize(&r, x, 1, cols, NULL, &g, NULL, NULL, general),
                             0);
            for (int s = 0; s <= (int)best; s++) {
                ck_assert_int_eq(fpki_recipe_quantize(&r, x, 1, cols, NULL, &q, NULL, NULL, set(s)),
                                 0);
                tu_check(&rep, &fpk_fp32, (ref_result){g.flags, 0}, q.flags, 0,
                         "%s flags of %a beside %a, %s", recipes[k], (double)x[1], (double)x[0],
                         fpki_isa_name((fpki_isa)s));
            }
        }
    }
    tu_report_line(&rep, "each boundary's flags");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Bands of block rows, on every set and the general path, against one
 * call: the same outputs, and statistics merged in either order the
 * same bits; bands that split blocks refused. */
START_TEST(test_bands)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    const size_t rows = 70, cols = 96, n = rows * cols;
    float *x = malloc(n * 4);
    for (size_t k = 0; k < NRECIPES; k++) {
        fpk_recipe r = recipe(recipes[k]);
        size_t br, bc, nb = fpk_recipe_blocks(&r, rows, cols, &br, &bc);
        size_t bh = r.block_rows ? r.block_rows : rows;
        bool one = br * bc == 1;
        fill(x, rows, cols, (int)(k % 3), k);
        result whole;
        result_init(&whole, n, nb, &r);
        whole.rc = fpki_recipe_quantize(&r, x, rows, cols, NULL, &whole.q, &whole.st, NULL,
                                        general);
        for (int s = -1; s <= (int)best; s++) {
            fpki_recipe_path path = s < 0 ? general : set(s);
            fpk_recipe_range e = {0};
            ck_assert_int_eq(fpki_recipe_scan(&r, x, rows / 2, cols, &e, NULL, path), 0);
            ck_assert_int_eq(
                fpki_recipe_scan(&r, x + rows / 2 * cols, rows - rows / 2, cols, &e, NULL, path),
                0);
            fpk_recipe_plan p;
            ck_assert_int_eq(fpk_recipe_plan_init(&p, &r, rows, cols, &e, NULL, NULL), 0);
            result parts;
            result_init(&parts, n, nb, &r);
            /* bands of 1, 2, 3, ... block rows (any rows for one block) */
            fpk_recipe_stats st[16];
            int nbands = 0;
            unsigned flags = 0;
            for (size_t row0 = 0, step = 1; row0 < rows; step++) {
                size_t nrows = one ? step * 5 : step * bh;
                nrows = nrows < rows - row0 ? nrows : rows - row0;
                fpk_quantized q = parts.q;
                fpk_recipe_stats_init(&st[nbands], &r);
                fpk_error err;
                int rc = fpki_recipe_quantize_rows(&p, x, row0, nrows, &q, &st[nbands], &err, path);
                if (rc)
                    ck_abort_msg("%s rows %zu..%zu: %s", recipes[k], row0, row0 + nrows, err.msg);
                flags |= q.flags;
                nbands++;
                row0 += nrows;
            }
            parts.q.flags = flags;
            parts.q.global = p.global;
            parts.q.amax = p.tensor.amax;
            for (int i = 0; i < nbands; i++)
                ck_assert(fpk_recipe_stats_merge(&parts.st, &st[i]));
            char what[160];
            snprintf(what, sizeof what, "%s in %d bands, %s", recipes[k], nbands,
                     s < 0 ? "general" : fpki_isa_name((fpki_isa)s));
            compare(&rep, what, &r, &whole, &parts, n, nb, x);
            fpk_recipe_stats back;
            fpk_recipe_stats_init(&back, &r);
            for (int i = nbands - 1; i >= 0; i--)
                ck_assert(fpk_recipe_stats_merge(&back, &st[i]));
            if (memcmp(&back, &parts.st, sizeof back))
                tu_fail(&rep, "%s: merged backwards, statistics differ", what);
            /* a band that splits blocks */
            if (!one && bh > 1) {
                fpk_quantized q = parts.q;
                fpk_error err = {0};
                size_t nr = bh < rows - 1 ? bh : rows - 1;
                ck_assert_int_eq(fpki_recipe_quantize_rows(&p, x, 1, nr, &q, NULL, &err, path),
                                 FPK_ESYNTAX);
                ck_assert_msg(strstr(err.msg, "block rows") != NULL, "%s", err.msg);
            }
            result_free(&parts);
        }
        result_free(&whole);
    }
    free(x);
    tu_report_line(&rep, "bands of block rows against one call");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The Hadamard kernels of every set, at bfloat16's and float32's
 * precision, against fpk_rht16 on hard runs: two inputs at every distance
 * of exponents (sums exact in double and not), sums at and beside every
 * rounding midpoint of a binade, cancellations that leave a tiny rest,
 * overflow, subnormals, signed zeros, infinities and NaNs, and random
 * runs of every span.  Counts the runs left to the exact path. */
START_TEST(test_rht)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    enum { RUNS = 8192 };
    static uint32_t x[RUNS * 16], z[RUNS * 16];
    static uint8_t redo[RUNS];
    size_t nruns = 0;
    tu_rng rng;
    tu_rng_init(&rng, seed);
#define RUN() (x + 16 * nruns++)
    for (int d = 0; d <= 280 && nruns < RUNS; d++)
        for (int v = 0; v < 4; v++) {
            uint32_t *r = RUN();
            memset(r, 0, 64);
            uint32_t e = 254 - (uint32_t)(v * 3);
            r[v] = e << 23 | (uint32_t)(tu_rng_next(&rng) & 0x7fffff);
            uint32_t lo = e > (uint32_t)d ? e - (uint32_t)d : 0;
            r[15 - v] = (uint32_t)(v & 1) << 31 | lo << 23 | (uint32_t)(tu_rng_next(&rng) & 0x7fffff);
            if (lo == 0)
                r[15 - v] |= 1;
        }
    /* a binade's midpoints (9 significant bits, times 4 for the transform)
     * alone, and with a tiny term that moves them by less than any
     * double can see at their size */
    for (uint32_t m = 0; m < 256 && nruns + 3 < RUNS; m += 1) {
        /* bfloat16's midpoints (bit 15 the half ulp), then quarter points */
        uint32_t mid = (uint32_t)(130 + m % 100) << 23 | (2 * (m % 128) + 1) << (m < 128 ? 15 : 14);
        for (int t = 0; t < 3; t++) {
            uint32_t *r = RUN();
            memset(r, 0, 64);
            r[0] = mid;
            if (t)
                r[5] = (uint32_t)(t == 2) << 31 | 0x00000001u << (m % 23);
        }
    }
    /* cancellations: equal and opposite large terms, a small rest */
    for (int i = 0; i < 512 && nruns < RUNS; i++) {
        uint32_t *r = RUN();
        memset(r, 0, 64);
        uint32_t big = (uint32_t)(tu_rng_next(&rng) % 254 + 1) << 23 |
                       (uint32_t)(tu_rng_next(&rng) & 0x7fffff);
        r[1] = big;
        r[3] = big;
        r[2] = big ^ 0x80000000;
        r[6] = (uint32_t)(tu_rng_next(&rng) % 120) << 23 | (uint32_t)(tu_rng_next(&rng) & 0x7fffff);
    }
    /* overflow, subnormals, signed zeros, infinities and NaNs */
    for (int i = 0; i < 64 && nruns < RUNS; i++) {
        uint32_t *r = RUN();
        for (int j = 0; j < 16; j++) {
            uint64_t u = tu_rng_next(&rng);
            switch (i % 4) {
            case 0: r[j] = (uint32_t)(u & 0x80000000) | (0x7f7fffff - (uint32_t)(u >> 40 & 0xffff)); break;
            case 1: r[j] = (uint32_t)(u & 0x807fffff); break;
            case 2: r[j] = (uint32_t)(u & 0x80000000); break;
            default: r[j] = j == i % 16 ? (i & 8 ? 0x7f800000 : 0xffc00001) : (uint32_t)u; break;
            }
        }
    }
    /* random runs of every span */
    while (nruns < RUNS) {
        uint32_t *r = RUN();
        uint32_t span = (uint32_t)(nruns % 40), base = (uint32_t)(tu_rng_below(&rng, 200) + 1);
        for (int j = 0; j < 16; j++) {
            uint64_t u = tu_rng_next(&rng);
            r[j] = (uint32_t)(u & 0x807fffff) | (base + (uint32_t)((u >> 32) % (span + 1))) << 23;
            if (u >> 60 == 0)
                r[j] = 0;
        }
    }
#undef RUN
    for (int prec = 8; prec <= 24; prec += 16) {
        const fpk_format *f = prec == 8 ? &fpk_bf16 : &fpk_fp32;
        for (int s = 0; s <= (int)best; s++) {
            size_t left = fpki_rht16_fns[s](x, 16 * RUNS, 0xd7e8u, prec, z, redo), count = 0;
            for (size_t g = 0; g < RUNS; g++) {
                float in[16], want[16];
                memcpy(in, x + 16 * g, 64);
                fpk_rht16(in, 0xd7e8u, f, want);
                count += redo[g];
                if (redo[g])
                    continue;
                for (int j = 0; j < 16; j++)
                    tu_check(&rep, &fpk_fp32, (ref_result){bits_of(want[j]), 0}, z[16 * g + j], 0,
                             "rht %s prec %d run %zu output %d", fpki_isa_name((fpki_isa)s), prec,
                             g, j);
            }
            ck_assert_uint_eq(left, count);
            tu_report_line(&rep, "rht %s at %d bits: %zu of %d runs left to fpk_rht16",
                           fpki_isa_name((fpki_isa)s), prec, count, RUNS);
            ck_assert_uint_lt(count, RUNS / 4);
        }
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Blocks of one element, whose amaxes lie at and around every boundary
 * the rules have (powers of two, the rounding of the scale's quotient to
 * each scale code, E4M3's normal range): the fast keys give the general
 * path's scales, on every set. */
START_TEST(test_scale_boundaries)
{
    static const char *const rules[] = {
        "e4m3/e8m0/floor/1x1", "e2m1/e8m0/ceil/1x1", "e2m1/e8m0/even/1x1", "e4m3/e8m0/even/1x1",
        "e5m2/e8m0/rceil/1x1", "e2m1/e4m3/rceil/1x1", "e4m3/fp32/floor/1x1",
        "e4m3/fp32/amax/1x1", "e4m3/fp32/amax/1x1,margin=3,pow2", "e2m1/e4m3/amax/1x1",
        "e3m2/e5m3/amax/1x1", "e2m1/e4m3/nvfp4/1x1", "e2m1/e4m3/nvfp4-torchao/1x1",
        "e2m1/e4m3/nvfp4-div/1x1"};
    tu_report rep;
    tu_report_init(&rep, SUITE);
    enum { N = 65536 };
    float *x = malloc(N * 4);
    for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
        fpk_recipe r = recipe(rules[k]);
        const fpk_format *sf = r.scale == &fpk_fp32 ? &fpk_e4m3 : r.scale;
        fpk_ctx c = fpk_ctx_default();
        size_t n = 0;
        /* the tensor's amax first: NVFP4's global scale is not 1 */
        x[n++] = 1234.5f;
        for (uint32_t e = 0; e < 255; e++)
            for (int off = -3; off <= 3; off++) {
                x[n++] = float_of((e << 23) + (uint32_t)off);
                x[n++] = float_of((e << 23 | 0x400000) + (uint32_t)off);
            }
        /* amaxes whose quotients lie around each scale code's value and
         * the midpoint above it, for the quotients of every rule */
        float g6 = 2688.0f / 1234.5f / 6.0f, t = 1234.5f / 2688.0f;
        float maxe = float_of((uint32_t)fpk_convert(&fpk_fp32, r.elem, r.elem->max_finite, &c));
        for (fpk_bits code = 0; code < sf->max_finite && n < N - 64; code++)
            for (int mid = 0; mid < 2; mid++) {
                float v = float_of((uint32_t)fpk_convert(&fpk_fp32, sf, code, &c));
                if (mid)
                    v = (v + float_of((uint32_t)fpk_convert(&fpk_fp32, sf, code + 1, &c))) / 2;
                float targets[] = {v / g6, v * 6 * t, v * maxe};
                for (int j = 0; j < 3; j++)
                    for (int off = -2; off <= 2; off++)
                        x[n++] = float_of(bits_of(targets[j]) + (uint32_t)off);
            }
        for (size_t i = 0; i < n; i++)
            if (!(fabsf(x[i]) <= 3e38f))
                x[i] = 0;
        result a, b;
        result_init(&a, n, n, &r);
        a.rc = fpki_recipe_quantize(&r, x, 1, n, NULL, &a.q, &a.st, NULL, general);
        for (int s = 0; s <= (int)best; s++) {
            result_init(&b, n, n, &r);
            b.rc = fpki_recipe_quantize(&r, x, 1, n, NULL, &b.q, &b.st, NULL, set(s));
            char what[160];
            snprintf(what, sizeof what, "%s boundaries %s", rules[k], fpki_isa_name((fpki_isa)s));
            compare(&rep, what, &r, &a, &b, n, n, x);
            result_free(&b);
        }
        result_free(&a);
    }
    free(x);
    tu_report_line(&rep, "scales at every boundary");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* fpki_f32_to_small against the core, for the small formats a scale or
 * key may take: every code's value, the midpoints above it and 3 ulps
 * either side. */
START_TEST(test_to_small)
{
    const fpk_format *e5m3 = fpk_format_lookup("e5m3");
    const fpk_format *fs[] = {&fpk_e4m3, e5m3, &fpk_e5m2, &fpk_e4m3fnuz, &fpk_e2m1, &fpk_fp16};
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        const fpk_format *f = fs[k];
        fpk_ctx c = fpk_ctx_default();
        for (fpk_bits code = 0; code <= f->max_finite; code++) {
            uint32_t v = (uint32_t)fpk_convert(&fpk_fp32, f, code, &c), w = v;
            if (code < f->max_finite) {
                float mid = (float_of(v) +
                             float_of((uint32_t)fpk_convert(&fpk_fp32, f, code + 1, &c))) / 2;
                w = bits_of(mid);
            }
            for (int off = -3; off <= 3; off++)
                for (int at = 0; at < 2; at++) {
                    uint32_t q = (at ? w : v) + (uint32_t)off;
                    if (q > 0x7f800000u || (code == f->max_finite && off > 0) || (!code && off < 0))
                        continue;
                    fpk_ctx d = fpk_ctx_default();
                    fpk_bits want = fpk_convert(f, &fpk_fp32, q, &d);
                    tu_check(&rep, f, (ref_result){want, 0}, fpki_f32_to_small(f, q), 0,
                             "%s of %a", f->name, (double)float_of(q));
                }
        }
    }
    tu_report_line(&rep, "float32 into small formats");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The exact sums: a tensor's x2_sum against MPFR's sum of the runs'
 * folded lanes, computed here; x2 its rounding; JSON round trips. */
START_TEST(test_exact_sums)
{
    fpk_recipe r = recipe("mxfp8-e4m3");
    const size_t rows = 32, cols = 96, n = rows * cols;
    float *x = malloc(n * 4);
    fill(x, rows, cols, 0, 99);
    fpk_recipe_stats st;
    fpk_recipe_stats_init(&st, &r);
    fpk_quantized q = {0};
    ck_assert_int_eq(fpk_recipe_quantize(&r, x, rows, cols, NULL, &q, &st, NULL), 0);
    mpfr_t sum, t;
    mpfr_inits2(2000, sum, t, (mpfr_ptr)0);
    mpfr_set_zero(sum, 1);
    for (size_t i = 0; i < rows; i++)
        for (size_t c0 = 0; c0 < cols; c0 += 32) {
            double l[16] = {0};
            for (size_t j = c0; j < c0 + 32; j++) {
                double v = (double)x[i * cols + j];
                l[(j - c0) % 16] += v * v;
            }
            for (int h = 8; h; h /= 2)
                for (int k = 0; k < h; k++)
                    l[k] += l[k + h];
            mpfr_set_d(t, l[0], MPFR_RNDN);
            mpfr_add(sum, sum, t, MPFR_RNDN);
        }
    ck_assert(mpfr_get_d(sum, MPFR_RNDN) == st.x2);
    /* the fixed-point sum itself */
    mpfr_set_zero(t, 1);
    for (int i = 0; i < FPK_RECIPE_SUM_LIMBS; i++) {
        mpfr_t limb;
        mpfr_init2(limb, 64);
        mpfr_set_ui_2exp(limb, (unsigned long)st.x2_sum.limb[i], 64 * i - 298, MPFR_RNDN);
        mpfr_add(t, t, limb, MPFR_RNDN);
        mpfr_clear(limb);
    }
    ck_assert(mpfr_equal_p(t, sum));
    mpfr_clears(sum, t, (mpfr_ptr)0);
    char *json = fpk_recipe_stats_to_json(&st);
    ck_assert_ptr_nonnull(json);
    ck_assert_ptr_nonnull(strstr(json, "\"x2_sum\":\""));
    fpk_recipe_stats back;
    fpk_error err;
    ck_assert_int_eq(fpk_recipe_stats_from_json(&back, json, &err), 0);
    ck_assert(memcmp(&back, &st, sizeof st) == 0);
    free(json);
    free(x);
}
END_TEST

int main(void)
{
    seed = tu_seed(SUITE);
    unsetenv("FPK_ISA");
    best = fpki_isa_best();
    printf("%s: kernel sets c to %s\n", SUITE, fpki_isa_name(best));
    Suite *s = suite_create("recipe_fast");
    TCase *tc = tcase_create("recipe_fast");
    tcase_set_timeout(tc, 1200);
    tcase_add_test(tc, test_paths);
    tcase_add_test(tc, test_flags);
    tcase_add_test(tc, test_bands);
    tcase_add_test(tc, test_rht);
    tcase_add_test(tc, test_scale_boundaries);
    tcase_add_test(tc, test_to_small);
    tcase_add_test(tc, test_exact_sums);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
