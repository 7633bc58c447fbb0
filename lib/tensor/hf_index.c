/* Hugging Face layouts: a model sharded over several files and the
 * index that maps each tensor to its shard,
 *
 *     {"metadata": {"total_size": 16060522496},
 *      "weight_map": {"model.embed_tokens.weight": "model-00001-of-00004.safetensors", ...}}
 *
 * (model.safetensors.index.json; pytorch_model.bin.index.json for torch
 * shards), read as one dump: every shard's header is read, each tensor is
 * taken once, from the shard the index names, in the index's order.  And
 * the files beside a model that say how its tensors are quantised:
 * config.json's "quantization_config", ModelOpt's hf_quant_config.json. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-impl.h"

/* The largest index or config read (a DeepSeek-V3 index is 9 MB). */
#define JSON_LIMIT ((uint64_t)256 << 20)

/* FILE (of D, or outside it: PATH) read whole as JSON into *ROOT. */
static int load_json(fpk_dump *d, uint32_t k, json_t **root, fpk_error *err)
{
    uint64_t size = d->files[k].size;
    if (size > JSON_LIMIT)
        return fpki_file_error(err, FPK_EFORMAT, d, k,
                               "is %" PRIu64 " bytes, over the limit of %" PRIu64
                               " for a JSON file",
                               size, JSON_LIMIT);
    char *text = malloc(size ? (size_t)size : 1);
    if (!text)
        return fpki_file_error(err, FPK_ENOMEM, d, k, "out of memory");
    int rc = fpki_file_pread(d, k, text, (size_t)size, 0, "the JSON", err);
    json_error_t jerr;
    *root = rc == FPK_OK ? json_loadb(text, (size_t)size, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    free(text);
    if (rc != FPK_OK)
        return rc;
    if (!*root) {
        char why[128];
        fpki_quote_text(why, sizeof why, jerr.text, strlen(jerr.text));
        return fpki_file_error(err, FPK_EFORMAT, d, k, "JSON at byte %d: %s", jerr.position,
                               why);
    }
    return FPK_OK;
}

/* Whether a shard's name NAME stays inside the index's directory: not
 * absolute, no ".." component, not empty. */
static bool inside(const char *name)
{
    if (!*name || *name == '/')
        return false;
    for (const char *p = name; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += n + (e != NULL);
    }
    return true;
}

/* The directory of PATH with its slash ("dir/"), or "" (malloc'd). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return strndup(path, slash ? (size_t)(slash - path) + 1 : 0);
}

/* A stored tensor's name to its index in d->stored: open addressing. */
typedef struct name_map {
    size_t *slot; /* index + 1; 0: empty */
    size_t cap;
} name_map;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static size_t *map_find(name_map *m, const fpk_dump *d, const char *name)
{
    size_t j = hash(name) & (m->cap - 1);
    while (m->slot[j] && strcmp(d->stored[m->slot[j] - 1].name, name) != 0)
        j = (j + 1) & (m->cap - 1);
    return &m->slot[j];
}

/* Shard K, of the kind its first bytes say, parsed into D. */
static int parse_shard(fpk_dump *d, uint32_t k, fpk_error *err)
{
    unsigned char head[9] = {0};
    uint64_t size = d->files[k].size;
    int rc = fpki_file_pread(d, k, head, size < 9 ? (size_t)size : 9, 0, "the first bytes", err);
    if (rc != FPK_OK)
        return rc;
    if (size >= 4 && memcmp(head, "PK\x03\x04", 4) == 0)
        return fpki_torch_parse(d, k, err);
    return fpki_safetensors_parse(d, k, err);
}

/* Each stored tensor is where the index says, and the index names no
 * other; then the stored list in the index's order. */
static int check_and_order(fpk_dump *d, json_t *map, uint32_t *shard_of_entry, fpk_error *err)
{
    name_map m = {0};
    m.cap = 16;
    while (m.cap < 2 * d->nstored + 2)
        m.cap *= 2;
    m.slot = calloc(m.cap, sizeof *m.slot);
    fpki_stored *ordered = malloc((d->nstored ? d->nstored : 1) * sizeof *ordered);
    int rc = m.slot && ordered ? FPK_OK : fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    for (size_t i = 0; rc == FPK_OK && i < d->nstored; i++) {
        size_t *slot = map_find(&m, d, d->stored[i].name);
        if (*slot) {
            const fpki_stored *a = &d->stored[*slot - 1], *b = &d->stored[i];
            rc = fpki_dump_error(err, FPK_EFORMAT, d, "tensor \"%s\" is in two shards, %s and %s",
                                 fpki_quote(b->name).s, d->files[a->file].path,
                                 d->files[b->file].path);
        }
        *slot = i + 1;
    }
    size_t n = 0, e = 0;
    const char *name;
    json_t *v;
    json_object_foreach(map, name, v) {
        if (rc != FPK_OK)
            break;
        size_t *slot = map_find(&m, d, name);
        uint32_t k = shard_of_entry[e++];
        if (!*slot || d->stored[*slot - 1].file != k) {
            rc = fpki_dump_error(err, FPK_EFORMAT, d,
                                 "tensor \"%s\": the index puts it in %s, which does not hold it",
                                 fpki_quote(name).s, d->files[k].path);
            break;
        }
        ordered[n++] = d->stored[*slot - 1];
    }
    if (rc == FPK_OK && n != d->nstored) {
        /* a shard's tensor the index does not name */
        for (size_t i = 0; i < d->nstored; i++)
            if (!json_object_get(map, d->stored[i].name)) {
                rc = fpki_file_error(err, FPK_EFORMAT, d, d->stored[i].file,
                                     "holds tensor \"%s\", which the index does not list",
                                     fpki_quote(d->stored[i].name).s);
                break;
            }
    }
    if (rc == FPK_OK && n) /* (an empty map: no list to copy into) */
        memcpy(d->stored, ordered, n * sizeof *ordered);
    free(ordered);
    free(m.slot);
    return rc;
}

static int read_index(fpk_dump *d, json_t *root, const char *dir, fpk_error *err)
{
    if (!json_is_object(root))
        return fpki_dump_error(err, FPK_EFORMAT, d, "the index is not a JSON object");
    json_t *meta = json_object_get(root, "metadata");
    const char *key;
    json_t *v;
    if (meta && !json_is_object(meta) && !json_is_null(meta))
        return fpki_dump_error(err, FPK_EFORMAT, d, "\"metadata\" is not a JSON object");
    json_object_foreach(meta, key, v) {
        char text[64];
        if (json_is_string(v))
            snprintf(text, sizeof text, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else
            continue;
        int rc = fpki_add_metadata(d, key, text, err);
        if (rc != FPK_OK)
            return rc;
    }
    json_t *map = json_object_get(root, "weight_map");
    if (!json_is_object(map))
        return fpki_dump_error(err, FPK_EFORMAT, d, "the index has no \"weight_map\" object");
    size_t n = json_object_size(map);
    uint32_t *shard_of = calloc(n ? n : 1, sizeof *shard_of);
    if (!shard_of)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    int rc = FPK_OK;
    size_t e = 0;
    json_object_foreach(map, key, v) {
        if (!json_is_string(v)) {
            rc = fpki_dump_error(err, FPK_EFORMAT, d,
                                 "weight_map: tensor \"%s\" maps to something not a file name",
                                 fpki_quote(key).s);
            break;
        }
        const char *file = json_string_value(v);
        if (!inside(file)) {
            rc = fpki_dump_error(err, FPK_EFORMAT, d,
                                 "weight_map: shard \"%s\" of tensor \"%s\" leaves the index's "
                                 "directory",
                                 fpki_quote(file).s, fpki_quote(key).s);
            break;
        }
        /* a shard seen before (shards are few: a linear search) */
        uint32_t k = 0;
        size_t dlen = strlen(dir);
        for (uint32_t j = 1; j < d->nfiles && !k; j++)
            if (strcmp(d->files[j].path + dlen, file) == 0)
                k = j;
        if (!k) {
            char *path = malloc(dlen + strlen(file) + 1);
            if (!path) {
                rc = fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
                break;
            }
            strcpy(path, dir);
            strcat(path, file);
            rc = fpki_dump_add_file(d, path, &k, err);
            free(path);
            if (rc == FPK_OK)
                rc = fpki_file_check(d, k, err);
            int fd;
            if (rc == FPK_OK && (rc = fpki_file_acquire(d, k, &fd, err)) == FPK_OK) {
                /* kept open while its header is read */
                rc = parse_shard(d, k, err);
                fpki_file_release(d, k);
            }
            if (rc != FPK_OK)
                break;
        }
        shard_of[e++] = k;
    }
    if (rc == FPK_OK)
        rc = check_and_order(d, map, shard_of, err);
    free(shard_of);
    return rc;
}

int fpki_index_open(fpk_dump *d, fpk_error *err)
{
    d->kind = "index";
    json_t *root;
    int rc = load_json(d, 0, &root, err);
    if (rc != FPK_OK)
        return rc;
    char *dir = dir_of(d->path);
    rc = dir ? read_index(d, root, dir, err) : fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    json_decref(root);
    if (rc == FPK_OK)
        rc = fpki_quant_config(d, dir, err);
    free(dir);
    return rc;
}

/* A positive JSON integer that fits 32 bits into *X. */
static bool get_u32(json_t *j, uint32_t *x)
{
    if (!json_is_integer(j) || json_integer_value(j) <= 0 ||
        json_integer_value(j) > (json_int_t)UINT32_MAX)
        return false;
    *x = (uint32_t)json_integer_value(j);
    return true;
}

/* What a quantization_config (or hf_quant_config.json's "quantization")
 * Q says, into D, read from the file numbered K. */
static int read_quant(fpk_dump *d, uint32_t k, json_t *q, bool modelopt, fpk_error *err)
{
    if (!json_is_object(q))
        return fpki_file_error(err, FPK_EFORMAT, d, k, "the quantisation config is not an object");
    const char *slash = strrchr(d->files[k].path, '/');
    snprintf(d->quant_source, sizeof d->quant_source, "%s", slash ? slash + 1 : d->files[k].path);
    json_t *method = json_object_get(q, modelopt ? "quant_algo" : "quant_method");
    json_t *format = json_object_get(q, modelopt ? "quant_algo" : "format");
    const char *m = json_is_string(method) ? json_string_value(method) : "?";
    if (modelopt || strcmp(m, "modelopt") == 0) {
        json_t *algo = json_object_get(q, "quant_algo");
        snprintf(d->quant_method, sizeof d->quant_method, "modelopt:%s",
                 json_is_string(algo) ? json_string_value(algo) : "?");
    } else if (json_is_string(format)) {
        snprintf(d->quant_method, sizeof d->quant_method, "%s:%s", m, json_string_value(format));
    } else {
        snprintf(d->quant_method, sizeof d->quant_method, "%s", m);
    }
    json_t *block = json_object_get(q, "weight_block_size");
    if (block && (!json_is_array(block) || json_array_size(block) != 2 ||
                  !get_u32(json_array_get(block, 0), &d->quant_block_rows) ||
                  !get_u32(json_array_get(block, 1), &d->quant_block_cols)))
        return fpki_file_error(err, FPK_EFORMAT, d, k,
                               "weight_block_size is not [rows, columns] of positive integers");
    json_t *group = json_object_get(q, "group_size");
    if (group && !json_is_null(group)) {
        if (!get_u32(group, &d->quant_block_cols))
            return fpki_file_error(err, FPK_EFORMAT, d, k,
                                   "group_size is not a positive integer");
        d->quant_block_rows = 1;
    }
    return FPK_OK;
}

int fpki_quant_config(fpk_dump *d, const char *dir, fpk_error *err)
{
    static const char *const names[] = {"hf_quant_config.json", "config.json"};
    for (size_t i = 0; i < 2; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 1;
        char *path = malloc(len);
        if (!path)
            return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
        snprintf(path, len, "%s%s", dir, names[i]);
        FILE *probe = fopen(path, "rb");
        if (!probe) {
            free(path);
            continue;
        }
        fclose(probe);
        uint32_t k;
        int rc = fpki_dump_add_file(d, path, &k, err);
        free(path);
        if (rc == FPK_OK)
            rc = fpki_file_check(d, k, err);
        json_t *root = NULL;
        if (rc == FPK_OK)
            rc = load_json(d, k, &root, err);
        if (rc == FPK_OK && !json_is_object(root))
            rc = fpki_file_error(err, FPK_EFORMAT, d, k, "is not a JSON object");
        if (rc == FPK_OK) {
            json_t *q = json_object_get(root, i == 0 ? "quantization" : "quantization_config");
            if (q)
                rc = read_quant(d, k, q, i == 0, err);
        }
        json_decref(root);
        if (rc != FPK_OK || d->quant_method[0])
            return rc;
    }
    return FPK_OK;
}

int fpki_index_shards(const char *path, char ***names, size_t *n, fpk_error *err)
{
    *names = NULL;
    *n = 0;
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    json_t *map = json_object_get(root, "weight_map");
    if (!json_is_object(map)) {
        json_decref(root);
        return fpki_path_error(err, FPK_EFORMAT, path,
                               root ? "the index has no \"weight_map\" object"
                                    : "an index that is not JSON");
    }
    const char *key;
    json_t *v;
    char **v_names = calloc(json_object_size(map) + 1, sizeof *v_names);
    size_t k = 0;
    json_object_foreach(map, key, v) {
        if (!v_names)
            break;
        const char *file = json_string_value(v);
        bool seen = !file;
        for (size_t j = 0; j < k && !seen; j++)
            seen = strcmp(v_names[j], file) == 0;
        if (!seen && !(v_names[k++] = strdup(file)))
            k--;
    }
    json_decref(root);
    if (!v_names)
        return fpki_path_error(err, FPK_ENOMEM, path, "out of memory");
    *names = v_names;
    *n = k;
    return FPK_OK;
}
