/* fpscale's replay: the steps of a series of gradient dumps, what dynamic
 * loss scaling (or FP8 delayed scaling, for one setting or a sweep of
 * them) did at each, and the writers that present it (text, JSON, CSV,
 * the plot). */
#ifndef FPKIT_FPSCALE_H
#define FPKIT_FPSCALE_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fpkit-tensor.h"
#include "scan.h"

/* One dump file: one step. */
typedef struct scale_file {
    char *path;              /* the scan's */
    size_t scan_file;        /* its index among the scan's files */
    bool npy;                /* a .npy file: its tensor is named after it */
    int64_t step;
    bool step_from_metadata; /* else from the file name */
    double loss_scale;       /* __metadata__ loss_scale, with --grads-scaled */
} scale_file;

/* What rounding one step's (or one tensor's) elements did at its scale. */
typedef struct scale_counts {
    uint64_t count, nonzero, nonfinite;
    uint64_t overflow;  /* nonzero finite elements whose scaled value overflows */
    uint64_t underflow; /* ... that round to zero */
    double x2, e2;      /* fp8 mode: the sums behind the SQNR, of x^2 and of
                           the cast's error squared (fpk_recipe_stats) */
} scale_counts;

/* One setting of FP8 delayed scaling: Transformer Engine's DelayedScaling
 * parameters. */
typedef struct fp8_setting {
    long history;     /* amax_history_len */
    bool most_recent; /* amax_compute_algo "most_recent", else "max" */
    int margin;
    int rule;         /* a scaling_rule: how the scales are rounded */
} fp8_setting;

/* The parameters --sweep varies, in the order of fp8_setting. */
enum { SWEEP_HISTORY, SWEEP_AMAX, SWEEP_MARGIN, SWEEP_FP8_SCALE, SWEEP_PARAMS };

/* --sweep PARAM=LIST, given once for each parameter swept. */
typedef struct scale_sweep {
    int order[SWEEP_PARAMS]; /* the parameters swept, as given */
    int nparams;
    long *values[SWEEP_PARAMS];
    size_t nvalues[SWEEP_PARAMS];
} scale_sweep;

/* A tensor at a step: what rounding it at the step's scale did. */
typedef struct scale_entry {
    const char *name; /* owned by the run's name table */
    scale_counts c;   /* overflow: overflowed (loss mode) or saturated (fp8) */
    /* fp8 mode */
    fpk_bits scale;   /* fp32: the scale it was cast with */
    size_t history;   /* amaxes the history held */
    bool has_hist_amax;
    double hist_amax; /* the one its rule took: their maximum (inf: one was
                         non-finite), or the most recent */
    double amax;      /* this step's amax (inf if it holds inf or NaN) */
    fpk_bits cur_scale; /* fp32: current scaling's, from AMAX */
    scale_counts cur;   /* what the cast at cur_scale did */
} scale_entry;

/* A step: its tensors, and in loss mode what GradScaler did. */
typedef struct scale_step {
    size_t n;
    scale_entry *t;
    scale_counts sum; /* over its tensors */
    scale_counts cur; /* fp8 mode: current scaling's, over its tensors */
    /* loss mode */
    fpk_bits scale;      /* fp32: the scale the step ran at */
    bool skipped;        /* some scaled element was inf or NaN */
    int64_t tracker;     /* GradScaler's growth tracker after the step */
    fpk_bits next_scale; /* fp32: the scale after the update */
} scale_step;

typedef struct scale_run {
    bool fp8;
    const fpk_format *format; /* loss mode: the gradients' format; fp8: the FP8 format */
    const char *match;
    bool grads_scaled;
    /* loss mode */
    fpk_bits init_scale; /* fp32 */
    double growth_factor, backoff_factor;
    int64_t growth_interval;
    /* fp8 mode: the settings replayed (one, or the sweep's) */
    fp8_setting *settings;
    size_t nsettings;
    const scale_sweep *sweep; /* NULL without --sweep */
    scale_step **fp8_steps;   /* [nsettings][nfiles] */
    size_t *rank;             /* the settings, least loss first */
    fp8_setting set;          /* the setting of STEPS */
    size_t nfiles;
    scale_file *files; /* sorted by step */
    scale_step *steps; /* [nfiles]; fp8 mode: of the setting shown, the best */
    char **names;      /* the tensors' names (fp8 mode: their series'), in order of appearance */
    size_t nnames, capnames;
    int top;  /* --top */
    bool all; /* --all */
} scale_run;

/* fp32 encodings as doubles (exact). */
static inline double scale_f32(fpk_bits b)
{
    return fpk_to_double(&fpk_fp32, b);
}

/* The fp64 encoding of X. */
static inline fpk_bits scale_f64_bits(double x)
{
    fpk_bits b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* The integer I in fp32 (exact for |I| <= 2^24 and powers of two). */
static inline fpk_bits scale_f32_int(int64_t i)
{
    fpk_ctx c = fpk_ctx_default();
    return fpk_from_int64(&fpk_fp32, i, &c);
}

/* The name NAME in RUN's name table, added if new. */
const char *scale_name(scale_run *run, const char *name);

/* X / L in fp64 into *Q: false, with why (naming PATH) in WHY of LEN
 * bytes, if the quotient is not exact (the scaling must stay one exact
 * rounding); scale_exact_div exits with status 2 then. */
bool scale_div(double x, double l, double *q, const char *path, char *why, size_t len);
#define SCALE_WHY_LEN 600 /* as much as a failure's message holds */
double scale_exact_div(double x, double l, const char *path);

/* The tensors of step F that RUN's MATCH keeps, *N of them (malloc'd);
 * none is an error. */
const scan_tensor **scale_step_tensors(const scale_run *run, const regex_t *match, const scan *s,
                                       const scale_file *f, size_t *n);

/* INTO += C. */
void scale_add_counts(scale_counts *into, const scale_counts *c);

/* fpscale_fp8.c: FP8 mode, every setting of RUN over the steps of S,
 * THREADS threads: RUN->fp8_steps. */
void scale_replay_fp8(scale_run *run, const regex_t *match, const scan *s, int threads);

/* fpscale_sweep.c: the amax rule called S ("max", "most-recent") into
 * *MOST_RECENT, false if none; and its name. */
bool sweep_amax_lookup(const char *s, bool *most_recent);
const char *sweep_amax_name(bool most_recent);
/* --sweep's value ARG added to SW (status 2 on an error). */
void sweep_parse(scale_sweep *sw, const char *arg);
/* The settings of SW: BASE with the swept parameters varied, the last
 * given fastest; *N of them (malloc'd). */
fp8_setting *sweep_settings(const scale_sweep *sw, const fp8_setting *base, size_t *n);
void sweep_free(scale_sweep *sw);
/* The name of parameter P as --sweep takes it ("history"). */
const char *sweep_param_name(int p);
/* RUN->rank: the settings ordered by loss; RUN->steps and RUN->set those
 * of the best. */
void sweep_rank(scale_run *run);
/* The setting K of RUN as text: "history 16, max, margin 1, exact". */
void sweep_setting_text(char *buf, size_t len, const fp8_setting *set);
/* RUN with the steps of setting K (a view: nothing is copied). */
scale_run scale_view(const scale_run *run, size_t k);
/* The totals of the steps of RUN, its delayed casts' and current
 * scaling's. */
void scale_totals(const scale_run *run, scale_counts *all, scale_counts *cur);
/* SQNR in dB of the sums of C: false when there is no signal; +inf when
 * there is no error. */
bool scale_db(const scale_counts *c, double *db);
/* The text of the sweep: the answer, then the ranking. */
void sweep_text(const scale_run *run, FILE *out);

/* fpscale_out.c */
/* The scale as text: "2^16" for a power of two, else its shortest decimal. */
void scale_text_value(char *buf, size_t len, fpk_bits scale);
/* The log2 of a power-of-two fp32 scale into *K; false if it is not one. */
bool scale_log2(fpk_bits scale, int *k);
json_t *scale_json(const scale_run *run);
/* FP8 mode: every setting's tensor at every step, and its totals, as CSV. */
void scale_csv(const scale_run *run, FILE *out);
/* Plots the scale trajectory, and the share that underflows and
 * overflows per step, into PATH (.png or .svg) through plots/fpscale.gp. */
void scale_plot(const scale_run *run, const char *path, int width, int height);

/* fpscale_text.c: N/D as a percentage with its sign, "0" and "-" as
 * cli_percent; BUF of 16 bytes. */
const char *scale_pct(char *buf, uint64_t n, uint64_t d);
/* The summary, the worst tensors, the steps and with
 * --all every tensor at every step. */
void scale_text(const scale_run *run, FILE *out);

#endif
