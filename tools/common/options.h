/* The command line of every fpkit tool.  Each option is one entry of a
 * table: the options that several tools share are defined once, in
 * options.c, with what reading them does (they fill a cli_common); a tool
 * names which of them it takes, beside its own, which it handles itself.
 * Parsing, --help and the usage lines are all generated from the same
 * entries, so that they cannot disagree, and a concept has one spelling in
 * every tool: --format for one format, --formats for a list of them. */
#ifndef FPKIT_OPTIONS_H
#define FPKIT_OPTIONS_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "fpkit-tensor.h"

/* The shared options.  A tool's own options take keys from CLI_OWN on. */
enum cli_key {
    CLI_END_OF_TABLE = 0,
    CLI_FORMAT,     /* --format NAME      one format */
    CLI_FORMATS,    /* --formats LIST     formats, comma-separated */
    CLI_TO,         /* --to LIST          formats to convert into (all: every one) */
    CLI_ROUND,      /* --round MODE       a rounding mode (a list: cli_tool.max_rounds) */
    CLI_FTZ,        /* --ftz */
    CLI_DAZ,        /* --daz */
    CLI_SATURATE,   /* --saturate */
    CLI_TININESS,   /* --tininess before|after */
    CLI_OP,         /* --op OP            an operation of fpvectors' lines */
    CLI_MATCH,      /* --match REGEX      tensors whose name matches */
    CLI_DTYPE,      /* --dtype D          raw files of D */
    CLI_SHAPE,      /* --shape A,B,...    their shape */
    CLI_BIG_ENDIAN, /* --big-endian       their byte order */
    CLI_JSON,       /* --json FILE        the report as JSON */
    CLI_CSV,        /* --csv FILE         the report as CSV */
    CLI_PLOT,       /* --plot FILE        a plot, .png or .svg */
    CLI_PLOT_SIZE,  /* --plot-size WxH */
    CLI_MARGIN,     /* --margin M         FP8 scales divided by 2^M */
    CLI_FP8_SCALE,  /* --fp8-scale RULE   exact or pow2 (scaling.h) */
    CLI_SEED,       /* --seed N */
    CLI_SEEDS,      /* --seeds K          stochastic rounding with K seeds */
    CLI_THREADS,    /* --threads N */
    CLI_QUIET,      /* --quiet */
    CLI_TOP,        /* --top N            the N worst tensors in the summary */
    CLI_ALL,        /* --all              the full table too */
    CLI_RECIPE,     /* --recipe R         one scaled-quantisation recipe */
    CLI_RECIPES,    /* --recipes LIST     recipes, comma-separated (recipes.h) */
    CLI_NSHARED,
    CLI_HEADING = 98, /* not an option: a line of --help between options */
    CLI_OWN = 100,
};

#define CLI_MAX_FORMATS FPK_STATS_MAX_FORMATS
#define CLI_MAX_TO 64 /* --to: formats, repeats allowed */
#define CLI_MAX_RECIPES 32

/* An entry of a tool's table.  For a shared option only KEY is needed
 * (VALUE and HELP replace the shared name of its value and its help text
 * where the tool says more); a tool's own option gives its NAME, the name
 * of its VALUE (NULL for a flag; "A B" with NVALUES 2 for an option
 * followed by two words) and HELP. */
typedef struct cli_opt {
    int key;
    const char *name;
    const char *value;
    const char *help;
    int nvalues;
} cli_opt;

/* What the shared options set.  cli_common_init gives the defaults, which
 * a tool may change before cli_parse. */
typedef struct cli_common {
    const fpk_format *format;
    const fpk_format *formats[CLI_MAX_FORMATS];
    int nformats;
    const fpk_format *to[CLI_MAX_TO];
    int nto;
    fpk_round rounds[FPK_ROUND_COUNT];
    int nrounds;
    fpk_ctx ctx; /* --round's first mode, --ftz, --daz, --saturate, --tininess */
    const char *op;
    regex_t match;
    bool has_match;
    const char *match_text; /* --match's value, for messages */
    fpk_raw_spec raw;
    bool has_raw; /* --dtype was given: raw is what to read */
    const char *json, *csv, *plot;
    int plot_width, plot_height;
    int margin;
    int fp8_scale; /* a scaling_rule: SCALING_EXACT unless given */
    uint64_t seed;
    int seeds;
    int threads; /* after cli_parse: the value given, or cli_default_threads() */
    bool quiet;
    int top;     /* --top: 10 unless given */
    bool all;
    /* --recipe (one) or --recipes, with the names they were given as */
    fpk_recipe recipes[CLI_MAX_RECIPES];
    char *recipe_names[CLI_MAX_RECIPES];
    int nrecipes;
    bool given[CLI_NSHARED]; /* which shared options the command line holds */
    char **operands;         /* the words that are not options, in order */
    int noperands;
} cli_common;

/* A tool's command line. */
typedef struct cli_tool {
    const char *name; /* "fpgrad": --version, and the messages' "see fpgrad --help" */
    /* The usage lines, NULL-ended, each a list of words: "--name" an option
     * of the table, written "[--name VALUE]"; "!--name" one that must be
     * given, written without brackets; "--a|--b" (or "!--a|--b") options
     * of which one is given; any other word as it is ("PATH..."). */
    const char *const *synopsis;
    const char *intro; /* --help's first paragraph, or NULL */
    const char *outro; /* and its last, or NULL */
    const cli_opt *opts; /* ended by a zero key */
    /* Applies the tool's own option KEY with its VALUES (NULL for a flag)
     * to STATE; exits with status 2 on a bad value. */
    void (*own)(void *state, int key, char *const *values);
    bool (*is_operand)(const char *arg); /* NULL: "-" and words not starting with '-' */
    const fpk_format *(*lookup)(const char *name); /* --formats names beyond the library's */
    int max_rounds; /* how many modes --round takes (0: one) */
} cli_tool;

void cli_common_init(cli_common *c);
void cli_common_free(cli_common *c);

/* Reads ARGV into C (shared options and operands) and, through T's own,
 * into STATE.  --help and --version write their text and exit with status
 * 0; a usage error exits with status 2.  Afterwards the options that go
 * together have been checked: --shape and --big-endian need --dtype (in a
 * tool that takes it), and --json and --csv cannot both be standard
 * output. */
void cli_parse(const cli_tool *t, cli_common *c, int argc, char **argv, void *state);

/* RE, option OPT's value, compiled into *OUT (extended syntax, no
 * submatches), or an exit with status 2. */
void cli_regex(const char *opt, const char *re, regex_t *out);

/* C's --match RE, as if given (a tool's default); exits with status 2 if
 * RE is not a regular expression. */
void cli_set_match(cli_common *c, const char *re);

/* Whether the command line held shared option KEY. */
bool cli_given(const cli_common *c, int key);

/* The name of option KEY of T ("--scale"), shared or T's own. */
const char *cli_option_name(const cli_tool *t, int key);

/* T's usage lines on standard error (unless cli_set_echo(false)); returns
 * status 2, for a tool given nothing to do. */
int cli_usage_error(const cli_tool *t);

/* For a tool that reads PATHs and was given none: dies with status 2
 * saying so where --json, --csv or --plot took an existing file as the
 * file to write (fpgrad --json data.npy), else as cli_usage_error. */
int cli_no_paths(const cli_tool *t, const cli_common *c);

/* The value S of option OPT as a decimal integer in [MIN, MAX] (digits,
 * an optional '-' first), or an exit with status 2. */
long long cli_parse_int(const char *opt, const char *s, long long min, long long max);

/* The value S of option OPT as a finite positive number, "2^K" or any
 * number fpk_parse reads, rounded once to the nearest double; or an exit
 * with status 2, saying that the option expects EXPECTED ("a number or
 * 2^K" when NULL) where S is not a number. */
double cli_parse_positive(const char *opt, const char *s, const char *expected);

/* The value S of --threads: 1 to CLI_MAX_THREADS, or an exit with status 2.
 * Results never depend on it. */
#define CLI_MAX_THREADS 1024
int cli_parse_threads(const char *s);

/* The value LIST of option OPT, comma-separated format names, into
 * FORMATS[0 .. count-1]; returns the count, from 1 to MAX.  A name is
 * first looked up with LOOKUP (a tool's own formats; NULL for none), then
 * among the library's.  Exits with status 2 on an unknown or repeated
 * name, more than MAX names, or none. */
int cli_parse_formats(const char *opt, const char *list, const fpk_format **formats, int max,
                      const fpk_format *(*lookup)(const char *name));

/* LIST, option OPT's value, split at its commas into *N names: a malloc'd
 * array holding the names too (one free).  An empty name (",fp16",
 * "fp16,,bf16", "rne,") is an exit with status 2. */
char **cli_split_names(const char *opt, const char *list, int *n);

/* The format NAME, or an exit with status 2 and a message listing the
 * known names. */
const fpk_format *cli_format(const char *name);

/* The rounding mode NAME (rne, rna, rtz, rup, rdn, rod, sr), or an exit
 * with status 2. */
fpk_round cli_round(const char *name);

/* Exits with status 2 if one of FORMATS[0..N-1] has no zero (e8m0, whose
 * encoding 0 is 2^-127): WHAT, for option OPT, starts from zero. */
void cli_need_zero(const char *opt, const fpk_format *const *formats, int n, const char *what);

/* S, comma-separated dimensions (counts from 0, decimal digits only), as
 * RAW's shape: true, or false with why not in WHY (LEN bytes). */
bool cli_shape_parse(const char *s, fpk_raw_spec *raw, char *why, size_t len);

/* Writes the built-in format names and the eXmY rule, comma-separated. */
void cli_list_formats(FILE *out);

/* Whether --help, --version and the usage text are written (the default):
 * under MPI only rank 0 writes them, once for the job. */
void cli_set_echo(bool echo);

/* The help text shared by the tools that read dumps, about their PATHs. */
#define CLI_PATHS_INTRO                                                                        \
    "PATH is a .npy or safetensors file, a raw file (with --dtype), or a directory searched " \
    "for *.npy and *.safetensors."

#endif
