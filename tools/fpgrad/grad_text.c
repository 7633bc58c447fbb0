/* fpgrad's text tables: one row per tensor and one for the total, the name
 * last so that long names do not break the columns. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "grad.h"

#define PCT_W 7 /* a percentage column */
#define SCALE_W 7

/* The three percentages of K, each PCT_W wide. */
static void print_pcts(FILE *out, const fpk_format_counts *k, uint64_t nonzero)
{
    char b[3][8];
    fprintf(out, "%*s%*s%*s", PCT_W, cli_percent(b[0], k->underflow, nonzero), PCT_W,
            cli_percent(b[1], k->subnormal, nonzero), PCT_W,
            cli_percent(b[2], k->overflow, nonzero));
}

static void print_pct_header(FILE *out, int line, const char *label)
{
    if (line == 0)
        fprintf(out, "  %*s", 3 * PCT_W, label);
    else
        fprintf(out, "  %*s%*s%*s", PCT_W, "zero", PCT_W, "subn", PCT_W, "over");
}

static const char *scale_text(char *buf, size_t len, const grad_scaled *s)
{
    if (!s->has_scale)
        return "-";
    snprintf(buf, len, "2^%d", s->log2);
    return buf;
}

static size_t shape_width(const grad_run *run)
{
    size_t w = strlen("shape");
    char buf[256];
    for (size_t i = 0; i < run->nrows; i++) {
        cli_shape_text(buf, sizeof buf, run->rows[i].ndim, run->rows[i].shape);
        if (strlen(buf) > w)
            w = strlen(buf);
    }
    return w;
}

static void main_row(FILE *out, const grad_run *run, const grad_row *r, int sw)
{
    char shape[256] = "", range[32] = "-", median[16] = "-";
    if (r->name)
        cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
    int lo, hi, med;
    if (grad_log2_range(r, &lo, &hi))
        snprintf(range, sizeof range, "%d..%d", lo, hi);
    if (grad_log2_median(r, &med))
        snprintf(median, sizeof median, "%d", med);
    fprintf(out, "%13" PRIu64 "%11" PRIu64 "%9" PRIu64 "%13s%7s", r->count, r->zeros, r->nonfinite,
            range, median);
    for (int j = 0; j < run->nformats; j++) {
        fputs("  ", out);
        print_pcts(out, &r->fmt[j], grad_nonzero(r));
    }
    char *name = cli_printable(r->name ? r->name : "total");
    fprintf(out, "  %-*s  %s\n", sw, shape, name);
    free(name);
}

/* With several files, tensors of one name recur (one file per step): a
 * heading before row I names the file each group comes from. */
static void file_heading(FILE *out, const grad_run *run, size_t i)
{
    const char *file = run->rows[i].file;
    if (run->nfiles > 1 && file && (i == 0 || strcmp(file, run->rows[i - 1].file) != 0)) {
        char *name = cli_printable(file);
        fprintf(out, "%s:\n", name);
        free(name);
    }
}

static void auto_row(FILE *out, const grad_run *run, const grad_row *r)
{
    char buf[32];
    fprintf(out, "%*s", SCALE_W, scale_text(buf, sizeof buf, &r->loss));
    for (int j = 0; j < run->nformats; j++) {
        fputs("  ", out);
        print_pcts(out, &r->loss.fmt[j], grad_nonzero(r));
    }
    for (int j = 0; j < run->nformats; j++) {
        if (!grad_has_amax_scale(run->formats[j]))
            continue;
        fprintf(out, "  %*s", SCALE_W, scale_text(buf, sizeof buf, &r->amax_scale[j]));
        print_pcts(out, &r->amax_scale[j].fmt[j], grad_nonzero(r));
    }
    char *name = cli_printable(r->name ? r->name : "total");
    fprintf(out, "  %s\n", name);
    free(name);
}

static void auto_table(FILE *out, const grad_run *run)
{
    bool any_amax = false;
    for (int j = 0; j < run->nformats; j++)
        any_amax |= grad_has_amax_scale(run->formats[j]);
    fprintf(out, "\nscale auto: the loss scale is the largest 2^k with no fp16 overflow");
    if (any_amax)
        fprintf(out,
                ";\nthe fp8 scale of an 8-bit format is the largest 2^k with amax * 2^k <= its "
                "max finite, / 2^%d (margin)",
                run->margin);
    fprintf(out, ".\nPercentages of the nonzero finite elements after scaling:\n");
    for (int line = 0; line < 2; line++) {
        fprintf(out, "%*s", SCALE_W, line ? "scale" : "loss");
        for (int j = 0; j < run->nformats; j++) {
            char label[64];
            snprintf(label, sizeof label, "%s %%", run->formats[j]->name);
            print_pct_header(out, line, label);
        }
        for (int j = 0; j < run->nformats; j++) {
            if (!grad_has_amax_scale(run->formats[j]))
                continue;
            char label[64];
            snprintf(label, sizeof label, "%s fp8 scale %%", run->formats[j]->name);
            if (line == 0)
                fprintf(out, "  %*s", SCALE_W + 3 * PCT_W, label);
            else
                fprintf(out, "  %*s%*s%*s%*s", SCALE_W, "scale", PCT_W, "zero", PCT_W, "subn",
                        PCT_W, "over");
        }
        fprintf(out, line ? "  name\n" : "\n");
    }
    for (size_t i = 0; i < run->nrows; i++) {
        file_heading(out, run, i);
        auto_row(out, run, &run->rows[i]);
    }
    auto_row(out, run, &run->total);
}

void grad_text(const grad_run *run, FILE *out)
{
    char scale[64];
    fpk_ctx c = fpk_ctx_default();
    fpk_bits s = fpk_from_double(&fpk_fp64, run->scale, &c);
    fpk_format_shortest(&fpk_fp64, s, scale, sizeof scale);
    fprintf(out, "fpgrad: %zu tensor%s in %zu file%s, %" PRIu64 " elements; round %s, scale %s\n",
            run->nrows, run->nrows == 1 ? "" : "s", run->nfiles, run->nfiles == 1 ? "" : "s",
            run->total.count, fpk_round_name(run->round), scale);
    fprintf(out, "Percentages of the nonzero finite elements that round to zero, to a subnormal "
                 "and that overflow:\n");
    int sw = (int)shape_width(run);
    for (int line = 0; line < 2; line++) {
        if (line == 0)
            fprintf(out, "%13s%11s%9s%13s%7s", "", "", "", "", "");
        else
            fprintf(out, "%13s%11s%9s%13s%7s", "count", "zeros", "nonfin", "log2|x|", "median");
        for (int j = 0; j < run->nformats; j++) {
            char label[64];
            snprintf(label, sizeof label, "%s %%", run->formats[j]->name);
            print_pct_header(out, line, label);
        }
        if (line)
            fprintf(out, "  %-*s  name", sw, "shape");
        fputc('\n', out);
    }
    for (size_t i = 0; i < run->nrows; i++) {
        file_heading(out, run, i);
        main_row(out, run, &run->rows[i], sw);
    }
    main_row(out, run, &run->total, sw);
    if (run->sqnr) {
        fprintf(out, "SQNR of all the tensors (dB):");
        for (int j = 0; j < run->nformats; j++) {
            bool none;
            double db = grad_sqnr_db(&run->total.err[j], &none);
            if (none)
                fprintf(out, "  %s -", run->formats[j]->name);
            else
                fprintf(out, "  %s %.2f", run->formats[j]->name, db);
        }
        fputc('\n', out);
    }
    if (run->autoscale)
        auto_table(out, run);
}
