/* Test-vector lines: the operations, their evaluation by the library, and
 * the TestFloat line layout (vectors.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "vectors.h"

static const vec_op ops[] = {
    {"add", VEC_ADD, 2, VEC_FLOAT, VEC_FLOAT},
    {"sub", VEC_SUB, 2, VEC_FLOAT, VEC_FLOAT},
    {"mul", VEC_MUL, 2, VEC_FLOAT, VEC_FLOAT},
    {"div", VEC_DIV, 2, VEC_FLOAT, VEC_FLOAT},
    {"fma", VEC_FMA, 3, VEC_FLOAT, VEC_FLOAT},
    {"sqrt", VEC_SQRT, 1, VEC_FLOAT, VEC_FLOAT},
    {"convert", VEC_CONVERT, 1, VEC_FLOAT, VEC_FLOAT},
    {"eq", VEC_EQ, 2, VEC_FLOAT, VEC_BOOL},
    {"lt", VEC_LT, 2, VEC_FLOAT, VEC_BOOL},
    {"le", VEC_LE, 2, VEC_FLOAT, VEC_BOOL},
    {"eq_signaling", VEC_EQ_SIGNALING, 2, VEC_FLOAT, VEC_BOOL},
    {"lt_signaling", VEC_LT_SIGNALING, 2, VEC_FLOAT, VEC_BOOL},
    {"le_signaling", VEC_LE_SIGNALING, 2, VEC_FLOAT, VEC_BOOL},
    {"to_int", VEC_TO_INT, 1, VEC_FLOAT, VEC_INT},
    {"from_int", VEC_FROM_INT, 1, VEC_INT, VEC_FLOAT},
    {NULL, 0, 0, 0, 0},
};

static const vec_op *op_lookup(const char *name)
{
    for (const vec_op *op = ops; op->name; op++)
        if (strcasecmp(op->name, name) == 0)
            return op;
    fprintf(stderr, "%s: unknown operation \"%s\"; known operations: ", cli_prog(), name);
    for (const vec_op *op = ops; op->name; op++)
        fprintf(stderr, "%s%s", op == ops ? "" : ", ", op->name);
    fputc('\n', stderr);
    exit(CLI_EXIT_USAGE);
}

void vec_spec_from(vec_spec *s, const cli_common *c)
{
    *s = (vec_spec){.ctx = c->ctx};
    if (!c->op)
        cli_die(CLI_EXIT_USAGE, "--op is missing (see %s --help)", cli_prog());
    s->op = op_lookup(c->op);
    if (!c->format)
        cli_die(CLI_EXIT_USAGE, "--format is missing (see %s --help)", cli_prog());
    s->fmt = c->format;
    if (c->nto > 1)
        cli_die(CLI_EXIT_USAGE, "--to names one format, the result's: %d given", c->nto);
    s->to = c->nto ? c->to[0] : NULL;
    if (s->ctx.round == FPK_SR)
        cli_die(CLI_EXIT_USAGE, "--round sr: a vector's result must not depend on its place in the "
                                "file; use rne, rna, rtz, rup, rdn or rod");
    if (s->op->code == VEC_CONVERT && !s->to)
        cli_die(CLI_EXIT_USAGE, "--op convert needs --to FMT, the result's format");
    if (s->op->code != VEC_CONVERT && s->to)
        cli_die(CLI_EXIT_USAGE, "--to is for --op convert only, not %s", s->op->name);
}

const fpk_format *vec_in_format(const vec_spec *s)
{
    return s->op->in == VEC_FLOAT ? s->fmt : NULL;
}

const fpk_format *vec_out_format(const vec_spec *s)
{
    return s->op->out != VEC_FLOAT ? NULL : s->to ? s->to : s->fmt;
}

const char *vec_describe(const vec_spec *s)
{
    static char buf[128];
    snprintf(buf, sizeof buf, "%s %s%s%s %s%s%s%s%s", s->op->name, s->fmt->name, s->to ? " -> " : "",
             s->to ? s->to->name : "", fpk_round_name(s->ctx.round), s->ctx.tiny_before ? ", tininess before" : "",
             s->ctx.ftz ? ", ftz" : "", s->ctx.daz ? ", daz" : "", s->ctx.saturate ? ", saturate" : "");
    return buf;
}

void vec_eval(const vec_spec *s, vec_case *c, const fpk_round *mode)
{
    const fpk_format *f = s->fmt;
    const uint64_t *x = c->in;
    fpk_ctx ctx = s->ctx;
    ctx.flags = 0;
    if (mode)
        ctx.round = *mode;
    switch (s->op->code) {
    case VEC_ADD: c->z = fpk_add(f, x[0], x[1], &ctx); break;
    case VEC_SUB: c->z = fpk_sub(f, x[0], x[1], &ctx); break;
    case VEC_MUL: c->z = fpk_mul(f, x[0], x[1], &ctx); break;
    case VEC_DIV: c->z = fpk_div(f, x[0], x[1], &ctx); break;
    case VEC_FMA: c->z = fpk_fma(f, x[0], x[1], x[2], &ctx); break;
    case VEC_SQRT: c->z = fpk_sqrt(f, x[0], &ctx); break;
    case VEC_CONVERT: c->z = fpk_convert(s->to, f, x[0], &ctx); break;
    case VEC_EQ: c->z = fpk_eq(f, x[0], x[1], &ctx); break;
    case VEC_LT: c->z = fpk_lt(f, x[0], x[1], &ctx); break;
    case VEC_LE: c->z = fpk_le(f, x[0], x[1], &ctx); break;
    case VEC_EQ_SIGNALING: c->z = fpk_eq_signaling(f, x[0], x[1], &ctx); break;
    case VEC_LT_SIGNALING: c->z = fpk_lt_signaling(f, x[0], x[1], &ctx); break;
    case VEC_LE_SIGNALING: c->z = fpk_le_signaling(f, x[0], x[1], &ctx); break;
    case VEC_TO_INT: c->z = (uint64_t)fpk_to_int64(f, x[0], &ctx); break;
    case VEC_FROM_INT: c->z = fpk_from_int64(f, (int64_t)x[0], &ctx); break;
    }
    c->flags = ctx.flags;
}

unsigned vec_flags_tf(unsigned flags)
{
    /* fpkit numbers the five flags from invalid (1) to inexact (16),
     * TestFloat from inexact (1) to invalid (16): the bits reversed. */
    unsigned r = 0;
    for (int i = 0; i < 5; i++)
        if (flags & (1u << i))
            r |= 1u << (4 - i);
    return r;
}

/* The container a format's field is written in: tf32 as the 32 bits GPUs
 * hold it in, its low 13 bits zero (docs/DESIGN.md "Formats"). */
static int container_shift(const fpk_format *f)
{
    return f == &fpk_tf32 ? 32 - f->width : 0;
}

static int field_digits(vec_kind k, const fpk_format *f)
{
    if (k == VEC_BOOL)
        return 1;
    if (k == VEC_INT)
        return 16;
    return (f->width + container_shift(f) + 3) / 4;
}

static char *put_hex(char *p, uint64_t v, int digits)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int i = digits - 1; i >= 0; i--)
        *p++ = hex[v >> (4 * i) & 15];
    return p;
}

static char *put_field(char *p, vec_kind k, const fpk_format *f, uint64_t v)
{
    if (k == VEC_FLOAT)
        v <<= container_shift(f);
    return put_hex(p, v, field_digits(k, f));
}

size_t vec_format_line(const vec_spec *s, const vec_case *c, bool with_flags, char *buf)
{
    char *p = buf;
    for (int i = 0; i < s->op->arity; i++) {
        p = put_field(p, s->op->in, vec_in_format(s), c->in[i]);
        *p++ = ' ';
    }
    p = put_field(p, s->op->out, vec_out_format(s), c->z);
    if (with_flags) {
        *p++ = ' ';
        p = put_hex(p, vec_flags_tf(c->flags), 2);
    }
    *p++ = '\n';
    *p = '\0';
    return (size_t)(p - buf);
}

/* WHY gets "NAME: "the N characters at P" WHAT", control characters
 * escaped (a \f or an ESC must not reach the terminal as it is). */
static void field_error(char *why, size_t len, const char *name, const char *p, size_t n,
                        const char *what)
{
    char *raw = cli_xcalloc(n + 1, 1);
    memcpy(raw, p, n);
    char *text = cli_printable(raw);
    snprintf(why, len, "%s: \"%s\" %s", name, text, what);
    free(text);
    free(raw);
}

/* Reads the field of N characters at P, of kind K, into *V; on error writes
 * why into WHY, naming the field as NAME. */
static bool parse_field(const char *p, size_t n, vec_kind k, const fpk_format *f, const char *name,
                        uint64_t *v, char *why, size_t len)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        int d = ch >= '0' && ch <= '9' ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0 || i >= 16) {
            field_error(why, len, name, p, n,
                        d < 0 ? "is not hexadecimal" : "is not a field of at most 16 hexadecimal digits");
            return false;
        }
        x = x << 4 | (uint64_t)d;
    }
    if (k == VEC_BOOL && x > 1) {
        field_error(why, len, name, p, n, "is not 0 or 1");
        return false;
    }
    if (k == VEC_FLOAT) {
        int shift = container_shift(f);
        if (shift && (x & (((uint64_t)1 << shift) - 1))) {
            char what[96];
            snprintf(what, sizeof what, "is not a %s 32-bit container: its low %d bits must be zero",
                     f->name, shift);
            field_error(why, len, name, p, n, what);
            return false;
        }
        x >>= shift;
        if (f->width < 64 && x >> f->width) {
            char what[96];
            snprintf(what, sizeof what, "does not fit %s's %d bits%s", f->name, f->width,
                     shift ? " (in a 32-bit container)" : "");
            field_error(why, len, name, p, n, what);
            return false;
        }
    }
    *v = x;
    return true;
}

int vec_parse_line(const vec_spec *s, const char *line, bool with_flags, vec_case *c, char *why,
                   size_t len)
{
    static const char *const operand_names[] = {"operand a", "operand b", "operand c"};
    int arity = s->op->arity, nfields = arity + 1 + with_flags;
    const char *p = line;
    char name[32];
    *c = (vec_case){0};
    for (int i = 0; i < nfields; i++) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, " \t\r");
        if (n == 0) {
            snprintf(why, len, "%d fields, expected %d (%s%s)", i, nfields,
                     arity == 1 ? "a result" : arity == 2 ? "a b result" : "a b c result",
                     with_flags ? " flags" : "");
            return i + 1;
        }
        uint64_t v;
        bool ok;
        if (i < arity) {
            snprintf(name, sizeof name, "field %d (%s)", i + 1, operand_names[i]);
            ok = parse_field(p, n, s->op->in, vec_in_format(s), name, &v, why, len);
            c->in[i] = v;
        } else if (i == arity) {
            snprintf(name, sizeof name, "field %d (result)", i + 1);
            ok = parse_field(p, n, s->op->out, vec_out_format(s), name, &v, why, len);
            c->z = v;
        } else {
            snprintf(name, sizeof name, "field %d (flags)", i + 1);
            ok = parse_field(p, n, VEC_INT, NULL, name, &v, why, len);
            if (ok && v > 0x1f) {
                field_error(why, len, name, p, n, "is not a set of TestFloat flags (at most 1F)");
                ok = false;
            }
            c->flags = vec_flags_tf((unsigned)v);
        }
        if (!ok)
            return i + 1;
        p += n;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    if (*p) {
        snprintf(why, len, "more than %d fields, expected %s%s", nfields,
                 arity == 1 ? "a result" : arity == 2 ? "a b result" : "a b c result",
                 with_flags ? " flags" : "");
        return nfields + 1;
    }
    return 0;
}
