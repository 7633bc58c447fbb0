/* fpswamp's arithmetic: each strategy's steps rounded by libfpkit, and
 * their outcome measured exactly with MPFR (fpswamp(1), MEASURES). */
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpswamp.h"

/* Exact arithmetic on doubles, their differences and their products with a
 * double or with K < 2^31: exponents from -2148 to 1024 plus 2 x 53 bits of
 * significand and 32 of K fit in this many bits. */
#define EXACT_PREC 3400

struct sw_calc {
    int nformats, seeds;
    fpk_ctx *sr; /* [format * seeds + seed] */
    mpfr_t dw, kdw, v, e, t;
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    return p;
}

/* Every MPFR operation here is exact by the choice of EXACT_PREC. */
static void exact(int ternary)
{
    if (ternary != 0)
        cli_die(CLI_EXIT_INTERNAL, "internal error: an exact operation was rounded");
}

sw_calc *sw_calc_new(const sw_run *run)
{
    sw_calc *x = xcalloc(1, sizeof *x);
    x->nformats = run->nformats;
    x->seeds = run->seeds;
    x->sr = xcalloc((size_t)run->nformats * (size_t)run->seeds, sizeof *x->sr);
    mpfr_inits2(EXACT_PREC, x->dw, x->kdw, x->v, x->e, x->t, (mpfr_ptr)0);
    return x;
}

void sw_calc_free(sw_calc *x)
{
    if (!x)
        return;
    mpfr_clears(x->dw, x->kdw, x->v, x->e, x->t, (mpfr_ptr)0);
    free(x->sr);
    free(x);
}

void sw_calc_row(sw_calc *x, size_t i)
{
    for (int j = 0; j < x->nformats; j++)
        for (int s = 0; s < x->seeds; s++) {
            fpk_ctx *c = &x->sr[j * x->seeds + s];
            *c = fpk_ctx_default();
            c->round = FPK_SR;
            c->sr_seed = fpk_sr_hash((uint64_t)s, (uint64_t)i);
        }
}

static bool finite(const fpk_format *f, fpk_bits a)
{
    fpk_class k = fpk_classify(f, a);
    return k == FPK_CLASS_ZERO || k == FPK_CLASS_SUBNORMAL || k == FPK_CLASS_NORMAL;
}

/* The bin of r = |V - W0| / |dw| (x->v holds V); x->dw holds dw. */
static int ratio_bin(sw_calc *x, double w0)
{
    exact(mpfr_sub_d(x->e, x->v, w0, MPFR_RNDN));
    if (mpfr_zero_p(x->e))
        return 0;
    mpfr_abs(x->e, x->e, MPFR_RNDN);
    mpfr_mul_2ui(x->e, x->e, 2, MPFR_RNDN); /* 4|e|, compared with k|dw| */
    static const unsigned long below[] = {1, 2, 3, 4};     /* bins 1..4: 4|e| < k|dw| */
    static const unsigned long at_most[] = {5, 6, 8};      /* bins 6..8: 4|e| <= k|dw| */
    for (int b = 0; b < 4; b++) {
        exact(mpfr_mul_ui(x->t, x->dw, below[b], MPFR_RNDN));
        mpfr_abs(x->t, x->t, MPFR_RNDN);
        int cmp = mpfr_cmp(x->e, x->t);
        if (cmp < 0)
            return 1 + b;
        if (cmp == 0 && below[b] == 4)
            return 5;
    }
    for (int b = 0; b < 3; b++) {
        exact(mpfr_mul_ui(x->t, x->dw, at_most[b], MPFR_RNDN));
        mpfr_abs(x->t, x->t, MPFR_RNDN);
        if (mpfr_cmp(x->e, x->t) <= 0)
            return 6 + b;
    }
    return 9;
}

/* One strategy's outcome on one element: x->v holds the value after one
 * step, WK the weight after K steps, W0 the weight before them.  OK is
 * false when something was not finite. */
static void measure(sw_calc *x, sw_acc *a, double w0, double wk, bool ok)
{
    if (!ok) {
        a->overflow++;
        return;
    }
    int bin = ratio_bin(x, w0);
    a->hist[bin]++;
    a->lost += bin == 0;
    a->half += bin < SW_HALF_BINS;
    a->stuck += wk == w0;
    /* (wK - w0 - K dw) / (K dw), exact but for the division */
    exact(mpfr_set_d(x->e, wk, MPFR_RNDN));
    exact(mpfr_sub_d(x->e, x->e, w0, MPFR_RNDN));
    exact(mpfr_sub(x->e, x->e, x->kdw, MPFR_RNDN));
    mpfr_div(x->e, x->e, x->kdw, MPFR_RNDN);
    double d = mpfr_get_d(x->e, MPFR_RNDN);
    a->drift_signed_sum += d;
    a->drift_sum += fabs(d);
    if (fabs(d) > a->drift_max)
        a->drift_max = fabs(d);
}

/* W + D repeated STEPS times in C's mode: the value after the first step
 * into *W1, the last returned.  A deterministic step that changes nothing
 * ends the loop: every later one would too. */
static fpk_bits replay(const fpk_format *f, fpk_bits w, fpk_bits d, int steps, fpk_ctx *c,
                       fpk_bits *w1)
{
    for (int k = 0; k < steps; k++) {
        fpk_bits z = fpk_add(f, w, d, c);
        if (k == 0)
            *w1 = z;
        if (z == w && c->round != FPK_SR)
            break;
        w = z;
    }
    return w;
}

/* The round-to-nearest-even strategy in F, or FP32 master weights (F fp32). */
static void plain(sw_calc *x, const fpk_format *f, fpk_bits w, fpk_bits d, int steps, fpk_ctx *c,
                  sw_acc *a)
{
    fpk_bits w1 = w, wk = replay(f, w, d, steps, c, &w1);
    bool ok = finite(f, w) && finite(f, d) && finite(f, w1) && finite(f, wk);
    if (ok)
        exact(mpfr_set_d(x->v, fpk_to_double(f, w1), MPFR_RNDN));
    measure(x, a, fpk_to_double(f, w), fpk_to_double(f, wk), ok);
}

/* Kahan-compensated weights: weight t and compensation c in F (RNE); each
 * step y = d - c, t' = t + y, c = (t' - t) - y.  One step is judged by the
 * pair's value t - c, the drift by the weight t. */
static void kahan(sw_calc *x, const fpk_format *f, fpk_bits w, fpk_bits d, int steps, sw_acc *a)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits t = w, comp = 0, t1 = w, c1 = 0;
    for (int k = 0; k < steps; k++) {
        fpk_bits y = fpk_sub(f, d, comp, &c);
        fpk_bits tn = fpk_add(f, t, y, &c);
        fpk_bits cn = fpk_sub(f, fpk_sub(f, tn, t, &c), y, &c);
        if (k == 0)
            t1 = tn, c1 = cn;
        bool same = tn == t && cn == comp;
        t = tn, comp = cn;
        if (same)
            break;
    }
    bool ok = finite(f, w) && finite(f, d) && finite(f, t1) && finite(f, c1) && finite(f, t) &&
              finite(f, comp);
    if (ok) {
        exact(mpfr_set_d(x->v, fpk_to_double(f, t1), MPFR_RNDN));
        exact(mpfr_sub_d(x->v, x->v, fpk_to_double(f, c1), MPFR_RNDN));
    }
    measure(x, a, fpk_to_double(f, w), fpk_to_double(f, t), ok);
}

fpk_bits sw_update_in(const sw_run *run, const fpk_format *f, double u, double lr)
{
    fpk_ctx c = fpk_ctx_default();
    return run->grad ? fpk_from_double_scaled(f, u, -lr, &c) : fpk_from_double(f, u, &c);
}

/* x->dw = dw exactly, x->kdw = K dw. */
static void set_dw(sw_calc *x, const sw_run *run, double u, double lr, int steps)
{
    exact(mpfr_set_d(x->dw, u, MPFR_RNDN));
    if (run->grad)
        exact(mpfr_mul_d(x->dw, x->dw, -lr, MPFR_RNDN));
    exact(mpfr_mul_ui(x->kdw, x->dw, (unsigned long)steps, MPFR_RNDN));
}

void sw_calc_measure(sw_calc *x, const sw_run *run, sw_acc *a, double u, double lr, int steps,
                     double w0, double w1, double wk, bool ok)
{
    set_dw(x, run, u, lr, steps);
    if (ok)
        exact(mpfr_set_d(x->v, w1, MPFR_RNDN));
    measure(x, a, w0, wk, ok);
}

void sw_calc_add(sw_calc *x, const sw_run *run, sw_row *row, double w, double u)
{
    row->count++;
    if (!isfinite(w) || !isfinite(u)) {
        row->nonfinite++;
        return;
    }
    if (u == 0)
        return;
    row->nonzero++;
    fpk_ctx rne = fpk_ctx_default();
    for (int p = 0; p < run->sweep_n; p++) {
        set_dw(x, run, u, run->sweep_lr[p], 1);
        for (int j = 0; j < run->nformats; j++) {
            const fpk_format *f = run->formats[j];
            fpk_bits wf = fpk_from_double(f, w, &rne), d = sw_update_in(run, f, u, run->sweep_lr[p]);
            sw_acc a = {0};
            plain(x, f, wf, d, 1, &rne, &a);
            row->sweep_lost[p * sw_targets(run) + j] += a.lost;
            row->sweep_half[p * sw_targets(run) + j] += a.half;
        }
    }
    if (!run->main_report)
        return;
    set_dw(x, run, u, run->lr, run->steps);
    plain(x, &fpk_fp32, fpk_from_double(&fpk_fp32, w, &rne), sw_update_in(run, &fpk_fp32, u, run->lr),
          run->steps, &rne, &row->master);
    for (int j = 0; j < run->nformats; j++) {
        const fpk_format *f = run->formats[j];
        fpk_bits wf = fpk_from_double(f, w, &rne), d = sw_update_in(run, f, u, run->lr);
        plain(x, f, wf, d, run->steps, &rne, &row->fmt[j].rne);
        for (int s = 0; s < run->seeds; s++)
            plain(x, f, wf, d, run->steps, &x->sr[j * run->seeds + s], &row->fmt[j].sr[s]);
        kahan(x, f, wf, d, run->steps, &row->fmt[j].kahan);
    }
}

static void acc_merge(sw_acc *into, const sw_acc *from)
{
    into->lost += from->lost;
    into->half += from->half;
    into->overflow += from->overflow;
    into->stuck += from->stuck;
    for (int b = 0; b < SW_BINS; b++)
        into->hist[b] += from->hist[b];
    into->drift_sum += from->drift_sum;
    into->drift_signed_sum += from->drift_signed_sum;
    if (from->drift_max > into->drift_max)
        into->drift_max = from->drift_max;
}

void sw_row_merge(const sw_run *run, sw_row *total, const sw_row *row)
{
    total->count += row->count;
    total->nonfinite += row->nonfinite;
    total->nonzero += row->nonzero;
    acc_merge(&total->master, &row->master);
    for (int j = 0; j < run->nformats; j++) {
        acc_merge(&total->fmt[j].rne, &row->fmt[j].rne);
        acc_merge(&total->fmt[j].kahan, &row->fmt[j].kahan);
        for (int s = 0; s < run->seeds; s++)
            acc_merge(&total->fmt[j].sr[s], &row->fmt[j].sr[s]);
    }
    for (int k = 0; k < run->nrecipes; k++)
        acc_merge(&total->recipe[k], &row->recipe[k]);
    for (int k = 0; k < run->sweep_n * sw_targets(run); k++) {
        total->sweep_lost[k] += row->sweep_lost[k];
        total->sweep_half[k] += row->sweep_half[k];
    }
}

void sw_row_alloc(const sw_run *run, sw_row *row)
{
    for (int j = 0; j < run->nformats; j++)
        row->fmt[j].sr = xcalloc((size_t)run->seeds, sizeof *row->fmt[j].sr);
    row->recipe = xcalloc((size_t)run->nrecipes, sizeof *row->recipe);
    size_t n = (size_t)run->sweep_n * (size_t)sw_targets(run);
    row->sweep_lost = xcalloc(n, sizeof *row->sweep_lost);
    row->sweep_half = xcalloc(n, sizeof *row->sweep_half);
}

void sw_row_free(const sw_run *run, sw_row *row)
{
    for (int j = 0; j < run->nformats; j++)
        free(row->fmt[j].sr);
    free(row->recipe);
    free(row->sweep_lost);
    free(row->sweep_half);
    free(row->name);
    free(row->wfile);
    free(row->ufile);
    free(row->wname);
    free(row->uname);
}

static double ratio(double n, uint64_t d)
{
    return d ? n / (double)d : NAN;
}

double sw_lost_frac(const sw_row *r, const sw_acc *a)
{
    return ratio((double)a->lost, r->nonzero);
}

double sw_half_frac(const sw_row *r, const sw_acc *a)
{
    return ratio((double)a->half, r->nonzero);
}

double sw_drift_mean(const sw_row *r, const sw_acc *a)
{
    return ratio(a->drift_sum, r->nonzero - a->overflow);
}

double sw_drift_signed_mean(const sw_row *r, const sw_acc *a)
{
    return ratio(a->drift_signed_sum, r->nonzero - a->overflow);
}

void sw_seed_stats(const sw_row *r, const sw_acc *acc, int seeds,
                   double (*get)(const sw_row *, const sw_acc *), double *mean, double *sd)
{
    double sum = 0, sq = 0;
    for (int s = 0; s < seeds; s++)
        sum += get(r, &acc[s]);
    *mean = sum / seeds;
    for (int s = 0; s < seeds; s++) {
        double dv = get(r, &acc[s]) - *mean;
        sq += dv * dv;
    }
    *sd = seeds > 1 ? sqrt(sq / (seeds - 1)) : 0;
}
