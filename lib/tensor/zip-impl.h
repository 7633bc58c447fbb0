/* Zip archives (zip.c, through libzip) and the restricted unpickler
 * (pickle.c), the two halves of a torch.save file (torch.c); not
 * installed. */
#ifndef FPKIT_ZIP_IMPL_H
#define FPKIT_ZIP_IMPL_H

#include "dump-impl.h"

typedef struct fpki_zip fpki_zip;

/* Opens file K of D as a zip archive: central directory and local
 * headers checked by libzip.  FPK_EFORMAT with libzip's reason otherwise.
 * File K must stay open (a reader counted) until fpki_zip_close. */
int fpki_zip_open(fpk_dump *d, uint32_t k, fpki_zip **z, fpk_error *err);
void fpki_zip_close(fpki_zip *z);
/* Its members, and member I's name (as stored, NUL-ended). */
size_t fpki_zip_count(fpki_zip *z);
const char *fpki_zip_name(fpki_zip *z, size_t i);
/* The index of the member called NAME, or -1. */
int64_t fpki_zip_find(fpki_zip *z, const char *name);
/* Member I whole, inflated, into *BUF (malloc'd, NUL-ended; *LEN bytes):
 * refused when encrypted, of a method libzip lacks, declared over LIMIT
 * bytes, or inflating past its declared size. */
int fpki_zip_read(fpki_zip *z, size_t i, uint64_t limit, char **buf, size_t *len,
                  fpk_error *err);
/* The byte offset in the file and the size of member I, which must be
 * stored uncompressed (tensor data). */
int fpki_zip_stored(fpki_zip *z, size_t i, uint64_t *offset, uint64_t *size, fpk_error *err);

/* A pickled value (pickle.c).  Only what torch.save writes exists:
 * None, booleans, integers, floats, strings, tuples, lists, dicts, and
 * three values that stand for what the pickle would have run: a GLOBAL
 * (one of the caller's allowed names), a CALL of one (REDUCE: the
 * callable and its arguments, never called) and a persistent id
 * (BINPERSID: torch's storage tuple). */
typedef enum fpki_pk_kind {
    FPKI_PK_NONE,
    FPKI_PK_BOOL,
    FPKI_PK_INT,
    FPKI_PK_FLOAT,
    FPKI_PK_STR,
    FPKI_PK_TUPLE,
    FPKI_PK_LIST,
    FPKI_PK_DICT,
    FPKI_PK_GLOBAL,
    FPKI_PK_CALL,
    FPKI_PK_PERSID,
} fpki_pk_kind;

typedef struct fpki_pk fpki_pk;
struct fpki_pk {
    fpki_pk_kind kind;
    int64_t i;       /* BOOL, INT; GLOBAL: its index in the allowed list */
    double f;        /* FLOAT */
    const char *s;   /* STR (NUL-ended; LEN bytes) */
    size_t len;      /* STR: bytes; TUPLE, LIST, DICT: items (a DICT's are
                        key, value, key, value, ...) */
    fpki_pk **items; /* TUPLE, LIST, DICT; CALL: [callable, args, state or
                        NULL]; PERSID: [pid] */
    size_t cap;
};

/* A global the unpickler may load: MODULE.NAME; calling it (REDUCE)
 * gives a CALL, or an empty DICT when DICT_TYPE (OrderedDict). */
typedef struct fpki_pk_global {
    const char *module, *name;
    bool dict_type;
} fpki_pk_global;

/* Unpickles the LEN bytes at P (protocols 2 to 5, the opcodes torch.save
 * writes and a few more that protocol 4 adds), allocating in ARENA;
 * *ROOT := the value.  Any other opcode, a global not in ALLOWED[0..N-1],
 * more nesting than FPKI_PK_MAX_DEPTH or more values than the pickle's
 * size allows give FPK_EFORMAT with ERR's message naming it and its byte
 * offset, prefixed by PATH and WHAT. */
#define FPKI_PK_MAX_DEPTH 200
int fpki_unpickle(const char *path, const char *what, const unsigned char *p, size_t len,
                  const fpki_pk_global *allowed, size_t n, fpki_arena *arena, fpki_pk **root,
                  fpk_error *err);

#endif
