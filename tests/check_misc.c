/* Comparisons, minimum/maximum, sign operations and int64 conversions,
 * against MPFR (tests/ref/) and bit rules derived by hand.  Every operand
 * pair of every 8-bit format is compared; the wider formats are sampled. */
#include <stdint.h> /* before mpfr.h (through ref.h): mpfr_get_uj */

#include <check.h>
#include <inttypes.h>
#include <stdio.h>

#include "testutil.h"

#define SUITE "check_misc"

static uint64_t seed;

/* The built-in formats, then e3m4 (IEEE-like, from the eXmY family). */
static const fpk_format *formats[16];
static int nformats;

static void formats_init(void)
{
    for (const fpk_format *const *f = fpk_formats; *f != NULL; f++)
        formats[nformats++] = *f;
    formats[nformats++] = fpk_format_lookup("e3m4");
}

/* A decoded operand for the comparison and min/max references: whether it
 * is a NaN (0 no, 1 quiet, 2 signaling) and otherwise its value, read as a
 * zero of the same sign if it is subnormal and daz is on. */
typedef struct operand {
    fpk_bits bits;
    int nan;
    mpfr_t x;
} operand;

static void operand_init(operand *o)
{
    mpfr_init2(o->x, 64); /* every format has at most 53 significant bits */
}

static void operand_set(operand *o, const fpk_format *f, fpk_bits a, bool daz)
{
    o->bits = a;
    o->nan = 0;
    if (!ref_decode(o->x, f, a)) {
        /* IEEE 754-2019 §6.2.1: the top mantissa bit clear means signaling. */
        bool quiet = f->special != FPK_SPECIAL_IEEE || (a >> (f->man_bits - 1) & 1);
        o->nan = quiet ? 1 : 2;
        return;
    }
    bool subnormal = (a & f->exp_mask) == 0 && (a & f->man_mask) != 0;
    if (daz && subnormal)
        mpfr_set_zero(o->x, mpfr_signbit(o->x) ? -1 : 1);
}

enum { REL_EQ, REL_LT, REL_LE };

static const struct cmp_op {
    const char *name;
    int rel;
    bool signaling;
    bool (*fn)(const fpk_format *, fpk_bits, fpk_bits, fpk_ctx *);
} cmp_ops[] = {
    {"eq", REL_EQ, false, fpk_eq},
    {"lt", REL_LT, false, fpk_lt},
    {"le", REL_LE, false, fpk_le},
    {"eq_signaling", REL_EQ, true, fpk_eq_signaling},
    {"lt_signaling", REL_LT, true, fpk_lt_signaling},
    {"le_signaling", REL_LE, true, fpk_le_signaling},
};
#define CMP_OP_COUNT (sizeof cmp_ops / sizeof cmp_ops[0])

/* IEEE 754-2019 §5.11: a NaN makes every relation false; the quiet
 * predicates signal invalid only for a signaling NaN, the others for any. */
static ref_result want_cmp(const operand *a, const operand *b, const struct cmp_op *op)
{
    ref_result w = {0, 0};
    if (a->nan || b->nan) {
        if (op->signaling || a->nan == 2 || b->nan == 2)
            w.flags = FPK_INVALID;
        return w;
    }
    switch (op->rel) {
    case REL_EQ: w.bits = mpfr_equal_p(a->x, b->x); break;
    case REL_LT: w.bits = mpfr_less_p(a->x, b->x); break;
    default: w.bits = mpfr_lessequal_p(a->x, b->x); break;
    }
    return w;
}

static const struct minmax_op {
    const char *name;
    fpk_minmax kind;
    bool max;
    fpk_bits (*fn)(const fpk_format *, fpk_bits, fpk_bits, fpk_minmax, fpk_ctx *);
} minmax_ops[] = {
    {"minimum", FPK_MINMAX_PROPAGATE, false, fpk_min},
    {"maximum", FPK_MINMAX_PROPAGATE, true, fpk_max},
    {"minimumNumber", FPK_MINMAX_NUMBER, false, fpk_min},
    {"maximumNumber", FPK_MINMAX_NUMBER, true, fpk_max},
};
#define MINMAX_OP_COUNT (sizeof minmax_ops / sizeof minmax_ops[0])

/* The zero of sign NEG in F: FNUZ has no -0. */
static fpk_bits zero_bits(const fpk_format *f, bool neg)
{
    return neg && f->special != FPK_SPECIAL_FNUZ ? f->sign_mask : 0;
}

/* O as a result: its encoding, or the zero of its sign when it reads as zero
 * (a subnormal under daz is returned flushed). */
static fpk_bits result_bits(const fpk_format *f, const operand *o)
{
    if (mpfr_zero_p(o->x))
        return zero_bits(f, mpfr_signbit(o->x));
    return o->bits;
}

/* IEEE 754-2019 §9.6: minimum/maximum give the canonical NaN for any NaN
 * operand; minimumNumber/maximumNumber give the number when only one
 * operand is NaN; a signaling NaN signals invalid in all four; -0 < +0. */
static ref_result want_minmax(const fpk_format *f, const operand *a, const operand *b,
                              const struct minmax_op *op)
{
    ref_result w = {0, 0};
    if (a->nan || b->nan) {
        if (a->nan == 2 || b->nan == 2)
            w.flags = FPK_INVALID;
        if (op->kind == FPK_MINMAX_NUMBER && !(a->nan && b->nan))
            w.bits = result_bits(f, a->nan ? b : a);
        else
            w.bits = f->nan;
        return w;
    }
    int cmp = mpfr_cmp(a->x, b->x);
    if (cmp == 0 && mpfr_zero_p(a->x)) {
        bool sa = mpfr_signbit(a->x), sb = mpfr_signbit(b->x);
        bool neg = op->max ? sa && sb : sa || sb;
        w.bits = zero_bits(f, neg);
        return w;
    }
    /* Equal nonzero values have one encoding (after daz, none is flushed). */
    const operand *z = cmp == 0 || (cmp < 0) != op->max ? a : b;
    w.bits = result_bits(f, z);
    return w;
}

/* Every comparison and min/max kind on A and B, with and without daz. */
static void check_pair_ops(tu_report *rep, const fpk_format *f, const operand *a,
                           const operand *b, bool daz)
{
    int w = tu_hex_digits(f);
    for (size_t i = 0; i < CMP_OP_COUNT; i++) {
        fpk_ctx c = fpk_ctx_default();
        c.daz = daz;
        bool got = cmp_ops[i].fn(f, a->bits, b->bits, &c);
        tu_check(rep, f, want_cmp(a, b, &cmp_ops[i]), got, c.flags, "%s %s%s %0*" PRIx64 " %0*" PRIx64,
                 cmp_ops[i].name, f->name, daz ? " daz" : "", w, a->bits, w, b->bits);
    }
    for (size_t i = 0; i < MINMAX_OP_COUNT; i++) {
        fpk_ctx c = fpk_ctx_default();
        c.daz = daz;
        fpk_bits got = minmax_ops[i].fn(f, a->bits, b->bits, minmax_ops[i].kind, &c);
        tu_check(rep, f, want_minmax(f, a, b, &minmax_ops[i]), got, c.flags,
                 "%s %s%s %0*" PRIx64 " %0*" PRIx64, minmax_ops[i].name, f->name,
                 daz ? " daz" : "", w, a->bits, w, b->bits);
    }
}

START_TEST(test_compare_8bit)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    operand ops[256];
    for (int i = 0; i < 256; i++)
        operand_init(&ops[i]);
    for (int k = 0; k < nformats; k++) {
        const fpk_format *f = formats[k];
        if (f->width != 8)
            continue;
        for (int daz = 0; daz <= 1; daz++) {
            for (int i = 0; i < 256; i++)
                operand_set(&ops[i], f, (fpk_bits)i, daz);
            for (int i = 0; i < 256; i++)
                for (int j = 0; j < 256; j++)
                    check_pair_ops(&rep, f, &ops[i], &ops[j], daz);
            tu_report_line(&rep, "%s%s: every pair, compare and min/max", f->name,
                           daz ? " daz" : "");
        }
    }
    for (int i = 0; i < 256; i++)
        mpfr_clear(ops[i].x);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

START_TEST(test_compare_sampled)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed ^ 0xc0);
    operand a, b;
    operand_init(&a);
    operand_init(&b);
    for (int k = 0; k < nformats; k++) {
        const fpk_format *f = formats[k];
        if (f->width == 8)
            continue;
        long n = f->width == 16 ? 100000 : 20000;
        if (tu_exhaustive())
            n *= 20;
        for (int daz = 0; daz <= 1; daz++) {
            for (long i = 0; i < n; i++) {
                fpk_bits x = tu_gen(f, NULL, &rng), y;
                /* Equal, opposite and adjacent operands now and then. */
                switch (tu_rng_below(&rng, 8)) {
                case 0: y = x; break;
                case 1: y = x ^ f->sign_mask; break;
                case 2: y = (x + 1) & (f->sign_mask | (f->sign_mask - 1)); break;
                case 3: y = (x - 1) & (f->sign_mask | (f->sign_mask - 1)); break;
                default: y = tu_gen(f, NULL, &rng); break;
                }
                operand_set(&a, f, x, daz);
                operand_set(&b, f, y, daz);
                check_pair_ops(&rep, f, &a, &b, daz);
            }
            tu_report_line(&rep, "%s%s: %ld sampled pairs, compare and min/max", f->name,
                           daz ? " daz" : "", n);
        }
    }
    mpfr_clear(a.x);
    mpfr_clear(b.x);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The sign operations on A (and B for copysign), against rules stated on
 * the encoding's parts: the sign bit is the top bit, the rest is the
 * magnitude field, which they never touch; for numbers, MPFR confirms the
 * value is negated or made nonnegative.  Where the sign bit cannot change
 * (E8M0 has none; FNUZ's zero and NaN are the zero magnitude with either
 * sign bit) every operation returns A. */
static void check_sign_ops(tu_report *rep, const fpk_format *f, fpk_bits a, fpk_bits b,
                           mpfr_ptr x, mpfr_ptr y)
{
    int w = tu_hex_digits(f);
    bool a_neg = a >= f->sign_mask, b_neg = b >= f->sign_mask;
    fpk_bits mag = a_neg ? a - f->sign_mask : a;
    ref_result neg = {a_neg ? mag : mag + f->sign_mask, 0};
    ref_result abs = {mag, 0};
    ref_result cs = {b_neg ? mag + f->sign_mask : mag, 0};
    bool fixed = f->special == FPK_SPECIAL_E8M0 || (f->special == FPK_SPECIAL_FNUZ && mag == 0);
    if (fixed)
        neg.bits = abs.bits = cs.bits = a;
    tu_check(rep, f, neg, fpk_neg(f, a), 0, "neg %s %0*" PRIx64, f->name, w, a);
    tu_check(rep, f, abs, fpk_abs(f, a), 0, "abs %s %0*" PRIx64, f->name, w, a);
    tu_check(rep, f, cs, fpk_copysign(f, a, b), 0, "copysign %s %0*" PRIx64 " %0*" PRIx64,
             f->name, w, a, w, b);
    if (b == 0 && !fixed && ref_decode(x, f, a)) {
        bool ok = ref_decode(y, f, fpk_neg(f, a)) && mpfr_signbit(y) != mpfr_signbit(x);
        mpfr_neg(x, x, MPFR_RNDN);
        ok = ok && mpfr_equal_p(x, y);
        mpfr_abs(x, x, MPFR_RNDN);
        ok = ok && ref_decode(y, f, fpk_abs(f, a)) && !mpfr_signbit(y) && mpfr_equal_p(x, y);
        if (!ok)
            tu_fail(rep, "neg/abs %s %0*" PRIx64 ": value not negated or made nonnegative",
                    f->name, w, a);
    }
}

START_TEST(test_sign)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed ^ 0x51);
    mpfr_t x, y;
    mpfr_inits2(64, x, y, (mpfr_ptr)0);
    for (int k = 0; k < nformats; k++) {
        const fpk_format *f = formats[k];
        if (f->width > 16)
            continue;
        fpk_bits n = (fpk_bits)1 << f->width;
        /* B: every encoding for 8-bit formats; for 16-bit ones, the zeros,
         * NaNs of both signs, and random encodings. */
        fpk_bits bs[10] = {0, f->sign_mask, f->nan, f->nan | f->sign_mask, 1, f->sign_mask | 1};
        for (int i = 6; i < 10; i++)
            bs[i] = tu_rng_next(&rng) & (n - 1);
        for (fpk_bits a = 0; a < n; a++) {
            if (f->width == 8) {
                for (fpk_bits b = 0; b < n; b++)
                    check_sign_ops(&rep, f, a, b, x, y);
            } else {
                for (int i = 0; i < 10; i++)
                    check_sign_ops(&rep, f, a, bs[i], x, y);
            }
        }
        tu_report_line(&rep, "%s: neg, abs, copysign on every encoding", f->name);
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

static void check_to_int64(tu_report *rep, const fpk_format *f, fpk_bits a, const fpk_ctx *tmpl,
                           const char *variant)
{
    fpk_ctx c = *tmpl;
    int64_t want_z;
    ref_result want = ref_to_int64(f, a, &c, &want_z);
    int64_t got = fpk_to_int64(f, a, &c);
    tu_check(rep, &fpk_fp64, want, (fpk_bits)got, c.flags, "to_int64 %s %s %s %0*" PRIx64,
             f->name, tu_mode_name(c.round), variant, tu_hex_digits(f), a);
}

/* N * 2^K in F, for N > 0 whose value is a normal number of F. */
static fpk_bits enc(const fpk_format *f, bool neg, uint64_t n, int k)
{
    int len = 64 - __builtin_clzll(n), p = f->man_bits + 1;
    uint64_t sig = len <= p ? n << (p - len) : n >> (len - p);
    ck_assert_msg(len <= p || (n & ((UINT64_C(1) << (len - p)) - 1)) == 0,
                  "%" PRIu64 " needs more than %d bits", n, p);
    int e = len - 1 + k;
    ck_assert(e >= f->emin && e <= f->emax);
    return (neg ? f->sign_mask : 0) | ((fpk_bits)(e + f->bias) << f->man_bits) |
           (sig & f->man_mask);
}

/* Edge values of a wide format F for to_int64: around +-2^63 and 2^64, ties
 * (x.5) and one ulp either side of them, quarters, integers one ulp off,
 * tiny values and the special encodings. */
static int int64_edges(const fpk_format *f, fpk_bits *out)
{
    int m = f->man_bits, p = m + 1, n = 0;
    for (int s = 0; s <= 1; s++) {
        out[n++] = enc(f, s, 1, 63);                                  /* 2^63 */
        out[n++] = enc(f, s, (UINT64_C(1) << p) - 1, 63 - p);         /* below */
        out[n++] = enc(f, s, (UINT64_C(1) << m) + 1, 63 - m);         /* above */
        out[n++] = enc(f, s, 1, 64);
        out[n++] = enc(f, s, 1, 62);
        out[n++] = enc(f, s, 3, 61);
        out[n++] = enc(f, s, 1, f->emax);
        uint64_t ints[] = {0, 1, 2, 3, 4, 5, 6, 7, 100, 1001, (UINT64_C(1) << 20) + 1,
                           (UINT64_C(1) << (p - 2)) - 1, (UINT64_C(1) << (p - 2)) + 1};
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            uint64_t t = 2 * ints[i] + 1; /* (t / 2) is ints[i] + 0.5 */
            int len = 64 - __builtin_clzll(t);
            if (len > p)
                continue;
            out[n++] = enc(f, s, t, -1);
            if (len + 2 <= p)
                out[n++] = enc(f, s, 2 * t + 1, -2); /* ints[i] + 0.75 */
            if (len + 1 <= p)
                out[n++] = enc(f, s, 2 * t - 1, -2); /* ints[i] + 0.25 */
            int q = p - len;                             /* one ulp off the tie */
            if (q > 0) {
                out[n++] = enc(f, s, (t << q) + 1, -1 - q);
                out[n++] = enc(f, s, (t << q) - 1, -1 - q);
            }
            if (ints[i] > 0) {
                int il = 64 - __builtin_clzll(ints[i]), r = p - il; /* integer +- ulp */
                out[n++] = enc(f, s, ints[i], 0);
                if (r > 0) {
                    out[n++] = enc(f, s, (ints[i] << r) + 1, -r);
                    out[n++] = enc(f, s, (ints[i] << r) - 1, -r);
                }
            }
        }
        fpk_bits sign = s ? f->sign_mask : 0;
        out[n++] = sign | 1;                                    /* min subnormal */
        out[n++] = sign | f->man_mask;                          /* max subnormal */
        out[n++] = sign | ((fpk_bits)1 << m);                   /* min normal */
        out[n++] = sign | f->max_finite;
        out[n++] = sign;
        out[n++] = sign | f->inf;
        out[n++] = sign | f->nan;
        out[n++] = sign | f->exp_mask | 1; /* signaling NaN */
    }
    return n;
}

/* A wide-format value near the int64 range or a tie: exponent -3..65, a
 * random significand, sometimes cut to a tie at the half-unit bit or one
 * ulp off it. */
static fpk_bits gen_int_range(const fpk_format *f, tu_rng *r)
{
    int m = f->man_bits;
    int e = -3 + (int)tu_rng_below(r, 69);
    uint64_t man = tu_rng_next(r) & f->man_mask;
    int half = m - 1 - e; /* the bit of man worth 1/2 */
    if (half >= 0 && half < m && tu_rng_below(r, 2)) {
        man = (man & ~((UINT64_C(2) << half) - 1)) | (UINT64_C(1) << half);
        uint64_t step = tu_rng_below(r, 3);
        if (step == 1)
            man++;
        else if (step == 2)
            man--;
        man &= f->man_mask;
    }
    fpk_bits sign = tu_rng_below(r, 2) ? f->sign_mask : 0;
    return sign | ((fpk_bits)(e + f->bias) << m) | man;
}

START_TEST(test_to_int64)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed ^ 0x164);
    fpk_bits edges[512];
    for (int k = 0; k < nformats; k++) {
        const fpk_format *f = formats[k];
        bool every = f->width <= 16 || (f->width <= 19 && tu_exhaustive());
        /* Options other than daz must not matter: all of them on the 8-bit
         * formats, plain and daz on the rest. */
        for (int v = 0; v < TU_VARIANT_COUNT; v++) {
            const tu_variant *var = &tu_variants[v];
            if (f->width != 8 && v != 0 && !var->daz)
                continue;
            for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
                fpk_ctx c = tu_ctx(tu_modes[mi], var);
                if (every) {
                    for (fpk_bits a = 0; a < (fpk_bits)1 << f->width; a++)
                        check_to_int64(&rep, f, a, &c, var->name);
                    continue;
                }
                if (f->exp_bits >= 8) {
                    int n = int64_edges(f, edges);
                    for (int i = 0; i < n; i++)
                        check_to_int64(&rep, f, edges[i], &c, var->name);
                    for (int i = 0; i < 20000; i++)
                        check_to_int64(&rep, f, gen_int_range(f, &rng), &c, var->name);
                }
                for (int i = 0; i < 20000; i++)
                    check_to_int64(&rep, f, tu_gen(f, NULL, &rng), &c, var->name);
            }
            tu_report_line(&rep, "%s %s: to_int64, %s, every mode", f->name, var->name,
                           every ? "every encoding" : "edges and samples");
        }
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

static void check_from_int64(tu_report *rep, const fpk_format *f, int64_t i, const fpk_ctx *tmpl,
                             const char *variant)
{
    ref_result want = ref_from_int64(f, i, tmpl);
    fpk_ctx c = *tmpl;
    fpk_bits got = fpk_from_int64(f, i, &c);
    tu_check(rep, f, want, got, c.flags, "from_int64 %s %s %s %" PRId64, f->name,
             tu_mode_name(c.round), variant, i);
}

/* Integers where F's rounding changes its mind: +-(2^k + {-1, 0, 1}), the
 * int64 limits, 2^53+1 and friends, and values around F's overflow
 * threshold (max finite, the tie above it, the next grid point). */
static int from_int64_edges(const fpk_format *f, int64_t *out)
{
    int n = 0;
    uint64_t mags[256];
    int nm = 0;
    for (int k = 0; k < 63; k++)
        for (int d = -1; d <= 1; d++)
            mags[nm++] = (UINT64_C(1) << k) + (uint64_t)d;
    uint64_t extra[] = {(UINT64_C(1) << 53) + 3, (UINT64_C(1) << 24) + 3, (UINT64_C(1) << 11) + 3,
                        (UINT64_C(1) << 63) - 1024, (UINT64_C(1) << 63) - 1025,
                        (UINT64_C(1) << 63) - 512, (UINT64_C(1) << 63) - 511, 3, 5, 7};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        mags[nm++] = extra[i];
    int ulp_exp = f->emax - f->man_bits; /* the ulp of the top binade, log2 */
    if (f->emax < 63 && ulp_exp >= 1) {
        uint64_t sig = (f->max_finite & f->man_mask) | ((uint64_t)1 << f->man_bits);
        uint64_t max = sig << ulp_exp, ulp = UINT64_C(1) << ulp_exp;
        uint64_t near[] = {max - 1, max, max + 1, max + ulp / 2 - 1, max + ulp / 2,
                           max + ulp / 2 + 1, max + ulp - 1, max + ulp, max + ulp + 1,
                           max + 2 * ulp, 2 * max};
        for (size_t i = 0; i < sizeof near / sizeof near[0]; i++)
            mags[nm++] = near[i];
    }
    out[n++] = 0;
    out[n++] = INT64_MIN;
    out[n++] = INT64_MAX;
    out[n++] = INT64_MIN + 1;
    for (int i = 0; i < nm; i++) {
        if (mags[i] == 0 || mags[i] > (uint64_t)INT64_MAX)
            continue;
        out[n++] = (int64_t)mags[i];
        out[n++] = -(int64_t)mags[i];
    }
    return n;
}

/* A random int64: random length, random bits or a tie pattern, random sign. */
static int64_t gen_int64(tu_rng *r)
{
    int len = 1 + (int)tu_rng_below(r, 63);
    uint64_t v = tu_rng_next(r) >> (64 - len) | UINT64_C(1) << (len - 1);
    if (len > 2 && tu_rng_below(r, 4) == 0) {
        int at = (int)tu_rng_below(r, (uint64_t)(len - 1)); /* a one, zeros below */
        v = (v & ~((UINT64_C(2) << at) - 1)) | UINT64_C(1) << at;
    }
    return tu_rng_below(r, 2) ? -(int64_t)v : (int64_t)v;
}

START_TEST(test_from_int64)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed ^ 0xf164);
    int64_t edges[512];
    int nrandom = tu_exhaustive() ? 50000 : 2000;
    for (int k = 0; k < nformats; k++) {
        const fpk_format *f = formats[k];
        int n = from_int64_edges(f, edges);
        for (int v = 0; v < TU_VARIANT_COUNT; v++) {
            for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
                fpk_ctx c = tu_ctx(tu_modes[mi], &tu_variants[v]);
                for (int i = 0; i < n; i++)
                    check_from_int64(&rep, f, edges[i], &c, tu_variants[v].name);
                for (int i = 0; i < nrandom; i++)
                    check_from_int64(&rep, f, gen_int64(&rng), &c, tu_variants[v].name);
            }
            tu_report_line(&rep, "%s %s: from_int64, %d edges and %d random, every mode",
                           f->name, tu_variants[v].name, n, nrandom);
        }
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* SR from_int64: each result is one of the two neighbours, with the flags
 * of the directed mode that picks it (the core's rule; its statistics are
 * the core's tests). */
START_TEST(test_from_int64_sr)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    tu_rng rng;
    tu_rng_init(&rng, seed ^ 0x5f);
    for (int k = 0; k < nformats; k++) {
        const fpk_format *f = formats[k];
        fpk_ctx c = fpk_ctx_default();
        c.round = FPK_SR;
        c.sr_seed = seed;
        for (int i = 0; i < 5000; i++) {
            int64_t v = gen_int64(&rng);
            fpk_ctx lo = fpk_ctx_default(), hi = fpk_ctx_default();
            lo.round = FPK_RTZ;
            hi.round = v < 0 ? FPK_RDN : FPK_RUP;
            ref_result wl = ref_from_int64(f, v, &lo), wh = ref_from_int64(f, v, &hi);
            c.flags = 0;
            uint64_t counter = c.sr_counter;
            fpk_bits got = fpk_from_int64(f, v, &c);
            bool high = got == wh.bits && c.flags == wh.flags;
            tu_check(&rep, f, high ? wh : wl, got, c.flags,
                     "from_int64 %s sr %" PRId64 " (either neighbour)", f->name, v);
            if (c.sr_counter != counter + 1)
                tu_fail(&rep, "from_int64 %s sr %" PRId64 ": counter advanced by %" PRIu64,
                        f->name, v, c.sr_counter - counter);
        }
        tu_report_line(&rep, "%s: from_int64 sr, 5000 random", f->name);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* SR to_int64, against the rule of fpk_ctx with the threshold computed
 * independently (with MPFR): away from zero iff the top sr_bits bits of
 * fpk_sr_hash(seed, counter) are below floor(frac * 2^sr_bits); each call
 * on a nonzero number advances the counter once; the frequency of the away
 * neighbour matches frac; a fresh context with the same seed replays. */
START_TEST(test_to_int64_sr)
{
    tu_report rep;
    tu_report_init(&rep, SUITE);
    static const struct {
        const fpk_format *f;
        fpk_bits a;
    } values[] = {
        {&fpk_fp32, 0x40100000}, /* 2.25 */
        {&fpk_fp32, 0xc0100000}, /* -2.25 */
        {&fpk_fp32, 0x3dcccccd}, /* 0.1 */
        {&fpk_fp32, 0xc0f80000}, /* -7.75 */
        {&fpk_fp32, 0x3fc00000}, /* 1.5 */
        {&fpk_fp32, 0x30800000}, /* 2^-30 */
        {&fpk_fp32, 0x49742406}, /* 1000000.375 */
        {&fpk_fp32, 0x40a00000}, /* 5 */
        {&fpk_fp32, 0xcf000000}, /* -2^31 */
        {&fpk_fp16, 0x3a00},     /* 0.75 */
        {&fpk_fp64, UINT64_C(0x3fe8000000000001)}, /* 0.75 + 2^-53 */
        {&fpk_fp64, UINT64_C(0xbef0000000000001)}, /* -(2^-16 + 2^-68): 68 bits discarded */
        {&fpk_fp64, UINT64_C(0x4330000000000001)}, /* 2^52 + 1 */
    };
    static const int bits[] = {1, 8, 32, 64};
    const int n = tu_exhaustive() ? 200000 : 20000;
    mpfr_t x, t, fr;
    mpfr_inits2(128, x, t, fr, (mpfr_ptr)0);
    for (size_t vi = 0; vi < sizeof values / sizeof values[0]; vi++) {
        for (size_t bi = 0; bi < sizeof bits / sizeof bits[0]; bi++) {
            int k = bits[bi];
            const fpk_format *f = values[vi].f;
            fpk_bits a = values[vi].a;
            ref_decode(x, f, a);
            mpfr_trunc(t, x);
            mpfr_sub(fr, x, t, MPFR_RNDN); /* exact */
            mpfr_abs(fr, fr, MPFR_RNDN);
            bool exact = mpfr_zero_p(fr);
            mpfr_mul_2si(fr, fr, k, MPFR_RNDN);
            mpfr_floor(fr, fr);
            uint64_t threshold = mpfr_get_uj(fr, MPFR_RNDN); /* < 2^k */
            int64_t lo = mpfr_get_sj(t, MPFR_RNDN);
            int64_t hi = lo + (mpfr_signbit(x) ? -1 : 1);

            fpk_ctx c = fpk_ctx_default(), replay = fpk_ctx_default();
            c.round = replay.round = FPK_SR;
            c.sr_seed = replay.sr_seed = seed + vi;
            c.sr_bits = replay.sr_bits = k;
            c.sr_counter = replay.sr_counter = UINT64_MAX - 3; /* wraps: still a stream */
            long away = 0;
            for (int i = 0; i < n; i++) {
                uint64_t counter = c.sr_counter;
                uint64_t r = fpk_sr_hash(c.sr_seed, counter) >> (64 - k);
                bool want_away = !exact && r < threshold;
                ref_result want = {(fpk_bits)(want_away ? hi : lo), exact ? 0 : FPK_INEXACT};
                c.flags = 0;
                int64_t z = fpk_to_int64(f, a, &c);
                int64_t z2 = fpk_to_int64(f, a, &replay);
                tu_check(&rep, &fpk_fp64, want, (fpk_bits)z, c.flags,
                         "to_int64 %s sr bits %d %0*" PRIx64 " counter %" PRIu64, f->name, k,
                         tu_hex_digits(f), a, counter);
                if (c.sr_counter != counter + 1 || z2 != z)
                    tu_fail(&rep, "to_int64 %s sr bits %d %0*" PRIx64 " counter %" PRIu64
                            ": counter advanced by %" PRIu64 ", replay gave %" PRId64,
                            f->name, k, tu_hex_digits(f), a, counter, c.sr_counter - counter, z2);
                away += z == hi;
            }
            /* The away count is binomial(n, threshold / 2^k): within six
             * standard deviations, and three counts of slack for tiny p. */
            double p = exact ? 0 : (double)threshold;
            for (int i = 0; i < k; i++)
                p /= 2;
            double dev = (double)away - n * p, freq = (double)away / n;
            dev = (dev < 0 ? -dev : dev) - 3;
            if (dev > 0 && dev * dev > 36 * n * p * (1 - p))
                tu_fail(&rep, "to_int64 %s sr bits %d %0*" PRIx64 ": away %.5f, expected %.5f",
                        f->name, k, tu_hex_digits(f), a, freq, p);
            tu_report_line(&rep, "%s %0*" PRIx64 " sr bits %d: %d roundings, away %.4f", f->name,
                           tu_hex_digits(f), a, k, n, freq);
        }
    }
    mpfr_clears(x, t, fr, (mpfr_ptr)0);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Facts stated by hand, each a line of IEEE 754-2019 or docs/DESIGN.md "Corner cases". */
START_TEST(test_facts)
{
    const fpk_format *h = &fpk_fp16;
    const fpk_bits one = 0x3c00, qnan = 0x7e00, snan = 0x7d00, pz = 0x0000, nz = 0x8000;
    fpk_ctx c = fpk_ctx_default();

    ck_assert(!fpk_lt(h, qnan, one, &c));
    ck_assert_uint_eq(c.flags, 0);
    ck_assert(!fpk_lt_signaling(h, qnan, one, &c));
    ck_assert_uint_eq(c.flags, FPK_INVALID);
    c.flags = 0;
    ck_assert(!fpk_eq(h, snan, snan, &c));
    ck_assert_uint_eq(c.flags, FPK_INVALID);
    c.flags = 0;
    ck_assert(fpk_eq(h, nz, pz, &c) && fpk_le(h, nz, pz, &c) && !fpk_lt(h, nz, pz, &c));

    for (int kind = FPK_MINMAX_PROPAGATE; kind <= FPK_MINMAX_NUMBER; kind++) {
        ck_assert_uint_eq(fpk_min(h, nz, pz, kind, &c), nz);
        ck_assert_uint_eq(fpk_min(h, pz, nz, kind, &c), nz);
        ck_assert_uint_eq(fpk_max(h, nz, pz, kind, &c), pz);
        ck_assert_uint_eq(fpk_max(h, pz, nz, kind, &c), pz);
    }
    ck_assert_uint_eq(fpk_min(h, qnan, one, FPK_MINMAX_NUMBER, &c), one);
    ck_assert_uint_eq(fpk_min(h, qnan | nz, one, FPK_MINMAX_PROPAGATE, &c), qnan);
    ck_assert_uint_eq(c.flags, 0);
    ck_assert_uint_eq(fpk_max(h, snan, one, FPK_MINMAX_PROPAGATE, &c), qnan);
    ck_assert_uint_eq(c.flags, FPK_INVALID);
    c.flags = 0;
    ck_assert_uint_eq(fpk_max(h, one, snan, FPK_MINMAX_NUMBER, &c), one);
    ck_assert_uint_eq(c.flags, FPK_INVALID);

    /* daz: a subnormal reads as the zero of its sign and is returned so. */
    c = fpk_ctx_default();
    c.daz = true;
    ck_assert(fpk_eq(h, 0x0001, nz, &c));
    ck_assert_uint_eq(fpk_min(h, 0x8001, pz, FPK_MINMAX_PROPAGATE, &c), nz);
    ck_assert_uint_eq(fpk_max(h, 0x0001, nz, FPK_MINMAX_PROPAGATE, &c), pz);
    ck_assert_uint_eq(c.flags, 0);

    /* 2.5 and -2.5 in every mode. */
    static const int64_t pos[] = {2, 3, 2, 3, 2, 3}, neg[] = {-2, -3, -2, -2, -3, -3};
    for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
        c = fpk_ctx_default();
        c.round = tu_modes[mi];
        ck_assert_int_eq(fpk_to_int64(h, 0x4100, &c), pos[mi]);
        ck_assert_int_eq(fpk_to_int64(h, 0xc100, &c), neg[mi]);
        ck_assert_uint_eq(c.flags, FPK_INEXACT);
    }

    c = fpk_ctx_default();
    ck_assert_int_eq(fpk_to_int64(&fpk_fp64, UINT64_C(0x43e0000000000000), &c), INT64_MAX);
    ck_assert_uint_eq(c.flags, FPK_INVALID); /* 2^63 */
    c.flags = 0;
    ck_assert_int_eq(fpk_to_int64(&fpk_fp64, UINT64_C(0xc3e0000000000000), &c), INT64_MIN);
    ck_assert_uint_eq(c.flags, 0); /* -2^63 */
    ck_assert_int_eq(fpk_to_int64(h, qnan, &c), INT64_MIN);
    ck_assert_uint_eq(c.flags, FPK_INVALID);
    c.flags = 0;
    ck_assert_int_eq(fpk_to_int64(h, 0xfc00, &c), INT64_MIN);
    ck_assert_uint_eq(c.flags, FPK_INVALID);

    c = fpk_ctx_default();
    ck_assert_uint_eq(fpk_from_int64(h, 0, &c), pz);
    ck_assert_uint_eq(fpk_from_int64(&fpk_fp64, (INT64_C(1) << 53) + 1, &c),
                      UINT64_C(0x4340000000000000)); /* ties to even: 2^53 */
    ck_assert_uint_eq(c.flags, FPK_INEXACT);
    c.flags = 0;
    ck_assert_uint_eq(fpk_from_int64(&fpk_e4m3, 464, &c), 0x7e); /* ties to 448 */
    ck_assert_uint_eq(fpk_from_int64(&fpk_e4m3, 465, &c), 0x7f); /* overflow: NaN */
    ck_assert_uint_eq(c.flags, FPK_OVERFLOW | FPK_INEXACT);
}
END_TEST

static Suite *misc_suite(void)
{
    Suite *s = suite_create("misc");
    TCase *tc = tcase_create("misc");
    tcase_add_test(tc, test_facts);
    tcase_add_test(tc, test_compare_8bit);
    tcase_add_test(tc, test_compare_sampled);
    tcase_add_test(tc, test_sign);
    tcase_add_test(tc, test_to_int64);
    tcase_add_test(tc, test_to_int64_sr);
    tcase_add_test(tc, test_from_int64);
    tcase_add_test(tc, test_from_int64_sr);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    seed = tu_seed(SUITE);
    formats_init();
    if (formats[nformats - 1] == NULL) {
        printf("%s: e3m4 is not a format\n", SUITE);
        return 1;
    }
    SRunner *sr = srunner_create(misc_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
