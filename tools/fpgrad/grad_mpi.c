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

/* The pairs of counts C[j][0], C[j][1] for j < NF summed over the ranks
 * (C[j][w] points into the caller's totals). */
static void sum_count_pairs(fpk_format_counts *(*c)[2], int nf)
{
    size_t n = 6 * (size_t)nf, k = 0;
    uint64_t *v = cli_xcalloc(n, sizeof *v);
    for (int j = 0; j < nf; j++)
        for (int w = 0; w < 2; w++) {
            v[k++] = c[j][w]->underflow;
            v[k++] = c[j][w]->subnormal;
            v[k++] = c[j][w]->overflow;
        }
    mpi_job_sum_u64(v, n);
    k = 0;
    for (int j = 0; j < nf; j++)
        for (int w = 0; w < 2; w++) {
            c[j][w]->underflow = v[k++];
            c[j][w]->subnormal = v[k++];
            c[j][w]->overflow = v[k++];
        }
    free(v);
}

void grad_mpi_sum_pass1(fpk_stats *total, grad_sums *err, fpk_format_counts *mx, int nf)
{
    if (mpi_job_size() == 1)
        return;
    /* The counts and the histogram, then the per-format and MX counts. */
    uint64_t head[3] = {total->count, total->zeros, total->nonfinite};
    mpi_job_sum_u64(head, 3);
    total->count = head[0];
    total->zeros = head[1];
    total->nonfinite = head[2];
    mpi_job_sum_u64(total->log2_hist, FPK_LOG2_BINS);
    fpk_format_counts *c[FPK_STATS_MAX_FORMATS][2];
    for (int j = 0; j < nf; j++) {
        c[j][0] = &total->fmt[j];
        c[j][1] = &mx[j];
    }
    sum_count_pairs(c, nf);
    /* amax >= 0: the largest double is the largest bit pattern. */
    mpi_job_check(
        MPI_Allreduce(MPI_IN_PLACE, &total->amax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
        "sharing the largest magnitude");
    MPI_Datatype bucket;
    MPI_Op add;
    mpi_job_check(MPI_Type_contiguous(16, MPI_BYTE, &bucket), "making a datatype");
    mpi_job_check(MPI_Type_commit(&bucket), "making a datatype");
    mpi_job_check(MPI_Op_create(add_buckets, 1, &add), "making an operation");
    /* The sums of NF formats lie one after another, bucket after bucket. */
    size_t buckets = (size_t)nf * sizeof *err / 16;
    mpi_job_check(MPI_Allreduce(MPI_IN_PLACE, err, (int)buckets, bucket, add, MPI_COMM_WORLD),
                  "summing the errors");
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

void grad_mpi_sum_pass2(grad_row *total, int nf)
{
    if (mpi_job_size() == 1)
        return;
    fpk_format_counts *c[FPK_STATS_MAX_FORMATS][2];
    for (int j = 0; j < nf; j++) {
        c[j][0] = &total->loss.fmt[j];
        c[j][1] = &total->amax_scale[j].fmt[j];
    }
    sum_count_pairs(c, nf);
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
