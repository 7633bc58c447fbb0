/* fpgrad-mpi's collectives (grad_mpi.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad_mpi.h"
#include "grad_part.h"
#include "grad_recipe.h"
#include "mpi_job.h"

/* The exact sums' buckets, 128-bit integers, added with carries. */
static void add_buckets(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) {
        unsigned __int128 a, b;
        memcpy(&a, (char *)in + 16 * (size_t)i, 16);
        memcpy(&b, (char *)inout + 16 * (size_t)i, 16);
        b += a;
        memcpy((char *)inout + 16 * (size_t)i, &b, 16);
    }
}

void grad_mpi_sum_errors(grad_sums *err, int nf)
{
    if (mpi_job_size() == 1)
        return;
    MPI_Datatype bucket;
    MPI_Op add;
    mpi_job_check(MPI_Type_contiguous(16, MPI_BYTE, &bucket), "making a datatype");
    mpi_job_check(MPI_Type_commit(&bucket), "making a datatype");
    mpi_job_check(MPI_Op_create(add_buckets, 1, &add), "making an operation");
    /* The sums of NF formats lie one after another, 16 bytes at a time:
     * the buckets, and each sum's range of buckets in use, which the sum
     * makes meaningless and grad_sums_widen replaces. */
    size_t buckets = (size_t)nf * sizeof *err / 16;
    mpi_job_check(MPI_Allreduce(MPI_IN_PLACE, err, (int)buckets, bucket, add, MPI_COMM_WORLD),
                  "summing the errors");
    for (int j = 0; j < nf; j++)
        grad_sums_widen(&err[j]);
    MPI_Op_free(&add);
    MPI_Type_free(&bucket);
}

void grad_mpi_share_amax(grad_run *run)
{
    if (mpi_job_size() == 1)
        return;
    double *amax = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *amax);
    for (size_t i = 0; i < run->nrows; i++)
        amax[i] = run->rows[i].amax;
    mpi_job_check(MPI_Allreduce(MPI_IN_PLACE, amax, (int)run->nrows, MPI_DOUBLE, MPI_MAX,
                                MPI_COMM_WORLD),
                  "sharing the rows' largest magnitudes");
    for (size_t i = 0; i < run->nrows; i++)
        run->rows[i].amax = amax[i];
    free(amax);
}

static void get_row(cli_buf *all, size_t i, void *run)
{
    grad_run *r = run;
    grad_row_get(all, &r->rows[i], r->nformats);
}

void grad_mpi_gather_rows(grad_run *run, const bool *mine)
{
    if (mpi_job_size() == 1)
        return;
    cli_buf b = {0};
    for (size_t i = 0; i < run->nrows && mpi_job_rank() != 0; i++)
        if (mine[i]) {
            uint64_t at = i;
            cli_buf_put(&b, &at, sizeof at);
            grad_row_put(&b, &run->rows[i], run->nformats);
        }
    mpi_job_gather_items(&b, run->nrows, get_row, run);
    free(b.p);
}


bool *grad_mpi_mine(const scan *s, const size_t *tensors, size_t n)
{
    cli_buf listing = {0};
    for (size_t i = 0; i < n; i++) {
        const scan_tensor *t = &s->tensors[tensors[i]];
        const char *path = s->files.v[t->file];
        cli_buf_put(&listing, path, strlen(path) + 1);
        cli_buf_put(&listing, t->t.name, strlen(t->t.name) + 1);
        cli_buf_put(&listing, &t->t.dtype, sizeof t->t.dtype);
        cli_buf_put(&listing, &t->t.count, sizeof t->t.count);
    }
    mpi_job_same(&listing, "tensors");
    free(listing.p);
    mpi_job_collective(false);
    size_t nfiles = s->files.n ? s->files.n : 1;
    uint64_t *per_file = cli_xcalloc(nfiles, sizeof *per_file);
    int *owner = cli_xcalloc(nfiles, sizeof *owner);
    for (size_t i = 0; i < n; i++)
        per_file[s->tensors[tensors[i]].file] += s->tensors[tensors[i]].t.count;
    mpi_job_share(per_file, s->files.n, owner);
    bool *mine = cli_xcalloc(n ? n : 1, sizeof *mine);
    for (size_t i = 0; i < n; i++)
        mine[i] = owner[s->tensors[tensors[i]].file] == mpi_job_rank();
    free(per_file);
    free(owner);
    return mine;
}

void recipe_mpi_share_amax(recipe_run *run)
{
    if (mpi_job_size() == 1)
        return;
    double *amax = cli_xcalloc(run->nrows ? run->nrows : 1, sizeof *amax);
    for (size_t i = 0; i < run->nrows; i++)
        amax[i] = run->rows[i].amax;
    mpi_job_check(MPI_Allreduce(MPI_IN_PLACE, amax, (int)run->nrows, MPI_DOUBLE, MPI_MAX,
                                MPI_COMM_WORLD),
                  "sharing the tensors' largest magnitudes");
    for (size_t i = 0; i < run->nrows; i++)
        run->rows[i].amax = amax[i];
    free(amax);
}

static void get_recipe_row(cli_buf *all, size_t i, void *arg)
{
    recipe_run *run = arg;
    recipe_row *r = &run->rows[i];
    cli_buf_get(all, &r->zeros, sizeof r->zeros);
    cli_buf_get(all, &r->nonfinite, sizeof r->nonfinite);
    cli_buf_get(all, &r->amax, sizeof r->amax);
    cli_buf_get(all, r->cell, (size_t)run->nrecipes * sizeof *r->cell);
}

/* Every rank's totals (as JSON, NUL-ended, one per recipe) merged into
 * rank 0's. */
static void gather_totals(recipe_run *run)
{
    cli_buf b = {0};
    for (int j = 0; j < run->nrecipes; j++) {
        char *text = fpk_recipe_stats_to_json(run->recipes[j].total);
        if (!text)
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
        cli_buf_put(&b, text, strlen(text) + 1);
        free(text);
    }
    size_t total;
    unsigned char *all = mpi_job_gather(b.p, b.len, &total);
    free(b.p);
    if (mpi_job_rank() != 0)
        return;
    /* rank 0's own come first: skip them */
    const char *p = (const char *)all + b.len, *end = (const char *)all + total;
    fpk_recipe_stats *s = cli_xcalloc(1, sizeof *s);
    for (int j = 0; p < end; j = (j + 1) % run->nrecipes) {
        fpk_error err;
        if (fpk_recipe_stats_from_json(s, p, &err) != FPK_OK ||
            !fpk_recipe_stats_merge(run->recipes[j].total, s))
            cli_die(CLI_EXIT_INTERNAL, "merging the ranks' recipe statistics: %s", err.msg);
        p += strlen(p) + 1;
    }
    free(s);
    free(all);
}

void recipe_mpi_gather(recipe_run *run, const bool *mine)
{
    if (mpi_job_size() == 1)
        return;
    cli_buf b = {0};
    for (size_t i = 0; i < run->nrows && mpi_job_rank() != 0; i++)
        if (mine[i]) {
            uint64_t at = i;
            recipe_row *r = &run->rows[i];
            cli_buf_put(&b, &at, sizeof at);
            cli_buf_put(&b, &r->zeros, sizeof r->zeros);
            cli_buf_put(&b, &r->nonfinite, sizeof r->nonfinite);
            cli_buf_put(&b, &r->amax, sizeof r->amax);
            cli_buf_put(&b, r->cell, (size_t)run->nrecipes * sizeof *r->cell);
        }
    mpi_job_gather_items(&b, run->nrows, get_recipe_row, run);
    free(b.p);
    gather_totals(run);
}
