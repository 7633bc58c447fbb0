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

int cli_next(cli_args *a)
{
    if (++a->i >= a->argc)
        return CLI_END;
    const char *arg = a->arg = a->argv[a->i];
    a->value = NULL;
    if (!a->rest && strcmp(arg, "--") == 0) {
        a->rest = true;
        return cli_next(a);
    }
    if (a->rest || (a->is_operand ? a->is_operand(arg) : arg[0] != '-' || arg[1] == '\0'))
        return CLI_OPERAND;
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (nlen >= sizeof a->name)
        cli_unknown(a);
    memcpy(a->name, arg, nlen);
    a->name[nlen] = '\0';
    bool takes = false;
    for (const char *const *w = a->with_value; *w && !takes; w++)
        takes = strcmp(a->name, *w) == 0;
    if (takes) {
        if (eq)
            a->value = eq + 1;
        else if (a->i + 1 < a->argc)
            a->value = a->argv[++a->i];
        else
            cli_die(CLI_EXIT_USAGE, "option %s needs an argument (see %s --help)", a->name, a->tool);
    } else if (eq) {
        cli_die(CLI_EXIT_USAGE, "option %s takes no argument", a->name);
    }
    return CLI_OPTION;
}

void cli_unknown(const cli_args *a)
{
    cli_die(CLI_EXIT_USAGE, "unknown option \"%s\" (see %s --help)", a->arg, a->tool);
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
