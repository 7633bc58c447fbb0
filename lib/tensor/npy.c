/* NumPy .npy files, versions 1.0, 2.0 and 3.0 (numpy/lib/format.py, NEP 1):
 *
 *     \x93NUMPY  major minor  header length (v1: 2 bytes LE, v2/v3: 4)  header
 *
 * The header is a Python dict literal, e.g.
 *
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 *
 * padded with spaces and ended by '\n'.  It is read by a small strict
 * parser of exactly that grammar: the three keys once each, in any order,
 * strings in single or double quotes without escapes, True or False,
 * a tuple of non-negative decimal integers (Python 2 writers' "3L"
 * accepted, as numpy's reader does), white space between tokens.
 * The data follows the header and must fill the rest of the file exactly. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-impl.h"

/* numpy itself refuses headers over 10000 bytes unless told otherwise. */
#define NPY_MAX_HEADER (1u << 20)

/* The descrs read, and the dtype each means.  NumPy has no bfloat16 or
 * 8-bit float: ml_dtypes saves bfloat16 as "<V2" (no other ml_dtypes or
 * NumPy type writes a byte-ordered 2-byte void) and float8_e5m2 as "<f1"
 * (NumPy has no 1-byte float). */
static const struct {
    const char *descr;
    fpk_dtype dtype;
    bool big_endian;
} npy_descrs[] = {
    {"<f8", FPK_DTYPE_F64, false}, {">f8", FPK_DTYPE_F64, true},
    {"<f4", FPK_DTYPE_F32, false}, {">f4", FPK_DTYPE_F32, true},
    {"<f2", FPK_DTYPE_F16, false}, {">f2", FPK_DTYPE_F16, true},
    {"<V2", FPK_DTYPE_BF16, false}, {">V2", FPK_DTYPE_BF16, true},
    {"<f1", FPK_DTYPE_E5M2, false}, {">f1", FPK_DTYPE_E5M2, false},
    {"|f1", FPK_DTYPE_E5M2, false},
};

typedef struct parser {
    const char *s; /* the header */
    size_t len, pos;
    uint64_t base; /* file offset of s[0] */
    fpk_dump *d;
    fpk_error *err;
} parser;

/* "header at byte N: WHAT, found X", N counted from the start of the file. */
static int syntax(parser *p, const char *what)
{
    char found[16];
    if (p->pos >= p->len)
        snprintf(found, sizeof found, "the end");
    else if (p->s[p->pos] >= 0x20 && p->s[p->pos] < 0x7f)
        snprintf(found, sizeof found, "'%c'", p->s[p->pos]);
    else
        snprintf(found, sizeof found, "byte 0x%02x", (unsigned char)p->s[p->pos]);
    return fpki_dump_error(p->err, FPK_EFORMAT, p->d, "header at byte %" PRIu64 ": %s, found %s",
                           p->base + p->pos, what, found);
}

static int peek(const parser *p)
{
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

/* Python's white space inside a dict literal, newlines included (numpy's
 * reader evaluates the literal; its writer puts spaces only). */
static void skip_ws(parser *p)
{
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\r' || peek(p) == '\n')
        p->pos++;
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* A quoted string of printable ASCII without escapes, at most CAP-1 bytes,
 * into OUT. */
static int parse_string(parser *p, char *out, size_t cap, const char *what)
{
    int quote = peek(p);
    if (quote != '\'' && quote != '"')
        return syntax(p, what);
    size_t start = ++p->pos;
    for (;;) {
        int c = peek(p);
        if (c == quote)
            break;
        if (c < 0x20 || c >= 0x7f || c == '\\')
            return syntax(p, "expected a closing quote (strings hold printable ASCII, no escapes)");
        if (p->pos - start + 1 >= cap)
            return syntax(p, "string too long");
        p->pos++;
    }
    memcpy(out, p->s + start, p->pos - start);
    out[p->pos - start] = '\0';
    p->pos++;
    return FPK_OK;
}

static int parse_bool(parser *p, bool *value)
{
    static const char *const words[2] = {"False", "True"};
    for (int v = 0; v < 2; v++) {
        size_t n = strlen(words[v]);
        if (p->len - p->pos >= n && memcmp(p->s + p->pos, words[v], n) == 0) {
            int after = p->pos + n < p->len ? (unsigned char)p->s[p->pos + n] : -1;
            if (after == '_' || is_digit(after) || (after >= 'A' && after <= 'Z') ||
                (after >= 'a' && after <= 'z'))
                break;
            p->pos += n;
            *value = v;
            return FPK_OK;
        }
    }
    return syntax(p, "expected True or False for 'fortran_order'");
}

/* "header shape (3, -1) is not valid: WHY at byte N", quoting the shape
 * from START to its ')' (or as far as is reasonable). */
static int shape_error(parser *p, size_t start, const char *why)
{
    size_t end = start;
    while (end < p->len && end - start < 48 && p->s[end] != ')' && p->s[end] != '\n')
        end++;
    if (end < p->len && p->s[end] == ')')
        end++;
    char text[64];
    fpki_quote_text(text, sizeof text, p->s + start, end - start);
    return fpki_dump_error(p->err, FPK_EFORMAT, p->d,
                           "header shape %s is not valid: %s at byte %" PRIu64, text, why,
                           p->base + p->pos);
}

/* A tuple of dimensions: "()", "(3,)", "(3, 4)", "(3, 4,)". */
static int parse_shape(parser *p, fpk_tensor *t)
{
    size_t start = p->pos;
    if (peek(p) != '(')
        return syntax(p, "expected a tuple such as (3, 4) for 'shape'");
    p->pos++;
    bool comma = false;
    t->ndim = 0;
    for (;;) {
        skip_ws(p);
        if (peek(p) == ')') {
            p->pos++;
            break;
        }
        if (t->ndim > 0 && !comma)
            return shape_error(p, start, "expected ',' or ')'");
        if (!is_digit(peek(p)))
            return shape_error(p, start, "expected a non-negative integer");
        if (peek(p) == '0' && p->pos + 1 < p->len && is_digit((unsigned char)p->s[p->pos + 1]))
            return shape_error(p, start, "leading zero");
        uint64_t dim = 0;
        while (is_digit(peek(p))) {
            if (__builtin_mul_overflow(dim, 10, &dim) ||
                __builtin_add_overflow(dim, (uint64_t)(peek(p) - '0'), &dim))
                return shape_error(p, start, "dimension exceeds 2^64-1");
            p->pos++;
        }
        if (peek(p) == 'L')
            p->pos++;
        if (t->ndim == FPK_MAX_DIMS) {
            char why[32];
            snprintf(why, sizeof why, "more than %d dimensions", FPK_MAX_DIMS);
            return shape_error(p, start, why);
        }
        t->shape[t->ndim++] = dim;
        comma = false;
        skip_ws(p);
        if (peek(p) == ',') {
            p->pos++;
            comma = true;
        }
    }
    if (t->ndim == 1 && !comma) {
        p->pos--;
        return shape_error(p, start, "one dimension is written (N,), (N) is a number");
    }
    return FPK_OK;
}

/* The dtype of DESCR, or an error saying why it is not read. */
static int set_descr(parser *p, fpk_tensor *t, const char *descr)
{
    for (size_t i = 0; i < sizeof npy_descrs / sizeof npy_descrs[0]; i++)
        if (strcmp(descr, npy_descrs[i].descr) == 0) {
            t->dtype = npy_descrs[i].dtype;
            t->big_endian = npy_descrs[i].big_endian;
            return FPK_OK;
        }
    bool no_order = descr[0] == '|' || descr[0] == '=';
    if (no_order && (!strcmp(descr + 1, "f2") || !strcmp(descr + 1, "f4") ||
                     !strcmp(descr + 1, "f8") || !strcmp(descr + 1, "V2")))
        return fpki_dump_error(p->err, FPK_EFORMAT, p->d,
                               "header descr '%s' gives no byte order for a multi-byte float",
                               descr);
    if (descr[0] && strcmp(descr + 1, "V1") == 0)
        return fpki_dump_error(p->err, FPK_EFORMAT, p->d,
                               "header descr '%s' is how ml_dtypes saves every 1-byte type but "
                               "float8_e5m2, so its format cannot be told; save as float32 or "
                               "safetensors",
                               descr);
    return fpki_dump_error(p->err, FPK_EFORMAT, p->d,
                           "header descr '%s' is not a supported dtype: <f8 <f4 <f2 (or >), "
                           "<V2 (ml_dtypes bfloat16), <f1 (ml_dtypes float8_e5m2)",
                           descr);
}

/* The header dict into T. */
static int parse_header(parser *p, fpk_tensor *t)
{
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    bool seen[3] = {false, false, false};
    int rc;
    if (peek(p) != '{')
        return syntax(p, "expected '{' opening the header dict");
    p->pos++;
    for (;;) {
        skip_ws(p);
        if (peek(p) == '}')
            break;
        char key[32];
        if ((rc = parse_string(p, key, sizeof key, "expected a quoted key or '}'")) != FPK_OK)
            return rc;
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]) != 0)
            k++;
        if (k == 3)
            return fpki_dump_error(p->err, FPK_EFORMAT, p->d,
                                   "header key '%s' is not one of 'descr', 'fortran_order', "
                                   "'shape'",
                                   key);
        if (seen[k])
            return fpki_dump_error(p->err, FPK_EFORMAT, p->d, "header key '%s' appears twice", key);
        seen[k] = true;
        skip_ws(p);
        if (peek(p) != ':')
            return syntax(p, "expected ':' after a key");
        p->pos++;
        skip_ws(p);
        if (k == 0) {
            char descr[32];
            if (peek(p) == '[')
                return fpki_dump_error(p->err, FPK_EFORMAT, p->d,
                                       "header descr is a list (a structured dtype); only "
                                       "float arrays are read");
            rc = parse_string(p, descr, sizeof descr, "expected a quoted descr such as '<f4'");
            if (rc != FPK_OK || (rc = set_descr(p, t, descr)) != FPK_OK)
                return rc;
        } else if (k == 1) {
            if ((rc = parse_bool(p, &t->fortran_order)) != FPK_OK)
                return rc;
        } else if ((rc = parse_shape(p, t)) != FPK_OK) {
            return rc;
        }
        skip_ws(p);
        if (peek(p) == ',')
            p->pos++;
        else if (peek(p) != '}')
            return syntax(p, "expected ',' or '}' after a value");
    }
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len)
        return syntax(p, "expected only padding after the header's closing '}'");
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            return fpki_dump_error(p->err, FPK_EFORMAT, p->d, "header has no '%s' key", keys[k]);
    return FPK_OK;
}

/* The fixed prefix: magic, version and header length; the offset of the
 * header into *START, its length into *HLEN. */
static int read_prefix(fpk_dump *d, uint64_t *start, uint32_t *hlen, fpk_error *err)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    unsigned char b[12];
    uint64_t fsize = d->files[0].size;
    size_t n = fsize < sizeof b ? (size_t)fsize : sizeof b;
    int rc = fpki_dump_pread(d, b, n, 0, "the .npy prefix", err);
    if (rc != FPK_OK)
        return rc;
    if (memcmp(b, magic, n < 6 ? n : 6) != 0)
        return fpki_dump_error(err, FPK_EFORMAT, d, "no .npy magic \\x93NUMPY at byte 0");
    if (n < 8)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "file is %zu bytes, too short for the .npy magic and version", n);
    if (b[6] < 1 || b[6] > 3 || b[7] != 0)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               ".npy version %u.%u at byte 6 is not 1.0, 2.0 or 3.0", b[6], b[7]);
    size_t lenbytes = b[6] == 1 ? 2 : 4;
    if (n < 8 + lenbytes)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "file is %zu bytes, too short for the %zu-byte header length "
                               "at byte 8",
                               n, lenbytes);
    *hlen = b[8] | (uint32_t)b[9] << 8;
    if (lenbytes == 4)
        *hlen |= (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
    *start = 8 + lenbytes;
    if (*hlen > NPY_MAX_HEADER)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "header length %" PRIu32 " at byte 8 exceeds the limit of %u bytes",
                               *hlen, NPY_MAX_HEADER);
    if (fsize < *start + *hlen)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "file is %" PRIu64 " bytes, but its header runs to byte %" PRIu64,
                               fsize, *start + *hlen);
    return FPK_OK;
}

int fpki_npy_open(fpk_dump *d, fpk_error *err)
{
    d->kind = "npy";
    uint64_t start = 0;
    uint32_t hlen = 0;
    int rc = read_prefix(d, &start, &hlen, err);
    if (rc != FPK_OK)
        return rc;
    fpk_tensor tensor = {0}, *t = &tensor;
    char *text = malloc(hlen > 0 ? hlen : 1);
    if (!text)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory for a %" PRIu32 "-byte header",
                               hlen);
    rc = fpki_dump_pread(d, text, hlen, start, "the .npy header", err);
    if (rc == FPK_OK) {
        parser p = {.s = text, .len = hlen, .base = start, .d = d, .err = err};
        rc = parse_header(&p, t);
    }
    free(text);
    if (rc != FPK_OK)
        return rc;
    size_t size = fpk_dtype_size(t->dtype);
    uint64_t bytes;
    if (!fpki_shape_size(t->shape, t->ndim, size, &t->count, &bytes)) {
        char shape[128];
        fpki_shape_text(shape, sizeof shape, t->shape, t->ndim, '(', ')');
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "header shape %s x %zu bytes exceeds 2^64 bytes", shape, size);
    }
    t->offset = start + hlen;
    uint64_t fsize = d->files[0].size;
    uint64_t have = fsize - t->offset;
    if (have != bytes)
        return fpki_dump_error(err, FPK_EFORMAT, d,
                               "file is %" PRIu64 " bytes, header promises %" PRIu64
                               " bytes of data from byte %" PRIu64 " (%s by %" PRIu64 ")",
                               fsize, bytes, t->offset, have < bytes ? "short" : "long",
                               have < bytes ? bytes - have : have - bytes);
    /* fpk_dtype and fpki_stype number the six dtypes alike */
    fpki_stored st = {.name = fpki_dump_basename(d), .stype = (fpki_stype)t->dtype,
                      .big_endian = t->big_endian, .fortran_order = t->fortran_order,
                      .ndim = t->ndim, .count = t->count, .offset = t->offset,
                      .shape = t->shape};
    return fpki_add_stored(d, &st, NULL, err);
}
