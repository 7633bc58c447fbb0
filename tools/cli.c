/* Helpers shared by the fpkit tools. */
#define _GNU_SOURCE /* vasprintf */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

static const char *prog = "fpkit";

void cli_init(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    prog = slash ? slash + 1 : argv0 ? argv0 : prog;
}

const char *cli_prog(void)
{
    return prog;
}

void cli_die(int status, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(status);
}

void cli_list_formats(FILE *out)
{
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        fprintf(out, "%s%s", f == fpk_formats ? "" : ", ", (*f)->name);
    fputs(", or eXmY (1 <= X <= 11, 0 <= Y <= 52)", out);
}

const fpk_format *cli_format(const char *name)
{
    const fpk_format *f = fpk_format_lookup(name);
    if (!f) {
        fprintf(stderr, "%s: unknown format \"%s\"; known formats: ", prog, name);
        cli_list_formats(stderr);
        fputc('\n', stderr);
        exit(CLI_EXIT_USAGE);
    }
    return f;
}

fpk_round cli_round(const char *name)
{
    fpk_round mode;
    if (fpk_round_lookup(name, &mode))
        return mode;
    cli_die(CLI_EXIT_USAGE, "unknown rounding mode \"%s\"; known modes: rne, rna, rtz, rup, rdn, rod, sr", name);
}

const char *cli_round_name(fpk_round mode)
{
    return fpk_round_name(mode);
}

char *cli_strf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        cli_die(CLI_EXIT_FAILURE, "out of memory");
    return s;
}
