/* Tensor dumps: opening a file and recognising its kind, raw files, the
 * accessors, and reading elements in chunks as doubles. */
#define _DEFAULT_SOURCE /* madvise, beside POSIX */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump-impl.h"
#include "core-impl.h"

/* glibc declares them for _GNU_SOURCE only, which would also bring the GNU
 * strerror_r; the values are Linux's (<linux/fs.h>), fixed since 3.1. */
#if defined(__linux__) && !defined(SEEK_DATA)
#define SEEK_DATA 3
#define SEEK_HOLE 4
#endif

/* Bytes read per pread by fpk_dump_read: memory stays this small whatever
 * the file's size. */
#define FPKI_READ_CHUNK 16384

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

int fpki_dump_pread(const fpk_dump *d, void *buf, size_t n, uint64_t offset, const char *what,
                    fpk_error *err)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = pread(d->fd, p, n, (off_t)offset);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            char where[80];
            snprintf(where, sizeof where, "reading %s at byte %" PRIu64, what, offset);
            return fpki_errno_error(err, d->path, where, errno);
        }
        if (got == 0)
            return fpki_dump_error(err, FPK_EIO, d,
                                   "file ends at byte %" PRIu64 " while reading %s; it was %" PRIu64
                                   " bytes when opened",
                                   offset, what, d->size);
        p += got;
        n -= (size_t)got;
        offset += (uint64_t)got;
    }
    return FPK_OK;
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
    if (d->size % size != 0)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "file is %" PRIu64
                               " bytes, not a whole number of %zu-byte %s elements",
                               d->size, size, name);
    fpk_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    d->tensors = t;
    d->ntensors = 1;
    t->name = fpki_dump_basename(d);
    t->dtype = spec->dtype;
    t->big_endian = spec->big_endian;
    t->count = d->size / size;
    if (spec->ndim == 0) {
        t->ndim = 1;
        t->shape[0] = t->count;
        return FPK_OK;
    }
    t->ndim = spec->ndim;
    memcpy(t->shape, spec->shape, (size_t)spec->ndim * sizeof t->shape[0]);
    uint64_t count, bytes;
    if (!fpki_shape_size(t->shape, t->ndim, size, &count, &bytes) || count != t->count) {
        char shape[128];
        fpki_shape_text(shape, sizeof shape, t->shape, t->ndim, '[', ']');
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "raw shape %s does not hold the file's %" PRIu64
                               " %s elements (%" PRIu64 " bytes)",
                               shape, t->count, name, d->size);
    }
    return FPK_OK;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int check_regular(fpk_dump *d, const struct stat *st, fpk_error *err)
{
    if (S_ISDIR(st->st_mode))
        return fpki_dump_error(err, FPK_EIO, d, "is a directory, not a dump file");
    if (!S_ISREG(st->st_mode))
        return fpki_dump_error(err, FPK_EIO, d, "is not a regular file (a FIFO, socket or device)");
    return FPK_OK;
}

/* Opens d->path for reading as a regular file, never blocking: a FIFO
 * without a writer would make a plain open() wait forever. */
static int open_regular(fpk_dump *d, fpk_error *err)
{
    struct stat st;
    if (stat(d->path, &st) != 0)
        return fpki_errno_error(err, d->path, "cannot open", errno);
    int rc = check_regular(d, &st, err);
    if (rc != FPK_OK)
        return rc;
    d->fd = open(d->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (d->fd < 0)
        return fpki_errno_error(err, d->path, "cannot open", errno);
    /* What was opened, should the path have changed since. */
    if (fstat(d->fd, &st) != 0)
        return fpki_errno_error(err, d->path, "cannot stat", errno);
    if ((rc = check_regular(d, &st, err)) != FPK_OK)
        return rc;
    int fl = fcntl(d->fd, F_GETFL);
    if (fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
        return fpki_errno_error(err, d->path, "cannot set blocking mode", errno);
    if (st.st_size < 0)
        return fpki_dump_error(err, FPK_EIO, d, "has a negative size");
    d->size = (uint64_t)st.st_size;
    return FPK_OK;
}

/* The kind of D from its first bytes, then its extension. */
static int open_contents(fpk_dump *d, fpk_error *err)
{
    static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    unsigned char head[9];
    size_t n = d->size < sizeof head ? (size_t)d->size : sizeof head;
    if (n == 0)
        return fpki_dump_error(err, FPK_EFORMAT, d, "file is empty");
    int rc = fpki_dump_pread(d, head, n, 0, "the first bytes", err);
    if (rc != FPK_OK)
        return rc;
    if (memcmp(head, npy_magic, n < 6 ? n : 6) == 0)
        return fpki_npy_open(d, err);
    if (n == 9 && head[8] == '{')
        return fpki_safetensors_open(d, err);
    if (has_suffix(d->path, ".npy"))
        return fpki_npy_open(d, err);
    if (has_suffix(d->path, ".safetensors"))
        return fpki_safetensors_open(d, err);
    /* What people give instead, named for what it is. */
    if (n >= 4 && memcmp(head, "PK\x03\x04", 4) == 0)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "a zip file, as torch.save writes (a .pt or .bin checkpoint), "
                               "which is not read: save its tensors with "
                               "safetensors.torch.save_file, or as .npy");
    if (head[0] == 0x80 && n >= 2 && head[1] >= 2 && head[1] <= 5)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "a pickle (a torch.save file of the legacy format?), which is "
                               "not read: save its tensors with safetensors.torch.save_file");
    if (head[0] == '{' && has_suffix(d->path, ".index.json"))
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "the index of a sharded safetensors model: give its shards, or "
                               "the directory that holds them");
    return fpki_dump_error(err, FPK_EFORMAT, d,
                           "neither a .npy file (no \\x93NUMPY magic at byte 0) nor safetensors "
                           "(no '{' at byte 8); a raw file needs its dtype and shape");
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
    d->fd = -1;
    d->kind = raw ? "raw" : "";
    int rc = path ? open_regular(d, err)
                  : fpki_dump_error(err, FPK_EIO, d, "no file name given");
    if (rc == FPK_OK)
        rc = raw ? raw_open(d, raw, err) : open_contents(d, err);
    if (rc != FPK_OK) {
        fpk_dump_close(d);
        return rc;
    }
    *dp = d;
    return FPK_OK;
}

/* fpk_dump_view's mark of a file it cannot map. */
static const char fpki_no_map[1];

void fpk_dump_close(fpk_dump *d)
{
    if (!d)
        return;
    const char *map = atomic_load(&d->map);
    if (map && map != fpki_no_map)
        munmap((void *)map, (size_t)d->size);
    if (d->fd >= 0)
        close(d->fd);
    if (d->names)
        for (size_t i = 0; i < d->ntensors; i++)
            free(d->names[i]);
    for (size_t i = 0; i < d->nmeta; i++) {
        free(d->meta_keys[i]);
        free(d->meta_values[i]);
    }
    free(d->meta_keys);
    free(d->meta_values);
    free(d->names);
    free(d->tensors);
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

const char *fpk_dump_metadata(const fpk_dump *d, const char *key)
{
    for (size_t i = 0; key && i < d->nmeta; i++)
        if (strcmp(d->meta_keys[i], key) == 0)
            return d->meta_values[i];
    return NULL;
}

/* A, an encoding of F, as the fp64 encoding of the same value: what
 * fpk_convert(&fpk_fp64, f, a) gives (NaN: the canonical NaN), without the
 * general rounding path, ten times faster.  Exact because every dtype's
 * format but fp64 has fewer significand bits and a narrower exponent range
 * than fp64; even its subnormals are fp64 normals. */
static inline uint64_t widen(const fpk_format *f, fpk_bits a)
{
    uint64_t sign = (a & f->sign_mask) ? UINT64_C(1) << 63 : 0;
    fpk_bits mag = a & (f->exp_mask | f->man_mask);
    if (mag > f->max_finite)
        return mag == f->inf ? sign | fpk_fp64.inf : fpk_fp64.nan;
    if (f == &fpk_fp64)
        return a;
    if (mag == 0)
        return sign;
    int64_t exp = (int64_t)(mag >> f->man_bits);
    uint64_t man = mag & f->man_mask;
    if (exp == 0) {
        /* man * 2^(emin - man_bits) = 1.frac * 2^(top + emin - man_bits):
         * the biased exponent of a normal would be 1 - (man_bits - top). */
        int shift = f->man_bits - (63 - fpki_clz64(man));
        exp = 1 - shift;
        man = (man << shift) & f->man_mask;
    }
    return sign | (uint64_t)(exp - f->bias + fpk_fp64.bias) << fpk_fp64.man_bits |
           man << (fpk_fp64.man_bits - f->man_bits);
}

/* The SIZE-byte element at P, in the byte order given: assembled from
 * bytes, so the host's own order never matters. */
static inline fpk_bits load(const unsigned char *p, size_t size, bool big)
{
    fpk_bits bits = 0;
    if (big)
        for (size_t b = 0; b < size; b++)
            bits = bits << 8 | p[b];
    else
        for (size_t b = size; b-- > 0;)
            bits = bits << 8 | p[b];
    return bits;
}

static inline void store(double *out, uint64_t bits)
{
    memcpy(out, &bits, sizeof *out);
}

/* Whether the N little-endian float32 at P hold a subnormal, an infinity or
 * a NaN. */
static bool fp32_special(const unsigned char *p, size_t n)
{
    uint32_t any = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t u;
        memcpy(&u, p + 4 * j, sizeof u);
        uint32_t e = u >> 23 & 0xff;
        any |= (e == 0xff) | ((e == 0) & ((u & 0x7fffffu) != 0));
    }
    return any;
}

/* OUT[0..N-1] := the N elements of F at P.  One loop per element size, so
 * that each is compiled with its size known. */
static void convert(const fpk_format *f, size_t size, bool big, const unsigned char *p, size_t n,
                    double *out)
{
    switch (size) {
    case 1:
        for (size_t j = 0; j < n; j++)
            store(out + j, widen(f, p[j]));
        break;
    case 2:
        for (size_t j = 0; j < n; j++)
            store(out + j, widen(f, load(p + 2 * j, 2, big)));
        break;
    case 4:
        if (f == &fpk_fp32 && !big && !fp32_special(p, n)) {
            /* the common case: normals and zeros, in loops that vectorise */
            for (size_t j = 0; j < n; j++) {
                uint32_t u;
                memcpy(&u, p + 4 * j, sizeof u);
                uint64_t sign = (uint64_t)(u >> 31) << 63, mag = u & 0x7fffffffu;
                store(out + j, sign | (mag ? (mag << 29) + ((uint64_t)896 << 52) : 0));
            }
            break;
        }
        for (size_t j = 0; j < n; j++)
            store(out + j, widen(f, load(p + 4 * j, 4, big)));
        break;
    default:
        for (size_t j = 0; j < n; j++)
            store(out + j, widen(f, load(p + 8 * j, 8, big)));
        break;
    }
}

/* Whether the bytes of D from OFFSET on are data or a hole (which reads as
 * zeros), and where that run ends, at most at END: lseek's SEEK_DATA and
 * SEEK_HOLE, which a file system without holes answers with "data up to
 * the end of the file".  Where they are missing or fail, all is data.  A
 * hole reported up to the end of the file counts only while the file is
 * still long enough, so a file that shrank since it was opened fails in
 * the read as it should.  The file position, unused by pread, moves. */
static uint64_t extent_at(const fpk_dump *d, uint64_t offset, uint64_t end, bool *data)
{
    *data = true;
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
    off_t next = lseek(d->fd, (off_t)offset, SEEK_DATA);
    struct stat st;
    if (next < 0 && errno == ENXIO && fstat(d->fd, &st) == 0 && (uint64_t)st.st_size >= end) {
        *data = false;
        return end;
    }
    if (next < 0)
        return end;
    if ((uint64_t)next > offset) {
        *data = false;
        return (uint64_t)next < end ? (uint64_t)next : end;
    }
    off_t hole = lseek(d->fd, (off_t)offset, SEEK_HOLE);
    if (hole >= 0 && (uint64_t)hole > offset && (uint64_t)hole < end)
        return (uint64_t)hole;
#endif
    return end;
}

/* Reverses the byte order of N elements of SIZE bytes at P. */
static void swap_bytes(void *p, size_t size, size_t n)
{
    if (size == 2)
        for (uint16_t *q = p; n--; q++)
            *q = __builtin_bswap16(*q);
    else if (size == 4)
        for (uint32_t *q = p; n--; q++)
            *q = __builtin_bswap32(*q);
    else if (size == 8)
        for (uint64_t *q = p; n--; q++)
            *q = __builtin_bswap64(*q);
}

/* Checks that elements FIRST .. FIRST+N-1 of tensor I exist. */
static int check_range(const fpk_dump *d, size_t i, uint64_t first, size_t n, fpk_error *err)
{
    if (i >= d->ntensors)
        return fpki_dump_error(err, FPK_ERANGE, d, "tensor %zu requested; the file has %zu", i,
                               d->ntensors);
    const fpk_tensor *t = &d->tensors[i];
    if (first > t->count || n > t->count - first) {
        char name[64];
        fpki_quote_text(name, sizeof name, t->name, strlen(t->name));
        return fpki_dump_error(err, FPK_ERANGE, d,
                               "%zu elements from element %" PRIu64
                               " requested; tensor \"%s\" has %" PRIu64,
                               n, first, name, t->count);
    }
    return FPK_OK;
}

/* Whether T's elements are stored in the other byte order than the host's. */
static bool stored_swapped(const fpk_tensor *t)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return !t->big_endian;
#else
    return t->big_endian;
#endif
}

/* The whole file mapped (threads may ask at once: the first mapping
 * stored is kept), or NULL where it cannot be. */
static const char *dump_map(fpk_dump *d)
{
    const char *map = atomic_load_explicit(&d->map, memory_order_acquire);
    if (!map) {
        void *p = MAP_FAILED;
        if (d->size > 0 && d->size <= SIZE_MAX)
            p = mmap(NULL, (size_t)d->size, PROT_READ, MAP_SHARED, d->fd, 0);
        const char *mine = p == MAP_FAILED ? fpki_no_map : p;
        map = NULL;
        if (atomic_compare_exchange_strong(&d->map, &map, mine))
            map = mine;
        else if (p != MAP_FAILED)
            munmap(p, (size_t)d->size);
    }
    return map == fpki_no_map ? NULL : map;
}

/* Tensor I of D in *T, and the byte offset in the file of its element
 * FIRST in *AT, once check_range has passed elements FIRST .. FIRST+N-1;
 * FPK_OK with *T NULL when N is 0. */
static int locate(const fpk_dump *d, size_t i, uint64_t first, size_t n, const fpk_tensor **t,
                  uint64_t *at, fpk_error *err)
{
    *t = NULL;
    int rc = check_range(d, i, first, n, err);
    if (rc != FPK_OK || n == 0)
        return rc;
    *t = &d->tensors[i];
    /* Validated when opened: offset + count * size lies inside the file. */
    *at = (*t)->offset + first * fpk_dtype_size((*t)->dtype);
    return FPK_OK;
}

int fpk_dump_view(fpk_dump *d, size_t i, uint64_t first, size_t n, const void **p,
                  fpk_error *err)
{
    *p = NULL;
    const fpk_tensor *t;
    uint64_t at;
    int rc = locate(d, i, first, n, &t, &at, err);
    if (rc != FPK_OK || !t)
        return rc;
    size_t size = fpk_dtype_size(t->dtype);
    if ((size > 1 && stored_swapped(t)) || at % size != 0)
        return FPK_OK;
    const char *map = dump_map(d);
    if (map)
        *p = map + at;
    return FPK_OK;
}

void fpk_dump_unview(fpk_dump *d, const void *p, size_t bytes)
{
    const char *map = atomic_load_explicit(&d->map, memory_order_acquire);
    uintptr_t at = (uintptr_t)p, base = (uintptr_t)map;
    if (!map || map == fpki_no_map || at < base || at - base > d->size ||
        bytes > d->size - (at - base))
        return; /* not a view of D's */
#if defined(MADV_DONTNEED)
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    /* every page it touches (the mapping's, which starts a page): one that
     * holds other views' elements too maps again when they are read */
    uintptr_t from = at / (uintptr_t)page * (uintptr_t)page;
    uintptr_t to = (at + bytes + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    if (from < to)
        madvise((void *)from, to - from, MADV_DONTNEED);
#endif
}

int fpk_dump_read_raw(fpk_dump *d, size_t i, uint64_t first, size_t n, void *out,
                      fpk_error *err)
{
    const fpk_tensor *t;
    uint64_t at;
    int rc = locate(d, i, first, n, &t, &at, err);
    if (rc != FPK_OK || !t)
        return rc;
    size_t size = fpk_dtype_size(t->dtype);
    rc = fpki_dump_pread(d, out, n * size, at, "tensor data", err);
    if (rc == FPK_OK && stored_swapped(t))
        swap_bytes(out, size, n);
    return rc;
}

int fpk_dump_read(fpk_dump *d, size_t i, uint64_t first, size_t n, double *out, fpk_error *err)
{
    int rc = check_range(d, i, first, n, err);
    if (rc != FPK_OK)
        return rc;
    const fpk_tensor *t = &d->tensors[i];
    const fpk_format *f = fpk_dtype_format(t->dtype);
    size_t size = fpk_dtype_size(t->dtype);
    /* Validated when opened: offset + count * size lies inside the file. */
    uint64_t offset = t->offset + first * size, end = offset + (uint64_t)n * size;
    uint64_t run_end = offset; /* where the current data or hole run ends */
    bool data = true;
    unsigned char buf[FPKI_READ_CHUNK] __attribute__((aligned(FPKI_IO_ALIGN)));
    while (n > 0) {
        if (offset >= run_end)
            run_end = extent_at(d, offset, end, &data);
        size_t k = n < sizeof buf / size ? n : sizeof buf / size;
        if (!data) {
            /* Zero bytes are +0 in every dtype, whose double is all zero
             * bytes too; an element that runs out of the hole is read. */
            uint64_t whole = (run_end - offset) / size;
            if (whole > 0) {
                k = whole < n ? (size_t)whole : n;
                memset(out, 0, k * sizeof *out);
                out += k;
                n -= k;
                offset += (uint64_t)k * size;
                continue;
            }
            run_end = offset + size;
        }
        int rc = fpki_dump_pread(d, buf, k * size, offset, "tensor data", err);
        if (rc != FPK_OK)
            return rc;
        convert(f, size, t->big_endian, buf, k, out);
        out += k;
        n -= k;
        offset += (uint64_t)k * size;
    }
    return FPK_OK;
}
