/* Internals shared by the tensor dump readers (dump.c, dump_read.c,
 * store_type.c, present.c, npy.c, safetensors.c, zip.c, pickle.c,
 * torch.c, hf_index.c, quant_group.c, quant_decode.c, quant_check.c,
 * walk.c); not installed.
 *
 * A reader lists what a file stores (fpki_stored: any element type, any
 * layout); fpki_present then turns that list into the tensors the library
 * shows (fpk_tensor, each with its fpki_source), decoding quantised
 * conventions and skipping what is not floating point. */
#ifndef FPKIT_DUMP_IMPL_H
#define FPKIT_DUMP_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "fpkit-tensor.h"

/* Element types as files store them: every float type fpkit reads, the
 * packed and integer ones it lists.  store_type.c holds their table. */
typedef enum fpki_stype {
    FPKI_ST_F64,
    FPKI_ST_F32,
    FPKI_ST_F16,
    FPKI_ST_BF16,
    FPKI_ST_E4M3,
    FPKI_ST_E5M2,
    FPKI_ST_E4M3FNUZ,
    FPKI_ST_E5M2FNUZ,
    FPKI_ST_E8M0,
    FPKI_ST_F4,    /* E2M1, two a byte, element 2i in the low nibble
                      (safetensors' F4: the shape counts elements) */
    FPKI_ST_F4X2,  /* the same bytes as torch.float4_e2m1fn_x2: the shape
                      counts bytes */
    FPKI_ST_BOOL,
    FPKI_ST_U8,
    FPKI_ST_I8,
    FPKI_ST_U16,
    FPKI_ST_I16,
    FPKI_ST_U32,
    FPKI_ST_I32,
    FPKI_ST_U64,
    FPKI_ST_I64,
    FPKI_ST_C32,  /* complex of two float16 */
    FPKI_ST_C64,  /* complex of two float32 */
    FPKI_ST_C128, /* complex of two float64 */
    FPKI_ST_OTHER, /* a type listed by name only (quantised integers) */
} fpki_stype;
#define FPKI_ST_COUNT 24

typedef struct fpki_stype_info {
    const char *name;        /* fpkit's: "f32", "e8m0", "i64" */
    const char *safetensors; /* "F32", "F8_E8M0"; NULL: none */
    const char *torch;       /* the torch dtype's name, "float8_e8m0fnu" */
    const char *storage;     /* torch's typed storage class, "FloatStorage" */
    unsigned bits;           /* per element: 4 for F4, 8 for F4X2 */
    int dtype;               /* the fpk_dtype it reads as, -1: none */
    const fpk_format *format; /* a float type's element format, else NULL */
} fpki_stype_info;

/* The row of stored type T. */
const fpki_stype_info *fpki_stype_of(fpki_stype t);
/* The stored type that safetensors (SAFETENSORS) or torch (its dtype's
 * name, or its storage class's) calls NAME; false if none. */
bool fpki_stype_lookup(const char *name, bool safetensors, fpki_stype *t);
bool fpki_stype_of_storage(const char *storage, fpki_stype *t);
/* Whether values of T are floating point fpkit reads (directly or
 * decoded). */
bool fpki_stype_is_float(fpki_stype t);

/* One file of a dump: the file opened, or a shard of an index.  A shard is
 * opened when first read, and closed again when more than
 * FPKI_OPEN_SHARDS are open and it is not being read. */
typedef struct fpki_file {
    char *path;
    int fd;        /* -1 while closed */
    uint64_t size; /* its size when first opened, which reads check */
    dev_t dev;
    ino_t ino;
    unsigned readers; /* reads under way (guarded by the dump's lock) */
    uint64_t last;    /* when it was last read, for closing the oldest */
    /* fpk_dump_view's mapping of the whole file, made by the first call
     * (NULL: none yet; fpki_no_map: it cannot be mapped) */
    _Atomic(const char *) map;
} fpki_file;
#define FPKI_OPEN_SHARDS 32

/* A tensor as stored in a file, before fpki_present. */
typedef struct fpki_stored {
    const char *name;
    fpki_stype stype;
    bool big_endian;
    bool fortran_order; /* .npy: column-major storage */
    bool used;          /* a part of a quantised tensor */
    int32_t decoder;    /* the decoded tensor it heads (its codes), in
                           d->decoders; -1: none (fpki_add_stored) */
    int ndim;
    uint32_t file;      /* its file in d->files */
    uint64_t *shape;    /* NDIM dimensions (fpki_add_stored copies them
                           into the dump's arena) */
    uint64_t count;     /* elements (F4: nibbles) */
    uint64_t offset;    /* its first element's byte in the file */
    const int64_t *strides; /* in elements, per dimension, for a strided
                               view (torch); NULL: contiguous */
} fpki_stored;

/* Where the values of a tensor come from. */
typedef struct fpki_source {
    uint32_t stored; /* the stored tensor (DECODED: its codes) */
    int decoder;     /* DECODED: its index in d->decoders */
} fpki_source;

/* A decoded tensor: what it shows, and how quant_decode.c computes it. */
typedef struct fpki_decoder {
    const char *name;     /* in the dump's arena */
    const char *encoding; /* fpk_tensor.encoding */
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
    uint64_t count;
    struct fpki_codec *codec; /* quant-impl.h's (NULL: none) */
} fpki_decoder;

/* Strings and small arrays that live as long as the dump, allocated in
 * large blocks (a checkpoint holds tens of thousands of names). */
typedef struct fpki_arena {
    char *block;
    size_t used, size;
    char **old;  /* every block but the current one */
    size_t nold;
} fpki_arena;

/* A copy of the N bytes at P (and a NUL after them) in A, or NULL. */
char *fpki_arena_copy(fpki_arena *a, const void *p, size_t n);
/* N zeroed bytes aligned for any type, or NULL. */
void *fpki_arena_alloc(fpki_arena *a, size_t n);
void fpki_arena_free(fpki_arena *a);

/* An open dump.  Read only after fpk_dump_open returns, so any number of
 * threads may call fpk_dump_read on it at once (reads use pread; the
 * shards' open files are guarded by LOCK). */
struct fpk_dump {
    char *path;       /* as given to fpk_dump_open */
    const char *kind; /* "npy", "safetensors", "raw", "torch", "index" */
    fpki_file *files; /* files[0]: PATH itself */
    size_t nfiles;
    pthread_mutex_t lock;
    uint64_t clock;   /* reads so far, under LOCK: fpki_file.last */
    unsigned nopen;   /* shards open */
    fpki_arena arena;
    fpki_stored *stored;
    size_t nstored, capstored;
    size_t ntensors;
    fpk_tensor *tensors;
    fpki_source *sources;
    size_t nskipped;
    fpk_skipped *skipped;
    fpki_decoder *decoders;
    size_t ndecoders;
    size_t nmeta;
    const char **meta_keys, **meta_values;
    /* the quantisation config found beside the files (hf_index.c): its
     * file's name and what it says, "" where none */
    char quant_source[64];
    char quant_method[64];
    uint32_t quant_block_rows, quant_block_cols;
};

/* Fills ERR (if not NULL) with CODE and "PATH: " followed by the
 * printf-style message (a long PATH keeps its end, where the file's name
 * is); returns CODE.  fpki_dump_error names d->path, fpki_file_error file
 * K of D. */
int fpki_path_error(fpk_error *err, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int fpki_dump_error(fpk_error *err, int code, const fpk_dump *d, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int fpki_file_error(fpk_error *err, int code, const fpk_dump *d, uint32_t k, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));

/* FPK_EIO with "PATH: WHAT: strerror(ERRNUM)". */
int fpki_errno_error(fpk_error *err, const char *path, const char *what, int errnum);

/* Reads exactly N bytes at OFFSET of file K of D into BUF.  A read error
 * gives FPK_EIO; a file that ends early gives FPK_EIO too (it was as long
 * as its size when opened, so it shrank since), naming WHAT was being
 * read.  fpki_dump_pread reads file 0. */
int fpki_file_pread(const fpk_dump *d, uint32_t k, void *buf, size_t n, uint64_t offset,
                    const char *what, fpk_error *err);
int fpki_dump_pread(const fpk_dump *d, void *buf, size_t n, uint64_t offset, const char *what,
                    fpk_error *err);

/* Adds the file PATH to D as a shard (not opened yet: fpki_file_check
 * opens it once to learn its size); its index in *K. */
int fpki_dump_add_file(fpk_dump *d, const char *path, uint32_t *k, fpk_error *err);
/* The descriptor of file K, opened if it is a closed shard, with a reader
 * counted: give it back with fpki_file_release. */
int fpki_file_acquire(const fpk_dump *d, uint32_t k, int *fd, fpk_error *err);
void fpki_file_release(const fpk_dump *d, uint32_t k);
/* Unmaps every file fpk_dump_view mapped (dump_read.c). */
void fpki_unmap_files(fpk_dump *d);
/* Opens shard K, checks it is a regular file and records its size. */
int fpki_file_check(fpk_dump *d, uint32_t k, fpk_error *err);

/* The alignment of the buffers the library reads tensor data into, a
 * page.  Linux copies a file's cached pages with rep movsb, which on some
 * CPUs runs much slower into a buffer that lies 1 to 31 bytes past the
 * data's place within its page (bench/RESULTS.md).  malloc's large
 * buffers start 16 bytes into a page, so data that starts a page, as a raw
 * file's does, would meet that case; a buffer that starts a page meets it
 * only for data in the last 31 bytes of a page. */
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
/* The bytes COUNT elements of T take (F4: two a byte, rounded up). */
uint64_t fpki_stype_bytes(fpki_stype t, uint64_t count);

/* Writes SHAPE as "[2, 3]" (OPEN '[' / CLOSE ']') or "(2, 3)" into BUF of
 * LEN bytes, truncated with "..." if too long. */
void fpki_shape_text(char *buf, size_t len, const uint64_t *shape, int ndim, char open,
                     char close);

/* Copies S (N bytes) into BUF of LEN bytes for a message: printable ASCII
 * kept, any other byte written as '?', truncated with "..." if too long. */
void fpki_quote_text(char *buf, size_t len, const char *s, size_t n);

/* A name or string for a message, quoted as fpki_quote_text does. */
typedef struct fpki_quoted {
    char s[64];
} fpki_quoted;
fpki_quoted fpki_quote(const char *s);

/* Appends S (its name and shape copied into the arena) to D's stored
 * tensors; its index in *I (if not NULL). */
int fpki_add_stored(fpk_dump *d, const fpki_stored *s, size_t *i, fpk_error *err);
/* Adds a metadata pair (copied). */
int fpki_add_metadata(fpk_dump *d, const char *key, const char *value, fpk_error *err);

/* Turns D's stored tensors into its tensors and skipped ones: quantised
 * conventions decoded (quant_group.c), floats read as they are, the rest
 * skipped. */
int fpki_present(fpk_dump *d, fpk_error *err);

/* The readers: each parses its file (file K of D for safetensors, a shard
 * of an index, else file 0), validating the whole header, and adds what
 * it stores to D. */
int fpki_npy_open(fpk_dump *d, fpk_error *err);
int fpki_safetensors_parse(fpk_dump *d, uint32_t k, fpk_error *err);
int fpki_safetensors_open(fpk_dump *d, fpk_error *err);
int fpki_torch_open(fpk_dump *d, fpk_error *err);
int fpki_torch_parse(fpk_dump *d, uint32_t k, fpk_error *err);
int fpki_index_open(fpk_dump *d, fpk_error *err);
/* The names of the shards the index PATH lists (walk.c skips them), each
 * and the list malloc'd. */
int fpki_index_shards(const char *path, char ***names, size_t *n, fpk_error *err);
/* The quantisation config beside file 0 of D (config.json's
 * quantization_config, hf_quant_config.json), if any, into D. */
int fpki_quant_config(fpk_dump *d, const char *dir, fpk_error *err);

/* Elements FIRST .. FIRST+N-1 of stored tensor S in row-major order, as
 * stored (host byte order), into OUT (N units of its element size; F4:
 * the bytes holding them, whole). */
int fpki_read_stored(fpk_dump *d, const fpki_stored *s, uint64_t first, size_t n, void *out,
                     fpk_error *err);

/* The quantised conventions (quant_group.c, quant_decode.c): groups D's
 * stored tensors into decoded tensors, marking their parts used and their
 * heads. */
int fpki_quant_group(fpk_dump *d, fpk_error *err);
/* A decoder of stored tensor I, of an element type fpk_dtype lacks
 * (fpki_stype_is_float), into d->decoders; its index in *K. */
int fpki_element_decoder(fpk_dump *d, size_t i, int *k, fpk_error *err);
/* Elements FIRST .. FIRST+N-1 of decoded tensor I as float32 into OUT. */
int fpki_decode(fpk_dump *d, size_t i, uint64_t first, size_t n, float *out, fpk_error *err);
void fpki_decoders_free(fpk_dump *d);

#endif
