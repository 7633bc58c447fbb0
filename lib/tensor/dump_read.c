/* Reading a dump's elements: converted exactly to double, as stored, or
 * in place in a mapping of their file; strided views gathered, decoded
 * tensors computed (quant_decode.c). */
#define _DEFAULT_SOURCE /* madvise, beside POSIX */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core-impl.h"
#include "dump-impl.h"

/* glibc declares them for _GNU_SOURCE only, which would also bring the GNU
 * strerror_r; the values are Linux's (<linux/fs.h>), fixed since 3.1. */
#if defined(__linux__) && !defined(SEEK_DATA)
#define SEEK_DATA 3
#define SEEK_HOLE 4
#endif

/* Bytes read per pread by fpk_dump_read: memory stays this small whatever
 * the file's size. */
#define FPKI_READ_CHUNK 16384

/* The window a strided view's elements are gathered through. */
#define GATHER_WINDOW ((size_t)1 << 20)

/* A, an encoding of F, as the fp64 encoding of the same value: what
 * fpk_convert(&fpk_fp64, f, a) gives (NaN: the canonical NaN), without the
 * general rounding path, which costs far more per element.  Exact because
 * every dtype's format but fp64 has fewer significand bits and a narrower
 * exponent range than fp64; even its subnormals are fp64 normals. */
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

/* Whether the bytes of file FD from OFFSET on are data or a hole (which reads as
 * zeros), and where that run ends, at most at END: lseek's SEEK_DATA and
 * SEEK_HOLE, which a file system without holes answers with "data up to
 * the end of the file".  Where they are missing or fail, all is data.  A
 * hole reported up to the end of the file counts only while the file is
 * still long enough, so a file that shrank since it was opened fails in
 * the read as it should.  The file position, unused by pread, moves. */
static uint64_t extent_at(int fd, uint64_t offset, uint64_t end, bool *data)
{
    *data = true;
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
    off_t next = lseek(fd, (off_t)offset, SEEK_DATA);
    struct stat st;
    if (next < 0 && errno == ENXIO && fstat(fd, &st) == 0 && (uint64_t)st.st_size >= end) {
        *data = false;
        return end;
    }
    if (next < 0)
        return end;
    if ((uint64_t)next > offset) {
        *data = false;
        return (uint64_t)next < end ? (uint64_t)next : end;
    }
    off_t hole = lseek(fd, (off_t)offset, SEEK_HOLE);
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

/* Whether elements stored in the byte order BIG are the other order than
 * the host's. */
static bool swapped(bool big)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return !big;
#else
    return big;
#endif
}

/* fpk_dump_view's mark of a file it cannot map. */
static const char fpki_no_map[1];

/* File K mapped whole (threads may ask at once: the first mapping stored
 * is kept), or NULL where it cannot be. */
static const char *file_map(fpk_dump *d, uint32_t k)
{
    fpki_file *f = &d->files[k];
    const char *map = atomic_load_explicit(&f->map, memory_order_acquire);
    if (!map) {
        void *p = MAP_FAILED;
        int fd;
        fpk_error err;
        if (f->size > 0 && f->size <= SIZE_MAX && fpki_file_acquire(d, k, &fd, &err) == FPK_OK) {
            p = mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED, fd, 0);
            fpki_file_release(d, k);
        }
        const char *mine = p == MAP_FAILED ? fpki_no_map : p;
        map = NULL;
        if (atomic_compare_exchange_strong(&f->map, &map, mine))
            map = mine;
        else if (p != MAP_FAILED)
            munmap(p, (size_t)f->size);
    }
    return map == fpki_no_map ? NULL : map;
}

void fpki_unmap_files(fpk_dump *d)
{
    for (size_t k = 0; k < d->nfiles; k++) {
        const char *map = atomic_load(&d->files[k].map);
        if (map && map != fpki_no_map)
            munmap((void *)map, (size_t)d->files[k].size);
    }
}

/* The stored tensor behind plain or strided tensor I. */
static const fpki_stored *stored_of(const fpk_dump *d, size_t i)
{
    return &d->stored[d->sources[i].stored];
}

int fpk_dump_view(fpk_dump *d, size_t i, uint64_t first, size_t n, const void **p,
                  fpk_error *err)
{
    *p = NULL;
    int rc = check_range(d, i, first, n, err);
    const fpk_tensor *t = &d->tensors[i];
    if (rc != FPK_OK || n == 0 || t->layout != FPK_LAYOUT_PLAIN)
        return rc;
    size_t size = fpk_dtype_size(t->dtype);
    /* Validated when opened: offset + count * size lies inside the file. */
    uint64_t at = t->offset + first * size;
    if ((size > 1 && swapped(t->big_endian)) || at % size != 0)
        return FPK_OK;
    const char *map = file_map(d, stored_of(d, i)->file);
    if (map)
        *p = map + at;
    return FPK_OK;
}

void fpk_dump_unview(fpk_dump *d, const void *p, size_t bytes)
{
    for (size_t k = 0; k < d->nfiles; k++) {
        const char *map = atomic_load_explicit(&d->files[k].map, memory_order_acquire);
        uintptr_t at = (uintptr_t)p, base = (uintptr_t)map;
        uint64_t size = d->files[k].size;
        if (!map || map == fpki_no_map || at < base || at - base > size ||
            bytes > size - (at - base))
            continue; /* not a view of this file's */
#if defined(MADV_DONTNEED)
        long page = sysconf(_SC_PAGESIZE);
        if (page <= 0)
            return;
        /* every page it touches (the mapping's, which starts a page): one
         * that holds other views' elements too maps again when read */
        uintptr_t from = at / (uintptr_t)page * (uintptr_t)page;
        uintptr_t to = (at + bytes + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
        if (from < to)
            madvise((void *)from, to - from, MADV_DONTNEED);
#endif
        return;
    }
}

/* The byte offset of element E (row-major) of strided stored tensor S. */
static uint64_t strided_offset(const fpki_stored *s, uint64_t e, size_t size)
{
    uint64_t off = 0;
    for (int k = s->ndim - 1; k >= 0; k--) {
        uint64_t idx = s->shape[k] ? e % s->shape[k] : 0;
        e = s->shape[k] ? e / s->shape[k] : 0;
        off += idx * (uint64_t)s->strides[k];
    }
    return s->offset + off * size;
}

/* Elements FIRST .. FIRST+N-1 (row-major) of strided S into OUT: each run
 * of elements that are neighbours in the file read at once, through a
 * window of GATHER_WINDOW bytes (validated when opened: every element
 * lies inside the file). */
static int gather(fpk_dump *d, const fpki_stored *s, uint64_t first, size_t n,
                  unsigned char *out, fpk_error *err)
{
    size_t size = (size_t)(fpki_stype_of(s->stype)->bits / 8);
    unsigned char *win = NULL;
    uint64_t lo = 0, hi = 0; /* the window's bytes of the file */
    int rc = FPK_OK;
    for (size_t j = 0; j < n && rc == FPK_OK;) {
        uint64_t at = strided_offset(s, first + j, size);
        /* the run: following elements one element apart */
        size_t run = 1;
        while (j + run < n && run < GATHER_WINDOW / size &&
               strided_offset(s, first + j + run, size) == at + run * size)
            run++;
        if (run * size >= GATHER_WINDOW / 4) {
            rc = fpki_file_pread(d, s->file, out + j * size, run * size, at, "tensor data", err);
            j += run;
            continue;
        }
        if (at < lo || at + size > hi) {
            if (!win && !(win = malloc(GATHER_WINDOW))) {
                rc = fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
                break;
            }
            uint64_t fsize = d->files[s->file].size;
            lo = at;
            hi = fsize - at < GATHER_WINDOW ? fsize : at + GATHER_WINDOW;
            rc = fpki_file_pread(d, s->file, win, (size_t)(hi - lo), lo, "tensor data", err);
            if (rc != FPK_OK)
                break;
        }
        size_t take = at + run * size <= hi ? run : (size_t)((hi - at) / size);
        memcpy(out + j * size, win + (at - lo), take * size);
        j += take;
    }
    free(win);
    return rc;
}

int fpki_read_stored(fpk_dump *d, const fpki_stored *s, uint64_t first, size_t n, void *out,
                     fpk_error *err)
{
    if (n == 0)
        return FPK_OK;
    if (s->strides)
        return gather(d, s, first, n, out, err);
    if (fpki_stype_of(s->stype)->bits == 4) {
        uint64_t from = first / 2, to = (first + n + 1) / 2;
        return fpki_file_pread(d, s->file, out, (size_t)(to - from), s->offset + from,
                               "tensor data", err);
    }
    size_t size = fpki_stype_of(s->stype)->bits / 8;
    return fpki_file_pread(d, s->file, out, n * size, s->offset + first * size, "tensor data",
                           err);
}

int fpk_dump_read_raw(fpk_dump *d, size_t i, uint64_t first, size_t n, void *out,
                      fpk_error *err)
{
    int rc = check_range(d, i, first, n, err);
    if (rc != FPK_OK || n == 0)
        return rc;
    const fpk_tensor *t = &d->tensors[i];
    if (t->layout == FPK_LAYOUT_DECODED)
        return fpki_decode(d, i, first, n, out, err);
    size_t size = fpk_dtype_size(t->dtype);
    rc = fpki_read_stored(d, stored_of(d, i), first, n, out, err);
    if (rc == FPK_OK && swapped(t->big_endian))
        swap_bytes(out, size, n);
    return rc;
}

/* fpk_dump_read of a plain tensor: holes in the file read as zeros
 * without reading them. */
static int read_plain(fpk_dump *d, size_t i, uint64_t first, size_t n, double *out,
                      fpk_error *err)
{
    const fpk_tensor *t = &d->tensors[i];
    uint32_t k = stored_of(d, i)->file;
    const fpk_format *f = fpk_dtype_format(t->dtype);
    size_t size = fpk_dtype_size(t->dtype);
    /* Validated when opened: offset + count * size lies inside the file. */
    uint64_t offset = t->offset + first * size, end = offset + (uint64_t)n * size;
    uint64_t run_end = offset; /* where the current data or hole run ends */
    bool data = true;
    unsigned char buf[FPKI_READ_CHUNK] __attribute__((aligned(FPKI_IO_ALIGN)));
    while (n > 0) {
        if (offset >= run_end) {
            int fd;
            int rc = fpki_file_acquire(d, k, &fd, err);
            if (rc != FPK_OK)
                return rc;
            run_end = extent_at(fd, offset, end, &data);
            fpki_file_release(d, k);
        }
        size_t m = n < sizeof buf / size ? n : sizeof buf / size;
        if (!data) {
            /* Zero bytes are +0 in every dtype, whose double is all zero
             * bytes too; an element that runs out of the hole is read. */
            uint64_t whole = (run_end - offset) / size;
            if (whole > 0) {
                m = whole < n ? (size_t)whole : n;
                memset(out, 0, m * sizeof *out);
                out += m;
                n -= m;
                offset += (uint64_t)m * size;
                continue;
            }
            run_end = offset + size;
        }
        int rc = fpki_file_pread(d, k, buf, m * size, offset, "tensor data", err);
        if (rc != FPK_OK)
            return rc;
        convert(f, size, t->big_endian, buf, m, out);
        out += m;
        n -= m;
        offset += (uint64_t)m * size;
    }
    return FPK_OK;
}

int fpk_dump_read(fpk_dump *d, size_t i, uint64_t first, size_t n, double *out, fpk_error *err)
{
    int rc = check_range(d, i, first, n, err);
    if (rc != FPK_OK)
        return rc;
    const fpk_tensor *t = &d->tensors[i];
    if (t->layout == FPK_LAYOUT_PLAIN)
        return read_plain(d, i, first, n, out, err);
    /* read as stored in host order, then converted */
    const fpk_format *f = fpk_dtype_format(t->dtype);
    size_t size = fpk_dtype_size(t->dtype);
    unsigned char buf[FPKI_READ_CHUNK] __attribute__((aligned(16)));
    while (n > 0) {
        size_t m = n < sizeof buf / size ? n : sizeof buf / size;
        rc = fpk_dump_read_raw(d, i, first, m, buf, err);
        if (rc != FPK_OK)
            return rc;
        convert(f, size, !swapped(true), buf, m, out); /* the host's order */
        out += m;
        n -= m;
        first += m;
    }
    return FPK_OK;
}
