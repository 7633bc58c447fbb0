/* Internals shared by the tensor dump readers (dump.c, npy.c,
 * safetensors.c, walk.c); not installed. */
#ifndef FPKIT_DUMP_IMPL_H
#define FPKIT_DUMP_IMPL_H

#include "fpkit-tensor.h"

/* An open dump.  Read only after fpk_dump_open returns, so any number of
 * threads may call fpk_dump_read on it at once (reads use pread). */
struct fpk_dump {
    char *path;       /* as given to fpk_dump_open */
    const char *kind; /* "npy", "safetensors", "raw" */
    int fd;
    uint64_t size; /* file size when opened */
    /* fpk_dump_view's mapping of the whole file, made by the first call
     * (NULL: none yet; fpki_no_map: the file cannot be mapped) */
    _Atomic(const char *) map;
    size_t ntensors;
    fpk_tensor *tensors;
    char **names; /* safetensors: the names the tensors point to */
    size_t nmeta;
    char **meta_keys, **meta_values;
};

/* Fills ERR (if not NULL) with CODE and "PATH: " followed by the
 * printf-style message (a long PATH keeps its end, where the file's name
 * is); returns CODE.  fpki_dump_error names d->path. */
int fpki_path_error(fpk_error *err, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int fpki_dump_error(fpk_error *err, int code, const fpk_dump *d, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* FPK_EIO with "PATH: WHAT: strerror(ERRNUM)". */
int fpki_errno_error(fpk_error *err, const char *path, const char *what, int errnum);

/* Reads exactly N bytes at OFFSET into BUF.  A read error gives FPK_EIO; a
 * file that ends early gives FPK_EIO too (it was as long as d->size when
 * opened, so it shrank since), naming WHAT was being read. */
int fpki_dump_pread(const fpk_dump *d, void *buf, size_t n, uint64_t offset, const char *what,
                    fpk_error *err);

/* The alignment of the buffers the library reads tensor data into, a
 * page.  Linux copies a file's cached pages with rep movsb, which can run
 * several times slower into a buffer that lies 1 to 31 bytes past the
 * data's place within its page.  malloc's large buffers start 16 bytes
 * into a page, so data that starts a page, as a raw file's does, met that
 * case (measured on an AMD EPYC, Zen 3: fpgrad read a 1 GiB raw file in
 * 0.59 s of system time, against 0.19 s into a buffer that starts a
 * page).  A buffer that starts a page meets it only for data in the last
 * 31 bytes of a page. */
#define FPKI_IO_ALIGN 4096

/* BYTES of memory aligned to FPKI_IO_ALIGN (free it with free), or NULL. */
void *fpki_io_alloc(size_t bytes);

/* The last component of d->path: the name of an .npy or raw tensor. */
const char *fpki_dump_basename(const fpk_dump *d);

/* COUNT = the product of SHAPE[0..NDIM-1] (1 for ndim 0) and BYTES = COUNT
 * times ITEMSIZE, or false if either exceeds 64 bits.  A zero dimension
 * makes both 0 whatever the others are. */
bool fpki_shape_size(const uint64_t *shape, int ndim, size_t itemsize, uint64_t *count,
                     uint64_t *bytes);

/* Writes SHAPE as "[2, 3]" (OPEN '[' / CLOSE ']') or "(2, 3)" into BUF of
 * LEN bytes, truncated with "..." if too long. */
void fpki_shape_text(char *buf, size_t len, const uint64_t *shape, int ndim, char open,
                     char close);

/* Copies S (N bytes) into BUF of LEN bytes for a message: printable ASCII
 * kept, any other byte written as '?', truncated with "..." if too long. */
void fpki_quote_text(char *buf, size_t len, const char *s, size_t n);

/* Parse the header of the file open in D and fill d->tensors (and for
 * safetensors d->names and the metadata); the whole header is validated,
 * including the data's extent against d->size. */
int fpki_npy_open(fpk_dump *d, fpk_error *err);
int fpki_safetensors_open(fpk_dump *d, fpk_error *err);

#endif
