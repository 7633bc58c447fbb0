/* The module fpkit._fpkit: its error, the conversions of arguments every
 * function shares (formats, contexts, buffers), and the assembly of the
 * other files' functions and types. */
#include <string.h>

#include "fpkit_py.h"

PyObject *fpy_error;

const fpk_format *fpy_format(PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "a format is named by a str, not %.80s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
        return NULL;
    const fpk_format *f = strlen(s) == (size_t)PyUnicode_GET_LENGTH(name) ? fpk_format_lookup(s)
                                                                           : NULL;
    if (!f) {
        PyObject *list = PyUnicode_FromString("");
        for (const fpk_format *const *p = fpk_formats; list && *p; p++)
            Py_SETREF(list, PyUnicode_FromFormat("%U%s%s", list, p == fpk_formats ? "" : ", ",
                                                 (*p)->name));
        if (list)
            PyErr_Format(PyExc_ValueError,
                         "unknown format \"%.80s\"; known formats: %U, or eXmY, eXmYfn, eXmYfnuz "
                         "(1 <= X <= 11, 0 <= Y <= 52)",
                         s, list);
        Py_XDECREF(list);
    }
    return f;
}

int fpy_format_conv(PyObject *name, void *out)
{
    const fpk_format *f = fpy_format(name);
    *(const fpk_format **)out = f;
    return f != NULL;
}

int fpy_ctx_conv(PyObject *t, void *out)
{
    fpk_ctx *c = out;
    const char *round;
    int ftz, daz, saturate, sr_bits;
    unsigned long long seed, counter;
    if (!PyTuple_Check(t)) {
        PyErr_SetString(PyExc_TypeError, "a context is a tuple");
        return 0;
    }
    if (!PyArg_ParseTuple(t, "spppKKi", &round, &ftz, &daz, &saturate, &seed, &counter,
                          &sr_bits))
        return 0;
    *c = fpk_ctx_default();
    if (!fpk_round_lookup(round, &c->round)) {
        PyErr_Format(PyExc_ValueError,
                     "unknown rounding mode \"%.40s\"; known: rne, rna, rtz, rup, rdn, rod, sr",
                     round);
        return 0;
    }
    c->ftz = ftz;
    c->daz = daz;
    c->saturate = saturate;
    c->sr_seed = seed;
    c->sr_counter = counter;
    c->sr_bits = sr_bits;
    return 1;
}

static int buf_conv(PyObject *o, void *out, int flags)
{
    fpy_buf *b = out;
    if (!o) { /* the cleanup call after a later argument failed */
        fpy_buf_release(b);
        return 1;
    }
    b->held = false;
    if (PyObject_GetBuffer(o, &b->view, flags | PyBUF_C_CONTIGUOUS) != 0)
        return 0;
    b->held = true;
    return Py_CLEANUP_SUPPORTED;
}

int fpy_buf_conv(PyObject *o, void *out)
{
    return buf_conv(o, out, PyBUF_SIMPLE);
}

int fpy_wbuf_conv(PyObject *o, void *out)
{
    return buf_conv(o, out, PyBUF_WRITABLE);
}

void fpy_buf_release(fpy_buf *b)
{
    if (b->held)
        PyBuffer_Release(&b->view);
    b->held = false;
}

Py_ssize_t fpy_buf_count(const fpy_buf *b, size_t size, const char *what)
{
    if (b->view.len % (Py_ssize_t)size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes are not a whole number of %zu-byte elements",
                     what, b->view.len, size);
        return -1;
    }
    return b->view.len / (Py_ssize_t)size;
}

bool fpy_dtype_of(const fpk_format *f, fpk_dtype *t)
{
    for (int d = 0; d < FPK_DTYPE_COUNT; d++)
        if (fpk_dtype_format((fpk_dtype)d) == f && fpk_dtype_size((fpk_dtype)d) == fpk_array_size(f)) {
            *t = (fpk_dtype)d;
            return true;
        }
    return false;
}

static PyObject *version(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyUnicode_FromString(fpk_version());
}

static PyObject *isa(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyUnicode_FromString(fpk_array_isa());
}

static PyMethodDef module_methods[] = {
    {"version", version, METH_NOARGS, "fpk_version(): \"fpkit X.Y.Z\"."},
    {"isa", isa, METH_NOARGS, "fpk_array_isa(): the vector code the array paths run."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fpkit._fpkit",
    "libfpkit's functions over buffers of encodings (see the package fpkit).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fpkit(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    fpy_error = PyErr_NewExceptionWithDoc(
        "fpkit.Error", "What libfpkit refused, with its message (a ValueError).",
        PyExc_ValueError, NULL);
    PyMethodDef *tables[] = {fpy_array_methods, fpy_ops_methods, fpy_scalar_methods,
                             fpy_stats_methods, fpy_recipe_methods};
    bool ok = fpy_error && PyModule_AddObject(m, "Error", Py_NewRef(fpy_error)) == 0;
    for (size_t i = 0; ok && i < sizeof tables / sizeof tables[0]; i++)
        ok = PyModule_AddFunctions(m, tables[i]) == 0;
    ok = ok && fpy_stats_add_types(m) == 0 && fpy_recipe_add_types(m) == 0;
    ok = ok && PyModule_AddIntConstant(m, "STATS_MAX_FORMATS", FPK_STATS_MAX_FORMATS) == 0 &&
         PyModule_AddIntConstant(m, "LOG2_MIN", FPK_LOG2_MIN) == 0 &&
         PyModule_AddIntConstant(m, "LOG2_BINS", FPK_LOG2_BINS) == 0 &&
         PyModule_AddIntConstant(m, "LANES", FPK_LANES) == 0;
    if (!ok) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
