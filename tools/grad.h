/* fpgrad's results and the writers that present them (text, JSON, CSV,
 * plots, the HTML report). */
#ifndef FPKIT_GRAD_H
#define FPKIT_GRAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fpkit.h"
#include "gnuplot.h"

/* What rounding at one scale did, per format. */
typedef struct grad_scaled {
    bool has_scale; /* log2 holds the scale (false: none exists, or a total) */
    int log2;       /* the scale is 2^log2 */
    fpk_format_counts fmt[FPK_STATS_MAX_FORMATS];
} grad_scaled;

/* One row of the report: a tensor, or the total of all of them. */
typedef struct grad_row {
    char *name, *file; /* NULL in the total */
    fpk_dtype dtype;
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
    uint64_t count, zeros, nonfinite;
    double amax;   /* largest finite |x|, 0 if none */
    int hist_min;  /* floor(log2|x|) of hist[0] */
    size_t hist_n; /* bins from the first nonzero one to the last */
    uint64_t *hist;
    fpk_format_counts fmt[FPK_STATS_MAX_FORMATS]; /* at the run's scale */
    /* --scale auto: at the loss scale (the tensor's own; the global one in
     * the total), and per format of at most 8 bits at its amax scale (the
     * total sums the tensors'; other formats stay zero). */
    grad_scaled loss;
    grad_scaled amax_scale[FPK_STATS_MAX_FORMATS];
} grad_row;

typedef struct grad_run {
    const fpk_format *formats[FPK_STATS_MAX_FORMATS];
    int nformats;
    fpk_round round;
    double scale; /* of the main statistics: --scale S, or 1 */
    bool autoscale;
    int margin;
    size_t nfiles, nrows;
    grad_row *rows;
    grad_row total;
} grad_run;

/* FP8-style amax scaling applies to formats of at most this many bits. */
#define GRAD_AMAX_SCALE_MAX_WIDTH 8

static inline bool grad_has_amax_scale(const fpk_format *f)
{
    return f->width <= GRAD_AMAX_SCALE_MAX_WIDTH;
}

/* Nonzero finite elements: the denominator of the fractions. */
static inline uint64_t grad_nonzero(const grad_row *r)
{
    return r->count - r->zeros - r->nonfinite;
}

/* grad.c */
/* Copies S's counts, amax and trimmed histogram into R (the histogram in
 * new memory); dies if memory runs out. */
void grad_row_set_stats(grad_row *r, const fpk_stats *s);
void grad_row_free(grad_row *r);
/* floor(log2|x|) of the smallest and largest nonzero finite |x|, and of the
 * lower median (element ceil(n/2) in increasing order); false if none. */
bool grad_log2_range(const grad_row *r, int *lo, int *hi);
bool grad_log2_median(const grad_row *r, int *median);
/* The largest k with no element of magnitude AMAX > 0, of either sign,
 * overflowing F at scale 2^k under MODE (under stochastic rounding, in
 * either direction), judged by the library's rounding; k is clamped to
 * -1074 .. 1023, the powers of two a double holds. */
int grad_loss_scale_log2(const fpk_format *f, double amax, fpk_round mode);
/* Transformer Engine's amax scale for F: the largest k with
 * AMAX * 2^k <= F's max finite (exactly), minus MARGIN; clamped as above. */
int grad_amax_scale_log2(const fpk_format *f, double amax, int margin);
/* A percentage N/D for tables: "0", "100", "<0.01", ">99.99", "12.34";
 * "-" when D is 0.  BUF holds at least 8 bytes. */
const char *grad_percent(char *buf, uint64_t n, uint64_t d);
/* "[128, 64]" into BUF of LEN bytes. */
void grad_shape_text(char *buf, size_t len, const grad_row *r);

/* grad_text.c: the tables on OUT. */
void grad_text(const grad_run *run, FILE *out);

/* grad_json.c: the report as JSON (fpgrad(1) documents the schema). */
json_t *grad_json(const grad_run *run);

/* grad_csv.c: one line per tensor and one for the total. */
void grad_csv(const grad_run *run, FILE *out);

/* grad_plot.c */
typedef struct grad_plot_opts {
    int width, height;         /* pixels (PNG) or points (SVG) */
    bool logy;                 /* counts on a log scale */
    bool small;                /* a small multiple: fewer labels, no lanes */
    const grad_row *xrange_of; /* the row whose range the x axis shows; NULL: the plotted one */
} grad_plot_opts;
/* Plots row R's histogram with RUN's formats into PATH (.png or .svg, by
 * its extension), written whole through a temporary file; TITLE is shown
 * as is.  Dies with status 1 and gnuplot's first line of complaint if it
 * fails. */
void grad_plot(const grad_run *run, const grad_row *r, const char *title, const char *path,
               const grad_plot_opts *o);

/* grad_report.c: DIR/index.html with the tables, the plots (when gnuplot is
 * there) and fpgrad.json; creates DIR if needed. */
void grad_report(const grad_run *run, const char *dir, const grad_plot_opts *plot);

#endif
