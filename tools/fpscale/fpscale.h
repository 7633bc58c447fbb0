/* fpscale's replay: the steps of a series of gradient dumps, what dynamic
 * loss scaling (or FP8 delayed scaling) did at each, and the writers that
 * present it (text, JSON, the plot). */
#ifndef FPKIT_FPSCALE_H
#define FPKIT_FPSCALE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fpkit-tensor.h"

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
} scale_counts;

/* A tensor at a step: what rounding it at the step's scale did. */
typedef struct scale_entry {
    const char *name; /* owned by the run's name table */
    scale_counts c;   /* overflow: overflowed (loss mode) or saturated (fp8) */
    /* fp8 mode */
    fpk_bits scale;   /* fp32: the scale it was cast with */
    size_t history;   /* amaxes the scale was computed from */
    bool has_hist_amax;
    double hist_amax; /* their maximum (inf: one was non-finite) */
    double amax;      /* this step's amax (inf if it holds inf or NaN) */
} scale_entry;

/* A step: its tensors, and in loss mode what GradScaler did. */
typedef struct scale_step {
    size_t n;
    scale_entry *t;
    scale_counts sum; /* over its tensors */
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
    /* fp8 mode */
    long history;
    int margin;
    int rule; /* a scaling_rule: how the scales are rounded */
    size_t nfiles;
    scale_file *files; /* sorted by step */
    scale_step *steps; /* [nfiles] */
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

/* fpscale_out.c */
/* The scale as text: "2^16" for a power of two, else its shortest decimal. */
void scale_text_value(char *buf, size_t len, fpk_bits scale);
/* The log2 of a power-of-two fp32 scale into *K; false if it is not one. */
bool scale_log2(fpk_bits scale, int *k);
json_t *scale_json(const scale_run *run);
/* Plots the scale trajectory, and the share that underflows and
 * overflows per step, into PATH (.png or .svg) through plots/fpscale.gp. */
void scale_plot(const scale_run *run, const char *path, int width, int height);

/* fpscale_text.c: the summary, the worst tensors, the steps and with
 * --all every tensor at every step. */
void scale_text(const scale_run *run, FILE *out);

#endif
