/* Whole arrays: conversion between any two formats' encodings and fake
 * quantisation, through the library's array functions, with the GIL
 * released. */
#include "fpkit_py.h"

#define CHUNK ((size_t)1 << 20) /* elements of a two-step conversion at once */

void fpy_convert(const fpk_format *to, void *z, const fpk_format *from, const void *x, size_t n,
                 fpk_ctx *c, int threads)
{
    fpk_dtype t;
    if (fpy_dtype_of(from, &t)) {
        fpk_array_convert(to, z, t, x, n, c, threads);
        return;
    }
    /* No array function reads FROM: element by element, with the array
     * functions' counters (element i rounds with sr_counter + i). */
    size_t zs = fpk_array_size(to), xs = fpk_array_size(from);
    uint64_t base = c->sr_counter;
    for (size_t i = 0; i < n; i++) {
        c->sr_counter = base + i;
        fpy_store(z, zs, i, fpk_convert(to, from, fpy_load(x, xs, i), c));
    }
    c->sr_counter = base + (c->round == FPK_SR ? n : 0);
}

/* convert(to, from, x, z, ctx, threads) -> flags */
static PyObject *convert(PyObject *self, PyObject *args)
{
    (void)self;
    const fpk_format *to, *from;
    fpy_buf x = {.held = false}, z = {.held = false};
    fpk_ctx c;
    int threads;
    if (!PyArg_ParseTuple(args, "O&O&O&O&O&i", fpy_format_conv, &to, fpy_format_conv, &from,
                          fpy_buf_conv, &x, fpy_wbuf_conv, &z, fpy_ctx_conv, &c, &threads))
        return NULL;
    PyObject *r = NULL;
    Py_ssize_t n = fpy_buf_count(&x, fpk_array_size(from), "convert: x");
    Py_ssize_t nz = n < 0 ? -1 : fpy_buf_count(&z, fpk_array_size(to), "convert: z");
    if (nz >= 0 && nz != n)
        PyErr_Format(PyExc_ValueError, "convert: %zd elements in, room for %zd out", n, nz);
    else if (nz >= 0) {
        Py_BEGIN_ALLOW_THREADS
        fpy_convert(to, z.view.buf, from, x.view.buf, (size_t)n, &c, threads);
        Py_END_ALLOW_THREADS
        r = Py_BuildValue("IK", c.flags, (unsigned long long)c.sr_counter);
    }
    fpy_buf_release(&x);
    fpy_buf_release(&z);
    return r;
}

/* Z := the values of F's encodings of X (encodings of FROM) as encodings
 * of ZF (fp32 or fp64, which hold every value of F: the caller sees to
 * it): fpk_array_quantize where it takes F, else F's encodings a chunk at
 * a time and their values converted exactly.  Z may be X when both have
 * the same element size. */
static void quantize_into(const fpk_format *f, void *z, const fpk_format *zf,
                          const fpk_format *from, const void *x, size_t n, fpk_ctx *c,
                          int threads, uint64_t *tmp)
{
    fpk_dtype t;
    if (zf == &fpk_fp32 && fpy_dtype_of(from, &t) &&
        fpk_array_quantize(f, z, t, x, n, c, threads))
        return;
    size_t xs = fpk_array_size(from), zs = fpk_array_size(zf);
    for (size_t done = 0; done < n; done += CHUNK) {
        size_t len = n - done < CHUNK ? n - done : CHUNK;
        fpy_convert(f, tmp, from, (const char *)x + done * xs, len, c, threads);
        fpk_ctx exact = fpk_ctx_default(); /* F's values are ZF's: no rounding, no flag */
        fpy_convert(zf, (char *)z + done * zs, f, tmp, len, &exact, threads);
    }
}

/* quantize(fmt, from, x, zfmt, z, ctx, threads) -> (flags, counter) */
static PyObject *quantize(PyObject *self, PyObject *args)
{
    (void)self;
    const fpk_format *f, *from, *zf;
    fpy_buf x = {.held = false}, z = {.held = false};
    fpk_ctx c;
    int threads;
    if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&i", fpy_format_conv, &f, fpy_format_conv, &from,
                          fpy_buf_conv, &x, fpy_format_conv, &zf, fpy_wbuf_conv, &z,
                          fpy_ctx_conv, &c, &threads))
        return NULL;
    PyObject *r = NULL;
    uint64_t *tmp = NULL;
    Py_ssize_t n = fpy_buf_count(&x, fpk_array_size(from), "quantize: x");
    Py_ssize_t nz = n < 0 ? -1 : fpy_buf_count(&z, fpk_array_size(zf), "quantize: z");
    if (nz < 0)
        goto out;
    if (nz != n) {
        PyErr_Format(PyExc_ValueError, "quantize: %zd elements in, room for %zd out", n, nz);
        goto out;
    }
    if (zf != &fpk_fp32 && zf != &fpk_fp64) {
        PyErr_Format(PyExc_ValueError, "quantize: values are written as fp32 or fp64, not %s",
                     zf->name);
        goto out;
    }
    if (!(tmp = PyMem_RawMalloc(((size_t)n < CHUNK ? (size_t)n + 1 : CHUNK) * sizeof *tmp))) {
        PyErr_NoMemory();
        goto out;
    }
    Py_BEGIN_ALLOW_THREADS
    quantize_into(f, z.view.buf, zf, from, x.view.buf, (size_t)n, &c, threads, tmp);
    Py_END_ALLOW_THREADS
    r = Py_BuildValue("IK", c.flags, (unsigned long long)c.sr_counter);
out:
    PyMem_RawFree(tmp);
    fpy_buf_release(&x);
    fpy_buf_release(&z);
    return r;
}

PyMethodDef fpy_array_methods[] = {
    {"convert", convert, METH_VARARGS,
     "convert(to, from, x, z, ctx, threads) -> (flags, counter): z := x's encodings rounded "
     "into to (fpk_array_convert)."},
    {"quantize", quantize, METH_VARARGS,
     "quantize(fmt, from, x, zfmt, z, ctx, threads) -> (flags, counter): z := the values of "
     "x rounded into fmt, as zfmt (fp32 or fp64) encodings (fpk_array_quantize)."},
    {NULL, NULL, 0, NULL},
};
