/* The MPI side of the tools' -mpi programs (mpi_job.h). */
#define _GNU_SOURCE /* sched_getaffinity */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mpi_job.h"
#include "outfile.h"

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
    if (size > 1) {
        outfile_cleanup(); /* MPI_Abort runs no exit handlers */
        MPI_Abort(MPI_COMM_WORLD, status);
    }
    exit(status); /* finalized at exit */
}

/* Tells cli_default_threads which CPUs this rank shares with the job's
 * ranks on its machine: those any of them may run on, the union of their
 * masks (unknown: this rank's own; the ranks on the machine unknown: as if
 * the job's were all there). */
static void share_cpus(void)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS) {
        cli_set_cpu_share(cli_affinity_cpus(), size);
        return;
    }
    int node_size = 1, cpus = 0;
    MPI_Comm_size(node, &node_size);
    enum { WORDS = sizeof(cpu_set_t) / sizeof(unsigned long) };
    union {
        cpu_set_t set;
        unsigned long word[WORDS + 1]; /* and a last: 1 where a rank's mask is unknown */
    } mask;
    memset(&mask, 0, sizeof mask);
    if (sched_getaffinity(0, sizeof mask.set, &mask.set) != 0)
        mask.word[WORDS] = 1;
    if (MPI_Allreduce(MPI_IN_PLACE, mask.word, WORDS + 1, MPI_UNSIGNED_LONG, MPI_BOR, node) ==
            MPI_SUCCESS &&
        !mask.word[WORDS])
        cpus = CPU_COUNT(&mask.set);
    MPI_Comm_free(&node);
    cli_set_cpu_share(cpus > 0 ? cpus : cli_affinity_cpus(), node_size);
}

/* Every way out of the program (--help, a return from main) finalizes. */
static void finalize_at_exit(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
        MPI_Finalize();
}

void mpi_job_init(int *argc, char ***argv)
{
    /* the ranks' threads work, the main thread alone calls MPI */
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init failed\n", cli_prog());
        exit(CLI_EXIT_INTERNAL);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* failed calls return, for mpi_job_check to report (status 3), rather
     * than end the job with MPI's own message and status */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    share_cpus();
    cli_set_die_hook(die);
    cli_set_echo(rank == 0);
    atexit(finalize_at_exit);
}

int mpi_job_rank(void)
{
    return rank;
}

int mpi_job_size(void)
{
    return size;
}

void mpi_job_collective(bool c)
{
    collective = c;
}

void mpi_job_share(const uint64_t *weight, size_t n, int *owner)
{
    uint64_t *load = cli_xcalloc((size_t)size, sizeof *load);
    for (size_t i = 0; i < n; i++) {
        int least = 0;
        for (int r = 1; r < size; r++)
            if (load[r] < load[least])
                least = r;
        owner[i] = least;
        load[least] += weight[i];
    }
    free(load);
}

void mpi_job_check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char why[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, why, &len) != MPI_SUCCESS)
        len = snprintf(why, sizeof why, "error %d", rc);
    cli_die(CLI_EXIT_INTERNAL, "MPI: %s failed: %.*s", what, len, why);
}

void mpi_job_same(const cli_buf *b, const char *what)
{
    uint64_t h = cli_buf_hash(b);
    uint64_t v[2] = {h, ~h}; /* the least and, complemented, the largest */
    mpi_job_check(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD),
                  "comparing the listings");
    if (v[0] != ~v[1])
        cli_die(CLI_EXIT_USAGE, "the ranks found different %s: give every rank the same paths, "
                "on a file system where they see the same files", what);
}

void mpi_job_sum_u64(uint64_t *v, size_t n)
{
    mpi_job_check(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
                  "summing the counts");
}

unsigned char *mpi_job_gather(const void *p, size_t n, size_t *total)
{
    if (n > (size_t)0x7fffffff)
        cli_die(CLI_EXIT_INTERNAL, "MPI: %zu bytes of results on rank %d: too many", n, rank);
    int len = (int)n;
    int *lens = rank == 0 ? cli_xcalloc((size_t)size, sizeof *lens) : NULL;
    int *at = rank == 0 ? cli_xcalloc((size_t)size, sizeof *at) : NULL;
    mpi_job_check(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD),
                  "gathering sizes");
    unsigned char *all = NULL;
    *total = 0;
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            if (*total + (size_t)lens[r] > (size_t)0x7fffffff)
                cli_die(CLI_EXIT_INTERNAL, "MPI: the results exceed 2 GiB");
            at[r] = (int)*total;
            *total += (size_t)lens[r];
        }
        all = cli_xcalloc(*total ? *total : 1, 1);
    }
    mpi_job_check(MPI_Gatherv(p, len, MPI_BYTE, all, lens, at, MPI_BYTE, 0, MPI_COMM_WORLD),
                  "gathering the results");
    free(lens);
    free(at);
    return all;
}

void mpi_job_gather_items(const cli_buf *b, size_t n, mpi_job_get_fn *get, void *ctx)
{
    cli_buf all = {.what = "MPI: the results gathered", .status = CLI_EXIT_INTERNAL};
    all.p = mpi_job_gather(b->p, b->len, &all.len);
    while (all.p && all.at < all.len) {
        uint64_t at;
        cli_buf_get(&all, &at, sizeof at);
        if (at >= n)
            cli_die(CLI_EXIT_INTERNAL, "MPI: item %llu of %zu", (unsigned long long)at, n);
        get(&all, (size_t)at, ctx);
    }
    free(all.p);
}
