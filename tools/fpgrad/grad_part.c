/* fpgrad's partial results (grad_part.h).  A partial file, in the byte order
 * of the machine that wrote it: the line "fpgrad partial 2", the formats'
 * names, the mode, scale and SQNR switch; the rows, each its listing (step,
 * role and scale included) and its results; the exact error sums of every
 * format; last, the FNV-1a hash of all that, so that a damaged file is
 * refused rather than misread.  Everything read back is checked, as from
 * any file given. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "grad_part.h"
#include "outfile.h"

#define MAGIC "fpgrad partial 2\n"
#define MAX_PART_BYTES ((size_t)1 << 32) /* a million rows and then some */
#define MAX_NAME 65536
#define MAX_FORMAT_NAME 63 /* "e11m52fnuz" and the like */

/* Bytes that do not make what they should: the file is at fault. */
static noreturn void bad_bytes(const cli_buf *b, const char *why)
{
    cli_die(b->status, "%s: byte %zu: %s; not a partial file of this fpgrad", b->what, b->at,
            why);
}

static void put_counts(cli_buf *b, const fpk_format_counts *c, int nf)
{
    cli_buf_put(b, c, (size_t)nf * sizeof *c);
}

static void put_scaled(cli_buf *b, const grad_scaled *s, int nf)
{
    uint8_t has = s->has_scale;
    cli_buf_put(b, &has, sizeof has);
    cli_buf_put(b, &s->value, sizeof s->value);
    put_counts(b, s->fmt, nf);
}

static void get_scaled(cli_buf *b, grad_scaled *s, int nf)
{
    uint8_t has;
    double value;
    cli_buf_get(b, &has, sizeof has);
    cli_buf_get(b, &value, sizeof value);
    if (has > 1 || (has && !(value > 0 && value < INFINITY)))
        bad_bytes(b, "a scale out of range");
    s->has_scale = has;
    s->value = value;
    cli_buf_get(b, s->fmt, (size_t)nf * sizeof *s->fmt);
}

/* An FP8 scale's counts, in the layout of a grad_scaled's (the other
 * formats' counts zero). */
static void put_fp8(cli_buf *b, const grad_fp8 *s, int j, int nf)
{
    fpk_format_counts fmt[FPK_STATS_MAX_FORMATS] = {{0, 0, 0}};
    grad_scaled all = {.has_scale = s->has_scale, .value = s->value, .fmt = fmt};
    all.fmt[j] = s->fmt;
    put_scaled(b, &all, nf);
}

static void get_fp8(cli_buf *b, grad_fp8 *s, int j, int nf)
{
    fpk_format_counts fmt[FPK_STATS_MAX_FORMATS];
    grad_scaled all = {.fmt = fmt};
    get_scaled(b, &all, nf);
    *s = (grad_fp8){.has_scale = all.has_scale, .value = all.value, .fmt = all.fmt[j]};
}

void grad_row_put(cli_buf *b, const grad_row *r, int nf)
{
    int32_t hist_min = r->hist_min;
    uint64_t hist_n = r->hist_n;
    cli_buf_put(b, &r->zeros, sizeof r->zeros);
    cli_buf_put(b, &r->nonfinite, sizeof r->nonfinite);
    cli_buf_put(b, &r->amax, sizeof r->amax);
    cli_buf_put(b, &hist_min, sizeof hist_min);
    cli_buf_put(b, &hist_n, sizeof hist_n);
    cli_buf_put(b, r->hist, hist_n * sizeof *r->hist);
    put_counts(b, r->fmt, nf);
    cli_buf_put(b, r->err, (size_t)nf * sizeof *r->err);
    put_scaled(b, &r->loss, nf);
    uint8_t has_max = r->has_max_loss;
    int32_t max_log2 = r->max_loss_log2;
    cli_buf_put(b, &has_max, sizeof has_max);
    cli_buf_put(b, &max_log2, sizeof max_log2);
    for (int j = 0; j < nf; j++)
        put_fp8(b, &r->fp8[j], j, nf);
}

void grad_row_get(cli_buf *b, grad_row *r, int nf)
{
    int32_t hist_min;
    uint64_t hist_n;
    cli_buf_get(b, &r->zeros, sizeof r->zeros);
    cli_buf_get(b, &r->nonfinite, sizeof r->nonfinite);
    cli_buf_get(b, &r->amax, sizeof r->amax);
    cli_buf_get(b, &hist_min, sizeof hist_min);
    cli_buf_get(b, &hist_n, sizeof hist_n);
    if (hist_n > FPK_LOG2_BINS || hist_min < FPK_LOG2_MIN ||
        hist_min > FPK_LOG2_MIN + FPK_LOG2_BINS - (int32_t)hist_n)
        bad_bytes(b, "a histogram out of range");
    free(r->hist);
    r->hist = hist_n ? cli_xcalloc((size_t)hist_n, sizeof *r->hist) : NULL;
    r->hist_n = (size_t)hist_n;
    r->hist_min = hist_min;
    cli_buf_get(b, r->hist, (size_t)hist_n * sizeof *r->hist);
    cli_buf_get(b, r->fmt, (size_t)nf * sizeof *r->fmt);
    cli_buf_get(b, r->err, (size_t)nf * sizeof *r->err);
    get_scaled(b, &r->loss, nf);
    uint8_t has_max;
    int32_t max_log2;
    cli_buf_get(b, &has_max, sizeof has_max);
    cli_buf_get(b, &max_log2, sizeof max_log2);
    if (has_max > 1 || max_log2 < SCALING_LOG2_MIN || max_log2 > SCALING_LOG2_MAX)
        bad_bytes(b, "a loss scale out of range");
    r->has_max_loss = has_max;
    r->max_loss_log2 = max_log2;
    for (int j = 0; j < nf; j++)
        get_fp8(b, &r->fp8[j], j, nf);
    /* What every row satisfies: the counts add up, the errors are sums of
     * squares. */
    uint64_t in_hist = 0;
    for (size_t i = 0; i < r->hist_n; i++)
        in_hist += r->hist[i];
    if (!(r->amax >= 0 && r->amax <= DBL_MAX) || r->zeros > r->count ||
        r->nonfinite > r->count - r->zeros || in_hist != r->count - r->zeros - r->nonfinite)
        bad_bytes(b, "counts that do not add up");
    for (int j = 0; j < nf; j++)
        if (r->fmt[j].underflow > in_hist || r->fmt[j].subnormal > in_hist ||
            r->fmt[j].overflow > in_hist || !(r->err[j].x2 >= 0 && r->err[j].x2 <= INFINITY) ||
            !(r->err[j].e2 >= 0 && r->err[j].e2 <= INFINITY))
            bad_bytes(b, "counts or errors out of range");
}

static void put_text(cli_buf *b, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    cli_buf_put(b, &n, sizeof n);
    cli_buf_put(b, s, n);
}

static char *get_text(cli_buf *b)
{
    uint32_t n;
    cli_buf_get(b, &n, sizeof n);
    if (n > MAX_NAME || n > b->len - b->at)
        bad_bytes(b, "a name too long for the file");
    if (memchr(b->p + b->at, 0, n))
        bad_bytes(b, "a name holding a zero byte");
    char *s = cli_xcalloc((size_t)n + 1, 1);
    cli_buf_get(b, s, n);
    return s;
}

void grad_part_write(const char *path, const grad_run *run, const grad_sums *err)
{
    int nf = run->nformats;
    cli_buf b = {0};
    cli_buf_put(&b, MAGIC, strlen(MAGIC));
    uint32_t u = (uint32_t)nf;
    cli_buf_put(&b, &u, sizeof u);
    for (int j = 0; j < nf; j++)
        put_text(&b, run->formats[j]->name);
    u = (uint32_t)run->round;
    cli_buf_put(&b, &u, sizeof u);
    cli_buf_put(&b, &run->scale, sizeof run->scale);
    uint8_t sqnr = run->sqnr;
    cli_buf_put(&b, &sqnr, sizeof sqnr);
    uint64_t nrows = run->nrows;
    cli_buf_put(&b, &nrows, sizeof nrows);
    for (size_t i = 0; i < run->nrows; i++) {
        const grad_row *r = &run->rows[i];
        uint32_t dtype = (uint32_t)r->dtype, ndim = (uint32_t)r->ndim;
        uint8_t has_step = r->has_step, loss_scaled = r->loss_scaled;
        put_text(&b, r->file);
        put_text(&b, r->name);
        cli_buf_put(&b, &dtype, sizeof dtype);
        cli_buf_put(&b, &ndim, sizeof ndim);
        cli_buf_put(&b, r->shape, (size_t)r->ndim * sizeof *r->shape);
        cli_buf_put(&b, &r->count, sizeof r->count);
        cli_buf_put(&b, &has_step, sizeof has_step);
        cli_buf_put(&b, &r->step, sizeof r->step);
        cli_buf_put(&b, &loss_scaled, sizeof loss_scaled);
        cli_buf_put(&b, &r->scale, sizeof r->scale);
        grad_row_put(&b, r, nf);
    }
    grad_sums_put(&b, err, nf);
    uint64_t h = cli_buf_hash(&b);
    cli_buf_put(&b, &h, sizeof h);
    outfile f;
    outfile_open(&f, path);
    if (fwrite(b.p, 1, b.len, f.fp) != b.len)
        cli_die(CLI_EXIT_INTERNAL, "%s: writing failed: %s", path, strerror(errno));
    outfile_commit(&f);
    free(b.p);
}

/* B := the whole of PATH, a regular file of at most MAX_PART_BYTES (B's
 * memory is B's from the start, whatever fails). */
static void read_whole(const char *path, cli_buf *b)
{
    *b = (cli_buf){.what = path, .status = CLI_EXIT_USAGE};
    FILE *fp = fopen(path, "rb");
    struct stat st;
    if (!fp)
        cli_die(CLI_EXIT_USAGE, "%s: %s", path, strerror(errno));
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode))
        cli_die(CLI_EXIT_USAGE, "%s: not a regular file; --merge reads partial files", path);
    if ((uint64_t)st.st_size > MAX_PART_BYTES)
        cli_die(CLI_EXIT_USAGE, "%s: %lld bytes, more than a partial file holds", path,
                (long long)st.st_size);
    b->len = b->cap = (size_t)st.st_size;
    b->p = cli_xcalloc(b->len ? b->len : 1, 1);
    if (fread(b->p, 1, b->len, fp) != b->len)
        cli_die(CLI_EXIT_USAGE, "%s: cannot read it: %s", path,
                ferror(fp) ? strerror(errno) : "it shrank");
    fclose(fp);
    uint64_t h;
    if (b->len < strlen(MAGIC) + sizeof h || memcmp(b->p, MAGIC, strlen(MAGIC)) != 0)
        bad_bytes(b, "no \"fpgrad partial 2\" line");
    b->len -= sizeof h;
    memcpy(&h, b->p + b->len, sizeof h);
    if (h != cli_buf_hash(b)) {
        b->at = b->len;
        bad_bytes(b, "the hash of the contents does not match: the file is damaged");
    }
}

/* The options of the partial in B, read into RUN (FIRST) or checked
 * against RUN's, from the first partial, FIRST_PATH. */
static void get_options(cli_buf *b, grad_run *run, bool first, const char *first_path)
{
    char magic[sizeof MAGIC - 1];
    cli_buf_get(b, magic, sizeof magic);
    if (memcmp(magic, MAGIC, sizeof magic) != 0) {
        b->at = 0;
        bad_bytes(b, "no \"fpgrad partial 2\" line");
    }
    uint32_t nf, round;
    cli_buf_get(b, &nf, sizeof nf);
    if (nf < 1 || nf > FPK_STATS_MAX_FORMATS)
        bad_bytes(b, "a count of formats out of range");
    char list[FPK_STATS_MAX_FORMATS * (MAX_FORMAT_NAME + 1)] = "", opt[600];
    for (uint32_t j = 0; j < nf; j++) {
        uint32_t len;
        cli_buf_get(b, &len, sizeof len);
        if (len == 0 || len > MAX_FORMAT_NAME || len > b->len - b->at ||
            memchr(b->p + b->at, 0, len) || memchr(b->p + b->at, ',', len))
            bad_bytes(b, "a format name out of range");
        size_t at = strlen(list);
        if (j)
            list[at++] = ',';
        cli_buf_get(b, list + at, len);
        list[at + len] = 0;
    }
    const fpk_format *formats[FPK_STATS_MAX_FORMATS];
    snprintf(opt, sizeof opt, "the formats of %s", b->what);
    int n = grad_parse_formats(opt, list, formats, FPK_STATS_MAX_FORMATS);
    double scale;
    uint8_t sqnr;
    cli_buf_get(b, &round, sizeof round);
    cli_buf_get(b, &scale, sizeof scale);
    cli_buf_get(b, &sqnr, sizeof sqnr);
    if (round >= FPK_ROUND_COUNT || !(scale > 0 && scale < INFINITY) || sqnr > 1)
        bad_bytes(b, "a rounding mode, scale or switch out of range");
    if (first) {
        run->nformats = n;
        memcpy(run->formats, formats, (size_t)n * sizeof *formats);
        run->round = (fpk_round)round;
        run->scale = scale;
        run->sqnr = sqnr;
        return;
    }
    bool same = n == run->nformats && (fpk_round)round == run->round &&
                memcmp(&scale, &run->scale, sizeof scale) == 0 && (bool)sqnr == run->sqnr;
    for (int j = 0; same && j < n; j++)
        same = formats[j] == run->formats[j];
    if (!same)
        cli_die(CLI_EXIT_USAGE,
                "%s: analysed with other formats, rounding, scale or --no-sqnr than %s; "
                "partials merge only when made alike",
                b->what, first_path);
}

/* Reads the rows of B after RUN's, and adds its total to the sums. */
static void get_rows(cli_buf *b, grad_run *run, size_t *cap)
{
    uint64_t nrows;
    cli_buf_get(b, &nrows, sizeof nrows);
    if (nrows > (b->len - b->at) / 64) /* a row takes more than 64 bytes */
        bad_bytes(b, "more rows than the file could hold");
    for (uint64_t k = 0; k < nrows; k++) {
        if (run->nrows == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            if (!(run->rows = realloc(run->rows, *cap * sizeof *run->rows)))
                cli_die(CLI_EXIT_INTERNAL, "out of memory");
        }
        grad_row *r = &run->rows[run->nrows];
        memset(r, 0, sizeof *r);
        run->nrows++; /* freed with the run, whatever comes next */
        r->file = get_text(b);
        r->name = get_text(b);
        uint32_t dtype, ndim;
        cli_buf_get(b, &dtype, sizeof dtype);
        cli_buf_get(b, &ndim, sizeof ndim);
        if (dtype >= FPK_DTYPE_COUNT || ndim > FPK_MAX_DIMS)
            bad_bytes(b, "a dtype or a number of dimensions out of range");
        r->dtype = (fpk_dtype)dtype;
        r->ndim = (int)ndim;
        grad_row_formats(r, run->nformats);
        cli_buf_get(b, r->shape, (size_t)ndim * sizeof *r->shape);
        cli_buf_get(b, &r->count, sizeof r->count);
        uint64_t elements = 1;
        for (uint32_t d = 0; d < ndim; d++)
            elements = r->shape[d] && elements > UINT64_MAX / r->shape[d] ? 0
                                                                            : elements * r->shape[d];
        if (elements != r->count)
            bad_bytes(b, "a shape that does not hold the tensor's count");
        uint8_t has_step, loss_scaled;
        cli_buf_get(b, &has_step, sizeof has_step);
        cli_buf_get(b, &r->step, sizeof r->step);
        cli_buf_get(b, &loss_scaled, sizeof loss_scaled);
        cli_buf_get(b, &r->scale, sizeof r->scale);
        if (has_step > 1 || loss_scaled > 1 || r->step < 0 ||
            !(r->scale > 0 && r->scale < INFINITY))
            bad_bytes(b, "a step, role or scale out of range");
        r->has_step = has_step;
        r->loss_scaled = loss_scaled;
        grad_row_get(b, r, run->nformats);
    }
}

/* What a merge holds while it reads, reachable from here: a refusal ends
 * the program at once, and nothing it leaves may look lost to a leak
 * checker. */
static struct merging {
    cli_buf file;        /* the partial being read */
    grad_sums *sums;     /* the exact error sums so far, and */
    grad_sums *part;     /* the partial's */
    const char **seen;   /* the files of the partials read */
    size_t nseen;
} merging;

/* M->sums += the exact error sums of the partial in B, its end. */
static void add_sums(cli_buf *b, const grad_run *run, struct merging *m)
{
    int nf = run->nformats;
    grad_sums_get(b, m->part, nf);
    for (int j = 0; j < nf; j++)
        grad_sums_merge(&m->sums[j], &m->part[j]);
    if (b->at != b->len)
        bad_bytes(b, "bytes after the end");
}

/* Dies if a file of the rows from FROM on is one of M's files; then adds
 * them to M's (a partial's rows come file by file). */
static void check_files(const grad_run *run, size_t from, const char *path, struct merging *m)
{
    for (size_t i = from; i < run->nrows; i++) {
        const char *file = run->rows[i].file;
        if (i > from && strcmp(file, run->rows[i - 1].file) == 0)
            continue;
        for (size_t e = 0; e < m->nseen; e++)
            if (strcmp(file, m->seen[e]) == 0)
                cli_die(CLI_EXIT_USAGE, "%s: holds tensors of %s, as an earlier partial does",
                        path, file);
    }
    for (size_t i = from; i < run->nrows; i++)
        if (i == from || strcmp(run->rows[i].file, run->rows[i - 1].file) != 0) {
            if (!(m->seen = realloc(m->seen, (m->nseen + 1) * sizeof *m->seen)))
                cli_die(CLI_EXIT_INTERNAL, "out of memory");
            m->seen[m->nseen++] = run->rows[i].file;
        }
}

grad_sums *grad_part_merge(grad_run *run, char *const *paths, size_t n)
{
    struct merging *m = &merging;
    m->sums = cli_xcalloc(FPK_STATS_MAX_FORMATS, sizeof *m->sums);
    m->part = cli_xcalloc(FPK_STATS_MAX_FORMATS, sizeof *m->part);
    size_t cap = 0;
    run->rows = NULL;
    run->nrows = 0;
    for (size_t k = 0; k < n; k++) {
        read_whole(paths[k], &m->file);
        size_t before = run->nrows;
        get_options(&m->file, run, k == 0, paths[0]);
        get_rows(&m->file, run, &cap);
        add_sums(&m->file, run, m);
        free(m->file.p);
        m->file.p = NULL;
        check_files(run, before, paths[k], m);
    }
    run->nfiles = m->nseen;
    grad_sums *sums = m->sums;
    free(m->seen);
    free(m->part);
    *m = (struct merging){0};
    return sums;
}
