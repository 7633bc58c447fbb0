/* fpgrad's analysis of the dumps' tensors on the scan engine's threads:
 * pass 1, the statistics at the run's scale and the errors (SQNR, MX
 * counts); pass 2 with --scale auto, the statistics at the scales that
 * pass 1's amaxes give. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grad.h"
#ifdef FPGRAD_MPI
#include "grad_mpi.h"
#include "mpi_job.h"
#endif

#define PIECE ((size_t)1 << 16) /* elements of the errors' pieces at most */
#define ONCE ((size_t)1 << 18)  /* elements of a float32 tensor read at once when one
                                   read serves the statistics and the errors */

/* A pass over the rows. */
typedef struct pass {
    grad_run *run;
    const scan *s;
    const size_t *rows;   /* row i's tensor: s->tensors[rows[i]] */
    grad_sums *err_total; /* pass 1: every format's (FPK_STATS_MAX_FORMATS) */
} pass;

/* One thread's part of a tensor's errors, with its own counts and sums
 * (exact, so the parts add up to the same totals in any grouping), and
 * with a read serving both, the statistics of its chunks. */
typedef struct part {
    grad_quant q;
    fpk_format_counts mx[FPK_STATS_MAX_FORMATS];
    grad_sums *sums; /* FPK_STATS_MAX_FORMATS */
    double *x;       /* PIECE elements of scratch, and */
    float *x32, *y;
    fpk_stats *st;
} part;

/* The parts of one read of a tensor. */
typedef struct tensor_read {
    const scan_tensor *t;
    part *parts;
    int nt;
    bool errors; /* the errors too, or the statistics alone */
} tensor_read;

/* S[0..N-1]'s stochastic rounding starts at counter BASE, so that a
 * shard's elements take their counters in the whole tensor. */
static void sr_start_at(fpk_stats *s, int n, uint64_t base)
{
    for (int k = 0; k < n; k++)
        s[k].sr_index = base;
}

static void stats_at(fpk_stats *s, const fpk_format *const *formats, int n, double scale,
                     fpk_round mode)
{
    fpk_ctx c = fpk_ctx_default();
    c.round = mode;
    fpk_stats_init(s, formats, n, scale, &c);
}

/* TR's parts, their error sums SUMS (TR->nt times RUN's formats, empty,
 * the worker's: parts_free leaves them empty again). */
static void parts_new(tensor_read *tr, const grad_run *run, const grad_row *r, grad_sums *sums)
{
    uint64_t count = tr->t->t.count;
    size_t piece = count < PIECE ? (size_t)(count ? count : 1) : PIECE;
    tr->parts = cli_xcalloc((size_t)tr->nt, sizeof *tr->parts);
    for (int k = 0; k < tr->nt; k++) {
        part *p = &tr->parts[k];
        grad_quant_init(&p->q, run, &tr->t->t);
        p->q.sr_base = r->sr_base;
        p->sums = sums + (size_t)k * (size_t)run->nformats;
        p->x = cli_xcalloc(piece, sizeof *p->x);
        p->x32 = cli_xcalloc_pages(piece, sizeof *p->x32);
        p->y = cli_xcalloc(piece, sizeof *p->y);
    }
}

static void parts_free(tensor_read *tr, int nformats)
{
    for (int k = 0; tr->parts && k < tr->nt; k++) {
        for (int j = 0; j < nformats; j++)
            grad_sums_clear(&tr->parts[k].sums[j]);
        free(tr->parts[k].x), free(tr->parts[k].x32), free(tr->parts[k].y);
    }
    free(tr->parts);
}

/* A chunk of a read in one go: pieces, as grad_quant_next cuts the
 * tensor, up to ONCE elements or a little more. */
static size_t once_next(void *arg, uint64_t pos, uint64_t left)
{
    const tensor_read *tr = arg;
    grad_quant walk = tr->parts[0].q;
    walk.pos = pos;
    walk.left = left;
    size_t len = 0;
    while (walk.left && len < ONCE) {
        size_t n = grad_quant_next(&walk, PIECE);
        walk.pos += n;
        walk.left -= n;
        len += n;
    }
    return len;
}

/* A chunk of float32 elements read once for the statistics and the
 * errors: its pieces added to both in one pass (without the errors, to
 * the statistics alone).  SR counts each element with its index in the
 * row (the tensor's from sr_base), whichever part adds it. */
static bool once_chunk(void *arg, int k, const void *data, uint64_t first, size_t n)
{
    const tensor_read *tr = arg;
    part *p = &tr->parts[k];
    const float *x = data;
    p->st->sr_index = p->q.sr_base + first;
    if (!tr->errors) {
        fpk_stats_add_array(p->st, FPK_DTYPE_F32, x, n, 1);
        return true;
    }
    for (size_t done = 0; done < n;) {
        p->q.pos = first + done;
        p->q.left = tr->t->t.count - p->q.pos;
        size_t len = grad_quant_next(&p->q, PIECE);
        grad_quant_add_f32(&p->q, p->st, p->x, x + done, len, p->y, p->mx, p->sums);
        done += len;
    }
    return true;
}

/* The pieces of a second read, as grad_quant_next cuts the tensor. */
static size_t piece_next(void *arg, uint64_t pos, uint64_t left)
{
    const tensor_read *tr = arg;
    grad_quant walk = tr->parts[0].q;
    walk.pos = pos;
    walk.left = left;
    return grad_quant_next(&walk, PIECE);
}

/* A piece of a second read, of a tensor of another dtype than float32
 * (read as doubles): its errors and MX counts. */
static bool reread_chunk(void *arg, int k, const void *data, uint64_t first, size_t n)
{
    const tensor_read *tr = arg;
    part *p = &tr->parts[k];
    p->q.pos = first;
    p->q.left = tr->t->t.count - first;
    memcpy(p->x, data, n * sizeof *p->x);
    if (p->q.exact32)
        for (size_t i = 0; i < n; i++)
            p->x32[i] = (float)p->x[i];
    grad_quant_add(&p->q, p->x, p->x32, n, p->y, p->mx, p->sums);
    return true;
}

/* Pass 1 over a float32 tensor in one read shared among TR's threads,
 * each with statistics of its own, merged into ST (all counts: the same
 * sums in any grouping; under SR each element's counter is its index,
 * whichever thread reads it). */
static bool read_once(scan_worker *w, tensor_read *tr, fpk_stats *st)
{
    fpk_stats *own = tr->nt > 1 ? cli_xcalloc((size_t)tr->nt, sizeof *own) : NULL;
    tr->parts[0].st = st;
    for (int k = 1; k < tr->nt; k++) {
        own[k] = *st; /* empty: its own elements, merged into ST's */
        tr->parts[k].st = &own[k];
    }
    bool ok = scan_share(w, tr->t, tr->nt, ONCE + PIECE, SCAN_AS_STORED, once_next, once_chunk,
                         tr);
    for (int k = 1; k < tr->nt; k++)
        ok &= fpk_stats_merge(st, &own[k]);
    free(own);
    return ok;
}

/* Row I's error sums and MX counts from TR's parts: the counts of the
 * block-scaled formats replace the per-element ones. */
static void parts_finish(scan_worker *w, pass *p, size_t i, const tensor_read *tr)
{
    grad_run *run = p->run;
    grad_row *r = &run->rows[i];
    pthread_mutex_t *lock = &scan_pool_of(w)->lock;
    pthread_mutex_lock(lock);
    for (int j = 0; j < run->nformats; j++) {
        fpk_format_counts mx = {0, 0, 0};
        for (int k = 1; k < tr->nt; k++)
            grad_sums_merge(&tr->parts[0].sums[j], &tr->parts[k].sums[j]);
        for (int k = 0; k < tr->nt; k++)
            grad_add_counts(&mx, &tr->parts[k].mx[j]);
        r->err[j] = grad_sums_value(&tr->parts[0].sums[j]);
        grad_sums_merge(&p->err_total[j], &tr->parts[0].sums[j]);
        if (grad_is_mx(run->formats[j]))
            r->fmt[j] = mx;
    }
    pthread_mutex_unlock(lock);
}

/* Pass 1: the statistics of row I at its scale, and the errors (the
 * SQNR, the MX formats' counts) if the run has them: a float32 tensor is
 * viewed once for both, another tensor read once for each (threads share
 * the reads). */
static bool pass1(scan_worker *w, pass *p, size_t i, fpk_stats *st, grad_sums *sums)
{
    grad_run *run = p->run;
    grad_row *r = &run->rows[i];
    fpk_ctx c = fpk_ctx_default();
    c.round = run->round;
    fpk_stats_init(&st[0], run->formats, run->nformats, r->scale, &c);
    sr_start_at(st, 1, r->sr_base);
    tensor_read tr = {.t = &p->s->tensors[p->rows[i]], .nt = scan_inner(w),
                      .errors = grad_second_read(run)};
    bool once = tr.t->t.dtype == FPK_DTYPE_F32;
    if (tr.errors || once)
        parts_new(&tr, run, r, sums);
    bool ok = once ? read_once(w, &tr, &st[0]) : scan_add_stats(w, tr.t, st, 1);
    if (ok)
        grad_row_set_stats(r, &st[0]);
    if (ok && tr.errors && !once)
        ok = scan_share(w, tr.t, tr.nt, PIECE, SCAN_AS_DOUBLE, piece_next, reread_chunk, &tr);
    if (ok && tr.errors)
        parts_finish(w, p, i, &tr);
    parts_free(&tr, run->nformats);
    return ok;
}

/* Pass 2, with --scale auto: row I's own largest loss scale, its
 * statistics at the run's loss scale if it is loss-scaled (else those at
 * 1 stand), and at its own FP8 scale in each format of at most 8 bits. */
static bool pass2(scan_worker *w, pass *p, size_t i, fpk_stats *st)
{
    grad_run *run = p->run;
    grad_row *r = &run->rows[i];
    r->loss.has_scale = true;
    r->loss.value = r->loss_scaled && run->loss.has_scale ? run->loss.value : 1;
    memcpy(r->loss.fmt, r->fmt, (size_t)run->nformats * sizeof *r->fmt);
    if (r->amax == 0) { /* nothing nonzero and finite: every count stays 0 */
        scan_progress(w, r->count);
        return true;
    }
    r->has_max_loss = true;
    r->max_loss_log2 = scaling_loss_log2(&fpk_fp16, r->amax, run->round);
    int ns = 0, loss_at = -1, fp8_at[FPK_STATS_MAX_FORMATS];
    if (r->loss.value != r->scale) {
        loss_at = ns;
        stats_at(&st[ns++], run->formats, run->nformats, r->loss.value, run->round);
    }
    for (int j = 0; j < run->nformats; j++) {
        fp8_at[j] = -1;
        if (!grad_has_amax_scale(run->formats[j]))
            continue;
        double v = scaling_fp8(run->formats[j], r->amax, run->margin, run->fp8_rule);
        r->fp8[j].has_scale = v > 0;
        r->fp8[j].value = v;
        if (v > 0) {
            fp8_at[j] = ns;
            stats_at(&st[ns++], &run->formats[j], 1, v, run->round);
        }
    }
    if (ns == 0) {
        scan_progress(w, r->count);
        return true;
    }
    sr_start_at(st, ns, r->sr_base);
    if (!scan_add_stats(w, &p->s->tensors[p->rows[i]], st, ns))
        return false;
    if (loss_at >= 0)
        for (int j = 0; j < run->nformats; j++) /* block scales ignore the loss scale */
            if (!grad_is_mx(run->formats[j]))
                r->loss.fmt[j] = st[loss_at].fmt[j];
    for (int j = 0; j < run->nformats; j++)
        if (fp8_at[j] >= 0)
            r->fp8[j].fmt = st[fp8_at[j]].fmt[0];
    return true;
}

/* Pass 1 with the worker's statistics and error sums, kept from one
 * tensor to the next (zeroing 64 KB of sums per format for each tensor
 * would cost more than a small tensor's reading). */
static bool pass1_job(scan_worker *w, size_t i, void *arg)
{
    const pass *p = arg;
    size_t nsums = (size_t)scan_inner(w) * (size_t)p->run->nformats;
    char *scratch = scan_scratch(w, nsums * sizeof(grad_sums) + sizeof(fpk_stats));
    return pass1(w, arg, i, (fpk_stats *)(scratch + nsums * sizeof(grad_sums)),
                 (grad_sums *)scratch);
}

static bool pass2_job(scan_worker *w, size_t i, void *arg)
{
    fpk_stats *st = scan_scratch(w, (1 + FPK_STATS_MAX_FORMATS + 1) * sizeof(fpk_stats));
    return pass2(w, arg, i, st);
}

/* The rows: the tensors of S that C's --match keeps, in order; returns
 * each row's tensor's index in S. */
static size_t *list_rows(grad_run *run, const scan *s, const cli_common *c,
                         const regex_t *loss_re, bool loss_default)
{
    size_t *rows = cli_xcalloc(s->ntensors ? s->ntensors : 1, sizeof *rows);
    run->rows = cli_xcalloc(s->ntensors ? s->ntensors : 1, sizeof *run->rows);
    run->nrows = run->nfiles = 0;
    for (size_t k = 0; k < s->ntensors; k++) {
        const scan_tensor *t = &s->tensors[k];
        if (c->has_match && regexec(&c->match, t->t.name, 0, NULL, 0) != 0)
            continue;
        grad_row *r = &run->rows[run->nrows];
        r->ndim = t->t.ndim;
        grad_row_formats(r, run->nformats);
        r->name = cli_strf("%s", t->t.name);
        r->file = cli_strf("%s", s->files.v[t->file]);
        r->dtype = t->t.dtype;
        memcpy(r->shape, t->t.shape, (size_t)r->ndim * sizeof *r->shape);
        r->count = t->t.count;
        r->has_step = s->steps[t->file].known;
        r->step = s->steps[t->file].step;
        r->loss_scaled = regexec(loss_re, r->name, 0, NULL, 0) == 0;
        run->nfiles += run->nrows == 0 || s->tensors[rows[run->nrows - 1]].file != t->file;
        rows[run->nrows++] = k;
    }
    if (!run->nrows)
        scan_none(s, c->has_match);
    /* A dump without the dumper's roles: the loss scale is every tensor's. */
    bool any = false;
    for (size_t i = 0; i < run->nrows; i++)
        any |= run->rows[i].loss_scaled;
    run->loss_all = loss_default && !any;
    for (size_t i = 0; i < run->nrows; i++) {
        grad_row *r = &run->rows[i];
        r->loss_scaled |= run->loss_all;
        r->scale = r->loss_scaled ? run->scale : 1;
    }
    return rows;
}


/* The recommended loss scale: the largest power of two with no fp16
 * overflow in the loss-scaled rows, and the row whose amax sets it. */
static void choose_loss_scale(grad_run *run)
{
    double amax = 0;
    run->loss_limit = SIZE_MAX;
    for (size_t i = 0; i < run->nrows; i++)
        if (run->rows[i].loss_scaled && run->rows[i].amax > amax) {
            amax = run->rows[i].amax;
            run->loss_limit = i;
        }
    run->loss.has_scale = amax > 0;
    if (amax > 0)
        run->loss.value = ldexp(1.0, scaling_loss_log2(&fpk_fp16, amax, run->round));
}

grad_sums *grad_analyse(grad_run *run, const scan *s, const cli_common *c, bool shards,
                        bool progress, const regex_t *loss_re, bool loss_default)
{
    size_t *rows = list_rows(run, s, c, loss_re, loss_default);
    if (shards) /* the shards of a tensor must agree: said before any reading */
        grad_shard_bases(run);
    bool *mine = NULL;
#ifdef FPGRAD_MPI
    mine = grad_mpi_mine(s, rows, run->nrows);
#endif
    /* Elements read: every row's once, and a second time for the errors of
     * a tensor that is not float32. */
    uint64_t elements = 0, again = 0;
    for (size_t i = 0; i < run->nrows; i++)
        if (!mine || mine[i]) {
            elements += run->rows[i].count;
            again += run->rows[i].dtype != FPK_DTYPE_F32 ? run->rows[i].count : 0;
        }
    pass p = {.run = run, .s = s, .rows = rows};
    p.err_total = cli_xcalloc(FPK_STATS_MAX_FORMATS, sizeof *p.err_total);
    scan_pool pool = {.s = s, .njobs = run->nrows, .mine = mine, .threads = c->threads,
                      .job = pass1_job, .arg = &p,
                      .todo = elements + (grad_second_read(run) ? again : 0)};
    pool.label = !progress ? NULL : run->autoscale ? "pass 1 of 2" : "pass 1 of 1";
    scan_run(&pool);
#ifdef FPGRAD_MPI
    grad_mpi_sum_errors(p.err_total, run->nformats);
#endif
    if (run->autoscale) {
#ifdef FPGRAD_MPI
        grad_mpi_share_amax(run);
#endif
        if (shards) /* a tensor's shards scaled alike, by its amax */
            grad_shard_amax(run);
        choose_loss_scale(run);
        pool.job = pass2_job;
        pool.todo = elements;
        pool.label = progress ? "pass 2 of 2" : NULL;
        scan_run(&pool);
    }
#ifdef FPGRAD_MPI
    grad_mpi_gather_rows(run, mine);
#endif
    free(mine);
    free(rows);
    return p.err_total;
}
