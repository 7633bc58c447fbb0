/* fpround's plot: the data, then gnuplot runs plots/fpround.gp on it
 * (gnuplot.h). */
#include <stdlib.h>

#include "cli.h"
#include "fpround.h"
#include "gnuplot.h"

/* The data: a header line of column titles (quoted), then rows. */
static void write_data(const fr_run *run, FILE *fp)
{
    if (run->kind == FR_ERROR) {
        fprintf(fp, "\"ulp\"");
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < run->nmodes; m++)
                fprintf(fp, " \"%s %s\"", run->formats[j]->name, fpk_round_name(run->modes[m]));
        fprintf(fp, "\n");
        for (int b = 0; b < FR_HIST_BINS; b++) {
            fprintf(fp, "%.6f", (double)(b - FR_HIST_HALF) / FR_HIST_HALF);
            for (int j = 0; j < run->nformats; j++)
                for (int m = 0; m < run->nmodes; m++) {
                    const fr_err *e = &run->total.err[j][m];
                    fprintf(fp, " %.9g",
                            e->measured ? (double)e->hist[b] / (double)e->measured : 0.0);
                }
            fprintf(fp, "\n");
        }
    } else {
        fprintf(fp, "\"step\" \"exact\"");
        for (int s = 0; s < run->nseries; s++)
            fprintf(fp, " \"%s\"", run->series[s].title);
        fprintf(fp, "\n");
        for (size_t p = 0; p < run->npoints; p++) {
            fprintf(fp, "%llu %.17g", (unsigned long long)run->steps[p], run->exact_running[p]);
            for (int s = 0; s < run->nseries; s++)
                fprintf(fp, " %.17g", run->series[s].y[p]);
            fprintf(fp, "\n");
        }
    }
}

static char *title_of(const fr_run *run)
{
    if (run->kind == FR_ERROR)
        return run->nrows == 1 ? cli_strf("rounding error: %s", run->rows[0].name)
                               : cli_strf("rounding error: %zu tensors", run->nrows);
    const fr_row *r = &run->rows[0];
    if (run->kind == FR_DOT)
        return cli_strf("running dot product, sequential: %s . %s (%s)", r->name, r->name_b, r->file);
    return cli_strf("running sum, sequential: %s (%s)", r->name, r->file);
}

void fr_plot(const fr_run *run, const char *path, int width, int height)
{
    gp_plot p;
    gp_begin(&p, path, "fpround.gp");
    write_data(run, p.data);
    char *title = title_of(run), *q_title = gp_quote(title);
    char *names = cli_strf("%s", "");
    for (int j = 0; j < run->nformats; j++) {
        char *n = cli_strf("%s%s%s", names, j ? " " : "", run->formats[j]->name);
        free(names);
        names = n;
    }
    char *modes = cli_strf("%s", "");
    for (int m = 0; m < run->nmodes; m++) {
        char *n = cli_strf("%s%s%s", modes, m ? " " : "", fpk_round_name(run->modes[m]));
        free(modes);
        modes = n;
    }
    char *vars = cli_strf("width=%d; height=%d; title=%s; kind='%s'; nseries=%d; nmodes=%d; "
                          "fmtnames='%s'; modenames='%s'",
                          width, height, q_title, run->kind == FR_ERROR ? "hist" : "running",
                          run->nformats * run->nmodes, run->nmodes, names, modes);
    free(q_title), free(title), free(names), free(modes);
    gp_end(&p, vars);
    free(vars);
}
