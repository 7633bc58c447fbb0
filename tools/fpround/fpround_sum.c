/* fpround's sums and dot products: the elements held in each format,
 * accumulated by each method in each mode, against the exact value (MPFR). */
#include <mpfr.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpround.h"

/* Bits of an MPFR number that holds any sum of up to 2^64 doubles exactly
 * (2^-1074 .. 2^1088), or of their products (2^-2148 .. 2^2112). */
#define SUM_PREC 2200
#define DOT_PREC 4300
#define PLOT_POINTS 2000 /* running sums: about this many points */

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
void fr_accumulate(fr_run *run, size_t i, const double *x, const double *y)
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
void fr_plan_plot(fr_run *run, const double *x, const double *y)
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

