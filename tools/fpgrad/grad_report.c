/* fpgrad --report DIR: a self-contained HTML page (a small inline script,
 * no network) with the verdict and the tensors that lose most first, the
 * trend over the steps, the histograms, a table of every tensor that sorts
 * by any column, and a small plot of each tensor (the worst first), with
 * the JSON and CSV beside it:
 *   DIR/index.html  DIR/fpgrad.json  DIR/fpgrad.csv  DIR/hist.png
 *   DIR/hist-log.png  DIR/trend.png  DIR/tensors/NNNN.png
 * DIR is built beside and swapped into place whole (outdir.h), so that no
 * file of an earlier report stays behind. */
#define _GNU_SOURCE /* open_memstream */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gnuplot.h"
#include "grad.h"
#include "html.h"
#include "outdir.h"
#include "outfile.h"

/* A percentage cell, shaded by how much it is, sorting by its value. */
static void pct_cell(FILE *out, uint64_t n, uint64_t d)
{
    char buf[8];
    double p = d ? 100.0 * (double)n / (double)d : 0;
    const char *cls = !n        ? ""
                      : p >= 10 ? " class=\"hi\""
                      : p >= 1  ? " class=\"mid\""
                                : " class=\"lo\"";
    fprintf(out, "<td%s data-v=\"%.17g\">%s</td>", cls, p, cli_percent(buf, n, d));
}

/* The verdict, the worst tensors and the steps: the text output itself. */
static void summary(FILE *out, const grad_run *run, int top)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    grad_text(run, m, top, false);
    if (fclose(m) != 0)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    /* (the text's last line sends the reader to --all and --json) */
    char *last = len > 1 ? strrchr(text, '\n') : NULL;
    while (last && last > text && last[-1] != '\n')
        last--;
    if (last && strstr(last, "--all"))
        *last = '\0';
    fputs("<pre class=\"summary\">", out);
    html_text(out, text);
    fputs("</pre>\n", out);
    free(text);
}

/* The table of every tensor, then the total: sortable by any column. */
static void tensor_table(FILE *out, const grad_run *run)
{
    fputs("<table class=\"sortable\">\n<thead><tr><th>tensor</th><th>step</th><th>file</th>"
          "<th>dtype</th><th>shape</th><th>nonzero</th><th>log2|x|</th>",
          out);
    for (int j = 0; j < run->nformats; j++)
        fprintf(out, "<th>%s zero %%</th><th>%s subn %%</th><th>%s over %%</th>%s",
                run->formats[j]->name, run->formats[j]->name, run->formats[j]->name,
                run->sqnr ? "" : "");
    if (run->sqnr)
        for (int j = 0; j < run->nformats; j++)
            fprintf(out, "<th>%s SQNR dB</th>", run->formats[j]->name);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i <= run->nrows; i++) {
        const grad_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        char shape[256] = "", range[32] = "-";
        int lo, hi;
        if (r->name)
            cli_shape_text(shape, sizeof shape, r->ndim, r->shape);
        bool any = grad_log2_range(r, &lo, &hi);
        if (any)
            snprintf(range, sizeof range, "%d..%d", lo, hi);
        if (!r->name)
            fputs("</tbody>\n<tfoot>", out);
        fputs(r->name ? "<tr>" : "<tr class=\"total\">", out);
        fputs("<td class=\"name\">", out);
        html_text(out, r->name ? r->name : "total");
        fputs("</td>", out);
        if (r->name && r->has_step)
            fprintf(out, "<td data-v=\"%" PRId64 "\">%" PRId64 "</td>", r->step, r->step);
        else
            fputs("<td data-v=\"-1\"></td>", out);
        fputs("<td class=\"name\">", out);
        html_text(out, r->file ? r->file : "");
        fprintf(out, "</td><td>%s</td><td>%s</td><td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>",
                r->name ? fpk_dtype_name(r->dtype) : "", shape, grad_nonzero(r), grad_nonzero(r));
        fprintf(out, "<td data-v=\"%d\">%s</td>", any ? lo : 9999, range);
        for (int j = 0; j < run->nformats; j++) {
            const fpk_format_counts *k = grad_counts(run, r, j);
            pct_cell(out, k->underflow, grad_nonzero(r));
            pct_cell(out, k->subnormal, grad_nonzero(r));
            pct_cell(out, k->overflow, grad_nonzero(r));
        }
        for (int j = 0; run->sqnr && j < run->nformats; j++) {
            bool none;
            double db = grad_sqnr_db(&r->err[j], &none);
            if (none)
                fputs("<td data-v=\"1e99\">-</td>", out);
            else
                fprintf(out, "<td data-v=\"%.17g\">%.2f</td>", db, db);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tfoot></table>\n", out);
}

const char *const grad_report_files[GRAD_REPORT_FILES] = {
    [REPORT_JSON] = "fpgrad.json", [REPORT_CSV] = "fpgrad.csv", [REPORT_HIST] = "hist.png",
    [REPORT_HIST_LOG] = "hist-log.png", [REPORT_TREND] = "trend.png",
    [REPORT_INDEX] = "index.html"};

/* The plots' section of the page: the small multiples PLOTS[0..N-1]
 * (rows, worst first), of ALL rows. */
static void multiples(FILE *out, const grad_run *run, const size_t *plots, size_t n)
{
    fprintf(out, "<h2 id=\"tensors-plots\">Each tensor</h2>\n<p>The histogram of log2|x| of "
                 "each tensor on its own axis, counts on a log scale, against each format's "
                 "normal (dark) and subnormal (light) range; the tensors that lose most "
                 "first");
    if (n < run->nrows)
        fprintf(out, ": the %zu of %zu that lose most (the table above has them all)", n,
                run->nrows);
    fputs(".</p>\n<div class=\"grid\">\n", out);
    for (size_t k = 0; k < n; k++) {
        const grad_row *r = &run->rows[plots[k]];
        fprintf(out, "<figure><img src=\"tensors/%04zu.png\" alt=\"", k);
        html_text(out, r->name);
        fputs("\"><figcaption>", out);
        html_text(out, r->name);
        if (r->has_step)
            fprintf(out, ", step %" PRId64, r->step);
        fputs("<br>", out);
        html_text(out, r->file);
        fputs("</figcaption></figure>\n", out);
    }
    fputs("</div>\n", out);
}

void grad_report(const grad_run *run, const char *dir, const grad_plot_opts *plot, int top,
                 size_t nplots)
{
    outdir d;
    outdir_open(&d, dir);
    char *path = outdir_file(&d, grad_report_files[REPORT_JSON]);
    grad_json_write(run, path);
    free(path);
    path = outdir_file(&d, grad_report_files[REPORT_CSV]);
    outfile f;
    outfile_open(&f, path);
    grad_csv(run, f.fp);
    outfile_commit(&f);
    free(path);

    bool plots = gp_program() != NULL;
    size_t lost, *order = grad_worst_order(run, &lost);
    size_t n = run->nrows < nplots ? run->nrows : nplots;
    if (plots)
        grad_report_plots(run, &d, plot, order, n);
    else
        fprintf(stderr,
                "%s: %s: gnuplot was not found, so the report has no plots (install the "
                "Debian package gnuplot-nox)\n",
                cli_prog(), dir);

    path = outdir_file(&d, grad_report_files[REPORT_INDEX]);
    outfile_open(&f, path);
    FILE *out = f.fp;
    html_head(out, "fpgrad report");
    fprintf(out,
            "<h1>fpgrad report</h1>\n<p>Made by fpgrad (%s). Data: <a href=\"fpgrad.json\">"
            "fpgrad.json</a>, <a href=\"fpgrad.csv\">fpgrad.csv</a>. Sections: "
            "<a href=\"#trend\">steps</a>, <a href=\"#hist\">histograms</a>, "
            "<a href=\"#tensors\">every tensor</a>, <a href=\"#tensors-plots\">plots of "
            "each</a>.</p>\n<h2>Summary</h2>\n",
            fpk_version());
    summary(out, run, top);
    if (plots && run->nsteps)
        fputs("<h2 id=\"trend\">Over the steps</h2>\n<p><img src=\"trend.png\" alt=\"the share "
              "of the nonzero values each format loses, by step\"></p>\n",
              out);
    if (plots)
        fputs("<h2 id=\"hist\">Histogram of log2|x|, all tensors</h2>\n"
              "<p><img src=\"hist.png\" alt=\"histogram of log2|x|, linear counts\"></p>\n"
              "<p><img src=\"hist-log.png\" alt=\"histogram of log2|x|, log counts\"></p>\n",
              out);
    else
        fputs("<p><em>No plots: gnuplot was not found when this report was made.</em></p>\n", out);
    fputs("<h2 id=\"tensors\">Every tensor</h2>\n<p>Percentages of the nonzero finite "
          "elements that round to zero (zero), to a subnormal (subn) and that overflow (over), "
          "each format as the summary uses it; log2|x| is the range of floor(log2|x|). "
          "Click a column's header to sort by it.</p>\n",
          out);
    tensor_table(out, run);
    if (plots && n)
        multiples(out, run, order, n);
    html_tail(out);
    outfile_commit(&f);
    free(path);
    free(order);
    outdir_commit(&d);
}
