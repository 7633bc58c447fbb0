/* What the summaries of fpround, fpswamp and fpscale share: the worst rows
 * of a report, the training steps its rows span, and sentences wrapped to
 * the width of the tables.  A summary comes first in a tool's text: a
 * verdict in words, the worst rows (--top N), the trend over the steps
 * when there are several, and the full table only with --all. */
#ifndef FPKIT_SUMMARY_H
#define FPKIT_SUMMARY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scan.h"

/* The indices of the TOP rows (or fewer) of the N whose BADNESS is
 * largest, worst first, into ORDER (room for N); rows whose badness is
 * NaN are left out; of equal ones, the larger THEN first (when THEN is
 * not NULL), then the earlier row.  Returns how many were written. */
size_t summary_worst(const double *badness, const double *then, size_t n, size_t top,
                     size_t *order);

/* The steps that rows of a report come from: the distinct known steps,
 * ascending, and each row's place among them. */
typedef struct summary_steps {
    size_t n;       /* distinct known steps */
    int64_t *step;  /* [n], ascending */
    size_t *of_row; /* [rows]: the row's index in step, or SIZE_MAX when unknown */
    size_t unknown; /* rows whose step is unknown */
} summary_steps;

/* S := the steps of the NROWS rows whose steps are STEPS[0..NROWS-1]. */
void summary_steps_init(summary_steps *s, const scan_step *steps, size_t nrows);
void summary_steps_free(summary_steps *s);

/* Whether a report over S shows its trend by step: two steps or more. */
#define summary_has_trend(s) ((s)->n >= 2)

/* A step as text, "919", or "-" when it is unknown; BUF of 24 bytes. */
const char *summary_step_text(char *buf, const scan_step *st);

/* A step as JSON: an integer, or null when it is unknown. */
json_t *summary_step_json(const scan_step *st);

/* " (steps 0 to 919)", " (step 300)", or "" when S knows no step: the
 * span the heading of a report names; BUF of 64 bytes. */
const char *summary_span_text(char *buf, const summary_steps *s);

/* FMT's text written at INDENT spaces and wrapped at spaces, its further
 * lines indented by HANG, so that no line is wider than TABLE_WIDTH (but
 * for a word wider than that alone); a newline ends it. */
void summary_para(FILE *out, int indent, int hang, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A sentence of a summary, made piece by piece, then written as a
 * paragraph (at 2 spaces, its further lines at 4) by summary_end, which
 * empties it.  Starts zeroed. */
typedef struct summary_line {
    char *s;
} summary_line;

void summary_add(summary_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void summary_end(summary_line *l, FILE *out);

/* The heading of the worst rows, counted in ONE or MANY ("tensor",
 * "tensors"): "Worst 10 of 128 tensors, BY (--top N, --all):", or "All 8
 * tensors, worst first, BY:" when SHOWN is TOTAL; nothing when SHOWN is
 * 0. */
void summary_worst_heading(FILE *out, size_t shown, size_t total, const char *one, const char *many,
                           const char *by);

#endif
