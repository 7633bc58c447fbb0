/* fpgrad-mpi's collectives (grad_mpi.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "grad_mpi.h"
#include "grad_part.h"

static int rank, size;
static bool collective = true;

/* A failure: reported once and the job ended.  Where every rank meets it
 * (COLLECTIVE), the other ranks leave the report to rank 0, which ends the
 * job; they report it themselves only if rank 0 has not done so within two
 * seconds (a failure of their own after all). */
static void die(int status, const char *msg)
{
    if (size > 1 && collective && rank != 0)
        sleep(2);
    fprintf(stderr, "%s: %s\n", cli_prog(), msg);
    fflush(stderr);
    if (size > 1)
        MPI_Abort(MPI_COMM_WORLD, status);
    exit(status); /* finalized at exit */
}

/* Every way out of the program (--help, a return from main) finalizes. */
static void finalize_at_exit(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
        MPI_Finalize();
}

void grad_mpi_init(int *argc, char ***argv)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init failed\n", cli_prog());
        exit(CLI_EXIT_INTERNAL);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cli_set_die_hook(die);
    atexit(finalize_at_exit);
}

int grad_mpi_rank(void)
{
    return rank;
}

int grad_mpi_size(void)
{
    return size;
}

void grad_mpi_collective(bool c)
{
    collective = c;
}

void grad_mpi_share(const uint64_t *elements, size_t nfiles, int *owner)
{
    uint64_t *load = cli_xcalloc((size_t)size, sizeof *load);
    for (size_t f = 0; f < nfiles; f++) {
        int least = 0;
        for (int r = 1; r < size; r++)
            if (load[r] < load[least])
                least = r;
        owner[f] = least;
        load[least] += elements[f];
    }
    free(load);
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        cli_die(CLI_EXIT_INTERNAL, "MPI: %s failed", what);
}

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

static void sum_u64(uint64_t *v, size_t n)
{
    check(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
          "summing the counts");
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
    sum_u64(v, n);
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
    if (size == 1)
        return;
    /* The counts and the histogram, then the per-format and MX counts. */
    uint64_t head[3] = {total->count, total->zeros, total->nonfinite};
    sum_u64(head, 3);
    total->count = head[0];
    total->zeros = head[1];
    total->nonfinite = head[2];
    sum_u64(total->log2_hist, FPK_LOG2_BINS);
    fpk_format_counts *c[FPK_STATS_MAX_FORMATS][2];
    for (int j = 0; j < nf; j++) {
        c[j][0] = &total->fmt[j];
        c[j][1] = &mx[j];
    }
    sum_count_pairs(c, nf);
    /* amax >= 0: the largest double is the largest bit pattern. */
    check(MPI_Allreduce(MPI_IN_PLACE, &total->amax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
          "the largest magnitude");
    MPI_Datatype bucket;
    MPI_Op add;
    check(MPI_Type_contiguous(16, MPI_BYTE, &bucket), "a datatype");
    check(MPI_Type_commit(&bucket), "a datatype");
    check(MPI_Op_create(add_buckets, 1, &add), "an operation");
    /* The sums of NF formats lie one after another, bucket after bucket. */
    size_t buckets = (size_t)nf * sizeof *err / 16;
    check(MPI_Allreduce(MPI_IN_PLACE, err, (int)buckets, bucket, add, MPI_COMM_WORLD),
          "summing the errors");
    MPI_Op_free(&add);
    MPI_Type_free(&bucket);
}

void grad_mpi_sum_pass2(grad_row *total, int nf)
{
    if (size == 1)
        return;
    fpk_format_counts *c[FPK_STATS_MAX_FORMATS][2];
    for (int j = 0; j < nf; j++) {
        c[j][0] = &total->loss.fmt[j];
        c[j][1] = &total->amax_scale[j].fmt[j];
    }
    sum_count_pairs(c, nf);
}

void grad_mpi_gather_rows(grad_run *run, const bool *mine)
{
    if (size == 1)
        return;
    int nf = run->nformats;
    grad_buf b = {0};
    if (rank != 0)
        for (size_t i = 0; i < run->nrows; i++)
            if (mine[i]) {
                uint64_t at = i;
                grad_buf_put(&b, &at, sizeof at);
                grad_row_put(&b, &run->rows[i], nf);
            }
    if (b.len > (size_t)0x7fffffff)
        cli_die(CLI_EXIT_INTERNAL, "MPI: %zu bytes of rows on rank %d: too many", b.len, rank);
    int len = (int)b.len;
    int *lens = rank == 0 ? cli_xcalloc((size_t)size, sizeof *lens) : NULL;
    int *at = rank == 0 ? cli_xcalloc((size_t)size, sizeof *at) : NULL;
    check(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD), "gathering sizes");
    grad_buf all = {.what = "MPI: the rows gathered"};
    if (rank == 0) {
        size_t total = 0;
        for (int r = 0; r < size; r++) {
            if (total + (size_t)lens[r] > (size_t)0x7fffffff)
                cli_die(CLI_EXIT_INTERNAL, "MPI: the rows exceed 2 GiB");
            at[r] = (int)total;
            total += (size_t)lens[r];
        }
        all.p = cli_xcalloc(total ? total : 1, 1);
        all.len = all.cap = total;
    }
    check(MPI_Gatherv(b.p, len, MPI_BYTE, all.p, lens, at, MPI_BYTE, 0, MPI_COMM_WORLD),
          "gathering the rows");
    if (rank == 0)
        while (all.at < all.len) {
            uint64_t at;
            grad_buf_get(&all, &at, sizeof at);
            if (at >= run->nrows)
                cli_die(CLI_EXIT_INTERNAL, "MPI: row %llu of %zu", (unsigned long long)at,
                        run->nrows);
            grad_row_get(&all, &run->rows[at], nf);
        }
    free(all.p);
    free(b.p);
    free(lens);
    free(at);
}
