/* torch.save files (PyTorch 1.6 and later; torch/serialization.py): a zip
 * archive whose members are ARCHIVE/data.pkl, a pickle of the saved
 * object in which every tensor is a call
 *
 *     torch._utils._rebuild_tensor_v2(storage, storage_offset, size,
 *                                     stride, requires_grad, hooks[, meta])
 *
 * (_rebuild_tensor_v3 adds the dtype, for storages saved untyped;
 * _rebuild_parameter wraps one in an nn.Parameter), each storage a
 * persistent id ('storage', torch.FloatStorage, key, location, numel)
 * naming the member ARCHIVE/data/KEY that holds its bytes, stored
 * uncompressed; ARCHIVE/byteorder says "little" or "big".  The tensors
 * found in the object (dicts, OrderedDicts, lists and tuples of them, to
 * any depth) are named by their path in it, "model.layers.0.weight",
 * "optimizer.state.3.exp_avg". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zip-impl.h"

/* The largest data.pkl read (a pickle of a hundred thousand tensors is
 * some tens of megabytes). */
#define PICKLE_LIMIT ((uint64_t)1 << 30)
/* Values a walk of the pickle may visit, per value it holds: shared
 * values are visited once per use, so a pickle sharing a list within a
 * list within a list... (a recursion bomb) is refused, not walked for
 * ever. */
#define VISITS_PER_BYTE 4

enum { G_ORDERED_DICT, G_REBUILD_V2, G_REBUILD_V3, G_PARAMETER, G_PARAMETER_STATE,
       G_UNTYPED, G_FIXED };

typedef struct torch_ctx {
    fpk_dump *d;
    uint32_t k; /* the file's index in d->files */
    fpki_zip *z;
    fpk_error *err;
    char *prefix;  /* "ARCHIVE/" */
    bool big;      /* byteorder "big" */
    fpki_pk_global *allowed;
    size_t nallowed;
    const char **stype_global; /* per allowed global: its stored type's name or NULL */
    fpki_stype *global_stype;
    uint64_t visits, max_visits;
    /* storages located so far, by key: open addressing */
    struct storage {
        const char *key;
        uint64_t offset, size;
    } *storages;
    size_t nstorages, cap;
} torch_ctx;

/* The globals data.pkl may name: fixed ones, then a torch.<X>Storage and
 * a torch.<dtype> per stored type. */
static int make_allowed(torch_ctx *c)
{
    static const fpki_pk_global fixed[G_FIXED] = {
        [G_ORDERED_DICT] = {"collections", "OrderedDict", true},
        [G_REBUILD_V2] = {"torch._utils", "_rebuild_tensor_v2", false},
        [G_REBUILD_V3] = {"torch._utils", "_rebuild_tensor_v3", false},
        [G_PARAMETER] = {"torch._utils", "_rebuild_parameter", false},
        [G_PARAMETER_STATE] = {"torch._utils", "_rebuild_parameter_with_state", false},
        [G_UNTYPED] = {"torch.storage", "UntypedStorage", false},
    };
    static const char *const quantised[] = {"QInt8Storage", "QUInt8Storage", "QInt32Storage",
                                            "QUInt4x2Storage", "QUInt2x4Storage"};
    size_t cap = G_FIXED + 2 * FPKI_ST_COUNT + 5;
    c->allowed = calloc(cap, sizeof *c->allowed);
    c->global_stype = calloc(cap, sizeof *c->global_stype);
    if (!c->allowed || !c->global_stype)
        return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
    memcpy(c->allowed, fixed, sizeof fixed);
    size_t n = G_FIXED;
    for (int t = 0; t < FPKI_ST_OTHER; t++) {
        const fpki_stype_info *info = fpki_stype_of((fpki_stype)t);
        if (info->storage) {
            c->global_stype[n] = (fpki_stype)t;
            c->allowed[n++] = (fpki_pk_global){"torch", info->storage, false};
        }
        if (info->torch) {
            c->global_stype[n] = (fpki_stype)t;
            c->allowed[n++] = (fpki_pk_global){"torch", info->torch, false};
        }
    }
    for (size_t i = 0; i < sizeof quantised / sizeof quantised[0]; i++) {
        c->global_stype[n] = FPKI_ST_OTHER;
        c->allowed[n++] = (fpki_pk_global){"torch", quantised[i], false};
    }
    c->nallowed = n;
    return FPK_OK;
}

static int fail(torch_ctx *c, const char *path, const char *what)
{
    return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k, "tensor \"%s\": %s", fpki_quote(path).s,
                           what);
}

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The member holding storage KEY: its offset and size (found once). */
static int locate_storage(torch_ctx *c, const char *path, const char *key, uint64_t *offset,
                          uint64_t *size)
{
    if (c->nstorages * 2 >= c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct storage *v = calloc(cap, sizeof *v);
        if (!v)
            return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
        for (size_t i = 0; i < c->cap; i++)
            if (c->storages[i].key) {
                size_t j = hash(c->storages[i].key) & (cap - 1);
                while (v[j].key)
                    j = (j + 1) & (cap - 1);
                v[j] = c->storages[i];
            }
        free(c->storages);
        c->storages = v;
        c->cap = cap;
    }
    size_t j = hash(key) & (c->cap - 1);
    for (; c->storages[j].key; j = (j + 1) & (c->cap - 1))
        if (strcmp(c->storages[j].key, key) == 0) {
            *offset = c->storages[j].offset;
            *size = c->storages[j].size;
            return FPK_OK;
        }
    size_t plen = strlen(c->prefix), klen = strlen(key);
    char *member = malloc(plen + 5 + klen + 1);
    if (!member)
        return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
    snprintf(member, plen + 5 + klen + 1, "%sdata/%s", c->prefix, key);
    int64_t i = fpki_zip_find(c->z, member);
    free(member);
    if (i < 0) {
        char why[200];
        snprintf(why, sizeof why, "its storage \"%s\" has no member data/%s in the archive",
                 fpki_quote(key).s, fpki_quote(key).s);
        return fail(c, path, why);
    }
    int rc = fpki_zip_stored(c->z, (size_t)i, offset, size, c->err);
    if (rc != FPK_OK)
        return rc;
    c->storages[j].key = key;
    c->storages[j].offset = *offset;
    c->storages[j].size = *size;
    c->nstorages++;
    return FPK_OK;
}

/* A tuple of non-negative integers into V[0..*N-1]. */
static bool int_tuple(const fpki_pk *t, uint64_t *v, int *n)
{
    if (!t || t->kind != FPKI_PK_TUPLE || t->len > FPK_MAX_DIMS)
        return false;
    for (size_t i = 0; i < t->len; i++) {
        if (t->items[i]->kind != FPKI_PK_INT || t->items[i]->i < 0)
            return false;
        v[i] = (uint64_t)t->items[i]->i;
    }
    *n = (int)t->len;
    return true;
}

/* The tensor of a _rebuild_tensor call CALL at PATH. */
static int add_tensor(torch_ctx *c, const char *path, const fpki_pk *call)
{
    const fpki_pk *args = call->items[1];
    int g = (int)call->items[0]->i;
    size_t need = g == G_REBUILD_V3 ? 7 : 6;
    if (args->len < need)
        return fail(c, path, "_rebuild_tensor called with too few arguments");
    const fpki_pk *pid = args->items[0];
    if (pid->kind != FPKI_PK_PERSID || pid->items[0]->kind != FPKI_PK_TUPLE ||
        pid->items[0]->len != 5)
        return fail(c, path, "its storage is not a persistent id ('storage', type, key, "
                             "location, size)");
    fpki_pk **sp = pid->items[0]->items;
    if (sp[0]->kind != FPKI_PK_STR || strcmp(sp[0]->s, "storage") != 0 ||
        sp[1]->kind != FPKI_PK_GLOBAL || sp[2]->kind != FPKI_PK_STR ||
        sp[4]->kind != FPKI_PK_INT || sp[4]->i < 0)
        return fail(c, path, "its storage is not a persistent id ('storage', type, key, "
                             "location, size)");
    fpki_stype stype;
    uint64_t numel = (uint64_t)sp[4]->i; /* elements of the storage's type */
    if (sp[1]->i == G_UNTYPED) {
        /* bytes; the dtype comes with _rebuild_tensor_v3 */
        const fpki_pk *dt = g == G_REBUILD_V3 ? args->items[6] : NULL;
        if (!dt || dt->kind != FPKI_PK_GLOBAL || dt->i < G_FIXED)
            return fail(c, path, "an untyped storage without a dtype");
        stype = c->global_stype[dt->i];
        unsigned bits = fpki_stype_of(stype)->bits;
        numel /= bits >= 8 ? bits / 8 : 1;
    } else if (sp[1]->i >= G_FIXED) {
        stype = c->global_stype[sp[1]->i];
    } else {
        return fail(c, path, "its storage's type is not a storage class");
    }
    uint64_t shape_of[FPK_MAX_DIMS];
    fpki_stored s = {.name = path, .stype = stype, .big_endian = c->big, .file = c->k,
                     .shape = shape_of};
    uint64_t stride[FPK_MAX_DIMS];
    int nstride = 0;
    if (args->items[1]->kind != FPKI_PK_INT || args->items[1]->i < 0)
        return fail(c, path, "its storage offset is not a non-negative integer");
    uint64_t first = (uint64_t)args->items[1]->i;
    if (!int_tuple(args->items[2], s.shape, &s.ndim))
        return fail(c, path, "its size is not a tuple of at most 32 non-negative integers");
    if (!int_tuple(args->items[3], stride, &nstride) || nstride != s.ndim)
        return fail(c, path, "its stride is not a tuple of non-negative integers, one per "
                             "dimension");
    uint64_t bytes_unused;
    if (!fpki_shape_size(s.shape, s.ndim, 1, &s.count, &bytes_unused))
        return fail(c, path, "its size's product exceeds 2^64");
    /* its last element, which must lie inside the storage */
    uint64_t last = first;
    for (int k = 0; k < s.ndim && s.count > 0; k++) {
        uint64_t step;
        if (__builtin_mul_overflow(s.shape[k] - 1, stride[k], &step) ||
            __builtin_add_overflow(last, step, &last))
            return fail(c, path, "its size and stride overflow 64 bits");
    }
    uint64_t offset, size;
    int rc = locate_storage(c, path, sp[2]->s, &offset, &size);
    if (rc != FPK_OK)
        return rc;
    uint64_t esize = fpki_stype_of(stype)->bits / 8;
    uint64_t storage_bytes;
    if (__builtin_mul_overflow(numel, esize, &storage_bytes) || storage_bytes > size) {
        char why[160];
        snprintf(why, sizeof why,
                 "its storage of %" PRIu64 " elements of %" PRIu64 " bytes is larger than its "
                 "member's %" PRIu64 " bytes",
                 numel, esize, size);
        return fail(c, path, why);
    }
    if (s.count > 0 && last >= numel) {
        char why[160];
        snprintf(why, sizeof why,
                 "its elements reach element %" PRIu64 " of a storage of %" PRIu64, last, numel);
        return fail(c, path, why);
    }
    s.offset = offset + first * esize;
    uint64_t expect = 1;
    bool contiguous = true;
    for (int k = s.ndim - 1; k >= 0; k--) {
        if (s.shape[k] > 1 && stride[k] != expect)
            contiguous = false;
        expect *= s.shape[k];
    }
    if (!contiguous) {
        int64_t *v = fpki_arena_alloc(&c->d->arena, (size_t)s.ndim * sizeof *v);
        if (!v)
            return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
        for (int k = 0; k < s.ndim; k++)
            v[k] = (int64_t)stride[k];
        if (stype == FPKI_ST_F4)
            return fail(c, path, "a strided view of 4-bit elements");
        s.strides = v;
    }
    return fpki_add_stored(c->d, &s, NULL, c->err);
}

/* PATH extended by KEY into a new string in the arena ("" at the root). */
static char *join(torch_ctx *c, const char *path, const fpki_pk *key, size_t index)
{
    char buf[64];
    const char *k = buf;
    size_t klen;
    if (!key) {
        snprintf(buf, sizeof buf, "%zu", index);
        klen = strlen(buf);
    } else if (key->kind == FPKI_PK_STR) {
        k = key->s;
        klen = key->len;
    } else if (key->kind == FPKI_PK_INT) {
        snprintf(buf, sizeof buf, "%" PRId64, key->i);
        klen = strlen(buf);
    } else if (key->kind == FPKI_PK_BOOL) {
        k = key->i ? "True" : "False";
        klen = strlen(k);
    } else if (key->kind == FPKI_PK_FLOAT) {
        snprintf(buf, sizeof buf, "%.17g", key->f);
        klen = strlen(buf);
    } else {
        snprintf(buf, sizeof buf, "%zu", index);
        klen = strlen(buf);
    }
    size_t plen = strlen(path);
    char *s = fpki_arena_alloc(&c->d->arena, plen + 1 + klen + 1);
    if (!s)
        return NULL;
    memcpy(s, path, plen);
    if (plen)
        s[plen++] = '.';
    memcpy(s + plen, k, klen);
    s[plen + klen] = '\0';
    return s;
}

/* Every tensor in V, at PATH, DEPTH containers deep. */
static int walk(torch_ctx *c, const fpki_pk *v, const char *path, int depth)
{
    if (depth > FPKI_PK_MAX_DEPTH)
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "data.pkl: containers nested more than %d deep (a recursion "
                               "bomb?) at \"%s\"",
                               FPKI_PK_MAX_DEPTH, fpki_quote(path).s);
    if (++c->visits > c->max_visits)
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "data.pkl: its values are shared more often than a torch.save "
                               "file shares them (a recursion bomb?)");
    switch (v->kind) {
    case FPKI_PK_DICT:
        for (size_t i = 0; i + 1 < v->len; i += 2) {
            char *p = join(c, path, v->items[i], i / 2);
            if (!p)
                return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
            int rc = walk(c, v->items[i + 1], p, depth + 1);
            if (rc != FPK_OK)
                return rc;
        }
        return FPK_OK;
    case FPKI_PK_LIST:
    case FPKI_PK_TUPLE:
        for (size_t i = 0; i < v->len; i++) {
            char *p = join(c, path, NULL, i);
            if (!p)
                return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
            int rc = walk(c, v->items[i], p, depth + 1);
            if (rc != FPK_OK)
                return rc;
        }
        return FPK_OK;
    case FPKI_PK_CALL: {
        int g = (int)v->items[0]->i;
        const char *base = strrchr(c->d->files[c->k].path, '/');
        const char *name = *path ? path : base ? base + 1 : c->d->files[c->k].path;
        if (g == G_REBUILD_V2 || g == G_REBUILD_V3)
            return add_tensor(c, name, v);
        if ((g == G_PARAMETER || g == G_PARAMETER_STATE) && v->items[1]->len >= 1)
            return walk(c, v->items[1]->items[0], path, depth + 1);
        char why[128];
        snprintf(why, sizeof why, "a call of %s.%s, which makes no tensor", c->allowed[g].module,
                 c->allowed[g].name);
        return fail(c, name, why);
    }
    default:
        return FPK_OK; /* numbers, strings, None: not tensors */
    }
}

/* The archive's record prefix "ARCHIVE/", from its data.pkl. */
static int find_prefix(torch_ctx *c, size_t *pkl)
{
    size_t n = fpki_zip_count(c->z);
    bool torchscript = false;
    for (size_t i = 0; i < n; i++) {
        const char *name = fpki_zip_name(c->z, i);
        if (!name)
            continue;
        const char *slash = strchr(name, '/');
        if (slash && strcmp(slash, "/data.pkl") == 0) {
            c->prefix = strndup(name, (size_t)(slash - name) + 1);
            if (!c->prefix)
                return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
            *pkl = i;
            return FPK_OK;
        }
        torchscript |= slash && strcmp(slash, "/constants.pkl") == 0;
    }
    if (torchscript)
        return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                               "a TorchScript archive (torch.jit.save), not a torch.save file: "
                               "save the module's state_dict() with torch.save");
    return fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                           "a zip file without ARCHIVE/data.pkl, so not a torch.save file");
}

static int read_byteorder(torch_ctx *c)
{
    size_t plen = strlen(c->prefix);
    char *member = malloc(plen + 10);
    if (!member)
        return fpki_dump_error(c->err, FPK_ENOMEM, c->d, "out of memory");
    snprintf(member, plen + 10, "%sbyteorder", c->prefix);
    int64_t i = fpki_zip_find(c->z, member);
    free(member);
    if (i < 0)
        return FPK_OK; /* written since PyTorch 1.13; before, little-endian */
    char *text;
    size_t len;
    int rc = fpki_zip_read(c->z, (size_t)i, 16, &text, &len, c->err);
    if (rc != FPK_OK)
        return rc;
    if (strcmp(text, "little") == 0)
        c->big = false;
    else if (strcmp(text, "big") == 0)
        c->big = true;
    else
        rc = fpki_file_error(c->err, FPK_EFORMAT, c->d, c->k,
                             "byteorder \"%s\" is neither \"little\" nor \"big\"",
                             fpki_quote(text).s);
    free(text);
    return rc;
}

int fpki_torch_open(fpk_dump *d, fpk_error *err)
{
    d->kind = "torch";
    int rc = fpki_torch_parse(d, 0, err);
    if (rc != FPK_OK)
        return rc;
    /* a quantisation config beside the file */
    const char *slash = strrchr(d->path, '/');
    char *dir = strndup(d->path, slash ? (size_t)(slash - d->path) + 1 : 0);
    if (!dir)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    rc = fpki_quant_config(d, dir, err);
    free(dir);
    return rc;
}

int fpki_torch_parse(fpk_dump *d, uint32_t k, fpk_error *err)
{
    torch_ctx c = {.d = d, .k = k, .err = err};
    size_t pkl = 0;
    char *text = NULL;
    size_t len = 0;
    fpki_pk *root = NULL;
    fpki_arena values = {0}; /* the pickle's, freed once walked */
    int rc = make_allowed(&c);
    if (rc == FPK_OK)
        rc = fpki_zip_open(d, k, &c.z, err);
    if (rc == FPK_OK)
        rc = find_prefix(&c, &pkl);
    if (rc == FPK_OK)
        rc = read_byteorder(&c);
    if (rc == FPK_OK)
        rc = fpki_zip_read(c.z, pkl, PICKLE_LIMIT, &text, &len, err);
    if (rc == FPK_OK)
        rc = fpki_unpickle(d->files[k].path, "data.pkl", (const unsigned char *)text, len,
                           c.allowed, c.nallowed, &values, &root, err);
    if (rc == FPK_OK) {
        c.max_visits = VISITS_PER_BYTE * (uint64_t)len + 1024;
        rc = walk(&c, root, "", 0);
    }
    free(text);
    fpki_arena_free(&values);
    free(c.storages);
    free(c.prefix);
    free(c.allowed);
    free(c.global_stype);
    fpki_zip_close(c.z);
    return rc;
}
