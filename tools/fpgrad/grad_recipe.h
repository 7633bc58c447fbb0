/* fpgrad --recipes: the scaled-quantisation recipes (fpkit-recipes(7))
 * compared on the tensors of a dump.  Each tensor is quantised under each
 * recipe as a training framework would (fpk_recipe_quantize on its 2-D
 * view); the recipes are ranked by the SQNR of the tensors their elements
 * lie in, and each recipe names the tensors it holds much worse than it
 * holds Gaussian data: those to keep in BF16. */
#ifndef FPKIT_GRAD_RECIPE_H
#define FPKIT_GRAD_RECIPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fpkit-tensor.h"
#include "scan.h"

/* What one recipe did to one tensor: the counts of fpk_recipe_stats
 * without its histograms (those are kept for the whole run only). */
typedef struct recipe_cell {
    bool done; /* false: the recipe does not apply to the tensor's view */
    bool no_history; /* delayed scaling with no earlier step of the tensor */
    bool keep;       /* its SQNR is under the recipe's keep threshold */
    uint64_t flushed, saturated, subnormal;
    uint64_t blocks, zero_blocks, nan_blocks, scale_underflow, scale_saturated;
    double x2, e2;
    double scale_min, scale_max;
} recipe_cell;

/* A tensor: scan.tensors[tensor], seen as ROWS x COLS. */
typedef struct recipe_row {
    size_t tensor;
    uint64_t rows, cols;
    uint64_t zeros, nonfinite;
    double amax;       /* the largest finite |x| as float32 */
    recipe_cell *cell; /* one per recipe */
} recipe_row;

/* A recipe over the run. */
typedef struct recipe_result {
    const char *name;   /* as given: a preset, else its spelled-out text */
    fpk_recipe recipe;
    fpk_recipe_stats *total; /* every tensor it applies to; the sums of
                                squares those of the rows, in row order */
    double reference_db;     /* its SQNR on Gaussian data */
    double keep_db;          /* tensors under this SQNR stay in BF16 */
    bool has_median;
    double median_db;        /* half the elements lie in tensors at least as good */
    size_t worst;            /* the row with the lowest SQNR (SIZE_MAX: none) */
    size_t applied, skipped, kept, no_history; /* tensors */
} recipe_result;

typedef struct recipe_run {
    const scan *s;
    recipe_result *recipes;
    int nrecipes;
    size_t *rank;       /* the recipes, the one that loses least first */
    recipe_row *rows;
    size_t nrows, nfiles;
    uint64_t count;     /* elements */
    size_t widened;     /* float64 tensors, rounded to float32 first */
    bool steps;         /* the tensors' files hold two steps or more */
    bool keep_given;    /* --keep-below DB, else each recipe's reference - 6 dB */
    double keep_below;
    int threads;        /* --threads: also the JSON's (outfile_json_items) */
} recipe_run;

/* How far under a recipe's SQNR on Gaussian data a tensor must fall to be
 * kept in BF16, unless --keep-below says. */
#define RECIPE_KEEP_MARGIN_DB 6.0

/* grad_recipe.c */
/* RUN's rows: the tensors of S that C's --match keeps, each quantised
 * under C's recipes on C's threads (a progress line if PROGRESS); then
 * the totals, the thresholds, the ranking.  Dies with status 2 on a
 * tensor that cannot be read. */
void recipe_analyse(recipe_run *run, const scan *s, const cli_common *c, bool progress);
void recipe_run_free(recipe_run *run);

/* One recipe's quantisation of a tensor: HISTORY NULL for current
 * scaling; STATS initialised for the recipe, the tensor's added. */
typedef struct recipe_task {
    const fpk_recipe *recipe;
    const fpk_amax_history *history;
    fpk_recipe_stats *stats;
} recipe_task;

/* Quantises the ROWS x COLS float32 view X under each of the NTASKS
 * tasks (every one that has the RHT with COLS a multiple of 16) on NT
 * threads, the caller's the first; *PLAIN := X's extremes.  False, with
 * ERR's message, if the library refused a task. */
bool recipe_quantize_tensor(const float *x, size_t rows, size_t cols, recipe_task *tasks,
                            int ntasks, int nt, fpk_recipe_range *plain, fpk_error *err);
/* SQNR in dB of X2 over E2; false when there is no signal (X2 = 0); +inf
 * when there is no error. */
bool recipe_db(double x2, double e2, double *db);
/* The recipe's SQNR on a fixed Gaussian sample (256 x 256, each element
 * the sum of 12 uniform variates less 6, exact in float32). */
double recipe_reference_db(const fpk_recipe *r);
/* RUN's rows, those that lose most under the best recipe first (lowest
 * SQNR; rows it does not apply to, or without signal, last), malloc'd. */
size_t *recipe_worst_order(const recipe_run *run);

/* grad_recipe_text.c: the ranking, what to keep in BF16 and the TOP
 * tensors that lose most; with ALL every tensor. */
void recipe_text(const recipe_run *run, FILE *out, int top, bool all);

/* grad_recipe_json.c: the report as JSON, written to PATH a tensor at a
 * time (outfile_json_items), and as CSV (fpgrad(1)). */
void recipe_json_write(const recipe_run *run, const char *path);
void recipe_csv(const recipe_run *run, FILE *out);

/* grad_recipe_report.c: the plot of each tensor's SQNR by recipe (PATH,
 * .png or .svg), and the HTML report in DIR (recipe_report_files). */
void recipe_plot(const recipe_run *run, const char *path, int width, int height);
void recipe_report(const recipe_run *run, const char *dir, int width, int height, int top);
extern const char *const recipe_report_files[];
#define RECIPE_REPORT_FILES 4

#endif
