/* A restricted unpickler (zip-impl.h): a small machine over the pickle
 * opcodes torch.save writes (protocol 2; Python's Lib/pickletools.py
 * documents each), and the few protocol 4 adds for the same values.  It
 * builds values and never runs anything: a GLOBAL must be one the caller
 * allows, and calling it (REDUCE) only records the call. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zip-impl.h"

typedef struct vm {
    const char *path; /* the file, for messages */
    const char *what;
    const unsigned char *p;
    size_t len, pos, op_at;
    const fpki_pk_global *allowed;
    size_t nallowed;
    fpki_arena *arena;
    fpk_error *err;
    fpki_pk **stack;
    size_t sp, stack_cap;
    size_t *marks;
    size_t nmarks, marks_cap;
    fpki_pk **memo;
    size_t memo_cap;
    size_t memo_n; /* distinct indices put: where MEMOIZE puts next */
} vm;

static int fail(vm *m, const char *fmt, const char *a, const char *b)
{
    char what[320];
    snprintf(what, sizeof what, fmt, a, b);
    return fpki_path_error(m->err, FPK_EFORMAT, m->path, "%s, byte %zu: %s", m->what, m->op_at,
                           what);
}

static fpki_pk *new_value(vm *m, fpki_pk_kind kind)
{
    fpki_pk *v = fpki_arena_alloc(m->arena, sizeof *v);
    if (v)
        v->kind = kind;
    return v;
}

/* Appends X to container C's items. */
static bool add_item(vm *m, fpki_pk *c, fpki_pk *x)
{
    if (c->len == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        fpki_pk **items = fpki_arena_alloc(m->arena, cap * sizeof *items);
        if (!items)
            return false;
        if (c->len)
            memcpy(items, c->items, c->len * sizeof *items);
        c->items = items;
        c->cap = cap;
    }
    c->items[c->len++] = x;
    return true;
}

static int oom(vm *m)
{
    return fpki_path_error(m->err, FPK_ENOMEM, m->path, "%s: out of memory", m->what);
}

static int push(vm *m, fpki_pk *v)
{
    if (!v)
        return oom(m);
    if (m->sp == m->stack_cap) {
        size_t cap = m->stack_cap ? 2 * m->stack_cap : 64;
        fpki_pk **s = realloc(m->stack, cap * sizeof *s);
        if (!s)
            return oom(m);
        m->stack = s;
        m->stack_cap = cap;
    }
    m->stack[m->sp++] = v;
    return FPK_OK;
}

static int pop(vm *m, fpki_pk **v)
{
    size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
    if (m->sp <= floor)
        return fail(m, "a value popped from an empty stack%s%s", "", "");
    *v = m->stack[--m->sp];
    return FPK_OK;
}

/* The values since the last MARK: *FROM their first on the stack. */
static int pop_mark(vm *m, size_t *from)
{
    if (!m->nmarks)
        return fail(m, "no MARK before the opcode that needs one%s%s", "", "");
    *from = m->marks[--m->nmarks];
    return FPK_OK;
}

/* N bytes of argument, or a failure at the end of the pickle. */
static const unsigned char *take(vm *m, size_t n)
{
    if (n > m->len - m->pos)
        return NULL;
    const unsigned char *a = m->p + m->pos;
    m->pos += n;
    return a;
}

static uint64_t le(const unsigned char *a, size_t n)
{
    uint64_t x = 0;
    for (size_t i = n; i-- > 0;)
        x = x << 8 | a[i];
    return x;
}

static int cut(vm *m)
{
    return fail(m, "the pickle ends inside an opcode's argument%s%s", "", "");
}

static int push_int(vm *m, int64_t x)
{
    fpki_pk *v = new_value(m, FPKI_PK_INT);
    if (v)
        v->i = x;
    return push(m, v);
}

static int push_str(vm *m, size_t lenbytes)
{
    const unsigned char *a = take(m, lenbytes);
    if (!a)
        return cut(m);
    uint64_t n = le(a, lenbytes);
    if (n > m->len - m->pos)
        return fail(m, "a string runs past the end of the pickle%s%s", "", "");
    fpki_pk *v = new_value(m, FPKI_PK_STR);
    if (!v || !(v->s = fpki_arena_copy(m->arena, m->p + m->pos, (size_t)n)))
        return oom(m);
    v->len = (size_t)n;
    m->pos += (size_t)n;
    return push(m, v);
}

/* A LONG1/LONG4 integer: little-endian two's complement, within int64. */
static int push_long(vm *m, size_t lenbytes)
{
    const unsigned char *a = take(m, lenbytes);
    if (!a)
        return cut(m);
    uint64_t n = le(a, lenbytes);
    if (n > 8)
        return fail(m, "an integer of more than 64 bits%s%s", "", "");
    const unsigned char *b = take(m, (size_t)n);
    if (!b)
        return cut(m);
    uint64_t x = le(b, (size_t)n);
    if (n > 0 && n < 8 && (b[n - 1] & 0x80))
        x |= ~UINT64_C(0) << (8 * n); /* sign-extended */
    return push_int(m, (int64_t)x);
}

/* A tuple of the values from stack position FROM on. */
static int make_tuple(vm *m, size_t from, fpki_pk_kind kind)
{
    fpki_pk *t = new_value(m, kind);
    if (!t)
        return oom(m);
    for (size_t i = from; i < m->sp; i++)
        if (!add_item(m, t, m->stack[i]))
            return oom(m);
    m->sp = from;
    return push(m, t);
}

static int make_global(vm *m, const char *module, size_t mlen, const char *name, size_t nlen)
{
    for (size_t i = 0; i < m->nallowed; i++)
        if (strlen(m->allowed[i].module) == mlen && strlen(m->allowed[i].name) == nlen &&
            memcmp(m->allowed[i].module, module, mlen) == 0 &&
            memcmp(m->allowed[i].name, name, nlen) == 0) {
            fpki_pk *g = new_value(m, FPKI_PK_GLOBAL);
            if (g)
                g->i = (int64_t)i;
            return push(m, g);
        }
    char a[80], b[80];
    fpki_quote_text(a, sizeof a, module, mlen);
    fpki_quote_text(b, sizeof b, name, nlen);
    return fail(m, "the global %s.%s is not one torch.save writes for tensors; fpkit runs no "
                   "code from a pickle",
                a, b);
}

static int op_global(vm *m)
{
    /* "module\nname\n" */
    const char *s = (const char *)m->p + m->pos;
    size_t left = m->len - m->pos;
    const char *nl1 = memchr(s, '\n', left);
    const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', left - (size_t)(nl1 + 1 - s)) : NULL;
    if (!nl2)
        return cut(m);
    m->pos += (size_t)(nl2 + 1 - s);
    return make_global(m, s, (size_t)(nl1 - s), nl1 + 1, (size_t)(nl2 - nl1 - 1));
}

static int op_stack_global(vm *m)
{
    fpki_pk *name = NULL, *module = NULL;
    int rc = pop(m, &name);
    if (rc == FPK_OK)
        rc = pop(m, &module);
    if (rc != FPK_OK)
        return rc;
    if (module->kind != FPKI_PK_STR || name->kind != FPKI_PK_STR)
        return fail(m, "STACK_GLOBAL of values that are not strings%s%s", "", "");
    return make_global(m, module->s, module->len, name->s, name->len);
}

static int op_reduce(vm *m)
{
    fpki_pk *args = NULL, *f = NULL;
    int rc = pop(m, &args);
    if (rc == FPK_OK)
        rc = pop(m, &f);
    if (rc != FPK_OK)
        return rc;
    if (f->kind != FPKI_PK_GLOBAL || args->kind != FPKI_PK_TUPLE)
        return fail(m, "REDUCE of something that is not a global and its arguments%s%s", "", "");
    if (m->allowed[f->i].dict_type) {
        if (args->len != 0)
            return fail(m, "%s.%s called with arguments", m->allowed[f->i].module,
                        m->allowed[f->i].name);
        return push(m, new_value(m, FPKI_PK_DICT));
    }
    fpki_pk *c = new_value(m, FPKI_PK_CALL);
    if (!c || !add_item(m, c, f) || !add_item(m, c, args) || !add_item(m, c, NULL))
        return oom(m);
    c->len = 2; /* the state, items[2], comes with BUILD */
    return push(m, c);
}

static int op_build(vm *m)
{
    fpki_pk *state = NULL, *obj = NULL;
    int rc = pop(m, &state);
    if (rc == FPK_OK)
        rc = pop(m, &obj);
    if (rc != FPK_OK)
        return rc;
    if (obj->kind != FPKI_PK_CALL || obj->items[2])
        return fail(m, "BUILD of something that is not a call's result%s%s", "", "");
    obj->items[2] = state;
    return push(m, obj);
}

/* Items FROM .. sp-1 (key, value pairs when DICT) into container C. */
static int fill(vm *m, fpki_pk *c, size_t from, bool dict)
{
    if (dict ? c->kind != FPKI_PK_DICT : c->kind != FPKI_PK_LIST)
        return fail(m, "items added to a %s that is not one%s", dict ? "dict" : "list", "");
    if (dict && (m->sp - from) % 2)
        return fail(m, "a key without a value%s%s", "", "");
    for (size_t i = from; i < m->sp; i++)
        if (!add_item(m, c, m->stack[i]))
            return oom(m);
    m->sp = from;
    return FPK_OK;
}

static int op_setitems(vm *m, bool one)
{
    size_t from = 0;
    int rc = one ? FPK_OK : pop_mark(m, &from);
    if (rc != FPK_OK)
        return rc;
    if (one)
        from = m->sp >= 2 ? m->sp - 2 : m->sp;
    if (from == 0 || (one && m->sp < 3))
        return fail(m, "SETITEM%s without a dict under it%s", one ? "" : "S", "");
    rc = fill(m, m->stack[from - 1], from, true);
    return rc;
}

static int op_appends(vm *m, bool one)
{
    size_t from = 0;
    int rc = one ? FPK_OK : pop_mark(m, &from);
    if (rc != FPK_OK)
        return rc;
    if (one)
        from = m->sp >= 1 ? m->sp - 1 : 0;
    if (from == 0 || (one && m->sp < 2))
        return fail(m, "APPEND%s without a list under it%s", one ? "" : "S", "");
    return fill(m, m->stack[from - 1], from, false);
}

static int memo_put(vm *m, uint64_t k)
{
    if (!m->sp)
        return fail(m, "PUT with an empty stack%s%s", "", "");
    if (k >= m->len + 1)
        return fail(m, "a memo index larger than the pickle%s%s", "", "");
    if (k >= m->memo_cap) {
        size_t cap = m->memo_cap ? m->memo_cap : 64;
        while (cap <= k)
            cap *= 2;
        fpki_pk **v = realloc(m->memo, cap * sizeof *v);
        if (!v)
            return oom(m);
        memset(v + m->memo_cap, 0, (cap - m->memo_cap) * sizeof *v);
        m->memo = v;
        m->memo_cap = cap;
    }
    m->memo_n += m->memo[k] == NULL;
    m->memo[k] = m->stack[m->sp - 1];
    return FPK_OK;
}

static int memo_get(vm *m, uint64_t k)
{
    if (k >= m->memo_cap || !m->memo[k]) {
        char n[24];
        snprintf(n, sizeof n, "%" PRIu64, k);
        return fail(m, "GET of memo %s, never put%s", n, "");
    }
    return push(m, m->memo[k]);
}

/* One opcode OP; *DONE at STOP. */
static int step(vm *m, unsigned char op, bool *done)
{
    const unsigned char *a;
    fpki_pk *v;
    size_t from = 0;
    int rc;
    switch (op) {
    case 0x80: /* PROTO */
        if (!(a = take(m, 1)))
            return cut(m);
        if (a[0] < 2 || a[0] > 5)
            return fail(m, "pickle protocol %s%s, not 2 to 5", a[0] < 2 ? "0 or 1" : "6 or more",
                        "");
        return FPK_OK;
    case 0x95: /* FRAME: a length, of no consequence here */
        return take(m, 8) ? FPK_OK : cut(m);
    case '.': /* STOP */
        *done = true;
        return FPK_OK;
    case '(': /* MARK */
        if (m->nmarks == m->marks_cap) {
            if (m->marks_cap >= FPKI_PK_MAX_DEPTH)
                return fail(m, "MARKs nested deeper than the limit%s%s", "", "");
            size_t cap = m->marks_cap ? 2 * m->marks_cap : 16;
            size_t *s = realloc(m->marks, cap * sizeof *s);
            if (!s)
                return oom(m);
            m->marks = s;
            m->marks_cap = cap;
        }
        m->marks[m->nmarks++] = m->sp;
        return FPK_OK;
    case '0': /* POP */
        return pop(m, &v);
    case '1': /* POP_MARK */
        if ((rc = pop_mark(m, &from)) == FPK_OK)
            m->sp = from;
        return rc;
    case 'N':
        return push(m, new_value(m, FPKI_PK_NONE));
    case 0x88: /* NEWTRUE */
    case 0x89: /* NEWFALSE */
        if ((v = new_value(m, FPKI_PK_BOOL)))
            v->i = op == 0x88;
        return push(m, v);
    case 'J': /* BININT */
        return (a = take(m, 4)) ? push_int(m, (int32_t)(uint32_t)le(a, 4)) : cut(m);
    case 'K': /* BININT1 */
        return (a = take(m, 1)) ? push_int(m, a[0]) : cut(m);
    case 'M': /* BININT2 */
        return (a = take(m, 2)) ? push_int(m, (int64_t)le(a, 2)) : cut(m);
    case 0x8a: /* LONG1 */
        return push_long(m, 1);
    case 0x8b: /* LONG4 */
        return push_long(m, 4);
    case 'G': { /* BINFLOAT, big-endian */
        if (!(a = take(m, 8)))
            return cut(m);
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = bits << 8 | a[i];
        if ((v = new_value(m, FPKI_PK_FLOAT)))
            memcpy(&v->f, &bits, sizeof v->f);
        return push(m, v);
    }
    case 'X': /* BINUNICODE */
    case 'T': /* BINSTRING */
    case 'B': /* BINBYTES */
        return push_str(m, 4);
    case 0x8c: /* SHORT_BINUNICODE */
    case 'U':  /* SHORT_BINSTRING */
    case 'C':  /* SHORT_BINBYTES */
        return push_str(m, 1);
    case 0x8d: /* BINUNICODE8 */
    case 0x8e: /* BINBYTES8 */
        return push_str(m, 8);
    case ')': /* EMPTY_TUPLE */
        return push(m, new_value(m, FPKI_PK_TUPLE));
    case 't': /* TUPLE */
        return (rc = pop_mark(m, &from)) == FPK_OK ? make_tuple(m, from, FPKI_PK_TUPLE) : rc;
    case 0x85: /* TUPLE1 */
    case 0x86: /* TUPLE2 */
    case 0x87: { /* TUPLE3 */
        size_t n = (size_t)(op - 0x84);
        size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
        if (m->sp < floor + n)
            return fail(m, "TUPLE%s of fewer values than that%s", n == 1 ? "1" : n == 2 ? "2" : "3",
                        "");
        return make_tuple(m, m->sp - n, FPKI_PK_TUPLE);
    }
    case ']': /* EMPTY_LIST */
        return push(m, new_value(m, FPKI_PK_LIST));
    case 'l': /* LIST */
        return (rc = pop_mark(m, &from)) == FPK_OK ? make_tuple(m, from, FPKI_PK_LIST) : rc;
    case 'a': /* APPEND */
        return op_appends(m, true);
    case 'e': /* APPENDS */
        return op_appends(m, false);
    case '}': /* EMPTY_DICT */
        return push(m, new_value(m, FPKI_PK_DICT));
    case 'd': /* DICT */
        if ((rc = pop_mark(m, &from)) != FPK_OK)
            return rc;
        if ((m->sp - from) % 2)
            return fail(m, "a key without a value%s%s", "", "");
        return make_tuple(m, from, FPKI_PK_DICT);
    case 's': /* SETITEM */
        return op_setitems(m, true);
    case 'u': /* SETITEMS */
        return op_setitems(m, false);
    case 'c': /* GLOBAL */
        return op_global(m);
    case 0x93: /* STACK_GLOBAL */
        return op_stack_global(m);
    case 'R': /* REDUCE */
        return op_reduce(m);
    case 'b': /* BUILD */
        return op_build(m);
    case 'Q': /* BINPERSID */
        if ((rc = pop(m, &v)) != FPK_OK)
            return rc;
        {
            fpki_pk *p = new_value(m, FPKI_PK_PERSID);
            if (!p || !add_item(m, p, v))
                return oom(m);
            return push(m, p);
        }
    case 'q': /* BINPUT */
        return (a = take(m, 1)) ? memo_put(m, a[0]) : cut(m);
    case 'r': /* LONG_BINPUT */
        return (a = take(m, 4)) ? memo_put(m, le(a, 4)) : cut(m);
    case 0x94: /* MEMOIZE */
        return memo_put(m, m->memo_n);
    case 'h': /* BINGET */
        return (a = take(m, 1)) ? memo_get(m, a[0]) : cut(m);
    case 'j': /* LONG_BINGET */
        return (a = take(m, 4)) ? memo_get(m, le(a, 4)) : cut(m);
    default: {
        char name[16];
        if (op >= 0x21 && op < 0x7f)
            snprintf(name, sizeof name, "'%c'", op);
        else
            snprintf(name, sizeof name, "0x%02x", op);
        return fail(m, "opcode %s is not one torch.save writes; fpkit runs no code from a "
                       "pickle%s",
                    name, "");
    }
    }
}

int fpki_unpickle(const char *path, const char *what, const unsigned char *p, size_t len,
                  const fpki_pk_global *allowed, size_t n, fpki_arena *arena, fpki_pk **root,
                  fpk_error *err)
{
    vm m = {.path = path, .what = what, .p = p, .len = len, .allowed = allowed, .nallowed = n,
            .arena = arena, .err = err};
    *root = NULL;
    bool done = false;
    int rc = FPK_OK;
    while (rc == FPK_OK && !done) {
        m.op_at = m.pos;
        if (m.pos >= m.len) {
            rc = fail(&m, "the pickle ends without STOP%s%s", "", "");
            break;
        }
        rc = step(&m, m.p[m.pos++], &done);
    }
    if (rc == FPK_OK && (m.sp != 1 || m.nmarks))
        rc = fail(&m, "STOP leaves %s%s on the stack, not one value",
                  m.nmarks ? "a MARK" : m.sp ? "several values" : "nothing", "");
    if (rc == FPK_OK)
        *root = m.stack[0];
    free(m.stack);
    free(m.marks);
    free(m.memo);
    return rc;
}
