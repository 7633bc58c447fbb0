/* The scan engine of the tools that read dumps (fpgrad, fpround, fpswamp,
 * fpscale and the -mpi twins): the files under the paths given, the
 * tensors in them, and the work over those tensors shared among threads,
 * each tensor read in chunks, viewed in place in the file's mapping where
 * it can be and given back to the page cache once read, with a progress
 * line.  A tool says what a job is (a tensor, a pair of them) and what to
 * do with each chunk; the engine does the reading, the threads, the
 * failures and the progress. */
#ifndef FPKIT_SCAN_H
#define FPKIT_SCAN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cli.h"

/* A tensor found in the dumps. */
typedef struct scan_tensor {
    size_t file;  /* the file's index in scan.files */
    size_t index; /* the tensor's in its file */
    fpk_tensor t; /* its header; t.name is the scan's own copy */
} scan_tensor;

/* The training step a dump file holds: its __metadata__ "step", else the
 * number in its base name: the digits after "step" (step-000042.npy), else
 * its last run of digits that is not a shard's index or count. */
typedef struct scan_step {
    bool known;         /* false: neither says */
    bool from_metadata; /* else from the file name */
    int64_t step;
    char problem[200];  /* when not known: why, for a tool that needs it */
} scan_step;

typedef struct scan {
    cli_files files;         /* the dump files under the paths, in order */
    scan_step *steps;        /* each file's step */
    size_t *path_files;      /* path k's files: path_files[k] .. path_files[k + 1] - 1 */
    const fpk_raw_spec *raw; /* how to read raw files; NULL: by their contents */
    scan_tensor *tensors;    /* every tensor of every file, in order */
    size_t ntensors;
    size_t nskipped;         /* tensors listed but not read (integers ...) */
    /* the first SCAN_KEEP_OPEN files' dumps, left open by the listing for
     * the first scan_run, which takes them (NULL: closed, or taken): a
     * file of many tensors is not parsed twice */
    fpk_dump **kept;
    char skipped[200];       /* the first of them, for the note */
} scan;

/* S := the dump files under PATHS[0..N-1] (fpk_dump_walk), each protected
 * from being overwritten by an output (outfile_protect), and every tensor
 * in them, read as RAW says (RAW is kept, not copied).  With RAW a path
 * that is a directory is refused: raw files are named one by one.  Dies
 * with status 2 on a path or file that cannot be read. */
void scan_open(scan *s, char *const *paths, int n, const fpk_raw_spec *raw);
void scan_free(scan *s);

/* The step of file I of S, or an exit with status 2 saying why it has
 * none, for a tool that needs every file's step. */
int64_t scan_need_step(const scan *s, size_t i);

/* Dies with status 2 saying why a tool has nothing to analyse when it kept
 * none of S's tensors: none were found, or --match (when HAS_MATCH) kept
 * none of them. */
noreturn void scan_none(const scan *s, bool has_match);

/* The last run of digits in the base name of PATH: *START up to *END;
 * false if none. */
bool scan_last_number(const char *path, const char **start, const char **end);

/* The shard index in FILE's name: the digits of its last
 * "<digits>-of-<digits>", else of its last "rank<digits>", *DIGITS up to
 * *END; false if none. */
bool scan_shard_index(const char *file, const char **digits, const char **end);

#define SCAN_KEEP_OPEN 16

/* Opens file I of S, or dies with status 2. */
fpk_dump *scan_open_file(const scan *s, size_t i);

typedef struct scan_worker scan_worker;

/* Does job J on W's thread; returns false to stop the run, after
 * scan_fail (or a scan_* call that failed) has recorded why. */
typedef bool scan_job_fn(scan_worker *w, size_t j, void *arg);

/* A run of jobs: the threads take the next job in order, each with
 * INNER threads of its own for the job's tensor (the threads left over:
 * THREADS / jobs at once). */
typedef struct scan_pool {
    const scan *s;
    size_t njobs;
    const bool *mine;    /* the jobs this process does (NULL: all) */
    int threads;
    scan_job_fn *job;
    void *arg;
    const char *label;   /* the progress line's, "pass 1 of 2"; NULL: no progress */
    uint64_t todo;       /* elements the run reads, for the progress line */
    /* the run's own state */
    int inner;
    fpk_dump **dumps;     /* each file's, open while a worker uses it, shared
                             by the workers (guarded by lock) */
    unsigned *users;      /* the workers using each */
    pthread_mutex_t lock; /* guards next and the progress line; the jobs may use it */
    size_t next;
    cli_failure fail;
    atomic_uint_fast64_t done;
    struct timespec last;
} scan_pool;

/* Runs every job of P (or of P->mine) and dies with the first failure. */
void scan_run(scan_pool *p);

/* The threads W's job may use for its tensor. */
int scan_inner(const scan_worker *w);
/* W's pool. */
scan_pool *scan_pool_of(scan_worker *w);

/* The open dump that holds T, opened on W's thread (W keeps two open),
 * after checking that T is still what the scan found there; NULL, with the
 * run failed, when it cannot be opened or has changed. */
fpk_dump *scan_dump(scan_worker *w, const scan_tensor *t);

/* Records a failure of the run (the first is kept) and returns false. */
bool scan_fail(scan_worker *w, int status, const char *msg);
bool scan_fail_error(scan_worker *w, const fpk_error *err);
/* Whether the run has failed: every job stops. */
bool scan_failed(const scan_worker *w);

/* N more elements read, for the progress line. */
void scan_progress(scan_worker *w, uint64_t n);

/* Zeroed memory of at least BYTES that W keeps until the run ends (the
 * same block on every call, grown when asked for more). */
void *scan_scratch(scan_worker *w, size_t bytes);

/* Adds the elements of T to each of STATS[0..NS-1] (fpk_stats_add_tensor,
 * one read for all), in chunks on the job's threads; false on a read
 * error, the run failed. */
bool scan_add_stats(scan_worker *w, const scan_tensor *t, fpk_stats *stats, int ns);

/* Elements FIRST .. FIRST+N-1 of T as doubles into OUT; false on a read
 * error, the run failed. */
bool scan_read(scan_worker *w, const scan_tensor *t, uint64_t first, size_t n, double *out);

/* How a shared read holds a chunk: viewed in place where it can be, else
 * read as stored (host byte order); or read as doubles. */
typedef enum scan_as { SCAN_AS_STORED, SCAN_AS_DOUBLE } scan_as;

/* The elements of the next chunk of a tensor at POS, LEFT of it unread:
 * from 1 to the shared read's MAX. */
typedef size_t scan_next_fn(void *arg, uint64_t pos, uint64_t left);
/* Chunk [FIRST, FIRST+N) of the tensor at DATA, on the K-th of the
 * threads; false stops the read, the run failed. */
typedef bool scan_chunk_fn(void *arg, int k, const void *data, uint64_t first, size_t n);

/* Reads T once on NT threads (the first the caller's): its chunks, cut by
 * NEXT, are taken in turn by the threads, so that one slowed down leaves
 * more to the others, and each is handed to CHUNK as AS says, counting
 * progress.  Views are given back to the page cache as a thread goes.
 * Returns false if a read or a chunk failed. */
bool scan_share(scan_worker *w, const scan_tensor *t, int nt, size_t max, scan_as as,
                scan_next_fn *next, scan_chunk_fn *chunk, void *arg);

/* The elements of T into X (room for all of them) as float32, each rounded
 * once to nearest even (float32 ones as stored), read on NT threads as
 * scan_share reads; false if the read failed, the run failed. */
bool scan_read_floats(scan_worker *w, const scan_tensor *t, int nt, float *x);

#endif
