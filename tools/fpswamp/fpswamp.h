/* fpswamp's results and the code that computes and presents them: how much
 * of each update w + dw survives rounding, per tensor, format and strategy,
 * and per recipe storing the weights (fpswamp(1) defines every measure). */
#ifndef FPKIT_FPSWAMP_H
#define FPKIT_FPSWAMP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fpkit-tensor.h"
#include "scan.h"

/* The bins of the effective-update ratio r = |w1 - w0| / |dw|:
 * r = 0, (0, 1/4), [1/4, 1/2), [1/2, 3/4), [3/4, 1), r = 1, (1, 5/4],
 * (5/4, 3/2], (3/2, 2], r > 2.  Bins 0 to 2 are "more than half lost". */
#define SW_BINS 10
#define SW_HALF_BINS 3

/* What one strategy did to the counted elements of a tensor (the nonzero
 * finite updates of finite weights). */
typedef struct sw_acc {
    uint64_t lost;     /* after one step the weight is unchanged: r = 0 */
    uint64_t half;     /* r < 1/2 */
    uint64_t overflow; /* a weight, update or result that is not finite */
    uint64_t stuck;    /* after all the steps the weight is still w0 */
    uint64_t hist[SW_BINS];
    /* Over the elements that did not overflow: the error after K steps,
     * (wK - (w0 + K dw)) / (K dw), as a sum of magnitudes, a signed sum
     * and the largest magnitude. */
    double drift_sum, drift_signed_sum, drift_max;
} sw_acc;

typedef struct sw_fmt {
    sw_acc rne, kahan;
    sw_acc *sr; /* one per seed */
} sw_fmt;

/* A weight tensor and its update (or gradient), or the total of all. */
typedef struct sw_row {
    char *name;           /* the parameter P; NULL in the total */
    char *wfile, *ufile;  /* where the weight and the update are */
    char *wname, *uname;  /* their tensor names */
    size_t wt, ut;        /* their indices in the scan's tensors */
    scan_step step;       /* the weight file's step */
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
    uint64_t count;     /* elements */
    uint64_t nonfinite; /* elements whose weight or update is inf or NaN */
    uint64_t nonzero;   /* finite weight, finite nonzero update: the counted ones */
    sw_acc master;      /* FP32 master weights */
    sw_fmt fmt[FPK_STATS_MAX_FORMATS];
    sw_acc *recipe;     /* per recipe: the weights stored under it */
    uint64_t *sweep_lost, *sweep_half; /* [point * targets + target] (sw_targets) */
} sw_row;

typedef struct sw_run {
    const fpk_format *formats[FPK_STATS_MAX_FORMATS];
    int nformats;
    const fpk_recipe *recipes; /* --recipe and --recipes */
    char *const *recipe_names;
    int nrecipes;
    bool grad;       /* the pairs hold gradients: dw = -lr * g */
    bool main_report; /* computed always, but for a sweep alone */
    double lr;
    int steps, seeds;
    int sweep_n;       /* learning rates of --lr-sweep; 0 if none */
    double *sweep_lr;
    size_t nfiles, nrows;
    sw_row *rows;
    sw_row total;
    int top;  /* --top */
    bool all; /* --all */
} sw_run;

/* The columns of the sweep and of the tables: the formats, then the
 * recipes; target T's name. */
#define sw_targets(run) ((run)->nformats + (run)->nrecipes)
const char *sw_target_name(const sw_run *run, int t);

/* fpswamp_calc.c */
typedef struct sw_calc sw_calc;
/* Scratch space for RUN's computations; dies if memory runs out. */
sw_calc *sw_calc_new(const sw_run *run);
void sw_calc_free(sw_calc *x);
/* Starts row number I: the stochastic-rounding streams of seed s become
 * fpk_sr_hash(s, I), counter 0. */
void sw_calc_row(sw_calc *x, size_t i);
/* Adds element (W, U) to ROW: U is the update, or the gradient when the run
 * has gradients.  The main report (when RUN->main_report) and every point of the
 * sweep. */
void sw_calc_add(sw_calc *x, const sw_run *run, sw_row *row, double w, double u);
/* F's value of the update: U, or -LR * U from a gradient, rounded once
 * (RNE). */
fpk_bits sw_update_in(const sw_run *run, const fpk_format *f, double u, double lr);
/* Adds to A the outcome of one element whose update is made from U at
 * learning rate LR and taken STEPS times: the weight W0 before, W1 after
 * one step and WK after them all; OK is false when one of them, or
 * something on the way, was not finite. */
void sw_calc_measure(sw_calc *x, const sw_run *run, sw_acc *a, double u, double lr, int steps,
                     double w0, double w1, double wk, bool ok);
/* ROW's counts added into TOTAL (both with RUN's layout). */
void sw_row_merge(const sw_run *run, sw_row *total, const sw_row *row);
/* Allocates ROW's per-seed and sweep arrays, zeroed. */
void sw_row_alloc(const sw_run *run, sw_row *row);
void sw_row_free(const sw_run *run, sw_row *row);
/* Per element of ROW, for strategy A: the fractions lost and half lost
 * (of the counted elements), the mean drift and mean signed drift (of those
 * that did not overflow); NaN when there are none. */
double sw_lost_frac(const sw_row *r, const sw_acc *a);
double sw_half_frac(const sw_row *r, const sw_acc *a);
double sw_drift_mean(const sw_row *r, const sw_acc *a);
double sw_drift_signed_mean(const sw_row *r, const sw_acc *a);
/* Mean and sample standard deviation (0 for one seed) of GET over the
 * seeds ACC[0..SEEDS-1]. */
void sw_seed_stats(const sw_row *r, const sw_acc *acc, int seeds,
                   double (*get)(const sw_row *, const sw_acc *), double *mean, double *sd);
/* fpswamp_recipe.c: the N elements W (weights) and U (updates or
 * gradients) of ROW, a tensor of ROWS x COLS as recipes view it, stored
 * under each of RUN's recipes: the main report and every point of the
 * sweep.  False, with ERR's message, if a recipe cannot take it. */
bool sw_recipe_row(sw_calc *x, const sw_run *run, sw_row *row, const double *w, const double *u,
                   size_t rows, size_t cols, fpk_error *err);
/* Exits with status 2 if RUN holds a recipe that cannot store weights. */
void sw_recipe_check(const sw_run *run);

/* fpswamp_out.c */
/* The name the plots show: P, after the weight file's base name without
 * its extension when the run has several files; "total". */
void sw_row_label(const sw_run *run, const sw_row *r, char *buf, size_t len);
json_t *sw_json(const sw_run *run);

/* fpswamp_text.c: the summary, the worst tensors, the steps and with
 * --all every tensor (fpswamp(1), TEXT OUTPUT). */
void sw_text(const sw_run *run, FILE *out);

/* fpswamp_plot.c: the lost fractions per tensor and format (RNE), or with a
 * sweep the lost fraction against the learning rate, into PATH (.png or
 * .svg) through gnuplot and plots/fpswamp.gp.  Dies with status 3 if it
 * fails. */
void sw_plot(const sw_run *run, const char *path, int width, int height);
/* Dies with status 3 unless gnuplot and the plot scripts are there. */
void sw_plot_check(const char *path);

/* fpswamp_mpi.c (fpswamp-mpi): the rows each rank computed (MINE[i] on
 * that rank) copied into RUN's rows on rank 0. */
void sw_mpi_gather_rows(sw_run *run, const bool *mine);

#endif
