/* fpround: the rounding error of low-precision formats on the tensors of a
 * dump, element by element, and the error of sums and dot products
 * accumulated in them, against exact values (MPFR). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpfr.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fpround.h"
#include "grad.h"
#include "outfile.h"

enum { OPT_SUM = CLI_OWN, OPT_DOT };

static const cli_opt options[] = {
    {.key = CLI_FORMATS, .help = "formats to round into (default fp16,bf16,e4m3,e5m2)"},
    {.key = CLI_ROUND, .value = "LIST",
     .help = "rounding modes: rne rna rtz rup rdn rod sr (default rne; rne,sr with --sum or "
             "--dot)"},
    {.key = CLI_SEED},
    {.key = CLI_SEEDS, .help = "--sum, --dot: stochastic sums with K seeds (default 16)"},
    {.key = OPT_SUM, .name = "--sum",
     .help = "accumulate each tensor in each format: sequential, pairwise, Kahan, against the "
             "exact sum"},
    {.key = OPT_DOT, .name = "--dot", .value = "A B", .nvalues = 2,
     .help = "the dot product of the tensors named A and B"},
    {.key = CLI_MATCH},
    {.key = CLI_DTYPE},
    {.key = CLI_SHAPE},
    {.key = CLI_BIG_ENDIAN},
    {.key = CLI_JSON},
    {.key = CLI_PLOT, .help = "the error histogram, or the running sums, .png or .svg"},
    {.key = CLI_PLOT_SIZE},
    {.key = CLI_THREADS, .help = "threads rounding the elements (default: all its CPUs)"},
    {.key = CLI_QUIET},
    {0},
};

static const char *const synopsis[] = {
    "--formats --round --seed --seeds --sum|--dot --match --dtype --shape --big-endian --json "
    "--plot --plot-size --threads --quiet PATH...",
    NULL,
};

#define CHUNK ((size_t)1 << 20) /* elements read at once */
#define DEFAULT_FORMATS "fp16,bf16,e4m3,e5m2"
#define PLOT_POINTS 2000 /* running sums: about this many points */
/* Bits of an MPFR number that holds any sum of up to 2^64 doubles exactly
 * (2^-1074 .. 2^1088), or of their products (2^-2148 .. 2^2112). */
#define SUM_PREC 2200
#define DOT_PREC 4300

typedef struct opts {
    fr_run run;
    cli_common c;
    bool sum;
    const char *dot_a, *dot_b;
} opts;

/* A tensor to read: file FILE, tensor TENSOR of it. */
typedef struct where {
    size_t file, tensor;
} where;

static void *xrealloc(void *p, size_t n, size_t size)
{
    if (!(p = realloc(p, (n ? n : 1) * size)))
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    return p;
}

const char *fr_method_name(fr_method m)
{
    static const char *const names[FR_NMETHODS] = {
        "sequential", "pairwise", "kahan", "fma", "fp32acc_exact", "fp32acc_rounded"};
    return names[m];
}

bool fr_fp32_holds(const fpk_format *f)
{
    return f->man_bits <= fpk_fp32.man_bits && f->emin - f->man_bits >= fpk_fp32.emin - fpk_fp32.man_bits &&
           f->emax <= fpk_fp32.emax;
}

static fpk_dump *open_dump(const opts *o, const char *path)
{
    fpk_dump *d;
    fpk_error err;
    if (fpk_dump_open(path, o->c.has_raw ? &o->c.raw : NULL, &d, &err) != FPK_OK)
        cli_die_error(&err);
    return d;
}

static void fill_row(fr_row *r, const fpk_tensor *t, const char *file)
{
    memset(r, 0, sizeof *r);
    r->name = cli_strf("%s", t->name);
    r->file = cli_strf("%s", file);
    r->dtype = t->dtype;
    r->ndim = t->ndim;
    memcpy(r->shape, t->shape, sizeof r->shape);
    r->count = t->count;
}

/* The rows: every tensor that matches, or for --dot the k-th tensor named A
 * with the k-th named B, in the order of the paths. */
static where *list_tensors(opts *o, const cli_files *fs)
{
    fr_run *run = &o->run;
    size_t cap = 16, seen = 0, na = 0, nb = 0;
    where *w = cli_xcalloc(2 * cap, sizeof *w), *wb = cli_xcalloc(cap, sizeof *wb);
    run->rows = cli_xcalloc(cap, sizeof *run->rows);
    fr_row *brows = cli_xcalloc(cap, sizeof *brows);
    run->nfiles = 0;
    for (size_t i = 0; i < fs->n; i++) {
        fpk_dump *d = open_dump(o, fs->v[i]);
        bool used = false;
        for (size_t t = 0; t < fpk_dump_ntensors(d); t++) {
            const fpk_tensor *ten = fpk_dump_tensor(d, t);
            seen++;
            bool is_a, is_b = false;
            if (run->kind == FR_DOT) {
                is_a = strcmp(ten->name, o->dot_a) == 0;
                is_b = strcmp(ten->name, o->dot_b) == 0;
            } else {
                is_a = !o->c.has_match || regexec(&o->c.match, ten->name, 0, NULL, 0) == 0;
            }
            if (na == cap || nb == cap) {
                cap *= 2;
                w = xrealloc(w, 2 * cap, sizeof *w);
                wb = xrealloc(wb, cap, sizeof *wb);
                run->rows = xrealloc(run->rows, cap, sizeof *run->rows);
                brows = xrealloc(brows, cap, sizeof *brows);
            }
            if (is_a) {
                fill_row(&run->rows[na], ten, fs->v[i]);
                w[na++] = (where){i, t};
                used = true;
            }
            if (is_b) {
                fill_row(&brows[nb], ten, fs->v[i]);
                wb[nb++] = (where){i, t};
                used = true;
            }
        }
        run->nfiles += used;
        fpk_dump_close(d);
    }
    run->nrows = na;
    if (run->kind == FR_DOT) {
        if (!na || !nb)
            cli_die(CLI_EXIT_USAGE, "--dot: no tensor named \"%s\" among the %zu found",
                    na ? o->dot_b : o->dot_a, seen);
        if (na != nb)
            cli_die(CLI_EXIT_USAGE, "--dot: %zu tensors named \"%s\" but %zu named \"%s\"", na,
                    o->dot_a, nb, o->dot_b);
        /* w[2k] is A's and w[2k+1] B's. */
        where *pairs = cli_xcalloc(2 * na, sizeof *pairs);
        for (size_t k = 0; k < na; k++) {
            fr_row *r = &run->rows[k];
            if (r->count != brows[k].count) {
                char *msg = cli_strf("--dot: %s: %s has %" PRIu64 " elements but %s: %s has %" PRIu64,
                                     r->file, r->name, r->count, brows[k].file, o->dot_b,
                                     brows[k].count);
                /* Nothing left only in dead locals for LeakSanitizer to
                 * report at the exit. */
                for (size_t j = k; j < nb; j++) /* those before are taken or freed */
                    free(brows[j].name), free(brows[j].file);
                free(brows), free(pairs), free(w), free(wb);
                cli_die(CLI_EXIT_USAGE, "%s", msg);
            }
            pairs[2 * k] = w[k];
            pairs[2 * k + 1] = wb[k];
            r->name_b = brows[k].name;
            if (strcmp(brows[k].file, r->file) != 0) {
                char *f = cli_strf("%s %s", r->file, brows[k].file);
                free(r->file);
                r->file = f;
            }
            free(brows[k].file);
        }
        free(w);
        w = pairs;
    } else if (!na) {
        if (!seen)
            cli_die(CLI_EXIT_USAGE, "no tensors found: the paths hold no .npy or safetensors tensors");
        cli_die(CLI_EXIT_USAGE, "no tensors to analyse: --match matched none of the %zu found", seen);
    }
    free(wb);
    free(brows);
    return w;
}

/* Reads all of tensor W into new memory. */
static double *read_all(const opts *o, const cli_files *fs, where w, uint64_t count)
{
    if (count > SIZE_MAX / sizeof(double))
        cli_die(CLI_EXIT_INTERNAL, "%s: tensor too large to hold in memory", fs->v[w.file]);
    double *x = cli_xcalloc((size_t)count, sizeof *x);
    fpk_dump *d = open_dump(o, fs->v[w.file]);
    for (uint64_t first = 0; first < count;) {
        size_t n = count - first < CHUNK ? (size_t)(count - first) : CHUNK;
        fpk_error err;
        if (fpk_dump_read(d, w.tensor, first, n, x + first, &err) != FPK_OK)
            cli_die_error(&err);
        first += n;
    }
    fpk_dump_close(d);
    return x;
}

/* R's zeros and nonfinite elements among X[0..N-1], or with Y (--dot) its
 * pairs: nonfinite where either element is, else zero where either is. */
static void count_kinds(fr_row *r, const double *x, const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || (y && !isfinite(y[i])))
            r->nonfinite++;
        else if (x[i] == 0 || (y && y[i] == 0))
            r->zeros++;
    }
}

/* The error of rounding X (nonzero, finite) to Q in F, into E. */
static void add_error(fr_err *e, const fpk_format *f, double x, fpk_bits qbits)
{
    fpk_class k = fpk_classify(f, qbits);
    if (k == FPK_CLASS_INF || k == FPK_CLASS_QNAN || k == FPK_CLASS_SNAN) {
        e->overflow++;
        return;
    }
    double q = fpk_to_double(f, qbits);
    /* q - x exactly, as hi + lo (Knuth's TwoSum: no overflow, |q| and |x|
     * are far below the largest double or equal). */
    double hi = q - x, bb = hi - q, lo = (q - (hi - bb)) + (-x - bb);
    long double d = (long double)hi + lo, lx = x;
    long double r = d / lx, ar = fabsl(r);
    e->measured++;
    e->underflow += q == 0;
    e->exact += hi == 0;
    e->sum_abs += ar;
    e->sum_sq += r * r;
    e->sum_signed += r;
    e->sum_x2 += lx * lx;
    e->sum_e2 += d * d;
    if ((double)ar > e->max_rel)
        e->max_rel = (double)ar;
    /* ulp(x) = 2^(max(floor(log2|x|), emin) - man_bits): a power of two, so
     * the quotient is exact but for the rounding of d. */
    int ex = ilogb(x) > f->emin ? ilogb(x) : f->emin;
    long double u = ldexpl(d, f->man_bits - ex);
    if ((double)fabsl(u) > e->max_ulps)
        e->max_ulps = (double)fabsl(u);
    long double s = x < 0 ? -u : u;
    long double b = floorl(s * FR_HIST_HALF + 0.5L);
    if (b < -FR_HIST_HALF)
        b = -FR_HIST_HALF;
    if (b > FR_HIST_HALF)
        b = FR_HIST_HALF;
    e->hist[(int)b + FR_HIST_HALF]++;
}

static void merge_error(fr_err *into, const fr_err *from)
{
    into->measured += from->measured;
    into->overflow += from->overflow;
    into->underflow += from->underflow;
    into->exact += from->exact;
    into->sum_abs += from->sum_abs;
    into->sum_sq += from->sum_sq;
    into->sum_signed += from->sum_signed;
    into->sum_x2 += from->sum_x2;
    into->sum_e2 += from->sum_e2;
    if (from->max_rel > into->max_rel)
        into->max_rel = from->max_rel;
    if (from->max_ulps > into->max_ulps)
        into->max_ulps = from->max_ulps;
    for (int b = 0; b < FR_HIST_BINS; b++)
        into->hist[b] += from->hist[b];
}

/* Encoding K of the array Q of fpk_array_size(F) bytes per encoding. */
static fpk_bits encoding_at(const fpk_format *f, const void *q, size_t k)
{
    switch (fpk_array_size(f)) {
    case 1: return ((const uint8_t *)q)[k];
    case 2: return ((const uint16_t *)q)[k];
    case 4: return ((const uint32_t *)q)[k];
    default: return ((const uint64_t *)q)[k];
    }
}

/* FR_ERROR: every element of row I, in chunks, rounded in every format and
 * mode (fpk_array_convert, into Q); under SR with the run's seed and the
 * element's index as counter. */
static void measure_errors(const opts *o, const cli_files *fs, const where *w, size_t i, double *buf,
                           fpk_bits *q)
{
    const fr_run *run = &o->run;
    fr_row *r = &run->rows[i];
    fpk_dump *d = open_dump(o, fs->v[w[i].file]);
    for (uint64_t first = 0; first < r->count;) {
        size_t n = r->count - first < CHUNK ? (size_t)(r->count - first) : CHUNK;
        fpk_error err;
        if (fpk_dump_read(d, w[i].tensor, first, n, buf, &err) != FPK_OK)
            cli_die_error(&err);
        count_kinds(r, buf, NULL, n);
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < run->nmodes; m++) {
                fpk_ctx c = fpk_ctx_default();
                c.round = run->modes[m];
                c.sr_seed = run->seed;
                c.sr_counter = first;
                const fpk_format *f = run->formats[j];
                fpk_array_convert(f, q, FPK_DTYPE_F64, buf, n, &c, o->c.threads);
                fr_err *e = &r->err[j][m];
                for (size_t k = 0; k < n; k++)
                    if (isfinite(buf[k]) && buf[k] != 0)
                        add_error(e, f, buf[k], encoding_at(f, q, k));
            }
        first += n;
    }
    fpk_dump_close(d);
}

static fpk_bits pairwise(const fpk_format *f, const fpk_bits *v, size_t n, fpk_ctx *c)
{
    if (n == 0)
        return 0;
    if (n == 1)
        return v[0];
    fpk_bits a = pairwise(f, v, n / 2, c);
    fpk_bits b = pairwise(f, v + n / 2, n - n / 2, c);
    return fpk_add(f, a, b, c);
}

static bool is_zero(const fpk_format *f, fpk_bits a)
{
    return fpk_classify(f, a) == FPK_CLASS_ZERO;
}

/* The running sum of the sequential method, sampled for the plot. */
typedef struct sampler {
    const fr_run *run;
    double *y; /* NULL: not sampled */
} sampler;

static void sample(sampler *sp, uint64_t done, const fpk_format *f, fpk_bits s)
{
    if (!sp || !sp->y)
        return;
    const fr_run *run = sp->run;
    for (size_t p = 0; p < run->npoints; p++)
        if (run->steps[p] == done)
            sp->y[p] = fpk_to_double(f, s);
}

/* Sequential accumulation: S = S + V[i] in ACC's format, each addend got
 * by ADDEND from element i; with stagnation and absorption. */
typedef fpk_bits (*addend_fn)(size_t i, fpk_ctx *c, void *arg);

static fpk_bits sequential(const fpk_format *acc, size_t n, addend_fn addend, void *arg,
                           fpk_ctx *c, fr_acc *a, sampler *sp)
{
    fpk_bits s = 0;
    uint64_t last_change = 0;
    bool nonzero_after = false;
    a->absorbed = 0;
    for (size_t i = 0; i < n; i++) {
        fpk_bits v = addend(i, c, arg);
        fpk_bits t = fpk_add(acc, s, v, c);
        if (t != s) {
            last_change = i + 1;
            nonzero_after = false;
        } else if (!is_zero(acc, v)) {
            a->absorbed++;
            nonzero_after = true;
        }
        s = t;
        sample(sp, i + 1, acc, s);
    }
    a->has_stagnation = nonzero_after;
    a->stagnation = last_change;
    return s;
}

typedef struct dotargs {
    const fpk_format *f;
    const fpk_bits *a, *b, *p; /* p: the products (pairwise, Kahan) */
    bool to_fp32;              /* the addend converted to fp32 */
} dotargs;

static fpk_bits elem_addend(size_t i, fpk_ctx *c, void *arg)
{
    (void)c;
    return ((const dotargs *)arg)->a[i];
}

static fpk_bits product_addend(size_t i, fpk_ctx *c, void *arg)
{
    const dotargs *d = arg;
    fpk_bits p = fpk_mul(d->f, d->a[i], d->b[i], c);
    return d->to_fp32 ? fpk_convert(&fpk_fp32, d->f, p, c) : p;
}

static fpk_bits kahan(const fpk_format *f, const fpk_bits *v, size_t n, fpk_ctx *c)
{
    fpk_bits s = 0, comp = 0;
    for (size_t i = 0; i < n; i++) {
        fpk_bits y = fpk_sub(f, v[i], comp, c);
        fpk_bits t = fpk_add(f, s, y, c);
        comp = fpk_sub(f, fpk_sub(f, t, s, c), y, c);
        s = t;
    }
    return s;
}

/* Result Z (in F) against EXACT into A's slot K. */
static void record(fr_acc *a, int k, const fpk_format *f, fpk_bits z, mpfr_t exact, mpfr_t tmp)
{
    double s = fpk_to_double(f, z);
    a->sum[k] = s;
    mpfr_set_d(tmp, s, MPFR_RNDN);
    mpfr_sub(tmp, tmp, exact, MPFR_RNDN);
    a->err[k] = mpfr_number_p(tmp) ? mpfr_get_d(tmp, MPFR_RNDN) : NAN;
    if (mpfr_number_p(tmp) && mpfr_regular_p(exact)) {
        mpfr_div(tmp, tmp, exact, MPFR_RNDN);
        a->rel[k] = mpfr_get_d(tmp, MPFR_RNDN);
    } else {
        a->rel[k] = NAN;
    }
}

static void alloc_acc(fr_acc *a, int n)
{
    a->applies = true;
    a->n = n;
    a->sum = cli_xcalloc((size_t)n, sizeof *a->sum);
    a->err = cli_xcalloc((size_t)n, sizeof *a->err);
    a->rel = cli_xcalloc((size_t)n, sizeof *a->rel);
}

/* The plot's series for format J and mode M of row 0, or NULL. */
static sampler *series_for(fr_run *run, size_t i, int j, int m, int k, sampler *sp)
{
    if (i != 0 || k != 0 || !run->npoints)
        return NULL;
    sp->run = run;
    sp->y = run->series[j * run->nmodes + m].y;
    return sp;
}

/* FR_SUM and FR_DOT for row I: X (and Y for a dot) held in every format
 * (RNE), accumulated by every method in every mode. */
static void accumulate(fr_run *run, size_t i, const double *x, const double *y)
{
    fr_row *r = &run->rows[i];
    size_t n = (size_t)r->count;
    bool dot = y != NULL;
    mpfr_prec_t prec = dot ? DOT_PREC : SUM_PREC;
    mpfr_t exact, tmp, prod;
    mpfr_inits2(prec, exact, tmp, (mpfr_ptr)0);
    mpfr_init2(prod, 2 * 53);

    /* Of the elements as read. */
    mpfr_set_zero(exact, 1);
    for (size_t k = 0; k < n; k++) {
        if (dot) {
            mpfr_set_d(prod, x[k], MPFR_RNDN);
            mpfr_mul_d(prod, prod, y[k], MPFR_RNDN);
            mpfr_add(exact, exact, prod, MPFR_RNDN);
        } else {
            mpfr_add_d(exact, exact, x[k], MPFR_RNDN);
        }
    }
    r->exact_input = mpfr_get_d(exact, MPFR_RNDN);

    fpk_bits *a = cli_xcalloc(n, sizeof *a), *b = dot ? cli_xcalloc(n, sizeof *b) : NULL;
    fpk_bits *p = cli_xcalloc(n, sizeof *p), *a32 = NULL, *b32 = NULL;
    if (dot) {
        a32 = cli_xcalloc(n, sizeof *a32);
        b32 = cli_xcalloc(n, sizeof *b32);
    }
    for (int j = 0; j < run->nformats; j++) {
        const fpk_format *f = run->formats[j];
        fr_accfmt *af = &r->fmt[j];
        fpk_ctx rne = fpk_ctx_default();
        mpfr_set_zero(exact, 1);
        for (size_t k = 0; k < n; k++) {
            a[k] = fpk_from_double(f, x[k], &rne);
            if (dot) {
                b[k] = fpk_from_double(f, y[k], &rne);
                mpfr_set_d(prod, fpk_to_double(f, a[k]), MPFR_RNDN);
                mpfr_mul_d(prod, prod, fpk_to_double(f, b[k]), MPFR_RNDN);
                mpfr_add(exact, exact, prod, MPFR_RNDN);
            } else {
                mpfr_add_d(exact, exact, fpk_to_double(f, a[k]), MPFR_RNDN);
            }
        }
        af->exact = mpfr_get_d(exact, MPFR_RNDN);
        bool f32 = dot && fr_fp32_holds(f);
        if (f32)
            for (size_t k = 0; k < n; k++) {
                a32[k] = fpk_convert(&fpk_fp32, f, a[k], &rne);
                b32[k] = fpk_convert(&fpk_fp32, f, b[k], &rne);
            }
        for (int m = 0; m < run->nmodes; m++) {
            fpk_round mode = run->modes[m];
            int nk = mode == FPK_SR ? run->seeds : 1;
            for (int meth = 0; meth < FR_NMETHODS; meth++) {
                bool applies = meth == FR_SEQ || meth == FR_PAIR || meth == FR_KAHAN ||
                               (dot && meth == FR_FMA) ||
                               (f32 && (meth == FR_F32X || meth == FR_F32R));
                if (applies)
                    alloc_acc(&af->acc[meth][m], nk);
            }
            for (int k = 0; k < nk; k++) {
                fpk_ctx c = fpk_ctx_default();
                c.round = mode;
                c.sr_seed = run->seed + (uint64_t)k;
                dotargs da = {.f = f, .a = a, .b = b};
                sampler sp;
                fr_acc *seq = &af->acc[FR_SEQ][m];
                fpk_bits z = sequential(f, n, dot ? product_addend : elem_addend, &da, &c, seq,
                                        series_for(run, i, j, m, k, &sp));
                record(seq, k, f, z, exact, tmp);
                seq->has_stagnation &= mode != FPK_SR;

                const fpk_bits *v = a;
                if (dot) {
                    for (size_t q = 0; q < n; q++)
                        p[q] = fpk_mul(f, a[q], b[q], &c);
                    v = p;
                }
                record(&af->acc[FR_PAIR][m], k, f, pairwise(f, v, n, &c), exact, tmp);
                record(&af->acc[FR_KAHAN][m], k, f, kahan(f, v, n, &c), exact, tmp);
                if (!dot)
                    continue;
                fpk_bits s = 0;
                for (size_t q = 0; q < n; q++)
                    s = fpk_fma(f, a[q], b[q], s, &c);
                record(&af->acc[FR_FMA][m], k, f, s, exact, tmp);
                if (!f32)
                    continue;
                s = 0;
                for (size_t q = 0; q < n; q++)
                    s = fpk_fma(&fpk_fp32, a32[q], b32[q], s, &c);
                record(&af->acc[FR_F32X][m], k, &fpk_fp32, s, exact, tmp);
                da.to_fp32 = true;
                fr_acc *rp = &af->acc[FR_F32R][m];
                s = 0;
                for (size_t q = 0; q < n; q++)
                    s = fpk_add(&fpk_fp32, s, product_addend(q, &c, &da), &c);
                record(rp, k, &fpk_fp32, s, exact, tmp);
            }
        }
    }
    free(a), free(b), free(p), free(a32), free(b32);
    mpfr_clears(exact, tmp, prod, (mpfr_ptr)0);
}

/* --plot with --sum or --dot: the steps sampled in row 0, the exact running
 * value at each, and a series per format and mode (sequential, seed 0). */
static void plan_plot(fr_run *run, const double *x, const double *y)
{
    uint64_t n = run->rows[0].count, every = n / PLOT_POINTS + 1;
    run->npoints = (size_t)(n / every + (n % every != 0) + 1);
    run->steps = cli_xcalloc(run->npoints, sizeof *run->steps);
    run->exact_running = cli_xcalloc(run->npoints, sizeof *run->exact_running);
    size_t p = 0;
    for (uint64_t s = 0; s < n; s += every)
        run->steps[p++] = s;
    run->steps[p++] = n;
    run->npoints = p;
    mpfr_t acc, prod;
    mpfr_init2(acc, y ? DOT_PREC : SUM_PREC);
    mpfr_init2(prod, 2 * 53);
    mpfr_set_zero(acc, 1);
    size_t q = 0;
    for (uint64_t k = 0; k <= n; k++) {
        if (q < p && run->steps[q] == k)
            run->exact_running[q++] = mpfr_get_d(acc, MPFR_RNDN);
        if (k == n)
            break;
        if (y) {
            mpfr_set_d(prod, x[k], MPFR_RNDN);
            mpfr_mul_d(prod, prod, y[k], MPFR_RNDN);
            mpfr_add(acc, acc, prod, MPFR_RNDN);
        } else {
            mpfr_add_d(acc, acc, x[k], MPFR_RNDN);
        }
    }
    mpfr_clears(acc, prod, (mpfr_ptr)0);
    run->nseries = run->nformats * run->nmodes;
    run->series = cli_xcalloc((size_t)run->nseries, sizeof *run->series);
    for (int j = 0; j < run->nformats; j++)
        for (int m = 0; m < run->nmodes; m++) {
            fr_series *s = &run->series[j * run->nmodes + m];
            s->title = cli_strf("%s %s", run->formats[j]->name, fpk_round_name(run->modes[m]));
            s->y = cli_xcalloc(run->npoints, sizeof *s->y);
        }
}

static void analyse(opts *o, const cli_files *fs)
{
    fr_run *run = &o->run;
    where *w = list_tensors(o, fs);
    fr_row *t = &run->total;
    double *buf = run->kind == FR_ERROR ? cli_xcalloc(CHUNK, sizeof *buf) : NULL;
    fpk_bits *q = run->kind == FR_ERROR ? cli_xcalloc(CHUNK, sizeof *q) : NULL;
    for (size_t i = 0; i < run->nrows; i++) {
        fr_row *r = &run->rows[i];
        if (run->kind == FR_ERROR) {
            measure_errors(o, fs, w, i, buf, q);
            for (int j = 0; j < run->nformats; j++)
                for (int m = 0; m < run->nmodes; m++)
                    merge_error(&t->err[j][m], &r->err[j][m]);
        } else {
            bool dot = run->kind == FR_DOT;
            double *x = read_all(o, fs, dot ? w[2 * i] : w[i], r->count);
            double *y = dot ? read_all(o, fs, w[2 * i + 1], r->count) : NULL;
            count_kinds(r, x, y, (size_t)r->count);
            if (i == 0 && o->c.plot)
                plan_plot(run, x, y);
            accumulate(run, i, x, y);
            free(x);
            free(y);
        }
        t->count += r->count;
        t->zeros += r->zeros;
        t->nonfinite += r->nonfinite;
    }
    free(q);
    free(buf);
    free(w);
}

/* Protects the inputs and checks the outputs before the work: no output
 * replaces an input or another output. */
static void guard_outputs(const opts *o, const cli_files *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        outfile_protect(fs->v[i]);
    const char *outs[] = {o->c.json, o->c.plot};
    outfile_check(outs, sizeof outs / sizeof outs[0]);
}

static void write_outputs(const opts *o)
{
    const fr_run *run = &o->run;
    if (o->c.json) {
        outfile_json(o->c.json, fr_json(run));
    }
    if (o->c.plot)
        fr_plot(run, o->c.plot, o->c.plot_width, o->c.plot_height);
    if (!o->c.quiet && !cli_is_stdout(o->c.json)) {
        fr_text(run, stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    }
}

static void free_run(fr_run *run)
{
    for (size_t i = 0; i < run->nrows; i++) {
        fr_row *r = &run->rows[i];
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < FR_NMETHODS; m++)
                for (int k = 0; k < FPK_ROUND_COUNT; k++) {
                    free(r->fmt[j].acc[m][k].sum);
                    free(r->fmt[j].acc[m][k].err);
                    free(r->fmt[j].acc[m][k].rel);
                }
        free(r->name), free(r->file), free(r->name_b);
    }
    free(run->rows);
    for (int s = 0; s < run->nseries; s++)
        free(run->series[s].title), free(run->series[s].y);
    free(run->series);
    free(run->steps);
    free(run->exact_running);
}

static void own_option(void *state, int key, char *const *v)
{
    opts *o = state;
    if (key == OPT_SUM) {
        o->sum = true;
    } else if (key == OPT_DOT) {
        o->dot_a = v[0];
        o->dot_b = v[1];
    }
}

static const cli_tool tool = {
    .name = "fpround",
    .synopsis = synopsis,
    .intro = CLI_PATHS_INTRO,
    .opts = options,
    .own = own_option,
    .max_rounds = FPK_ROUND_COUNT,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    opts o = {0};
    fr_run *run = &o.run;
    cli_common_init(&o.c);
    o.c.seeds = 16;
    o.c.nformats = cli_parse_formats("--formats", DEFAULT_FORMATS, o.c.formats, CLI_MAX_FORMATS,
                                     NULL);
    cli_parse(&tool, &o.c, argc, argv, &o);
    if (!o.c.noperands) {
        cli_common_free(&o.c);
        return cli_usage_error(&tool);
    }
    if (o.sum && o.dot_a)
        cli_die(CLI_EXIT_USAGE, "options --sum and --dot exclude each other");
    if (o.dot_a && o.c.has_match)
        cli_die(CLI_EXIT_USAGE, "option --match does not apply to --dot, which names its tensors");
    run->kind = o.sum ? FR_SUM : o.dot_a ? FR_DOT : FR_ERROR;
    if (cli_given(&o.c, CLI_SEEDS) && run->kind == FR_ERROR)
        cli_die(CLI_EXIT_USAGE, "option --seeds applies to --sum and --dot only");
    run->nformats = o.c.nformats;
    memcpy(run->formats, o.c.formats, sizeof o.c.formats);
    run->seed = o.c.seed;
    run->seeds = o.c.seeds;
    if (run->kind != FR_ERROR && !cli_given(&o.c, CLI_ROUND)) {
        o.c.rounds[0] = FPK_RNE;
        o.c.rounds[1] = FPK_SR;
        o.c.nrounds = 2;
    }
    run->nmodes = o.c.nrounds;
    memcpy(run->modes, o.c.rounds, sizeof o.c.rounds);
    if (run->kind != FR_ERROR)
        cli_need_zero(o.sum ? "--sum" : "--dot", run->formats, run->nformats, "a sum");
    if (o.c.plot)
        gp_check(o.c.plot, "fpround.gp");

    cli_files fs = {0};
    for (int i = 0; i < o.c.noperands; i++) {
        struct stat st;
        if (o.c.has_raw && stat(o.c.operands[i], &st) == 0 && S_ISDIR(st.st_mode))
            cli_die(CLI_EXIT_USAGE, "%s: is a directory; --dtype reads raw files, named one by one",
                    o.c.operands[i]);
        cli_walk_files(o.c.operands[i], &fs);
    }
    guard_outputs(&o, &fs);
    analyse(&o, &fs);
    write_outputs(&o);

    free_run(run);
    cli_files_free(&fs);
    cli_common_free(&o.c);
    return 0;
}
