/* Helpers shared by the fpkit tools: messages and exit statuses, memory,
 * worker failures, threads, and the list of dump files under the paths
 * given.  The command line is options.h's. */
#ifndef FPKIT_CLI_H
#define FPKIT_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include "fpkit-tensor.h"
#include "options.h"
#include "text.h"

/* Exit statuses: 0 success; 1 findings, for a tool with a mode that
 * reports them through its status; 2 bad usage or input (a malformed or
 * unreadable file included); 3 an internal failure: memory ran out, an
 * output could not be written, gnuplot failed. */
enum { CLI_EXIT_FINDINGS = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_INTERNAL = 3 };

/* Sets the program name used as the prefix of every message. */
void cli_init(const char *argv0);
const char *cli_prog(void);

/* "prog: MESSAGE\n" on stderr, then exit(STATUS); or, once a program has
 * set one, its hook takes STATUS and MESSAGE instead (and must not return):
 * fpgrad-mpi ends the whole job so. */
noreturn void cli_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
typedef void cli_die_fn(int status, const char *message);
void cli_set_die_hook(cli_die_fn *hook);

/* Bytes written at the end and read from AT: a read past the end dies with
 * STATUS and "WHAT: byte AT: the data ends early". */
typedef struct cli_buf {
    unsigned char *p;
    size_t len, cap, at;
    const char *what;
    int status;
} cli_buf;
void cli_buf_put(cli_buf *b, const void *x, size_t n);
void cli_buf_get(cli_buf *b, void *x, size_t n);
/* The 64-bit FNV-1a hash of B's bytes. */
uint64_t cli_buf_hash(const cli_buf *b);

/* The first failure of a pool of worker threads, which must not exit
 * themselves: cli_failure_set records it once (the later ones are
 * dropped), workers stop on FAILED, and the main thread reports it with
 * cli_failure_check once they are joined. */
typedef struct cli_failure {
    atomic_bool failed;
    int status;
    char msg[600];
} cli_failure;
void cli_failure_set(cli_failure *f, int status, const char *msg);
/* Dies with F's status and message if it has failed. */
void cli_failure_check(const cli_failure *f);

/* The calling thread reads views (fpk_dump_view) of the file PATH from
 * now on (NULL: no longer): should the file shrink meanwhile, the SIGBUS
 * that follows ends the program with status 2 and "prog: PATH: the file
 * shrank while it was being read" rather than a crash.  (The first call
 * installs the handler; a SIGBUS elsewhere keeps its default action.) */
void cli_viewing(const char *path);

/* The exit status for a library error: 3 for FPK_ENOMEM, else 2 (the
 * input is at fault). */
int cli_error_status(const fpk_error *err);

/* ERR's message on stderr, then exit(cli_error_status(ERR)). */
noreturn void cli_die_error(const fpk_error *err);

/* A formatted string in new memory (free it); exits if memory runs out. */
char *cli_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* calloc(N, SIZE) (one byte's worth when N is 0), or an exit with status 3
 * when memory runs out. */
void *cli_xcalloc(size_t n, size_t size);

/* Zeroed memory for N elements of SIZE bytes, or an exit with status 3:
 * for buffers that tensor data is read into (fpkit.h, fpk_dump_read_raw).
 * A page or more is aligned to a page and rounded up to whole pages; less
 * comes from plain memory, since a page of its own for each small tensor
 * costs more than the slow copy a page's start avoids. */
void *cli_xcalloc_pages(size_t n, size_t size);

/* The default of --threads, 1 to CLI_MAX_THREADS: the first value of
 * OMP_NUM_THREADS where set, else the CPUs this process may run on
 * (cli_affinity_cpus; CPU quotas are not looked at) but no more than its
 * share of those that cli_set_cpu_share says its job shares; at most
 * OMP_THREAD_LIMIT. */
int cli_default_threads(void);
/* The CPUs of this process's affinity mask, else those online. */
int cli_affinity_cpus(void);
/* SHARERS processes of one job share CPUS of this machine's CPUs (an MPI
 * job's ranks on a node: the CPUs any of them may run on). */
void cli_set_cpu_share(int cpus, int sharers);

/* Whether PATH names standard output ("-"); NULL does not. */
bool cli_is_stdout(const char *path);

/* A list of file paths, each in its own memory. */
typedef struct cli_files {
    char **v;
    size_t n, cap;
} cli_files;

/* Appends the dump files at PATH (fpk_dump_walk: a file, or the dumps below
 * a directory) to FS, or exits with status 2 and the walk's message. */
void cli_walk_files(const char *path, cli_files *fs);

/* Frees FS's paths and list; FS is then empty. */
void cli_files_free(cli_files *fs);


#endif
