/* fpgrad's results in pieces that add up exactly: a row packed into bytes
 * (for fpgrad-mpi's messages), and partial files (--emit-partial,
 * --merge) that hold a whole run's rows and its exact error sums. */
#ifndef FPKIT_GRAD_PART_H
#define FPKIT_GRAD_PART_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "grad.h"

/* R's results (beyond what the listing gives: name, file, step, dtype,
 * shape, count, role and scale) for NF formats, and back into R (dies with B->status, naming
 * B->what and the byte, on bytes that do not make a row). */
void grad_row_put(cli_buf *b, const grad_row *r, int nf);
void grad_row_get(cli_buf *b, grad_row *r, int nf);

/* Writes RUN (analysed without --scale auto) to PATH as a partial file, with
 * ERR[0..nformats-1], the exact error sums of its rows. */
void grad_part_write(const char *path, const grad_run *run, const grad_sums *err);

/* RUN := the merge of the partial files PATHS[0..N-1]: their options (which
 * must agree), their rows one file after another; returns their exact
 * error sums summed (malloc'd, FPK_STATS_MAX_FORMATS).  Dies with status 2
 * and a message naming the file and the byte on a file that is not a
 * partial, or on one that disagrees with the first. */
grad_sums *grad_part_merge(grad_run *run, char *const *paths, size_t n);

#endif
