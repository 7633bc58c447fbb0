/* fpgrad --shards: tensors split across the shards of a dump, one logical
 * tensor each (grad.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad.h"

char *grad_shard_key(const char *file)
{
    const char *digits, *end;
    if (!scan_shard_index(file, &digits, &end))
        return cli_strf("%s", file);
    return cli_strf("%.*s*%s", (int)(digits - file), file, end);
}

typedef struct member {
    const char *key, *name;
    size_t row;
} member;

static int by_key(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (!c)
        c = strcmp(x->name, y->name);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

static int by_row(const void *a, const void *b)
{
    const size_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

size_t *grad_shard_groups(const grad_run *run, size_t *ngroups)
{
    size_t n = run->nrows;
    member *m = cli_xcalloc(n ? n : 1, sizeof *m);
    for (size_t i = 0; i < n; i++)
        m[i] = (member){grad_shard_key(run->rows[i].file), run->rows[i].name, i};
    qsort(m, n, sizeof *m, by_key);
    /* Each group's first row and its place in the sorted list, ordered by
     * first row: the groups' order is that of their first members. */
    size_t (*first)[2] = cli_xcalloc(n ? n : 1, sizeof *first), ng = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(m[i].key, m[i - 1].key) || strcmp(m[i].name, m[i - 1].name)) {
            first[ng][0] = m[i].row;
            first[ng++][1] = i;
        }
    qsort(first, ng, sizeof *first, by_row);
    size_t *group = cli_xcalloc(n ? n : 1, sizeof *group);
    const grad_row *lead = NULL, *odd = NULL; /* a shard whose dtype differs from its lead's */
    for (size_t g = 0; g < ng && !odd; g++) {
        size_t i = first[g][1];
        lead = &run->rows[m[i].row];
        do {
            const grad_row *r = &run->rows[m[i].row];
            if (!odd && r->dtype != lead->dtype)
                odd = r;
            group[m[i].row] = g;
        } while (++i < n && !strcmp(m[i].key, m[i - 1].key) && !strcmp(m[i].name, m[i - 1].name));
    }
    /* freed before any exit, so that a leak checker sees none */
    for (size_t i = 0; i < n; i++)
        free((char *)m[i].key);
    free(m);
    free(first);
    if (odd) {
        free(group);
        cli_die(CLI_EXIT_USAGE,
                "--shards: tensor \"%s\" is %s in %s but %s in %s; shards of one tensor "
                "share a dtype",
                odd->name, fpk_dtype_name(lead->dtype), lead->file, fpk_dtype_name(odd->dtype),
                odd->file);
    }
    *ngroups = ng;
    return group;
}

/* A row's place among its tensor's shards: by shard index (as a number:
 * rank2 before rank10), then by row. */
typedef struct place {
    size_t group;
    const char *digits; /* the index, without leading zeros */
    size_t len, row;
} place;

static int by_place(const void *a, const void *b)
{
    const place *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    int c = strncmp(x->digits, y->digits, x->len);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

void grad_shard_bases(grad_run *run)
{
    size_t ng, n = run->nrows, *group = grad_shard_groups(run, &ng);
    place *pl = cli_xcalloc(n ? n : 1, sizeof *pl);
    for (size_t i = 0; i < n; i++) {
        const char *digits, *end;
        if (!scan_shard_index(run->rows[i].file, &digits, &end))
            digits = end = ""; /* a file without an index: its own tensor */
        while (*digits == '0' && digits + 1 < end)
            digits++;
        pl[i] = (place){group[i], digits, (size_t)(end - digits), i};
    }
    qsort(pl, n, sizeof *pl, by_place);
    uint64_t before = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || pl[i].group != pl[i - 1].group)
            before = 0;
        run->rows[pl[i].row].sr_base = before;
        before += run->rows[pl[i].row].count;
    }
    free(pl);
    free(group);
}

void grad_shard_amax(grad_run *run)
{
    size_t ng, *group = grad_shard_groups(run, &ng);
    double *amax = cli_xcalloc(ng ? ng : 1, sizeof *amax);
    for (size_t i = 0; i < run->nrows; i++)
        if (run->rows[i].amax > amax[group[i]])
            amax[group[i]] = run->rows[i].amax;
    for (size_t i = 0; i < run->nrows; i++)
        run->rows[i].amax = amax[group[i]];
    free(amax);
    free(group);
}

void grad_group_shards(grad_run *run)
{
    size_t ng, *group = grad_shard_groups(run, &ng);
    if (ng == run->nrows) { /* nothing split */
        free(group);
        return;
    }
    grad_row *rows = cli_xcalloc(ng, sizeof *rows);
    size_t *members = cli_xcalloc(ng, sizeof *members);
    for (size_t i = 0; i < run->nrows; i++) {
        grad_row *r = &run->rows[i], *g = &rows[group[i]];
        if (members[group[i]]++ == 0) {
            *g = *r;
            g->name = cli_strf("%s", r->name);
            g->file = cli_strf("%s", r->file);
            grad_row_copy_formats(g, r, run->nformats);
            g->hist = r->hist_n ? cli_xcalloc(r->hist_n, sizeof *g->hist) : NULL;
            if (r->hist_n)
                memcpy(g->hist, r->hist, r->hist_n * sizeof *g->hist);
            continue;
        }
        if (members[group[i]] == 2) { /* a logical tensor: its files' pattern, flat */
            free(g->file);
            g->file = grad_shard_key(r->file);
            g->ndim = 1; /* (shape[0], its count, set below) */
        }
        grad_row_add(g, r, run->nformats);
        /* (the scales come from the tensor's amax, grad_shard_amax: alike
         * in every shard, so G, a copy of the first, has them) */
        g->has_step = g->has_step && r->has_step && g->step == r->step;
        g->shape[0] = g->count;
    }
    for (size_t i = 0; i < run->nrows; i++)
        grad_row_free(&run->rows[i]);
    free(run->rows);
    run->rows = rows;
    run->nrows = ng;
    free(members);
    free(group);
}
