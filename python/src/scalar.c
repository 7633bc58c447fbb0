/* The formats' descriptors and the scalar functions that have no array
 * form: text in and out, doubles, scaled conversion, the stochastic
 * rounding hash. */
#include "fpkit_py.h"

static const char *special_name(fpk_special s)
{
    switch (s) {
    case FPK_SPECIAL_IEEE: return "ieee";
    case FPK_SPECIAL_FN: return "fn";
    case FPK_SPECIAL_FNUZ: return "fnuz";
    case FPK_SPECIAL_NONE: return "none";
    case FPK_SPECIAL_E8M0: return "e8m0";
    }
    return "?";
}

/* descriptor(name) -> dict of the fields of its struct fpk_format */
static PyObject *descriptor(PyObject *self, PyObject *name)
{
    (void)self;
    const fpk_format *f = fpy_format(name);
    if (!f)
        return NULL;
    return Py_BuildValue("{s:s,s:s,s:i,s:i,s:i,s:s,s:i,s:i,s:i,s:K,s:K,s:K,s:K,s:K,s:K,s:n}",
                         "name", f->name, "aliases", f->aliases, "exp_bits", f->exp_bits,
                         "man_bits", f->man_bits, "bias", f->bias, "special",
                         special_name(f->special), "width", f->width, "emin", f->emin, "emax",
                         f->emax, "sign_mask", (unsigned long long)f->sign_mask, "exp_mask",
                         (unsigned long long)f->exp_mask, "man_mask",
                         (unsigned long long)f->man_mask, "max_finite",
                         (unsigned long long)f->max_finite, "inf", (unsigned long long)f->inf,
                         "nan", (unsigned long long)f->nan, "size",
                         (Py_ssize_t)fpk_array_size(f));
}

static PyObject *builtin_formats(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    PyObject *l = PyList_New(0);
    for (const fpk_format *const *p = fpk_formats; l && *p; p++) {
        PyObject *s = PyUnicode_FromString((*p)->name);
        if (!s || PyList_Append(l, s) != 0)
            Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

/* An encoding of F given as a Python int, checked to fit its width. */
static bool bits_arg(PyObject *o, const fpk_format *f, fpk_bits *a)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (PyErr_Occurred())
        return false;
    if (f->width < 64 && v >> f->width) {
        PyErr_Format(PyExc_ValueError, "0x%llx is wider than %s's %d bits", v, f->name, f->width);
        return false;
    }
    *a = v;
    return true;
}

/* parse(fmt, text, ctx) -> (bits, flags) */
static PyObject *parse(PyObject *self, PyObject *args)
{
    (void)self;
    const fpk_format *f;
    const char *s;
    Py_ssize_t len;
    fpk_ctx c;
    if (!PyArg_ParseTuple(args, "O&s#O&", fpy_format_conv, &f, &s, &len, fpy_ctx_conv, &c))
        return NULL;
    fpk_bits z;
    fpk_error err;
    if ((size_t)len != strlen(s)) {
        PyErr_SetString(fpy_error, "a number holds no NUL character");
        return NULL;
    }
    if (fpk_parse(f, s, &z, &c, &err) != FPK_OK) {
        PyErr_SetString(fpy_error, err.msg);
        return NULL;
    }
    return Py_BuildValue("KI", (unsigned long long)z, c.flags);
}

/* Text of A in F from one of the library's writers. */
static PyObject *text(PyObject *args, size_t (*writer)(const fpk_format *, fpk_bits, char *, size_t))
{
    const fpk_format *f;
    PyObject *bits;
    fpk_bits a;
    if (!PyArg_ParseTuple(args, "O&O", fpy_format_conv, &f, &bits) || !bits_arg(bits, f, &a))
        return NULL;
    size_t n = writer(f, a, NULL, 0) + 1;
    char *s = PyMem_Malloc(n);
    if (!s)
        return PyErr_NoMemory();
    writer(f, a, s, n);
    PyObject *r = PyUnicode_FromString(s);
    PyMem_Free(s);
    return r;
}

static PyObject *format_exact(PyObject *self, PyObject *args)
{
    (void)self;
    return text(args, fpk_format_exact);
}

static PyObject *format_shortest(PyObject *self, PyObject *args)
{
    (void)self;
    return text(args, fpk_format_shortest);
}

/* to_double(fmt, bits) -> float */
static PyObject *to_double(PyObject *self, PyObject *args)
{
    (void)self;
    const fpk_format *f;
    PyObject *bits;
    fpk_bits a;
    if (!PyArg_ParseTuple(args, "O&O", fpy_format_conv, &f, &bits) || !bits_arg(bits, f, &a))
        return NULL;
    return PyFloat_FromDouble(fpk_to_double(f, a));
}

/* from_double_scaled(fmt, x, s, ctx) -> (bits, flags): x * s rounded once */
static PyObject *from_double_scaled(PyObject *self, PyObject *args)
{
    (void)self;
    const fpk_format *f;
    double x, s;
    fpk_ctx c;
    if (!PyArg_ParseTuple(args, "O&ddO&", fpy_format_conv, &f, &x, &s, fpy_ctx_conv, &c))
        return NULL;
    fpk_bits z = fpk_from_double_scaled(f, x, s, &c);
    return Py_BuildValue("KI", (unsigned long long)z, c.flags);
}

static PyObject *sr_hash(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long seed, counter;
    if (!PyArg_ParseTuple(args, "KK", &seed, &counter))
        return NULL;
    return PyLong_FromUnsignedLongLong(fpk_sr_hash(seed, counter));
}

PyMethodDef fpy_scalar_methods[] = {
    {"descriptor", descriptor, METH_O, "descriptor(name) -> the fields of its fpk_format."},
    {"builtin_formats", builtin_formats, METH_NOARGS, "The names of fpk_formats[], in order."},
    {"parse", parse, METH_VARARGS, "parse(fmt, text, ctx) -> (bits, flags): fpk_parse."},
    {"format_exact", format_exact, METH_VARARGS, "format_exact(fmt, bits) -> every digit."},
    {"format_shortest", format_shortest, METH_VARARGS,
     "format_shortest(fmt, bits) -> the shortest text that reads back."},
    {"to_double", to_double, METH_VARARGS, "to_double(fmt, bits) -> the exact value."},
    {"from_double_scaled", from_double_scaled, METH_VARARGS,
     "from_double_scaled(fmt, x, s, ctx) -> (bits, flags): x * s rounded once."},
    {"sr_hash", sr_hash, METH_VARARGS, "sr_hash(seed, counter) -> fpk_sr_hash."},
    {NULL, NULL, 0, NULL},
};
