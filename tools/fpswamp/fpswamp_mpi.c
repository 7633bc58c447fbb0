/* fpswamp-mpi: the rows' results gathered on rank 0 (fpswamp.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpswamp.h"
#include "mpi_job.h"

/* What a strategy counted, and its sums, as they are in memory: the ranks
 * run the same program. */
static void put_acc(cli_buf *b, const sw_acc *a, size_t n)
{
    cli_buf_put(b, a, n * sizeof *a);
}

static void get_row(cli_buf *all, size_t i, void *arg)
{
    const sw_run *run = arg;
    sw_row *r = &run->rows[i];
    size_t sweep = (size_t)run->sweep_n * (size_t)sw_targets(run);
    cli_buf_get(all, &r->count, sizeof r->count);
    cli_buf_get(all, &r->nonfinite, sizeof r->nonfinite);
    cli_buf_get(all, &r->nonzero, sizeof r->nonzero);
    cli_buf_get(all, &r->master, sizeof r->master);
    for (int j = 0; j < run->nformats; j++) {
        cli_buf_get(all, &r->fmt[j].rne, sizeof r->fmt[j].rne);
        cli_buf_get(all, &r->fmt[j].kahan, sizeof r->fmt[j].kahan);
        cli_buf_get(all, r->fmt[j].sr, (size_t)run->seeds * sizeof *r->fmt[j].sr);
    }
    cli_buf_get(all, r->recipe, (size_t)run->nrecipes * sizeof *r->recipe);
    cli_buf_get(all, r->sweep_lost, sweep * sizeof *r->sweep_lost);
    cli_buf_get(all, r->sweep_half, sweep * sizeof *r->sweep_half);
}

void sw_mpi_gather_rows(sw_run *run, const bool *mine)
{
    if (mpi_job_size() == 1)
        return;
    size_t sweep = (size_t)run->sweep_n * (size_t)sw_targets(run);
    cli_buf b = {0};
    for (size_t i = 0; i < run->nrows && mpi_job_rank() != 0; i++) {
        const sw_row *r = &run->rows[i];
        if (!mine[i])
            continue;
        uint64_t at = i;
        cli_buf_put(&b, &at, sizeof at);
        cli_buf_put(&b, &r->count, sizeof r->count);
        cli_buf_put(&b, &r->nonfinite, sizeof r->nonfinite);
        cli_buf_put(&b, &r->nonzero, sizeof r->nonzero);
        put_acc(&b, &r->master, 1);
        for (int j = 0; j < run->nformats; j++) {
            put_acc(&b, &r->fmt[j].rne, 1);
            put_acc(&b, &r->fmt[j].kahan, 1);
            put_acc(&b, r->fmt[j].sr, (size_t)run->seeds);
        }
        put_acc(&b, r->recipe, (size_t)run->nrecipes);
        cli_buf_put(&b, r->sweep_lost, sweep * sizeof *r->sweep_lost);
        cli_buf_put(&b, r->sweep_half, sweep * sizeof *r->sweep_half);
    }
    mpi_job_gather_items(&b, run->nrows, get_row, run);
    free(b.p);
}
