/* fpvectors' lines against the MPFR reference (tests/ref/): it runs the
 * tool, reads every line it writes, checks the layout (upper-case hex
 * fields of TestFloat's widths, tf32 in its 32-bit container) and
 * recomputes each result and its flags with MPFR.  For fp16 and fp32: every
 * operation at level 1 under rne, then samples under the other modes and
 * options.  The lines must also cover what a TestFloat-style generator
 * promises: ties and values one ulp off them, subnormal results, overflow,
 * NaNs; each configuration names what it must contain at least NEED_MIN
 * times.  FPK_EXHAUSTIVE=1 runs level 2 and larger samples.
 * FPVECTORS names the binary (default ./bin/fpvectors). */
#include <stdint.h> /* before mpfr.h (through ref.h): mpfr_set_sj */

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SUITE "check_vectors_ref"
#define NEED_MIN 5

/* What a configuration's lines must contain. */
enum {
    HAS_TIE = 1,      /* an exact value halfway between two neighbours */
    HAS_NEAR = 2,     /* ... at most 1/8 ulp from halfway, not on it */
    HAS_SUB = 4,      /* a subnormal result */
    HAS_ZERO = 8,     /* a nonzero value rounded to zero (underflow) */
    HAS_OVF = 16,     /* overflow; to_int: a finite operand beyond int64 */
    HAS_NAN = 32,     /* a NaN result, or a NaN operand of a comparison */
    HAS_TRUE = 64,    /* a comparison that holds */
    HAS_INEXACT = 128,
};
static const char *const has_names[] = {"ties", "near ties", "subnormal results", "results rounded to zero",
                                        "overflows", "NaNs", "true comparisons", "inexact results"};
#define HAS_COUNT 8

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FMA, OP_SQRT, OP_CONVERT, OP_CMP, OP_TO_INT, OP_FROM_INT };

/* The operations: name, operands, and the relation of a comparison. */
static const struct op {
    const char *name;
    int kind, arity;
    int rel; /* 0 eq, 1 lt, 2 le */
    bool signaling;
} ops[] = {
    {"add", OP_ADD, 2, 0, false},      {"sub", OP_SUB, 2, 0, false},
    {"mul", OP_MUL, 2, 0, false},      {"div", OP_DIV, 2, 0, false},
    {"fma", OP_FMA, 3, 0, false},      {"sqrt", OP_SQRT, 1, 0, false},
    {"convert", OP_CONVERT, 1, 0, false}, {"eq", OP_CMP, 2, 0, false},
    {"lt", OP_CMP, 2, 1, false},       {"le", OP_CMP, 2, 2, false},
    {"eq_signaling", OP_CMP, 2, 0, true}, {"lt_signaling", OP_CMP, 2, 1, true},
    {"le_signaling", OP_CMP, 2, 2, true}, {"to_int", OP_TO_INT, 1, 0, false},
    {"from_int", OP_FROM_INT, 1, 0, false},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

static tu_report rep;
static const char *fpvectors;
static uint64_t seed;

/* TestFloat's flag bits: inexact 1, underflow 2, overflow 4, infinite 8,
 * invalid 16. */
static unsigned flags_from_testfloat(unsigned tf)
{
    static const unsigned map[5] = {FPK_INEXACT, FPK_UNDERFLOW, FPK_OVERFLOW, FPK_DIVBYZERO, FPK_INVALID};
    unsigned r = 0;
    for (int i = 0; i < 5; i++)
        if (tf >> i & 1)
            r |= map[i];
    return r;
}

/* Hex digits of a field holding an encoding of F: tf32 is written in its
 * 32-bit container. */
static int digits(const fpk_format *f)
{
    return f == &fpk_tf32 ? 8 : (f->width + 3) / 4;
}

/* Reads a field of exactly N upper-case hex digits at *P; false if it is
 * not one. */
static bool field(const char **p, int n, uint64_t *v)
{
    const char *s = *p;
    *v = 0;
    for (int i = 0; i < n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return false;
        *v = *v << 4 | (uint64_t)d;
    }
    *p = s + n;
    return true;
}

static bool read_float(const char **p, const fpk_format *f, uint64_t *v)
{
    if (!field(p, digits(f), v))
        return false;
    if (f == &fpk_tf32) {
        if (*v & 0x1fff)
            return false;
        *v >>= 13;
    }
    return true;
}

typedef struct config {
    const struct op *op;
    const fpk_format *f, *to;
    fpk_round mode;
    const tu_variant *v;
    const char *amount; /* "--level 1", "-n 2000" */
    unsigned need;
} config;

/* The reference result of a comparison (IEEE 754-2019 §5.11). */
static ref_result ref_cmp(const config *cf, const uint64_t *in, const fpk_ctx *c)
{
    mpfr_t x, y;
    mpfr_inits2(64, x, y, (mpfr_ptr)0);
    ref_result w = {0, 0};
    bool xn = !ref_decode_ctx(x, cf->f, in[0], c), yn = !ref_decode_ctx(y, cf->f, in[1], c);
    if (xn || yn) {
        if (cf->op->signaling || ref_is_snan(cf->f, in[0]) || ref_is_snan(cf->f, in[1]))
            w.flags = FPK_INVALID;
    } else {
        int rel = cf->op->rel;
        w.bits = rel == 0 ? mpfr_equal_p(x, y) : rel == 1 ? mpfr_less_p(x, y) : mpfr_lessequal_p(x, y);
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
    return w;
}

static ref_result reference(const config *cf, const uint64_t *in, const fpk_ctx *c)
{
    const fpk_format *f = cf->f;
    switch (cf->op->kind) {
    case OP_ADD: return ref_add(f, in[0], in[1], c);
    case OP_SUB: return ref_sub(f, in[0], in[1], c);
    case OP_MUL: return ref_mul(f, in[0], in[1], c);
    case OP_DIV: return ref_div(f, in[0], in[1], c);
    case OP_FMA: return ref_fma(f, in[0], in[1], in[2], c);
    case OP_SQRT: return ref_sqrt(f, in[0], c);
    case OP_CONVERT: return ref_convert(cf->to, f, in[0], c);
    case OP_CMP: return ref_cmp(cf, in, c);
    case OP_TO_INT: {
        int64_t z;
        ref_result r = ref_to_int64(f, in[0], c, &z);
        r.bits = (uint64_t)z;
        return r;
    }
    default: return ref_from_int64(f, (int64_t)in[0], c);
    }
}

/* The exact value of the operation into X (precision set by the caller,
 * enough for any sum of two products of the format); false when an operand
 * is a NaN or the operation does not give one exactly. */
static bool exact(mpfr_ptr x, const config *cf, const uint64_t *in, const fpk_ctx *c)
{
    mpfr_t a, b, d;
    mpfr_inits2(mpfr_get_prec(x), a, b, d, (mpfr_ptr)0);
    bool ok = true;
    int kind = cf->op->kind;
    if (kind == OP_FROM_INT)
        mpfr_set_sj(x, (intmax_t)(int64_t)in[0], MPFR_RNDN);
    else
        for (int i = 0; i < cf->op->arity && ok; i++)
            ok = ref_decode_ctx(i == 0 ? a : i == 1 ? b : d, cf->f, in[i], c);
    if (ok) {
        switch (kind) {
        case OP_ADD: mpfr_add(x, a, b, MPFR_RNDN); break;
        case OP_SUB: mpfr_sub(x, a, b, MPFR_RNDN); break;
        case OP_MUL: mpfr_mul(x, a, b, MPFR_RNDN); break;
        case OP_FMA: mpfr_mul(x, a, b, MPFR_RNDN), mpfr_add(x, x, d, MPFR_RNDN); break;
        case OP_CONVERT:
        case OP_TO_INT: mpfr_set(x, a, MPFR_RNDN); break;
        case OP_FROM_INT: break;
        default: ok = false;
        }
    }
    mpfr_clears(a, b, d, (mpfr_ptr)0);
    return ok && mpfr_regular_p(x);
}

/* What line's case covers, from the reference's result and the exact
 * value. */
static unsigned covers(const config *cf, const uint64_t *in, ref_result w, const fpk_ctx *c, mpfr_ptr x)
{
    const fpk_format *t = cf->to ? cf->to : cf->f;
    int kind = cf->op->kind;
    unsigned has = w.flags & FPK_INEXACT ? HAS_INEXACT : 0;
    if (kind == OP_CMP) {
        bool nan = fpk_classify(cf->f, in[0]) >= FPK_CLASS_QNAN || fpk_classify(cf->f, in[1]) >= FPK_CLASS_QNAN;
        return (w.bits ? HAS_TRUE : 0) | (nan ? HAS_NAN : 0);
    }
    if (kind == OP_TO_INT) {
        fpk_class k = fpk_classify(cf->f, in[0]);
        if (k >= FPK_CLASS_QNAN)
            has |= HAS_NAN;
        else if (w.flags & FPK_INVALID)
            has |= HAS_OVF;
    } else {
        fpk_class k = fpk_classify(t, w.bits);
        has |= k >= FPK_CLASS_QNAN ? HAS_NAN : 0;
        has |= k == FPK_CLASS_SUBNORMAL ? HAS_SUB : 0;
        has |= k == FPK_CLASS_ZERO && (w.flags & FPK_UNDERFLOW) ? HAS_ZERO : 0;
        has |= w.flags & FPK_OVERFLOW ? HAS_OVF : 0;
    }
    if (!exact(x, cf, in, c))
        return has;
    if (kind == OP_TO_INT) {
        mpfr_frac(x, x, MPFR_RNDN);
        mpfr_abs(x, x, MPFR_RNDN);
        return has | (mpfr_cmp_d(x, 0.5) == 0 ? HAS_TIE : 0);
    }
    ref_result lo, hi;
    double frac;
    if (ref_neighbours(t, x, c, &lo, &hi, &frac)) {
        has |= frac == 0.5 ? HAS_TIE : 0;
        has |= frac != 0.5 && fabs(frac - 0.5) <= 1.0 / 8 ? HAS_NEAR : 0;
    }
    return has;
}

/* Runs fpvectors for CF and checks every line; a failure to run it, a line
 * out of the layout or too little of what CF needs counts as a mismatch. */
static void run(const config *cf)
{
    char cmd[512], what[160];
    fpk_ctx c = tu_ctx(cf->mode, cf->v);
    snprintf(cmd, sizeof cmd, "%s --op %s --format %s%s%s --round %s%s%s%s%s %s --seed %" PRIu64, fpvectors,
             cf->op->name, cf->f->name, cf->to ? " --to " : "", cf->to ? cf->to->name : "", tu_mode_name(cf->mode),
             c.ftz ? " --ftz" : "", c.daz ? " --daz" : "", c.saturate ? " --saturate" : "",
             c.tiny_before ? " --tininess before" : "", cf->amount, seed);
    snprintf(what, sizeof what, "%s %s%s%s %s %s %s", cf->op->name, cf->f->name, cf->to ? "->" : "",
             cf->to ? cf->to->name : "", tu_mode_name(cf->mode), cf->v->name, cf->amount);
    FILE *p = popen(cmd, "r");
    if (!p) {
        tu_fail(&rep, "%s: cannot run %s", what, cmd);
        return;
    }
    const fpk_format *t = cf->to ? cf->to : cf->f;
    int kind = cf->op->kind, arity = cf->op->arity;
    uint64_t count[HAS_COUNT] = {0}, lines = 0;
    mpfr_t x;
    /* a sum of two products of F, exactly: twice F's exponent span */
    mpfr_init2(x, 4 * (cf->f->emax - cf->f->emin + 2 * cf->f->man_bits + 8) + 128);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, p) >= 0) {
        lines++;
        uint64_t in[3] = {0, 0, 0}, z = 0, tf = 0;
        const char *s = line;
        bool ok = true;
        for (int i = 0; i < arity && ok; i++) {
            ok = kind == OP_FROM_INT ? field(&s, 16, &in[i]) : read_float(&s, cf->f, &in[i]);
            ok = ok && *s++ == ' ';
        }
        if (ok)
            ok = kind == OP_CMP ? field(&s, 1, &z) : kind == OP_TO_INT ? field(&s, 16, &z) : read_float(&s, t, &z);
        ok = ok && *s++ == ' ' && field(&s, 2, &tf) && tf < 0x20 && strcmp(s, "\n") == 0;
        if (!ok) {
            tu_fail(&rep, "%s: line %" PRIu64 " is not in the layout: %s", what, lines, line);
            continue;
        }
        ref_result w = reference(cf, in, &c);
        tu_check(&rep, kind == OP_CMP || kind == OP_TO_INT ? &fpk_fp64 : t, w, z, flags_from_testfloat((unsigned)tf),
                 "%s line %" PRIu64 ": %s", what, lines, line);
        unsigned has = covers(cf, in, w, &c, x);
        for (int i = 0; i < HAS_COUNT; i++)
            count[i] += has >> i & 1;
    }
    free(line);
    mpfr_clear(x);
    int status = pclose(p);
    if (status != 0 || lines == 0)
        tu_fail(&rep, "%s: %s exited with status %d after %" PRIu64 " lines", what, cmd, status, lines);
    for (int i = 0; i < HAS_COUNT; i++)
        if ((cf->need >> i & 1) && count[i] < NEED_MIN)
            tu_fail(&rep, "%s: %" PRIu64 " %s, expected at least %d", what, count[i], has_names[i], NEED_MIN);
    tu_report_line(&rep, "%s: %" PRIu64 " ties, %" PRIu64 " near ties, %" PRIu64 " subnormal, %" PRIu64
                         " overflows, %" PRIu64 " NaNs", what, count[0], count[1], count[2], count[4], count[5]);
}

/* What the level-1 lines of OP from F (to TO) must contain. */
static unsigned needs(const struct op *op, const fpk_format *f, const fpk_format *to)
{
    switch (op->kind) {
    case OP_ADD:
    case OP_SUB:
    case OP_FMA: return HAS_TIE | HAS_NEAR | HAS_SUB | HAS_OVF | HAS_NAN;
    case OP_MUL: return HAS_TIE | HAS_NEAR | HAS_SUB | HAS_ZERO | HAS_OVF | HAS_NAN;
    case OP_DIV: return HAS_SUB | HAS_ZERO | HAS_OVF | HAS_NAN;
    case OP_SQRT: return HAS_NAN | HAS_INEXACT;
    case OP_CMP: return HAS_TRUE | HAS_NAN;
    case OP_TO_INT: return HAS_TIE | HAS_OVF | HAS_NAN | HAS_INEXACT;
    case OP_FROM_INT: return HAS_TIE | HAS_INEXACT | (f->emax < 63 ? HAS_OVF : 0);
    default: {
        /* what TO can hold: a NaN, subnormals (and so zero from rounding) */
        unsigned n = fpk_classify(to, to->nan) >= FPK_CLASS_QNAN ? HAS_NAN : 0;
        if (to->man_bits < f->man_bits)
            n |= HAS_TIE | HAS_NEAR | HAS_INEXACT;
        if (to->emax < f->emax)
            n |= HAS_OVF;
        if (to->man_bits > 0 && to->emin - to->man_bits > f->emin - f->man_bits)
            n |= HAS_SUB | HAS_ZERO;
        return n;
    }
    }
}

static const tu_variant *variant(const char *name)
{
    for (int i = 0; i < TU_VARIANT_COUNT; i++)
        if (strcmp(tu_variants[i].name, name) == 0)
            return &tu_variants[i];
    return NULL;
}

/* Every operation at level 1 (2) under rne, needs checked (the signaling
 * comparisons sampled); then -n samples of the arithmetic under the other
 * modes and, under rne and rup, each option. */
static void check_format(const fpk_format *f)
{
    bool all = tu_exhaustive();
    const char *level = all ? "--level 2" : "--level 1", *sample = all ? "-n 50000" : "-n 1500";
    const tu_variant *plain = variant("plain");
    for (size_t i = 0; i < OP_COUNT; i++) {
        const struct op *op = &ops[i];
        if (op->kind != OP_CONVERT) {
            /* the signaling comparisons differ from the quiet ones in flags only */
            run(&(config){op, f, NULL, FPK_RNE, plain, op->signaling ? sample : level, all ? 0 : needs(op, f, NULL)});
            continue;
        }
        for (const fpk_format *const *t = fpk_formats; *t; t++)
            run(&(config){op, f, *t, FPK_RNE, plain, level, all ? 0 : needs(op, f, *t)});
    }
    for (int v = 0; v < TU_VARIANT_COUNT; v++)
        for (int m = 0; m < TU_MODE_COUNT; m++) {
            fpk_round mode = tu_modes[m];
            bool is_plain = &tu_variants[v] == plain;
            if ((is_plain && mode == FPK_RNE) || (!is_plain && mode != FPK_RNE && mode != FPK_RUP))
                continue;
            for (size_t i = 0; i < OP_COUNT; i++) {
                const struct op *op = &ops[i];
                if (op->kind == OP_CMP)
                    continue;
                if (op->kind != OP_CONVERT) {
                    run(&(config){op, f, NULL, mode, &tu_variants[v], sample, 0});
                    continue;
                }
                const fpk_format *targets[] = {&fpk_e4m3, &fpk_e5m2, f == &fpk_fp16 ? &fpk_bf16 : &fpk_fp16};
                for (int k = 0; k < 3; k++)
                    run(&(config){op, f, targets[k], mode, &tu_variants[v], sample, 0});
            }
        }
}

START_TEST(test_fp16)
{
    uint64_t before = rep.total_mismatches;
    check_format(&fpk_fp16);
    ck_assert_uint_eq(rep.total_mismatches, before);
}
END_TEST

START_TEST(test_fp32)
{
    uint64_t before = rep.total_mismatches;
    check_format(&fpk_fp32);
    ck_assert_uint_eq(rep.total_mismatches, before);
}
END_TEST

int main(void)
{
    fpvectors = getenv("FPVECTORS") ? getenv("FPVECTORS") : "./bin/fpvectors";
    seed = tu_seed(SUITE) & INT64_MAX; /* fpvectors takes 0 to 2^63-1 */
    tu_report_init(&rep, SUITE);
    Suite *s = suite_create("vectors_ref");
    TCase *tc = tcase_create("vectors_ref");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, test_fp16);
    tcase_add_test(tc, test_fp32);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 && tu_report_done(&rep) == 0 ? 0 : 1;
}
