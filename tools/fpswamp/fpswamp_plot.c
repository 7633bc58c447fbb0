/* fpswamp's plots: the data, then gnuplot runs plots/fpswamp.gp on it
 * (gnuplot.h). */
#include <math.h>
#include <stdlib.h>

#include "cli.h"
#include "fpswamp.h"
#include "gnuplot.h"

void sw_plot_check(const char *path)
{
    gp_check(path, "fpswamp.gp");
}

/* S as a double-quoted gnuplot data column (no quote or backslash inside). */
static void data_label(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const char *p = s; *p; p++)
        fputc(*p == '"' || *p == '\\' ? '_' : *p, fp);
    fputc('"', fp);
}

/* The data: per tensor (and the total) its lost percentage in each format
 * (RNE) and under each recipe, or per learning rate of the sweep the
 * total's. */
static void write_data(const sw_run *run, FILE *fp)
{
    if (run->sweep_n) {
        for (int p = 0; p < run->sweep_n; p++) {
            fprintf(fp, "%.17g", run->sweep_lr[p]);
            for (int j = 0; j < sw_targets(run); j++)
                fprintf(fp, " %.17g",
                        run->total.nonzero
                            ? 100.0 * (double)run->total.sweep_lost[p * sw_targets(run) + j] /
                                  (double)run->total.nonzero
                            : 0.0);
            fputc('\n', fp);
        }
        return;
    }
    for (size_t i = 0; i <= run->nrows; i++) {
        const sw_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        char label[512];
        sw_row_label(run, r, label, sizeof label);
        data_label(fp, label);
        for (int j = 0; j < sw_targets(run); j++) {
            double f = sw_lost_frac(r, j < run->nformats ? &r->fmt[j].rne
                                                         : &r->recipe[j - run->nformats]);
            fprintf(fp, " %.17g", isnan(f) ? 0.0 : 100 * f);
        }
        fputc('\n', fp);
    }
}

void sw_plot(const sw_run *run, const char *path, int width, int height)
{
    gp_plot p;
    gp_begin(&p, path, "fpswamp.gp");
    write_data(run, p.data);
    char *names = cli_strf("%s", "");
    for (int j = 0; j < sw_targets(run); j++) {
        char *n = cli_strf("%s%s%s", names, j ? " " : "", sw_target_name(run, j));
        free(names);
        names = n;
    }
    char *title = run->sweep_n ? cli_strf("updates lost against the learning rate, %zu tensor%s",
                                          run->nrows, run->nrows == 1 ? "" : "s")
                               : cli_strf("updates lost (w + dw rounds to w), round to nearest even%s",
                                          run->nrecipes ? "; recipes: stored per tensor" : "");
    char *q_title = gp_quote(title);
    char *vars = cli_strf("width=%d; height=%d; kind='%s'; title=%s; fmtnames='%s'", width, height,
                          run->sweep_n ? "sweep" : "bars", q_title, names);
    free(q_title), free(names), free(title);
    gp_end(&p, vars);
    free(vars);
}
