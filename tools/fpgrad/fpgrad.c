/* fpgrad: what FP16, BF16 and FP8 would do to the tensors of a dump
 * (gradients, activation gradients, weights): how much would vanish, go
 * subnormal or overflow, and what scaling rescues them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gnuplot.h"
#include "grad.h"
#include "grad_part.h"
#include "outfile.h"
#ifdef FPGRAD_MPI
#include "grad_mpi.h"
#include "mpi_job.h"
#endif

/* The name in --version and in messages that send the user to --help. */
#ifdef FPGRAD_MPI
#define TOOL "fpgrad-mpi"
#else
#define TOOL "fpgrad"
#endif

enum {
    OPT_SCALE = CLI_OWN,
    OPT_LOGY,
    OPT_REPORT,
    OPT_NO_SQNR,
    OPT_EMIT_PARTIAL,
    OPT_MERGE,
    OPT_SHARDS,
};

static const cli_opt options[] = {
    {.key = CLI_FORMATS,
     .help = "formats to round into (default fp16,bf16,e4m3,e5m2); mxfp8, mxfp6, mxfp4: OCP MX "
             "blocks of 32 with e4m3, e3m2, e2m1"},
    {.key = OPT_SCALE, .name = "--scale", .value = "S|auto",
     .help = "multiply by S before rounding (default 1); auto: recommend the loss scale and the "
             "FP8 scales, and show what remains"},
    {.key = CLI_MARGIN},
    {.key = CLI_ROUND},
    {.key = CLI_MATCH},
    {.key = CLI_DTYPE},
    {.key = CLI_SHAPE},
    {.key = CLI_BIG_ENDIAN},
    {.key = CLI_JSON},
    {.key = CLI_CSV},
    {.key = CLI_PLOT, .help = "the histogram of log2|x| of all tensors, .png or .svg"},
    {.key = CLI_PLOT_SIZE},
    {.key = OPT_LOGY, .name = "--logy", .help = "counts on a log scale"},
    {.key = OPT_REPORT, .name = "--report", .value = "DIR",
     .help = "an HTML report in DIR: tables, plots, the JSON"},
    {.key = OPT_NO_SQNR, .name = "--no-sqnr",
     .help = "no SQNR, and no second read of each tensor for it (but for MX formats, whose "
             "counts need it)"},
    {.key = OPT_EMIT_PARTIAL, .name = "--emit-partial", .value = "FILE",
     .help = "also write the results as a partial file, for --merge"},
    {.key = OPT_MERGE, .name = "--merge",
     .help = "the paths are partial files of disjoint dumps: report them as one run over all "
             "their files would"},
    {.key = OPT_SHARDS, .name = "--shards",
     .help = "a tensor split across files named ...-00003-of-00008... or ...rank3...: one row, "
             "its shards together"},
#ifdef FPGRAD_MPI
    {.key = CLI_THREADS,
     .help = "threads: tensors read at once, and each tensor's share (default: this rank's "
             "share of its machine's CPUs)"},
#else
    {.key = CLI_THREADS,
     .help = "threads: tensors read at once, and each tensor's share (default: all its CPUs)"},
#endif
    {.key = CLI_QUIET, .help = "no table on standard output, no progress"},
    {0},
};

static const char *const synopsis[] = {
    "--formats --scale --margin --round --match --dtype --shape --big-endian --json --csv --plot "
    "--plot-size --logy --report --no-sqnr --threads --quiet --shards --emit-partial PATH...",
    "!--merge --shards --json --csv --plot --plot-size --logy --report --quiet PARTIAL...",
    NULL,
};

/* The options that say how to analyse, which --merge refuses: the
 * partials hold how they were analysed. */
static const int analysis_options[] = {CLI_FORMATS, OPT_SCALE, CLI_MARGIN, CLI_ROUND, CLI_MATCH,
                                       CLI_DTYPE, CLI_SHAPE, CLI_BIG_ENDIAN, OPT_NO_SQNR};

#define CHUNK ((uint64_t)1 << 22) /* elements added at once, between progress updates */
#define DEFAULT_FORMATS "fp16,bf16,e4m3,e5m2"

typedef struct opts {
    grad_run run;
    cli_common c;
    bool scale_given, no_sqnr_given;
    const char *report;
    const char *emit;     /* --emit-partial */
    grad_sums *emit_err;  /* its total's exact error sums */
    bool merge;           /* --merge: the paths are partial files */
    bool shards;          /* --shards */
    grad_plot_opts plot_opts;
} opts;

/* Where each row's tensor is. */
typedef struct job {
    size_t file, tensor;
} job;

/* The worker pool of one pass over the tensors. */
typedef struct pool {
    const opts *o;
    grad_run *run;
    const cli_files *files;
    const job *jobs;
    const bool *mine;     /* the rows this process analyses (NULL: all) */
    int pass;             /* 1: the statistics; 2: after the auto scales */
    fpk_stats *total;     /* pass 1: merged into */
    grad_sums *err_total; /* pass 1: every format's (FPK_STATS_MAX_FORMATS) */
    fpk_format_counts mx_total[FPK_STATS_MAX_FORMATS]; /* pass 1: the MX formats' */
    pthread_mutex_t lock; /* guards next, the totals, run->total, last */
    size_t next;
    int inner; /* threads per tensor */
    cli_failure fail;
    bool progress;
    atomic_uint_fast64_t done;
    uint64_t todo;
    struct timespec last;
} pool;

/* S is "auto", "2^K", or a number read exactly as the nearest double. */
static void parse_scale(opts *o, const char *s)
{
    if (strcmp(s, "auto") == 0) {
        o->run.autoscale = true;
        o->run.scale = 1;
        return;
    }
    o->run.autoscale = false;
    if (s[0] == '2' && s[1] == '^') {
        o->run.scale = ldexp(1.0, (int)cli_parse_int("--scale 2^K", s + 2, -1074, 1023));
        return;
    }
    o->run.scale = cli_parse_positive("--scale", s, "a number, 2^K or auto");
}

static int open_dump(const opts *o, const char *path, fpk_dump **d, fpk_error *err)
{
    return fpk_dump_open(path, o->c.has_raw ? &o->c.raw : NULL, d, err);
}

/* Reads every header, keeping the tensors that match as rows. */
static job *list_tensors(opts *o, const cli_files *fs, uint64_t *elements)
{
    grad_run *run = &o->run;
    size_t cap = 16, seen = 0;
    job *jobs = cli_xcalloc(cap, sizeof *jobs);
    run->rows = cli_xcalloc(cap, sizeof *run->rows);
    run->nrows = run->nfiles = 0;
    *elements = 0;
    for (size_t i = 0; i < fs->n; i++) {
        fpk_dump *d;
        fpk_error err;
        if (open_dump(o, fs->v[i], &d, &err) != FPK_OK)
            cli_die_error(&err);
        size_t before = run->nrows;
        for (size_t t = 0; t < fpk_dump_ntensors(d); t++) {
            const fpk_tensor *ten = fpk_dump_tensor(d, t);
            seen++;
            if (o->c.has_match && regexec(&o->c.match, ten->name, 0, NULL, 0) != 0)
                continue;
            if (run->nrows == cap) {
                cap *= 2;
                jobs = realloc(jobs, cap * sizeof *jobs);
                run->rows = realloc(run->rows, cap * sizeof *run->rows);
                if (!jobs || !run->rows)
                    cli_die(CLI_EXIT_INTERNAL, "out of memory");
            }
            grad_row *r = &run->rows[run->nrows];
            memset(r, 0, sizeof *r);
            r->name = cli_strf("%s", ten->name);
            r->file = cli_strf("%s", fs->v[i]);
            r->dtype = ten->dtype;
            r->ndim = ten->ndim;
            memcpy(r->shape, ten->shape, sizeof r->shape);
            r->count = ten->count;
            jobs[run->nrows++] = (job){i, t};
            *elements += ten->count;
        }
        run->nfiles += run->nrows > before;
        fpk_dump_close(d);
    }
    if (!run->nrows) {
        if (!seen)
            cli_die(CLI_EXIT_USAGE, "no tensors found: the paths hold no .npy or safetensors "
                                    "tensors");
        cli_die(CLI_EXIT_USAGE, "no tensors to analyse: --match matched none of the %zu found",
                seen);
    }
    return jobs;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

/* Counts N more elements done, and redraws the progress line at most five
 * times a second. */
static void progress(pool *p, uint64_t n)
{
    uint64_t done = atomic_fetch_add(&p->done, n) + n;
    if (!p->progress)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&p->lock);
    if (seconds_between(&p->last, &now) >= 0.2) {
        p->last = now;
        fprintf(stderr, "\r%s: pass %d of %d: %3d%%", cli_prog(), p->pass,
                p->run->autoscale ? 2 : 1,
                (int)(p->todo ? 100 * (double)done / (double)p->todo : 100));
        fflush(stderr);
    }
    pthread_mutex_unlock(&p->lock);
}

/* S[0..N-1]'s stochastic rounding starts at counter BASE, so that a
 * shard's elements take their counters in the whole tensor. */
static void sr_start_at(fpk_stats *s, int n, uint64_t base)
{
    for (int k = 0; k < n; k++)
        s[k].sr_index = base;
}

static void stats_at(fpk_stats *s, const fpk_format *const *formats, int n, int log2,
                     fpk_round mode)
{
    fpk_ctx c = fpk_ctx_default();
    c.round = mode;
    fpk_stats_init(s, formats, n, ldexp(1.0, log2), &c);
}

/* Reads tensor T of D in chunks into each of STATS[0..NS-1] (one read
 * for all, on the pool's threads per tensor); false (and the pool failed)
 * on an error. */
static bool feed(pool *p, fpk_dump *d, size_t t, uint64_t count, fpk_stats *stats, int ns)
{
    for (uint64_t first = 0; first < count;) {
        uint64_t n = count - first < CHUNK ? count - first : CHUNK;
        fpk_error err;
        if (fpk_stats_add_tensor(stats, ns, d, t, first, n, p->inner, &err) != FPK_OK) {
            cli_failure_set(&p->fail, cli_error_status(&err), err.msg);
            return false;
        }
        first += n;
        progress(p, n);
        if (atomic_load(&p->fail.failed))
            return false;
    }
    return true;
}

#define PIECE ((size_t)1 << 16) /* elements of the errors' pieces at most */
#define ONCE ((size_t)1 << 18)  /* elements of a float32 tensor read at once when one
                                   read serves the statistics and the errors */

/* One thread's share of a tensor's errors: the pieces K, K + STEP,
 * K + 2 STEP, ... of the tensor, as grad_quant_next cuts it, with its own
 * counts and sums (exact, so the shares add up to the same totals in any
 * grouping). */
typedef struct share {
    pool *p;
    fpk_dump *d;
    size_t tensor;
    int k, step;
    grad_quant q;
    fpk_format_counts mx[FPK_STATS_MAX_FORMATS];
    grad_sums *sums; /* FPK_STATS_MAX_FORMATS */
    double *x;       /* PIECE elements of scratch, and */
    float *x32, *y;
    bool ok;
    bool errors;   /* the errors too, or the statistics alone */
    fpk_stats *st; /* a read serving both: the statistics of the share's chunks, */
    atomic_size_t *next_chunk; /* and the chunk no share has taken yet */
    /* in a chunk already read (or viewed): its elements from FIRST on,
     * cut into NPIECES pieces at CUT[0..NPIECES] */
    const float *buf;
    uint64_t first;
    const size_t *cut;
    size_t npieces;
} share;

/* The elements of tensor I of D, at most MAX (buffers sized for a whole
 * small tensor, not for the largest piece). */
static size_t at_most(const fpk_dump *d, size_t i, size_t max)
{
    uint64_t count = fpk_dump_tensor(d, i)->count;
    return count < max ? (size_t)(count ? count : 1) : max;
}

static share *shares_new(pool *p, fpk_dump *d, size_t i, int nt)
{
    share *sh = cli_xcalloc((size_t)nt, sizeof *sh);
    size_t piece = at_most(d, p->jobs[i].tensor, PIECE);
    for (int k = 0; k < nt; k++) {
        sh[k] = (share){.p = p, .d = d, .tensor = p->jobs[i].tensor, .k = k, .step = nt,
                        .ok = true};
        grad_quant_init(&sh[k].q, p->run, fpk_dump_tensor(d, sh[k].tensor));
        sh[k].q.sr_base = p->run->rows[i].sr_base;
        sh[k].sums = cli_xcalloc(FPK_STATS_MAX_FORMATS, sizeof *sh[k].sums);
        sh[k].x = cli_xcalloc(piece, sizeof *sh[k].x);
        sh[k].x32 = cli_xcalloc_pages(piece, sizeof *sh[k].x32);
        sh[k].y = cli_xcalloc(piece, sizeof *sh[k].y);
    }
    return sh;
}

static void shares_free(share *sh, int nt)
{
    for (int k = 0; k < nt; k++)
        free(sh[k].sums), free(sh[k].x), free(sh[k].x32), free(sh[k].y);
    free(sh);
}

/* Runs FN on every share, the first on the calling thread. */
static void shares_run(share *sh, int nt, void *(*fn)(void *))
{
    pthread_t *tid = cli_xcalloc((size_t)nt, sizeof *tid);
    bool *started = cli_xcalloc((size_t)nt, sizeof *started);
    for (int k = 1; k < nt; k++)
        started[k] = pthread_create(&tid[k], NULL, fn, &sh[k]) == 0;
    fn(&sh[0]);
    for (int k = 1; k < nt; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            fn(&sh[k]); /* (no thread for it: here, after the first) */
    }
    free(started);
    free(tid);
}

/* A share of a second read of the whole tensor. */
static void *reread_share(void *arg)
{
    share *r = arg;
    grad_quant walk = r->q; /* the cuts, followed without reading */
    for (int piece = 0; r->ok && walk.left; piece++) {
        size_t n = grad_quant_next(&walk, PIECE);
        if (piece % r->step == r->k) {
            fpk_error err;
            r->q.pos = walk.pos;
            r->q.left = walk.left;
            /* float32 as stored; every other dtype through double */
            bool raw = fpk_dump_tensor(r->d, r->tensor)->dtype == FPK_DTYPE_F32;
            int rc = raw ? fpk_dump_read_raw(r->d, r->tensor, walk.pos, n, r->x32, &err)
                         : fpk_dump_read(r->d, r->tensor, walk.pos, n, r->x, &err);
            if (rc != FPK_OK) {
                cli_failure_set(&r->p->fail, cli_error_status(&err), err.msg);
                r->ok = false;
                break;
            }
            if (!raw && r->q.exact32)
                for (size_t i = 0; i < n; i++)
                    r->x32[i] = (float)r->x[i];
            grad_quant_add(&r->q, r->x, r->x32, n, r->y, r->mx, r->sums);
        }
        walk.pos += n;
        walk.left -= n;
    }
    return NULL;
}

/* The pieces of a chunk in memory, their statistics added to R->st in the
 * same pass. */
static void chunk_share(share *r)
{
    for (size_t q = 0; q < r->npieces; q++) {
        size_t n = r->cut[q + 1] - r->cut[q];
        r->q.pos = r->first + r->cut[q];
        r->q.left = fpk_dump_tensor(r->d, r->tensor)->count - r->q.pos;
        grad_quant_add_f32(&r->q, r->st, r->x, r->buf + r->cut[q], n, r->y, r->mx, r->sums);
    }
}

/* The span of the views a share has read and not yet given back, out of
 * its resident set into the page cache (fpk_dump_unview): every
 * SPAN_BACK bytes or more, not every chunk, since each giving back stops
 * the other threads for a moment (and a chunk of another's inside it,
 * should it be read still, maps again). */
#define SPAN_BACK ((uintptr_t)16 << 20)
typedef struct viewed_span {
    uintptr_t lo, hi; /* none: lo == hi */
} viewed_span;

static void seen_give_back(viewed_span *v, fpk_dump *d)
{
    if (v->lo < v->hi)
        fpk_dump_unview(d, (const void *)v->lo, v->hi - v->lo);
    v->lo = v->hi = 0;
}

static void seen_add(viewed_span *v, fpk_dump *d, const void *p, size_t bytes)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    if (v->lo < v->hi) {
        lo = lo < v->lo ? lo : v->lo;
        hi = hi > v->hi ? hi : v->hi;
    }
    v->lo = lo, v->hi = hi;
    if (hi - lo >= SPAN_BACK)
        seen_give_back(v, d);
}

/* A share of pass 1 over a float32 tensor in one read: the chunks (ONCE
 * elements or a little more, cut where grad_quant_next cuts the tensor)
 * that it takes next from R->next_chunk, so that a thread slowed down
 * leaves more to the others, each viewed where it lies in the file's
 * mapping (or else read as stored), its pieces added to R->st's
 * statistics and to R's sums in one pass (without R->errors, to the
 * statistics alone). */
static void *read_once_share(void *arg)
{
    share *r = arg;
    cli_viewing(fpk_dump_path(r->d));
    float *buf = cli_xcalloc_pages(at_most(r->d, r->tensor, ONCE + PIECE), sizeof *buf);
    viewed_span seen = {0, 0};
    size_t *cut = cli_xcalloc(ONCE / FPK_MX_BLOCK + 2, sizeof *cut);
    grad_quant walk = r->q;
    size_t mine = atomic_fetch_add(r->next_chunk, 1);
    for (size_t chunk = 0; r->ok && walk.left; chunk++) {
        uint64_t first = walk.pos;
        size_t npieces = 0, len = 0;
        cut[0] = 0;
        while (walk.left && len < ONCE) {
            size_t n = grad_quant_next(&walk, PIECE);
            walk.pos += n;
            walk.left -= n;
            len += n;
            cut[++npieces] = len;
        }
        if (chunk != mine)
            continue;
        mine = atomic_fetch_add(r->next_chunk, 1);
        fpk_error err;
        const void *view;
        int rc = fpk_dump_view(r->d, r->tensor, first, len, &view, &err);
        if (rc == FPK_OK && !view)
            rc = fpk_dump_read_raw(r->d, r->tensor, first, len, buf, &err), view = buf;
        if (rc != FPK_OK) {
            cli_failure_set(&r->p->fail, cli_error_status(&err), err.msg);
            r->ok = false;
            break;
        }
        const float *data = view;
        /* SR counts each element with its index in the row (the tensor's
         * from sr_base), whichever share adds it */
        r->st->sr_index = r->q.sr_base + first;
        r->buf = data;
        r->first = first;
        r->cut = cut;
        r->npieces = npieces;
        if (r->errors)
            chunk_share(r);
        else
            fpk_stats_add_array(r->st, FPK_DTYPE_F32, data, len, 1);
        if (view != buf)
            seen_add(&seen, r->d, view, len * sizeof *data);
        progress(r->p, len);
        r->ok = !atomic_load(&r->p->fail.failed);
    }
    seen_give_back(&seen, r->d);
    cli_viewing(NULL);
    free(buf);
    free(cut);
    return NULL;
}

/* Pass 1 over a float32 tensor in one read shared among SH's NT threads,
 * each with statistics of its own, merged into ST (all counts: the same
 * sums in any grouping; under SR each element's counter is its index,
 * whichever thread reads it). */
static bool read_once(share *sh, int nt, fpk_stats *st)
{
    fpk_stats *own = cli_xcalloc((size_t)nt, sizeof *own);
    atomic_size_t next_chunk = 0;
    for (int k = 0; k < nt; k++) {
        own[k] = *st; /* empty: its own elements, merged into ST's */
        sh[k].st = k ? &own[k] : st;
        sh[k].next_chunk = &next_chunk;
    }
    shares_run(sh, nt, read_once_share);
    bool ok = true;
    for (int k = 0; k < nt; k++)
        ok &= sh[k].ok && (k == 0 || fpk_stats_merge(st, &own[k]));
    free(own);
    return ok;
}

/* The second read of row I (grad_mx.c), shared among SH's threads. */
static bool requantise(share *sh, int nt)
{
    shares_run(sh, nt, reread_share);
    bool ok = true;
    for (int k = 0; k < nt; k++)
        ok &= sh[k].ok;
    return ok;
}

/* Row I's error sums and MX counts from the shares: the counts of the
 * block-scaled formats replace the per-element ones. */
static void shares_finish(pool *p, size_t i, share *sh, int nt)
{
    grad_run *run = p->run;
    grad_row *r = &run->rows[i];
    pthread_mutex_lock(&p->lock);
    for (int j = 0; j < run->nformats; j++) {
        fpk_format_counts mx = {0, 0, 0};
        for (int k = 1; k < nt; k++)
            grad_sums_merge(&sh[0].sums[j], &sh[k].sums[j]);
        for (int k = 0; k < nt; k++)
            grad_add_counts(&mx, &sh[k].mx[j]);
        r->err[j] = grad_sums_value(&sh[0].sums[j]);
        grad_sums_merge(&p->err_total[j], &sh[0].sums[j]);
        if (grad_is_mx(run->formats[j])) {
            r->fmt[j] = mx;
            grad_add_counts(&p->mx_total[j], &mx);
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* Pass 1: the statistics of row I at the run's scale, and the errors (the
 * SQNR, the MX formats' counts) if the run has them: a float32 tensor is
 * viewed once for both, another tensor read once for each (threads share
 * the reads). */
static bool pass1(pool *p, fpk_dump *d, size_t i, fpk_stats *st)
{
    grad_run *run = p->run;
    grad_row *r = &run->rows[i];
    fpk_ctx c = fpk_ctx_default();
    c.round = run->round;
    fpk_stats_init(&st[0], run->formats, run->nformats, run->scale, &c);
    sr_start_at(st, 1, r->sr_base);
    bool errors = grad_second_read(run);
    int nt = p->inner > 0 ? p->inner : 1;
    bool once = fpk_dump_tensor(d, p->jobs[i].tensor)->dtype == FPK_DTYPE_F32;
    share *sh = errors || once ? shares_new(p, d, i, nt) : NULL;
    for (int k = 0; sh && k < nt; k++)
        sh[k].errors = errors;
    bool ok = once ? read_once(sh, nt, &st[0]) : feed(p, d, p->jobs[i].tensor, r->count, st, 1);
    if (ok)
        grad_row_set_stats(r, &st[0]);
    if (ok && errors && !once)
        ok = requantise(sh, nt);
    if (ok && errors)
        shares_finish(p, i, sh, nt);
    if (sh)
        shares_free(sh, nt);
    if (!ok)
        return false;
    pthread_mutex_lock(&p->lock);
    fpk_stats_merge(p->total, &st[0]);
    pthread_mutex_unlock(&p->lock);
    return true;
}

/* Pass 2: the scales of row I, and the statistics at its loss scale, at the
 * global loss scale (summed into the total) and at each FP8 scale. */
static bool pass2(pool *p, fpk_dump *d, size_t i, fpk_stats *st)
{
    grad_run *run = p->run;
    grad_row *r = &run->rows[i];
    const grad_scaled *global = &run->total.loss;
    if (r->amax == 0) /* nothing nonzero and finite: every count stays 0 */
        return true;
    r->loss.has_scale = true;
    r->loss.log2 = grad_loss_scale_log2(&fpk_fp16, r->amax, run->round);
    int ns = 0, global_at = 0, fp8_at[FPK_STATS_MAX_FORMATS];
    stats_at(&st[ns++], run->formats, run->nformats, r->loss.log2, run->round);
    if (global->has_scale && global->log2 != r->loss.log2) {
        global_at = ns;
        stats_at(&st[ns++], run->formats, run->nformats, global->log2, run->round);
    }
    for (int j = 0; j < run->nformats; j++) {
        if (!grad_has_amax_scale(run->formats[j]))
            continue;
        r->amax_scale[j].has_scale = true;
        r->amax_scale[j].log2 = grad_amax_scale_log2(run->formats[j], r->amax, run->margin);
        fp8_at[j] = ns;
        stats_at(&st[ns++], &run->formats[j], 1, r->amax_scale[j].log2, run->round);
    }
    sr_start_at(st, ns, r->sr_base);
    if (!feed(p, d, p->jobs[i].tensor, r->count, st, ns))
        return false;
    memcpy(r->loss.fmt, st[0].fmt, sizeof r->loss.fmt);
    for (int j = 0; j < run->nformats; j++)
        if (grad_has_amax_scale(run->formats[j]))
            r->amax_scale[j].fmt[j] = st[fp8_at[j]].fmt[0];
    for (int j = 0; j < run->nformats; j++) /* block scales ignore the loss scale */
        if (grad_is_mx(run->formats[j]))
            r->loss.fmt[j] = st[global_at].fmt[j] = r->fmt[j];
    pthread_mutex_lock(&p->lock);
    for (int j = 0; j < run->nformats; j++) {
        grad_add_counts(&run->total.loss.fmt[j], &st[global_at].fmt[j]);
        if (grad_has_amax_scale(run->formats[j]))
            grad_add_counts(&run->total.amax_scale[j].fmt[j], &r->amax_scale[j].fmt[j]);
    }
    pthread_mutex_unlock(&p->lock);
    return true;
}

static void *worker(void *arg)
{
    pool *p = arg;
    fpk_stats *st = cli_xcalloc(2 + FPK_STATS_MAX_FORMATS, sizeof *st);
    fpk_dump *d = NULL;
    size_t open_file = SIZE_MAX;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->mine && p->next < p->run->nrows && !p->mine[p->next])
            p->next++;
        bool stop = atomic_load(&p->fail.failed) || p->next == p->run->nrows;
        size_t i = p->next;
        if (!stop)
            p->next++;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            break;
        const job *jb = &p->jobs[i];
        if (jb->file != open_file) {
            if (d)
                fpk_dump_close(d);
            d = NULL;
            fpk_error err;
            if (open_dump(p->o, p->files->v[jb->file], &d, &err) != FPK_OK) {
                cli_failure_set(&p->fail, cli_error_status(&err), err.msg);
                break;
            }
            open_file = jb->file;
        }
        /* The file was read once already; it must not have changed since. */
        const fpk_tensor *t =
            jb->tensor < fpk_dump_ntensors(d) ? fpk_dump_tensor(d, jb->tensor) : NULL;
        if (!t || t->count != p->run->rows[i].count || strcmp(t->name, p->run->rows[i].name)) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s: the file changed while being read",
                     p->files->v[jb->file]);
            cli_failure_set(&p->fail, CLI_EXIT_USAGE, msg);
            break;
        }
        if (!(p->pass == 1 ? pass1 : pass2)(p, d, i, st))
            break;
    }
    if (d)
        fpk_dump_close(d);
    free(st);
    return NULL;
}

/* One pass over every row with O's threads; dies on the first failure. */
static void run_pass(pool *p, int pass, uint64_t elements)
{
    p->pass = pass;
    p->next = 0;
    atomic_store(&p->done, 0);
    p->todo = elements;
    size_t rows = 0; /* this process's: under MPI, its rank's */
    for (size_t i = 0; i < p->run->nrows; i++)
        rows += !p->mine || p->mine[i];
    int n = p->o->c.threads;
    if ((size_t)n > rows)
        n = rows ? (int)rows : 1;
    p->inner = p->o->c.threads / n; /* threads left over share each tensor */
    pthread_t *tids = cli_xcalloc((size_t)n, sizeof *tids);
    int started = 0;
    for (int k = 1; k < n; k++) {
        if (pthread_create(&tids[k], NULL, worker, p) != 0)
            break;
        started = k;
    }
    worker(p);
    for (int k = 1; k <= started; k++)
        pthread_join(tids[k], NULL);
    free(tids);
    if (p->progress) {
        fprintf(stderr, "\r%*s\r", 40, "");
        fflush(stderr);
    }
    cli_failure_check(&p->fail);
}

static void analyse(opts *o, const cli_files *fs)
{
    grad_run *run = &o->run;
    uint64_t elements;
    job *jobs = list_tensors(o, fs, &elements);
    if (o->shards) /* the shards of a tensor must agree: said before any reading */
        grad_shard_bases(run);
    bool *mine = NULL;
#ifdef FPGRAD_MPI
    /* The same tensors on every rank, then whole files shared out among
     * the ranks by their elements. */
    cli_buf listing = {0};
    for (size_t i = 0; i < run->nrows; i++) {
        const grad_row *r = &run->rows[i];
        const char *path = fs->v[jobs[i].file];
        cli_buf_put(&listing, path, strlen(path) + 1);
        cli_buf_put(&listing, r->name, strlen(r->name) + 1);
        cli_buf_put(&listing, &r->dtype, sizeof r->dtype);
        cli_buf_put(&listing, &r->count, sizeof r->count);
    }
    mpi_job_same(&listing, "tensors");
    free(listing.p);
    mpi_job_collective(false);
    uint64_t *per_file = cli_xcalloc(fs->n, sizeof *per_file);
    int *owner = cli_xcalloc(fs->n, sizeof *owner);
    for (size_t i = 0; i < run->nrows; i++)
        per_file[jobs[i].file] += run->rows[i].count;
    mpi_job_share(per_file, fs->n, owner);
    mine = cli_xcalloc(run->nrows, sizeof *mine);
    elements = 0;
    for (size_t i = 0; i < run->nrows; i++)
        if ((mine[i] = owner[jobs[i].file] == mpi_job_rank()))
            elements += run->rows[i].count;
    free(per_file);
    free(owner);
#endif
    fpk_stats *total = cli_xcalloc(1, sizeof *total);
    fpk_ctx c = fpk_ctx_default();
    c.round = run->round;
    fpk_stats_init(total, run->formats, run->nformats, run->scale, &c);
    pool p = {.o = o, .run = run, .files = fs, .jobs = jobs, .mine = mine, .total = total};
    p.err_total = cli_xcalloc(FPK_STATS_MAX_FORMATS, sizeof *p.err_total);
    pthread_mutex_init(&p.lock, NULL);
    p.progress = !o->c.quiet && isatty(STDERR_FILENO);
    clock_gettime(CLOCK_MONOTONIC, &p.last);
    run_pass(&p, 1, elements);
#ifdef FPGRAD_MPI
    grad_mpi_sum_pass1(total, p.err_total, p.mx_total, run->nformats);
#endif
    grad_row_set_stats(&run->total, total);
    if (o->emit) { /* the exact sums, for the partial file */
        o->emit_err = cli_xcalloc((size_t)run->nformats, sizeof *o->emit_err);
        memcpy(o->emit_err, p.err_total, (size_t)run->nformats * sizeof *o->emit_err);
    }
    for (int j = 0; j < run->nformats; j++) {
        run->total.err[j] = grad_sums_value(&p.err_total[j]);
        if (grad_is_mx(run->formats[j]))
            run->total.fmt[j] = p.mx_total[j];
    }
    if (run->autoscale) {
        if (o->shards) { /* a tensor's shards scaled alike, by its amax */
#ifdef FPGRAD_MPI
            grad_mpi_share_amax(run);
#endif
            grad_shard_amax(run);
        }
        run->total.loss.has_scale = total->amax > 0;
        if (run->total.loss.has_scale)
            run->total.loss.log2 = grad_loss_scale_log2(&fpk_fp16, total->amax, run->round);
        run_pass(&p, 2, elements);
#ifdef FPGRAD_MPI
        grad_mpi_sum_pass2(&run->total, run->nformats);
#endif
    }
#ifdef FPGRAD_MPI
    grad_mpi_gather_rows(run, mine);
#endif
    free(mine);
    pthread_mutex_destroy(&p.lock);
    free(p.err_total);
    free(total);
    free(jobs);
}

static void write_outputs(const opts *o)
{
    const grad_run *run = &o->run;
    if (o->c.json) {
        outfile_json(o->c.json, grad_json(run));
    }
    if (o->c.csv) {
        outfile f;
        outfile_open(&f, o->c.csv);
        grad_csv(run, f.fp);
        outfile_commit(&f);
    }
    if (o->c.plot) {
        char *title = run->nrows == 1 ? cli_strf("%s", run->rows[0].name)
                                      : cli_strf("%zu tensors, %" PRIu64 " elements", run->nrows,
                                                 run->total.count);
        grad_plot(run, &run->total, title, o->c.plot, &o->plot_opts);
        free(title);
    }
    if (o->report)
        grad_report(run, o->report, &o->plot_opts);
    if (!o->c.quiet && !cli_is_stdout(o->c.json) && !cli_is_stdout(o->c.csv)) {
        grad_text(run, stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    }
}

/* Protects the inputs and checks the outputs before the work: no output
 * replaces an input or another output. */
static void guard_outputs(const opts *o, const cli_files *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        outfile_protect(fs->v[i]);
    const char *outs[4 + GRAD_REPORT_FILES] = {o->c.json, o->c.csv, o->c.plot, o->emit};
    char *report[GRAD_REPORT_FILES] = {NULL};
    for (int k = 0; o->report && k < GRAD_REPORT_FILES; k++)
        outs[4 + k] = report[k] = cli_strf("%s/%s", o->report, grad_report_files[k]);
    outfile_check(outs, sizeof outs / sizeof outs[0]);
    for (int k = 0; k < GRAD_REPORT_FILES; k++)
        free(report[k]);
}

static void own_option(void *state, int key, char *const *v)
{
    opts *o = state;
    switch (key) {
    case OPT_SCALE:
        parse_scale(o, v[0]);
        o->scale_given = true;
        break;
    case OPT_LOGY: o->plot_opts.logy = true; break;
    case OPT_REPORT: o->report = v[0]; break;
    case OPT_NO_SQNR:
        o->run.sqnr = false;
        o->no_sqnr_given = true;
        break;
    case OPT_EMIT_PARTIAL: o->emit = v[0]; break;
    case OPT_MERGE: o->merge = true; break;
    case OPT_SHARDS: o->shards = true; break;
    }
}

static const cli_tool tool = {
    .name = TOOL,
    .synopsis = synopsis,
    .intro = CLI_PATHS_INTRO,
    .opts = options,
    .own = own_option,
    .lookup = grad_mx_lookup,
};

/* Dies unless the options go together. */
static void check_options(const opts *o)
{
    if (o->merge && o->emit)
        cli_die(CLI_EXIT_USAGE, "--merge and --emit-partial: merge the partials, then emit none");
    for (size_t k = 0; o->merge && k < sizeof analysis_options / sizeof analysis_options[0]; k++) {
        int key = analysis_options[k];
        bool given = key == OPT_SCALE       ? o->scale_given
                     : key == OPT_NO_SQNR ? o->no_sqnr_given
                                          : cli_given(&o->c, key);
        if (given)
            cli_die(CLI_EXIT_USAGE,
                    "option %s does not apply to --merge: the partials hold how they were "
                    "analysed",
                    cli_option_name(&tool, key));
    }
    if (o->emit && o->run.autoscale)
        cli_die(CLI_EXIT_USAGE, "--emit-partial cannot record --scale auto, which needs the "
                                "whole dump's largest magnitude: use fpgrad-mpi, or give the "
                                "scale");
    if (cli_given(&o->c, CLI_MARGIN) && !o->run.autoscale)
        cli_die(CLI_EXIT_USAGE, "option --margin applies to --scale auto only");
}

int main(int argc, char **argv)
{
    cli_init(argv[0]);
#ifdef FPGRAD_MPI
    mpi_job_init(&argc, &argv);
#endif
    opts o = {.plot_opts = {.width = 1000, .height = 600}};
    o.run.sqnr = true;
    o.run.scale = 1;
    cli_common_init(&o.c);
    o.c.nformats = grad_parse_formats("--formats", DEFAULT_FORMATS, o.c.formats, CLI_MAX_FORMATS);
    cli_parse(&tool, &o.c, argc, argv, &o);
    o.run.round = o.c.ctx.round;
    o.run.margin = o.c.margin;
    o.run.nformats = o.c.nformats;
    memcpy(o.run.formats, o.c.formats, sizeof o.c.formats);
    o.plot_opts.width = o.c.plot_width;
    o.plot_opts.height = o.c.plot_height;
    int npaths = o.c.noperands;
    char **paths = o.c.operands;
    if (!npaths) {
        cli_common_free(&o.c);
        return cli_usage_error(&tool);
    }
    check_options(&o);
#ifdef FPGRAD_MPI
    bool plots_here = mpi_job_rank() == 0; /* rank 0 writes everything */
#else
    bool plots_here = true;
#endif
    if (o.c.plot && plots_here)
        gp_check(o.c.plot, "hist.gp");
    else if (o.report && plots_here && gp_program())
        free(gp_script("hist.gp"));

    cli_files fs = {0};
    if (o.merge) { /* partial files, named one by one */
        fs.v = cli_xcalloc((size_t)npaths, sizeof *fs.v);
        for (int i = 0; i < npaths; i++)
            fs.v[fs.n++] = cli_strf("%s", paths[i]);
    }
    for (int i = 0; i < npaths && !o.merge; i++) {
        struct stat st;
        if (o.c.has_raw && stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
            cli_die(CLI_EXIT_USAGE, "%s: is a directory; --dtype reads raw files, named one by one",
                    paths[i]);
        cli_walk_files(paths[i], &fs);
    }
    guard_outputs(&o, &fs);
#ifdef FPGRAD_MPI
    if (mpi_job_rank() != 0) { /* rank 0 writes everything */
        o.c.quiet = true;
        o.c.json = o.c.csv = o.c.plot = NULL;
        o.report = o.emit = NULL;
    }
#endif
    if (o.merge)
        grad_part_merge(&o.run, fs.v, fs.n);
    else
        analyse(&o, &fs);
    if (o.emit) /* the tensors as read, whatever --shards */
        grad_part_write(o.emit, &o.run, o.emit_err);
    free(o.emit_err);
    if (o.shards)
        grad_group_shards(&o.run);
    write_outputs(&o);

    for (size_t i = 0; i < o.run.nrows; i++)
        grad_row_free(&o.run.rows[i]);
    grad_row_free(&o.run.total);
    free(o.run.rows);
    cli_files_free(&fs);
    cli_common_free(&o.c);
    return 0;
}
