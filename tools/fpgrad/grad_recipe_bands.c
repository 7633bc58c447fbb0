/* One tensor quantised under several recipes on a job's threads, by bands
 * of rows small enough to stay in a core's cache: first the tensor's
 * extremes (once for the recipes without a transform, once for each with
 * the RHT), then each recipe's plan, then every (band, recipe) pair taken
 * in turn by the threads, band by band, each thread adding to statistics
 * of its own that are merged at the end.  The library makes the results
 * those of one fpk_recipe_quantize of the whole view, whatever the bands
 * (fpk_recipe_quantize_rows); a vector is seen as rows of C elements for
 * the recipes whose blocks that leaves unchanged. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad_recipe.h"

/* Elements of a band, at least: within a core's L2 cache as float32. */
#define BAND_ELEMENTS ((size_t)1 << 16)
/* The longest row a vector is cut into. */
#define VECTOR_ROW ((size_t)1 << 16)

typedef struct band_job {
    const float *x;
    recipe_task *tasks;
    int ntasks, nt;
    size_t rows, cols;       /* the tensor's view */
    size_t vrows, vcols;     /* a vector's view as rows, where one is taken */
    bool *as_rows;           /* per task: quantised in the rows view */
    bool *bandable;          /* per task: split into bands */
    int *rht, nrht;          /* the tasks with the RHT */
    int *whole, nwhole;      /* the tasks done in one piece */
    int *split, nsplit;      /* the others */
    fpk_recipe plain;        /* a recipe without a transform, for the extremes */
    fpk_recipe_plan *plans;
    fpk_recipe_range *ranges; /* [0] without a transform, [1 + k] task k's with the RHT */
    size_t band_rows[2], nbands[2]; /* in the tensor's view, in the rows view */
    int scan_view;           /* the view the extremes are found in (1: the rows view) */
    size_t nscan, nitems;
    atomic_size_t next;
    atomic_bool failed;
    pthread_barrier_t barrier;
    pthread_mutex_t lock;
    fpk_error err;
    fpk_recipe_stats **local; /* [thread * ntasks + task], NULL until used */
} band_job;

static void range_merge(fpk_recipe_range *into, const fpk_recipe_range *e)
{
    if (e->amax > into->amax)
        into->amax = e->amax;
    if (e->amin > 0 && (into->amin == 0 || e->amin < into->amin))
        into->amin = e->amin;
    into->nonfinite |= e->nonfinite;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static size_t lcm(size_t a, size_t b)
{
    return a / gcd(a, b) * b;
}

/* Whether recipe R quantises a vector seen as rows of C elements as it
 * does the vector: 1 x K blocks, K dividing C, keep their elements and
 * their runs along a row (whose sums the statistics add), and the RHT's
 * runs of 16 where C is a multiple of 16.  A whole-tensor block would
 * change its runs. */
static bool rows_view_keeps(const fpk_recipe *r, size_t c)
{
    return r->block_rows == 1 && r->block_cols > 0 && c % r->block_cols == 0 &&
           (!r->rht || c % 16 == 0);
}

/* Whether R's block rows may be split between bands: all but blocks of
 * whole columns (ROWS x K). */
static bool splits_by_rows(const fpk_recipe *r)
{
    return r->block_rows != 0 || r->block_cols == 0;
}

/* The rows of a band of a ROWS x COLS view for the tasks that split,
 * a multiple of each one's block height. */
static size_t band_rows_of(const band_job *b, size_t cols, bool as_rows)
{
    size_t h = 1;
    for (int k = 0; k < b->ntasks; k++)
        if (b->bandable[k] && b->as_rows[k] == as_rows && b->tasks[k].recipe->block_rows)
            h = lcm(h, b->tasks[k].recipe->block_rows);
    size_t per = cols ? (BAND_ELEMENTS + cols - 1) / cols : 1;
    return (per + h - 1) / h * h;
}

/* A vector of N elements as rows of C: the longest C up to VECTOR_ROW
 * that divides N and that every 1 x K recipe's K divides (and 16 where
 * one has the RHT); 0 if none, or if no recipe could use it. */
static size_t vector_row(const recipe_task *tasks, int ntasks, size_t n)
{
    size_t unit = 1;
    bool any = false;
    for (int k = 0; k < ntasks; k++) {
        const fpk_recipe *r = tasks[k].recipe;
        if (r->block_rows == 1 && r->block_cols > 0)
            unit = lcm(unit, r->block_cols), any = true;
        if (r->rht)
            unit = lcm(unit, 16);
    }
    if (!any || n < 2 * VECTOR_ROW || unit > VECTOR_ROW)
        return 0;
    for (size_t c = VECTOR_ROW / unit * unit; c >= unit; c -= unit)
        if (n % c == 0)
            return c;
    return 0;
}

static void fail(band_job *b, const fpk_error *err)
{
    pthread_mutex_lock(&b->lock);
    if (!atomic_load(&b->failed))
        b->err = *err;
    atomic_store(&b->failed, true);
    pthread_mutex_unlock(&b->lock);
}

/* Scan items: band I of the tensor's view, once without a transform and
 * once per task with the RHT. */
static void scan_items(band_job *b, fpk_recipe_range *mine)
{
    const int v = b->scan_view;
    const size_t n = b->nbands[v], h = b->band_rows[v];
    const size_t rows = v ? b->vrows : b->rows, cols = v ? b->vcols : b->cols;
    for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->nscan && !atomic_load(&b->failed);) {
        size_t band = i % n, which = i / n;
        size_t r0 = band * h, nr = rows - r0 < h ? rows - r0 : h;
        const fpk_recipe *r = &b->plain;
        int at = 0;
        if (which) {
            int k = b->rht[which - 1];
            r = b->tasks[k].recipe;
            at = 1 + k;
        }
        fpk_error err;
        if (fpk_recipe_scan(r, b->x + r0 * cols, nr, cols, &mine[at], &err) != FPK_OK)
            fail(b, &err);
    }
}

static fpk_recipe_stats *local_stats(band_job *b, int thread, int k)
{
    if (b->nt == 1)
        return b->tasks[k].stats;
    fpk_recipe_stats **s = &b->local[(size_t)thread * (size_t)b->ntasks + (size_t)k];
    if (!*s) {
        *s = cli_xcalloc(1, sizeof **s);
        fpk_recipe_stats_init(*s, b->tasks[k].recipe);
    }
    return *s;
}

/* Quantisation items: first the tasks in one piece, then band by band
 * those that split. */
static void quantize_items(band_job *b, int thread)
{
    const size_t whole = (size_t)b->nwhole, split = (size_t)b->nsplit;
    for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->nitems && !atomic_load(&b->failed);) {
        int k;
        size_t r0 = 0, nr;
        if (i < whole) {
            k = b->whole[i];
            nr = b->as_rows[k] ? b->vrows : b->rows;
        } else {
            size_t j = i - whole, band = j / split;
            k = b->split[j % split];
            int v = b->as_rows[k];
            size_t rows = v ? b->vrows : b->rows, h = b->band_rows[v];
            if (band >= b->nbands[v])
                continue; /* the other view has more bands */
            r0 = band * h;
            nr = rows - r0 < h ? rows - r0 : h;
        }
        fpk_quantized q = {0};
        fpk_error err;
        if (fpk_recipe_quantize_rows(&b->plans[k], b->x, r0, nr, &q, local_stats(b, thread, k),
                                     &err) != FPK_OK)
            fail(b, &err);
    }
}

typedef struct band_thread {
    band_job *b;
    int thread;
    fpk_recipe_range *ranges;
} band_thread;

static void *band_run(void *arg)
{
    band_thread *t = arg;
    band_job *b = t->b;
    scan_items(b, t->ranges);
    pthread_barrier_wait(&b->barrier);
    if (t->thread == 0) { /* the ranges merged, the plans made */
        atomic_store(&b->next, 0);
        size_t nr = 1 + (size_t)b->ntasks;
        for (int th = 1; th < b->nt; th++)
            for (size_t k = 0; k < nr; k++)
                range_merge(&b->ranges[k], &t[th].ranges[k]);
        for (int k = 0; k < b->ntasks && !atomic_load(&b->failed); k++) {
            const recipe_task *task = &b->tasks[k];
            const fpk_recipe_range *e = &b->ranges[task->recipe->rht ? 1 + k : 0];
            size_t rows = b->as_rows[k] ? b->vrows : b->rows;
            size_t cols = b->as_rows[k] ? b->vcols : b->cols;
            fpk_error err;
            if (fpk_recipe_plan_init(&b->plans[k], task->recipe, rows, cols, e, task->history,
                                     &err) != FPK_OK)
                fail(b, &err);
        }
    }
    pthread_barrier_wait(&b->barrier);
    quantize_items(b, t->thread);
    return NULL;
}

bool recipe_quantize_tensor(const float *x, size_t rows, size_t cols, recipe_task *tasks,
                            int ntasks, int nt, fpk_recipe_range *plain, fpk_error *err)
{
    band_job b = {.x = x, .tasks = tasks, .ntasks = ntasks, .rows = rows, .cols = cols};
    size_t n = rows * cols, nr = 1 + (size_t)ntasks;
    if (n < 2 * BAND_ELEMENTS || ntasks == 0)
        nt = 1;
    b.nt = nt;
    if (ntasks)
        b.plain = *tasks[0].recipe;
    else if (fpk_recipe_parse("fp8-tensor-current", &b.plain, err) != FPK_OK)
        return false;
    b.plain.rht = false;
    b.as_rows = cli_xcalloc((size_t)ntasks, sizeof *b.as_rows);
    b.bandable = cli_xcalloc((size_t)ntasks, sizeof *b.bandable);
    b.plans = cli_xcalloc((size_t)ntasks, sizeof *b.plans);
    b.ranges = cli_xcalloc(nr * (size_t)nt, sizeof *b.ranges);
    b.local = cli_xcalloc((size_t)nt * (size_t)ntasks, sizeof *b.local);
    b.rht = cli_xcalloc((size_t)ntasks, sizeof *b.rht);
    b.whole = cli_xcalloc((size_t)ntasks, sizeof *b.whole);
    b.split = cli_xcalloc((size_t)ntasks, sizeof *b.split);
    size_t c = rows == 1 ? vector_row(tasks, ntasks, n) : 0;
    b.vcols = c ? c : cols;
    b.vrows = c ? n / c : rows;
    for (int k = 0; k < ntasks; k++) {
        const fpk_recipe *r = tasks[k].recipe;
        if (r->rht)
            b.rht[b.nrht++] = k;
        b.as_rows[k] = c && rows_view_keeps(r, c);
        b.bandable[k] = splits_by_rows(r) && (b.as_rows[k] || rows > 1);
        if (b.bandable[k])
            b.split[b.nsplit++] = k;
        else
            b.whole[b.nwhole++] = k;
    }
    for (int v = 0; v < 2; v++) {
        size_t vr = v ? b.vrows : rows, vc = v ? b.vcols : cols;
        b.band_rows[v] = band_rows_of(&b, vc, v);
        b.nbands[v] = vr ? (vr + b.band_rows[v] - 1) / b.band_rows[v] : 0;
    }
    /* the extremes, the same in either view (a vector's rows hold whole
     * runs of the RHT), by bands of the one with more */
    b.scan_view = c != 0;
    b.nscan = b.nbands[b.scan_view] * (1 + (size_t)b.nrht);
    size_t most = b.nbands[0] > b.nbands[1] ? b.nbands[0] : b.nbands[1];
    for (int k = 0; k < ntasks; k++)
        b.nitems += b.bandable[k] ? most : 1;
    pthread_mutex_init(&b.lock, NULL);
    pthread_barrier_init(&b.barrier, NULL, (unsigned)nt);
    band_thread *t = cli_xcalloc((size_t)nt, sizeof *t);
    pthread_t *th = cli_xcalloc((size_t)nt, sizeof *th);
    for (int k = 0; k < nt; k++)
        t[k] = (band_thread){.b = &b, .thread = k, .ranges = b.ranges + nr * (size_t)k};
    for (int k = 1; k < nt; k++)
        if (pthread_create(&th[k], NULL, band_run, &t[k]) != 0)
            cli_die(CLI_EXIT_INTERNAL, "cannot start a thread");
    band_run(&t[0]);
    for (int k = 1; k < nt; k++)
        pthread_join(th[k], NULL);
    bool ok = !atomic_load(&b.failed);
    if (ok)
        for (size_t i = 0; i < (size_t)nt * (size_t)ntasks; i++)
            if (b.local[i])
                fpk_recipe_stats_merge(tasks[i % (size_t)ntasks].stats, b.local[i]);
    for (size_t i = 0; i < (size_t)nt * (size_t)ntasks; i++)
        free(b.local[i]);
    *plain = b.ranges[0];
    if (!ok)
        *err = b.err;
    pthread_barrier_destroy(&b.barrier);
    pthread_mutex_destroy(&b.lock);
    free(t), free(th);
    free(b.as_rows), free(b.bandable), free(b.plans), free(b.ranges), free(b.local);
    free(b.rht), free(b.whole), free(b.split);
    return ok;
}
