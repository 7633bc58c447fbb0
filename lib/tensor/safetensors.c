/* safetensors files (huggingface/safetensors, "Format"):
 *
 *     N (8 bytes, little-endian)  N bytes of JSON  the data
 *
 * The JSON header is an object: for each tensor, in file order,
 *     "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
 * with offsets relative to the first byte after the header, and optionally
 * "__metadata__": {"key": "value", ...}.  Parsed with jansson; every field
 * is validated before the file is accepted.  Gaps between tensors are
 * allowed; overlaps are not. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-impl.h"

/* The reference implementation's limit. */
#define ST_MAX_HEADER 100000000u

/* Everything a tensor's checks need. */
typedef struct st_ctx {
    fpk_dump *d;
    uint32_t k; /* the file's index in d->files */
    uint64_t size; /* its size */
    size_t first;  /* its first tensor in d->stored */
    fpk_error *err;
    uint64_t data_start; /* 8 + N */
    uint64_t *begin, *end; /* each tensor's data_offsets */
} st_ctx;

#define quote fpki_quote

/* A non-negative JSON integer into *X. */
static bool get_u64(const json_t *j, uint64_t *x)
{
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return false;
    *x = (uint64_t)json_integer_value(j);
    return true;
}

static int parse_tensor(st_ctx *c, size_t k, const char *key, json_t *v)
{
    uint64_t shape_of[FPK_MAX_DIMS];
    fpki_stored tensor = {.name = key, .file = c->k, .shape = shape_of}, *t = &tensor;
    fpki_quoted name = quote(key);
    if (!json_is_object(v))
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k, "tensor \"%s\" is not a JSON object",
                               name.s);
    const char *field;
    json_t *x;
    json_object_foreach(v, field, x) {
        if (strcmp(field, "dtype") != 0 && strcmp(field, "shape") != 0 &&
            strcmp(field, "data_offsets") != 0)
            return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                                   "tensor \"%s\" has the unknown field \"%s\"", name.s,
                                   quote(field).s);
    }

    json_t *dtype = json_object_get(v, "dtype");
    if (!json_is_string(dtype))
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k, "tensor \"%s\" has no string \"dtype\"",
                               name.s);
    if (!fpki_stype_lookup(json_string_value(dtype), true, &t->stype))
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "tensor \"%s\" has dtype \"%s\", which is not a safetensors "
                               "dtype fpkit knows",
                               name.s, quote(json_string_value(dtype)).s);

    json_t *shape = json_object_get(v, "shape");
    if (!json_is_array(shape))
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k, "tensor \"%s\" has no \"shape\" list",
                               name.s);
    if (json_array_size(shape) > FPK_MAX_DIMS)
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "tensor \"%s\" has a shape of %zu dimensions; at most %d are read",
                               name.s, json_array_size(shape), FPK_MAX_DIMS);
    t->ndim = (int)json_array_size(shape);
    for (int j = 0; j < t->ndim; j++)
        if (!get_u64(json_array_get(shape, (size_t)j), &t->shape[j]))
            return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                                   "tensor \"%s\" has shape dimension %d not a non-negative "
                                   "integer",
                                   name.s, j);

    json_t *offs = json_object_get(v, "data_offsets");
    uint64_t begin, end;
    if (!json_is_array(offs) || json_array_size(offs) != 2 ||
        !get_u64(json_array_get(offs, 0), &begin) || !get_u64(json_array_get(offs, 1), &end) ||
        begin > end)
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "tensor \"%s\" needs \"data_offsets\" [begin, end] with 0 <= begin "
                               "<= end",
                               name.s);

    unsigned bits = fpki_stype_of(t->stype)->bits;
    size_t size = bits >= 8 ? bits / 8 : 1;
    uint64_t bytes;
    char shape_text[96];
    fpki_shape_text(shape_text, sizeof shape_text, t->shape, t->ndim, '[', ']');
    if (!fpki_shape_size(t->shape, t->ndim, size, &t->count, &bytes))
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "tensor \"%s\" has shape %s x %zu bytes, over 2^64 bytes", name.s,
                               shape_text, size);
    if (bits == 4) {
        /* whole bytes only, as safetensors itself requires */
        if (t->count % 2)
            return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                                   "tensor \"%s\" of 4-bit elements has shape %s, an odd "
                                   "number of elements, which fill no whole bytes",
                                   name.s, shape_text);
        bytes = t->count / 2;
    }
    if (end - begin != bytes)
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "tensor \"%s\" has data_offsets [%" PRIu64 ", %" PRIu64
                               "] but shape %s x %zu bytes needs %" PRIu64,
                               name.s, begin, end, shape_text, size, bytes);
    uint64_t data_size = c->size - c->data_start;
    if (end > data_size)
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "tensor \"%s\" has data_offsets [%" PRIu64 ", %" PRIu64
                               "] past the end of the data: %" PRIu64 " bytes from byte %" PRIu64,
                               name.s, begin, end, data_size, c->data_start);
    t->offset = c->data_start + begin;
    c->begin[k] = begin;
    c->end[k] = end;
    return fpki_add_stored(c->d, t, NULL, c->err);
}

static int parse_metadata(st_ctx *c, json_t *v)
{
    fpk_dump *d = c->d;
    if (!json_is_object(v))
        return fpki_file_error(c->err, FPK_EFORMAT, d, c->k, "__metadata__ is not a JSON object");
    const char *key;
    json_t *value;
    json_object_foreach(v, key, value) {
        if (!json_is_string(value))
            return fpki_file_error(c->err, FPK_EFORMAT, d, c->k,
                                   "__metadata__ \"%s\" is not a string", quote(key).s);
        /* a shard's metadata is the index's business */
        int rc = c->k == 0 ? fpki_add_metadata(d, key, json_string_value(value), c->err) : FPK_OK;
        if (rc != FPK_OK)
            return rc;
    }
    return FPK_OK;
}

typedef struct span {
    uint64_t begin, end;
    size_t index;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* No byte belongs to two tensors (empty tensors hold no bytes). */
static int check_overlap(st_ctx *c, size_t ntensors)
{
    fpk_dump *d = c->d;
    span *s = malloc((ntensors ? ntensors : 1) * sizeof *s);
    if (!s)
        return fpki_file_error(c->err, FPK_ENOMEM, d, c->k, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < ntensors; i++)
        if (c->begin[i] < c->end[i])
            s[n++] = (span){c->begin[i], c->end[i], i};
    qsort(s, n, sizeof *s, span_cmp);
    int rc = FPK_OK;
    for (size_t i = 1; i < n && rc == FPK_OK; i++)
        if (s[i].begin < s[i - 1].end)
            rc = fpki_file_error(c->err, FPK_EFORMAT, d, c->k,
                                 "tensors \"%s\" [%" PRIu64 ", %" PRIu64 "] and \"%s\" [%" PRIu64
                                 ", %" PRIu64 "] overlap",
                                 quote(d->stored[c->first + s[i - 1].index].name).s, s[i - 1].begin,
                                 s[i - 1].end, quote(d->stored[c->first + s[i].index].name).s,
                                 s[i].begin, s[i].end);
    free(s);
    return rc;
}

/* The header's entries in file order (jansson keeps insertion order). */
static int parse_root(st_ctx *c, json_t *root)
{
    fpk_dump *d = c->d;
    if (!json_is_object(root))
        return fpki_file_error(c->err, FPK_EFORMAT, d, c->k,
                               "header at byte 8 is not a JSON object");
    size_t n = json_object_size(root) - (json_object_get(root, "__metadata__") != NULL);
    size_t cap = n ? n : 1;
    c->begin = calloc(cap, sizeof *c->begin);
    c->end = calloc(cap, sizeof *c->end);
    if (!c->begin || !c->end)
        return fpki_file_error(c->err, FPK_ENOMEM, d, c->k, "out of memory for %zu tensors", n);
    c->first = d->nstored;
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        int rc = strcmp(key, "__metadata__") == 0 ? parse_metadata(c, v)
                                                  : parse_tensor(c, k++, key, v);
        if (rc != FPK_OK)
            return rc;
    }
    return check_overlap(c, k);
}

int fpki_safetensors_parse(fpk_dump *d, uint32_t k, fpk_error *err)
{
    uint64_t size = d->files[k].size;
    unsigned char b[8];
    if (size < sizeof b)
        return fpki_file_error(err, FPK_EFORMAT, d, k,
                               "file is %" PRIu64 " bytes, too short for the 8-byte header length",
                               size);
    int rc = fpki_file_pread(d, k, b, sizeof b, 0, "the header length", err);
    if (rc != FPK_OK)
        return rc;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | b[i];
    if (n == 0 || n > ST_MAX_HEADER)
        return fpki_file_error(err, FPK_EFORMAT, d, k,
                               "header length %" PRIu64 " at byte 0 is not between 1 and %u", n,
                               ST_MAX_HEADER);
    if (n > size - 8)
        return fpki_file_error(err, FPK_EFORMAT, d, k,
                               "file is %" PRIu64 " bytes, but its header runs to byte %" PRIu64,
                               size, 8 + n);
    char *text = malloc((size_t)n);
    if (!text)
        return fpki_file_error(err, FPK_ENOMEM, d, k,
                               "out of memory for a %" PRIu64 "-byte header", n);
    rc = fpki_file_pread(d, k, text, (size_t)n, 8, "the JSON header", err);
    json_error_t jerr;
    json_t *root = rc == FPK_OK ? json_loadb(text, (size_t)n, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    free(text);
    if (rc != FPK_OK)
        return rc;
    if (!root) {
        char why[128];
        fpki_quote_text(why, sizeof why, jerr.text, strlen(jerr.text));
        return fpki_file_error(err, FPK_EFORMAT, d, k, "header JSON at byte %" PRIu64 ": %s",
                               8 + (uint64_t)jerr.position, why);
    }
    st_ctx c = {.d = d, .k = k, .size = size, .err = err, .data_start = 8 + n};
    rc = parse_root(&c, root);
    json_decref(root);
    free(c.begin);
    free(c.end);
    return rc;
}

int fpki_safetensors_open(fpk_dump *d, fpk_error *err)
{
    d->kind = "safetensors";
    int rc = fpki_safetensors_parse(d, 0, err);
    if (rc == FPK_OK) {
        /* a quantisation config beside the file */
        char *dir = strdup(d->path);
        if (!dir)
            return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
        char *slash = strrchr(dir, '/');
        if (slash)
            slash[1] = '\0';
        rc = fpki_quant_config(d, slash ? dir : "", err);
        free(dir);
    }
    return rc;
}
