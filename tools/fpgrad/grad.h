/* fpgrad's results and the writers that present them (text, JSON, CSV,
 * plots, the HTML report). */
#ifndef FPKIT_GRAD_H
#define FPKIT_GRAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fpkit-tensor.h"
#include "gnuplot.h"
#include "scaling.h"
#include "scan.h"

/* What rounding at one scale did, per format (in a row: the run's
 * formats; NULL in the run's own). */
typedef struct grad_scaled {
    bool has_scale; /* value holds the scale (false: none exists, or a sum of rows) */
    double value;
    fpk_format_counts *fmt;
} grad_scaled;

/* What rounding at a format's own FP8 scale did to it. */
typedef struct grad_fp8 {
    bool has_scale;
    double value;
    fpk_format_counts fmt; /* its own format's counts alone */
} grad_fp8;

/* Quantisation error sums of one format at the run's scale, over the
 * nonzero finite elements whose result is finite (an overflow to infinity
 * or NaN counts as overflow instead): SQNR = 10 log10(x2 / e2) dB. */
typedef struct grad_err {
    double x2, e2;
} grad_err;

/* One row of the report: a tensor, or a sum of tensors (the total, a
 * step's). */
typedef struct grad_row {
    char *name, *file; /* NULL in a sum */
    bool has_step;     /* the training step of its file (of a step's sum) */
    int64_t step;
    fpk_dtype dtype;
    int ndim;
    uint64_t *shape; /* NDIM (at least one) in the block of grad_row_formats */
    uint64_t count, zeros, nonfinite;
    uint64_t sr_base; /* SR's counter of its first element: its offset in
                         the whole tensor (--shards), else 0 */
    bool loss_scaled; /* a loss scale multiplies it (--loss-scaled) */
    double scale;     /* the scale of fmt and err: --scale S if loss_scaled, else 1 */
    double amax;   /* largest finite |x|, 0 if none */
    int hist_min;  /* floor(log2|x|) of hist[0] */
    size_t hist_n; /* bins from the first nonzero one to the last */
    uint64_t *hist;
    /* per format of the run, in one block of memory (grad_row_formats),
     * so that a row of a run of few formats is small */
    fpk_format_counts *fmt; /* at SCALE */
    grad_err *err;          /* likewise */
    /* --scale auto: at the run's loss scale if loss_scaled, else at 1 (the
     * rows sum to the total); the tensor's own largest loss scale with no
     * fp16 overflow; per format of at most 8 bits, at the tensor's own FP8
     * scale (other formats stay zero). */
    grad_scaled loss;
    bool has_max_loss;
    int max_loss_log2;
    grad_fp8 *fp8;
} grad_row;

typedef struct grad_run {
    const fpk_format *formats[FPK_STATS_MAX_FORMATS];
    int nformats;
    fpk_round round;
    double scale; /* --scale S, on the loss-scaled rows; 1 with --scale auto */
    bool autoscale;
    bool sqnr; /* the errors measured, for the SQNR (not --no-sqnr) */
    int threads; /* --threads: also the JSON's, formatted a batch of rows at once */
    int margin;
    scaling_rule fp8_rule;
    const char *loss_text; /* --loss-scaled's regex, as given, or the default */
    bool loss_all;         /* no tensor matched the default: every one is loss-scaled */
    grad_scaled loss;      /* --scale auto: the loss scale recommended */
    size_t loss_limit;     /* the row whose amax sets it (SIZE_MAX: none) */
    size_t nfiles, nrows;
    grad_row *rows;
    grad_row total; /* the rows summed (grad_finish), its errors the exact sums */
    grad_row *steps; /* the rows summed by step, in step order */
    size_t nsteps;   /* (0 unless two steps or more are known) */
} grad_run;

/* FP8-style amax scaling applies to formats of at most this many bits. */
#define GRAD_AMAX_SCALE_MAX_WIDTH 8

bool grad_is_mx(const fpk_format *f);

/* Block-scaled (MX) formats choose their own scales. */
static inline bool grad_has_amax_scale(const fpk_format *f)
{
    return f->width <= GRAD_AMAX_SCALE_MAX_WIDTH && !grad_is_mx(f);
}

/* Whether each tensor is read a second time (grad_mx.c): for the SQNR, or
 * for the counts of the MX formats. */
static inline bool grad_second_read(const grad_run *run)
{
    for (int j = 0; j < run->nformats; j++)
        if (grad_is_mx(run->formats[j]))
            return true;
    return run->sqnr;
}

/* Nonzero finite elements: the denominator of the fractions. */
static inline uint64_t grad_nonzero(const grad_row *r)
{
    return r->count - r->zeros - r->nonfinite;
}

/* grad.c */
/* R's shape (room for R->ndim dimensions, at least one) and per-format
 * results for NF formats, zero: its shape, fmt, err, loss.fmt and fp8, in
 * memory of their own that grad_row_free frees; dies if memory runs out. */
void grad_row_formats(grad_row *r, int nf);
/* The same, a copy of FROM's (R->ndim := FROM->ndim). */
void grad_row_copy_formats(grad_row *r, const grad_row *from, int nf);
/* Copies S's counts, amax and trimmed histogram into R (the histogram in
 * new memory); dies if memory runs out. */
void grad_row_set_stats(grad_row *r, const fpk_stats *s);
void grad_row_free(grad_row *r);
/* INTO += FROM. */
void grad_add_counts(fpk_format_counts *into, const fpk_format_counts *from);
/* INTO += FROM, rows of NF formats: counts, histograms, amax, error sums
 * (rounded ones: INTO->err[j] += FROM->err[j]) and the counts at the
 * --scale auto scales. */
void grad_row_add(grad_row *into, const grad_row *from, int nf);
/* Whether V is 2^K exactly (K into *K). */
bool grad_power_of_two(double v, int *k);
/* floor(log2|x|) of the smallest and largest nonzero finite |x|, and of the
 * lower median (element ceil(n/2) in increasing order); false if none. */
bool grad_log2_range(const grad_row *r, int *lo, int *hi);
bool grad_log2_median(const grad_row *r, int *median);

/* grad_shards.c: --shards, tensors split across the files of a sharded
 * dump.  A file's shard key is its path with the shard index in its name
 * (the digits of the last "<digits>-of-<digits>", else of the last
 * "rank<digits>") made "*": shards of one tensor share the key and the
 * tensor's name.  (A file without an index is its own key.) */
char *grad_shard_key(const char *file);
/* GROUP[i] for each row of RUN: its logical tensor, numbered in the order
 * of their first rows (*NGROUPS of them); dies with status 2 if the
 * shards of one tensor differ in dtype. */
size_t *grad_shard_groups(const grad_run *run, size_t *ngroups);
/* Every row's sr_base := the elements of its tensor's shards before it,
 * by shard index, so that SR counts a split tensor's elements as the whole
 * tensor's; dies as grad_shard_groups. */
void grad_shard_bases(grad_run *run);
/* Every row's amax := that of its logical tensor, so that --scale auto
 * scales the shards of one tensor alike. */
void grad_shard_amax(grad_run *run);
/* RUN's rows := one per logical tensor: a tensor with one shard unchanged;
 * one with several named by its shard key, flat (one dimension), its
 * counts, histograms and amax those of its shards together, its error
 * sums theirs added in row order. */
void grad_group_shards(grad_run *run);

/* grad_mx.c: the block-scaled formats (OCP MX, blocks of 32 with the
 * specification's scales) beside the per-tensor ones, and the second read
 * of a tensor that counts them and sums every format's errors. */
/* cli_parse_formats, with the names mxfp8 (e4m3 elements; also
 * mxfp8_e4m3), mxfp8_e5m2, mxfp6 (e3m2; also mxfp6_e3m2), mxfp6_e2m3 and
 * mxfp4 (e2m1; also mxfp4_e2m1) besides the formats' own. */
int grad_parse_formats(const char *opt, const char *list, const fpk_format **formats, int max);
/* The MX format called NAME (case-insensitive: mxfp8, mxfp6_e2m3, ...), or NULL. */
const fpk_format *grad_mx_lookup(const char *name);
/* The scale exponent of the block holding AMAX in the MX format F. */
int grad_mx_scale_log2(const fpk_format *f, double amax);
/* A tensor read again in pieces that end on block boundaries. */
typedef struct grad_quant {
    const grad_run *run;
    uint64_t rowlen;    /* elements of the innermost dimension in storage order */
    uint64_t pos, left; /* elements read so far, and still to read */
    uint64_t sr_base;   /* SR's counter of the first element */
    bool exact32;       /* every element is a float32 value */
    /* each format's values are float32 values (fpk_array_quantize_sqerr
     * serves it), asked once, not for every piece */
    bool quant32[FPK_STATS_MAX_FORMATS];
} grad_quant;
void grad_quant_init(grad_quant *q, const grad_run *run, const fpk_tensor *t);
/* How many elements to read next, at most MAX (a multiple of 32). */
size_t grad_quant_next(const grad_quant *q, size_t max);
/* Exact sums of nonnegative doubles, so that error sums add up alike in any
 * order: shards give their whole's totals.  A double m * 2^(p - 1074), m
 * its integer significand (53 bits) and p = max(biased exponent - 1, 0),
 * adds m to bucket[p]: one addition per term, exact for 2^75 terms. */
#define GRAD_SUM_BUCKETS 2046
typedef struct grad_sum {
    /* the buckets in use, lo .. hi - 1 (none: hi <= lo), kept so that a
     * tensor's sums are merged, valued and cleared in a few buckets, not
     * 2046; as GRAD_SUM_BUCKETS - lo, so that zeroed memory is empty */
    uint32_t lo_from_top, hi;
    uint64_t pad;
    unsigned __int128 bucket[GRAD_SUM_BUCKETS];
} grad_sum;
typedef struct grad_sums {
    grad_sum x2, e2; /* as in grad_err */
} grad_sums;
void grad_sums_merge(grad_sums *into, const grad_sums *from);
/* Every bucket of S counted as in use (after its buckets were written
 * directly: read from a file, summed by MPI). */
void grad_sums_widen(grad_sums *s);
/* S := empty, clearing only the buckets in use. */
void grad_sums_clear(grad_sums *s);
/* The N sums at S as bytes, buckets only: the partial files' layout. */
void grad_sums_put(cli_buf *b, const grad_sums *s, int n);
void grad_sums_get(cli_buf *b, grad_sums *s, int n);
/* Each sum rounded to the nearest double. */
grad_err grad_sums_value(const grad_sums *s);
/* Adds the next N elements, as grad_quant_next sized them, to the MX
 * formats' counts K and every format's error sums E (indexed as RUN's
 * formats): X32 holds them if Q->exact32, else X does; the other of the
 * two, and Y, hold N elements of scratch. */
void grad_quant_add(grad_quant *q, double *x, float *x32, size_t n, float *y,
                    fpk_format_counts *k, grad_sums *e);
/* The same for elements X32 exactly float32 (Q->exact32), only read;
 * with ST, their statistics are added to it in the same pass
 * (fpk_stats_add_sqerr; the elements' SR counters from ST->count). */
void grad_quant_add_f32(grad_quant *q, fpk_stats *st, double *x, const float *x32, size_t n,
                        float *y, fpk_format_counts *k, grad_sums *e);
/* E's SQNR in dB; *NONE when there is no signal or no error. */
double grad_sqnr_db(const grad_err *e, bool *none);

/* grad_text.c: the verdict, the TOP tensors that lose most, the steps,
 * and with ALL every tensor, on OUT. */
void grad_text(const grad_run *run, FILE *out, int top, bool all);
/* Format J's counts in row R as the run recommends using the format: at
 * the tensor's own FP8 scale for a format of at most 8 bits under --scale
 * auto, else at the loss scale (auto) or the row's scale. */
const fpk_format_counts *grad_counts(const grad_run *run, const grad_row *r, int j);
/* RUN's rows, those that lose most first (the largest share of nonzero
 * values that a format rounds to zero or overflows), then in row order
 * (malloc'd, nrows); *NLOST := how many lose any. */
size_t *grad_worst_order(const grad_run *run, size_t *nlost);

/* grad_json.c: the report as JSON (fpgrad(1) documents the schema),
 * written to PATH a tensor at a time (outfile_json_items). */
void grad_json_write(const grad_run *run, const char *path);

/* grad_csv.c: one line per tensor and one for the total. */
void grad_csv(const grad_run *run, FILE *out);

/* grad_plot.c */
typedef struct grad_plot_opts {
    int width, height;         /* pixels (PNG) or points (SVG) */
    bool logy;                 /* counts on a log scale */
    bool small;                /* a small multiple: fewer labels, no lanes */
    const grad_row *xrange_of; /* the row whose range the x axis shows; NULL: the plotted one */
} grad_plot_opts;
/* The report's plots into D: the total's histogram (linear and log
 * counts), the trend over the steps, and ROWS[0..N-1]'s small histograms
 * as tensors/NNNN.png, each on its own axis. */
struct outdir;
void grad_report_plots(const grad_run *run, const struct outdir *d, const grad_plot_opts *plot,
                       const size_t *rows, size_t n);
/* Plots row R's histogram with RUN's formats into PATH (.png or .svg, by
 * its extension), written whole through a temporary file; TITLE is shown
 * as is.  Dies with status 3 and gnuplot's first line of complaint if it
 * fails. */
void grad_plot(const grad_run *run, const grad_row *r, const char *title, const char *path,
               const grad_plot_opts *o);

/* grad_report.c: DIR/index.html, written whole in place of any DIR before,
 * with the summary (the TOP worst tensors), the tables, the plots (when
 * gnuplot is there: the NPLOTS tensors that lose most), fpgrad.json and
 * fpgrad.csv. */
void grad_report(const grad_run *run, const char *dir, const grad_plot_opts *plot, int top,
                 size_t nplots);

/* The files grad_report writes into its directory, besides the tensors'
 * plots in tensors/. */
enum {
    REPORT_JSON,
    REPORT_CSV,
    REPORT_HIST,
    REPORT_HIST_LOG,
    REPORT_TREND,
    REPORT_INDEX,
    GRAD_REPORT_FILES
};
extern const char *const grad_report_files[GRAD_REPORT_FILES];

/* grad_scan.c: the tensors of S that C's --match keeps, analysed into
 * RUN's rows, on C's threads, with a progress line if PROGRESS; a row is
 * loss-scaled if its name matches LOSS_RE (or, LOSS_DEFAULT being the
 * default regex, if none does); SHARDS: rows that are shards of one tensor
 * are analysed as parts of it.  Returns the exact error sums of every
 * format (malloc'd; FPK_STATS_MAX_FORMATS). */
grad_sums *grad_analyse(grad_run *run, const scan *s, const cli_common *c, bool shards,
                        bool progress, const regex_t *loss_re, bool loss_default);

/* RUN's total := its rows summed, with ERR (the exact error sums of every
 * format, or NULL: the rows' summed) for its errors; its steps := the rows
 * summed by step, when they span two steps or more. */
void grad_finish(grad_run *run, const grad_sums *err);

#endif
