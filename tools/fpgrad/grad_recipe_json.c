/* fpgrad --recipes as JSON and CSV (fpgrad(1), RECIPES): every count of
 * every tensor under every recipe, and each recipe's totals with their
 * histograms, its rank, median and keep threshold. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad_recipe.h"
#include "outfile.h"
#include "text.h"

/* An SQNR in dB, or null when there is no signal or no error. */
static json_t *db_json(bool has, double db)
{
    return has && isfinite(db) ? json_real(db) : json_null();
}

static json_t *cell_db(const recipe_cell *c)
{
    double db = 0;
    bool has = c->done && recipe_db(c->x2, c->e2, &db);
    return db_json(has, db);
}

static json_t *row_ref(const recipe_run *run, size_t i)
{
    const scan_tensor *t = &run->s->tensors[run->rows[i].tensor];
    const scan_step *st = &run->s->steps[t->file];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->t.name));
    json_object_set_new(o, "file", json_string(run->s->files.v[t->file]));
    json_object_set_new(o, "step", st->known ? json_integer(st->step) : json_null());
    return o;
}

/* One tensor's counts under one recipe. */
static json_t *cell_json(const recipe_cell *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "applied", json_boolean(c->done));
    if (!c->done)
        return o;
    json_object_set_new(o, "sqnr_db", cell_db(c));
    json_object_set_new(o, "keep_bf16", json_boolean(c->keep));
    json_object_set_new(o, "no_history", json_boolean(c->no_history));
    json_object_set_new(o, "flushed", cli_json_count(c->flushed));
    json_object_set_new(o, "saturated", cli_json_count(c->saturated));
    json_object_set_new(o, "subnormal", cli_json_count(c->subnormal));
    json_object_set_new(o, "blocks", cli_json_count(c->blocks));
    json_object_set_new(o, "zero_blocks", cli_json_count(c->zero_blocks));
    json_object_set_new(o, "nan_blocks", cli_json_count(c->nan_blocks));
    json_object_set_new(o, "scale_underflow", cli_json_count(c->scale_underflow));
    json_object_set_new(o, "scale_saturated", cli_json_count(c->scale_saturated));
    json_object_set_new(o, "x2", json_real(c->x2));
    json_object_set_new(o, "e2", json_real(c->e2));
    json_object_set_new(o, "scale_min", json_real(c->scale_min));
    json_object_set_new(o, "scale_max", json_real(c->scale_max));
    return o;
}

static json_t *tensor_json(const recipe_run *run, size_t i)
{
    const recipe_row *r = &run->rows[i];
    const scan_tensor *t = &run->s->tensors[r->tensor];
    json_t *o = row_ref(run, i), *recipes = json_object();
    json_object_set_new(o, "dtype", json_string(fpk_dtype_name(t->t.dtype)));
    json_object_set_new(o, "shape", cli_json_shape(t->t.ndim, t->t.shape));
    json_object_set_new(o, "view", json_pack("[o,o]", cli_json_count(r->rows),
                                             cli_json_count(r->cols)));
    json_object_set_new(o, "count", cli_json_count(t->t.count));
    json_object_set_new(o, "zeros", cli_json_count(r->zeros));
    json_object_set_new(o, "nonfinite", cli_json_count(r->nonfinite));
    json_object_set_new(o, "amax", json_real(r->amax));
    for (int j = 0; j < run->nrecipes; j++)
        json_object_set_new(recipes, run->recipes[j].name, cell_json(&r->cell[j]));
    json_object_set_new(o, "recipes", recipes);
    return o;
}

static json_t *recipe_json_one(const recipe_run *run, int j, int rank)
{
    const recipe_result *r = &run->recipes[j];
    json_t *o = json_object(), *keep = json_array();
    char spelled[256];
    fpk_recipe_format(&r->recipe, spelled, sizeof spelled);
    double all = 0;
    bool has_all = recipe_db(r->total->x2, r->total->e2, &all);
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "recipe", json_string(spelled));
    json_object_set_new(o, "rank", json_integer(rank));
    json_object_set_new(o, "median_sqnr_db", db_json(r->has_median, r->median_db));
    json_object_set_new(o, "sqnr_db", db_json(has_all, all));
    json_object_set_new(o, "reference_sqnr_db", json_real(r->reference_db));
    json_object_set_new(o, "keep_below_db", json_real(r->keep_db));
    json_object_set_new(o, "tensors", cli_json_count(r->applied));
    json_object_set_new(o, "skipped", cli_json_count(r->skipped));
    json_object_set_new(o, "no_history", cli_json_count(r->no_history));
    for (size_t i = 0; i < run->nrows; i++)
        if (run->rows[i].cell[j].keep)
            json_array_append_new(keep, row_ref(run, i));
    json_object_set_new(o, "keep_bf16", keep);
    json_t *worst = json_null();
    if (r->worst != SIZE_MAX) {
        worst = row_ref(run, r->worst);
        json_object_set_new(worst, "sqnr_db", cell_db(&run->rows[r->worst].cell[j]));
    }
    json_object_set_new(o, "worst", worst);
    char *text = fpk_recipe_stats_to_json(r->total);
    json_error_t jerr;
    json_t *total = text ? json_loads(text, 0, &jerr) : NULL;
    free(text);
    if (!total)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    json_object_set_new(o, "total", total);
    return o;
}

static json_t *tensor_item(size_t i, void *arg)
{
    return tensor_json(arg, i);
}

void recipe_json_write(const recipe_run *run, const char *path)
{
    const char *v = fpk_version();
    if (strncmp(v, "fpkit ", 6) == 0)
        v += 6;
    json_t *root = json_object(), *recipes = json_array();
    json_object_set_new(root, "tool", json_string("fpgrad"));
    json_object_set_new(root, "version", json_string(v));
    json_object_set_new(root, "mode", json_string("recipes"));
    json_object_set_new(root, "keep_below_db",
                        run->keep_given ? json_real(run->keep_below) : json_null());
    json_object_set_new(root, "keep_margin_db", json_real(RECIPE_KEEP_MARGIN_DB));
    for (int k = 0; k < run->nrecipes; k++)
        json_array_append_new(recipes, recipe_json_one(run, (int)run->rank[k], k + 1));
    json_object_set_new(root, "recipes", recipes);
    json_object_set_new(root, "tensors", json_null()); /* written one by one */
    json_object_set_new(root, "files", cli_json_count(run->nfiles));
    json_object_set_new(root, "count", cli_json_count(run->count));
    outfile_json_items(path, root, "tensors", run->nrows, tensor_item, (void *)run, run->threads);
}

/* A double that reads back exactly, or nothing. */
static void real(FILE *out, bool has, double v)
{
    if (has && isfinite(v))
        fprintf(out, ",%.17g", v);
    else
        fputc(',', out);
}

/* C's fields; KEEP and NO_HISTORY are 0 or 1 for a tensor, counts of
 * tensors for a total. */
static void cell_csv(FILE *out, const recipe_cell *c, uint64_t count, uint64_t zeros,
                     uint64_t nonfinite, uint64_t keep, uint64_t no_history)
{
    double db = 0;
    bool has = c->done && recipe_db(c->x2, c->e2, &db);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d", count, zeros, nonfinite, c->done);
    real(out, has, db);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                 ",%" PRIu64 ",%" PRIu64,
            keep, no_history, c->flushed, c->saturated, c->subnormal, c->blocks,
            c->zero_blocks, c->nan_blocks, c->scale_underflow, c->scale_saturated);
    real(out, c->done, c->x2);
    real(out, c->done, c->e2);
    real(out, c->done, c->scale_min);
    real(out, c->done, c->scale_max);
}

void recipe_csv(const recipe_run *run, FILE *out)
{
    fputs("kind,recipe,rank,name,file,step,dtype,shape,rows,cols,count,zeros,nonfinite,applied,"
          "sqnr_db,keep_bf16,no_history,flushed,saturated,subnormal,blocks,zero_blocks,"
          "nan_blocks,scale_underflow,scale_saturated,x2,e2,scale_min,scale_max\n",
          out);
    int *rank = cli_xcalloc((size_t)run->nrecipes, sizeof *rank);
    for (int k = 0; k < run->nrecipes; k++)
        rank[run->rank[k]] = k + 1;
    for (size_t i = 0; i < run->nrows; i++) {
        const recipe_row *r = &run->rows[i];
        const scan_tensor *t = &run->s->tensors[r->tensor];
        const scan_step *st = &run->s->steps[t->file];
        char shape[256];
        cli_shape_text(shape, sizeof shape, t->t.ndim, t->t.shape);
        for (int j = 0; j < run->nrecipes; j++) {
            fputs("tensor,", out);
            cli_csv_field(out, run->recipes[j].name);
            fprintf(out, ",%d,", rank[j]);
            cli_csv_field(out, t->t.name);
            fputc(',', out);
            cli_csv_field(out, run->s->files.v[t->file]);
            if (st->known)
                fprintf(out, ",%" PRId64, st->step);
            else
                fputc(',', out);
            fprintf(out, ",%s,", fpk_dtype_name(t->t.dtype));
            cli_csv_field(out, shape);
            fprintf(out, ",%" PRIu64 ",%" PRIu64, r->rows, r->cols);
            cell_csv(out, &r->cell[j], t->t.count, r->zeros, r->nonfinite, r->cell[j].keep,
                     r->cell[j].no_history);
            fputc('\n', out);
        }
    }
    for (int k = 0; k < run->nrecipes; k++) { /* the totals, best first */
        int j = (int)run->rank[k];
        const recipe_result *res = &run->recipes[j];
        const fpk_recipe_stats *s = res->total;
        recipe_cell c = {.done = res->applied > 0, .flushed = s->flushed,
                         .saturated = s->saturated, .subnormal = s->subnormal,
                         .blocks = s->blocks, .zero_blocks = s->zero_blocks,
                         .nan_blocks = s->nan_blocks, .scale_underflow = s->scale_underflow,
                         .scale_saturated = s->scale_saturated, .x2 = s->x2, .e2 = s->e2,
                         .scale_min = s->scale_min, .scale_max = s->scale_max};
        fputs("total,", out);
        cli_csv_field(out, res->name);
        fprintf(out, ",%d,,,,,,,", k + 1);
        cell_csv(out, &c, s->count, s->zeros, s->nonfinite, res->kept, res->no_history);
        fputc('\n', out);
    }
    free(rank);
}
