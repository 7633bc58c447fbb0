/* fpgrad-mpi's collectives (grad_mpi.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grad_mpi.h"
#include "grad_part.h"
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
