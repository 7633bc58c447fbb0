/* fpgrad --recipes: the plot of each tensor's SQNR by recipe
 * (plots/recipes.gp), and the HTML report:
 *   DIR/index.html  DIR/fpgrad.json  DIR/fpgrad.csv  DIR/recipes.png
 * built beside and swapped into place whole (outdir.h). */
#define _GNU_SOURCE /* open_memstream */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gnuplot.h"
#include "grad_recipe.h"
#include "html.h"
#include "outdir.h"
#include "outfile.h"
#include "text.h"

enum { FILE_JSON, FILE_CSV, FILE_PLOT, FILE_INDEX };
const char *const recipe_report_files[RECIPE_REPORT_FILES] = {
    [FILE_JSON] = "fpgrad.json", [FILE_CSV] = "fpgrad.csv", [FILE_PLOT] = "recipes.png",
    [FILE_INDEX] = "index.html"};

/* Row I's SQNR under recipe J; false when it has none (not analysed, no
 * signal) or it is infinite (no error). */
static bool finite_db(const recipe_run *run, size_t i, int j, double *db)
{
    const recipe_cell *c = &run->rows[i].cell[j];
    return c->done && recipe_db(c->x2, c->e2, db) && isfinite(*db);
}

void recipe_plot(const recipe_run *run, const char *path, int width, int height)
{
    gp_plot p;
    gp_begin(&p, path, "recipes.gp");
    size_t *order = recipe_worst_order(run);
    for (size_t m = 0; m < run->nrows; m++) {
        fprintf(p.data, "%zu", m + 1);
        for (int k = 0; k < run->nrecipes; k++) {
            double db;
            if (finite_db(run, order[m], (int)run->rank[k], &db))
                fprintf(p.data, " %.6g", db);
            else
                fputs(" NaN", p.data);
        }
        fputc('\n', p.data);
    }
    free(order);
    cli_buf names = {0}, keeps = {0};
    for (int k = 0; k < run->nrecipes; k++) {
        const recipe_result *r = &run->recipes[run->rank[k]];
        char *kb = cli_strf("%s%.3f", k ? " " : "", r->keep_db);
        if (k)
            cli_buf_put(&names, " ", 1);
        cli_buf_put(&names, r->name, strlen(r->name));
        cli_buf_put(&keeps, kb, strlen(kb));
        free(kb);
    }
    cli_buf_put(&names, "", 1);
    cli_buf_put(&keeps, "", 1);
    char *qn = gp_quote((const char *)names.p), *qk = gp_quote((const char *)keeps.p),
         *qb = gp_quote(run->recipes[run->rank[0]].name);
    char *vars = cli_strf("width=%d; height=%d; names=%s; keeps=%s; best=%s", width, height, qn,
                          qk, qb);
    gp_end(&p, vars);
    free(vars), free(qn), free(qk), free(qb), free(names.p), free(keeps.p);
}

/* The text summary, as a preformatted block. */
static void summary(FILE *out, const recipe_run *run, int top)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    recipe_text(run, m, top, false);
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

/* Every tensor with its SQNR under every recipe, best recipe first;
 * sortable, the cells of tensors to keep in BF16 shaded. */
static void tensor_table(FILE *out, const recipe_run *run)
{
    fputs("<table class=\"sortable\">\n<thead><tr><th>tensor</th><th>step</th><th>file</th>"
          "<th>shape</th><th>elements</th>",
          out);
    for (int k = 0; k < run->nrecipes; k++) {
        fputs("<th>", out);
        html_text(out, run->recipes[run->rank[k]].name);
        fputs(" dB</th>", out);
    }
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i < run->nrows; i++) {
        const scan_tensor *t = &run->s->tensors[run->rows[i].tensor];
        const scan_step *st = &run->s->steps[t->file];
        char shape[256];
        cli_shape_text(shape, sizeof shape, t->t.ndim, t->t.shape);
        fputs("<tr><td class=\"name\">", out);
        html_text(out, t->t.name);
        if (st->known)
            fprintf(out, "</td><td data-v=\"%" PRId64 "\">%" PRId64, st->step, st->step);
        else
            fputs("</td><td data-v=\"-1\">", out);
        fputs("</td><td class=\"name\">", out);
        html_text(out, run->s->files.v[t->file]);
        fprintf(out, "</td><td>%s</td><td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", shape,
                t->t.count, t->t.count);
        for (int k = 0; k < run->nrecipes; k++) {
            const recipe_cell *c = &run->rows[i].cell[run->rank[k]];
            double db = 0;
            if (!c->done || !recipe_db(c->x2, c->e2, &db))
                fputs("<td data-v=\"1e99\">-</td>", out);
            else if (isinf(db))
                fputs("<td data-v=\"1e98\">inf</td>", out);
            else
                fprintf(out, "<td%s data-v=\"%.17g\">%.1f</td>", c->keep ? " class=\"hi\"" : "",
                        db, db);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

void recipe_report(const recipe_run *run, const char *dir, int width, int height, int top)
{
    outdir d;
    outdir_open(&d, dir);
    char *path = outdir_file(&d, recipe_report_files[FILE_JSON]);
    recipe_json_write(run, path);
    free(path);
    path = outdir_file(&d, recipe_report_files[FILE_CSV]);
    outfile f;
    outfile_open(&f, path);
    recipe_csv(run, f.fp);
    outfile_commit(&f);
    free(path);
    bool plots = gp_program() != NULL;
    if (plots) {
        path = outdir_file(&d, recipe_report_files[FILE_PLOT]);
        recipe_plot(run, path, width, height);
        free(path);
    } else {
        fprintf(stderr,
                "%s: %s: gnuplot was not found, so the report has no plot (install the Debian "
                "package gnuplot-nox)\n",
                cli_prog(), dir);
    }
    path = outdir_file(&d, recipe_report_files[FILE_INDEX]);
    outfile_open(&f, path);
    FILE *out = f.fp;
    html_head(out, "fpgrad recipes report");
    fprintf(out,
            "<h1>fpgrad recipes report</h1>\n<p>Made by fpgrad (%s). Data: <a "
            "href=\"fpgrad.json\">fpgrad.json</a>, <a href=\"fpgrad.csv\">fpgrad.csv</a>. "
            "The recipes are described in fpkit-recipes(7).</p>\n<h2>Summary</h2>\n",
            fpk_version());
    summary(out, run, top);
    if (plots)
        fputs("<h2>SQNR by recipe and tensor</h2>\n<p><img src=\"recipes.png\" alt=\"each "
              "tensor's SQNR under each recipe\"></p>\n<p>Each tensor's SQNR under each recipe, "
              "the tensors ordered by the best recipe's; a dashed line at each recipe's keep "
              "threshold.</p>\n",
              out);
    else
        fputs("<p><em>No plot: gnuplot was not found when this report was made.</em></p>\n",
              out);
    fputs("<h2 id=\"tensors\">Every tensor</h2>\n<p>SQNR in dB under each recipe, best "
          "recipe first; shaded: under the recipe's keep threshold (keep in BF16); -: no "
          "signal, or the recipe does not apply. Click a column's header to sort by "
          "it.</p>\n",
          out);
    tensor_table(out, run);
    html_tail(out);
    outfile_commit(&f);
    free(path);
    outdir_commit(&d);
}
