/* The operations of fpkit.h element by element over arrays of encodings:
 * one loop per kind of operation, the operation a function pointer.  An
 * operation that rounds gives element i the stochastic-rounding counter
 * sr_counter + i, as the array functions do, so that its results do not
 * depend on how an array is split into calls; flags are ORed. */
#include <string.h>

#include "fpkit_py.h"

typedef enum kind {
    ROUND1,   /* z = op(a), rounding: sqrt */
    ROUND2,   /* z = op(a, b): add sub mul div */
    ROUND3,   /* z = op(a, b, d): fma */
    MINMAX,   /* z = op(a, b, kind) */
    NEIGHBOUR, /* z = op(a), flags but no rounding */
    SIGN1,    /* z = op(a), no context */
    SIGN2,    /* z = op(a, b), no context */
    COMPARE,  /* bool z = op(a, b) */
    CLASSIFY, /* uint8 z = fpk_classify(a) */
    SIGNBIT,  /* bool z = fpk_signbit(a) */
    TO_INT,   /* int64 z = fpk_to_int64(a) */
    FROM_INT, /* z = fpk_from_int64(int64 a) */
} kind;

typedef fpk_bits (*fn1)(const fpk_format *, fpk_bits, fpk_ctx *);
typedef fpk_bits (*fn2)(const fpk_format *, fpk_bits, fpk_bits, fpk_ctx *);
typedef fpk_bits (*fn3)(const fpk_format *, fpk_bits, fpk_bits, fpk_bits, fpk_ctx *);
typedef fpk_bits (*fnmm)(const fpk_format *, fpk_bits, fpk_bits, fpk_minmax, fpk_ctx *);
typedef fpk_bits (*fns1)(const fpk_format *, fpk_bits);
typedef fpk_bits (*fns2)(const fpk_format *, fpk_bits, fpk_bits);
typedef bool (*fncmp)(const fpk_format *, fpk_bits, fpk_bits, fpk_ctx *);

typedef struct op {
    const char *name;
    kind kind;
    void (*fn)(void); /* one of the types above, by kind */
    fpk_minmax minmax;
} op;

#define OP(name, kind, fn) {name, kind, (void (*)(void))fn, FPK_MINMAX_PROPAGATE}
static const op ops[] = {
    OP("add", ROUND2, fpk_add),
    OP("sub", ROUND2, fpk_sub),
    OP("mul", ROUND2, fpk_mul),
    OP("div", ROUND2, fpk_div),
    OP("fma", ROUND3, fpk_fma),
    OP("sqrt", ROUND1, fpk_sqrt),
    {"minimum", MINMAX, (void (*)(void))fpk_min, FPK_MINMAX_PROPAGATE},
    {"maximum", MINMAX, (void (*)(void))fpk_max, FPK_MINMAX_PROPAGATE},
    {"minimum_number", MINMAX, (void (*)(void))fpk_min, FPK_MINMAX_NUMBER},
    {"maximum_number", MINMAX, (void (*)(void))fpk_max, FPK_MINMAX_NUMBER},
    OP("next_up", NEIGHBOUR, fpk_next_up),
    OP("next_down", NEIGHBOUR, fpk_next_down),
    OP("neg", SIGN1, fpk_neg),
    OP("abs", SIGN1, fpk_abs),
    OP("copysign", SIGN2, fpk_copysign),
    OP("eq", COMPARE, fpk_eq),
    OP("lt", COMPARE, fpk_lt),
    OP("le", COMPARE, fpk_le),
    OP("eq_signaling", COMPARE, fpk_eq_signaling),
    OP("lt_signaling", COMPARE, fpk_lt_signaling),
    OP("le_signaling", COMPARE, fpk_le_signaling),
    OP("classify", CLASSIFY, NULL),
    OP("signbit", SIGNBIT, NULL),
    OP("to_int64", TO_INT, NULL),
    OP("from_int64", FROM_INT, NULL),
};
#define NOPS (sizeof ops / sizeof ops[0])

static int arity(kind k)
{
    return k == ROUND3 ? 3 : k == ROUND2 || k == MINMAX || k == SIGN2 || k == COMPARE ? 2 : 1;
}

/* Bytes of an input and of a result element of O over encodings of
 * SIZE bytes. */
static size_t in_size(const op *o, size_t size)
{
    return o->kind == FROM_INT ? 8 : size;
}
static size_t out_size(const op *o, size_t size)
{
    switch (o->kind) {
    case COMPARE:
    case CLASSIFY:
    case SIGNBIT: return 1;
    case TO_INT: return 8;
    default: return size;
    }
}

/* Z := O over the N elements of X[0..arity-1]. */
static void run(const op *o, const fpk_format *f, const void *const *x, void *z, size_t n,
                fpk_ctx *c)
{
    size_t s = fpk_array_size(f);
    uint64_t base = c->sr_counter;
    for (size_t i = 0; i < n; i++) {
        fpk_bits a = o->kind == FROM_INT ? 0 : fpy_load(x[0], s, i);
        fpk_bits b = arity(o->kind) > 1 ? fpy_load(x[1], s, i) : 0;
        c->sr_counter = base + i;
        switch (o->kind) {
        case ROUND1:
        case NEIGHBOUR: fpy_store(z, s, i, ((fn1)o->fn)(f, a, c)); break;
        case ROUND2: fpy_store(z, s, i, ((fn2)o->fn)(f, a, b, c)); break;
        case ROUND3: fpy_store(z, s, i, ((fn3)o->fn)(f, a, b, fpy_load(x[2], s, i), c)); break;
        case MINMAX: fpy_store(z, s, i, ((fnmm)o->fn)(f, a, b, o->minmax, c)); break;
        case SIGN1: fpy_store(z, s, i, ((fns1)o->fn)(f, a)); break;
        case SIGN2: fpy_store(z, s, i, ((fns2)o->fn)(f, a, b)); break;
        case COMPARE: ((uint8_t *)z)[i] = ((fncmp)o->fn)(f, a, b, c); break;
        case CLASSIFY: ((uint8_t *)z)[i] = (uint8_t)fpk_classify(f, a); break;
        case SIGNBIT: ((uint8_t *)z)[i] = fpk_signbit(f, a); break;
        case TO_INT: ((int64_t *)z)[i] = fpk_to_int64(f, a, c); break;
        case FROM_INT: fpy_store(z, s, i, fpk_from_int64(f, ((const int64_t *)x[0])[i], c)); break;
        }
    }
    c->sr_counter = base + (c->round == FPK_SR ? n : 0);
}

/* op(name, fmt, (x, ...), z, ctx) -> (flags, counter) */
static PyObject *op_call(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    const fpk_format *f;
    PyObject *inputs;
    fpy_buf z = {.held = false}, x[3] = {{.held = false}, {.held = false}, {.held = false}};
    fpk_ctx c;
    if (!PyArg_ParseTuple(args, "sO&O!O&O&", &name, fpy_format_conv, &f, &PyTuple_Type, &inputs,
                          fpy_wbuf_conv, &z, fpy_ctx_conv, &c))
        return NULL;
    const op *o = NULL;
    for (size_t k = 0; k < NOPS; k++)
        if (strcmp(ops[k].name, name) == 0)
            o = &ops[k];
    PyObject *r = NULL;
    Py_ssize_t n = -1, m;
    int nin = 0;
    if (!o) {
        PyErr_Format(PyExc_ValueError, "no operation \"%.40s\"", name);
        goto out;
    }
    if (PyTuple_GET_SIZE(inputs) != arity(o->kind)) {
        PyErr_Format(PyExc_TypeError, "%s takes %d operands, not %zd", name, arity(o->kind),
                     PyTuple_GET_SIZE(inputs));
        goto out;
    }
    size_t s = fpk_array_size(f);
    for (; nin < arity(o->kind); nin++) {
        if (!fpy_buf_conv(PyTuple_GET_ITEM(inputs, nin), &x[nin]))
            goto out;
        if ((m = fpy_buf_count(&x[nin], in_size(o, s), name)) < 0)
            goto out;
        if (nin && m != n) {
            PyErr_Format(PyExc_ValueError, "%s: operands of %zd and %zd elements", name, n, m);
            goto out;
        }
        n = m;
    }
    if ((m = fpy_buf_count(&z, out_size(o, s), name)) < 0)
        goto out;
    if (m != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd elements in, room for %zd out", name, n, m);
        goto out;
    }
    const void *xp[3] = {x[0].view.buf, x[1].view.buf, x[2].view.buf};
    Py_BEGIN_ALLOW_THREADS
    run(o, f, xp, z.view.buf, (size_t)n, &c);
    Py_END_ALLOW_THREADS
    r = Py_BuildValue("IK", c.flags, (unsigned long long)c.sr_counter);
out:
    for (int k = 0; k < 3; k++)
        fpy_buf_release(&x[k]);
    fpy_buf_release(&z);
    return r;
}

static PyObject *op_names(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    PyObject *d = PyDict_New();
    for (size_t k = 0; d && k < NOPS; k++) {
        PyObject *v = Py_BuildValue("(iii)", arity(ops[k].kind), (int)out_size(&ops[k], 0),
                                    ops[k].kind == FROM_INT);
        if (!v || PyDict_SetItemString(d, ops[k].name, v) != 0) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    return d;
}

PyMethodDef fpy_ops_methods[] = {
    {"op", op_call, METH_VARARGS,
     "op(name, fmt, (x, ...), z, ctx) -> (flags, counter): z[i] := the operation on the "
     "operands' element i."},
    {"op_names", op_names, METH_NOARGS,
     "op_names() -> {name: (operands, result bytes (0: the format's), takes int64)}"},
    {NULL, NULL, 0, NULL},
};
