/* fpgrad-mpi: fpgrad over MPI.  Every rank lists the same files; each
 * analyses its share of them (whole files, shared out by element count);
 * the exact error sums are summed across ranks, every row's amax is made
 * known to every rank for --scale auto, and the rows meet on rank 0, which
 * sums them and writes what fpgrad writes, byte for byte (--recipes too:
 * the rows, the totals and the amaxes of the delayed recipes likewise). */
#ifndef FPKIT_GRAD_MPI_H
#define FPKIT_GRAD_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "grad.h"
#include "grad_recipe.h"

/* The rows this rank analyses, of the N rows whose tensors are
 * S->tensors[TENSORS[i]]: the same tensors on every rank (or an exit with
 * status 2), then whole files shared out among the ranks by their
 * elements. */
bool *grad_mpi_mine(const scan *s, const size_t *tensors, size_t n);

/* The exact error sums ERR[0..NF-1] summed over the ranks, on every rank. */
void grad_mpi_sum_errors(grad_sums *err, int nf);

/* Every row's amax, known on the rank that read it (0 elsewhere), made
 * known on every rank. */
void grad_mpi_share_amax(grad_run *run);

/* The rows each rank analysed (MINE[i] on that rank) copied into RUN's
 * rows on rank 0. */
void grad_mpi_gather_rows(grad_run *run, const bool *mine);

/* --recipes: every row's amax made known to every rank (the delayed
 * recipes' histories); the rows each rank analysed (MINE[i] on that rank)
 * and every rank's totals brought to rank 0. */
void recipe_mpi_share_amax(recipe_run *run);
void recipe_mpi_gather(recipe_run *run, const bool *mine);

#endif
