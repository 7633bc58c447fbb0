/* Bulk throughput of the array paths, single thread unless a row says
 * otherwise, over 2^26 float32 elements of realistic gradient data:
 *   - float32 into fp16, bf16, tf32, e4m3 and e5m2 under RNE, RTZ and SR
 *     (fpk_array_convert) and fake quantisation under RNE
 *     (fpk_array_quantize), next to the scalar core (fpk_convert per
 *     element) and bare MPFR doing the same rounding (the value set at the
 *     format's precision and exponent range, mpfr_subnormalize; for SR,
 *     which MPFR has no mode for, time_mpfr_sr's rounding toward zero,
 *     exact difference and compare, checked against the library's);
 *   - the squared errors behind fpgrad's SQNR for fp16, bf16, e4m3 and
 *     e5m2 in one pass for all (fpk_array_quantize_sqerr_formats) and in
 *     one pass each;
 *   - MX quantisation (fpk_mx_quantize, blocks of 32, values out) into
 *     E4M3 and E5M2 (a piece at a time through the array kernels) and
 *     E2M1 (element by element through the core), in calls of 1024
 *     blocks as fpgrad makes them, next to MPFR's rounding into the same
 *     element format alone;
 *   - recipes (fpk_recipe_quantize: codes, scales, values and the
 *     recipe's statistics), every preset, over the data viewed as rows of
 *     128 (delayed scaling from a history holding 1.0);
 *   - fpgrad's statistics for fp16, bf16, e4m3 and e5m2 at once
 *     (fpk_stats_add_array) next to fpk_stats_add on the same values as
 *     doubles;
 *   - a plain read of the same bytes, the bandwidth floor, and the
 *     streaming store of their top 1, 2 or 4 bytes, the floor of a
 *     conversion's output of that width (bench_memory.c), next to which
 *     every conversion row gives its ratio;
 *   - numpy's astype(float16) and a log2 histogram (floor(log2|x|) of the
 *     nonzero finite elements, np.bincount), with the first of python3
 *     and /usr/bin/python3 that imports numpy;
 *   - fpgrad end to end on a 1 GiB .npy in the page cache, next to
 *     cat FILE > /dev/null, and its statistics pass alone
 *     (fpk_stats_add_tensor on the same file): on one thread, on two, and
 *     on its default (the CPUs it may run on); on one, the same bytes read
 *     as a raw file too (data at the start of a page); under SR on one
 *     thread and on its default.  cat and the runs of fpgrad take turns,
 *     each keeping its best wall time.
 * The data: the gradients and activation gradients of the bundled sample
 * dump (tests/data/sample), resampled to 2^26 elements, each taking the
 * sign and exponent of a value drawn at random from them and random
 * significand bits (zeros stay zeros, as ReLU leaves them).
 *
 * Figures are the best of REPS runs, timed by the thread's CPU clock: the
 * machine is shared, and the wall clock counts other jobs' time too; the
 * load average is printed before and after.  The scalar and MPFR rows time
 * a slice of the data, and the statistics rows a quarter of it for
 * fpk_stats_add.  Melem/s counts input elements; GB/s input bytes (8 a
 * double for fpk_stats_add, 4 elsewhere).
 *
 * Usage: bench_bulk FPGRAD SAMPLE-DIR [recipes | convert]   (make bench
 * passes the first two; with "recipes", only the plain read, the recipes'
 * rows and fpgrad --recipes next to cat; with "convert", only the plain
 * read, the streaming stores and the array conversions) */
#include <errno.h>
#include <math.h>
#include <mpfr.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-bulk.h"
#include "bench-memory.h"
#include "fpkit-tensor.h"

#define SLICE ((size_t)1 << 20) /* elements the scalar and MPFR rows time */
#define SR_SEED 42      /* the seed of every SR row */

uint32_t *data;  /* N float32 encodings */
uint64_t sink;   /* every result is folded in, so nothing is skipped */

double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void load_average(const char *when)
{
    double l[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3)
            l[0] = l[1] = l[2] = 0;
        fclose(f);
    }
    printf("load average %s: %.2f %.2f %.2f (%ld CPUs)\n", when, l[0], l[1], l[2],
           sysconf(_SC_NPROCESSORS_ONLN));
}

void die(const char *what)
{
    fprintf(stderr, "bench_bulk: %s: %s\n", what, strerror(errno));
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        die("malloc");
    memset(p, 0, n); /* touched: no page faults in the timed runs */
    return p;
}

static uint64_t rng_state = 0x853c49e6748fea9bu;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

typedef struct pool {
    uint32_t *v;
    size_t n, cap;
} pool;

static int collect(const char *file, void *arg)
{
    pool *p = arg;
    fpk_dump *d;
    fpk_error err;
    if (fpk_dump_open(file, NULL, &d, &err) != FPK_OK) {
        fprintf(stderr, "bench_bulk: %s\n", err.msg);
        exit(1);
    }
    for (size_t t = 0; t < fpk_dump_ntensors(d); t++) {
        const fpk_tensor *ten = fpk_dump_tensor(d, t);
        if (strncmp(ten->name, "grad/", 5) != 0 && strncmp(ten->name, "actgrad/", 8) != 0)
            continue;
        double *x = malloc(ten->count * sizeof *x);
        if (!x || fpk_dump_read(d, t, 0, ten->count, x, &err) != FPK_OK) {
            fprintf(stderr, "bench_bulk: %s\n", x ? err.msg : "out of memory");
            exit(1);
        }
        for (uint64_t i = 0; i < ten->count; i++) {
            if (p->n == p->cap) {
                p->cap = p->cap ? 2 * p->cap : 65536;
                if (!(p->v = realloc(p->v, p->cap * sizeof *p->v)))
                    die("realloc");
            }
            fpk_ctx c = fpk_ctx_default();
            p->v[p->n++] = (uint32_t)fpk_from_double(&fpk_fp32, x[i], &c);
        }
        free(x);
    }
    fpk_dump_close(d);
    return 0;
}

static void make_data(const char *sample)
{
    pool p = {0};
    fpk_error err;
    if (fpk_dump_walk(sample, collect, &p, &err) != FPK_OK || p.n == 0) {
        fprintf(stderr, "bench_bulk: %s: %s\n", sample, p.n ? err.msg : "no gradients found");
        exit(1);
    }
    data = xmalloc(N * sizeof *data);
    size_t zeros = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t r = rng_next();
        uint32_t v = p.v[(r >> 32) % p.n];
        data[i] = (v & 0x7fffffffu) ? (v & 0xff800000u) | (uint32_t)(r & 0x7fffff) : v;
        zeros += (v & 0x7fffffffu) == 0;
    }
    printf("data: 2^26 float32 resampled from %zu gradient values of %s; %.1f%% zeros\n", p.n,
           sample, 100.0 * (double)zeros / (double)N);
    free(p.v);
}

/* A row for ELEMS input elements of WIDTH bytes each. */
void row_width(const char *what, double seconds, size_t elems, size_t width,
                      const char *extra)
{
    printf("%-44s %9.0f Melem/s %7.2f GB/s  %s\n", what, (double)elems / seconds / 1e6,
           (double)(elems * width) / seconds / 1e9, extra ? extra : "");
    fflush(stdout);
}

/* A row for ELEMS float32 inputs. */
void row(const char *what, double seconds, size_t elems, const char *extra)
{
    row_width(what, seconds, elems, 4, extra);
}

/* The plain read: every byte of the data summed (bench_read_words), so
 * that the baseline reads memory as the array paths do. */
static double time_read(void)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t0 = cpu_now();
        sink += bench_read_words((const uint64_t *)data, N / 2);
        double t = cpu_now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

/* The streaming store of WIDTH bytes an element into OUT (64-byte
 * aligned): the memory reference of a conversion's output. */
static double time_stream(size_t width, void *out, const char **how)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t0 = cpu_now();
        *how = bench_stream_top(data, out, N, width);
        double t = cpu_now() - t0;
        sink += ((uint8_t *)out)[N / 3];
        best = t < best ? t : best;
    }
    return best;
}

typedef enum kind { CONVERT, QUANTIZE } kind;

/* The array path: N elements into OUT, THREADS threads. */
static double time_array(const fpk_format *f, fpk_round mode, kind k, void *out, int threads)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = mode;
        c.sr_seed = SR_SEED;
        double t0 = threads > 1 ? wall_now() : cpu_now();
        if (k == QUANTIZE)
            fpk_array_quantize(f, out, FPK_DTYPE_F32, data, N, &c, threads);
        else
            fpk_array_convert(f, out, FPK_DTYPE_F32, data, N, &c, threads);
        double t = (threads > 1 ? wall_now() : cpu_now()) - t0;
        sink += c.flags + ((uint8_t *)out)[N / 3];
        best = t < best ? t : best;
    }
    return best;
}

/* fpk_mx_quantize of the data into ELEM's blocks of 32 under RNE, the
 * values into OUT, in calls of MX_CALL elements. */
#define MX_CALL (1024 * FPK_MX_BLOCK)
static double time_mx(const fpk_format *elem, float *out)
{
    static fpk_mx_block blocks[MX_CALL / FPK_MX_BLOCK];
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        fpk_ctx c = fpk_ctx_default();
        double t0 = cpu_now();
        for (size_t i = 0; i < N; i += MX_CALL)
            fpk_mx_quantize(elem, FPK_MX_FLOOR, 0, (const float *)(const void *)(data + i),
                            MX_CALL, NULL, NULL, out + i, blocks, &c);
        double t = cpu_now() - t0;
        sink += c.flags + blocks[7].saturated + (uint32_t)out[N / 3];
        best = t < best ? t : best;
    }
    return best;
}

/* fpk_array_convert of the data into F under RNE in calls of CALL
 * elements each (a row or a scaling block at a time), on one thread: what
 * a call costs beyond its elements. */
static double time_calls(const fpk_format *f, size_t call, void *out)
{
    double best = 1e30;
    size_t size = fpk_array_size(f);
    for (int r = 0; r < REPS; r++) {
        fpk_ctx c = fpk_ctx_default();
        double t0 = cpu_now();
        for (size_t i = 0; i < N; i += call)
            fpk_array_convert(f, (uint8_t *)out + size * i, FPK_DTYPE_F32, data + i, call, &c, 1);
        double t = cpu_now() - t0;
        sink += c.flags + ((uint8_t *)out)[N / 3];
        best = t < best ? t : best;
    }
    return best;
}

/* fpk_recipe_quantize of the data, viewed as rows of 128, under the
 * recipe NAME: codes, scales, values and statistics out. */
static double time_recipe(const char *name)
{
    fpk_recipe r;
    if (fpk_recipe_parse(name, &r, NULL))
        die(name);
    size_t rows = N / 128, br, bc, nb = fpk_recipe_blocks(&r, rows, 128, &br, &bc);
    uint8_t *codes = xmalloc(N);
    uint32_t *scales = xmalloc(nb * sizeof *scales);
    float *y = xmalloc(N * sizeof *y);
    fpk_amax_history h;
    fpk_amax_history_init(&h, r.history ? r.history : 1);
    fpk_amax_history_push(&h, 1.0);
    fpk_recipe_stats *st = xmalloc(sizeof *st);
    double best = 1e30;
    for (int k = 0; k < REPS; k++) {
        fpk_recipe_stats_init(st, &r);
        fpk_quantized q = {.codes = codes, .scales = scales, .y = y};
        double t0 = cpu_now();
        if (fpk_recipe_quantize(&r, (const float *)(const void *)data, rows, 128,
                                r.history ? &h : NULL, &q, st, NULL))
            die(name);
        double t = cpu_now() - t0;
        sink += codes[N / 2] + st->flushed;
        best = t < best ? t : best;
    }
    free(st);
    free(codes), free(scales), free(y);
    return best;
}

/* The plain read and every preset's rows. */
static void recipe_rows(double read)
{
    for (size_t k = 0; fpk_recipe_presets[k]; k++) {
        char what[64], extra[64];
        double t = time_recipe(fpk_recipe_presets[k]);
        snprintf(what, sizeof what, "recipe %s, with statistics", fpk_recipe_presets[k]);
        snprintf(extra, sizeof extra, "%5.1f%% of the plain read's speed", 100 * read / t);
        row(what, t, N, extra);
    }
}

/* The squared errors of fake quantisation into F (an SQNR's sums): in one
 * pass (fpk_array_quantize_sqerr), or quantised a piece at a time into a
 * buffer and read back (fpk_array_quantize, fpk_array_sqerr), the two
 * passes that one replaces. */
#define SQERR_PIECE ((size_t)1 << 16)
static double time_sqerr(const fpk_format *f, bool one_pass)
{
    float *y = xmalloc(SQERR_PIECE * sizeof *y);
    const float *x = (const float *)(const void *)data;
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double x2[FPK_LANES] = {0}, e2[FPK_LANES] = {0};
        fpk_ctx c = fpk_ctx_default();
        double t0 = cpu_now();
        if (one_pass)
            fpk_array_quantize_sqerr(f, x, N, &c, x2, e2);
        else
            for (size_t i = 0; i < N; i += SQERR_PIECE) {
                fpk_array_quantize(f, y, FPK_DTYPE_F32, x + i, SQERR_PIECE, &c, 1);
                fpk_array_sqerr(x + i, y, SQERR_PIECE, x2, e2);
            }
        double t = cpu_now() - t0;
        sink += (uint64_t)(e2[5] / x2[5] * 1e9) + c.flags;
        best = t < best ? t : best;
    }
    free(y);
    return best;
}

/* fpk_convert element by element, over SLICE elements. */
static double time_scalar(const fpk_format *f, fpk_round mode)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = mode;
        uint64_t s = 0;
        double t0 = cpu_now();
        for (size_t i = 0; i < SLICE; i++)
            s += fpk_convert(f, &fpk_fp32, data[i], &c);
        double t = cpu_now() - t0;
        sink += s;
        best = t < best ? t : best;
    }
    return best * (double)N / SLICE;
}

/* Z := the float32 of encoding X rounded under RND to Z's precision in
 * the current exponent range, subnormalised; returns the ternary value. */
static int mpfr_round_f32(mpfr_ptr z, uint32_t x, mpfr_rnd_t rnd)
{
    float v;
    memcpy(&v, &x, sizeof v);
    int t = mpfr_set_flt(z, v, rnd);
    t = mpfr_check_range(z, t, rnd);
    return mpfr_subnormalize(z, t, rnd);
}

/* Bare MPFR, over SLICE elements: each value set at F's precision in F's
 * exponent range (MPFR's exponents are IEEE's plus one), subnormalised. */
static double time_mpfr(const fpk_format *f, fpk_round mode)
{
    mpfr_rnd_t rnd = mode == FPK_RTZ ? MPFR_RNDZ : MPFR_RNDN;
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t z;
    mpfr_init2(z, f->man_bits + 1);
    mpfr_set_emin(f->emin - f->man_bits + 1);
    mpfr_set_emax(f->emax + 1);
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        uint64_t s = 0;
        double t0 = cpu_now();
        for (size_t i = 0; i < SLICE; i++) {
            mpfr_round_f32(z, data[i], rnd);
            s += (uint64_t)mpfr_get_exp(z);
        }
        double t = cpu_now() - t0;
        sink += s;
        best = t < best ? t : best;
    }
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clear(z);
    return best * (double)N / SLICE;
}

/* MPFR doing the stochastic rounding of fpk_array_quantize (seed SR_SEED,
 * element i with counter i, 32 random bits), over SLICE elements: the
 * neighbour toward zero on F's grid (unbounded above), the discarded part
 * as an exact difference, scaled to 32 bits of an ulp and compared with
 * the hash's, the neighbour away from zero one ulp further, and overflow
 * as the directed mode that picks the neighbour gives it.  Its results
 * are compared with the library's: a difference stops the benchmark. */
static double time_mpfr_sr(const fpk_format *f)
{
    mpfr_exp_t emin = mpfr_get_emin();
    const mpfr_exp_t ulp_min = f->emin - f->man_bits; /* the least subnormal's exponent */
    float *want = xmalloc(SLICE * sizeof *want), *got = xmalloc(SLICE * sizeof *got);
    mpfr_t z, d, u, maxf;
    mpfr_inits2(f->man_bits + 1, z, u, maxf, (mpfr_ptr)0);
    mpfr_init2(d, 64);
    mpfr_set_d(maxf, fpk_to_double(f, f->max_finite), MPFR_RNDN);
    mpfr_set_emin(ulp_min + 1);
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t0 = cpu_now();
        for (size_t i = 0; i < SLICE; i++) {
            int t = mpfr_round_f32(z, data[i], MPFR_RNDZ);
            bool away = false;
            if (t != 0) {
                mpfr_exp_t ulp = mpfr_zero_p(z) ? ulp_min : mpfr_get_exp(z) - f->man_bits - 1;
                ulp = ulp < ulp_min ? ulp_min : ulp;
                /* frac * 2^32 = |x - z| * 2^(32 - ulp), scaled before it is
                 * taken (it would be below emin): exact, or zero where it
                 * is below 1 and its floor zero anyway */
                mpfr_mul_2si(z, z, 32 - ulp, MPFR_RNDN);
                float x;
                memcpy(&x, &data[i], sizeof x);
                mpfr_d_sub(d, ldexp((double)x, (int)(32 - ulp)), z, MPFR_RNDN);
                mpfr_mul_2si(z, z, ulp - 32, MPFR_RNDN);
                mpfr_abs(d, d, MPFR_RNDN);
                uint64_t rnd = fpk_sr_hash(SR_SEED, i) >> 32;
                away = mpfr_cmp_ui(d, (unsigned long)rnd + 1) >= 0;
                if (away) {
                    mpfr_set_si_2exp(u, mpfr_signbit(z) ? -1 : 1, ulp, MPFR_RNDN);
                    mpfr_add(z, z, u, MPFR_RNDN); /* exact: the next point of the grid */
                }
            }
            if (mpfr_cmpabs(z, maxf) > 0) { /* RTZ's overflow, or RUP's and RNE's */
                if (!away && t != 0)
                    mpfr_copysign(z, maxf, z, MPFR_RNDN);
                else if (f->inf)
                    mpfr_set_inf(z, mpfr_sgn(z));
                else
                    mpfr_set_nan(z);
            }
            want[i] = mpfr_get_flt(z, MPFR_RNDN);
        }
        double t = cpu_now() - t0;
        best = t < best ? t : best;
    }
    mpfr_set_emin(emin);
    mpfr_clears(z, d, u, maxf, (mpfr_ptr)0);
    fpk_ctx c = fpk_ctx_default();
    c.round = FPK_SR;
    c.sr_seed = SR_SEED;
    fpk_array_quantize(f, got, FPK_DTYPE_F32, data, SLICE, &c, 1);
    for (size_t i = 0; i < SLICE; i++) {
        bool nans = want[i] != want[i] && got[i] != got[i];
        if (!nans && memcmp(&want[i], &got[i], sizeof got[i]) != 0) {
            fprintf(stderr, "bench_bulk: SR into %s, element %zu (%08x): MPFR %a, fpkit %a\n",
                    f->name, i, data[i], (double)want[i], (double)got[i]);
            exit(1);
        }
    }
    free(want);
    free(got);
    return best * (double)N / SLICE;
}

const fpk_format *const stat_formats[4] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2};

/* The squared errors of the four formats of the statistics, fpgrad's
 * SQNR: in one pass for all (fpk_array_quantize_sqerr_formats), or in
 * one pass each (fpk_array_quantize_sqerr, X2 with the first). */
static double time_sqerr_formats(bool together)
{
    const float *x = (const float *)(const void *)data;
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double x2[FPK_LANES] = {0}, e2[4][FPK_LANES] = {{0}};
        fpk_ctx c[4];
        for (int j = 0; j < 4; j++)
            c[j] = fpk_ctx_default();
        double t0 = cpu_now();
        if (together)
            fpk_array_quantize_sqerr_formats(4, stat_formats, x, N, c, x2, &e2[0][0]);
        else
            for (int j = 0; j < 4; j++)
                fpk_array_quantize_sqerr(stat_formats[j], x, N, &c[j], j ? NULL : x2, e2[j]);
        double t = cpu_now() - t0;
        sink += (uint64_t)(e2[3][5] / x2[5] * 1e9) + c[2].flags;
        best = t < best ? t : best;
    }
    return best;
}

static double time_stats(int threads, fpk_round mode)
{
    fpk_stats *s = xmalloc(sizeof *s);
    fpk_ctx c = fpk_ctx_default();
    c.round = mode;
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        fpk_stats_init(s, stat_formats, 4, 1, &c);
        double t0 = threads > 1 ? wall_now() : cpu_now();
        fpk_stats_add_array(s, FPK_DTYPE_F32, data, N, threads);
        double t = (threads > 1 ? wall_now() : cpu_now()) - t0;
        sink += s->fmt[2].underflow;
        best = t < best ? t : best;
    }
    free(s);
    return best;
}

/* fpk_stats_add over a quarter of the data, as doubles. */
static double time_stats_scalar(void)
{
    size_t n = N / 4;
    double *d = xmalloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, &data[i], sizeof x);
        d[i] = x;
    }
    fpk_stats *s = xmalloc(sizeof *s);
    fpk_ctx c = fpk_ctx_default();
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        fpk_stats_init(s, stat_formats, 4, 1, &c);
        double t0 = cpu_now();
        fpk_stats_add(s, d, n);
        double t = cpu_now() - t0;
        sink += s->fmt[2].underflow;
        best = t < best ? t : best;
    }
    free(s);
    free(d);
    return best * 4;
}

int main(int argc, char **argv)
{
    bool recipes = argc == 4 && strcmp(argv[3], "recipes") == 0;
    bool convert_only = argc == 4 && strcmp(argv[3], "convert") == 0;
    if (argc != 3 && !recipes && !convert_only) {
        fprintf(stderr, "usage: bench_bulk FPGRAD SAMPLE-DIR [recipes | convert]\n");
        return 2;
    }
    load_average("before");
    printf("fast paths: %s; times: best of %d, thread CPU time (wall time for 2 threads)\n",
           fpk_array_isa(), REPS);
    make_data(argv[2]);
    double read = time_read();
    row("plain read (the floor)", read, N, "");
    if (recipes) {
        recipe_rows(read);
        time_fpgrad(argv[1], true);
        load_average("after");
        printf("checksum %016llx\n", (unsigned long long)sink);
        return 0;
    }

    void *out = aligned_alloc(64, N * 4);
    if (!out)
        die("aligned_alloc");
    memset(out, 0, N * 4); /* touched: no page faults in the timed runs */
    double stream[5] = {0}; /* by the output's width in bytes */
    for (size_t width = 1; width <= 4; width *= 2) {
        const char *how;
        stream[width] = time_stream(width, out, &how);
        char what[64], extra[64];
        snprintf(what, sizeof what, "streaming store, %zu byte%s out", width,
                 width == 1 ? "" : "s");
        snprintf(extra, sizeof extra, "the floor of an output this wide (%s)", how);
        row(what, stream[width], N, extra);
    }
    static const fpk_format *const targets[] = {&fpk_fp16, &fpk_bf16, &fpk_tf32, &fpk_e4m3,
                                                &fpk_e5m2};
    static const struct {
        fpk_round mode;
        kind k;
        const char *name;
    } variants[] = {{FPK_RNE, CONVERT, "rne"},
                    {FPK_RTZ, CONVERT, "rtz"},
                    {FPK_SR, CONVERT, "sr"},
                    {FPK_RNE, QUANTIZE, "rne quantize"}};
    double mpfr_rne[sizeof targets / sizeof targets[0]];
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        const fpk_format *f = targets[t];
        double mpfr[3] = {0, 0, 0}, scalar = 0;
        if (!convert_only) {
            mpfr[0] = time_mpfr(f, FPK_RNE);
            mpfr[1] = time_mpfr(f, FPK_RTZ);
            mpfr[2] = time_mpfr_sr(f);
            scalar = time_scalar(f, FPK_RNE);
        }
        mpfr_rne[t] = mpfr[0];
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            double s = time_array(f, variants[v].mode, variants[v].k, out, 1);
            size_t width = variants[v].k == QUANTIZE ? 4 : f->width <= 8 ? 1 : f->width <= 16 ? 2 : 4;
            char what[64], extra[96];
            snprintf(what, sizeof what, "f32->%s %s", f->name, variants[v].name);
            fpk_round m = variants[v].mode;
            snprintf(extra, sizeof extra, "%5.2fx the streaming store", stream[width] / s);
            if (!convert_only)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " %6.0fx MPFR",
                         mpfr[m == FPK_SR ? 2 : m == FPK_RTZ] / s);
            if (v == 0 && !convert_only)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         " %5.0fx scalar", scalar / s);
            row(what, s, N, extra);
        }
        if (convert_only)
            continue;
        char what[64];
        snprintf(what, sizeof what, "f32->%s rne scalar core", f->name);
        row(what, scalar, N, "");
        snprintf(what, sizeof what, "f32->%s rne MPFR", f->name);
        row(what, mpfr[0], N, "");
        snprintf(what, sizeof what, "f32->%s sr MPFR", f->name);
        row(what, mpfr[2], N, "");
    }
    if (convert_only) {
        free(out);
        load_average("after");
        printf("checksum %016llx\n", (unsigned long long)sink);
        return 0;
    }
    row("f32->fp16 rne, 2 threads (wall)", time_array(&fpk_fp16, FPK_RNE, CONVERT, out, 2), N,
        "");
    double whole = time_array(&fpk_e4m3, FPK_RNE, CONVERT, out, 1);
    for (size_t call = 32; call <= 4096; call *= 8) {
        double t = time_calls(&fpk_e4m3, call, out);
        char what[64], extra[64];
        snprintf(what, sizeof what, "f32->e4m3 rne, calls of %zu", call);
        snprintf(extra, sizeof extra, "%6.0f ns a call more than one call",
                 (t - whole) / (double)(N / call) * 1e9);
        row(what, t, N, extra);
    }
    static const struct {
        const fpk_format *elem;
        size_t target; /* the MPFR rows' of ELEM; SIZE_MAX: none */
        const char *what;
    } mx[] = {{&fpk_e4m3, 3, "mx e4m3 rne, blocks of 32"},
              {&fpk_e5m2, 4, "mx e5m2 rne, blocks of 32"},
              {&fpk_e2m1, SIZE_MAX, "mx e2m1 rne, element by element"}};
    for (size_t m = 0; m < sizeof mx / sizeof mx[0]; m++) {
        double t = time_mx(mx[m].elem, out);
        char extra[96] = "";
        if (mx[m].target != SIZE_MAX)
            snprintf(extra, sizeof extra, "%6.0fx MPFR (its rounding alone)",
                     mpfr_rne[mx[m].target] / t);
        row(mx[m].what, t, N, extra);
    }
    free(out);
    recipe_rows(read);
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t += 3) {
        double one = time_sqerr(targets[t], true), two = time_sqerr(targets[t], false);
        char what[64], extra[64];
        snprintf(what, sizeof what, "sqerr %s rne, one pass", targets[t]->name);
        snprintf(extra, sizeof extra, "%5.2fx quantize + sqerr", two / one);
        row(what, one, N, extra);
        snprintf(what, sizeof what, "sqerr %s rne, quantize + sqerr", targets[t]->name);
        row(what, two, N, "");
    }

    double together = time_sqerr_formats(true), each = time_sqerr_formats(false);
    char note[64];
    snprintf(note, sizeof note, "%5.2fx a pass each", each / together);
    row("sqerr fp16,bf16,e4m3,e5m2 rne, one pass", together, N, note);
    row("sqerr ... rne, a pass each", each, N, "");

    double st = time_stats(1, FPK_RNE), scalar = time_stats_scalar();
    char extra[64];
    snprintf(extra, sizeof extra, "%5.0fx fpk_stats_add", scalar / st);
    row("stats fp16,bf16,e4m3,e5m2 rne", st, N, extra);
    row("stats ... sr", time_stats(1, FPK_SR), N, "");
    row("stats ... rne, 2 threads (wall)", time_stats(2, FPK_RNE), N, "");
    row_width("stats ... fpk_stats_add (scalar, f64)", scalar, N, 8, "");

    time_fpgrad(argv[1], false);
    free(data);
    load_average("after");
    printf("checksum %016llx\n", (unsigned long long)sink);
    return 0;
}
