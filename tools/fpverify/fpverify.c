/* fpverify: checks the results and flags that another implementation wrote
 * into test-vector lines (fpvectors' layout) against libfpkit, and reports
 * the mismatches by class. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vectors.h"

enum { OPT_NO_FLAGS = CLI_OWN, OPT_NAN_CLASS, OPT_SHOW };

static const cli_opt options[] = {
    VEC_OPTIONS,
    {.key = OPT_NO_FLAGS, .name = "--no-flags",
     .help = "the lines end with the result: compare results only"},
    {.key = OPT_NAN_CLASS, .name = "--nan-class",
     .help = "a NaN result matches any NaN of the same class (quiet, signaling)"},
    {.key = OPT_SHOW, .name = "--show", .value = "N",
     .help = "print the first N mismatches (default 10)"},
    {0},
};

static const char *const synopsis[] = {VEC_SYNOPSIS " --no-flags --nan-class --show [FILE...]",
                                       NULL};

/* Mismatch classes, in the order they are tried. */
enum { CLS_FLAGS, CLS_OVERFLOW, CLS_NAN, CLS_ROUNDING, CLS_SUBNORMAL, CLS_VALUE, CLS_COUNT };
static const char *const class_names[CLS_COUNT] = {"flags", "overflow", "nan", "rounding", "subnormal", "value"};
static const char *const class_text[CLS_COUNT] = {
    "right result, wrong flags",
    "overflow handling",
    "NaN pattern or NaN handling",
    "wrong rounding direction",
    "subnormal handling",
    "other wrong results",
};
/* The order of the summary: as the classes are introduced in fpverify(1). */
static const int report_order[CLS_COUNT] = {CLS_ROUNDING, CLS_FLAGS, CLS_NAN, CLS_SUBNORMAL, CLS_OVERFLOW,
                                            CLS_VALUE};

typedef struct verifier {
    vec_spec s;
    bool with_flags, nan_class;
    uint64_t show;
    uint64_t cases, mismatches, by_class[CLS_COUNT];
} verifier;

static bool is_nan(const fpk_format *f, fpk_bits a)
{
    return fpk_classify(f, a) >= FPK_CLASS_QNAN;
}

/* Whether results A and B agree: the same bits or, with --nan-class, NaNs
 * of the same class. */
static bool same_result(const verifier *v, uint64_t a, uint64_t b)
{
    const fpk_format *t = vec_out_format(&v->s);
    if (a == b)
        return true;
    return v->nan_class && t && is_nan(t, a) && fpk_classify(t, a) == fpk_classify(t, b);
}

/* Whether GOT's result is the library's under rdn or rup: a neighbour of
 * the exact result, on the other side from the right one. */
static bool other_neighbour(const vec_spec *s, const vec_case *got)
{
    static const fpk_round dirs[] = {FPK_RDN, FPK_RUP};
    for (int i = 0; i < 2; i++) {
        vec_case c = *got;
        vec_eval(s, &c, &dirs[i]);
        if (c.z == got->z)
            return true;
    }
    return false;
}

/* The class of a mismatch between GOT and WANT (the library's), or -1 when
 * they agree.  The first that applies: flags (the results agree); overflow
 * (an overflow flag on either side, a NaN or infinite result for finite
 * operands where a normal one was due; to_int: an infinite operand or one
 * beyond int64); nan (a NaN result or operand); rounding (the other neighbour of
 * the exact result, both zero or both nonzero); subnormal (a subnormal
 * result or operand, or a zero against a nonzero); value. */
static int classify(const verifier *v, const vec_case *got, const vec_case *want)
{
    const vec_spec *s = &v->s;
    const fpk_format *in = vec_in_format(s), *t = vec_out_format(s);
    unsigned got_flags = v->with_flags ? got->flags : 0;
    if (same_result(v, got->z, want->z))
        return got_flags == want->flags || !v->with_flags ? -1 : CLS_FLAGS;
    bool op_nan = false, op_inf = false, op_sub = false;
    for (int i = 0; in && i < s->op->arity; i++) {
        fpk_class k = fpk_classify(in, got->in[i]);
        op_nan |= k >= FPK_CLASS_QNAN;
        op_inf |= k == FPK_CLASS_INF;
        op_sub |= k == FPK_CLASS_SUBNORMAL;
    }
    if (s->op->out == VEC_BOOL)
        return op_nan ? CLS_NAN : op_sub ? CLS_SUBNORMAL : CLS_VALUE;
    if (s->op->out == VEC_INT) {
        if (op_nan)
            return CLS_NAN;
        if (want->flags & FPK_INVALID) /* the operand infinite or beyond int64 */
            return CLS_OVERFLOW;
        return other_neighbour(s, got) ? CLS_ROUNDING : op_sub ? CLS_SUBNORMAL : CLS_VALUE;
    }
    fpk_class kg = fpk_classify(t, got->z), kw = fpk_classify(t, want->z);
    bool got_special = kg >= FPK_CLASS_INF;
    if ((want->flags | got_flags) & FPK_OVERFLOW)
        return CLS_OVERFLOW;
    if (kw == FPK_CLASS_NORMAL && got_special && !op_nan && !op_inf)
        return CLS_OVERFLOW;
    if (kg >= FPK_CLASS_QNAN || kw >= FPK_CLASS_QNAN)
        return CLS_NAN;
    if ((kg == FPK_CLASS_ZERO) == (kw == FPK_CLASS_ZERO) && other_neighbour(s, got))
        return CLS_ROUNDING;
    if (kg == FPK_CLASS_SUBNORMAL || kw == FPK_CLASS_SUBNORMAL || (kg == FPK_CLASS_ZERO) != (kw == FPK_CLASS_ZERO) ||
        op_sub)
        return CLS_SUBNORMAL;
    return CLS_VALUE;
}

/* The result and flags fields of C's line. */
static const char *result_fields(const verifier *v, const vec_case *c, char *buf)
{
    vec_format_line(&v->s, c, v->with_flags, buf);
    buf[strcspn(buf, "\n")] = '\0';
    const char *p = buf;
    for (int i = 0; i < v->s.op->arity; i++)
        p = strchr(p, ' ') + 1;
    return p;
}

static void check_line(verifier *v, const char *name, uint64_t lineno, const char *line)
{
    char why[256];
    vec_case got, want;
    if (vec_parse_line(&v->s, line, v->with_flags, &got, why, sizeof why) != 0)
        cli_die(CLI_EXIT_USAGE, "%s:%" PRIu64 ": %s", name, lineno, why);
    want = got;
    vec_eval(&v->s, &want, NULL);
    v->cases++;
    int cls = classify(v, &got, &want);
    if (cls < 0)
        return;
    v->mismatches++;
    v->by_class[cls]++;
    if (v->mismatches <= v->show) {
        char buf[VEC_LINE_MAX];
        printf("%s:%" PRIu64 ": %s: expected %s: %s\n", name, lineno, line, result_fields(v, &want, buf),
               class_names[cls]);
    }
}

/* The longest line read, far beyond any valid one: a file without
 * newlines must not take memory in proportion to its size. */
#define LINE_CAP 4096

static void check_stream(verifier *v, FILE *in, const char *name)
{
    char line[LINE_CAP + 1];
    uint64_t lineno = 0;
    for (int c = 0; c != EOF;) {
        size_t n = 0;
        while ((c = getc_unlocked(in)) != EOF && c != '\n') {
            if (n == LINE_CAP)
                cli_die(CLI_EXIT_USAGE, "%s:%" PRIu64 ": a line over %d bytes; expected hexadecimal fields",
                        name, lineno + 1, LINE_CAP);
            line[n++] = (char)c;
        }
        if (c == EOF && (n == 0 || ferror(in)))
            break;
        lineno++;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        line[n] = '\0';
        size_t len = strlen(line);
        if (len < n)
            cli_die(CLI_EXIT_USAGE, "%s:%" PRIu64 ": a NUL byte at column %zu; expected hexadecimal fields",
                    name, lineno, len + 1);
        check_line(v, name, lineno, line);
    }
    if (ferror(in))
        cli_die(CLI_EXIT_USAGE, "%s: reading failed: %s", name, strerror(errno));
}

static void own_option(void *state, int key, char *const *v)
{
    verifier *o = state;
    if (key == OPT_NO_FLAGS)
        o->with_flags = false;
    else if (key == OPT_NAN_CLASS)
        o->nan_class = true;
    else if (key == OPT_SHOW)
        o->show = (uint64_t)cli_parse_int("--show", v[0], 0, INT64_MAX);
}

static const cli_tool tool = {
    .name = "fpverify",
    .synopsis = synopsis,
    .intro = "Reads lines OPERAND... RESULT FLAGS (fpvectors(1)) from each FILE, or standard "
             "input, and compares each result and its flags with libfpkit's.",
    .opts = options,
    .own = own_option,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    cli_common c;
    cli_common_init(&c);
    verifier v = {.with_flags = true, .show = 10};
    cli_parse(&tool, &c, argc, argv, &v);
    if (argc == 1) {
        cli_common_free(&c);
        return cli_usage_error(&tool);
    }
    vec_spec_from(&v.s, &c);
    const char **files = (const char **)c.operands;
    int nfiles = c.noperands;
    if (nfiles == 0)
        files[nfiles++] = "-";
    for (int i = 0; i < nfiles; i++) {
        if (cli_is_stdout(files[i])) {
            check_stream(&v, stdin, "stdin");
            continue;
        }
        FILE *in = fopen(files[i], "r");
        if (!in)
            cli_die(CLI_EXIT_USAGE, "%s: %s", files[i], strerror(errno));
        check_stream(&v, in, files[i]);
        fclose(in);
    }
    cli_common_free(&c);
    if (v.cases == 0)
        cli_die(CLI_EXIT_USAGE, "no cases: the input is empty");

    printf("fpverify: %s: %" PRIu64 " cases, %" PRIu64 " mismatches", vec_describe(&v.s), v.cases, v.mismatches);
    if (v.mismatches > v.show && v.show > 0)
        printf(" (the first %" PRIu64 " shown)", v.show);
    putchar('\n');
    for (int i = 0; i < CLS_COUNT; i++) {
        int k = report_order[i];
        printf("  %-10s %10" PRIu64 "  %s\n", class_names[k], v.by_class[k], class_text[k]);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(CLI_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno));
    return v.mismatches ? CLI_EXIT_FINDINGS : 0;
}
