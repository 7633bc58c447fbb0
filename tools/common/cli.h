/* Helpers shared by the fpkit tools: messages, exit codes, and the parsing
 * of format and rounding-mode names. */
#ifndef FPKIT_CLI_H
#define FPKIT_CLI_H

#include <regex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include "fpkit-tensor.h"

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

/* The format NAME, or an exit with status 2 and a message listing the
 * known names. */
const fpk_format *cli_format(const char *name);

/* The rounding mode NAME (rne, rna, rtz, rup, rdn, rod, sr), or an exit with
 * status 2. */
fpk_round cli_round(const char *name);
const char *cli_round_name(fpk_round mode);

/* A formatted string in new memory (free it); exits if memory runs out. */
char *cli_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* calloc(N, SIZE) (one byte's worth when N is 0), or an exit with status 3
 * when memory runs out. */
void *cli_xcalloc(size_t n, size_t size);

/* Zeroed memory for N elements of SIZE bytes, aligned to a page and
 * rounded up to whole pages (one when N is 0), or an exit with status 3:
 * for buffers that tensor data is read into (fpkit.h, fpk_dump_read_raw). */
void *cli_xcalloc_pages(size_t n, size_t size);

/* The value S of option OPT as a decimal integer in [MIN, MAX] (digits,
 * an optional '-' first), or an exit with status 2. */
long long cli_parse_int(const char *opt, const char *s, long long min, long long max);

/* The value S of --threads: the most threads a tool works with, 1 to
 * CLI_MAX_THREADS (the library's array paths take them, and tools with
 * independent tensors share those out), or an exit with status 2.  Results
 * never depend on it. */
#define CLI_MAX_THREADS 1024
int cli_parse_threads(const char *s);

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

/* The value S of option OPT as WIDTHxHEIGHT, each from 64 to 10000 (a plot
 * size in pixels), or an exit with status 2. */
void cli_parse_size(const char *opt, const char *s, int *width, int *height);

/* The value RE of option OPT compiled into *OUT (extended syntax, no
 * submatches), or an exit with status 2.  With COMPILED: *OUT is freed
 * first when *COMPILED, and *COMPILED is set after. */
void cli_parse_regex(const char *opt, const char *re, regex_t *out, bool *compiled);

/* The value LIST of option OPT, comma-separated format names, into
 * FORMATS[0 .. count-1]; returns the count, from 1 to MAX.  Exits with
 * status 2 on an unknown or repeated name, more than MAX names, or none. */
int cli_parse_formats(const char *opt, const char *list, const fpk_format **formats, int max);
/* S for a text table (malloc'd): its control characters escaped, \n, \t,
 * \r or \xNN, so that a tensor named "a\nb" keeps to its line. */
char *cli_printable(const char *s);
/* Exits with status 2 if one of FORMATS[0..N-1] has no zero (e8m0, whose
 * encoding 0 is 2^-127): WHAT, for option OPT, starts from zero. */
void cli_need_zero(const char *opt, const fpk_format *const *formats, int n, const char *what);
/* LIST, option OPT's value, split at its commas into *N names: a malloc'd
 * array holding the names too (one free).  An empty name (",fp16",
 * "fp16,,bf16", "rne,") is an exit with status 2. */
char **cli_split_names(const char *opt, const char *list, int *n);
/* The same, a name first looked up with LOOKUP (a tool's own formats; NULL
 * for none) and then among the library's. */
int cli_parse_formats_with(const char *opt, const char *list, const fpk_format **formats, int max,
                           const fpk_format *(*lookup)(const char *name));

/* S, comma-separated dimensions (counts from 0, decimal digits only), as
 * RAW's shape: true, or false with why not in WHY (LEN bytes). */
bool cli_shape_parse(const char *s, fpk_raw_spec *raw, char *why, size_t len);

/* The value S of option OPT as RAW's shape (cli_shape_parse), or an exit
 * with status 2. */
void cli_parse_shape(const char *opt, const char *s, fpk_raw_spec *raw);

/* Whether PATH names standard output ("-"); NULL does not. */
bool cli_is_stdout(const char *path);

/* For option NAME "--help" or "-h": writes USAGE, a newline and HELP to
 * stdout; for "--version": "TOOL (VERSION)".  Returns whether it was one
 * of them (written unless cli_set_echo(false)). */
bool cli_help_version(const char *name, const char *tool, const char *usage, const char *help);

/* Writes USAGE to stderr (unless cli_set_echo(false)); returns status 2. */
int cli_usage(const char *usage);

/* Whether --help, --version and the usage text are written (the default):
 * under MPI only rank 0 writes them, once for the job. */
void cli_set_echo(bool echo);

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

/* A walk over a tool's command line: "--name=value", "--name value",
 * operands, and "--", after which every word is an operand.  Set argc, argv,
 * tool and with_value; the rest starts zeroed. */
typedef struct {
    int argc;
    char **argv;
    const char *tool;              /* for "(see TOOL --help)" */
    const char *const *with_value; /* the options that take a value, NULL-ended */
    bool (*is_operand)(const char *arg); /* NULL: "-" and words not starting with '-' */
    int i;                         /* the index of the word last read */
    bool rest;                     /* "--" was read */
    const char *arg;               /* the word read, as given */
    char name[32];                 /* an option's name, without "=value" */
    const char *value;             /* an option's value, or NULL */
} cli_args;

enum { CLI_END, CLI_OPERAND, CLI_OPTION };

/* Reads the next word, and an option's value: CLI_END past the last word,
 * CLI_OPERAND (in arg) or CLI_OPTION (arg, name, value).  Exits with status
 * 2 when a value is missing or given to an option that takes none. */
int cli_next(cli_args *a);

/* "TOOL: unknown option "ARG" (see TOOL --help)", status 2. */
noreturn void cli_unknown(const cli_args *a);

/* Writes the built-in format names and the eXmY rule, comma-separated. */
void cli_list_formats(FILE *out);

#endif
