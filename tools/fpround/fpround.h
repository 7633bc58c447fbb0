/* fpround's results and the writers that present them (text, JSON, plot). */
#ifndef FPKIT_FPROUND_H
#define FPKIT_FPROUND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fpkit-tensor.h"
#include "gnuplot.h"
#include "summary.h"

/* The error histogram: (q - x) * sign(x) / ulp(x) in bins of 1/HALF ulp,
 * centred on k/HALF for k = -HALF .. HALF; larger errors go to the end bins. */
#define FR_HIST_HALF 32
#define FR_HIST_BINS (2 * FR_HIST_HALF + 1)

/* The rounding error of one format and mode over a tensor (or all). */
typedef struct fr_err {
    uint64_t measured;  /* nonzero finite x whose rounding q is finite */
    uint64_t overflow;  /* nonzero finite x whose rounding is inf or NaN */
    uint64_t underflow; /* measured elements with q = 0 */
    uint64_t exact;     /* measured elements with q = x */
    long double sum_abs, sum_sq, sum_signed; /* of r = (q - x) / x */
    long double sum_x2, sum_e2;              /* of x^2 and (q - x)^2 */
    double max_rel, max_ulps;
    uint64_t hist[FR_HIST_BINS];
} fr_err;

/* The ways of accumulating a sum or a dot product. */
typedef enum fr_method {
    FR_SEQ,   /* left to right in the format */
    FR_PAIR,  /* pairwise (recursive halving) in the format */
    FR_KAHAN, /* Kahan-compensated, every operation in the format */
    FR_FMA,   /* dot: s = fma(a, b, s) in the format */
    FR_F32X,  /* dot: exact products accumulated in fp32 (one rounding each) */
    FR_F32R,  /* dot: products rounded to the format, accumulated in fp32 */
    FR_NMETHODS
} fr_method;

const char *fr_method_name(fr_method m);

/* One method under one rounding mode: a result per seed (one for the
 * deterministic modes), each against the exact value. */
typedef struct fr_acc {
    bool applies;
    int n;              /* results: seeds under SR, else 1 */
    double *sum;        /* the results, exact as doubles */
    double *err, *rel;  /* result - exact, and / exact, rounded once; NaN if undefined */
    bool has_stagnation; /* sequential, deterministic modes: a nonzero addend came after the last change */
    uint64_t stagnation; /* elements added when the running sum last changed */
    uint64_t absorbed;   /* nonzero addends that left the running sum unchanged */
} fr_acc;

/* A sum or dot product of one tensor (pair) in one format. */
typedef struct fr_accfmt {
    double exact;       /* exact sum of the elements as held in the format, rounded once */
    fr_acc acc[FR_NMETHODS][FPK_ROUND_COUNT];
} fr_accfmt;

typedef enum fr_kind { FR_ERROR, FR_SUM, FR_DOT } fr_kind;

/* One row: a tensor (error, sum) or a pair of tensors (dot). */
typedef struct fr_row {
    char *name, *file, *name_b; /* name_b: the second tensor of a dot product */
    scan_step step;             /* its file's (a dot product's: the first tensor's) */
    fpk_dtype dtype;
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
    uint64_t count, zeros, nonfinite;
    fr_err err[FPK_STATS_MAX_FORMATS][FPK_ROUND_COUNT]; /* FR_ERROR */
    double exact_input;                                  /* FR_SUM, FR_DOT: of the elements read */
    fr_accfmt fmt[FPK_STATS_MAX_FORMATS];                /* FR_SUM, FR_DOT */
} fr_row;

/* A series of the running-sum plot: the value after each sampled step. */
typedef struct fr_series {
    char *title;
    double *y;
} fr_series;

typedef struct fr_run {
    fr_kind kind;
    const fpk_format *formats[FPK_STATS_MAX_FORMATS];
    int nformats;
    fpk_round modes[FPK_ROUND_COUNT];
    int nmodes;
    uint64_t seed; /* SR: the first seed */
    int seeds;     /* SR in --sum and --dot: seeds seed .. seed + seeds - 1 */
    size_t nfiles, nrows;
    fr_row *rows;
    fr_row total; /* FR_ERROR: the errors of all rows together; else counts only */
    summary_steps row_steps; /* the rows' training steps */
    fr_row *by_step;         /* [row_steps.n]: the rows of each step together, as the total */
    int top;                 /* --top */
    bool all;                /* --all */
    /* --plot with --sum or --dot: the running values of the first row */
    size_t npoints;
    uint64_t *steps;
    double *exact_running;
    int nseries;
    fr_series *series;
} fr_run;

/* Whether every value of F is an fp32 value, so that a dot product in F can
 * accumulate in fp32 (FR_F32X, FR_F32R). */
bool fr_fp32_holds(const fpk_format *f);

/* fpround_err.c */
/* R's zeros and nonfinite elements among X[0..N-1], or with Y (--dot) its
 * pairs: nonfinite where either element is, else zero where either is. */
void fr_count_kinds(fr_row *r, const double *x, const double *y, size_t n);
/* Elements FIRST .. FIRST+N-1 of row R, X[0..N-1], counted and rounded in
 * every format and mode of RUN (fpk_array_convert on THREADS threads,
 * into Q: N encodings of 8 bytes), their errors added to R's; under SR
 * with the run's seed and the element's index as counter. */
void fr_measure(const fr_run *run, fr_row *r, const double *x, size_t n, uint64_t first,
                void *q, int threads);
/* INTO += FROM. */
void fr_merge_error(fr_err *into, const fr_err *from);

/* fpround_sum.c */
/* FR_SUM and FR_DOT for row I: X (and Y for a dot) held in every format
 * (RNE), accumulated by every method in every mode. */
void fr_accumulate(fr_run *run, size_t i, const double *x, const double *y);
/* --plot with --sum or --dot: the steps sampled in row 0, the exact running
 * value at each, and a series per format and mode (sequential, seed 0). */
void fr_plan_plot(fr_run *run, const double *x, const double *y);

/* The largest |relative error| of METH and mode M in format J over the
 * rows of step STEP (an index in run->row_steps; SIZE_MAX: all rows) and
 * their seeds into *WORST (-1 if none is defined), the row it is in into
 * *ROW (SIZE_MAX if none), and into *NONFINITE how many results were not
 * finite. */
void fr_acc_worst(const fr_run *run, size_t step, int j, int meth, int m, double *worst,
                  size_t *row, uint64_t *nonfinite);

/* The statistics of an error record, derived once. */
typedef struct fr_view {
    bool any; /* measured > 0 */
    double mean, rms, bias, sqnr;
    bool sqnr_inf; /* no error at all */
} fr_view;
fr_view fr_err_view(const fr_err *e);

/* Mean and population standard deviation of the N values V (NaN if any
 * is NaN). */
void fr_mean_sd(const double *v, int n, double *mean, double *sd);

/* "fp16", or "fp16 rne" when RUN has several modes: series (J, M); BUF
 * of 48 bytes. */
const char *fr_series_name(char *buf, const fr_run *run, int j, int m);

/* fpround_out.c */
json_t *fr_json(const fr_run *run);

/* fpround_text.c, fpround_acctext.c: the summary, the worst tensors, the
 * trend by step and with --all every tensor (fpround(1), TEXT OUTPUT);
 * fr_text_acc for sums and dot products, after the heading. */
void fr_text(const fr_run *run, FILE *out);
void fr_text_acc(const fr_run *run, FILE *out);
/* The heading line of the text. */
void fr_heading(const fr_run *run, FILE *out);
/* R's name (" . B" after it for a dot product) made printable; malloc'd. */
char *fr_row_name(const fr_run *run, const fr_row *r);

/* fpround_plot.c: the error histogram (FR_ERROR) or the running sums into
 * PATH, .png or .svg; dies with status 3 if gnuplot fails. */
void fr_plot(const fr_run *run, const char *path, int width, int height);

#endif
