/* Tensor dumps: opening a file and recognising its kind, its files and
 * their errors, raw files, and the accessors.  Reading elements is in
 * dump_read.c; the stored tensors become tensors in present.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump-impl.h"

static void path_verror(fpk_error *err, int code, const char *path, const char *fmt, va_list ap)
{
    if (!err)
        return;
    err->code = code;
    size_t len = strlen(path);
    int n = snprintf(err->msg, sizeof err->msg, "%s%s: ", len > 160 ? "..." : "",
                     len > 160 ? path + len - 157 : path);
    if (n < 0 || (size_t)n >= sizeof err->msg)
        n = 0;
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
}

int fpki_path_error(fpk_error *err, int code, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    path_verror(err, code, path, fmt, ap);
    va_end(ap);
    return code;
}

int fpki_dump_error(fpk_error *err, int code, const fpk_dump *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    path_verror(err, code, d->path, fmt, ap);
    va_end(ap);
    return code;
}

/* The name of shard K in messages: its path from the dump's directory. */
static const char *shard_name(const fpk_dump *d, uint32_t k)
{
    const char *slash = strrchr(d->path, '/');
    size_t dir = slash ? (size_t)(slash + 1 - d->path) : 0;
    const char *p = d->files[k].path;
    return strncmp(p, d->path, dir) == 0 ? p + dir : p;
}

int fpki_file_error(fpk_error *err, int code, const fpk_dump *d, uint32_t k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    path_verror(err, code, d->path, fmt, ap);
    va_end(ap);
    if (err && k > 0 && k < d->nfiles) {
        /* a shard's: the dump's path, then the shard's name */
        char msg[sizeof err->msg];
        size_t len = strlen(d->path);
        size_t head = (size_t)snprintf(NULL, 0, "%s%s: ", len > 160 ? "..." : "",
                                       len > 160 ? d->path + len - 157 : d->path);
        if (head < strlen(err->msg)) {
            snprintf(msg, sizeof msg, "%.*s%s: %s", (int)head, err->msg, shard_name(d, k),
                     err->msg + head);
            memcpy(err->msg, msg, sizeof msg);
        }
    }
    return code;
}

/* ERR, a message about file K's path, as about shard K of D. */
static int shard_error(fpk_error *err, const fpk_dump *d, uint32_t k)
{
    if (!err || k == 0)
        return err ? err->code : FPK_EIO;
    const char *path = d->files[k].path;
    size_t plen = strlen(path);
    const char *rest = err->msg;
    /* the message names PATH (or its end) first: drop it */
    const char *colon = strstr(err->msg, ": ");
    if (colon && (size_t)(colon - err->msg) <= plen + 3)
        rest = colon + 2;
    char text[sizeof err->msg];
    snprintf(text, sizeof text, "%s", rest);
    return fpki_file_error(err, err->code, d, k, "%s", text);
}

int fpki_errno_error(fpk_error *err, const char *path, const char *what, int errnum)
{
    char text[128];
    if (strerror_r(errnum, text, sizeof text) != 0)
        snprintf(text, sizeof text, "error %d", errnum);
    return fpki_path_error(err, FPK_EIO, path, "%s: %s", what, text);
}

void *fpki_io_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX - FPKI_IO_ALIGN)
        return NULL;
    size_t round = (bytes + FPKI_IO_ALIGN - 1) / FPKI_IO_ALIGN * FPKI_IO_ALIGN;
    return aligned_alloc(FPKI_IO_ALIGN, round ? round : FPKI_IO_ALIGN);
}

#define ARENA_BLOCK ((size_t)64 << 10)

void *fpki_arena_alloc(fpki_arena *a, size_t n)
{
    size_t at = (a->used + 15) & ~(size_t)15;
    if (!a->block || n > a->size - at || at > a->size) {
        size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
        char *b = calloc(1, size);
        char **old = realloc(a->old, (a->nold + 1) * sizeof *old);
        if (!b || !old) {
            free(b);
            if (old)
                a->old = old;
            return NULL;
        }
        a->old = old;
        if (n > ARENA_BLOCK / 4) {
            /* a large piece gets a block of its own, the current one kept */
            a->old[a->nold++] = b;
            return b;
        }
        if (a->block)
            a->old[a->nold++] = a->block;
        a->block = b;
        a->size = size;
        at = 0;
    }
    a->used = at + n;
    return a->block + at;
}

char *fpki_arena_copy(fpki_arena *a, const void *p, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *s = fpki_arena_alloc(a, n + 1);
    if (s && n)
        memcpy(s, p, n);
    return s;
}

void fpki_arena_free(fpki_arena *a)
{
    for (size_t i = 0; i < a->nold; i++)
        free(a->old[i]);
    free(a->old);
    free(a->block);
    *a = (fpki_arena){0};
}

const char *fpki_dump_basename(const fpk_dump *d)
{
    const char *slash = strrchr(d->path, '/');
    return slash ? slash + 1 : d->path;
}

bool fpki_shape_size(const uint64_t *shape, int ndim, size_t itemsize, uint64_t *count,
                     uint64_t *bytes)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) {
            *count = *bytes = 0;
            return true;
        }
    uint64_t c = 1;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(c, shape[i], &c))
            return false;
    if (__builtin_mul_overflow(c, (uint64_t)itemsize, bytes))
        return false;
    *count = c;
    return true;
}

void fpki_shape_text(char *buf, size_t len, const uint64_t *shape, int ndim, char open,
                     char close)
{
    size_t used = 0;
    bool cut = false;
    char piece[32];
    for (int i = -1; i <= ndim; i++) {
        if (i < 0)
            snprintf(piece, sizeof piece, "%c", open);
        else if (i == ndim)
            snprintf(piece, sizeof piece, "%s%c", ndim == 1 && open == '(' ? "," : "", close);
        else
            snprintf(piece, sizeof piece, "%s%" PRIu64, i > 0 ? ", " : "", shape[i]);
        size_t n = strlen(piece);
        if (used + n + 4 > len) {
            cut = true;
            break;
        }
        memcpy(buf + used, piece, n);
        used += n;
    }
    if (cut && len >= 4) {
        memcpy(buf + used, "...", 3);
        used += 3;
    }
    if (len > 0)
        buf[used < len ? used : len - 1] = '\0';
}

void fpki_quote_text(char *buf, size_t len, const char *s, size_t n)
{
    if (len == 0)
        return;
    size_t keep = n;
    bool cut = n >= len && len >= 4;
    if (n >= len)
        keep = cut ? len - 4 : len - 1;
    for (size_t i = 0; i < keep; i++) {
        unsigned char ch = (unsigned char)s[i];
        buf[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    if (cut) {
        memcpy(buf + keep, "...", 3);
        keep += 3;
    }
    buf[keep] = '\0';
}

fpki_quoted fpki_quote(const char *s)
{
    fpki_quoted q;
    fpki_quote_text(q.s, sizeof q.s, s, strlen(s));
    return q;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int check_regular(const char *path, const struct stat *st, fpk_error *err)
{
    if (S_ISDIR(st->st_mode))
        return fpki_path_error(err, FPK_EIO, path, "is a directory, not a dump file");
    if (!S_ISREG(st->st_mode))
        return fpki_path_error(err, FPK_EIO, path,
                               "is not a regular file (a FIFO, socket or device)");
    return FPK_OK;
}

/* Opens PATH for reading as a regular file, never blocking (a FIFO
 * without a writer would make a plain open() wait forever); its
 * descriptor in *FD and status in *ST. */
static int open_regular(const char *path, int *fd, struct stat *st, fpk_error *err)
{
    *fd = -1;
    if (stat(path, st) != 0)
        return fpki_errno_error(err, path, "cannot open", errno);
    int rc = check_regular(path, st, err);
    if (rc != FPK_OK)
        return rc;
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (*fd < 0)
        return fpki_errno_error(err, path, "cannot open", errno);
    /* What was opened, should the path have changed since. */
    if (fstat(*fd, st) != 0)
        return fpki_errno_error(err, path, "cannot stat", errno);
    if ((rc = check_regular(path, st, err)) != FPK_OK)
        return rc;
    int fl = fcntl(*fd, F_GETFL);
    if (fl < 0 || fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
        return fpki_errno_error(err, path, "cannot set blocking mode", errno);
    if (st->st_size < 0)
        return fpki_path_error(err, FPK_EIO, path, "has a negative size");
    return FPK_OK;
}

int fpki_dump_add_file(fpk_dump *d, const char *path, uint32_t *k, fpk_error *err)
{
    if (d->nfiles >= UINT32_MAX)
        return fpki_dump_error(err, FPK_ERANGE, d, "too many files");
    fpki_file *v = realloc(d->files, (d->nfiles + 1) * sizeof *v);
    if (!v)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    d->files = v;
    fpki_file *f = &d->files[d->nfiles];
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if (!(f->path = strdup(path)))
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    *k = (uint32_t)d->nfiles++;
    return FPK_OK;
}

/* Closes the shard read least recently that no read is using, when more
 * than FPKI_OPEN_SHARDS are open (LOCK held). */
static void close_oldest(fpk_dump *d)
{
    while (d->nopen > FPKI_OPEN_SHARDS) {
        fpki_file *oldest = NULL;
        for (size_t k = 1; k < d->nfiles; k++) {
            fpki_file *f = &d->files[k];
            if (f->fd >= 0 && f->readers == 0 && (!oldest || f->last < oldest->last))
                oldest = f;
        }
        if (!oldest)
            return;
        close(oldest->fd);
        oldest->fd = -1;
        d->nopen--;
    }
}

/* Opens file K (LOCK held), checking that it is the file first seen. */
static int open_shard(fpk_dump *d, uint32_t k, fpk_error *err)
{
    fpki_file *f = &d->files[k];
    struct stat st;
    int fd;
    int rc = open_regular(f->path, &fd, &st, err);
    if (rc != FPK_OK) {
        if (fd >= 0)
            close(fd);
        return shard_error(err, d, k);
    }
    if (f->size || f->dev || f->ino) {
        if ((uint64_t)st.st_size != f->size || st.st_dev != f->dev || st.st_ino != f->ino) {
            close(fd);
            return fpki_file_error(err, FPK_EIO, d, k, "changed since it was first opened");
        }
    }
    f->size = (uint64_t)st.st_size;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->fd = fd;
    d->nopen++;
    close_oldest(d);
    return FPK_OK;
}

int fpki_file_check(fpk_dump *d, uint32_t k, fpk_error *err)
{
    pthread_mutex_lock(&d->lock);
    int rc = d->files[k].fd >= 0 ? FPK_OK : open_shard(d, k, err);
    pthread_mutex_unlock(&d->lock);
    return rc;
}

int fpki_file_acquire(const fpk_dump *cd, uint32_t k, int *fd, fpk_error *err)
{
    if (k == 0) {
        *fd = cd->files[0].fd;
        return FPK_OK;
    }
    fpk_dump *d = (fpk_dump *)cd; /* the shards' cache changes, not the dump */
    pthread_mutex_lock(&d->lock);
    fpki_file *f = &d->files[k];
    int rc = f->fd >= 0 ? FPK_OK : open_shard(d, k, err);
    if (rc == FPK_OK) {
        f->readers++;
        f->last = ++d->clock;
        *fd = f->fd;
    }
    pthread_mutex_unlock(&d->lock);
    return rc;
}

void fpki_file_release(const fpk_dump *cd, uint32_t k)
{
    if (k == 0)
        return;
    fpk_dump *d = (fpk_dump *)cd;
    pthread_mutex_lock(&d->lock);
    d->files[k].readers--;
    close_oldest(d);
    pthread_mutex_unlock(&d->lock);
}

int fpki_file_pread(const fpk_dump *d, uint32_t k, void *buf, size_t n, uint64_t offset,
                    const char *what, fpk_error *err)
{
    int fd;
    int rc = fpki_file_acquire(d, k, &fd, err);
    if (rc != FPK_OK)
        return rc;
    const fpki_file *f = &d->files[k];
    unsigned char *p = buf;
    while (n > 0 && rc == FPK_OK) {
        ssize_t got = pread(fd, p, n, (off_t)offset);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            char where[80];
            snprintf(where, sizeof where, "reading %s at byte %" PRIu64, what, offset);
            rc = fpki_errno_error(err, f->path, where, errno);
        } else if (got == 0) {
            rc = fpki_path_error(err, FPK_EIO, f->path,
                                 "file ends at byte %" PRIu64 " while reading %s; it was %" PRIu64
                                 " bytes when opened",
                                 offset, what, f->size);
        } else {
            p += got;
            n -= (size_t)got;
            offset += (uint64_t)got;
        }
    }
    fpki_file_release(d, k);
    return rc != FPK_OK ? shard_error(err, d, k) : rc;
}

int fpki_dump_pread(const fpk_dump *d, void *buf, size_t n, uint64_t offset, const char *what,
                    fpk_error *err)
{
    return fpki_file_pread(d, 0, buf, n, offset, what, err);
}

int fpki_add_stored(fpk_dump *d, const fpki_stored *s, size_t *i, fpk_error *err)
{
    if (d->nstored == d->capstored) {
        size_t cap = d->capstored ? 2 * d->capstored : 16;
        fpki_stored *v = realloc(d->stored, cap * sizeof *v);
        if (!v)
            return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory for %zu tensors", cap);
        d->stored = v;
        d->capstored = cap;
    }
    fpki_stored *t = &d->stored[d->nstored];
    *t = *s;
    t->decoder = -1;
    t->used = false;
    t->shape = fpki_arena_alloc(&d->arena, (size_t)(s->ndim ? s->ndim : 1) * sizeof *t->shape);
    if (!(t->name = fpki_arena_copy(&d->arena, s->name, strlen(s->name))) || !t->shape)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    memcpy(t->shape, s->shape, (size_t)s->ndim * sizeof *t->shape);
    if (i)
        *i = d->nstored;
    d->nstored++;
    return FPK_OK;
}

int fpki_add_metadata(fpk_dump *d, const char *key, const char *value, fpk_error *err)
{
    const char **k = realloc(d->meta_keys, (d->nmeta + 1) * sizeof *k);
    if (k)
        d->meta_keys = k;
    const char **v = realloc(d->meta_values, (d->nmeta + 1) * sizeof *v);
    if (v)
        d->meta_values = v;
    if (!k || !v)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory for metadata");
    k[d->nmeta] = fpki_arena_copy(&d->arena, key, strlen(key));
    v[d->nmeta] = fpki_arena_copy(&d->arena, value, strlen(value));
    if (!k[d->nmeta] || !v[d->nmeta])
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory for metadata");
    d->nmeta++;
    return FPK_OK;
}

/* A raw file: SPEC's dtype and shape, the elements filling the file. */
static int raw_open(fpk_dump *d, const fpk_raw_spec *spec, fpk_error *err)
{
    if ((unsigned)spec->dtype >= FPK_DTYPE_COUNT)
        return fpki_dump_error(err, FPK_ERANGE, d, "raw dtype %d is not a dtype", (int)spec->dtype);
    if (spec->ndim < 0 || spec->ndim > FPK_MAX_DIMS)
        return fpki_dump_error(err, FPK_ERANGE, d,
                               "raw shape has %d dimensions; 0 to %d are allowed", spec->ndim,
                               FPK_MAX_DIMS);
    size_t size = fpk_dtype_size(spec->dtype);
    const char *name = fpk_dtype_name(spec->dtype);
    uint64_t fsize = d->files[0].size;
    if (fsize % size != 0)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "file is %" PRIu64
                               " bytes, not a whole number of %zu-byte %s elements",
                               fsize, size, name);
    /* fpk_dtype and fpki_stype number the six dtypes alike */
    uint64_t shape_of[FPK_MAX_DIMS];
    fpki_stored s = {.name = fpki_dump_basename(d), .stype = (fpki_stype)spec->dtype,
                     .big_endian = spec->big_endian, .count = fsize / size, .shape = shape_of};
    if (spec->ndim == 0) {
        s.ndim = 1;
        s.shape[0] = s.count;
        return fpki_add_stored(d, &s, NULL, err);
    }
    s.ndim = spec->ndim;
    memcpy(s.shape, spec->shape, (size_t)spec->ndim * sizeof s.shape[0]);
    uint64_t count, bytes;
    if (!fpki_shape_size(s.shape, s.ndim, size, &count, &bytes) || count != s.count) {
        char shape[128];
        fpki_shape_text(shape, sizeof shape, s.shape, s.ndim, '[', ']');
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "raw shape %s does not hold the file's %" PRIu64
                               " %s elements (%" PRIu64 " bytes)",
                               shape, s.count, name, fsize);
    }
    return fpki_add_stored(d, &s, NULL, err);
}

/* The kind of D from its first bytes, then its extension. */
static int open_contents(fpk_dump *d, fpk_error *err)
{
    static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    unsigned char head[9];
    uint64_t size = d->files[0].size;
    size_t n = size < sizeof head ? (size_t)size : sizeof head;
    if (n == 0)
        return fpki_dump_error(err, FPK_EFORMAT, d, "file is empty");
    int rc = fpki_dump_pread(d, head, n, 0, "the first bytes", err);
    if (rc != FPK_OK)
        return rc;
    if (memcmp(head, npy_magic, n < 6 ? n : 6) == 0)
        return fpki_npy_open(d, err);
    if (n == 9 && head[8] == '{')
        return fpki_safetensors_open(d, err);
    if (n >= 4 && (memcmp(head, "PK\x03\x04", 4) == 0 || memcmp(head, "PK\x05\x06", 4) == 0))
        return fpki_torch_open(d, err);
    if (has_suffix(d->path, ".npy"))
        return fpki_npy_open(d, err);
    if (has_suffix(d->path, ".safetensors"))
        return fpki_safetensors_open(d, err);
    if (has_suffix(d->path, ".index.json"))
        return fpki_index_open(d, err);
    /* torch.save's format before PyTorch 1.6: pickles one after another,
     * the first a magic number (LONG1 0x1950a86a20f9469cfc6c). */
    static const unsigned char legacy[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c};
    if (n >= sizeof legacy && memcmp(head, legacy, sizeof legacy) == 0)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "a torch.save file of the legacy format (before PyTorch 1.6), "
                               "which is not read: load it with torch.load and save it again "
                               "with torch.save, or with safetensors.torch.save_file");
    if (head[0] == 0x80 && n >= 2 && head[1] >= 2 && head[1] <= 5)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "a bare pickle, not a torch.save file: save its tensors with "
                               "torch.save or safetensors.torch.save_file");
    return fpki_dump_error(err, FPK_EFORMAT, d,
                           "neither a .npy file (no \\x93NUMPY magic at byte 0), safetensors "
                           "(no '{' at byte 8), a torch.save zip (no PK at byte 0) nor an "
                           "*.index.json; a raw file needs its dtype and shape");
}

int fpk_dump_open(const char *path, const fpk_raw_spec *raw, fpk_dump **dp, fpk_error *err)
{
    *dp = NULL;
    fpk_dump *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path ? path : "(null)"))) {
        free(d);
        if (err) {
            err->code = FPK_ENOMEM;
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", path ? path : "(null)");
        }
        return FPK_ENOMEM;
    }
    pthread_mutex_init(&d->lock, NULL);
    d->kind = raw ? "raw" : "";
    uint32_t k;
    int rc = path ? fpki_dump_add_file(d, path, &k, err)
                  : fpki_dump_error(err, FPK_EIO, d, "no file name given");
    if (rc == FPK_OK) {
        struct stat st;
        rc = open_regular(path, &d->files[0].fd, &st, err);
        if (rc == FPK_OK) {
            d->files[0].size = (uint64_t)st.st_size;
            d->files[0].dev = st.st_dev;
            d->files[0].ino = st.st_ino;
        }
    }
    if (rc == FPK_OK)
        rc = raw ? raw_open(d, raw, err) : open_contents(d, err);
    if (rc == FPK_OK)
        rc = fpki_present(d, err);
    if (rc != FPK_OK) {
        fpk_dump_close(d);
        return rc;
    }
    *dp = d;
    return FPK_OK;
}

void fpk_dump_close(fpk_dump *d)
{
    if (!d)
        return;
    fpki_unmap_files(d);
    for (size_t k = 0; k < d->nfiles; k++) {
        if (d->files[k].fd >= 0)
            close(d->files[k].fd);
        free(d->files[k].path);
    }
    free(d->files);
    fpki_decoders_free(d);
    pthread_mutex_destroy(&d->lock);
    free(d->meta_keys);
    free(d->meta_values);
    free(d->stored);
    free(d->tensors);
    free(d->sources);
    free(d->skipped);
    fpki_arena_free(&d->arena);
    free(d->path);
    free(d);
}

const char *fpk_dump_path(const fpk_dump *d)
{
    return d->path;
}

const char *fpk_dump_kind(const fpk_dump *d)
{
    return d->kind;
}

size_t fpk_dump_ntensors(const fpk_dump *d)
{
    return d->ntensors;
}

const fpk_tensor *fpk_dump_tensor(const fpk_dump *d, size_t i)
{
    return i < d->ntensors ? &d->tensors[i] : NULL;
}

size_t fpk_dump_nskipped(const fpk_dump *d)
{
    return d->nskipped;
}

const fpk_skipped *fpk_dump_skipped(const fpk_dump *d, size_t i)
{
    return i < d->nskipped ? &d->skipped[i] : NULL;
}

const char *fpk_dump_metadata(const fpk_dump *d, const char *key)
{
    for (size_t i = 0; key && i < d->nmeta; i++)
        if (strcmp(d->meta_keys[i], key) == 0)
            return d->meta_values[i];
    return NULL;
}
