/* Finding dump files under a directory. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dump-impl.h"

/* A directory on the path from the walk's root to where it is now. */
typedef struct walk_dir_id {
    dev_t dev;
    ino_t ino;
    const char *path;
} walk_dir_id;

typedef struct walker {
    int (*visit)(const char *file, void *arg);
    void *arg;
    fpk_error *err;
    walk_dir_id *stack;
    size_t depth, cap;
} walker;

static bool has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcmp(name + n - k, suffix) == 0;
}

/* Whether NAME is a dump's by its name: .npy, .safetensors, torch's .pt
 * and .pth, a sharded model's *.index.json.  A .bin file (what
 * pytorch_model.bin is, but raw dumps too) counts when PATH starts as a
 * zip file does. */
static bool is_dump_name(const char *name, const char *path)
{
    static const char *const suffixes[] = {".npy", ".safetensors", ".pt", ".pth",
                                           ".index.json"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (has_suffix(name, suffixes[i]))
            return true;
    if (!path || !has_suffix(name, ".bin"))
        return false;
    unsigned char head[4] = {0};
    FILE *f = fopen(path, "rb");
    bool zip = f && fread(head, 1, 4, f) == 4 && memcmp(head, "PK\x03\x04", 4) == 0;
    if (f)
        fclose(f);
    return zip;
}

/* Whether NAME is one of the N shards of SHARDS. */
static bool is_shard(char **shards, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(shards[i], name) == 0)
            return true;
    return false;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory PATH but "." and "..", sorted, into *NAMES. */
static int list_dir(walker *w, const char *path, char ***names, size_t *count)
{
    DIR *dir = opendir(path);
    if (!dir)
        return fpki_errno_error(w->err, path, "cannot open directory", errno);
    char **v = NULL;
    size_t n = 0, cap = 0;
    int rc = FPK_OK;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(dir);
        if (!e) {
            if (errno != 0)
                rc = fpki_errno_error(w->err, path, "cannot read directory", errno);
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            char **nv = realloc(v, ncap * sizeof *v);
            if (!nv) {
                rc = fpki_path_error(w->err, FPK_ENOMEM, path, "out of memory listing it");
                break;
            }
            v = nv;
            cap = ncap;
        }
        if (!(v[n] = strdup(e->d_name))) {
            rc = fpki_path_error(w->err, FPK_ENOMEM, path, "out of memory listing it");
            break;
        }
        n++;
    }
    closedir(dir);
    if (rc != FPK_OK) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return rc;
    }
    if (n > 0)
        qsort(v, n, sizeof *v, name_cmp);
    *names = v;
    *count = n;
    return FPK_OK;
}

static int walk(walker *w, const char *path, const struct stat *st);

/* Directory PATH, whose status is ST: each entry in sorted order. */
static int walk_dir(walker *w, const char *path, const struct stat *st)
{
    for (size_t i = 0; i < w->depth; i++)
        if (w->stack[i].dev == st->st_dev && w->stack[i].ino == st->st_ino)
            return fpki_path_error(w->err, FPK_EIO, path,
                                   "symbolic link loop: this is directory %s again",
                                   w->stack[i].path);
    if (w->depth == w->cap) {
        size_t ncap = w->cap ? 2 * w->cap : 16;
        walk_dir_id *ns = realloc(w->stack, ncap * sizeof *ns);
        if (!ns)
            return fpki_path_error(w->err, FPK_ENOMEM, path, "out of memory");
        w->stack = ns;
        w->cap = ncap;
    }
    char **names = NULL;
    size_t n = 0;
    int rc = list_dir(w, path, &names, &n);
    if (rc != FPK_OK)
        return rc;
    w->stack[w->depth++] = (walk_dir_id){st->st_dev, st->st_ino, path};
    size_t plen = strlen(path);
    bool slash = plen > 0 && path[plen - 1] == '/';
    /* the shards of a sharded model here are read through its index */
    char **shards = NULL;
    size_t nshards = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!has_suffix(names[i], ".index.json"))
            continue;
        size_t len = plen + !slash + strlen(names[i]) + 1;
        char *index = malloc(len);
        if (!index) {
            rc = fpki_path_error(w->err, FPK_ENOMEM, path, "out of memory");
            break;
        }
        snprintf(index, len, "%s%s%s", path, slash ? "" : "/", names[i]);
        char **more;
        size_t nmore;
        rc = fpki_index_shards(index, &more, &nmore, w->err);
        free(index);
        char **all = rc == 0 ? realloc(shards, (nshards + nmore + 1) * sizeof *all) : NULL;
        if (rc == 0 && !all) {
            rc = fpki_path_error(w->err, FPK_ENOMEM, path, "out of memory");
            for (size_t j = 0; j < nmore; j++)
                free(more[j]);
        }
        if (all) {
            shards = all;
            memcpy(shards + nshards, more, nmore * sizeof *more);
            nshards += nmore;
        }
        free(more);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (is_shard(shards, nshards, names[i]))
            continue;
        size_t len = plen + !slash + strlen(names[i]) + 1;
        char *child = malloc(len);
        if (!child) {
            rc = fpki_path_error(w->err, FPK_ENOMEM, path, "out of memory");
            break;
        }
        snprintf(child, len, "%s%s%s", path, slash ? "" : "/", names[i]);
        struct stat cst;
        if (stat(child, &cst) != 0) {
            /* A dangling link or a link loop: an error only where a dump
             * was meant to be. */
            if (is_dump_name(names[i], NULL))
                rc = fpki_errno_error(w->err, child, "cannot open", errno);
        } else if (S_ISDIR(cst.st_mode) ||
                   (S_ISREG(cst.st_mode) && is_dump_name(names[i], child))) {
            rc = walk(w, child, &cst);
        }
        free(child);
    }
    for (size_t j = 0; j < nshards; j++)
        free(shards[j]);
    free(shards);
    w->depth--;
    for (size_t j = 0; j < n; j++)
        free(names[j]);
    free(names);
    return rc;
}

static int walk(walker *w, const char *path, const struct stat *st)
{
    if (S_ISDIR(st->st_mode))
        return walk_dir(w, path, st);
    return w->visit(path, w->arg);
}

int fpk_dump_walk(const char *path, int (*visit)(const char *file, void *arg), void *arg,
                  fpk_error *err)
{
    walker w = {.visit = visit, .arg = arg, .err = err};
    struct stat st;
    if (stat(path, &st) != 0)
        return fpki_errno_error(err, path, "cannot open", errno);
    int rc = walk(&w, path, &st);
    free(w.stack);
    return rc;
}
