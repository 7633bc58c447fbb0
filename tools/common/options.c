/* The tools' command lines (options.h): the shared options' table, the
 * parser, and the usage and help text made from a tool's table. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "gnuplot.h"
#include "options.h"
#include "recipes.h"
#include "scaling.h"

/* Text is wrapped to this many columns. */
#define WIDTH 80

typedef struct shared_opt {
    const char *name, *value, *help;
} shared_opt;

/* The shared options: their one spelling, and the help a tool gets unless
 * it says more. */
static const shared_opt shared[CLI_NSHARED] = {
    [CLI_FORMAT] = {"--format", "FMT", "the format"},
    [CLI_FORMATS] = {"--formats", "LIST", "formats, comma-separated"},
    [CLI_TO] = {"--to", "LIST", "also convert into these formats (comma-separated, or all)"},
    [CLI_ROUND] = {"--round", "MODE", "rne (default), rna, rtz, rup, rdn, rod, sr"},
    [CLI_FTZ] = {"--ftz", NULL, "flush subnormal results to zero"},
    [CLI_DAZ] = {"--daz", NULL, "read subnormal operands as zero"},
    [CLI_SATURATE] = {"--saturate", NULL, "overflow gives the largest finite value"},
    [CLI_TININESS] = {"--tininess", "WHEN",
                      "underflow's tininess: after (default) or before rounding"},
    [CLI_OP] = {"--op", "OP", "the operation"},
    [CLI_MATCH] = {"--match", "REGEX", "only tensors whose name matches (POSIX extended regex)"},
    [CLI_DTYPE] = {"--dtype", "D", NULL}, /* help made by dtype_help */
    [CLI_SHAPE] = {"--shape", "A,B,...", "the raw files' shape (default: one dimension)"},
    [CLI_BIG_ENDIAN] = {"--big-endian", NULL, "the raw files' elements are big-endian"},
    [CLI_JSON] = {"--json", "FILE", "the report as JSON (- for standard output)"},
    [CLI_CSV] = {"--csv", "FILE", "the report as CSV (- for standard output)"},
    [CLI_PLOT] = {"--plot", "FILE", "a plot, .png or .svg"},
    [CLI_PLOT_SIZE] = {"--plot-size", "WxH", "its size (default 1000x600)"},
    [CLI_MARGIN] = {"--margin", "M", "divide the FP8 scales by 2^M (default 0)"},
    [CLI_FP8_SCALE] = {"--fp8-scale", "exact|pow2",
                       "the FP8 scales: max/amax in float32 as Transformer Engine's delayed and "
                       "current scaling compute them (exact, the default), or rounded down to a "
                       "power of two (pow2)"},
    [CLI_SEED] = {"--seed", "N", "the first stochastic-rounding seed (default 0)"},
    [CLI_SEEDS] = {"--seeds", "K", "stochastic rounding with K seeds"},
    [CLI_THREADS] = {"--threads", "N", "threads (default: all its CPUs)"},
    [CLI_QUIET] = {"--quiet", NULL, "no table on standard output"},
    [CLI_TOP] = {"--top", "N", "the summary names the N worst tensors (default 10; 0: none)"},
    [CLI_ALL] = {"--all", NULL, "after the summary, the full table of every tensor"},
    [CLI_RECIPE] = {"--recipe", "R",
                    "a scaled-quantisation recipe: a preset (nvfp4, mxfp8-e4m3, ...) or "
                    "ELEM/SCALE/RULE/ROWSxCOLS[,OPTION...] (fpkit-recipes(7))"},
    [CLI_RECIPES] = {"--recipes", "LIST",
                     "recipes, comma-separated (fpkit-recipes(7)); standard: "
                     "fp8-tensor-current,fp8-block128,mxfp8-e4m3,mxfp4,nvfp4; all: every "
                     "preset"},
};

static bool echo = true;

void cli_set_echo(bool e)
{
    echo = e;
}

void cli_common_init(cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->ctx = fpk_ctx_default();
    c->rounds[0] = FPK_RNE;
    c->nrounds = 1;
    c->plot_width = 1000;
    c->plot_height = 600;
    c->top = 10;
}

void cli_common_free(cli_common *c)
{
    if (c->has_match)
        regfree(&c->match);
    c->has_match = false;
    free(c->operands);
    c->operands = NULL;
    for (int i = 0; i < c->nrecipes; i++)
        free(c->recipe_names[i]);
    c->nrecipes = 0;
}

bool cli_given(const cli_common *c, int key)
{
    return key > 0 && key < CLI_NSHARED && c->given[key];
}

/* The entry of T's table for KEY, or NULL. */
static const cli_opt *entry_of(const cli_tool *t, int key)
{
    for (const cli_opt *o = t->opts; o->key; o++)
        if (o->key == key)
            return o;
    return NULL;
}

static const char *name_of(const cli_opt *o)
{
    return o->key < CLI_NSHARED ? shared[o->key].name : o->name;
}

static const char *value_of(const cli_opt *o)
{
    return o->key < CLI_NSHARED && !o->value ? shared[o->key].value : o->value;
}

const char *cli_option_name(const cli_tool *t, int key)
{
    const cli_opt *o = entry_of(t, key);
    return o ? name_of(o) : key < CLI_NSHARED ? shared[key].name : "?";
}

/* --dtype's help: the dtypes by name, from the library's list. */
static char *dtype_help(void)
{
    char *s = cli_strf("read every PATH as a raw file of D (");
    for (int t = 0; t < FPK_DTYPE_COUNT; t++) {
        char *n = cli_strf("%s%s%s", s, t ? " " : "", fpk_dtype_name((fpk_dtype)t));
        free(s);
        s = n;
    }
    char *n = cli_strf("%s)", s);
    free(s);
    return n;
}

/* Text laid out in lines of at most WIDTH columns: words of TEXT after a
 * first line that starts at column FIRST, the rest indented to INDENT. */
static void wrap(FILE *out, const char *text, int first, int indent)
{
    int col = first;
    bool fresh = true;
    for (const char *p = text; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        int n = (int)strcspn(p, " ");
        if (!fresh && col + 1 + n > WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
            fresh = true;
        }
        if (!fresh) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", n, p);
        col += n;
        fresh = false;
        p += n;
    }
    fputc('\n', out);
}

/* Word W of a usage line as it is written. */
static char *usage_word(const cli_tool *t, const char *w)
{
    bool must = w[0] == '!';
    w += must;
    if (strncmp(w, "--", 2) != 0)
        return cli_strf("%s", w);
    char *s = cli_strf("%s", must ? "" : "[");
    for (const char *p = w; *p;) {
        size_t n = strcspn(p, "|");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        const cli_opt *o = NULL;
        for (const cli_opt *e = t->opts; e->key && !o; e++)
            if (e->key != CLI_HEADING && strcmp(name_of(e), name) == 0)
                o = e;
        const char *value = o ? value_of(o) : NULL;
        char *next = cli_strf("%s%s%s%s%s", s, p == w ? "" : " | ", name, value ? " " : "",
                              value ? value : "");
        free(s);
        s = next;
        p += n + (p[n] == '|');
    }
    char *next = cli_strf("%s%s", s, must ? "" : "]");
    free(s);
    return next;
}

static void write_usage(const cli_tool *t, FILE *out)
{
    int lead = (int)strlen("usage: ") + (int)strlen(t->name) + 1;
    for (int f = 0; t->synopsis[f]; f++) {
        fprintf(out, "%s %s", f ? "      " : "usage:", t->name);
        int col = lead;
        char *words = cli_strf("%s", t->synopsis[f]);
        for (char *save, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            char *s = usage_word(t, w);
            int n = (int)strlen(s);
            if (col > lead && col + 1 + n > WIDTH) {
                fprintf(out, "\n%*s", lead, "");
                col = lead;
            } else {
                fputc(' ', out);
                col++;
            }
            fputs(s, out);
            col += n;
            free(s);
        }
        free(words);
        fputc('\n', out);
    }
}

static void write_help(const cli_tool *t, FILE *out)
{
    write_usage(t, out);
    fputc('\n', out);
    if (t->intro)
        wrap(out, t->intro, 0, 0);
    /* The help column: after the longest "--name VALUE" of at most 20. */
    int label = 0;
    for (const cli_opt *o = t->opts; o->key; o++) {
        if (o->key == CLI_HEADING)
            continue;
        const char *v = value_of(o);
        int n = (int)strlen(name_of(o)) + (v ? 1 + (int)strlen(v) : 0);
        if (n <= 20 && n > label)
            label = n;
    }
    int col = 2 + label + 2;
    for (const cli_opt *o = t->opts; o->key; o++) {
        if (o->key == CLI_HEADING) {
            wrap(out, o->help, 0, 0);
            continue;
        }
        const char *v = value_of(o);
        char *text = cli_strf("  %s%s%s", name_of(o), v ? " " : "", v ? v : "");
        int n = (int)strlen(text);
        /* a label too long for the column has its help on the next line */
        fprintf(out, "%s%s%*s", text, n + 2 <= col ? "" : "\n", n + 2 <= col ? col - n : col, "");
        free(text);
        char *dtype = o->key == CLI_DTYPE && !o->help ? dtype_help() : NULL;
        const char *help = o->help ? o->help : dtype ? dtype : shared[o->key].help;
        wrap(out, help, col, col);
        free(dtype);
    }
    fputs("  --help, --version\n", out);
    if (t->outro)
        wrap(out, t->outro, 0, 0);
}

int cli_usage_error(const cli_tool *t)
{
    if (echo)
        write_usage(t, stderr);
    return CLI_EXIT_USAGE;
}

int cli_no_paths(const cli_tool *t, const cli_common *c)
{
    const struct {
        const char *opt, *file;
    } outs[] = {{"--json", c->json}, {"--csv", c->csv}, {"--plot", c->plot}};
    for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++) {
        struct stat st;
        if (outs[k].file && stat(outs[k].file, &st) == 0 && S_ISREG(st.st_mode))
            cli_die(CLI_EXIT_USAGE,
                    "no PATH: %s took \"%s\" as the file to write; name the output first "
                    "(%s out FILE...), or - for standard output",
                    outs[k].opt, outs[k].file, outs[k].opt);
    }
    return cli_usage_error(t);
}

static noreturn void unknown(const cli_tool *t, const char *arg)
{
    cli_die(CLI_EXIT_USAGE, "unknown option \"%s\" (see %s --help)", arg, t->name);
}

static void set_rounds(const cli_tool *t, cli_common *c, const char *list)
{
    if (t->max_rounds <= 1) {
        c->rounds[0] = cli_round(list);
        c->nrounds = 1;
    } else {
        int count;
        char **names = cli_split_names("--round", list, &count);
        c->nrounds = 0;
        for (int k = 0; k < count; k++) {
            fpk_round m = cli_round(names[k]);
            for (int j = 0; j < c->nrounds; j++)
                if (c->rounds[j] == m)
                    cli_die(CLI_EXIT_USAGE, "option --round: %s is named twice",
                            fpk_round_name(m));
            if (c->nrounds == t->max_rounds)
                cli_die(CLI_EXIT_USAGE, "option --round: at most %d modes", t->max_rounds);
            c->rounds[c->nrounds++] = m;
        }
        free(names);
    }
    c->ctx.round = c->rounds[0];
}

static void add_to(cli_common *c, const fpk_format *f)
{
    if (c->nto == CLI_MAX_TO)
        cli_die(CLI_EXIT_USAGE, "--to: more than %d formats", CLI_MAX_TO);
    c->to[c->nto++] = f;
}

static void set_to(cli_common *c, const char *list)
{
    if (strcasecmp(list, "all") == 0) {
        for (const fpk_format *const *f = fpk_formats; *f; f++)
            add_to(c, *f);
        return;
    }
    int n;
    char **names = cli_split_names("--to", list, &n);
    for (int k = 0; k < n; k++)
        add_to(c, cli_format(names[k]));
    free(names);
}

static void set_size(const char *opt, const char *s, int *width, int *height)
{
    char *copy = cli_strf("%s", s), *x = strchr(copy, 'x');
    if (!x)
        cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is not WIDTHxHEIGHT", opt, s);
    *x = '\0';
    *width = (int)cli_parse_int(opt, copy, 64, 10000);
    *height = (int)cli_parse_int(opt, x + 1, 64, 10000);
    free(copy);
}

static void set_regex(const char *opt, const char *re, regex_t *out, bool *compiled);

void cli_regex(const char *opt, const char *re, regex_t *out)
{
    bool compiled = false;
    set_regex(opt, re, out, &compiled);
}

void cli_set_match(cli_common *c, const char *re)
{
    set_regex("--match", re, &c->match, &c->has_match);
    c->match_text = re;
}

static void set_regex(const char *opt, const char *re, regex_t *out, bool *compiled)
{
    if (*compiled)
        regfree(out);
    *compiled = false;
    int rc = regcomp(out, re, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[256];
        regerror(rc, out, why, sizeof why);
        cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is not a regular expression: %s", opt, re,
                why);
    }
    *compiled = true;
}

/* Applies shared option KEY with value V (NULL for a flag) to C. */
static void set_shared(const cli_tool *t, cli_common *c, int key, const char *v,
                       const char **dtype)
{
    const char *name = shared[key].name;
    switch (key) {
    case CLI_FORMAT: c->format = cli_format(v); break;
    case CLI_FORMATS:
        c->nformats = cli_parse_formats(name, v, c->formats, CLI_MAX_FORMATS, t->lookup);
        break;
    case CLI_TO: set_to(c, v); break;
    case CLI_ROUND: set_rounds(t, c, v); break;
    case CLI_FTZ: c->ctx.ftz = true; break;
    case CLI_DAZ: c->ctx.daz = true; break;
    case CLI_SATURATE: c->ctx.saturate = true; break;
    case CLI_TININESS:
        if (strcmp(v, "before") != 0 && strcmp(v, "after") != 0)
            cli_die(CLI_EXIT_USAGE, "--tininess \"%s\": expected before or after", v);
        c->ctx.tiny_before = strcmp(v, "before") == 0;
        break;
    case CLI_OP: c->op = v; break;
    case CLI_MATCH:
        set_regex(name, v, &c->match, &c->has_match);
        c->match_text = v;
        break;
    case CLI_DTYPE: *dtype = v; break;
    case CLI_SHAPE: {
        char why[256];
        if (!cli_shape_parse(v, &c->raw, why, sizeof why))
            cli_die(CLI_EXIT_USAGE, "option %s: %s", name, why);
        break;
    }
    case CLI_BIG_ENDIAN: c->raw.big_endian = true; break;
    case CLI_JSON: c->json = v; break;
    case CLI_CSV: c->csv = v; break;
    case CLI_PLOT:
        if (!gp_ext_ok(v))
            cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" must end in .png or .svg", name, v);
        c->plot = v;
        break;
    case CLI_PLOT_SIZE: set_size(name, v, &c->plot_width, &c->plot_height); break;
    case CLI_MARGIN: c->margin = (int)cli_parse_int(name, v, 0, 64); break;
    case CLI_FP8_SCALE: {
        scaling_rule r;
        if (!scaling_rule_lookup(v, &r))
            cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is neither exact nor pow2", name, v);
        c->fp8_scale = (int)r;
        break;
    }
    case CLI_SEED: c->seed = (uint64_t)cli_parse_int(name, v, 0, INT64_MAX); break;
    case CLI_SEEDS: c->seeds = (int)cli_parse_int(name, v, 1, 100000); break;
    case CLI_THREADS: c->threads = cli_parse_threads(v); break;
    case CLI_QUIET: c->quiet = true; break;
    case CLI_TOP: c->top = (int)cli_parse_int(name, v, 0, 1000000); break;
    case CLI_ALL: c->all = true; break;
    case CLI_RECIPE: cli_parse_recipes(name, v, false, c); break;
    case CLI_RECIPES: cli_parse_recipes(name, v, true, c); break;
    }
    c->given[key] = true;
}

/* The entry of T's table called NAME, or NULL. */
static const cli_opt *lookup_option(const cli_tool *t, const char *name)
{
    for (const cli_opt *o = t->opts; o->key; o++)
        if (o->key != CLI_HEADING && strcmp(name_of(o), name) == 0)
            return o;
    return NULL;
}

static bool is_operand(const cli_tool *t, const char *arg)
{
    return t->is_operand ? t->is_operand(arg) : arg[0] != '-' || arg[1] == '\0';
}

/* Checks what goes together, and resolves --dtype into C's raw spec.  (A
 * tool without --dtype may give --shape a meaning of its own.) */
static void finish(const cli_tool *t, cli_common *c, const char *dtype)
{
    bool raw = false;
    for (const cli_opt *o = t->opts; o->key && !raw; o++)
        raw = o->key == CLI_DTYPE;
    if (raw && (c->given[CLI_SHAPE] || c->given[CLI_BIG_ENDIAN]) && !dtype)
        cli_die(CLI_EXIT_USAGE, "options --shape and --big-endian describe raw files: give "
                                "--dtype too");
    if (dtype) {
        if (!fpk_dtype_lookup(dtype, &c->raw.dtype)) {
            char *known = cli_strf("%s", "");
            for (int k = 0; k < FPK_DTYPE_COUNT; k++) {
                char *n = cli_strf("%s%s%s", known, k ? ", " : "", fpk_dtype_name((fpk_dtype)k));
                free(known);
                known = n;
            }
            cli_die(CLI_EXIT_USAGE, "unknown dtype \"%s\"; known dtypes: %s", dtype, known);
        }
        c->has_raw = true;
    }
    if (c->json && c->csv && strcmp(c->json, "-") == 0 && strcmp(c->csv, "-") == 0)
        cli_die(CLI_EXIT_USAGE, "--json - and --csv - cannot both write to standard output");
    if (!c->given[CLI_THREADS])
        c->threads = cli_default_threads();
}

void cli_parse(const cli_tool *t, cli_common *c, int argc, char **argv, void *state)
{
    c->operands = cli_xcalloc((size_t)argc, sizeof *c->operands);
    c->noperands = 0;
    const char *dtype = NULL;
    bool rest = false;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (!rest && strcmp(arg, "--") == 0) {
            rest = true;
            continue;
        }
        if (rest || is_operand(t, arg)) {
            c->operands[c->noperands++] = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        char name[64];
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nlen >= sizeof name)
            unknown(t, arg);
        memcpy(name, arg, nlen);
        name[nlen] = '\0';
        bool help = strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0;
        if (help || strcmp(name, "--version") == 0) {
            if (eq)
                cli_die(CLI_EXIT_USAGE, "option %s takes no argument", name);
            if (echo) {
                if (help)
                    write_help(t, stdout);
                else
                    printf("%s (%s)\n", t->name, fpk_version());
                if (fflush(stdout) != 0 || ferror(stdout))
                    cli_die(CLI_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno));
            }
            exit(0);
        }
        const cli_opt *o = lookup_option(t, name);
        if (!o)
            unknown(t, arg);
        int nvalues = value_of(o) ? (o->nvalues > 0 ? o->nvalues : 1) : 0;
        char *values[4] = {NULL};
        if (nvalues == 0 && eq)
            cli_die(CLI_EXIT_USAGE, "option %s takes no argument", name);
        for (int k = 0; k < nvalues; k++) {
            if (k == 0 && eq)
                values[k] = (char *)eq + 1;
            else if (i + 1 < argc)
                values[k] = argv[++i];
            else if (nvalues > 1)
                cli_die(CLI_EXIT_USAGE, "option %s needs %s arguments, %s (see %s --help)", name,
                        nvalues == 2 ? "two" : "three", value_of(o), t->name);
            else
                cli_die(CLI_EXIT_USAGE, "option %s needs an argument (see %s --help)", name,
                        t->name);
        }
        if (o->key < CLI_NSHARED)
            set_shared(t, c, o->key, values[0], &dtype);
        else
            t->own(state, o->key, nvalues ? values : NULL);
    }
    finish(t, c, dtype);
}

long long cli_parse_int(const char *opt, const char *s, long long min, long long max)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    bool digits = isdigit((unsigned char)s[s[0] == '-']); /* no space, no '+' */
    if (!digits || *end || errno || v < min || v > max)
        cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is not an integer from %lld to %lld", opt, s,
                min, max);
    return v;
}

int cli_parse_threads(const char *s)
{
    return (int)cli_parse_int("--threads", s, 1, CLI_MAX_THREADS);
}

double cli_parse_positive(const char *opt, const char *s, const char *expected)
{
    fpk_bits bits; /* (fpk_parse reads 2^K and M*2^K exactly) */
    fpk_error err;
    if (fpk_parse(&fpk_fp64, s, &bits, NULL, &err) != FPK_OK)
        cli_die(CLI_EXIT_USAGE, "option %s: %s; give %s", opt, err.msg,
                expected ? expected : "a number or 2^K");
    fpk_class k = fpk_classify(&fpk_fp64, bits);
    if (fpk_signbit(&fpk_fp64, bits) || (k != FPK_CLASS_NORMAL && k != FPK_CLASS_SUBNORMAL))
        cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is not a finite positive number", opt, s);
    return fpk_to_double(&fpk_fp64, bits);
}

char **cli_split_names(const char *opt, const char *list, int *n)
{
    size_t len = strlen(list), parts = 1;
    for (const char *p = list; *p; p++)
        parts += *p == ',';
    char **names = cli_xcalloc(1, (parts + 1) * sizeof *names + len + 1);
    char *copy = memcpy(names + parts + 1, list, len + 1);
    for (size_t k = 0; k < parts; k++) {
        names[k] = copy;
        copy += strcspn(copy, ",");
        *copy++ = '\0';
        if (!*names[k]) {
            free(names);
            cli_die(CLI_EXIT_USAGE, "option %s: an empty name in \"%s\"; expected NAME[,NAME...]",
                    opt, list);
        }
    }
    *n = (int)parts;
    return names;
}

int cli_parse_formats(const char *opt, const char *list, const fpk_format **formats, int max,
                      const fpk_format *(*lookup)(const char *name))
{
    int n = 0, count;
    char **names = cli_split_names(opt, list, &count);
    for (int k = 0; k < count; k++) {
        const char *t = names[k];
        const fpk_format *f = lookup ? lookup(t) : NULL;
        if (!f)
            f = cli_format(t);
        for (int j = 0; j < n; j++)
            if (formats[j] == f)
                cli_die(CLI_EXIT_USAGE, "option %s: %s is named twice", opt, f->name);
        if (n == max)
            cli_die(CLI_EXIT_USAGE, "option %s: at most %d formats", opt, max);
        formats[n++] = f;
    }
    free(names);
    return n;
}

void cli_list_formats(FILE *out)
{
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        fprintf(out, "%s%s", f == fpk_formats ? "" : ", ", (*f)->name);
    fputs(", or eXmY, eXmYfn, eXmYfnuz (1 <= X <= 11, 0 <= Y <= 52)", out);
}

const fpk_format *cli_format(const char *name)
{
    const fpk_format *f = fpk_format_lookup(name);
    if (!f) {
        char *list = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&list, &len);
        if (!m)
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
        cli_list_formats(m);
        if (fclose(m) != 0)
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
        cli_die(CLI_EXIT_USAGE, "unknown format \"%s\"; known formats: %s", name, list);
    }
    return f;
}

fpk_round cli_round(const char *name)
{
    fpk_round mode;
    if (!fpk_round_lookup(name, &mode))
        cli_die(CLI_EXIT_USAGE, "unknown rounding mode \"%s\"; known modes: rne, rna, rtz, rup, "
                                "rdn, rod, sr",
                name);
    return mode;
}

void cli_need_zero(const char *opt, const fpk_format *const *formats, int n, const char *what)
{
    for (int j = 0; j < n; j++)
        if (fpk_classify(formats[j], 0) != FPK_CLASS_ZERO)
            cli_die(CLI_EXIT_USAGE, "option %s: %s has no zero for %s to start from", opt,
                    formats[j]->name, what);
}

bool cli_shape_parse(const char *s, fpk_raw_spec *raw, char *why, size_t len)
{
    raw->ndim = 0;
    for (const char *t = s;;) {
        size_t n = strcspn(t, ",");
        uint64_t v = 0;
        bool ok = n > 0;
        for (size_t i = 0; ok && i < n; i++)
            ok = t[i] >= '0' && t[i] <= '9' && !__builtin_mul_overflow(v, 10, &v) &&
                 !__builtin_add_overflow(v, (uint64_t)(t[i] - '0'), &v);
        if (!ok) {
            snprintf(why, len, "\"%.*s\" is not a dimension (a count from 0) in \"%s\"",
                     (int)n, t, s);
            return false;
        }
        if (raw->ndim == FPK_MAX_DIMS) {
            snprintf(why, len, "at most %d dimensions", FPK_MAX_DIMS);
            return false;
        }
        raw->shape[raw->ndim++] = v;
        if (!t[n])
            return true;
        t += n + 1;
    }
}
