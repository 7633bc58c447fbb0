/* fpgrad --report DIR: a self-contained HTML page (no scripts, no network)
 * with the tables, the plots and the JSON and CSV beside it:
 *   DIR/index.html  DIR/fpgrad.json  DIR/fpgrad.csv
 *   DIR/hist.png  DIR/hist-log.png  DIR/tensors/NNNN.png (the first
 *   GRAD_REPORT_MULTIPLES tensors, on the x axis of the total). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "gnuplot.h"
#include "grad.h"
#include "outfile.h"

#define GRAD_REPORT_MULTIPLES 64

static void make_dir(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && (errno != EEXIST || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot create the directory: %s", dir,
                errno == EEXIST ? "a file of that name exists" : strerror(errno));
}

static void html(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

/* A percentage cell, shaded by how much it is. */
static void pct_cell(FILE *out, uint64_t n, uint64_t d)
{
    char buf[8];
    double p = d ? 100.0 * (double)n / (double)d : 0;
    const char *cls = !n        ? ""
                      : p >= 10 ? " class=\"hi\""
                      : p >= 1  ? " class=\"mid\""
                                : " class=\"lo\"";
    fprintf(out, "<td%s>%s</td>", cls, cli_percent(buf, n, d));
}

static void counts_cells(FILE *out, const fpk_format_counts *k, const grad_row *r)
{
    pct_cell(out, k->underflow, grad_nonzero(r));
    pct_cell(out, k->subnormal, grad_nonzero(r));
    pct_cell(out, k->overflow, grad_nonzero(r));
}

static void format_headers(FILE *out, const grad_run *run, const char *extra)
{
    for (int j = 0; j < run->nformats; j++)
        fprintf(out, "<th colspan=\"3\">%s%s %%</th>", run->formats[j]->name, extra);
}

static void sub_headers(FILE *out, int groups)
{
    for (int j = 0; j < groups; j++)
        fputs("<th>zero</th><th>subn</th><th>over</th>", out);
}

static void name_cell(FILE *out, const grad_row *r)
{
    if (!r->name) {
        fputs("<td class=\"name\"><b>total</b></td>", out);
        return;
    }
    fputs("<td class=\"name\" title=\"", out);
    html(out, r->file);
    fputs("\">", out);
    html(out, r->name);
    fputs("</td>", out);
}

static void main_table(FILE *out, const grad_run *run)
{
    fputs("<table>\n<thead><tr><th rowspan=\"2\">tensor</th><th rowspan=\"2\">shape</th>"
          "<th rowspan=\"2\">dtype</th><th rowspan=\"2\">count</th><th rowspan=\"2\">zeros</th>"
          "<th rowspan=\"2\">non-finite</th><th rowspan=\"2\">log2|x|</th>"
          "<th rowspan=\"2\">median</th>",
          out);
    format_headers(out, run, "");
    fputs("</tr>\n<tr>", out);
    sub_headers(out, run->nformats);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i <= run->nrows; i++) {
        const grad_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        char shape[256] = "", range[32] = "-", median[16] = "-";
        int lo, hi, med;
        if (r->name)
            cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
        if (grad_log2_range(r, &lo, &hi))
            snprintf(range, sizeof range, "%d..%d", lo, hi);
        if (grad_log2_median(r, &med))
            snprintf(median, sizeof median, "%d", med);
        fputs(r->name ? "<tr>" : "<tr class=\"total\">", out);
        name_cell(out, r);
        fprintf(out,
                "<td>%s</td><td>%s</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td><td>%s</td><td>%s</td>",
                shape, r->name ? fpk_dtype_name(r->dtype) : "", r->count, r->zeros, r->nonfinite,
                range, median);
        for (int j = 0; j < run->nformats; j++)
            counts_cells(out, &r->fmt[j], r);
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

static void scale_cell(FILE *out, const grad_scaled *s)
{
    if (s->has_scale)
        fprintf(out, "<td>2<sup>%d</sup></td>", s->log2);
    else
        fputs("<td>-</td>", out);
}

static void auto_table(FILE *out, const grad_run *run)
{
    int nfp8 = 0;
    for (int j = 0; j < run->nformats; j++)
        nfp8 += grad_has_amax_scale(run->formats[j]);
    fprintf(out,
            "<h2>Scaling (--scale auto)</h2>\n<p>The loss scale is the largest power of two "
            "with no fp16 overflow (the total: over all tensors). The FP8 scale of a format "
            "of at most 8 bits is Transformer Engine's: the largest 2<sup>k</sup> with "
            "amax&nbsp;&times;&nbsp;2<sup>k</sup> &le; its largest finite value, divided by "
            "2<sup>margin</sup> (margin %d); the total sums each tensor at its own scale. "
            "Percentages of the nonzero finite elements after scaling.</p>\n",
            run->margin);
    fputs("<table>\n<thead><tr><th rowspan=\"2\">tensor</th><th rowspan=\"2\">loss scale</th>",
          out);
    format_headers(out, run, " after the loss scale,");
    for (int j = 0; j < run->nformats; j++)
        if (grad_has_amax_scale(run->formats[j]))
            fprintf(out, "<th rowspan=\"2\">%s scale</th><th colspan=\"3\">%s after it, %%</th>",
                    run->formats[j]->name, run->formats[j]->name);
    fputs("</tr>\n<tr>", out);
    sub_headers(out, run->nformats);
    sub_headers(out, nfp8);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i <= run->nrows; i++) {
        const grad_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        fputs(r->name ? "<tr>" : "<tr class=\"total\">", out);
        name_cell(out, r);
        scale_cell(out, &r->loss);
        for (int j = 0; j < run->nformats; j++)
            counts_cells(out, &r->loss.fmt[j], r);
        for (int j = 0; j < run->nformats; j++)
            if (grad_has_amax_scale(run->formats[j])) {
                scale_cell(out, &r->amax_scale[j]);
                counts_cells(out, &r->amax_scale[j].fmt[j], r);
            }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:110em}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}"
    "table{border-collapse:collapse;font-size:0.85em}"
    "th,td{border:1px solid #ccc;padding:0.2em 0.45em;text-align:right}"
    "th{background:#f0f0f0}td.name{text-align:left;font-family:monospace}"
    "tr.total td{border-top:2px solid #888;font-weight:bold}"
    "td.lo{background:#fff3e0}td.mid{background:#ffd8a8}td.hi{background:#ffa8a8}"
    ".grid{display:flex;flex-wrap:wrap;gap:0.6em}"
    "figure{margin:0;font-size:0.75em;font-family:monospace;max-width:330px;overflow-wrap:anywhere}"
    "img{max-width:100%;height:auto}";

const char *const grad_report_files[GRAD_REPORT_FILES] = {
    [REPORT_JSON] = "fpgrad.json", [REPORT_CSV] = "fpgrad.csv", [REPORT_HIST] = "hist.png",
    [REPORT_HIST_LOG] = "hist-log.png", [REPORT_INDEX] = "index.html"};

void grad_report(const grad_run *run, const char *dir, const grad_plot_opts *plot)
{
    make_dir(dir);
    char *path = cli_strf("%s/%s", dir, grad_report_files[REPORT_JSON]);
    outfile_json(path, grad_json(run));
    free(path);
    path = cli_strf("%s/%s", dir, grad_report_files[REPORT_CSV]);
    outfile f;
    outfile_open(&f, path);
    grad_csv(run, f.fp);
    outfile_commit(&f);
    free(path);

    bool plots = gp_program() != NULL;
    size_t multiples = run->nrows < GRAD_REPORT_MULTIPLES ? run->nrows : GRAD_REPORT_MULTIPLES;
    if (plots) {
        char *title =
            cli_strf("all %zu tensors, %" PRIu64 " elements", run->nrows, run->total.count);
        grad_plot_opts o = *plot;
        o.xrange_of = NULL;
        o.small = false;
        for (int logy = 0; logy < 2; logy++) {
            o.logy = logy;
            path = cli_strf("%s/%s", dir, grad_report_files[logy ? REPORT_HIST_LOG : REPORT_HIST]);
            grad_plot(run, &run->total, title, path, &o);
            free(path);
        }
        free(title);
        path = cli_strf("%s/tensors", dir);
        make_dir(path);
        free(path);
        o = (grad_plot_opts){
            .width = 330, .height = 210, .logy = true, .small = true, .xrange_of = &run->total};
        for (size_t i = 0; i < multiples; i++) {
            path = cli_strf("%s/tensors/%04zu.png", dir, i);
            grad_plot(run, &run->rows[i], run->rows[i].name, path, &o);
            free(path);
        }
    } else {
        fprintf(stderr,
                "%s: %s: gnuplot was not found, so the report has no plots (install the "
                "Debian package gnuplot-nox)\n",
                cli_prog(), dir);
    }

    path = cli_strf("%s/%s", dir, grad_report_files[REPORT_INDEX]);
    outfile_open(&f, path);
    FILE *out = f.fp;
    char scale[64];
    fpk_ctx c = fpk_ctx_default();
    fpk_format_shortest(&fpk_fp64, fpk_from_double(&fpk_fp64, run->scale, &c), scale, sizeof scale);
    fprintf(out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>fpgrad report</title>\n<style>%s</style>\n</head>\n<body>\n"
            "<h1>fpgrad report</h1>\n<p>%zu tensor%s in %zu file%s, %" PRIu64 " elements. "
            "Formats:",
            style, run->nrows, run->nrows == 1 ? "" : "s", run->nfiles, run->nfiles == 1 ? "" : "s",
            run->total.count);
    for (int k = 0; k < run->nformats; k++)
        fprintf(out, "%s %s", k ? "," : "", run->formats[k]->name);
    fprintf(out,
            "; rounding %s; scale %s%s. Made by fpgrad (%s). Data: "
            "<a href=\"fpgrad.json\">fpgrad.json</a>, <a href=\"fpgrad.csv\">fpgrad.csv</a>."
            "</p>\n",
            fpk_round_name(run->round), scale,
            run->autoscale ? " (auto: statistics at 1, scales below)" : "", fpk_version());
    if (plots)
        fputs("<h2>Histogram of log2|x|, all tensors</h2>\n"
              "<p><img src=\"hist.png\" alt=\"histogram of log2|x|, linear counts\"></p>\n"
              "<p><img src=\"hist-log.png\" alt=\"histogram of log2|x|, log counts\"></p>\n",
              out);
    else
        fputs("<p><em>No plots: gnuplot was not found when this report was made.</em></p>\n", out);
    fputs("<h2>Tensors</h2>\n<p>Percentages of the nonzero finite elements that round to zero "
          "(zero), to a subnormal (subn) and that overflow (over); log2|x| is the range of "
          "floor(log2|x|) of those elements, median its median.</p>\n",
          out);
    main_table(out, run);
    if (run->autoscale)
        auto_table(out, run);
    if (plots && multiples) {
        fputs("<h2>Each tensor</h2>\n<p>Counts on a log scale, on the axis of the total", out);
        if (multiples < run->nrows)
            fprintf(out, "; the first %zu tensors only", multiples);
        fputs(".</p>\n<div class=\"grid\">\n", out);
        for (size_t i = 0; i < multiples; i++) {
            fprintf(out, "<figure><img src=\"tensors/%04zu.png\" alt=\"", i);
            html(out, run->rows[i].name);
            fputs("\"><figcaption>", out);
            html(out, run->rows[i].name);
            fputs("</figcaption></figure>\n", out);
        }
        fputs("</div>\n", out);
    }
    fputs("</body>\n</html>\n", out);
    outfile_commit(&f);
    free(path);
}
