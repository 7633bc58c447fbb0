/* fpkit's Python binding, the C extension fpkit._fpkit: what its files
 * share.  The extension is a thin layer over libfpkit: it turns Python
 * arguments into the library's descriptors, contexts and buffers, calls
 * the library with the GIL released, and turns the library's errors into
 * exceptions.  Shapes, dtypes and the choice of outputs are decided by the
 * Python package (python/fpkit/), which hands this layer contiguous
 * buffers of encodings: an array of a format's encodings takes
 * fpk_array_size bytes an element, so a float32 array is an array of fp32
 * encodings and a float16 one of fp16 encodings. */
#ifndef FPKIT_PY_H
#define FPKIT_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <fpkit-tensor.h>

/* fpkit.Error, a ValueError: what the library refused, with its message. */
extern PyObject *fpy_error;

/* The format called by the str NAME; NULL with ValueError 'unknown format
 * "NAME"; known formats: ...' (the tools' message) otherwise. */
const fpk_format *fpy_format(PyObject *name);
/* The same as an O& converter for PyArg_ParseTuple. */
int fpy_format_conv(PyObject *name, void *out);

/* A context from the tuple (round, ftz, daz, saturate, seed, counter,
 * sr_bits) that the Python layer builds: round a mode's name, the next
 * three bools, seed and counter integers below 2^64, sr_bits an int.  An
 * O& converter; raises ValueError for an unknown mode. */
int fpy_ctx_conv(PyObject *t, void *out);

/* A contiguous buffer of N encodings of F (fpk_array_size(F) bytes each),
 * writable when asked: an O& converter filling a fpy_buf, whose view the
 * caller releases with fpy_buf_release.  The element count is checked by
 * the caller against the others' with fpy_buf_count. */
typedef struct fpy_buf {
    Py_buffer view;
    bool held;
} fpy_buf;
int fpy_buf_conv(PyObject *o, void *out);
int fpy_wbuf_conv(PyObject *o, void *out);
void fpy_buf_release(fpy_buf *b);
/* The elements of SIZE bytes B holds; -1 with ValueError naming WHAT if its
 * length is not a multiple of SIZE. */
Py_ssize_t fpy_buf_count(const fpy_buf *b, size_t size, const char *what);

/* Encoding I of an array of encodings of SIZE bytes, and storing one. */
static inline fpk_bits fpy_load(const void *p, size_t size, size_t i)
{
    switch (size) {
    case 1: return ((const uint8_t *)p)[i];
    case 2: return ((const uint16_t *)p)[i];
    case 4: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
    }
}
static inline void fpy_store(void *p, size_t size, size_t i, fpk_bits v)
{
    switch (size) {
    case 1: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case 2: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case 4: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = v; break;
    }
}

/* The fpk_dtype whose elements are F's encodings, as they lie in an array
 * of encodings; false for a format the dump dtypes do not cover. */
bool fpy_dtype_of(const fpk_format *f, fpk_dtype *t);

/* Z[i] := F's encodings of X[i], encodings of FROM, for i < N, as
 * fpk_array_convert gives them (every format, through fpk_convert where
 * the array functions take no such source); C's counter advances by N
 * under SR. */
void fpy_convert(const fpk_format *to, void *z, const fpk_format *from, const void *x, size_t n,
                 fpk_ctx *c, int threads);

/* The files' method tables, and the types they add to the module. */
extern PyMethodDef fpy_array_methods[], fpy_ops_methods[], fpy_scalar_methods[],
    fpy_stats_methods[], fpy_recipe_methods[];
int fpy_stats_add_types(PyObject *m);
int fpy_recipe_add_types(PyObject *m);

#endif
