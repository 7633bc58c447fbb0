/* The MPI side of the tools' -mpi programs (fpgrad-mpi, fpswamp-mpi):
 * start and end, a share of the work per rank, a failure that ends the
 * whole job, and the few collectives they need. */
#ifndef FPKIT_MPI_JOB_H
#define FPKIT_MPI_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* MPI_Init, MPI_Finalize at exit, and cli_die ending the whole job: a
 * failure on one rank is reported by it and aborts every rank, so that
 * none waits forever. */
void mpi_job_init(int *argc, char ***argv);
int mpi_job_rank(void);
int mpi_job_size(void);
/* Whether every rank meets the same failures (the options, the listing of
 * the files): then rank 0 alone reports one. */
void mpi_job_collective(bool collective);

/* OWNER[i] := the rank that does item i of N, weighing WEIGHT[i]: in order,
 * each to the rank with the least weight so far (the lowest on a tie). */
void mpi_job_share(const uint64_t *weight, size_t n, int *owner);

/* Dies with status 2 unless every rank has the same bytes in B, what it
 * listed (WHAT names it): the ranks must be given the same inputs. */
void mpi_job_same(const cli_buf *b, const char *what);

/* V[0..N-1] := their sums over the ranks, on every rank. */
void mpi_job_sum_u64(uint64_t *v, size_t n);

/* Every rank's N bytes at P, one rank after another, on rank 0 (malloc'd,
 * their count in *TOTAL); NULL elsewhere. */
unsigned char *mpi_job_gather(const void *p, size_t n, size_t *total);

/* Every rank's items in B (each a uint64_t index below N, then what PUT
 * wrote for it) gathered on rank 0, where GET(ALL, INDEX, CTX) reads each
 * item's bytes back from ALL. */
typedef void mpi_job_get_fn(cli_buf *all, size_t index, void *ctx);
void mpi_job_gather_items(const cli_buf *b, size_t n, mpi_job_get_fn *get, void *ctx);

/* Dies with status 3 naming WHAT and MPI's reason unless RC is MPI_SUCCESS. */
void mpi_job_check(int rc, const char *what);

#endif
