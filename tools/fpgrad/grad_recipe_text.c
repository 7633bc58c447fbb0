/* fpgrad --recipes as text: which recipe loses least, what each should
 * keep in BF16, the recipes ranked, and the tensors that lose most; each
 * line within TABLE_WIDTH columns. */
#define _GNU_SOURCE /* open_memstream */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad_recipe.h"
#include "table.h"
#include "text.h"

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* An SQNR for a table: "31.4", "inf" (no error), "-" (no signal or not
 * analysed). */
static const char *db_text(char *buf, size_t len, const recipe_cell *c)
{
    double db;
    if (!c->done || !recipe_db(c->x2, c->e2, &db))
        return "-";
    if (isinf(db))
        return "inf";
    snprintf(buf, len, "%.1f", db);
    return buf;
}

/* C's SQNR: that of a tensor kept has one. */
static double cell_db(const recipe_cell *c)
{
    double db = 0;
    recipe_db(c->x2, c->e2, &db);
    return db;
}

static const char *tensor_name(const recipe_run *run, size_t i)
{
    return run->s->tensors[run->rows[i].tensor].t.name;
}

/* Nonzero finite elements among those a recipe's total counts. */
static uint64_t nonzero(const fpk_recipe_stats *s)
{
    return s->count - s->zeros - s->nonfinite;
}

/* A growing line of text. */
typedef struct line {
    char *p;
    size_t len;
    FILE *f;
} line;

static void line_open(line *l)
{
    l->p = NULL;
    l->f = open_memstream(&l->p, &l->len);
    if (!l->f)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
}

/* Writes the line, wrapped, and frees it. */
static void line_put(line *l, FILE *out, int indent)
{
    if (fclose(l->f) != 0)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    table_wrap(out, l->p, indent);
    free(l->p);
}

/* The verdict: the recipe that loses least and the one that loses most. */
static void verdict(const recipe_run *run, FILE *out)
{
    const recipe_result *best = &run->recipes[run->rank[0]];
    if (!best->has_median) {
        fputs("No recipe had a tensor with a nonzero finite value to measure.\n", out);
        return;
    }
    line l;
    line_open(&l);
    fprintf(l.f, "Least loss: %s: half the elements lie in tensors it holds at %.1f dB SQNR or "
                 "better",
            best->name, best->median_db);
    if (run->nrecipes > 1) {
        fputs(" (then ", l.f);
        for (int k = 1; k < run->nrecipes; k++) {
            const recipe_result *r = &run->recipes[run->rank[k]];
            if (r->has_median)
                fprintf(l.f, "%s%s %.1f dB", k > 1 ? ", " : "", r->name, r->median_db);
            else
                fprintf(l.f, "%s%s -", k > 1 ? ", " : "", r->name);
        }
        fputs(")", l.f);
    }
    fputs(".", l.f);
    line_put(&l, out, 2);
}

typedef struct keep_order {
    const recipe_run *run;
    int recipe;
} keep_order;

/* The lower SQNR under the recipe first, then the earlier row. */
static int cmp_kept(const void *a, const void *b, void *arg)
{
    const keep_order *k = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = cell_db(&k->run->rows[i].cell[k->recipe]),
           y = cell_db(&k->run->rows[j].cell[k->recipe]);
    if (x != y)
        return x < y ? -1 : 1;
    return (i > j) - (i < j);
}

/* Each recipe's tensors to keep in BF16, at most TOP named. */
static void keep(const recipe_run *run, FILE *out, int top)
{
    int clean = 0;
    for (int k = 0; k < run->nrecipes; k++)
        clean += run->recipes[run->rank[k]].kept == 0;
    for (int k = 0; k < run->nrecipes; k++) {
        int j = (int)run->rank[k];
        const recipe_result *r = &run->recipes[j];
        if (!r->kept)
            continue;
        line l;
        line_open(&l);
        fprintf(l.f, "Keep in BF16 under %s: %zu %s under %.1f dB", r->name, r->kept,
                plural(r->kept, "tensor", "tensors"), r->keep_db);
        /* the lowest SQNR first */
        size_t *kept = cli_xcalloc(r->kept, sizeof *kept), nk = 0;
        for (size_t i = 0; i < run->nrows; i++)
            if (run->rows[i].cell[j].keep)
                kept[nk++] = i;
        keep_order ko = {run, j};
        qsort_r(kept, nk, sizeof *kept, cmp_kept, &ko);
        int named = 0;
        for (size_t m = 0; m < nk && named < top; m++) {
            char *name = cli_printable(tensor_name(run, kept[m]));
            fprintf(l.f, "%s %s", named ? "," : ":", name);
            free(name);
            named++;
        }
        free(kept);
        if ((size_t)named < r->kept)
            fprintf(l.f, ", and %zu more", r->kept - (size_t)named);
        fputs(".", l.f);
        line_put(&l, out, 2);
    }
    if (clean) {
        line l;
        line_open(&l);
        if (run->keep_given)
            fprintf(l.f, "Every tensor is held at %.1f dB or better by ", run->keep_below);
        else
            fputs("Every tensor is held within 6 dB of what Gaussian data gets by ", l.f);
        int n = 0;
        for (int k = 0; k < run->nrecipes; k++) {
            const recipe_result *r = &run->recipes[run->rank[k]];
            if (!r->kept)
                fprintf(l.f, "%s%s", n++ ? ", " : "", r->name);
        }
        fputs(".", l.f);
        line_put(&l, out, 2);
    }
}

/* What a reader must know: tensors a recipe skipped, delayed scaling
 * without history, widened or nonfinite tensors. */
static void notes(const recipe_run *run, FILE *out)
{
    for (int j = 0; j < run->nrecipes; j++) {
        const recipe_result *r = &run->recipes[j];
        char buf[400];
        if (r->skipped) {
            snprintf(buf, sizeof buf,
                     "Note: %s skips %zu %s whose rows are not a multiple of 16 elements, "
                     "which its Hadamard transform needs.",
                     r->name, r->skipped, plural(r->skipped, "tensor", "tensors"));
            table_wrap(out, buf, 2);
        }
        if (r->no_history) {
            snprintf(buf, sizeof buf,
                     "Note: %s: %zu %s no earlier step in the dumps, so %s scaled from %s own "
                     "amax, as current scaling would.",
                     r->name, r->no_history, plural(r->no_history, "tensor has", "tensors have"),
                     plural(r->no_history, "it is", "they are"),
                     plural(r->no_history, "its", "their"));
            table_wrap(out, buf, 2);
        }
    }
    size_t nonfinite = 0;
    for (size_t i = 0; i < run->nrows; i++)
        nonfinite += run->rows[i].nonfinite > 0;
    char buf[300];
    if (nonfinite) {
        snprintf(buf, sizeof buf,
                 "Note: %zu %s infinities or NaNs; each block holding one becomes NaN, and the "
                 "SQNR counts the other blocks.",
                 nonfinite, plural(nonfinite, "tensor holds", "tensors hold"));
        table_wrap(out, buf, 2);
    }
    if (run->widened) {
        snprintf(buf, sizeof buf, "Note: %zu float64 %s rounded to float32 first.", run->widened,
                 plural(run->widened, "tensor was", "tensors were"));
        table_wrap(out, buf, 2);
    }
}

/* The recipes ranked. */
static void ranking(const recipe_run *run, FILE *out)
{
    table *t = table_new(9, 2);
    const char *heads[] = {"#",          "recipe",  "median dB", "all dB", "worst dB",
                           "worst tensor", "flushed %", "satur. %", "keep"};
    for (int c = 0; c < 9; c++)
        table_column(t, c, heads[c], c == 1 || c == 5, c == 5);
    for (int k = 0; k < run->nrecipes; k++) {
        int j = (int)run->rank[k];
        const recipe_result *r = &run->recipes[j];
        char a[16], b[8], c[8];
        double all;
        table_add(t, "%d", k + 1);
        table_add(t, "%s", r->name);
        table_add(t, "%s", r->has_median ? (snprintf(a, sizeof a, "%.1f", r->median_db), a) : "-");
        if (!recipe_db(r->total->x2, r->total->e2, &all))
            table_add(t, "-");
        else
            table_add(t, isinf(all) ? "inf" : "%.1f", all);
        if (r->worst == SIZE_MAX) {
            table_add(t, "-");
            table_add(t, "-");
        } else {
            char *name = cli_printable(tensor_name(run, r->worst));
            table_add(t, "%s", db_text(a, sizeof a, &run->rows[r->worst].cell[j]));
            table_add(t, "%s", name);
            free(name);
        }
        table_add(t, "%s", cli_percent(b, r->total->flushed, nonzero(r->total)));
        table_add(t, "%s", cli_percent(c, r->total->saturated, nonzero(r->total)));
        table_add(t, "%zu", r->kept);
    }
    fputs("\nRecipes, least loss first (median: the SQNR at which half the elements lie in "
          "tensors held as well\nor better; flushed and saturated: % of the nonzero values; "
          "keep: tensors to keep in BF16):\n",
          out);
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
}

/* How many recipe columns fit beside a name column of at least 24. */
static int columns_that_fit(const recipe_run *run)
{
    int width = 2 + 24 + (run->steps ? 8 : 0), n = 0;
    for (int k = 0; k < run->nrecipes; k++) {
        int w = (int)strlen(run->recipes[run->rank[k]].name);
        width += 2 + (w > 7 ? w : 7);
        if (width > TABLE_WIDTH)
            break;
        n++;
    }
    return n ? n : 1;
}

/* ROWS[0..N-1]'s SQNR under each recipe that fits, best recipe first. */
static void tensor_table(const recipe_run *run, FILE *out, const size_t *rows, size_t n)
{
    int nc = columns_that_fit(run), at = run->steps ? 2 : 1;
    table *t = table_new(at + nc, 2);
    table_column(t, 0, "tensor", true, true);
    if (run->steps)
        table_column(t, 1, "step", false, false);
    for (int k = 0; k < nc; k++)
        table_column(t, at + k, run->recipes[run->rank[k]].name, false, false);
    for (size_t m = 0; m < n; m++) {
        char *name = cli_printable(tensor_name(run, rows[m]));
        table_add(t, "%s", name);
        free(name);
        if (run->steps) {
            const scan_tensor *st = &run->s->tensors[run->rows[rows[m]].tensor];
            const scan_step *step = &run->s->steps[st->file];
            if (step->known)
                table_add(t, "%" PRId64, step->step);
            else
                table_add(t, "-");
        }
        for (int k = 0; k < nc; k++) {
            const recipe_cell *c = &run->rows[rows[m]].cell[run->rank[k]];
            char a[16];
            table_add(t, "%s%s", db_text(a, sizeof a, c), c->keep ? "*" : "");
        }
    }
    table_print(t, out, TABLE_WIDTH);
    table_free(t);
    if (nc < run->nrecipes)
        fprintf(out, "  (%d more %s in --json and --csv)\n", run->nrecipes - nc,
                plural((uint64_t)(run->nrecipes - nc), "recipe", "recipes"));
}

void recipe_text(const recipe_run *run, FILE *out, int top, bool all)
{
    fprintf(out, "fpgrad: %d %s on %zu %s in %zu %s, %" PRIu64 " %s\n\n", run->nrecipes,
            plural((uint64_t)run->nrecipes, "recipe", "recipes"), run->nrows,
            plural(run->nrows, "tensor", "tensors"), run->nfiles,
            plural(run->nfiles, "file", "files"), run->count,
            plural(run->count, "element", "elements"));
    verdict(run, out);
    keep(run, out, top);
    notes(run, out);
    ranking(run, out);
    size_t *order = recipe_worst_order(run);
    size_t n = run->nrows < (size_t)top ? run->nrows : (size_t)top;
    if (n) {
        fprintf(out, "\nThe %zu %s that lose most under %s, SQNR in dB (*: keep in BF16):\n", n,
                plural(n, "tensor", "tensors"), run->recipes[run->rank[0]].name);
        tensor_table(run, out, order, n);
    }
    if (all) {
        fputs("\nEvery tensor, SQNR in dB (*: keep in BF16):\n", out);
        for (size_t i = 0; i < run->nrows; i++)
            order[i] = i;
        tensor_table(run, out, order, run->nrows);
    }
    free(order);
    if (!all && run->nrows > n)
        fputs("\nEvery tensor: --all; every count: --json or --csv.\n", out);
}
