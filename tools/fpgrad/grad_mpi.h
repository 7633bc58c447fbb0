/* fpgrad-mpi: fpgrad over MPI.  Every rank lists the same files; each
 * analyses its share of them (whole files, shared out by element count);
 * the additive totals are summed across ranks exactly (counts, histograms,
 * the exact error sums) and the rows meet on rank 0, which writes what
 * fpgrad writes, byte for byte. */
#ifndef FPKIT_GRAD_MPI_H
#define FPKIT_GRAD_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "grad.h"

/* The totals of pass 1 summed over the ranks, on every rank: TOTAL's
 * counts, histogram and amax, the exact error sums ERR[0..NF-1] and the MX
 * counts MX[0..NF-1]. */
void grad_mpi_sum_pass1(fpk_stats *total, grad_sums *err, fpk_format_counts *mx, int nf);

/* Every row's amax, known on the rank that read it (0 elsewhere), made
 * known on every rank. */
void grad_mpi_share_amax(grad_run *run);

/* The totals of pass 2 (TOTAL->loss and TOTAL->amax_scale) summed. */
void grad_mpi_sum_pass2(grad_row *total, int nf);

/* The rows each rank analysed (MINE[i] on that rank) copied into RUN's
 * rows on rank 0. */
void grad_mpi_gather_rows(grad_run *run, const bool *mine);

#endif
