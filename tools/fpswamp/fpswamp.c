/* fpswamp: how much of each weight update w + dw survives when the weights
 * are held in FP16, BF16 or FP8: with round to nearest even, stochastic
 * rounding, Kahan-compensated weights, and FP32 master weights. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fpswamp.h"
#include "outfile.h"
#ifdef FPSWAMP_MPI
#include "mpi_job.h"
#endif

/* The name in --version and in messages that send the user to --help. */
#ifdef FPSWAMP_MPI
#define TOOL "fpswamp-mpi"
#else
#define TOOL "fpswamp"
#endif

enum { OPT_LR = CLI_OWN, OPT_LR_SWEEP, OPT_STEPS, OPT_WEIGHTS, OPT_UPDATES };

static const cli_opt options[] = {
    {.key = CLI_FORMATS, .help = "formats the weights are held in (default fp16,bf16,e4m3,e5m2)"},
    {.key = OPT_LR, .name = "--lr", .value = "LR",
     .help = "the pairs hold gradients: the update is -LR * grad/P"},
    {.key = OPT_LR_SWEEP, .name = "--lr-sweep", .value = "LO:HI:N",
     .help = "the lost fraction at N learning rates, log-spaced from LO to HI, from the "
             "gradients"},
    {.key = OPT_STEPS, .name = "--steps", .value = "K",
     .help = "replay the update K times and report the drift (default 1)"},
    {.key = CLI_SEEDS, .value = "N", .help = "stochastic rounding with N seeds (default 8)"},
    {.key = CLI_MATCH, .help = "only parameters whose name matches (POSIX extended regex)"},
    {.key = OPT_WEIGHTS, .name = "--weights", .value = "A",
     .help = "the weights: a dump file or directory ..."},
    {.key = OPT_UPDATES, .name = "--updates", .value = "B",
     .help = "... and the updates (gradients with --lr), the same names"},
    {.key = CLI_JSON},
    {.key = CLI_PLOT, .help = "lost fractions per tensor and format, or the sweep; .png or .svg"},
    {.key = CLI_PLOT_SIZE},
#ifdef FPSWAMP_MPI
    {.key = CLI_THREADS,
     .help = "tensors computed at once (default: this rank's share of its machine's CPUs)"},
#else
    {.key = CLI_THREADS, .help = "tensors computed at once (default: all its CPUs)"},
#endif
    {.key = CLI_QUIET},
    {0},
};

static const char *const synopsis[] = {
    "--formats --lr --lr-sweep --steps --seeds --match --json --plot --plot-size --threads "
    "--quiet PATH...",
    "[options] !--weights !--updates",
    NULL,
};

#define CHUNK 65536 /* elements read at once */
#define DEFAULT_FORMATS "fp16,bf16,e4m3,e5m2"

typedef struct opts {
    sw_run run;
    cli_common c;
    const char *weights, *updates;
    bool has_lr, steps_given;
} opts;

/* The tensors of the dumps under a path: file, index, name. */
typedef struct entry {
    char *file, *name;
    size_t index;
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
} entry;

typedef struct entries {
    entry *v;
    size_t n, cap;
} entries;

/* LO:HI:N: N learning rates 2^(log2 LO + i (log2 HI - log2 LO) / (N - 1)),
 * i = 0 .. N-1 (exact powers of two when LO and HI are). */
static void parse_sweep(opts *o, const char *s)
{
    char *copy = cli_strf("%s", s), *a = strchr(copy, ':'), *b = a ? strchr(a + 1, ':') : NULL;
    if (!b)
        cli_die(CLI_EXIT_USAGE, "option --lr-sweep: \"%s\" is not LO:HI:N", s);
    *a = *b = '\0';
    double lo = cli_parse_positive("--lr-sweep", copy, NULL), hi = cli_parse_positive("--lr-sweep", a + 1, NULL);
    int n = (int)cli_parse_int("--lr-sweep", b + 1, 2, 1000);
    if (!(lo < hi))
        cli_die(CLI_EXIT_USAGE, "option --lr-sweep: LO must be below HI in \"%s\"", s);
    free(copy);
    sw_run *run = &o->run;
    free(run->sweep_lr);
    run->sweep_lr = cli_xcalloc((size_t)n, sizeof *run->sweep_lr);
    run->sweep_n = n;
    double l0 = log2(lo), l1 = log2(hi);
    for (int i = 0; i < n; i++)
        run->sweep_lr[i] = i == 0 ? lo : i == n - 1 ? hi : exp2(l0 + i * (l1 - l0) / (n - 1));
}

static void add_entry(entries *es, const char *file, const fpk_tensor *t, size_t index)
{
    if (es->n == es->cap) {
        es->cap = es->cap ? 2 * es->cap : 32;
        if (!(es->v = realloc(es->v, es->cap * sizeof *es->v)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    entry *e = &es->v[es->n++];
    e->file = cli_strf("%s", file);
    e->name = cli_strf("%s", t->name);
    e->index = index;
    e->ndim = t->ndim;
    memcpy(e->shape, t->shape, sizeof e->shape);
}

static void free_entries(entries *es)
{
    for (size_t i = 0; i < es->n; i++)
        free(es->v[i].file), free(es->v[i].name);
    free(es->v);
    es->v = NULL;
    es->n = es->cap = 0;
}

static int visit(const char *file, void *arg)
{
    entries *es = arg;
    fpk_dump *d;
    fpk_error err;
    outfile_protect(file); /* every file read, paired or not */
    if (fpk_dump_open(file, NULL, &d, &err) != FPK_OK)
        cli_die_error(&err);
    for (size_t t = 0; t < fpk_dump_ntensors(d); t++)
        add_entry(es, file, fpk_dump_tensor(d, t), t);
    fpk_dump_close(d);
    return 0;
}

static void walk(const char *path, entries *es)
{
    fpk_error err;
    if (fpk_dump_walk(path, visit, es, &err) != FPK_OK)
        cli_die_error(&err);
}

static char *shape_text(const entry *e)
{
    char *s = cli_strf("[");
    for (int i = 0; i < e->ndim; i++) {
        char *n = cli_strf("%s%s%" PRIu64, s, i ? ", " : "", e->shape[i]);
        free(s);
        s = n;
    }
    char *n = cli_strf("%s]", s);
    free(s);
    return n;
}

static bool matches(const opts *o, const char *name)
{
    return !o->c.has_match || regexec(&o->c.match, name, 0, NULL, 0) == 0;
}

/* A row for parameter P: weight W and update U, whose shapes must agree. */
static void add_row(opts *o, size_t *cap, const char *p, const entry *w, const entry *u)
{
    sw_run *run = &o->run;
    if (w->ndim != u->ndim || memcmp(w->shape, u->shape, (size_t)w->ndim * sizeof w->shape[0])) {
        char *a = shape_text(w), *b = shape_text(u);
        cli_die(CLI_EXIT_USAGE, "%s: %s has shape %s but %s (%s) has shape %s", w->file, w->name, a,
                u->name, u->file, b);
    }
    if (run->nrows == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        if (!(run->rows = realloc(run->rows, *cap * sizeof *run->rows)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    sw_row *r = &run->rows[run->nrows++];
    memset(r, 0, sizeof *r);
    r->name = cli_strf("%s", p);
    r->wfile = cli_strf("%s", w->file);
    r->ufile = cli_strf("%s", u->file);
    r->wname = cli_strf("%s", w->name);
    r->uname = cli_strf("%s", u->name);
    r->wi = w->index;
    r->ui = u->index;
    r->ndim = w->ndim;
    memcpy(r->shape, w->shape, sizeof r->shape);
    sw_row_alloc(run, r);
}

/* The dumper's layout: in each file, weight/P with update/P (or grad/P). */
static void pair_layout(opts *o, const entries *es)
{
    const char *upre = o->run.grad ? "grad/" : "update/";
    size_t ulen = strlen(upre), cap = 0;
    bool any = false;
    for (size_t i = 0; i < es->n; i++) {
        const entry *e = &es->v[i];
        bool is_w = strncmp(e->name, "weight/", 7) == 0, is_u = strncmp(e->name, upre, ulen) == 0;
        const char *p = is_w ? e->name + 7 : is_u ? e->name + ulen : NULL;
        any = any || p;
        if (!p || !matches(o, p))
            continue;
        const entry *other = NULL;
        for (size_t k = 0; k < es->n && !other; k++)
            if (strcmp(es->v[k].file, e->file) == 0 &&
                strncmp(es->v[k].name, is_w ? upre : "weight/", is_w ? ulen : 7) == 0 &&
                strcmp(es->v[k].name + (is_w ? ulen : 7), p) == 0)
                other = &es->v[k];
        if (!other)
            cli_die(CLI_EXIT_USAGE, "%s: %s has no %s%s to pair with", e->file, e->name,
                    is_w ? upre : "weight/", p);
        if (is_w)
            add_row(o, &cap, p, e, other);
    }
    if (!o->run.nrows)
        cli_die(CLI_EXIT_USAGE, "no weight/P and %sP pairs %s", upre,
                any ? "match --match" : "found in the dumps");
}

/* Two dumps: every tensor of WS pairs with the tensor of the same name in US. */
static void pair_names(opts *o, const entries *ws, const entries *us)
{
    size_t cap = 0;
    const entries *sides[2] = {ws, us};
    const char *paths[2] = {o->weights, o->updates};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < sides[s]->n; i++) {
            const entry *e = &sides[s]->v[i];
            if (!matches(o, e->name))
                continue;
            const entry *other = NULL;
            for (size_t k = 0; k < sides[s]->n; k++)
                if (k != i && strcmp(sides[s]->v[k].name, e->name) == 0)
                    cli_die(CLI_EXIT_USAGE, "%s: tensor %s is found twice (%s and %s)", paths[s],
                            e->name, e->file, sides[s]->v[k].file);
            for (size_t k = 0; k < sides[!s]->n && !other; k++)
                if (strcmp(sides[!s]->v[k].name, e->name) == 0)
                    other = &sides[!s]->v[k];
            if (!other)
                cli_die(CLI_EXIT_USAGE, "%s: tensor %s has no tensor of that name in %s", e->file,
                        e->name, paths[!s]);
            if (s == 0)
                add_row(o, &cap, e->name, e, other);
        }
    if (!o->run.nrows)
        cli_die(CLI_EXIT_USAGE, "no tensors %s", o->c.has_match ? "match --match" : "found");
}

/* The rows shared out among threads, each taking the next one left; the
 * first failure stops them all and is reported by the main thread (a
 * worker must not exit, nor, under MPI, abort the job). */
typedef struct row_pool {
    opts *o;
    const bool *mine;     /* the rows this process computes (NULL: all) */
    pthread_mutex_t lock; /* guards next */
    size_t next;
    cli_failure fail;
} row_pool;

/* Reads row I's weights and updates (into WB and UB) and computes it with
 * X; false, with P's failure set, if a file cannot be read. */
static bool analyse_row(row_pool *p, sw_calc *x, size_t i, double *wb, double *ub)
{
    sw_run *run = &p->o->run;
    sw_row *r = &run->rows[i];
    fpk_dump *dw = NULL, *du = NULL;
    fpk_error err;
    bool ok = false;
    if (fpk_dump_open(r->wfile, NULL, &dw, &err) != FPK_OK ||
        fpk_dump_open(r->ufile, NULL, &du, &err) != FPK_OK) {
        cli_failure_set(&p->fail, cli_error_status(&err), err.msg);
        goto done;
    }
    /* The files were read once already; they must not have changed since. */
    if (r->wi >= fpk_dump_ntensors(dw) || r->ui >= fpk_dump_ntensors(du) ||
        strcmp(fpk_dump_tensor(dw, r->wi)->name, r->wname) ||
        strcmp(fpk_dump_tensor(du, r->ui)->name, r->uname) ||
        fpk_dump_tensor(du, r->ui)->count != fpk_dump_tensor(dw, r->wi)->count) {
        char *msg = cli_strf("%s: the file changed while being read", r->wfile);
        cli_failure_set(&p->fail, CLI_EXIT_USAGE, msg);
        free(msg);
        goto done;
    }
    uint64_t n = fpk_dump_tensor(dw, r->wi)->count;
    sw_calc_row(x, i);
    for (uint64_t first = 0; first < n;) {
        size_t k = n - first < CHUNK ? (size_t)(n - first) : CHUNK;
        if (fpk_dump_read(dw, r->wi, first, k, wb, &err) != FPK_OK ||
            fpk_dump_read(du, r->ui, first, k, ub, &err) != FPK_OK) {
            cli_failure_set(&p->fail, cli_error_status(&err), err.msg);
            goto done;
        }
        for (size_t e = 0; e < k; e++)
            sw_calc_add(x, run, r, wb[e], ub[e]);
        first += k;
    }
    ok = true;
done:
    if (dw)
        fpk_dump_close(dw);
    if (du)
        fpk_dump_close(du);
    return ok;
}

static void *row_worker(void *arg)
{
    row_pool *p = arg;
    sw_run *run = &p->o->run;
    sw_calc *x = sw_calc_new(run);
    double *wb = cli_xcalloc(CHUNK, sizeof *wb), *ub = cli_xcalloc(CHUNK, sizeof *ub);
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->mine && p->next < run->nrows && !p->mine[p->next])
            p->next++;
        size_t i = atomic_load(&p->fail.failed) || p->next >= run->nrows ? run->nrows : p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i == run->nrows || !analyse_row(p, x, i, wb, ub))
            break;
    }
    free(wb);
    free(ub);
    sw_calc_free(x);
    return NULL;
}

/* Reads every row's weights and updates and computes, a row per thread at
 * a time (each row's stochastic rounding is seeded by its index), then
 * sums the rows into the total in their order. */
static void analyse(opts *o)
{
    sw_run *run = &o->run;
    sw_row_alloc(run, &run->total);
    bool *mine = NULL;
#ifdef FPSWAMP_MPI
    /* The same pairs on every rank, shared out among the ranks by their
     * elements. */
    cli_buf listing = {0};
    for (size_t i = 0; i < run->nrows; i++) {
        const sw_row *r = &run->rows[i];
        cli_buf_put(&listing, r->wfile, strlen(r->wfile) + 1);
        cli_buf_put(&listing, r->wname, strlen(r->wname) + 1);
        cli_buf_put(&listing, r->ufile, strlen(r->ufile) + 1);
        cli_buf_put(&listing, r->uname, strlen(r->uname) + 1);
        cli_buf_put(&listing, &r->ndim, sizeof r->ndim);
        cli_buf_put(&listing, r->shape, (size_t)r->ndim * sizeof r->shape[0]);
    }
    mpi_job_same(&listing, "weight and update pairs");
    free(listing.p);
    mpi_job_collective(false);
    size_t slots = run->nrows ? run->nrows : 1;
    uint64_t *weight = cli_xcalloc(slots, sizeof *weight);
    int *owner = cli_xcalloc(slots, sizeof *owner);
    mine = cli_xcalloc(slots, sizeof *mine);
    for (size_t i = 0; i < run->nrows; i++) {
        weight[i] = 1;
        for (int d = 0; d < run->rows[i].ndim; d++)
            weight[i] *= run->rows[i].shape[d];
    }
    mpi_job_share(weight, run->nrows, owner);
    for (size_t i = 0; i < run->nrows; i++)
        mine[i] = owner[i] == mpi_job_rank();
    free(weight);
    free(owner);
#endif
    row_pool p = {.o = o, .mine = mine};
    pthread_mutex_init(&p.lock, NULL);
    size_t rows = 0; /* this process's */
    for (size_t i = 0; i < run->nrows; i++)
        rows += !mine || mine[i];
    size_t n = rows < (size_t)o->c.threads ? rows : (size_t)o->c.threads;
    pthread_t *tids = cli_xcalloc(n, sizeof *tids);
    size_t started = 0;
    while (started + 1 < n && pthread_create(&tids[started + 1], NULL, row_worker, &p) == 0)
        started++;
    row_worker(&p);
    for (size_t k = 1; k <= started; k++)
        pthread_join(tids[k], NULL);
    free(tids);
    pthread_mutex_destroy(&p.lock);
    cli_failure_check(&p.fail);
#ifdef FPSWAMP_MPI
    sw_mpi_gather_rows(run, mine);
#endif
    free(mine);
    for (size_t i = 0; i < run->nrows; i++) {
        sw_row *r = &run->rows[i];
        sw_row_merge(run, &run->total, r);
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(run->rows[k].wfile, r->wfile) == 0;
        run->nfiles += !seen;
    }
}

/* Checks the outputs before the work: no output replaces an input (each
 * protected as the walk opened it, in visit) or another output. */
static void guard_outputs(const opts *o)
{
    const char *outs[] = {o->c.json, o->c.plot};
    outfile_check(outs, sizeof outs / sizeof outs[0]);
}

static void write_outputs(const opts *o)
{
    const sw_run *run = &o->run;
    if (o->c.json) {
        outfile_json(o->c.json, sw_json(run));
    }
    if (o->c.plot)
        sw_plot(run, o->c.plot, o->c.plot_width, o->c.plot_height);
    if (!o->c.quiet && !cli_is_stdout(o->c.json)) {
        sw_text(run, stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    }
}

static void own_option(void *state, int key, char *const *v)
{
    opts *o = state;
    switch (key) {
    case OPT_LR:
        o->run.lr = cli_parse_positive("--lr", v[0], NULL);
        o->has_lr = true;
        break;
    case OPT_LR_SWEEP: parse_sweep(o, v[0]); break;
    case OPT_STEPS:
        o->run.steps = (int)cli_parse_int("--steps", v[0], 1, 1000000);
        o->steps_given = true;
        break;
    case OPT_WEIGHTS: o->weights = v[0]; break;
    case OPT_UPDATES: o->updates = v[0]; break;
    }
}

static const cli_tool tool = {
    .name = TOOL,
    .synopsis = synopsis,
    .intro = "PATH is a dump file or a directory of them in the dumper's layout: each weight/P "
             "pairs with update/P, or with grad/P when --lr or --lr-sweep is given.",
    .opts = options,
    .own = own_option,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
#ifdef FPSWAMP_MPI
    mpi_job_init(&argc, &argv);
#endif
    opts o = {0};
    o.run.steps = 1;
    cli_common_init(&o.c);
    o.c.seeds = 8;
    o.c.nformats = cli_parse_formats("--formats", DEFAULT_FORMATS, o.c.formats, CLI_MAX_FORMATS,
                                     NULL);
    cli_parse(&tool, &o.c, argc, argv, &o);
    o.run.seeds = o.c.seeds;
    o.run.nformats = o.c.nformats;
    memcpy(o.run.formats, o.c.formats, sizeof o.c.formats);
    bool has_lr = o.has_lr, steps_given = o.steps_given,
         seeds_given = cli_given(&o.c, CLI_SEEDS);
    int npaths = o.c.noperands;
    char **paths = o.c.operands;
    cli_need_zero("--formats", o.run.formats, o.run.nformats, "Kahan's compensation");
    bool two = o.weights || o.updates;
    if (two && !(o.weights && o.updates))
        cli_die(CLI_EXIT_USAGE, "options --weights and --updates go together");
    if (two && npaths)
        cli_die(CLI_EXIT_USAGE, "give either PATH... or --weights and --updates, not both");
    if (!two && !npaths) {
        cli_common_free(&o.c);
        return cli_usage_error(&tool);
    }
    o.run.grad = has_lr || o.run.sweep_n > 0;
    o.run.main_report = has_lr || o.run.sweep_n == 0;
    if (!o.run.main_report && (steps_given || seeds_given))
        cli_die(CLI_EXIT_USAGE, "options --steps and --seeds need --lr when --lr-sweep is given");

#ifdef FPSWAMP_MPI
    if (o.c.plot && mpi_job_rank() == 0) /* rank 0 alone plots */
#else
    if (o.c.plot)
#endif
        sw_plot_check(o.c.plot);

    entries ws = {0}, us = {0};
    if (two) {
        walk(o.weights, &ws);
        walk(o.updates, &us);
        pair_names(&o, &ws, &us);
    } else {
        for (int i = 0; i < npaths; i++)
            walk(paths[i], &ws);
        pair_layout(&o, &ws);
    }
    free_entries(&ws);
    free_entries(&us);
    guard_outputs(&o);
#ifdef FPSWAMP_MPI
    if (mpi_job_rank() != 0) { /* rank 0 writes everything */
        o.c.quiet = true;
        o.c.json = o.c.plot = NULL;
    }
#endif
    analyse(&o);
    write_outputs(&o);

    for (size_t i = 0; i < o.run.nrows; i++)
        sw_row_free(&o.run, &o.run.rows[i]);
    sw_row_free(&o.run, &o.run.total);
    free(o.run.rows);
    free(o.run.sweep_lr);
    cli_common_free(&o.c);
    return 0;
}
