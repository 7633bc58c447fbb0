/* fpround: the rounding error of low-precision formats on the tensors of a
 * dump, element by element, and the error of sums and dot products
 * accumulated in them, against exact values (MPFR). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpfr.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fpround.h"
#include "outfile.h"
#include "scan.h"

enum { OPT_SUM = CLI_OWN, OPT_DOT };

static const cli_opt options[] = {
    {.key = CLI_FORMATS, .help = "formats to round into (default fp16,bf16,e4m3,e5m2)"},
    {.key = CLI_ROUND, .value = "LIST",
     .help = "rounding modes: rne rna rtz rup rdn rod sr (default rne; rne,sr with --sum or "
             "--dot)"},
    {.key = CLI_SEED},
    {.key = CLI_SEEDS, .help = "--sum, --dot: stochastic sums with K seeds (default 16)"},
    {.key = OPT_SUM, .name = "--sum",
     .help = "accumulate each tensor in each format: sequential, pairwise, Kahan, against the "
             "exact sum"},
    {.key = OPT_DOT, .name = "--dot", .value = "A B", .nvalues = 2,
     .help = "the dot product of the tensors named A and B"},
    {.key = CLI_MATCH},
    {.key = CLI_DTYPE},
    {.key = CLI_SHAPE},
    {.key = CLI_BIG_ENDIAN},
    {.key = CLI_TOP},
    {.key = CLI_ALL, .help = "after the summary, every tensor: its errors, or its sums"},
    {.key = CLI_JSON},
    {.key = CLI_PLOT, .help = "the error histogram, or the running sums, .png or .svg"},
    {.key = CLI_PLOT_SIZE},
    {.key = CLI_THREADS, .help = "threads rounding the elements (default: all its CPUs)"},
    {.key = CLI_QUIET},
    {0},
};

static const char *const synopsis[] = {
    "--formats --round --seed --seeds --sum|--dot --match --dtype --shape --big-endian --top "
    "--all --json --plot --plot-size --threads --quiet PATH...",
    NULL,
};

#define CHUNK ((size_t)1 << 20) /* elements read at once */
#define DEFAULT_FORMATS "fp16,bf16,e4m3,e5m2"

typedef struct opts {
    fr_run run;
    cli_common c;
    bool sum;
    const char *dot_a, *dot_b;
} opts;

const char *fr_method_name(fr_method m)
{
    static const char *const names[FR_NMETHODS] = {
        "sequential", "pairwise", "kahan", "fma", "fp32acc_exact", "fp32acc_rounded"};
    return names[m];
}

bool fr_fp32_holds(const fpk_format *f)
{
    return f->man_bits <= fpk_fp32.man_bits && f->emin - f->man_bits >= fpk_fp32.emin - fpk_fp32.man_bits &&
           f->emax <= fpk_fp32.emax;
}

static void fill_row(fr_row *r, const scan *s, const scan_tensor *t)
{
    memset(r, 0, sizeof *r);
    r->name = cli_strf("%s", t->t.name);
    r->file = cli_strf("%s", s->files.v[t->file]);
    r->dtype = t->t.dtype;
    r->ndim = t->t.ndim;
    memcpy(r->shape, t->t.shape, sizeof r->shape);
    r->count = t->t.count;
    r->step = s->steps[t->file];
}

/* The rows: every tensor that matches, or for --dot the k-th tensor named A
 * with the k-th named B, in the order of the paths.  Returns each row's
 * tensor's index in S (for a dot, A's at 2k and B's at 2k + 1). */
static size_t *list_rows(opts *o, const scan *s)
{
    fr_run *run = &o->run;
    size_t cap = s->ntensors ? s->ntensors : 1, na = 0, nb = 0;
    size_t *w = cli_xcalloc(2 * cap, sizeof *w), *wb = cli_xcalloc(cap, sizeof *wb);
    run->rows = cli_xcalloc(cap, sizeof *run->rows);
    run->nfiles = 0;
    for (size_t k = 0; k < s->ntensors; k++) {
        const scan_tensor *t = &s->tensors[k];
        bool is_a, is_b = false;
        if (run->kind == FR_DOT) {
            is_a = strcmp(t->t.name, o->dot_a) == 0;
            is_b = strcmp(t->t.name, o->dot_b) == 0;
        } else {
            is_a = !o->c.has_match || regexec(&o->c.match, t->t.name, 0, NULL, 0) == 0;
        }
        if (is_a)
            w[na++] = k;
        if (is_b)
            wb[nb++] = k;
    }
    /* the files that hold a row's tensor */
    bool *used = cli_xcalloc(s->files.n ? s->files.n : 1, sizeof *used);
    for (size_t k = 0; k < na; k++)
        used[s->tensors[w[k]].file] = true;
    for (size_t k = 0; k < nb; k++)
        used[s->tensors[wb[k]].file] = true;
    for (size_t f = 0; f < s->files.n; f++)
        run->nfiles += used[f];
    free(used);
    run->nrows = na;
    for (size_t k = 0; k < na; k++)
        fill_row(&run->rows[k], s, &s->tensors[w[k]]);
    if (run->kind == FR_DOT) {
        if (!na || !nb)
            cli_die(CLI_EXIT_USAGE, "--dot: no tensor named \"%s\" among the %zu found",
                    na ? o->dot_b : o->dot_a, s->ntensors);
        if (na != nb)
            cli_die(CLI_EXIT_USAGE, "--dot: %zu tensors named \"%s\" but %zu named \"%s\"", na,
                    o->dot_a, nb, o->dot_b);
        /* w[2k] is A's and w[2k+1] B's. */
        size_t *pairs = cli_xcalloc(2 * na, sizeof *pairs);
        for (size_t k = 0; k < na; k++) {
            fr_row *r = &run->rows[k];
            const scan_tensor *b = &s->tensors[wb[k]];
            if (r->count != b->t.count)
                cli_die(CLI_EXIT_USAGE,
                        "--dot: %s: %s has %" PRIu64 " elements but %s: %s has %" PRIu64, r->file,
                        r->name, r->count, s->files.v[b->file], o->dot_b, b->t.count);
            pairs[2 * k] = w[k];
            pairs[2 * k + 1] = wb[k];
            r->name_b = cli_strf("%s", b->t.name);
            if (strcmp(s->files.v[b->file], r->file) != 0) {
                char *f = cli_strf("%s %s", r->file, s->files.v[b->file]);
                free(r->file);
                r->file = f;
            }
        }
        free(w);
        w = pairs;
    } else if (!na) {
        scan_none(s, o->c.has_match);
    }
    free(wb);
    return w;
}

/* Reads all of tensor T into new memory (NULL, the run failed, on a read
 * error). */
static double *read_all(scan_worker *w, const scan_tensor *t)
{
    uint64_t count = t->t.count;
    if (count > SIZE_MAX / sizeof(double)) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s: tensor too large to hold in memory",
                 scan_pool_of(w)->s->files.v[t->file]);
        scan_fail(w, CLI_EXIT_INTERNAL, msg);
        return NULL;
    }
    double *x = cli_xcalloc((size_t)count, sizeof *x);
    for (uint64_t first = 0; first < count;) {
        size_t n = count - first < CHUNK ? (size_t)(count - first) : CHUNK;
        if (!scan_read(w, t, first, n, x + first)) {
            free(x);
            return NULL;
        }
        first += n;
    }
    return x;
}

/* What every job needs. */
typedef struct analysis {
    opts *o;
    const scan *s;
    const size_t *w; /* list_rows' indices */
} analysis;

/* Row I: its errors (FR_ERROR), read in chunks, or its sums or dot
 * product, read whole. */
static bool row_job(scan_worker *w, size_t i, void *arg)
{
    const analysis *a = arg;
    fr_run *run = &a->o->run;
    fr_row *r = &run->rows[i];
    if (run->kind == FR_ERROR) {
        const scan_tensor *t = &a->s->tensors[a->w[i]];
        double *x = scan_scratch(w, CHUNK * (sizeof *x + sizeof(fpk_bits)));
        void *q = x + CHUNK;
        for (uint64_t first = 0; first < r->count;) {
            size_t n = r->count - first < CHUNK ? (size_t)(r->count - first) : CHUNK;
            if (!scan_read(w, t, first, n, x))
                return false;
            fr_measure(run, r, x, n, first, q, scan_inner(w));
            first += n;
        }
        return true;
    }
    bool dot = run->kind == FR_DOT;
    double *x = read_all(w, &a->s->tensors[dot ? a->w[2 * i] : a->w[i]]);
    double *y = dot && x ? read_all(w, &a->s->tensors[a->w[2 * i + 1]]) : NULL;
    if (!x || (dot && !y)) {
        free(x);
        return false;
    }
    fr_count_kinds(r, x, y, (size_t)r->count);
    if (i == 0 && a->o->c.plot)
        fr_plan_plot(run, x, y);
    fr_accumulate(run, i, x, y);
    free(x);
    free(y);
    return true;
}

/* INTO += row R: its counts, and its errors (FR_ERROR). */
static void add_row(const fr_run *run, fr_row *into, const fr_row *r)
{
    if (run->kind == FR_ERROR)
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < run->nmodes; m++)
                fr_merge_error(&into->err[j][m], &r->err[j][m]);
    into->count += r->count;
    into->zeros += r->zeros;
    into->nonfinite += r->nonfinite;
}

/* Every row, the rows shared out among the threads (each row's results
 * are its own), then the total and each step's rows together, summed in
 * the rows' order. */
static void analyse(opts *o, const scan *s)
{
    fr_run *run = &o->run;
    analysis a = {.o = o, .s = s, .w = list_rows(o, s)};
    scan_pool pool = {.s = s, .njobs = run->nrows, .threads = o->c.threads, .job = row_job,
                      .arg = &a};
    scan_run(&pool);
    free((size_t *)a.w);
    scan_step *steps = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *steps);
    for (size_t i = 0; i < run->nrows; i++)
        steps[i] = run->rows[i].step;
    summary_steps_init(&run->row_steps, steps, run->nrows);
    free(steps);
    run->by_step = cli_xcalloc(run->row_steps.n ? run->row_steps.n : 1, sizeof *run->by_step);
    for (size_t i = 0; i < run->nrows; i++) {
        const fr_row *r = &run->rows[i];
        add_row(run, &run->total, r);
        size_t k = run->row_steps.of_row[i];
        if (k != SIZE_MAX) {
            add_row(run, &run->by_step[k], r);
            run->by_step[k].step = r->step;
        }
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
    const fr_run *run = &o->run;
    if (o->c.json) {
        outfile_json(o->c.json, fr_json(run));
    }
    if (o->c.plot)
        fr_plot(run, o->c.plot, o->c.plot_width, o->c.plot_height);
    if (!o->c.quiet && !cli_is_stdout(o->c.json)) {
        fr_text(run, stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    }
}

static void free_run(fr_run *run)
{
    for (size_t i = 0; i < run->nrows; i++) {
        fr_row *r = &run->rows[i];
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < FR_NMETHODS; m++)
                for (int k = 0; k < FPK_ROUND_COUNT; k++) {
                    free(r->fmt[j].acc[m][k].sum);
                    free(r->fmt[j].acc[m][k].err);
                    free(r->fmt[j].acc[m][k].rel);
                }
        free(r->name), free(r->file), free(r->name_b);
    }
    free(run->rows);
    for (int s = 0; s < run->nseries; s++)
        free(run->series[s].title), free(run->series[s].y);
    free(run->series);
    free(run->steps);
    free(run->exact_running);
    free(run->by_step);
    summary_steps_free(&run->row_steps);
}

static void own_option(void *state, int key, char *const *v)
{
    opts *o = state;
    if (key == OPT_SUM) {
        o->sum = true;
    } else if (key == OPT_DOT) {
        o->dot_a = v[0];
        o->dot_b = v[1];
    }
}

static const cli_tool tool = {
    .name = "fpround",
    .synopsis = synopsis,
    .intro = CLI_PATHS_INTRO,
    .opts = options,
    .own = own_option,
    .max_rounds = FPK_ROUND_COUNT,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    opts o = {0};
    fr_run *run = &o.run;
    cli_common_init(&o.c);
    o.c.seeds = 16;
    o.c.nformats = cli_parse_formats("--formats", DEFAULT_FORMATS, o.c.formats, CLI_MAX_FORMATS,
                                     NULL);
    cli_parse(&tool, &o.c, argc, argv, &o);
    if (!o.c.noperands) {
        cli_common_free(&o.c);
        return cli_usage_error(&tool);
    }
    if (o.sum && o.dot_a)
        cli_die(CLI_EXIT_USAGE, "options --sum and --dot exclude each other");
    if (o.dot_a && o.c.has_match)
        cli_die(CLI_EXIT_USAGE, "option --match does not apply to --dot, which names its tensors");
    run->kind = o.sum ? FR_SUM : o.dot_a ? FR_DOT : FR_ERROR;
    if (cli_given(&o.c, CLI_SEEDS) && run->kind == FR_ERROR)
        cli_die(CLI_EXIT_USAGE, "option --seeds applies to --sum and --dot only");
    run->nformats = o.c.nformats;
    memcpy(run->formats, o.c.formats, sizeof o.c.formats);
    run->seed = o.c.seed;
    run->top = o.c.top;
    run->all = o.c.all;
    run->seeds = o.c.seeds;
    if (run->kind != FR_ERROR && !cli_given(&o.c, CLI_ROUND)) {
        o.c.rounds[0] = FPK_RNE;
        o.c.rounds[1] = FPK_SR;
        o.c.nrounds = 2;
    }
    run->nmodes = o.c.nrounds;
    memcpy(run->modes, o.c.rounds, sizeof o.c.rounds);
    if (run->kind != FR_ERROR)
        cli_need_zero(o.sum ? "--sum" : "--dot", run->formats, run->nformats, "a sum");
    if (o.c.plot)
        gp_check(o.c.plot, "fpround.gp");

    scan s;
    scan_open(&s, o.c.operands, o.c.noperands, o.c.has_raw ? &o.c.raw : NULL);
    guard_outputs(&o);
    analyse(&o, &s);
    write_outputs(&o);

    free_run(run);
    scan_free(&s);
    cli_common_free(&o.c);
    return 0;
}
