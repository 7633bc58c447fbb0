/* fpgrad --recipes: each tensor read once into float32 and quantised under
 * every recipe on the job's threads (grad_recipe_bands.c); then the
 * totals, each recipe's keep threshold and median, and the ranking.  A
 * delayed-scaling recipe needs the amaxes of the tensor's earlier steps, so
 * it waits for a second pass, when every row's amax is known. */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad_recipe.h"
#ifdef FPGRAD_MPI
#include "grad_mpi.h"
#include "mpi_job.h"
#endif

/* A pass over the rows: the recipes it does (the delayed ones, or the
 * others). */
typedef struct pass {
    recipe_run *run;
    bool delayed;
    const size_t *before; /* per row: the same tensor's row at the step before, or SIZE_MAX */
} pass;

static bool is_delayed(const fpk_recipe *r)
{
    return r->history > 0;
}

bool recipe_db(double x2, double e2, double *db)
{
    if (!(x2 > 0))
        return false;
    *db = e2 > 0 ? 10 * log10(x2 / e2) : INFINITY;
    return true;
}

/* H := the amaxes of row I's tensor at its earlier steps, the latest
 * last, at most LEN of them; whether there were any. */
static bool history_of(const pass *p, size_t i, int len, fpk_amax_history *h)
{
    fpk_amax_history_init(h, len);
    size_t chain[FPK_HISTORY_MAX];
    int n = 0;
    for (size_t j = p->before[i]; j != SIZE_MAX && n < len; j = p->before[j])
        chain[n++] = j;
    for (int k = n - 1; k >= 0; k--)
        fpk_amax_history_push(h, p->run->rows[chain[k]].amax);
    return n > 0;
}

/* Row I's cell of recipe J from the tensor's statistics S, which the
 * recipe's totals take in too. */
static void record(recipe_run *run, size_t i, int j, const fpk_recipe_stats *s)
{
    recipe_cell *cell = &run->rows[i].cell[j];
    *cell = (recipe_cell){.done = true, .no_history = cell->no_history,
                          .flushed = s->flushed, .saturated = s->saturated,
                          .subnormal = s->subnormal, .blocks = s->blocks,
                          .zero_blocks = s->zero_blocks, .nan_blocks = s->nan_blocks,
                          .scale_underflow = s->scale_underflow,
                          .scale_saturated = s->scale_saturated, .x2 = s->x2, .e2 = s->e2,
                          .scale_min = s->scale_min, .scale_max = s->scale_max};
    /* the totals' counts and histograms: exact, in any order */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    fpk_recipe_stats_merge(run->recipes[j].total, s);
    pthread_mutex_unlock(&lock);
}

/* Row I's zeros and nonfinite elements, where no recipe without a
 * transform counted them. */
static void view_counts(recipe_row *row, const float *x, uint64_t n)
{
    uint64_t zeros = 0, nonfinite = 0;
    for (uint64_t i = 0; i < n; i++) { /* by the bits: a loop that vectorises */
        uint32_t a;
        memcpy(&a, &x[i], sizeof a);
        a &= 0x7fffffffu;
        zeros += a == 0;
        nonfinite += a >= 0x7f800000u;
    }
    row->zeros = zeros;
    row->nonfinite = nonfinite;
}

static bool job(scan_worker *w, size_t i, void *arg)
{
    const pass *p = arg;
    recipe_run *run = p->run;
    recipe_row *row = &run->rows[i];
    const scan_tensor *t = &run->s->tensors[row->tensor];
    uint64_t n = t->t.count;
    float *x = cli_xcalloc_pages(n ? (size_t)n : 1, sizeof(float));
    int nt = scan_inner(w);
    bool ok = scan_read_floats(w, t, nt, x);
    /* the pass's recipes that apply to the view */
    recipe_task *task = cli_xcalloc((size_t)run->nrecipes, sizeof *task);
    int *which = cli_xcalloc((size_t)run->nrecipes, sizeof *which), ntasks = 0, counted = -1;
    for (int j = 0; j < run->nrecipes; j++) {
        const fpk_recipe *r = &run->recipes[j].recipe;
        if (is_delayed(r) != p->delayed || (r->rht && row->cols % 16))
            continue; /* the transform takes runs of 16 */
        fpk_amax_history *h = NULL;
        if (is_delayed(r)) {
            h = cli_xcalloc(1, sizeof *h);
            bool none = !history_of(p, i, r->history, h);
            row->cell[j].no_history = none;
            if (none) /* as if its history held its own amax */
                fpk_amax_history_push(h, row->amax);
        }
        fpk_recipe_stats *st = cli_xcalloc(1, sizeof *st);
        fpk_recipe_stats_init(st, r);
        if (counted < 0 && !r->rht)
            counted = ntasks;
        which[ntasks] = j;
        task[ntasks++] = (recipe_task){.recipe = r, .history = h, .stats = st};
    }
    fpk_recipe_range plain;
    fpk_error err;
    if (ok && !recipe_quantize_tensor(x, (size_t)row->rows, (size_t)row->cols, task, ntasks,
                                      nt, &plain, &err))
        ok = scan_fail_error(w, &err);
    if (ok && !p->delayed) {
        row->amax = plain.amax;
        if (counted >= 0) {
            row->zeros = task[counted].stats->zeros;
            row->nonfinite = task[counted].stats->nonfinite;
        } else {
            view_counts(row, x, n);
        }
    }
    for (int k = 0; k < ntasks; k++) {
        if (ok)
            record(run, i, which[k], task[k].stats);
        free((void *)task[k].history);
        free(task[k].stats);
    }
    free(task);
    free(which);
    free(x);
    if (ok) /* the quantisation's share of the progress line */
        for (int j = 0; j < run->nrecipes; j++)
            if (is_delayed(&run->recipes[j].recipe) == p->delayed)
                scan_progress(w, n);
    return ok;
}

/* A row's place among the rows of its tensor (name): its step, or its
 * place in the run. */
typedef struct by_name {
    const char *name;
    int64_t key;
    size_t row;
} by_name;

static int cmp_name(const void *a, const void *b)
{
    const by_name *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* BEFORE[i] := a row of the same tensor (name) at the latest earlier step:
 * by their files' steps when every file has one, else by row order. */
static size_t *steps_before(const recipe_run *run)
{
    const scan *s = run->s;
    size_t n = run->nrows;
    size_t *before = cli_xcalloc(n ? n : 1, sizeof *before);
    by_name *v = cli_xcalloc(n ? n : 1, sizeof *v);
    bool steps = true;
    for (size_t i = 0; i < n; i++)
        steps &= s->steps[s->tensors[run->rows[i].tensor].file].known;
    for (size_t i = 0; i < n; i++) {
        const scan_tensor *t = &s->tensors[run->rows[i].tensor];
        v[i] = (by_name){t->t.name, steps ? s->steps[t->file].step : (int64_t)i, i};
    }
    qsort(v, n, sizeof *v, cmp_name);
    for (size_t k = 0; k < n; k++) {
        /* the last row of the same name with a smaller key */
        size_t first = k; /* of the run of equal keys that K is in */
        while (first > 0 && strcmp(v[first - 1].name, v[k].name) == 0 &&
               v[first - 1].key == v[k].key)
            first--;
        bool has = first > 0 && strcmp(v[first - 1].name, v[k].name) == 0;
        before[v[k].row] = has ? v[first - 1].row : SIZE_MAX;
    }
    free(v);
    return before;
}

/* A uniform variate of 20 bits from the state X (splitmix64). */
static uint32_t uniform20(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (uint32_t)((z ^ (z >> 31)) >> 44);
}

double recipe_reference_db(const fpk_recipe *r)
{
    enum { SIDE = 256 };
    float *x = cli_xcalloc((size_t)SIDE * SIDE, sizeof *x);
    uint64_t state = 0;
    float amax = 0;
    for (size_t i = 0; i < (size_t)SIDE * SIDE; i++) {
        int32_t m = -(6 << 20); /* the sum of 12 variates of [0, 1) less 6, in units of 2^-20 */
        for (int k = 0; k < 12; k++)
            m += (int32_t)uniform20(&state);
        x[i] = ldexpf((float)m, -20); /* |m| < 2^23: exact */
        amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    }
    fpk_recipe_stats *st = cli_xcalloc(1, sizeof *st);
    fpk_amax_history *h = cli_xcalloc(1, sizeof *h);
    fpk_recipe_stats_init(st, r);
    if (is_delayed(r)) {
        fpk_amax_history_init(h, r->history);
        fpk_amax_history_push(h, amax);
    }
    fpk_quantized q = {0};
    fpk_error err;
    double db = 0;
    if (fpk_recipe_quantize(r, x, SIDE, SIDE, is_delayed(r) ? h : NULL, &q, st, &err) != FPK_OK)
        cli_die(CLI_EXIT_INTERNAL, "%s", err.msg);
    recipe_db(st->x2, st->e2, &db);
    free(st), free(h), free(x);
    return db;
}

/* The rows: the tensors of S that C's --match keeps, in order. */
static void list_rows(recipe_run *run, const scan *s, const cli_common *c)
{
    run->rows = cli_xcalloc(s->ntensors ? s->ntensors : 1, sizeof *run->rows);
    for (size_t k = 0; k < s->ntensors; k++) {
        const scan_tensor *t = &s->tensors[k];
        if (c->has_match && regexec(&c->match, t->t.name, 0, NULL, 0) != 0)
            continue;
        recipe_row *r = &run->rows[run->nrows];
        r->tensor = k;
        r->cols = t->t.ndim ? t->t.shape[t->t.ndim - 1] : 1;
        r->rows = r->cols ? t->t.count / r->cols : 0;
        r->cell = cli_xcalloc((size_t)run->nrecipes, sizeof *r->cell);
        run->count += t->t.count;
        run->widened += t->t.dtype == FPK_DTYPE_F64;
        const scan_step *st = &s->steps[t->file];
        const scan_step *first = &s->steps[s->tensors[run->rows[0].tensor].file];
        run->steps |= st->known && first->known && st->step != first->step;
        run->nfiles += run->nrows == 0 || s->tensors[run->rows[run->nrows - 1].tensor].file != t->file;
        run->nrows++;
    }
    if (!run->nrows)
        scan_none(s, c->has_match);
}

typedef struct by_db {
    double db;
    uint64_t weight;
} by_db;

static int cmp_db(const void *a, const void *b)
{
    double x = ((const by_db *)a)->db, y = ((const by_db *)b)->db;
    return (x > y) - (x < y);
}

/* Recipe J's totals' sums, median, worst row, keep threshold and kept rows. */
static void finish_recipe(recipe_run *run, int j)
{
    recipe_result *res = &run->recipes[j];
    by_db *v = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *v);
    size_t nv = 0;
    uint64_t weight = 0;
    double x2 = 0, e2 = 0, worst = INFINITY;
    res->worst = SIZE_MAX;
    res->reference_db = recipe_reference_db(&res->recipe);
    res->keep_db = run->keep_given ? run->keep_below : res->reference_db - RECIPE_KEEP_MARGIN_DB;
    for (size_t i = 0; i < run->nrows; i++) {
        recipe_cell *c = &run->rows[i].cell[j];
        if (!c->done) {
            res->skipped++;
            continue;
        }
        res->applied++;
        res->no_history += c->no_history;
        x2 += c->x2;
        e2 += c->e2;
        double db;
        if (!recipe_db(c->x2, c->e2, &db))
            continue;
        uint64_t n = run->s->tensors[run->rows[i].tensor].t.count;
        v[nv++] = (by_db){db, n};
        weight += n;
        if (db < worst) {
            worst = db;
            res->worst = i;
        }
        c->keep = db < res->keep_db;
        res->kept += c->keep;
    }
    res->total->x2 = x2; /* the rows' sums in row order: the same in any run */
    res->total->e2 = e2;
    qsort(v, nv, sizeof *v, cmp_db); /* (equal values: any order gives the same) */
    uint64_t seen = 0;
    for (size_t k = 0; k < nv; k++) {
        seen += v[k].weight;
        if (2 * seen >= weight) {
            res->has_median = true;
            res->median_db = v[k].db;
            break;
        }
    }
    free(v);
}

/* Better first: the higher median, then the higher SQNR of all, then
 * the order given. */
static int cmp_rank(const void *a, const void *b, void *arg)
{
    const recipe_run *run = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const recipe_result *x = &run->recipes[i], *y = &run->recipes[j];
    if (x->has_median != y->has_median)
        return x->has_median ? -1 : 1;
    if (x->has_median && x->median_db != y->median_db)
        return x->median_db > y->median_db ? -1 : 1;
    double dx = -INFINITY, dy = -INFINITY;
    recipe_db(x->total->x2, x->total->e2, &dx);
    recipe_db(y->total->x2, y->total->e2, &dy);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return (i > j) - (i < j);
}

static void run_pass(recipe_run *run, const cli_common *c, const pass *p, bool progress,
                     const char *label, const bool *mine)
{
    int n = 0;
    uint64_t todo = 0;
    for (int j = 0; j < run->nrecipes; j++)
        n += is_delayed(&run->recipes[j].recipe) == p->delayed;
    for (size_t i = 0; i < run->nrows; i++)
        if (!mine || mine[i])
            todo += run->s->tensors[run->rows[i].tensor].t.count * (uint64_t)(1 + n);
    scan_pool pool = {.s = run->s, .njobs = run->nrows, .mine = mine, .threads = c->threads,
                      .job = job, .arg = (void *)p, .todo = todo,
                      .label = progress ? label : NULL};
    scan_run(&pool);
}


void recipe_analyse(recipe_run *run, const scan *s, const cli_common *c, bool progress)
{
    run->s = s;
    run->nrecipes = c->nrecipes;
    run->recipes = cli_xcalloc((size_t)c->nrecipes, sizeof *run->recipes);
    bool delayed = false;
    for (int j = 0; j < c->nrecipes; j++) {
        recipe_result *res = &run->recipes[j];
        res->name = c->recipe_names[j];
        res->recipe = c->recipes[j];
        res->total = cli_xcalloc(1, sizeof *res->total);
        fpk_recipe_stats_init(res->total, &res->recipe);
        delayed |= is_delayed(&res->recipe);
    }
    list_rows(run, s, c);
    bool *mine = NULL;
#ifdef FPGRAD_MPI
    size_t *tensors = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *tensors);
    for (size_t i = 0; i < run->nrows; i++)
        tensors[i] = run->rows[i].tensor;
    mine = grad_mpi_mine(s, tensors, run->nrows);
    free(tensors);
#endif
    pass p = {.run = run, .delayed = false};
    run_pass(run, c, &p, progress, delayed ? "pass 1 of 2" : "pass 1 of 1", mine);
    if (delayed) {
#ifdef FPGRAD_MPI
        recipe_mpi_share_amax(run);
#endif
        size_t *before = steps_before(run);
        p = (pass){.run = run, .delayed = true, .before = before};
        run_pass(run, c, &p, progress, "pass 2 of 2", mine);
        free(before);
    }
#ifdef FPGRAD_MPI
    recipe_mpi_gather(run, mine);
#endif
    free(mine);
    for (int j = 0; j < run->nrecipes; j++)
        finish_recipe(run, j);
    run->rank = cli_xcalloc((size_t)run->nrecipes, sizeof *run->rank);
    for (int j = 0; j < run->nrecipes; j++)
        run->rank[j] = (size_t)j;
    qsort_r(run->rank, (size_t)run->nrecipes, sizeof *run->rank, cmp_rank, run);
}

/* Lower SQNR under the best recipe first; rows without one last, in order. */
static int cmp_worst(const void *a, const void *b, void *arg)
{
    const recipe_run *run = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b, best = run->rank[0];
    const recipe_cell *x = &run->rows[i].cell[best], *y = &run->rows[j].cell[best];
    double dx = 0, dy = 0;
    bool hx = x->done && recipe_db(x->x2, x->e2, &dx), hy = y->done && recipe_db(y->x2, y->e2, &dy);
    if (hx != hy)
        return hx ? -1 : 1;
    if (hx && dx != dy)
        return dx < dy ? -1 : 1;
    return (i > j) - (i < j);
}

size_t *recipe_worst_order(const recipe_run *run)
{
    size_t *order = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *order);
    for (size_t i = 0; i < run->nrows; i++)
        order[i] = i;
    qsort_r(order, run->nrows, sizeof *order, cmp_worst, (void *)run);
    return order;
}

void recipe_run_free(recipe_run *run)
{
    for (size_t i = 0; i < run->nrows; i++)
        free(run->rows[i].cell);
    for (int j = 0; j < run->nrecipes; j++)
        free(run->recipes[j].total);
    free(run->rows);
    free(run->recipes);
    free(run->rank);
}
