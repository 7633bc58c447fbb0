/* fpswamp: how much of each weight update w + dw survives when the weights
 * are held in FP16, BF16 or FP8: with round to nearest even, stochastic
 * rounding, Kahan-compensated weights, and FP32 master weights; and when
 * they are stored under a block-scaled recipe (NVFP4, MXFP8, ...). */
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
#include "scan.h"
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
    {.key = CLI_RECIPE, .value = "RECIPE",
     .help = "also weights stored under this scaled-quantisation recipe, a preset (nvfp4, "
             "mxfp8-e4m3, ...) or ELEM/SCALE/RULE/ROWSxCOLS (fpkit-recipes(7))"},
    {.key = CLI_RECIPES, .help = "also weights stored under each of these recipes, "
                                 "comma-separated"},
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
    {.key = CLI_TOP},
    {.key = CLI_ALL, .help = "after the summary, the full tables of every tensor"},
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
    "--formats --recipe --recipes --lr --lr-sweep --steps --seeds --match --top --all --json "
    "--plot --plot-size --threads --quiet PATH...",
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

static bool matches(const opts *o, const char *name)
{
    return !o->c.has_match || regexec(&o->c.match, name, 0, NULL, 0) == 0;
}

/* A row for parameter P: weight W and update U (indices in S), whose shapes
 * must agree. */
static void add_row(opts *o, const scan *s, size_t *cap, const char *p, size_t w, size_t u)
{
    sw_run *run = &o->run;
    const scan_tensor *tw = &s->tensors[w], *tu = &s->tensors[u];
    const char *wfile = s->files.v[tw->file], *ufile = s->files.v[tu->file];
    if (tw->t.ndim != tu->t.ndim ||
        memcmp(tw->t.shape, tu->t.shape, (size_t)tw->t.ndim * sizeof tw->t.shape[0])) {
        char a[512], b[512];
        cli_shape_text(a, sizeof a, tw->t.ndim, tw->t.shape);
        cli_shape_text(b, sizeof b, tu->t.ndim, tu->t.shape);
        cli_die(CLI_EXIT_USAGE, "%s: %s has shape %s but %s (%s) has shape %s", wfile,
                tw->t.name, a, tu->t.name, ufile, b);
    }
    if (run->nrows == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        if (!(run->rows = realloc(run->rows, *cap * sizeof *run->rows)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    sw_row *r = &run->rows[run->nrows++];
    memset(r, 0, sizeof *r);
    r->name = cli_strf("%s", p);
    r->wfile = cli_strf("%s", wfile);
    r->ufile = cli_strf("%s", ufile);
    r->wname = cli_strf("%s", tw->t.name);
    r->uname = cli_strf("%s", tu->t.name);
    r->wt = w;
    r->ut = u;
    r->step = s->steps[tw->file];
    r->ndim = tw->t.ndim;
    memcpy(r->shape, tw->t.shape, sizeof r->shape);
    sw_row_alloc(run, r);
}

/* The dumper's layout: in each file, weight/P with update/P (or grad/P). */
static void pair_layout(opts *o, const scan *s)
{
    const char *upre = o->run.grad ? "grad/" : "update/";
    size_t ulen = strlen(upre), cap = 0;
    bool any = false;
    for (size_t i = 0; i < s->ntensors; i++) {
        const scan_tensor *e = &s->tensors[i];
        const char *name = e->t.name;
        bool is_w = strncmp(name, "weight/", 7) == 0, is_u = strncmp(name, upre, ulen) == 0;
        const char *p = is_w ? name + 7 : is_u ? name + ulen : NULL;
        any = any || p;
        if (!p || !matches(o, p))
            continue;
        size_t other = SIZE_MAX;
        for (size_t k = 0; k < s->ntensors && other == SIZE_MAX; k++) {
            const char *n = s->tensors[k].t.name;
            if (s->tensors[k].file == e->file &&
                strncmp(n, is_w ? upre : "weight/", is_w ? ulen : 7) == 0 &&
                strcmp(n + (is_w ? ulen : 7), p) == 0)
                other = k;
        }
        if (other == SIZE_MAX)
            cli_die(CLI_EXIT_USAGE, "%s: %s has no %s%s to pair with", s->files.v[e->file], name,
                    is_w ? upre : "weight/", p);
        if (is_w)
            add_row(o, s, &cap, p, i, other);
    }
    if (!o->run.nrows)
        cli_die(CLI_EXIT_USAGE, "no weight/P and %sP pairs %s", upre,
                any ? "match --match" : "found in the dumps");
}

/* The tensors of S under path K: [*FIRST, *END) of its tensors. */
static void path_tensors(const scan *s, int k, size_t *first, size_t *end)
{
    size_t f0 = s->path_files[k], f1 = s->path_files[k + 1];
    *first = 0;
    while (*first < s->ntensors && s->tensors[*first].file < f0)
        ++*first;
    *end = *first;
    while (*end < s->ntensors && s->tensors[*end].file < f1)
        ++*end;
}

/* --weights and --updates, the paths 0 and 1 of S: every tensor of the
 * weights pairs with the tensor of the same name in the updates. */
static void pair_names(opts *o, const scan *s)
{
    size_t cap = 0;
    const char *paths[2] = {o->weights, o->updates};
    size_t first[2], end[2];
    for (int k = 0; k < 2; k++)
        path_tensors(s, k, &first[k], &end[k]);
    for (int side = 0; side < 2; side++)
        for (size_t i = first[side]; i < end[side]; i++) {
            const scan_tensor *e = &s->tensors[i];
            if (!matches(o, e->t.name))
                continue;
            size_t other = SIZE_MAX;
            for (size_t k = first[side]; k < end[side]; k++)
                if (k != i && strcmp(s->tensors[k].t.name, e->t.name) == 0)
                    cli_die(CLI_EXIT_USAGE, "%s: tensor %s is found twice (%s and %s)",
                            paths[side], e->t.name, s->files.v[e->file],
                            s->files.v[s->tensors[k].file]);
            for (size_t k = first[!side]; k < end[!side] && other == SIZE_MAX; k++)
                if (strcmp(s->tensors[k].t.name, e->t.name) == 0)
                    other = k;
            if (other == SIZE_MAX)
                cli_die(CLI_EXIT_USAGE, "%s: tensor %s has no tensor of that name in %s",
                        s->files.v[e->file], e->t.name, paths[!side]);
            if (side == 0)
                add_row(o, s, &cap, e->t.name, i, other);
        }
    if (!o->run.nrows)
        cli_die(CLI_EXIT_USAGE, "no tensors %s", o->c.has_match ? "match --match" : "found");
}

/* Row I: its weights and updates read in step, a chunk at a time, and
 * computed (each row's stochastic rounding is seeded by its index). */
static bool row_job(scan_worker *w, size_t i, void *arg)
{
    const opts *o = arg;
    const sw_run *run = &o->run;
    const scan *s = scan_pool_of(w)->s;
    sw_row *r = &run->rows[i];
    const scan_tensor *tw = &s->tensors[r->wt], *tu = &s->tensors[r->ut];
    /* a recipe stores the whole tensor: read it whole */
    size_t n = (size_t)tw->t.count, len = run->nrecipes ? n : CHUNK;
    double *all = run->nrecipes ? cli_xcalloc(2 * (n ? n : 1), sizeof *all) : NULL;
    double *wb = all ? all : scan_scratch(w, 2 * CHUNK * sizeof *wb), *ub = wb + len;
    sw_calc *x = sw_calc_new(run);
    sw_calc_row(x, i);
    bool ok = true;
    for (uint64_t first = 0; ok && first < tw->t.count;) {
        size_t k = tw->t.count - first < CHUNK ? (size_t)(tw->t.count - first) : CHUNK;
        size_t at = all ? (size_t)first : 0;
        ok = scan_read(w, tw, first, k, wb + at) && scan_read(w, tu, first, k, ub + at);
        for (size_t e = 0; ok && e < k; e++)
            sw_calc_add(x, run, r, wb[at + e], ub[at + e]);
        first += k;
    }
    if (ok && all) {
        size_t cols = r->ndim ? (size_t)r->shape[r->ndim - 1] : 1;
        fpk_error err;
        if (!sw_recipe_row(x, run, r, wb, ub, cols ? n / cols : 0, cols, &err)) {
            char *msg = cli_strf("%s: %s: %s", r->wfile, r->wname, err.msg);
            ok = scan_fail(w, cli_error_status(&err), msg);
            free(msg);
        }
    }
    sw_calc_free(x);
    free(all);
    return ok;
}

/* Reads every row's weights and updates and computes, a row per thread at
 * a time (each row's stochastic rounding is seeded by its index), then
 * sums the rows into the total in their order. */
static void analyse(opts *o, const scan *s)
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
    scan_pool pool = {.s = s, .njobs = run->nrows, .mine = mine, .threads = o->c.threads,
                      .job = row_job, .arg = o};
    scan_run(&pool);
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

/* Checks the outputs before the work: no output replaces an input (the
 * scan protects those) or another output. */
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
    o.run.top = o.c.top;
    o.run.all = o.c.all;
    o.run.nformats = o.c.nformats;
    memcpy(o.run.formats, o.c.formats, sizeof o.c.formats);
    o.run.recipes = o.c.recipes;
    o.run.recipe_names = o.c.recipe_names;
    o.run.nrecipes = o.c.nrecipes;
    sw_recipe_check(&o.run);
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

    scan s;
    if (two) {
        char *both[2] = {(char *)o.weights, (char *)o.updates};
        scan_open(&s, both, 2, NULL);
        pair_names(&o, &s);
    } else {
        scan_open(&s, paths, npaths, NULL);
        pair_layout(&o, &s);
    }
    guard_outputs(&o);
#ifdef FPSWAMP_MPI
    if (mpi_job_rank() != 0) { /* rank 0 writes everything */
        o.c.quiet = true;
        o.c.json = o.c.plot = NULL;
    }
#endif
    analyse(&o, &s);
    write_outputs(&o);

    for (size_t i = 0; i < o.run.nrows; i++)
        sw_row_free(&o.run, &o.run.rows[i]);
    sw_row_free(&o.run, &o.run.total);
    free(o.run.rows);
    free(o.run.sweep_lr);
    scan_free(&s);
    cli_common_free(&o.c);
    return 0;
}
