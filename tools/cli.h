/* Helpers shared by the fpkit tools: messages, exit codes, and the parsing
 * of format and rounding-mode names. */
#ifndef FPKIT_CLI_H
#define FPKIT_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include "fpkit.h"

/* Exit statuses: 0 success, 1 a failure while working, 2 bad usage or input. */
enum { CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

/* Sets the program name used as the prefix of every message. */
void cli_init(const char *argv0);
const char *cli_prog(void);

/* "prog: MESSAGE\n" on stderr, then exit(STATUS). */
noreturn void cli_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The format NAME, or an exit with status 2 and a message listing the
 * known names. */
const fpk_format *cli_format(const char *name);

/* The rounding mode NAME (rne, rna, rtz, rup, rdn, rod, sr), or an exit with
 * status 2. */
fpk_round cli_round(const char *name);
const char *cli_round_name(fpk_round mode);

/* A formatted string in new memory (free it); exits if memory runs out. */
char *cli_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
