/* The scan engine (scan.h): listing, the pool of jobs, and the reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "scan.h"

/* Elements added to statistics at once, between progress updates. */
#define STATS_CHUNK ((uint64_t)1 << 22)

/* A thread gives its views back to the page cache every SPAN_BACK bytes
 * or more, not every chunk: each giving back stops the other threads for
 * a moment (and a chunk of another's inside it, should it be read still,
 * maps again). */
#define SPAN_BACK ((uintptr_t)16 << 20)

/* The span of the views a thread has read and not yet given back. */
typedef struct viewed_span {
    uintptr_t lo, hi; /* none: lo == hi */
} viewed_span;

struct scan_worker {
    scan_pool *pool;
    fpk_dump *dump[2];
    size_t file[2];
    int last; /* the slot used last */
    void *scratch;
    size_t scratch_size;
    /* the views of KEPT_DUMP this worker's own thread read and has not
     * given back: kept from one tensor to the next, so that a file of
     * many small tensors is given back every SPAN_BACK bytes, not once a
     * tensor (a system call each) */
    viewed_span kept;
    fpk_dump *kept_dump;
};

static void give_back(viewed_span *v, fpk_dump *d);

/* A step number: decimal digits only (leading zeros allowed), within
 * int64; false otherwise. */
static bool parse_step(const char *s, size_t n, int64_t *step)
{
    if (n == 0)
        return false;
    while (n > 1 && *s == '0')
        s++, n--;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - (s[i] - '0')) / 10)
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *step = v;
    return true;
}

bool scan_last_number(const char *path, const char **start, const char **end)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    *start = *end = NULL;
    for (const char *p = base; *p; p++)
        if (*p >= '0' && *p <= '9') {
            if (!*end || p != *end)
                *start = p;
            *end = p + 1;
        }
    return *start != NULL;
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

bool scan_shard_index(const char *file, const char **digits, const char **end)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    /* The last "<digits>-of-<digits>", else the last "rank<digits>". */
    *digits = *end = NULL;
    for (const char *p = base; *p; p++) {
        if (!digit(*p) || (p > base && digit(p[-1])))
            continue;
        const char *q = p;
        while (digit(*q))
            q++;
        if (strncmp(q, "-of-", 4) == 0 && digit(q[4])) {
            *digits = p;
            *end = q;
        } else if (!(*digits && (*end)[0] == '-') && p - base >= 4 &&
                   strncmp(p - 4, "rank", 4) == 0) {
            *digits = p;
            *end = q;
        }
    }
    return *digits != NULL;
}

/* The step number in PATH's base name: the digits after "step" (and a
 * "-", "_" or "."), else the last run of digits that is not a shard's
 * index or count ("rank3", "00003-of-00008"); false if none. */
static bool name_step(const char *path, const char **start, const char **end)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    *start = *end = NULL;
    for (const char *p = base; *p; p++)
        if (strncasecmp(p, "step", 4) == 0) {
            const char *q = p + 4 + (p[4] == '-' || p[4] == '_' || p[4] == '.');
            if (digit(*q)) {
                *start = q;
                for (*end = q; digit(**end); ++*end)
                    ;
            }
        }
    if (*start)
        return true;
    const char *sd, *se;
    bool shard = scan_shard_index(path, &sd, &se);
    for (const char *p = base; *p; p++) {
        if (!digit(*p) || (p > base && digit(p[-1])))
            continue;
        const char *q = p;
        while (digit(*q))
            q++;
        bool count = p - base >= 4 && strncmp(p - 4, "-of-", 4) == 0;
        if (!(shard && p == sd) && !count) {
            *start = p;
            *end = q;
        }
    }
    return *start != NULL;
}

static scan_step file_step(const char *path, const fpk_dump *d)
{
    scan_step st = {0};
    const char *meta = fpk_dump_metadata(d, "step");
    if (meta) {
        st.known = parse_step(meta, strlen(meta), &st.step);
        st.from_metadata = true;
        if (!st.known)
            snprintf(st.problem, sizeof st.problem,
                     "__metadata__ step \"%.100s\" is not a step number (0 or more)", meta);
        return st;
    }
    const char *start, *end;
    if (!name_step(path, &start, &end)) {
        snprintf(st.problem, sizeof st.problem, "%s",
                 "no step number: no __metadata__ step and no number in the file name; name "
                 "the files by step (step-000042.npy)");
        return st;
    }
    st.known = parse_step(start, (size_t)(end - start), &st.step);
    if (!st.known)
        snprintf(st.problem, sizeof st.problem, "the step number in the file name is too large");
    return st;
}

int64_t scan_need_step(const scan *s, size_t i)
{
    const scan_step *st = &s->steps[i];
    if (!st->known)
        cli_die(CLI_EXIT_USAGE, "%s: %s", s->files.v[i], st->problem);
    return st->step;
}

static void add_tensors(scan *s, size_t file)
{
    fpk_dump *d = scan_open_file(s, file);
    s->steps[file] = file_step(s->files.v[file], d);
    size_t n = fpk_dump_ntensors(d);
    scan_tensor *v = realloc(s->tensors, (s->ntensors + n + 1) * sizeof *v);
    if (!v)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    s->tensors = v;
    for (size_t i = 0; i < n; i++) {
        scan_tensor *t = &s->tensors[s->ntensors++];
        t->file = file;
        t->index = i;
        t->t = *fpk_dump_tensor(d, i);
        t->t.name = cli_strf("%s", t->t.name);
    }
    for (size_t i = 0; i < fpk_dump_nskipped(d); i++, s->nskipped++) {
        const fpk_skipped *k = fpk_dump_skipped(d, i);
        size_t used = strlen(s->skipped);
        if (used + 1 < sizeof s->skipped)
            snprintf(s->skipped + used, sizeof s->skipped - used, "%s%s (%s, %s)",
                     used ? ", " : "", k->name, k->dtype, k->why);
    }
    if (file < SCAN_KEEP_OPEN)
        s->kept[file] = d;
    else
        fpk_dump_close(d);
}

void scan_open(scan *s, char *const *paths, int n, const fpk_raw_spec *raw)
{
    memset(s, 0, sizeof *s);
    s->raw = raw;
    s->path_files = cli_xcalloc((size_t)n + 1, sizeof *s->path_files);
    for (int i = 0; i < n; i++) {
        s->path_files[i] = s->files.n;
        struct stat st;
        if (raw && stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
            cli_die(CLI_EXIT_USAGE, "%s: is a directory; --dtype reads raw files, named one by one",
                    paths[i]);
        cli_walk_files(paths[i], &s->files);
    }
    s->path_files[n] = s->files.n;
    for (size_t i = 0; i < s->files.n; i++)
        outfile_protect(s->files.v[i]);
    s->steps = cli_xcalloc(s->files.n ? s->files.n : 1, sizeof *s->steps);
    s->kept = cli_xcalloc(s->files.n ? s->files.n : 1, sizeof *s->kept);
    for (size_t i = 0; i < s->files.n; i++)
        add_tensors(s, i);
    /* (with no tensor to read, scan_none says it in its one line) */
    if (s->nskipped && s->ntensors)
        fprintf(stderr, "%s: note: %zu tensor%s not read, not floating point: %.150s%s\n",
                cli_prog(), s->nskipped, s->nskipped == 1 ? "" : "s", s->skipped,
                strlen(s->skipped) > 150 ? "..." : "");
}

void scan_free(scan *s)
{
    for (size_t i = 0; i < s->ntensors; i++)
        free((char *)s->tensors[i].t.name);
    free(s->tensors);
    for (size_t i = 0; s->kept && i < s->files.n; i++)
        fpk_dump_close(s->kept[i]);
    free(s->kept);
    free(s->path_files);
    free(s->steps);
    cli_files_free(&s->files);
    memset(s, 0, sizeof *s);
}

void scan_none(const scan *s, bool has_match)
{
    if (!s->ntensors && s->nskipped)
        cli_die(CLI_EXIT_USAGE,
                "no tensors found: the paths hold no floating-point tensors, only %zu not read: "
                "%.150s",
                s->nskipped, s->skipped);
    if (!s->ntensors || !has_match)
        cli_die(CLI_EXIT_USAGE, "no tensors found: the paths hold no .npy or safetensors tensors");
    cli_die(CLI_EXIT_USAGE, "no tensors to analyse: --match matched none of the %zu found",
            s->ntensors);
}

fpk_dump *scan_open_file(const scan *s, size_t i)
{
    fpk_dump *d;
    fpk_error err;
    if (fpk_dump_open(s->files.v[i], s->raw, &d, &err) != FPK_OK)
        cli_die_error(&err);
    return d;
}

int scan_inner(const scan_worker *w)
{
    return w->pool->inner > 0 ? w->pool->inner : 1;
}

scan_pool *scan_pool_of(scan_worker *w)
{
    return w->pool;
}

bool scan_fail(scan_worker *w, int status, const char *msg)
{
    cli_failure_set(&w->pool->fail, status, msg);
    return false;
}

bool scan_fail_error(scan_worker *w, const fpk_error *err)
{
    return scan_fail(w, cli_error_status(err), err->msg);
}

bool scan_failed(const scan_worker *w)
{
    return atomic_load(&w->pool->fail.failed);
}

/* Gives up W's use of the dump in SLOT: closed once no worker uses it. */
static void release_slot(scan_worker *w, int slot)
{
    scan_pool *p = w->pool;
    if (!w->dump[slot])
        return;
    if (w->kept_dump == w->dump[slot]) { /* (the worker's own: no lock) */
        give_back(&w->kept, w->kept_dump);
        w->kept_dump = NULL;
    }
    pthread_mutex_lock(&p->lock);
    fpk_dump *d = NULL;
    size_t f = w->file[slot];
    if (--p->users[f] == 0) {
        d = p->dumps[f];
        p->dumps[f] = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    fpk_dump_close(d);
    w->dump[slot] = NULL;
}

/* The dumps are opened once and shared by the workers (a dump is read
 * only once open, so threads may read it at once): a file of many
 * tensors is listed in memory once, not once per worker. */
fpk_dump *scan_dump(scan_worker *w, const scan_tensor *t)
{
    scan_pool *p = w->pool;
    const scan *s = p->s;
    int slot = -1;
    for (int k = 0; k < 2 && slot < 0; k++)
        if (w->dump[k] && w->file[k] == t->file)
            slot = k;
    if (slot < 0) {
        slot = !w->last;
        release_slot(w, slot);
        pthread_mutex_lock(&p->lock);
        fpk_error err;
        if (!p->dumps[t->file] &&
            fpk_dump_open(s->files.v[t->file], s->raw, &p->dumps[t->file], &err) != FPK_OK) {
            p->dumps[t->file] = NULL;
            pthread_mutex_unlock(&p->lock);
            scan_fail_error(w, &err);
            return NULL;
        }
        p->users[t->file]++;
        w->dump[slot] = p->dumps[t->file];
        w->file[slot] = t->file;
        pthread_mutex_unlock(&p->lock);
    }
    w->last = slot;
    fpk_dump *d = w->dump[slot];
    /* The file was read once already; it must not have changed since. */
    const fpk_tensor *now = t->index < fpk_dump_ntensors(d) ? fpk_dump_tensor(d, t->index) : NULL;
    if (!now || now->count != t->t.count || now->dtype != t->t.dtype ||
        strcmp(now->name, t->t.name) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s: the file changed while being read", s->files.v[t->file]);
        scan_fail(w, CLI_EXIT_USAGE, msg);
        return NULL;
    }
    return d;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

/* Redraws the progress line at most five times a second. */
void scan_progress(scan_worker *w, uint64_t n)
{
    scan_pool *p = w->pool;
    uint64_t done = atomic_fetch_add(&p->done, n) + n;
    if (!p->label)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&p->lock);
    if (seconds_between(&p->last, &now) >= 0.2) {
        p->last = now;
        fprintf(stderr, "\r%s: %s: %3d%%", cli_prog(), p->label,
                (int)(p->todo ? 100 * (double)done / (double)p->todo : 100));
        fflush(stderr);
    }
    pthread_mutex_unlock(&p->lock);
}

void *scan_scratch(scan_worker *w, size_t bytes)
{
    if (bytes > w->scratch_size) {
        free(w->scratch);
        w->scratch = cli_xcalloc(bytes, 1);
        w->scratch_size = bytes;
    }
    return w->scratch;
}

static void *worker(void *arg)
{
    scan_worker w = {.pool = arg};
    scan_pool *p = w.pool;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->mine && p->next < p->njobs && !p->mine[p->next])
            p->next++;
        bool stop = atomic_load(&p->fail.failed) || p->next == p->njobs;
        size_t j = p->next;
        if (!stop)
            p->next++;
        pthread_mutex_unlock(&p->lock);
        if (stop || !p->job(&w, j, p->arg))
            break;
    }
    for (int k = 0; k < 2; k++)
        release_slot(&w, k);
    free(w.scratch);
    return NULL;
}

void scan_run(scan_pool *p)
{
    p->next = 0;
    atomic_store(&p->done, 0);
    atomic_store(&p->fail.failed, false);
    pthread_mutex_init(&p->lock, NULL);
    size_t nfiles = p->s->files.n ? p->s->files.n : 1;
    p->dumps = cli_xcalloc(nfiles, sizeof *p->dumps);
    p->users = cli_xcalloc(nfiles, sizeof *p->users);
    for (size_t f = 0; f < p->s->files.n; f++) { /* the listing's, taken */
        p->dumps[f] = p->s->kept[f];
        p->s->kept[f] = NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &p->last);
    size_t jobs = 0; /* this process's: under MPI, its rank's */
    for (size_t j = 0; j < p->njobs; j++)
        jobs += !p->mine || p->mine[j];
    int n = p->threads > 0 ? p->threads : 1;
    if ((size_t)n > jobs)
        n = jobs ? (int)jobs : 1;
    p->inner = (p->threads > 0 ? p->threads : 1) / n; /* threads left over share each job */
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
    if (p->label) {
        fprintf(stderr, "\r%*s\r", 40, "");
        fflush(stderr);
    }
    pthread_mutex_destroy(&p->lock);
    for (size_t f = 0; f < p->s->files.n; f++) /* taken but never read */
        fpk_dump_close(p->dumps[f]);
    free(p->dumps);
    free(p->users);
    p->dumps = NULL;
    p->users = NULL;
    cli_failure_check(&p->fail);
}

bool scan_add_stats(scan_worker *w, const scan_tensor *t, fpk_stats *stats, int ns)
{
    fpk_dump *d = scan_dump(w, t);
    if (!d)
        return false;
    for (uint64_t first = 0; first < t->t.count;) {
        uint64_t n = t->t.count - first < STATS_CHUNK ? t->t.count - first : STATS_CHUNK;
        fpk_error err;
        if (fpk_stats_add_tensor(stats, ns, d, t->index, first, n, scan_inner(w), &err) != FPK_OK)
            return scan_fail_error(w, &err);
        first += n;
        scan_progress(w, n);
        if (scan_failed(w))
            return false;
    }
    return true;
}

bool scan_read(scan_worker *w, const scan_tensor *t, uint64_t first, size_t n, double *out)
{
    fpk_dump *d = scan_dump(w, t);
    if (!d)
        return false;
    fpk_error err;
    if (fpk_dump_read(d, t->index, first, n, out, &err) != FPK_OK)
        return scan_fail_error(w, &err);
    return true;
}

static void give_back(viewed_span *v, fpk_dump *d)
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
        give_back(v, d);
}

/* One thread of a shared read. */
typedef struct share {
    scan_worker *w; /* the job's worker: its pool, for failures and progress */
    const scan_tensor *t;
    fpk_dump *d;    /* the thread's own open dump (views are per dump) */
    int k;
    size_t max;
    scan_as as;
    scan_next_fn *next;
    scan_chunk_fn *chunk;
    void *arg;
    atomic_size_t *next_chunk; /* the chunk no thread has taken yet */
    bool ok;
} share;

static void *share_run(void *arg)
{
    share *r = arg;
    cli_viewing(fpk_dump_path(r->d));
    uint64_t count = r->t->t.count;
    size_t cap = count < r->max ? (size_t)(count ? count : 1) : r->max;
    size_t size = r->as == SCAN_AS_DOUBLE ? sizeof(double) : fpk_dtype_size(r->t->t.dtype);
    void *buf = NULL; /* made when a chunk cannot be viewed */
    viewed_span seen = {0, 0};
    size_t mine = atomic_fetch_add(r->next_chunk, 1);
    uint64_t pos = 0;
    for (size_t chunk = 0; r->ok && pos < count; chunk++) {
        size_t len = r->next(r->arg, pos, count - pos);
        uint64_t first = pos;
        pos += len;
        if (chunk != mine)
            continue;
        mine = atomic_fetch_add(r->next_chunk, 1);
        fpk_error err;
        const void *data = NULL;
        int rc = FPK_OK;
        if (r->as != SCAN_AS_DOUBLE)
            rc = fpk_dump_view(r->d, r->t->index, first, len, &data, &err);
        if (rc == FPK_OK && !data) {
            if (!buf)
                buf = cli_xcalloc_pages(cap, size);
            data = buf;
            rc = r->as == SCAN_AS_DOUBLE ? fpk_dump_read(r->d, r->t->index, first, len, buf, &err)
                                         : fpk_dump_read_raw(r->d, r->t->index, first, len, buf, &err);
        }
        if (rc != FPK_OK) {
            r->ok = scan_fail_error(r->w, &err);
            break;
        }
        r->ok = r->chunk(r->arg, r->k, data, first, len);
        if (data != buf)
            seen_add(&seen, r->d, data, len * size);
        scan_progress(r->w, len);
        r->ok = r->ok && !scan_failed(r->w);
    }
    if (r->k == 0) { /* the worker's own thread: kept for the next tensor */
        scan_worker *w = r->w;
        if (w->kept_dump != r->d) {
            if (w->kept_dump)
                give_back(&w->kept, w->kept_dump);
            w->kept_dump = r->d;
        }
        if (seen.lo < seen.hi)
            seen_add(&w->kept, r->d, (const void *)seen.lo, seen.hi - seen.lo);
    } else {
        give_back(&seen, r->d);
    }
    cli_viewing(NULL);
    free(buf);
    return NULL;
}

bool scan_share(scan_worker *w, const scan_tensor *t, int nt, size_t max, scan_as as,
                scan_next_fn *next, scan_chunk_fn *chunk, void *arg)
{
    fpk_dump *d = scan_dump(w, t);
    if (!d)
        return false;
    atomic_size_t next_chunk = 0;
    share *sh = cli_xcalloc((size_t)nt, sizeof *sh);
    pthread_t *tid = cli_xcalloc((size_t)nt, sizeof *tid);
    bool *started = cli_xcalloc((size_t)nt, sizeof *started);
    for (int k = 0; k < nt; k++)
        sh[k] = (share){.w = w, .t = t, .d = d, .k = k, .max = max, .as = as, .next = next,
                        .chunk = chunk, .arg = arg, .next_chunk = &next_chunk, .ok = true};
    for (int k = 1; k < nt; k++)
        started[k] = pthread_create(&tid[k], NULL, share_run, &sh[k]) == 0;
    share_run(&sh[0]);
    bool ok = sh[0].ok;
    for (int k = 1; k < nt; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            share_run(&sh[k]); /* (no thread for it: here, after the first) */
        ok &= sh[k].ok;
    }
    free(started);
    free(tid);
    free(sh);
    return ok;
}

#define FLOATS_CHUNK ((size_t)1 << 20) /* elements of scan_read_floats' chunks at most */

/* A tensor read whole into float32. */
typedef struct floats {
    float *x;
    bool f32; /* read as stored, else as doubles */
} floats;

static size_t floats_next(void *arg, uint64_t pos, uint64_t left)
{
    (void)arg, (void)pos;
    return left < FLOATS_CHUNK ? (size_t)left : FLOATS_CHUNK;
}

static bool floats_copy(void *arg, int k, const void *data, uint64_t first, size_t n)
{
    (void)k;
    floats *b = arg;
    fpk_ctx c = fpk_ctx_default();
    if (b->f32)
        memcpy(b->x + first, data, n * sizeof *b->x);
    else
        fpk_array_quantize(&fpk_fp32, b->x + first, FPK_DTYPE_F64, data, n, &c, 1);
    return true;
}

bool scan_read_floats(scan_worker *w, const scan_tensor *t, int nt, float *x)
{
    floats b = {.x = x, .f32 = t->t.dtype == FPK_DTYPE_F32};
    return scan_share(w, t, nt, FLOATS_CHUNK, b.f32 ? SCAN_AS_STORED : SCAN_AS_DOUBLE,
                      floats_next, floats_copy, &b);
}
