/* The block-scaled recipes of fpkit-recipe.h (fpkit-recipes(7)): parsing,
 * quantisation of a 2-D float32 view, dequantisation, the packed layouts,
 * delayed-scaling histories (fpkit._fpkit.AmaxHistory) and per-block
 * statistics (fpkit._fpkit.RecipeStatsCore). */
#include <float.h>
#include <string.h>

#include "fpkit_py.h"

/* A recipe from its str: an O& converter; fpkit.Error with the library's
 * message for a recipe it refuses. */
static int recipe_conv(PyObject *o, void *out)
{
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    fpk_error err;
    if (!s) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a recipe is named by a str");
        return 0;
    }
    if (fpk_recipe_parse(s, out, &err) != FPK_OK || !fpk_recipe_valid(out, &err)) {
        PyErr_SetString(fpy_error, err.msg);
        return 0;
    }
    return 1;
}

static PyObject *canonical(const fpk_recipe *r)
{
    char buf[256];
    size_t n = fpk_recipe_format(r, buf, sizeof buf);
    if (n >= sizeof buf)
        return PyErr_Format(fpy_error, "recipe text too long");
    return PyUnicode_FromString(buf);
}

/* recipe_parse(text) -> dict of the descriptor's fields */
static PyObject *recipe_parse(PyObject *self, PyObject *arg)
{
    (void)self;
    fpk_recipe r;
    if (!recipe_conv(arg, &r))
        return NULL;
    PyObject *name = canonical(&r);
    if (!name)
        return NULL;
    return Py_BuildValue("{s:N,s:s,s:s,s:s,s:I,s:I,s:s,s:i,s:K,s:i,s:O,s:i,s:O,s:O,s:I}",
                         "recipe", name, "elem", r.elem->name, "scale", r.scale->name, "rule",
                         fpk_scale_rule_name(r.rule), "block_rows", r.block_rows, "block_cols",
                         r.block_cols, "round", fpk_round_name(r.round), "sr_bits", r.sr_bits,
                         "seed", (unsigned long long)r.seed, "margin", r.margin, "pow2",
                         r.pow2 ? Py_True : Py_False, "history", r.history, "history_max",
                         r.history_max ? Py_True : Py_False, "rht", r.rht ? Py_True : Py_False,
                         "rht_signs", (unsigned)r.rht_signs);
}

static PyObject *recipe_presets(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    PyObject *l = PyList_New(0);
    for (const char *const *p = fpk_recipe_presets; l && *p; p++) {
        PyObject *s = PyUnicode_FromString(*p);
        if (!s || PyList_Append(l, s) != 0)
            Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

/* recipe_blocks(recipe, rows, cols) -> (blocks, block rows, block cols) */
static PyObject *recipe_blocks(PyObject *self, PyObject *args)
{
    (void)self;
    fpk_recipe r;
    Py_ssize_t rows, cols;
    size_t br = 0, bc = 0;
    if (!PyArg_ParseTuple(args, "O&nn", recipe_conv, &r, &rows, &cols))
        return NULL;
    if (rows < 0 || cols < 0)
        return PyErr_Format(PyExc_ValueError, "a view of %zd x %zd", rows, cols);
    size_t n = fpk_recipe_blocks(&r, (size_t)rows, (size_t)cols, &br, &bc);
    return Py_BuildValue("nnn", (Py_ssize_t)n, (Py_ssize_t)br, (Py_ssize_t)bc);
}

/* AmaxHistory(len): fpk_amax_history */
typedef struct history {
    PyObject_HEAD
    fpk_amax_history h;
} history;

static int history_init(PyObject *self, PyObject *args, PyObject *kw)
{
    int len;
    if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, "i", &len)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "AmaxHistory(len) takes no keywords");
        return -1;
    }
    if (len < 1 || len > FPK_HISTORY_MAX) {
        PyErr_Format(PyExc_ValueError, "a history holds 1 to %d amaxes, not %d", FPK_HISTORY_MAX,
                     len);
        return -1;
    }
    fpk_amax_history_init(&((history *)self)->h, len);
    return 0;
}

static PyObject *history_push(PyObject *self, PyObject *arg)
{
    double a = PyFloat_AsDouble(arg);
    if (a == -1 && PyErr_Occurred())
        return NULL;
    if (!(a >= 0 && a <= DBL_MAX))
        return PyErr_Format(PyExc_ValueError, "an amax is finite and >= 0, not %R", arg);
    fpk_amax_history_push(&((history *)self)->h, a);
    Py_RETURN_NONE;
}

static PyObject *history_amax(PyObject *self, PyObject *arg)
{
    int max = PyObject_IsTrue(arg);
    if (max < 0)
        return NULL;
    return PyFloat_FromDouble(fpk_amax_history_amax(&((history *)self)->h, max));
}

static PyObject *history_values(PyObject *self, PyObject *args)
{
    (void)args;
    const fpk_amax_history *h = &((history *)self)->h;
    PyObject *l = PyList_New(0); /* oldest first */
    for (int i = 0; l && i < h->count; i++) {
        int k = (h->next - h->count + i + h->len) % h->len;
        PyObject *v = PyFloat_FromDouble(h->amax[k]);
        if (!v || PyList_Append(l, v) != 0)
            Py_CLEAR(l);
        Py_XDECREF(v);
    }
    return l;
}

static PyMethodDef history_methods[] = {
    {"push", history_push, METH_O, "push(amax): records a tensor's amax."},
    {"amax", history_amax, METH_O, "amax(largest) -> the largest, or the latest."},
    {"values", history_values, METH_NOARGS, "The amaxes held, oldest first."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject history_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "fpkit._fpkit.AmaxHistory",
    .tp_basicsize = sizeof(history),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "AmaxHistory(len): the amaxes of the last LEN tensors, for delayed scaling.",
    .tp_methods = history_methods,
    .tp_init = history_init,
    .tp_new = PyType_GenericNew,
};

/* RecipeStatsCore(recipe): fpk_recipe_stats */
typedef struct rstats {
    PyObject_HEAD
    fpk_recipe_stats s;
} rstats;

static PyTypeObject rstats_type;

static int rstats_init(PyObject *self, PyObject *args, PyObject *kw)
{
    fpk_recipe r;
    if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, "O&", recipe_conv, &r)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "RecipeStatsCore(recipe) takes no keywords");
        return -1;
    }
    fpk_recipe_stats_init(&((rstats *)self)->s, &r);
    return 0;
}

static PyObject *rstats_merge(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &rstats_type))
        return PyErr_Format(PyExc_TypeError, "merge takes a RecipeStatsCore");
    if (!fpk_recipe_stats_merge(&((rstats *)self)->s, &((rstats *)other)->s))
        return PyErr_Format(fpy_error, "statistics of different recipes do not merge");
    Py_RETURN_NONE;
}

static PyObject *rstats_copy(PyObject *self, PyObject *args)
{
    (void)args;
    rstats *c = PyObject_New(rstats, &rstats_type);
    if (c)
        c->s = ((rstats *)self)->s;
    return (PyObject *)c;
}

static PyObject *rstats_to_json(PyObject *self, PyObject *args)
{
    (void)args;
    char *text = fpk_recipe_stats_to_json(&((rstats *)self)->s);
    if (!text)
        return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    free(text);
    return r;
}

static PyObject *rstats_from_json(PyObject *cls, PyObject *arg)
{
    const char *text = PyUnicode_AsUTF8(arg);
    if (!text)
        return NULL;
    rstats *c = PyObject_New(rstats, (PyTypeObject *)cls);
    if (!c)
        return NULL;
    memset(&c->s, 0, sizeof c->s);
    fpk_error err;
    if (fpk_recipe_stats_from_json(&c->s, text, &err) != FPK_OK) {
        Py_DECREF(c);
        PyErr_SetString(fpy_error, err.msg);
        return NULL;
    }
    return (PyObject *)c;
}

static PyObject *rstats_sqnr(PyObject *self, PyObject *args)
{
    (void)args;
    return PyFloat_FromDouble(fpk_recipe_stats_sqnr(&((rstats *)self)->s));
}

static PyMethodDef rstats_methods[] = {
    {"merge", rstats_merge, METH_O, "merge(other): fpk_recipe_stats_merge."},
    {"copy", rstats_copy, METH_NOARGS, "A copy."},
    {"to_json", rstats_to_json, METH_NOARGS, "fpk_recipe_stats_to_json."},
    {"from_json", rstats_from_json, METH_O | METH_CLASS, "fpk_recipe_stats_from_json."},
    {"sqnr", rstats_sqnr, METH_NOARGS, "fpk_recipe_stats_sqnr."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject rstats_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "fpkit._fpkit.RecipeStatsCore",
    .tp_basicsize = sizeof(rstats),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A recipe's statistics (see fpkit.RecipeStats).",
    .tp_methods = rstats_methods,
    .tp_init = rstats_init,
    .tp_new = PyType_GenericNew,
};

/* An optional writable buffer (None: not wanted) of at least N elements
 * of SIZE bytes; its address into *P. */
static bool optional_out(PyObject *o, fpy_buf *b, size_t n, size_t size, const char *what,
                         void **p)
{
    *p = NULL;
    if (o == Py_None)
        return true;
    if (!fpy_wbuf_conv(o, b))
        return false;
    if ((size_t)b->view.len < n * size) {
        PyErr_Format(PyExc_ValueError, "recipe: %s holds %zd bytes, %zu needed", what,
                     b->view.len, n * size);
        return false;
    }
    *p = b->view.buf;
    return true;
}

/* recipe_quantize(recipe, x, rows, cols, codes, scales, y, xt, history, stats)
 * -> (global bits, amax, flags): X float32, ROWS x COLS; the outputs
 * None or writable buffers */
static PyObject *recipe_quantize(PyObject *self, PyObject *args)
{
    (void)self;
    fpk_recipe r;
    fpy_buf x = {.held = false}, out[4] = {{.held = false}, {.held = false}, {.held = false},
                                           {.held = false}};
    Py_ssize_t rows, cols;
    PyObject *codes, *scales, *y, *xt, *hist, *st;
    if (!PyArg_ParseTuple(args, "O&O&nnOOOOOO", recipe_conv, &r, fpy_buf_conv, &x, &rows, &cols,
                          &codes, &scales, &y, &xt, &hist, &st))
        return NULL;
    PyObject *res = NULL;
    fpk_quantized q;
    memset(&q, 0, sizeof q);
    size_t br, bc, n = (size_t)rows * (size_t)cols;
    if (rows < 0 || cols < 0 || (cols && (size_t)rows > SIZE_MAX / 4 / (size_t)cols)) {
        PyErr_Format(PyExc_ValueError, "recipe: a view of %zd x %zd", rows, cols);
        goto out;
    }
    if ((size_t)x.view.len != n * 4) {
        PyErr_Format(PyExc_ValueError, "recipe: x holds %zd bytes, not %zu float32", x.view.len, n);
        goto out;
    }
    size_t nb = fpk_recipe_blocks(&r, (size_t)rows, (size_t)cols, &br, &bc);
    void *p[4];
    if (!optional_out(codes, &out[0], n, 1, "codes", &p[0]) ||
        !optional_out(scales, &out[1], nb, 4, "scales", &p[1]) ||
        !optional_out(y, &out[2], n, 4, "y", &p[2]) || !optional_out(xt, &out[3], n, 4, "xt", &p[3]))
        goto out;
    q.codes = p[0], q.scales = p[1], q.y = p[2], q.xt = p[3];
    if (hist != Py_None && !PyObject_TypeCheck(hist, &history_type)) {
        PyErr_SetString(PyExc_TypeError, "recipe: history must be an AmaxHistory");
        goto out;
    }
    if (st != Py_None && !PyObject_TypeCheck(st, &rstats_type)) {
        PyErr_SetString(PyExc_TypeError, "recipe: stats must be a RecipeStatsCore");
        goto out;
    }
    if (r.history && hist == Py_None) {
        PyErr_Format(fpy_error, "recipe with history=%d: give an AmaxHistory", r.history);
        goto out;
    }
    const fpk_amax_history *h = hist == Py_None ? NULL : &((history *)hist)->h;
    fpk_recipe_stats *s = st == Py_None ? NULL : &((rstats *)st)->s;
    fpk_error err;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fpk_recipe_quantize(&r, x.view.buf, (size_t)rows, (size_t)cols, h, &q, s, &err);
    Py_END_ALLOW_THREADS
    if (rc != FPK_OK)
        PyErr_SetString(fpy_error, err.msg);
    else
        res = Py_BuildValue("IdI", q.global, (double)q.amax, q.flags);
out:
    fpy_buf_release(&x);
    for (int k = 0; k < 4; k++)
        fpy_buf_release(&out[k]);
    return res;
}

/* recipe_dequantize(recipe, codes, scales, global, rows, cols, y) */
static PyObject *recipe_dequantize(PyObject *self, PyObject *args)
{
    (void)self;
    fpk_recipe r;
    fpy_buf codes = {.held = false}, scales = {.held = false}, y = {.held = false};
    unsigned int global;
    Py_ssize_t rows, cols;
    if (!PyArg_ParseTuple(args, "O&O&O&InnO&", recipe_conv, &r, fpy_buf_conv, &codes,
                          fpy_buf_conv, &scales, &global, &rows, &cols, fpy_wbuf_conv, &y))
        return NULL;
    PyObject *res = NULL;
    size_t br, bc, n = (size_t)rows * (size_t)cols;
    size_t nb = rows < 0 || cols < 0 ? 0 : fpk_recipe_blocks(&r, (size_t)rows, (size_t)cols, &br, &bc);
    if (rows < 0 || cols < 0 || (size_t)codes.view.len != n || (size_t)y.view.len != 4 * n ||
        (size_t)scales.view.len != 4 * nb)
        PyErr_Format(PyExc_ValueError,
                     "recipe: %zd x %zd needs %zu codes, %zu scales and room for %zu values", rows,
                     cols, n, nb, n);
    else {
        Py_BEGIN_ALLOW_THREADS
        fpk_recipe_dequantize(&r, codes.view.buf, scales.view.buf, global, (size_t)rows,
                              (size_t)cols, y.view.buf);
        Py_END_ALLOW_THREADS
        res = Py_NewRef(Py_None);
    }
    fpy_buf_release(&codes);
    fpy_buf_release(&scales);
    fpy_buf_release(&y);
    return res;
}

/* recipe_pack(recipe, codes, scales) -> (packed codes, packed scales):
 * the layouts checkpoints store */
static PyObject *recipe_pack(PyObject *self, PyObject *args)
{
    (void)self;
    fpk_recipe r;
    fpy_buf codes = {.held = false}, scales = {.held = false};
    if (!PyArg_ParseTuple(args, "O&O&O&", recipe_conv, &r, fpy_buf_conv, &codes, fpy_buf_conv,
                          &scales))
        return NULL;
    PyObject *res = NULL;
    size_t n = (size_t)codes.view.len, nb = (size_t)scales.view.len / 4;
    PyObject *pc = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)fpk_recipe_code_bytes(&r, n));
    PyObject *ps = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)fpk_recipe_scale_bytes(&r, nb));
    if (scales.view.len % 4)
        PyErr_SetString(PyExc_ValueError, "recipe: scales are 4 bytes each");
    else if (pc && ps) {
        fpk_recipe_encode(&r, codes.view.buf, n, (uint8_t *)PyBytes_AS_STRING(pc));
        fpk_recipe_encode_scales(&r, scales.view.buf, nb, (uint8_t *)PyBytes_AS_STRING(ps));
        res = PyTuple_Pack(2, pc, ps);
    }
    Py_XDECREF(pc);
    Py_XDECREF(ps);
    fpy_buf_release(&codes);
    fpy_buf_release(&scales);
    return res;
}

/* recipe_unpack(recipe, packed codes, n, packed scales, nblocks, codes, scales) */
static PyObject *recipe_unpack(PyObject *self, PyObject *args)
{
    (void)self;
    fpk_recipe r;
    fpy_buf pc = {.held = false}, ps = {.held = false}, codes = {.held = false},
            scales = {.held = false};
    Py_ssize_t n, nb;
    if (!PyArg_ParseTuple(args, "O&O&nO&nO&O&", recipe_conv, &r, fpy_buf_conv, &pc, &n,
                          fpy_buf_conv, &ps, &nb, fpy_wbuf_conv, &codes, fpy_wbuf_conv, &scales))
        return NULL;
    PyObject *res = NULL;
    if (n < 0 || nb < 0 || (size_t)pc.view.len != fpk_recipe_code_bytes(&r, (size_t)n) ||
        (size_t)ps.view.len != fpk_recipe_scale_bytes(&r, (size_t)nb) || codes.view.len != n ||
        scales.view.len != 4 * nb)
        PyErr_Format(PyExc_ValueError,
                     "recipe: %zd packed bytes do not hold %zd codes, or %zd bytes %zd scales",
                     pc.view.len, n, ps.view.len, nb);
    else {
        fpk_recipe_decode(&r, pc.view.buf, (size_t)n, codes.view.buf);
        fpk_recipe_decode_scales(&r, ps.view.buf, (size_t)nb, scales.view.buf);
        res = Py_NewRef(Py_None);
    }
    fpy_buf_release(&pc);
    fpy_buf_release(&ps);
    fpy_buf_release(&codes);
    fpy_buf_release(&scales);
    return res;
}

PyMethodDef fpy_recipe_methods[] = {
    {"recipe_parse", recipe_parse, METH_O, "recipe_parse(text) -> the descriptor's fields."},
    {"recipe_presets", recipe_presets, METH_NOARGS, "The preset names (fpk_recipe_presets)."},
    {"recipe_blocks", recipe_blocks, METH_VARARGS,
     "recipe_blocks(recipe, rows, cols) -> (blocks, block rows, block cols)."},
    {"recipe_quantize", recipe_quantize, METH_VARARGS,
     "recipe_quantize(recipe, x, rows, cols, codes, scales, y, xt, history, stats) -> "
     "(global, amax, flags): fpk_recipe_quantize."},
    {"recipe_dequantize", recipe_dequantize, METH_VARARGS,
     "recipe_dequantize(recipe, codes, scales, global, rows, cols, y): fpk_recipe_dequantize."},
    {"recipe_pack", recipe_pack, METH_VARARGS,
     "recipe_pack(recipe, codes, scales) -> (bytes, bytes): fpk_recipe_encode and _scales."},
    {"recipe_unpack", recipe_unpack, METH_VARARGS,
     "recipe_unpack(recipe, codes bytes, n, scale bytes, nblocks, codes, scales)."},
    {NULL, NULL, 0, NULL},
};

int fpy_recipe_add_types(PyObject *m)
{
    if (PyType_Ready(&history_type) < 0 || PyType_Ready(&rstats_type) < 0)
        return -1;
    if (PyModule_AddObject(m, "AmaxHistory", Py_NewRef((PyObject *)&history_type)) < 0 ||
        PyModule_AddObject(m, "RecipeStatsCore", Py_NewRef((PyObject *)&rstats_type)) < 0)
        return -1;
    return 0;
}
