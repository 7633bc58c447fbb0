/* fpk_add, fpk_sub, fpk_mul, fpk_div, fpk_fma and fpk_sqrt against the MPFR
 * reference, bits and flags, in every deterministic mode and option variant:
 * every operand pair of the formats of 8 bits or fewer (the built-in ones
 * and eXmY ones), every operand of the 16-bit ones for sqrt, TestFloat-style
 * samples beyond that and for odd eXmY formats; stochastic rounding against
 * the two neighbours of the exact result; and results from the literature
 * with expected bits written by hand.  FPK_EXHAUSTIVE=1 adds every fma
 * triple of the small formats and every fp16 and bf16 pair of add and mul
 * under RNE, and the option variants of every pair of the 8-bit formats of
 * the kinds added to IEEE and FN (FNUZ, E8M0), which otherwise take the
 * variants in turn over the pairs (every mode still sees every pair). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fpkit.h"
#include "ref.h"
#include "testutil.h"

#define SUITE "check_arith"

/* Samples per operation and mode. */
#define HALF_PAIRS 1000000 /* fp16, bf16: add, sub, mul, div */
#define HALF_FMA 100000
#define WIDE_CASES 100000 /* tf32, fp32, fp64: every operation */
#define SMALL_FMA 100000  /* 8-bit formats, when not exhaustive */
#define EXMY_CASES 5000   /* other eXmY formats: every operation */
#define SR_CASES 20000    /* per operation and format */

static uint64_t seed;

typedef enum op { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FMA, OP_SQRT, OP_COUNT } op;
#define BINARY_OPS 4 /* OP_ADD .. OP_DIV */
static const char *const op_names[OP_COUNT] = {"add", "sub", "mul", "div", "fma", "sqrt"};

static int arity(op o)
{
    return o == OP_SQRT ? 1 : o == OP_FMA ? 3 : 2;
}

static fpk_bits lib_op(op o, const fpk_format *f, fpk_bits a, fpk_bits b, fpk_bits d,
                       fpk_ctx *c)
{
    switch (o) {
    case OP_ADD: return fpk_add(f, a, b, c);
    case OP_SUB: return fpk_sub(f, a, b, c);
    case OP_MUL: return fpk_mul(f, a, b, c);
    case OP_DIV: return fpk_div(f, a, b, c);
    case OP_FMA: return fpk_fma(f, a, b, d, c);
    default: return fpk_sqrt(f, a, c);
    }
}

static ref_result ref_op(op o, const fpk_format *f, fpk_bits a, fpk_bits b, fpk_bits d,
                         const fpk_ctx *c)
{
    switch (o) {
    case OP_ADD: return ref_add(f, a, b, c);
    case OP_SUB: return ref_sub(f, a, b, c);
    case OP_MUL: return ref_mul(f, a, b, c);
    case OP_DIV: return ref_div(f, a, b, c);
    case OP_FMA: return ref_fma(f, a, b, d, c);
    default: return ref_sqrt(f, a, c);
    }
}

/* Operands as text for a mismatch line: "3c00 1000" (arity-many). */
typedef struct operands {
    char s[64];
} operands;

static operands operands_text(op o, const fpk_format *f, fpk_bits a, fpk_bits b, fpk_bits d)
{
    operands t;
    int w = tu_hex_digits(f);
    if (arity(o) == 1)
        snprintf(t.s, sizeof t.s, "%0*" PRIx64, w, a);
    else if (arity(o) == 2)
        snprintf(t.s, sizeof t.s, "%0*" PRIx64 " %0*" PRIx64, w, a, w, b);
    else
        snprintf(t.s, sizeof t.s, "%0*" PRIx64 " %0*" PRIx64 " %0*" PRIx64, w, a, w, b, w, d);
    return t;
}

/* One case: library against reference under MODE and variant V. */
static void check_case(tu_report *rep, op o, const fpk_format *f, fpk_bits a, fpk_bits b,
                       fpk_bits d, fpk_round mode, const tu_variant *v)
{
    fpk_ctx c = tu_ctx(mode, v);
    ref_result want = ref_op(o, f, a, b, d, &c);
    fpk_bits got = lib_op(o, f, a, b, d, &c);
    /* The operands are formatted only for a mismatch: this runs millions
     * of times. */
    if (want.bits != got || want.flags != c.flags)
        tu_check(rep, f, want, got, c.flags, "%s %s %s %s %s", f->name, op_names[o],
                 tu_mode_name(mode), v->name, operands_text(o, f, a, b, d).s);
    else
        tu_check(rep, f, want, got, c.flags, "-");
}

/* A seed for one test of one format, independent of the order tests run. */
static uint64_t case_seed(const fpk_format *f, unsigned salt)
{
    uint64_t h = seed ^ ((uint64_t)salt << 32);
    for (const char *p = f->name; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
    return h;
}

/* The formats of each tcase, from the descriptor table by width, plus
 * eXmY formats named by lookup among the small ones. */
static const char *const small_extra[] = {"e3m4", "e2m5", "e4m0", "e3m1fn", "e2m2fnuz",
                                          "e2m0fnuz", "e1m2fnuz"};
#define SMALL_EXTRA (sizeof small_extra / sizeof small_extra[0])

static int count_formats(int min_width, int max_width)
{
    int n = 0;
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        n += (*f)->width >= min_width && (*f)->width <= max_width;
    return n;
}

static const fpk_format *nth_format(int min_width, int max_width, int i)
{
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        if ((*f)->width >= min_width && (*f)->width <= max_width && i-- == 0)
            return *f;
    return NULL;
}

static const fpk_format *small_format(int i)
{
    int builtin = count_formats(1, 8);
    const fpk_format *f =
        i < builtin ? nth_format(1, 8, i) : fpk_format_lookup(small_extra[i - builtin]);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_le(f->width, 8);
    return f;
}

/* docs/DESIGN.md "Corner cases" and the literature, bits written out by hand. */
static const struct fact {
    const fpk_format *f;
    op o;
    fpk_round mode;
    bool saturate;
    fpk_bits a, b, d, want;
    unsigned flags;
    const char *why;
} facts[] = {
    {&fpk_fp16, OP_ADD, FPK_RNE, false, 0x3c00, 0x1000, 0, 0x3c00, FPK_INEXACT,
     "fp16 1 + 2^-11 = 1 (a tie, to even)"},
    {&fpk_fp16, OP_ADD, FPK_RNE, false, 0x3000, 0x0400, 0, 0x3000, FPK_INEXACT,
     "fp16 2^-3 + 2^-14 = 2^-3"},
    {&fpk_fp16, OP_ADD, FPK_RNE, false, 0x7bff, 0x4c00, 0, 0x7c00,
     FPK_OVERFLOW | FPK_INEXACT, "fp16 65504 + 16 = inf under RNE"},
    {&fpk_fp16, OP_ADD, FPK_RTZ, false, 0x7bff, 0x4c00, 0, 0x7bff, FPK_INEXACT,
     "fp16 65504 + 16 = 65504 under RTZ (65520 truncates to 65504: no overflow)"},
    {&fpk_fp16, OP_ADD, FPK_RNE, true, 0x7bff, 0x4c00, 0, 0x7bff,
     FPK_OVERFLOW | FPK_INEXACT, "fp16 65504 + 16 saturates to 65504"},
    {&fpk_bf16, OP_ADD, FPK_RNE, false, 0x3f80, 0x3b80, 0, 0x3f80, FPK_INEXACT,
     "bf16 1 + 2^-8 = 1"},
    {&fpk_e4m3, OP_ADD, FPK_RNE, false, 0x7e, 0x58, 0, 0x7e, FPK_INEXACT,
     "e4m3 448 + 16 = 448 (464 ties to even)"},
    {&fpk_e4m3, OP_ADD, FPK_RNE, false, 0x7e, 0x60, 0, 0x7f, FPK_OVERFLOW | FPK_INEXACT,
     "e4m3 448 + 32 = 480 overflows to NaN"},
    {&fpk_e4m3, OP_ADD, FPK_RNE, true, 0x7e, 0x60, 0, 0x7e, FPK_OVERFLOW | FPK_INEXACT,
     "e4m3 448 + 32 saturates to 448"},
    {&fpk_e4m3, OP_ADD, FPK_ROD, false, 0x7e, 0x58, 0, 0x7e, FPK_OVERFLOW | FPK_INEXACT,
     "e4m3 448 + 16 under ROD: 464 in (448, 480) gives 448 with overflow"},
    {&fpk_e4m3, OP_ADD, FPK_RUP, false, 0x7e, 0x58, 0, 0x7f, FPK_OVERFLOW | FPK_INEXACT,
     "e4m3 448 + 16 under RUP overflows to NaN"},
    {&fpk_e4m3, OP_DIV, FPK_RNE, false, 0x38, 0x00, 0, 0x7f, FPK_DIVBYZERO,
     "e4m3 1/0 is NaN with divide-by-zero"},
    {&fpk_e4m3, OP_DIV, FPK_RNE, true, 0xb8, 0x00, 0, 0xfe, FPK_DIVBYZERO,
     "e4m3 -1/0 saturates to -448"},
    {&fpk_fp16, OP_DIV, FPK_RTZ, false, 0xbc00, 0x0000, 0, 0xfc00, FPK_DIVBYZERO,
     "fp16 -1/0 = -inf under RTZ too"},
    {&fpk_fp16, OP_MUL, FPK_RNE, false, 0x0400, 0x1000, 0, 0x0000,
     FPK_UNDERFLOW | FPK_INEXACT, "fp16 2^-14 * 2^-11 = 2^-25 ties to 0"},
    {&fpk_fp16, OP_MUL, FPK_RNE, false, 0x0000, 0xfc00, 0, 0x7e00, FPK_INVALID,
     "fp16 0 * -inf is invalid"},
    {&fpk_fp16, OP_ADD, FPK_RNE, false, 0x3c00, 0xbc00, 0, 0x0000, 0, "fp16 1 + -1 = +0"},
    {&fpk_fp16, OP_ADD, FPK_RDN, false, 0x3c00, 0xbc00, 0, 0x8000, 0,
     "fp16 1 + -1 = -0 under RDN"},
    {&fpk_fp16, OP_SUB, FPK_RNE, false, 0x8000, 0x0000, 0, 0x8000, 0, "fp16 -0 - +0 = -0"},
    {&fpk_fp16, OP_SUB, FPK_RNE, false, 0x7c00, 0x7c00, 0, 0x7e00, FPK_INVALID,
     "fp16 inf - inf is invalid"},
    {&fpk_fp16, OP_ADD, FPK_RNE, false, 0x7d00, 0x3c00, 0, 0x7e00, FPK_INVALID,
     "fp16 sNaN + 1 is invalid, canonical NaN"},
    {&fpk_fp16, OP_ADD, FPK_RNE, false, 0xff01, 0x3c00, 0, 0x7e00, 0,
     "fp16 -qNaN + 1 is the canonical NaN, no flag"},
    {&fpk_fp16, OP_FMA, FPK_RNE, false, 0x0000, 0x7c00, 0x7e00, 0x7e00, FPK_INVALID,
     "fp16 fma(0, inf, qNaN) is invalid"},
    {&fpk_fp16, OP_FMA, FPK_RNE, false, 0x3c01, 0x3bff, 0xbc00, 0x0ffe, 0,
     "fp16 fma(1+2^-10, 1-2^-11, -1) = 2^-11-2^-21 exactly (unfused: 0)"},
    {&fpk_fp16, OP_SQRT, FPK_RNE, false, 0x8000, 0, 0, 0x8000, 0, "fp16 sqrt(-0) = -0"},
    {&fpk_fp16, OP_SQRT, FPK_RNE, false, 0xbc00, 0, 0, 0x7e00, FPK_INVALID,
     "fp16 sqrt(-1) is invalid"},
    {&fpk_fp16, OP_SQRT, FPK_RNE, false, 0x4400, 0, 0, 0x4000, 0, "fp16 sqrt(4) = 2"},
    {&fpk_fp16, OP_SQRT, FPK_RNE, false, 0x4000, 0, 0, 0x3da8, FPK_INEXACT,
     "fp16 sqrt(2) = 1.4140625"},
    {&fpk_fp32, OP_ADD, FPK_RNE, false, 0x3f800000, 0x33800000, 0, 0x3f800000, FPK_INEXACT,
     "fp32 1 + 2^-24 = 1"},
    {&fpk_fp64, OP_MUL, FPK_RNE, false, 0x3ff0000000000001, 0x3ff0000000000001, 0,
     0x3ff0000000000002, FPK_INEXACT, "fp64 (1+2^-52)^2 = 1+2^-51"},
    {&fpk_e4m3fnuz, OP_ADD, FPK_RNE, false, 0x7f, 0x58, 0, 0x80, FPK_OVERFLOW | FPK_INEXACT,
     "e4m3fnuz 240 + 8 = 248 ties to 256: overflow, NaN"},
    {&fpk_e4m3fnuz, OP_ADD, FPK_RNE, true, 0x7f, 0x58, 0, 0x7f, FPK_OVERFLOW | FPK_INEXACT,
     "e4m3fnuz 240 + 8 saturates to 240"},
    {&fpk_e4m3fnuz, OP_ADD, FPK_RDN, false, 0x40, 0xc0, 0, 0x00, 0,
     "e4m3fnuz 1 + -1 = +0 under RDN too: no -0"},
    {&fpk_e4m3fnuz, OP_MUL, FPK_RNE, false, 0x01, 0x81, 0, 0x00, FPK_UNDERFLOW | FPK_INEXACT,
     "e4m3fnuz 2^-10 * -2^-10 underflows to +0"},
    {&fpk_e4m3fnuz, OP_DIV, FPK_RNE, false, 0x40, 0x00, 0, 0x80, FPK_DIVBYZERO,
     "e4m3fnuz 1/0 is the NaN with divide-by-zero"},
    {&fpk_e4m3fnuz, OP_DIV, FPK_RNE, true, 0xc0, 0x00, 0, 0xff, FPK_DIVBYZERO,
     "e4m3fnuz -1/0 saturates to -240"},
    {&fpk_e4m3fnuz, OP_ADD, FPK_RNE, false, 0x80, 0x40, 0, 0x80, 0,
     "e4m3fnuz NaN + 1 is the NaN, quiet"},
    {&fpk_e5m2fnuz, OP_SUB, FPK_RNE, false, 0x00, 0x00, 0, 0x00, 0, "e5m2fnuz 0 - 0 = +0"},
    {&fpk_e2m1, OP_ADD, FPK_RNE, false, 0x7, 0x2, 0, 0x7, FPK_OVERFLOW | FPK_INEXACT,
     "e2m1 6 + 1 = 7 ties to 8: saturates to 6 with overflow"},
    {&fpk_e2m1, OP_ADD, FPK_RTZ, false, 0x7, 0x2, 0, 0x7, FPK_INEXACT,
     "e2m1 6 + 1 = 6 under RTZ"},
    {&fpk_e2m1, OP_ADD, FPK_RUP, false, 0xf, 0xc, 0, 0xf, FPK_OVERFLOW | FPK_INEXACT,
     "e2m1 -6 + -2 = -6 with overflow under RUP too"},
    {&fpk_e2m1, OP_MUL, FPK_RNE, false, 0x3, 0x4, 0, 0x5, 0, "e2m1 1.5 * 2 = 3"},
    {&fpk_e2m1, OP_MUL, FPK_RNE, false, 0x1, 0x1, 0, 0x0, FPK_UNDERFLOW | FPK_INEXACT,
     "e2m1 0.5 * 0.5 = 0.25 ties to 0"},
    {&fpk_e2m1, OP_DIV, FPK_RNE, false, 0x2, 0x0, 0, 0x7, FPK_DIVBYZERO,
     "e2m1 1/0 = 6 with divide-by-zero"},
    {&fpk_e2m1, OP_DIV, FPK_RNE, false, 0xa, 0x0, 0, 0xf, FPK_DIVBYZERO,
     "e2m1 -1/0 = -6 with divide-by-zero"},
    {&fpk_e2m1, OP_DIV, FPK_RNE, false, 0x0, 0x8, 0, 0x8, FPK_INVALID,
     "e2m1 0/-0 is invalid: the NaN stand-in, -0"},
    {&fpk_e2m1, OP_SQRT, FPK_RNE, false, 0xa, 0, 0, 0x8, FPK_INVALID,
     "e2m1 sqrt(-1) is invalid"},
    {&fpk_e2m1, OP_SQRT, FPK_RNE, false, 0x8, 0, 0, 0x8, 0, "e2m1 sqrt(-0) = -0"},
    {&fpk_e3m2, OP_ADD, FPK_RNE, false, 0x1f, 0x14, 0, 0x1f, FPK_OVERFLOW | FPK_INEXACT,
     "e3m2 28 + 4 saturates to 28"},
    {&fpk_e2m3, OP_MUL, FPK_RNE, false, 0x1f, 0x0c, 0, 0x1f, FPK_OVERFLOW | FPK_INEXACT,
     "e2m3 7.5 * 1.5 saturates to 7.5"},
    {&fpk_e8m0, OP_ADD, FPK_RNE, false, 0x7f, 0x7f, 0, 0x80, 0, "e8m0 1 + 1 = 2"},
    {&fpk_e8m0, OP_ADD, FPK_RNE, false, 0x7f, 0x80, 0, 0x81, FPK_INEXACT,
     "e8m0 1 + 2 = 3 ties up to 4"},
    {&fpk_e8m0, OP_SUB, FPK_RNE, false, 0x7f, 0x7f, 0, 0xff, FPK_INVALID,
     "e8m0 1 - 1: no zero, the NaN"},
    {&fpk_e8m0, OP_SUB, FPK_RNE, false, 0x7f, 0x80, 0, 0xff, FPK_INVALID,
     "e8m0 1 - 2: no negative numbers, the NaN"},
    {&fpk_e8m0, OP_SUB, FPK_RNE, false, 0x80, 0x7f, 0, 0x7f, 0, "e8m0 2 - 1 = 1"},
    {&fpk_e8m0, OP_MUL, FPK_RNE, false, 0x00, 0x7e, 0, 0x00, FPK_UNDERFLOW | FPK_INEXACT,
     "e8m0 2^-127 * 0.5 = 2^-128 gives 2^-127 with underflow"},
    {&fpk_e8m0, OP_MUL, FPK_RNE, false, 0xfe, 0x80, 0, 0xff, FPK_OVERFLOW | FPK_INEXACT,
     "e8m0 2^127 * 2 overflows to the NaN"},
    {&fpk_e8m0, OP_MUL, FPK_RNE, true, 0xfe, 0x80, 0, 0xfe, FPK_OVERFLOW | FPK_INEXACT,
     "e8m0 2^127 * 2 saturates to 2^127"},
    {&fpk_e8m0, OP_DIV, FPK_RNE, false, 0x7f, 0x80, 0, 0x7e, 0, "e8m0 1 / 2 = 0.5"},
    {&fpk_e8m0, OP_SQRT, FPK_RNE, false, 0x80, 0, 0, 0x7f, FPK_INEXACT,
     "e8m0 sqrt(2) = 1.41... rounds to 1"},
    {&fpk_e8m0, OP_FMA, FPK_RNE, false, 0x80, 0x80, 0x7f, 0x81, FPK_INEXACT,
     "e8m0 fma(2, 2, 1) = 5 rounds to 4"},
};
#define FACTS (sizeof facts / sizeof facts[0])

START_TEST(literature_facts)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (size_t i = 0; i < FACTS; i++) {
        const struct fact *t = &facts[i];
        fpk_ctx c = fpk_ctx_default();
        c.round = t->mode;
        c.saturate = t->saturate;
        fpk_bits got = lib_op(t->o, t->f, t->a, t->b, t->d, &c);
        ref_result want = {t->want, t->flags};
        tu_check(&rep, t->f, want, got, c.flags, "%s", t->why);
        /* The reference must agree with the hand-written bits too. */
        ref_result r = ref_op(t->o, t->f, t->a, t->b, t->d, &c);
        tu_check(&rep, t->f, want, r.bits, r.flags, "reference: %s", t->why);
    }
    tu_report_line(&rep, "hand-written results (library and reference)");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Every pair of F for add or mul under RNE.  RNE treats both signs alike
 * and both operations commute, so MPFR is asked once per class of pairs
 * that these exact identities relate, and the library's results for the
 * rest of the class must follow: the same bits and flags with the operands
 * swapped; negated bits and the same flags with both operands negated (add)
 * or either one (mul), except that a NaN stays the canonical NaN, and a
 * zero sum, whose sign follows other rules, is asked of MPFR. */
static void pairs_by_symmetry(tu_report *rep, op o, const fpk_format *f)
{
    const fpk_bits s = f->sign_mask;
    const tu_variant *plain = &tu_variants[0];
    const int w = f->width;
    const fpk_bits n = (fpk_bits)1 << w;
    uint64_t asked = 0;
    for (fpk_bits a = 0; a < n; a++) {
        for (fpk_bits b = 0; b < n; b++) {
            /* The class of (a, b), and whether (a, b) is its least member. */
            fpk_bits member[8][2] = {{a, b}, {b, a}, {a ^ s, b ^ s}, {b ^ s, a ^ s},
                                     {a ^ s, b}, {b, a ^ s}, {a, b ^ s}, {b ^ s, a}};
            /* FNUZ: the sign bit of a zero makes the NaN, so only the swap
             * is a symmetry. */
            int members = f->special == FPK_SPECIAL_FNUZ ? 2 : o == OP_MUL ? 8 : 4;
            uint64_t key = a << w | b;
            bool least = true;
            for (int k = 1; k < members && least; k++)
                least = (member[k][0] << w | member[k][1]) >= key;
            if (!least)
                continue;

            fpk_ctx c = tu_ctx(FPK_RNE, plain);
            ref_result want = ref_op(o, f, a, b, 0, &c);
            asked++;
            for (int k = 0; k < members; k++) {
                fpk_bits x = member[k][0], y = member[k][1];
                bool seen = false;
                for (int j = 0; j < k && !seen; j++)
                    seen = member[j][0] == x && member[j][1] == y;
                if (seen)
                    continue;
                bool negated = o == OP_MUL ? (k >= 4) : (k >= 2);
                ref_result expect = want;
                if (negated && !fpk_is_nan(f, want.bits)) {
                    if (o == OP_ADD && (want.bits & ~s) == 0) {
                        expect = ref_op(o, f, x, y, 0, &c);
                        asked++;
                    } else {
                        expect.bits ^= s;
                    }
                }
                fpk_ctx cl = tu_ctx(FPK_RNE, plain);
                fpk_bits got = lib_op(o, f, x, y, 0, &cl);
                if (expect.bits != got || expect.flags != cl.flags)
                    tu_check(rep, f, expect, got, cl.flags, "%s %s rne plain %s (MPFR for %s)",
                             f->name, op_names[o], operands_text(o, f, x, y, 0).s,
                             operands_text(o, f, a, b, 0).s);
                else
                    tu_check(rep, f, expect, got, cl.flags, "-");
            }
        }
    }
    tu_report_line(rep, "%s %s rne: every pair (%" PRIu64 " asked of MPFR, the rest by "
                   "symmetry)", f->name, op_names[o], asked);
}

/* Every pair of a small format for add, sub, mul, div and every operand
 * for sqrt, in every mode and variant. */
START_TEST(small_exhaustive)
{
    const fpk_format *f = small_format(_i);
    uint64_t n = UINT64_C(1) << f->width;
    tu_report rep;
    tu_report_init(&rep, SUITE);
    bool in_turn = !tu_exhaustive() && f->width == 8 && f->special != FPK_SPECIAL_IEEE &&
                   f->special != FPK_SPECIAL_FN;
    for (op o = 0; o < BINARY_OPS; o++) {
        for (int mi = 0; mi < TU_MODE_COUNT; mi++)
            for (int vi = 0; vi < (in_turn ? 1 : TU_VARIANT_COUNT); vi++)
                for (fpk_bits a = 0; a < n; a++)
                    for (fpk_bits b = 0; b < n; b++) {
                        int v = in_turn ? (int)((a + b) % TU_VARIANT_COUNT) : vi;
                        check_case(&rep, o, f, a, b, 0, tu_modes[mi], &tu_variants[v]);
                    }
        tu_report_line(&rep, "%s %s: every pair, every mode, %s", f->name, op_names[o],
                       in_turn ? "the variants in turn" : "every variant");
    }
    for (int mi = 0; mi < TU_MODE_COUNT; mi++)
        for (int vi = 0; vi < TU_VARIANT_COUNT; vi++)
            for (fpk_bits a = 0; a < n; a++)
                check_case(&rep, OP_SQRT, f, a, 0, 0, tu_modes[mi], &tu_variants[vi]);
    tu_report_line(&rep, "%s sqrt: every operand, every mode and variant", f->name);
    /* The method of the exhaustive 16-bit sweep, run here on every pair. */
    pairs_by_symmetry(&rep, OP_ADD, f);
    pairs_by_symmetry(&rep, OP_MUL, f);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* FMA of a small format: every triple in every mode and variant when
 * exhaustive or when there are at most SMALL_FMA triples, otherwise
 * SMALL_FMA random triples per mode, the variants in turn. */
START_TEST(small_fma)
{
    const fpk_format *f = small_format(_i);
    uint64_t n = UINT64_C(1) << f->width;
    tu_report rep;
    tu_report_init(&rep, SUITE);
    if (tu_exhaustive() || n * n * n <= SMALL_FMA) {
        for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
            for (int vi = 0; vi < TU_VARIANT_COUNT; vi++)
                for (fpk_bits a = 0; a < n; a++)
                    for (fpk_bits b = 0; b < n; b++)
                        for (fpk_bits d = 0; d < n; d++)
                            check_case(&rep, OP_FMA, f, a, b, d, tu_modes[mi],
                                       &tu_variants[vi]);
            tu_report_line(&rep, "%s fma %s: every triple, every variant", f->name,
                           tu_mode_name(tu_modes[mi]));
        }
    } else {
        tu_rng rng;
        tu_rng_init(&rng, case_seed(f, OP_FMA));
        for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
            for (int i = 0; i < SMALL_FMA; i++) {
                uint64_t r = tu_rng_next(&rng);
                check_case(&rep, OP_FMA, f, r % n, (r >> 16) % n, (r >> 32) % n,
                           tu_modes[mi], &tu_variants[i % TU_VARIANT_COUNT]);
            }
            tu_report_line(&rep, "%s fma %s: random triples, variants in turn", f->name,
                           tu_mode_name(tu_modes[mi]));
        }
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* CASES generated operand tuples of F per mode for O, variants in turn. */
static void sample(tu_report *rep, op o, const fpk_format *f, int cases)
{
    tu_rng rng;
    tu_rng_init(&rng, case_seed(f, o));
    for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
        for (int i = 0; i < cases; i++) {
            fpk_bits a = tu_gen(f, NULL, &rng);
            fpk_bits b = arity(o) >= 2 ? tu_gen(f, NULL, &rng) : 0;
            fpk_bits d = arity(o) == 3 ? tu_gen(f, NULL, &rng) : 0;
            check_case(rep, o, f, a, b, d, tu_modes[mi], &tu_variants[i % TU_VARIANT_COUNT]);
        }
        tu_report_line(rep, "%s %s %s: generated operands, variants in turn", f->name,
                       op_names[o], tu_mode_name(tu_modes[mi]));
    }
}

/* fp16 and bf16: sqrt of every operand in every mode and variant, the
 * binary operations and fma on generated operands. */
START_TEST(half_sqrt)
{
    const fpk_format *f = nth_format(16, 16, _i);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (int mi = 0; mi < TU_MODE_COUNT; mi++)
        for (int vi = 0; vi < TU_VARIANT_COUNT; vi++)
            for (fpk_bits a = 0; a < 0x10000; a++)
                check_case(&rep, OP_SQRT, f, a, 0, 0, tu_modes[mi], &tu_variants[vi]);
    tu_report_line(&rep, "%s sqrt: every operand, every mode and variant", f->name);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

START_TEST(half_sampled)
{
    const fpk_format *f = nth_format(16, 16, _i);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (op o = 0; o < BINARY_OPS; o++)
        sample(&rep, o, f, HALF_PAIRS);
    sample(&rep, OP_FMA, f, HALF_FMA);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

START_TEST(half_exhaustive)
{
    const fpk_format *f = nth_format(16, 16, _i);
    if (!tu_exhaustive()) {
        printf("%s: %s every add and mul pair: skipped (set FPK_EXHAUSTIVE=1)\n", SUITE,
               f->name);
        return;
    }
    tu_report rep;
    tu_report_init(&rep, SUITE);
    pairs_by_symmetry(&rep, OP_ADD, f);
    pairs_by_symmetry(&rep, OP_MUL, f);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* tf32, fp32, fp64: WIDE_CASES generated operands per operation and mode. */
START_TEST(wide_sampled)
{
    const fpk_format *f = nth_format(17, 64, _i);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (op o = 0; o < OP_COUNT; o++)
        sample(&rep, o, f, WIDE_CASES);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* eXmY formats beyond the built-in ones, with odd widths, one exponent bit,
 * no mantissa (FN), tiny or wide ranges: EXMY_CASES generated operands per
 * operation and mode. */
static const char *const exmy_names[] = {
    "e6m9", "e11m20", "e7m30", "e3m12", "e1m3", "e8m0fn", "e2m0", "e10m1", "e11m51", "e9m45",
    "e1m52", "e5m10fnuz", "e8m7fn", "e11m52fnuz", "e4m12fn", "e1m3fnuz", "e8m0fnuz"};

START_TEST(exmy_sampled)
{
    const fpk_format *f = fpk_format_lookup(exmy_names[_i]);
    ck_assert_ptr_nonnull(f);
    tu_report rep;
    tu_report_init(&rep, SUITE);
    for (op o = 0; o < OP_COUNT; o++)
        sample(&rep, o, f, EXMY_CASES);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* X := the value of operation O on A, B, D, exact for add, sub, mul, fma
 * and truncated far below the format's precision for div and sqrt, whose
 * true value then lies strictly between the same grid neighbours.  Returns
 * false when the result is not finite and nonzero (no SR rounding). */
static bool sr_value(mpfr_ptr x, op o, const fpk_format *f, fpk_bits a, fpk_bits b,
                     fpk_bits d, const fpk_ctx *c)
{
    int t = 0;
    mpfr_t u, v, w;
    mpfr_inits2(64, u, v, w, (mpfr_ptr)0);
    bool ok = ref_decode_ctx(u, f, a, c) && ref_decode_ctx(v, f, b, c) &&
              ref_decode_ctx(w, f, d, c) && mpfr_number_p(u) && mpfr_number_p(v) &&
              mpfr_number_p(w);
    if (ok) {
        switch (o) {
        case OP_ADD: t = mpfr_add(x, u, v, MPFR_RNDZ); break;
        case OP_SUB: t = mpfr_sub(x, u, v, MPFR_RNDZ); break;
        case OP_MUL: t = mpfr_mul(x, u, v, MPFR_RNDZ); break;
        case OP_DIV: ok = !mpfr_zero_p(v); mpfr_div(x, u, v, MPFR_RNDZ); break;
        case OP_FMA: t = mpfr_fma(x, u, v, w, MPFR_RNDZ); break;
        default: mpfr_sqrt(x, u, MPFR_RNDZ); break;
        }
        ck_assert_msg(t == 0, "the exact %s did not fit", op_names[o]);
        ok = ok && mpfr_number_p(x) && !mpfr_zero_p(x);
    }
    mpfr_clears(u, v, w, (mpfr_ptr)0);
    return ok;
}

/* Stochastic rounding: the result is one of the two neighbours of the exact
 * value on the grid, with that neighbour's flags; it is the one away from
 * zero when the 32 random bits of fpk_sr_hash(seed, counter) are clearly
 * below the discarded fraction of an ulp (2^32 * frac) and the one toward
 * zero when they are clearly above; an exact result is rounded as under RNE
 * (beyond max finite: infinity); each rounding advances the counter by
 * one. */
START_TEST(stochastic)
{
    const fpk_format *const fmts[] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3,     &fpk_fp32,
                                      &fpk_fp64, &fpk_e4m3fnuz, &fpk_e2m1, &fpk_e8m0};
    tu_report rep;
    tu_report_init(&rep, SUITE);
    mpfr_t x;
    mpfr_init2(x, 8000); /* holds every exact sum and product of fp64 */
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fpk_format *f = fmts[fi];
        tu_rng rng;
        tu_rng_init(&rng, case_seed(f, 100));
        for (op o = 0; o < OP_COUNT; o++) {
            uint64_t decided = 0;
            for (int i = 0; i < SR_CASES; i++) {
                fpk_bits a = tu_gen(f, NULL, &rng), b = tu_gen(f, NULL, &rng),
                         d = tu_gen(f, NULL, &rng);
                if (o == OP_SQRT)
                    a &= ~f->sign_mask;
                fpk_ctx c = tu_ctx(FPK_SR, &tu_variants[i % TU_VARIANT_COUNT]);
                c.sr_seed = seed;
                c.sr_counter = tu_rng_next(&rng);
                if (!sr_value(x, o, f, a, b, d, &c))
                    continue;
                ref_result lo, hi;
                double frac;
                bool inexact = ref_neighbours(f, x, &c, &lo, &hi, &frac);
                uint64_t counter = c.sr_counter;
                fpk_bits got = lib_op(o, f, a, b, d, &c);
                const char *what = operands_text(o, f, a, b, d).s;
                if (c.sr_counter != counter + 1)
                    tu_fail(&rep, "%s %s sr %s: counter advanced by %" PRIu64, f->name,
                            op_names[o], what, c.sr_counter - counter);
                double t = frac * 4294967296.0;
                double rnd = (double)(fpk_sr_hash(seed, counter) >> 32);
                bool is_hi = inexact && got == hi.bits && c.flags == hi.flags;
                ref_result want = is_hi ? hi : lo;
                if (!inexact) { /* exact: no choice, overflows as under RNE */
                    fpk_ctx rc = c;
                    rc.round = FPK_RNE;
                    want = ref_round(f, x, 0, &rc);
                }
                if (inexact && rnd + 1 < t) {
                    want = hi;
                    decided++;
                } else if (inexact && rnd > t + 1) {
                    want = lo;
                    decided++;
                }
                tu_check(&rep, f, want, got, c.flags, "%s %s sr %s counter %" PRIu64
                         " frac %.17g", f->name, op_names[o], what, counter, frac);
            }
            tu_report_line(&rep, "%s %s sr: generated operands (%" PRIu64 " with the "
                           "direction decided)", f->name, op_names[o], decided);
        }
    }
    mpfr_clear(x);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

static Suite *arith_suite(void)
{
    Suite *s = suite_create("arith");
    TCase *tc = tcase_create("facts");
    tcase_add_test(tc, literature_facts);
    suite_add_tcase(s, tc);

    tc = tcase_create("small");
    int small = count_formats(1, 8) + (int)SMALL_EXTRA;
    tcase_add_loop_test(tc, small_exhaustive, 0, small);
    tcase_add_loop_test(tc, small_fma, 0, small);
    suite_add_tcase(s, tc);

    tc = tcase_create("half");
    int half = count_formats(16, 16);
    tcase_add_loop_test(tc, half_sqrt, 0, half);
    tcase_add_loop_test(tc, half_sampled, 0, half);
    tcase_add_loop_test(tc, half_exhaustive, 0, half);
    suite_add_tcase(s, tc);

    tc = tcase_create("wide");
    tcase_add_loop_test(tc, wide_sampled, 0, count_formats(17, 64));
    suite_add_tcase(s, tc);

    tc = tcase_create("exmy");
    tcase_add_loop_test(tc, exmy_sampled, 0, sizeof exmy_names / sizeof exmy_names[0]);
    suite_add_tcase(s, tc);

    tc = tcase_create("stochastic");
    tcase_add_test(tc, stochastic);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    seed = tu_seed(SUITE);
    SRunner *sr = srunner_create(arith_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
