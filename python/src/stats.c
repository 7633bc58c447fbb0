/* fpkit._fpkit.StatsCore: a tensor's statistics (fpk_stats) and the exact
 * sums behind its SQNR, made empty, added to, merged, read and written
 * as the library's JSON; the package's fpkit.Stats presents them. */
#include <float.h>
#include <string.h>

#include "stats.h"

typedef struct core {
    PyObject_HEAD
    fpy_stats s;
} core;

static PyTypeObject core_type;

/* StatsCore(formats, scale, ctx, sqnr) */
static int core_init(PyObject *self, PyObject *args, PyObject *kw)
{
    core *o = (core *)self;
    PyObject *names;
    double scale;
    fpk_ctx c;
    int sqnr;
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "StatsCore takes no keywords");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "O!dO&p", &PyTuple_Type, &names, &scale, fpy_ctx_conv, &c, &sqnr))
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    const fpk_format *f[FPK_STATS_MAX_FORMATS];
    if (n < 1 || n > FPK_STATS_MAX_FORMATS) {
        PyErr_Format(PyExc_ValueError, "statistics take 1 to %d formats, not %zd",
                     FPK_STATS_MAX_FORMATS, n);
        return -1;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        if (!(f[j] = fpy_format(PyTuple_GET_ITEM(names, j))))
            return -1;
        for (Py_ssize_t k = 0; k < j; k++)
            if (f[k] == f[j]) {
                PyErr_Format(PyExc_ValueError, "format %s is listed twice", f[j]->name);
                return -1;
            }
    }
    if (!(scale > 0 && scale <= DBL_MAX)) {
        PyErr_Format(PyExc_ValueError, "scale %R: must be finite and positive",
                     PyTuple_GET_ITEM(args, 1));
        return -1;
    }
    memset(&o->s, 0, sizeof o->s);
    fpk_stats_init(&o->s.st, f, (int)n, scale, &c);
    o->s.sqnr = sqnr;
    return 0;
}

/* add(x, from, rowlen, threads): X a buffer of encodings of FROM, a
 * dtype's format */
static PyObject *core_add(PyObject *self, PyObject *args)
{
    core *o = (core *)self;
    const fpk_format *from;
    fpy_buf x = {.held = false};
    unsigned long long rowlen;
    int threads;
    fpk_dtype t;
    if (!PyArg_ParseTuple(args, "O&O&Ki", fpy_buf_conv, &x, fpy_format_conv, &from, &rowlen,
                          &threads))
        return NULL;
    PyObject *r = NULL;
    Py_ssize_t n;
    if (!fpy_dtype_of(from, &t))
        PyErr_Format(PyExc_TypeError, "statistics read f64, f32, f16, bf16, e4m3 or e5m2, not %s",
                     from->name);
    else if ((n = fpy_buf_count(&x, fpk_dtype_size(t), "stats: x")) >= 0) {
        bool ok;
        Py_BEGIN_ALLOW_THREADS
        ok = fpy_stats_add(&o->s, t, x.view.buf, (size_t)n, rowlen, threads);
        Py_END_ALLOW_THREADS
        r = ok ? Py_NewRef(Py_None) : PyErr_NoMemory();
    }
    fpy_buf_release(&x);
    return r;
}

/* merge(other): self += other; fpkit.Error if they differ in their
 * formats, scale or options */
static PyObject *core_merge(PyObject *self, PyObject *other)
{
    core *o = (core *)self, *p = (core *)other;
    if (!PyObject_TypeCheck(other, &core_type)) {
        PyErr_SetString(PyExc_TypeError, "merge takes a StatsCore");
        return NULL;
    }
    if (!fpk_stats_merge(&o->s.st, &p->s.st)) {
        PyErr_SetString(fpy_error, "statistics of other formats, scale, rounding mode, ftz or "
                                   "saturate do not merge");
        return NULL;
    }
    for (int j = 0; j < o->s.st.nformats; j++) {
        exact_merge(&o->s.x2[j], &p->s.x2[j]);
        exact_merge(&o->s.e2[j], &p->s.e2[j]);
    }
    o->s.sqnr &= p->s.sqnr;
    Py_RETURN_NONE;
}

static PyObject *core_copy(PyObject *self, PyObject *args)
{
    (void)args;
    core *c = PyObject_New(core, &core_type);
    if (c)
        c->s = ((core *)self)->s;
    return (PyObject *)c;
}

static PyObject *core_to_json(PyObject *self, PyObject *args)
{
    (void)args;
    char *text = fpk_stats_to_json(&((core *)self)->s.st);
    if (!text)
        return PyErr_Format(fpy_error, "the statistics cannot be written as JSON");
    PyObject *r = PyUnicode_FromString(text);
    free(text);
    return r;
}

/* StatsCore.from_json(text): statistics without SQNR sums */
static PyObject *core_from_json(PyObject *cls, PyObject *arg)
{
    const char *text = PyUnicode_AsUTF8(arg);
    if (!text)
        return NULL;
    core *c = PyObject_New(core, (PyTypeObject *)cls);
    if (!c)
        return NULL;
    memset(&c->s, 0, sizeof c->s);
    fpk_error err;
    if (fpk_stats_from_json(&c->s.st, text, &err) != FPK_OK) {
        Py_DECREF(c);
        PyErr_SetString(fpy_error, err.msg);
        return NULL;
    }
    return (PyObject *)c;
}

/* An exact sum as a Python int (S of S * 2^-1074), or None if infinite. */
static PyObject *sum_int(const exact_sum *s)
{
    if (s->inf)
        Py_RETURN_NONE;
    unsigned char b[EXACT_WORDS * 8];
    for (int k = 0; k < EXACT_WORDS; k++)
        for (int i = 0; i < 8; i++)
            b[8 * k + i] = (unsigned char)(s->w[k] >> 8 * i);
    return PyObject_CallMethod((PyObject *)&PyLong_Type, "from_bytes", "y#s", (const char *)b,
                               (Py_ssize_t)sizeof b, "little");
}

static bool sum_set(exact_sum *s, PyObject *v)
{
    memset(s, 0, sizeof *s);
    if (v == Py_None) {
        s->inf = true;
        return true;
    }
    PyObject *b = PyObject_CallMethod(v, "to_bytes", "ns", (Py_ssize_t)(EXACT_WORDS * 8),
                                      "little");
    if (!b)
        return false;
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(b);
    for (int k = 0; k < EXACT_WORDS; k++)
        for (int i = 0; i < 8; i++)
            s->w[k] |= (uint64_t)p[8 * k + i] << 8 * i;
    Py_DECREF(b);
    return true;
}

/* set_sums(((x2, e2), ...)): the exact sums (ints or None) of every format */
static PyObject *core_set_sums(PyObject *self, PyObject *arg)
{
    core *o = (core *)self;
    if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != o->s.st.nformats) {
        PyErr_Format(PyExc_ValueError, "set_sums takes a tuple of %d pairs", o->s.st.nformats);
        return NULL;
    }
    fpy_stats s = o->s;
    for (int j = 0; j < s.st.nformats; j++) {
        PyObject *x2, *e2;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(arg, j), "OO", &x2, &e2) || !sum_set(&s.x2[j], x2) ||
            !sum_set(&s.e2[j], e2))
            return NULL;
    }
    s.sqnr = true;
    o->s = s;
    Py_RETURN_NONE;
}

/* fields() -> dict: everything the statistics hold */
static PyObject *core_fields(PyObject *self, PyObject *args)
{
    (void)args;
    const fpy_stats *s = &((core *)self)->s;
    const fpk_stats *st = &s->st;
    int first = 0, last = -1;
    for (int i = 0; i < FPK_LOG2_BINS; i++)
        if (st->log2_hist[i]) {
            if (last < 0)
                first = i;
            last = i;
        }
    PyObject *d = NULL, *names = PyTuple_New(st->nformats), *counts = PyTuple_New(st->nformats);
    PyObject *sums = s->sqnr ? PyTuple_New(st->nformats) : Py_NewRef(Py_None);
    PyObject *hist = PyTuple_New(last < 0 ? 0 : last - first + 1);
    bool ok = names && counts && sums && hist;
    for (int j = 0; ok && j < st->nformats; j++) {
        const fpk_format_counts *k = &st->fmt[j];
        PyTuple_SET_ITEM(names, j, PyUnicode_FromString(st->formats[j]->name));
        PyTuple_SET_ITEM(counts, j, Py_BuildValue("KKK", (unsigned long long)k->underflow,
                                                  (unsigned long long)k->subnormal,
                                                  (unsigned long long)k->overflow));
        ok = PyTuple_GET_ITEM(names, j) && PyTuple_GET_ITEM(counts, j);
        if (ok && s->sqnr) {
            PyObject *x2 = sum_int(&s->x2[j]), *e2 = x2 ? sum_int(&s->e2[j]) : NULL;
            PyTuple_SET_ITEM(sums, j, x2 && e2 ? PyTuple_Pack(2, x2, e2) : NULL);
            Py_XDECREF(x2);
            Py_XDECREF(e2);
            ok = PyTuple_GET_ITEM(sums, j) != NULL;
        }
    }
    for (int i = first; ok && i <= last; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(st->log2_hist[i]);
        PyTuple_SET_ITEM(hist, i - first, v);
        ok = v != NULL;
    }
    if (ok)
        d = Py_BuildValue("{s:O,s:d,s:s,s:O,s:O,s:K,s:K,s:K,s:d,s:K,s:i,s:O,s:O,s:O}", "formats",
                          names, "scale", st->scale, "round", fpk_round_name(st->round), "ftz",
                          st->ftz ? Py_True : Py_False, "saturate",
                          st->saturate ? Py_True : Py_False, "count",
                          (unsigned long long)st->count, "zeros", (unsigned long long)st->zeros,
                          "nonfinite", (unsigned long long)st->nonfinite, "amax", st->amax,
                          "sr_index", (unsigned long long)st->sr_index, "hist_min",
                          last < 0 ? 0 : first + FPK_LOG2_MIN, "hist", hist, "counts", counts,
                          "sums", sums);
    Py_XDECREF(names);
    Py_XDECREF(counts);
    Py_XDECREF(sums);
    Py_XDECREF(hist);
    return d;
}

static PyMethodDef core_methods[] = {
    {"add", core_add, METH_VARARGS,
     "add(x, from, rowlen, threads): adds a tensor's encodings (fpk_stats_add_array, and the "
     "SQNR's sums as fpgrad makes them)."},
    {"merge", core_merge, METH_O, "merge(other): fpk_stats_merge, and the sums added."},
    {"copy", core_copy, METH_NOARGS, "A copy."},
    {"to_json", core_to_json, METH_NOARGS, "fpk_stats_to_json."},
    {"from_json", core_from_json, METH_O | METH_CLASS, "fpk_stats_from_json (no SQNR sums)."},
    {"set_sums", core_set_sums, METH_O, "set_sums(((x2, e2), ...)): the exact sums, as ints."},
    {"fields", core_fields, METH_NOARGS, "Every field, as a dict."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject core_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "fpkit._fpkit.StatsCore",
    .tp_basicsize = sizeof(core),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor's statistics and SQNR sums (see fpkit.Stats).",
    .tp_methods = core_methods,
    .tp_init = core_init,
    .tp_new = PyType_GenericNew,
};

int fpy_stats_add_types(PyObject *m)
{
    if (PyType_Ready(&core_type) < 0)
        return -1;
    return PyModule_AddObject(m, "StatsCore", Py_NewRef((PyObject *)&core_type));
}

PyMethodDef fpy_stats_methods[] = {
    {NULL, NULL, 0, NULL},
};
