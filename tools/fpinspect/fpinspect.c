/* fpinspect: what an encoding or a number is in any format, and what
 * happens to it in the others. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

enum { OPT_JSON = CLI_OWN, OPT_INFO, OPT_TABLE, OPT_LIST_FORMATS };

static const cli_opt options[] = {
    {.key = CLI_FORMAT, .help = "format of VALUE (default fp32)"},
    {.key = CLI_ROUND, .help = "rne (default), rna, rtz, rup, rdn, rod"},
    {.key = CLI_TO},
    {.key = CLI_FTZ},
    {.key = CLI_SATURATE},
    {.key = OPT_JSON, .name = "--json", .help = "one JSON object per value or report"},
    {.key = CLI_THREADS,
     .help = "as for every fpkit tool (1 to 1024); fpinspect's work, a value at a time, "
             "needs one"},
    {.key = OPT_INFO, .name = "--info", .value = "FMT",
     .help = "the format's parameters and rounding thresholds"},
    {.key = OPT_TABLE, .name = "--table", .value = "FMT",
     .help = "every encoding of a format of at most 8 bits"},
    {.key = OPT_LIST_FORMATS, .name = "--list-formats", .help = "the built-in formats side by side"},
    {0},
};

static const char *const synopsis[] = {
    "--format --round --to --ftz --saturate --json --threads VALUE...",
    "--json --round --ftz --saturate !--info",
    "--json !--table|--list-formats",
    NULL,
};

/* The options that shape every report. */
typedef struct opts {
    const fpk_format *fmt;
    fpk_ctx ctx; /* mode, ftz, saturate; flags always start at 0 */
    const fpk_format *to[CLI_MAX_TO];
    int nto;
    bool json;
} opts;

/* Exact decimal text of an MPFR value with a finite binary expansion, in
 * the library's style: plain for decimal exponents -5..15, else scientific. */
static char *mpfr_exact(mpfr_srcptr x)
{
    if (mpfr_zero_p(x))
        return cli_strf("%s", mpfr_signbit(x) ? "-0" : "0");
    /* M * 2^e with M < 2^p has at most p + |e| significant decimal digits. */
    mpfr_exp_t e10;
    size_t digits = (size_t)mpfr_get_prec(x) + (size_t)labs((long)mpfr_get_exp(x)) + 2;
    char *d = mpfr_get_str(NULL, &e10, 10, digits, x, MPFR_RNDN);
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '0')
        d[--n] = '\0';
    const char *sign = d[0] == '-' ? "-" : "";
    const char *m = d + (d[0] == '-');
    long xe = (long)e10 - 1, nd = (long)strlen(m);
    static const char zeros[] = "0000000000000000";
    char *out;
    if (xe >= 16 || xe < -5)
        out = cli_strf("%s%c%s%se%+03ld", sign, m[0], m[1] ? "." : "", m + 1, xe);
    else if (xe < 0)
        out = cli_strf("%s0.%.*s%s", sign, (int)(-xe - 1), zeros, m);
    else if (nd <= xe + 1)
        out = cli_strf("%s%s%.*s", sign, m, (int)(xe + 1 - nd), zeros);
    else
        out = cli_strf("%s%.*s.%s", sign, (int)(xe + 1), m, m + xe + 1);
    mpfr_free_str(d);
    return out;
}

/* Text of A in F from one of the library's writers. */
static char *lib_text(size_t (*writer)(const fpk_format *, fpk_bits, char *, size_t),
                      const fpk_format *f, fpk_bits a)
{
    size_t n = writer(f, a, NULL, 0) + 1;
    char *s = malloc(n);
    if (!s)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    writer(f, a, s, n);
    return s;
}

static char *exact_text(const fpk_format *f, fpk_bits a)
{
    return lib_text(fpk_format_exact, f, a);
}

static char *pow2_text(long e)
{
    mpfr_t x;
    mpfr_init2(x, 2);
    mpfr_set_si_2exp(x, 1, e, MPFR_RNDN);
    char *s = mpfr_exact(x);
    mpfr_clear(x);
    return s;
}

static const char *class_name(fpk_class k)
{
    static const char *const names[] = {"zero", "subnormal", "normal", "inf", "quiet NaN", "signaling NaN"};
    return names[k];
}

static void flags_text(unsigned flags, char *buf, size_t len)
{
    static const char *const names[] = {"invalid", "divbyzero", "overflow", "underflow", "inexact"};
    buf[0] = '\0';
    for (int i = 0; i < 5; i++)
        if (flags & (1u << i))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "", names[i]);
    if (!buf[0])
        snprintf(buf, len, "-");
}

static json_t *flags_json(unsigned flags)
{
    static const char *const names[] = {"invalid", "divbyzero", "overflow", "underflow", "inexact"};
    json_t *a = json_array();
    for (int i = 0; i < 5; i++)
        if (flags & (1u << i))
            json_array_append_new(a, json_string(names[i]));
    return a;
}

/* The special-value rule, for --info. */
static const char *rule_text(const fpk_format *f)
{
    switch (f->special) {
    case FPK_SPECIAL_IEEE: return "IEEE";
    case FPK_SPECIAL_FN: return "FN (no infinity; only S.1..1.1..1 is NaN)";
    case FPK_SPECIAL_FNUZ: return "FNUZ (no infinity, no -0; only 1.0..0.0..0 is NaN)";
    case FPK_SPECIAL_NONE:
        return "NONE (no infinity, no NaN: overflow saturates; an invalid result is -0)";
    case FPK_SPECIAL_E8M0: return "E8M0 (unsigned powers of two, no zero; only 1..1 is NaN)";
    }
    return "?";
}

/* The special values in brief, for --formats. */
static const char *specials_text(const fpk_format *f)
{
    switch (f->special) {
    case FPK_SPECIAL_IEEE: return "inf, NaN";
    case FPK_SPECIAL_FN: return "NaN only (no inf)";
    case FPK_SPECIAL_FNUZ: return "NaN only (no inf, no -0)";
    case FPK_SPECIAL_NONE: return "none (no inf, no NaN)";
    case FPK_SPECIAL_E8M0: return "NaN only (unsigned, no 0)";
    }
    return "?";
}

/* The smallest positive normal encoding: E8M0's exponent field 0 is one. */
static fpk_bits min_normal(const fpk_format *f)
{
    return f->special == FPK_SPECIAL_E8M0 ? 0 : (fpk_bits)1 << f->man_bits;
}

static int hex_digits(const fpk_format *f)
{
    return (f->width + 3) / 4;
}

static char *bits_hex(const fpk_format *f, fpk_bits a)
{
    return cli_strf("0x%0*" PRIx64, hex_digits(f), a);
}

static void bin(char *out, fpk_bits v, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = (char)('0' + (v >> (n - 1 - i) & 1));
    out[n] = '\0';
}

/* A's exact value into X (precision 64 holds every format's value). */
static void value_of(mpfr_ptr x, const fpk_format *f, fpk_bits a)
{
    mpfr_set_d(x, fpk_to_double(f, a), MPFR_RNDN);
}

/* |z - x| / |x| as a double; inf when z is not finite, 0 when both are 0,
 * the same infinity or both NaN. */
static double rel_error(mpfr_srcptr x, mpfr_srcptr z)
{
    if (mpfr_nan_p(x) && mpfr_nan_p(z))
        return 0;
    if (!mpfr_number_p(z) || !mpfr_number_p(x))
        return mpfr_equal_p(x, z) ? 0 : INFINITY;
    if (mpfr_zero_p(x))
        return mpfr_zero_p(z) ? 0 : INFINITY;
    mpfr_t d;
    mpfr_init2(d, 64);
    mpfr_sub(d, z, x, MPFR_RNDN);
    mpfr_div(d, d, x, MPFR_RNDN);
    double r = fabs(mpfr_get_d(d, MPFR_RNDN));
    mpfr_clear(d);
    return r;
}

static json_t *num_json(double v)
{
    return isfinite(v) ? json_real(v) : json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* The description of one encoding: fields, value, ulp and neighbours. */
static json_t *describe(const fpk_format *f, fpk_bits a, const opts *o, FILE *out)
{
    fpk_class k = fpk_classify(f, a);
    bool sign = fpk_signbit(f, a);
    fpk_bits ef = (a & f->exp_mask) >> f->man_bits, man = a & f->man_mask;
    char sbits[2], ebits[16], mbits[64], hexs[24];
    bin(sbits, sign, f->sign_mask != 0); /* E8M0 has no sign bit */
    bin(ebits, ef, f->exp_bits);
    bin(mbits, man, f->man_bits);
    snprintf(hexs, sizeof hexs, "0x%0*" PRIx64, hex_digits(f), a);
    bool finite = k <= FPK_CLASS_NORMAL;
    int unbiased = ef == 0 ? f->emin : (int)ef - f->bias;
    int ulp_exp = unbiased - f->man_bits;
    uint64_t sig = (k == FPK_CLASS_NORMAL ? (fpk_bits)1 << f->man_bits : 0) | man;
    char *exact = exact_text(f, a), *shortest = lib_text(fpk_format_shortest, f, a);
    char *ulp = finite ? pow2_text(ulp_exp) : NULL;
    fpk_ctx nc = fpk_ctx_default();
    fpk_bits below = fpk_next_down(f, a, &nc), above = fpk_next_up(f, a, &nc);
    char *below_v = exact_text(f, below), *above_v = exact_text(f, above);
    char *below_h = bits_hex(f, below), *above_h = bits_hex(f, above);

    json_t *j = json_object();
    if (o->json) {
        json_object_set_new(j, "format", json_string(f->name));
        json_object_set_new(j, "bits", json_string(hexs));
        json_object_set_new(j, "width", json_integer(f->width));
        json_object_set_new(j, "fields", json_pack("{s:s,s:s,s:s}", "sign", sbits, "exponent", ebits, "mantissa", mbits));
        json_object_set_new(j, "sign", json_integer(sign));
        json_object_set_new(j, "exponent", json_pack("{s:I,s:i,s:i}", "biased", (json_int_t)ef, "unbiased", unbiased, "bias", f->bias));
        json_object_set_new(j, "class", json_string(class_name(k)));
        json_object_set_new(j, "value", json_string(exact));
        json_object_set_new(j, "shortest", json_string(shortest));
        if (finite) {
            char sigs[80];
            snprintf(sigs, sizeof sigs, "%c.%s", k == FPK_CLASS_NORMAL ? '1' : '0', mbits);
            json_object_set_new(j, "significand", json_string(sigs));
            json_object_set_new(j, "m", json_integer((json_int_t)sig));
            json_object_set_new(j, "e", json_integer(ulp_exp));
            json_object_set_new(j, "ulp", json_pack("{s:i,s:s}", "log2", ulp_exp, "value", ulp));
        }
        json_object_set_new(j, "below", json_pack("{s:s,s:s}", "bits", below_h, "value", below_v));
        json_object_set_new(j, "above", json_pack("{s:s,s:s}", "bits", above_h, "value", above_v));
    } else {
        fprintf(out, "%s %s\n", f->name, hexs);
        fprintf(out, "  fields       %s | %s | %s   (sign | exponent | mantissa)\n", sbits, ebits, mbits);
        if (f->sign_mask)
            fprintf(out, "  sign         %s (%c)\n", sbits, sign ? '-' : '+');
        else
            fprintf(out, "  sign         none (unsigned)\n");
        fprintf(out, "  exponent     %s = %" PRIu64 ", unbiased %d, bias %d%s\n", ebits, ef, unbiased, f->bias,
                k == FPK_CLASS_SUBNORMAL || k == FPK_CLASS_ZERO ? " (field 0 reads as emin)" : "");
        if (finite)
            fprintf(out, "  significand  %c.%s (binary)\n", k == FPK_CLASS_NORMAL ? '1' : '0', mbits);
        fprintf(out, "  class        %s\n", class_name(k));
        fprintf(out, "  value        %s\n", exact);
        if (finite)
            fprintf(out, "               = %s%" PRIu64 " × 2^%d\n", sign ? "-" : "", sig, ulp_exp);
        fprintf(out, "  shortest     %s\n", shortest);
        if (finite)
            fprintf(out, "  ulp          2^%d = %s\n", ulp_exp, ulp);
        fprintf(out, "  below        %s  %s\n", below_h, below_v);
        fprintf(out, "  above        %s  %s\n", above_h, above_v);
    }
    free(exact), free(shortest), free(ulp), free(below_v), free(above_v), free(below_h), free(above_h);
    return j;
}

/* Conversions of A (in F) into each --to format. */
static json_t *conversions(const fpk_format *f, fpk_bits a, const opts *o, FILE *out)
{
    json_t *arr = json_array();
    if (!o->nto)
        return arr;
    mpfr_t x, z;
    mpfr_inits2(64, x, z, (mpfr_ptr)0);
    value_of(x, f, a);
    if (!o->json)
        fprintf(out, "  to (%s%s%s)\n", fpk_round_name(o->ctx.round), o->ctx.ftz ? ", ftz" : "",
                o->ctx.saturate ? ", saturate" : "");
    for (int i = 0; i < o->nto; i++) {
        const fpk_format *t = o->to[i];
        fpk_ctx c = o->ctx;
        fpk_bits b = fpk_convert(t, f, a, &c);
        value_of(z, t, b);
        fpk_class k = fpk_classify(t, b);
        bool src_finite_nonzero = mpfr_regular_p(x);
        bool underflow = src_finite_nonzero && k == FPK_CLASS_ZERO;
        bool subnormal = k == FPK_CLASS_SUBNORMAL;
        bool overflow = (c.flags & FPK_OVERFLOW) != 0;
        double re = rel_error(x, z);
        int dir = mpfr_nan_p(x) || mpfr_nan_p(z) ? 0 : mpfr_cmp(z, x);
        const char *note = mpfr_nan_p(x) ? (mpfr_nan_p(z) ? "NaN" : "NaN, which the format lacks")
                           : mpfr_nan_p(z) ? (overflow ? "overflowed to NaN" : "became NaN")
                           : overflow && mpfr_inf_p(z)       ? "overflowed to inf"
                           : overflow                        ? "overflowed, held at max finite"
                           : underflow                       ? "underflowed to zero"
                           : subnormal && dir               ? "subnormal, rounded"
                           : subnormal                      ? "subnormal, exact"
                           : dir > 0                        ? "rounded up"
                           : dir < 0                        ? "rounded down"
                                                            : "exact";
        char *h = bits_hex(t, b), *v = exact_text(t, b);
        char fl[64];
        flags_text(c.flags, fl, sizeof fl);
        if (o->json) {
            json_t *e = json_pack("{s:s,s:s,s:s,s:o,s:o,s:b,s:b,s:b,s:s}", "format", t->name, "bits", h,
                                  "value", v, "rel_error", num_json(re), "flags", flags_json(c.flags),
                                  "underflow", underflow, "subnormal", subnormal, "overflow", overflow,
                                  "note", note);
            json_array_append_new(arr, e);
        } else {
            char res[32];
            if (isfinite(re))
                snprintf(res, sizeof res, "%.3e", re);
            else
                snprintf(res, sizeof res, "inf");
            fprintf(out, "    %-8s %-20s %-26s rel.err %-10s %-18s %s\n", t->name, h, v, res, fl, note);
        }
        free(h), free(v);
    }
    mpfr_clears(x, z, (mpfr_ptr)0);
    return arr;
}

/* Reads a bit pattern (0x..., 0b...); returns false if S is not one.  Dies
 * on a malformed or too wide pattern. */
static bool parse_pattern(const char *s, const fpk_format *f, fpk_bits *out)
{
    int base = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2;
    if (!base || (base == 16 && strpbrk(s, ".pP")))
        return false;
    uint64_t v = 0;
    int digits = 0;
    for (const char *p = s + 2; *p; p++) {
        if (*p == '_')
            continue;
        int d = isdigit((unsigned char)*p) ? *p - '0'
                : base == 16 && isxdigit((unsigned char)*p) ? tolower((unsigned char)*p) - 'a' + 10
                                                            : -1;
        if (d < 0 || d >= base)
            cli_die(CLI_EXIT_USAGE, "bit pattern \"%s\": '%c' at offset %d is not a %s digit", s, *p,
                    (int)(p - s), base == 16 ? "hexadecimal" : "binary");
        if (v >> (64 - (base == 16 ? 4 : 1)))
            cli_die(CLI_EXIT_USAGE, "bit pattern \"%s\" is wider than 64 bits", s);
        v = v * (uint64_t)base + (uint64_t)d;
        digits++;
    }
    if (!digits)
        cli_die(CLI_EXIT_USAGE, "bit pattern \"%s\" has no digits", s);
    /* tf32 also arrives in the 32-bit container GPUs hold: low 13 bits 0. */
    if (f == &fpk_tf32 && v >> f->width && !(v >> 32)) {
        if (v & 0x1fff)
            cli_die(CLI_EXIT_USAGE, "bit pattern \"%s\": a tf32 32-bit container must have its low 13 bits zero", s);
        v >>= 13;
    }
    if (f->width < 64 && v >> f->width)
        cli_die(CLI_EXIT_USAGE, "bit pattern \"%s\" is wider than %s's %d bits", s, f->name, f->width);
    *out = v;
    return true;
}

static void inspect(const char *arg, const opts *o)
{
    const fpk_format *f = o->fmt;
    fpk_bits a;
    json_t *rounding = NULL;
    FILE *out = stdout;
    if (!*arg)
        cli_die(CLI_EXIT_USAGE, "empty value: give a bit pattern, a decimal, a hex float, inf or nan");
    bool pattern = parse_pattern(arg, f, &a);
    if (!pattern) {
        fpk_ctx c = o->ctx;
        fpk_error err;
        if (fpk_parse(f, arg, &a, &c, &err) != FPK_OK)
            cli_die(CLI_EXIT_USAGE, "%s", err.msg);
        /* How the number rounded: direction and error, against the input
         * read at a precision far beyond any format's. */
        mpfr_t x, z, d;
        mpfr_inits2(4096, x, z, d, (mpfr_ptr)0);
        mpfr_clear_flags();
        mpfr_strtofr(x, arg, NULL, 0, MPFR_RNDN);
        if (mpfr_overflow_p() || mpfr_underflow_p()) { /* MPFR holds [2^(emin-1), 2^emax) */
            bool over = mpfr_overflow_p();
            mpfr_clears(x, z, d, (mpfr_ptr)0);
            cli_die(CLI_EXIT_USAGE, "%s: %s 2^%ld in magnitude, outside the range fpinspect measures rounding in",
                    arg, over ? "at least" : "below", (long)(over ? mpfr_get_emax() : mpfr_get_emin() - 1));
        }
        value_of(z, f, a);
        int dir = mpfr_nan_p(x) || mpfr_nan_p(z) ? 0 : mpfr_cmp(z, x);
        double re = rel_error(x, z);
        mpfr_sub(d, z, x, MPFR_RNDN);
        char err_s[64], fl[64];
        mpfr_snprintf(err_s, sizeof err_s, "%.6Rg", d);
        flags_text(c.flags, fl, sizeof fl);
        bool to_nan = mpfr_nan_p(z) && !mpfr_nan_p(x); /* inf into e4m3 */
        bool from_nan = mpfr_nan_p(x) && !mpfr_nan_p(z); /* NaN into e2m1 */
        const char *how = to_nan     ? "NaN"
                          : from_nan ? "no NaN in the format"
                          : dir > 0  ? "up"
                          : dir < 0  ? "down"
                                     : "exact";
        if (o->json) {
            rounding = json_pack("{s:s,s:s,s:s,s:o,s:o}", "mode", fpk_round_name(o->ctx.round), "direction", how,
                                 "error", err_s, "rel_error", num_json(re), "flags", flags_json(c.flags));
        } else {
            fprintf(out, "input %s\n", arg);
            if (dir || to_nan || from_nan)
                fprintf(out, "  rounded      %s into %s: %s, error %s (relative %.3e), flags %s\n",
                        fpk_round_name(o->ctx.round), f->name, how, err_s, re, fl);
            else
                fprintf(out, "  rounded      exactly representable in %s%s%s\n", f->name,
                        strcmp(fl, "-") ? ", flags " : "", strcmp(fl, "-") ? fl : "");
        }
        mpfr_clears(x, z, d, (mpfr_ptr)0);
    }
    json_t *j = describe(f, a, o, out);
    json_t *to = conversions(f, a, o, out);
    if (o->json) {
        json_object_set_new(j, "input", json_string(arg));
        if (rounding)
            json_object_set_new(j, "rounding", rounding);
        json_object_set_new(j, "to", to);
        json_dumpf(j, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fputc('\n', out);
    } else {
        json_decref(to);
        fputc('\n', out);
    }
    json_decref(j);
}

/* What the library does with the exact value M * 2^E under O's context:
 * the class and flags of the result. */
static fpk_bits probe(const fpk_format *f, const opts *o, bool neg, uint64_t m, long e, unsigned *flags)
{
    char s[64];
    snprintf(s, sizeof s, "%s0x%" PRIx64 "p%ld", neg ? "-" : "", m, e);
    fpk_ctx c = o->ctx;
    fpk_bits z = 0;
    if (fpk_parse(f, s, &z, &c, NULL) != FPK_OK)
        cli_die(CLI_EXIT_INTERNAL, "internal error parsing %s", s);
    *flags = c.flags;
    return z;
}

/* Text of UNITS * 2^E for a threshold: "2^-25 = 2.98023223876953125e-08",
 * "65520"; values with many digits are abbreviated ("2^-1075 ~ 2.47033e-324")
 * and the exact ones are one --fmt fp64 inspection away. */
static char *scaled_text(uint64_t units, long e)
{
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_ui_2exp(v, units, e, MPFR_RNDN);
    char *d = mpfr_exact(v), *out;
    bool pow2 = units != 0 && (units & (units - 1)) == 0;
    if (strlen(d) <= 28) {
        out = pow2 ? cli_strf("2^%ld = %s", (long)mpfr_get_exp(v) - 1, d) : cli_strf("%s", d);
    } else {
        char approx[32];
        mpfr_snprintf(approx, sizeof approx, "%.6Rg", v);
        out = pow2 ? cli_strf("2^%ld ~ %s", (long)mpfr_get_exp(v) - 1, approx)
                   : cli_strf("%" PRIu64 " * 2^%ld ~ %s", units >> __builtin_ctzll(units),
                              e + __builtin_ctzll(units), approx);
    }
    free(d);
    mpfr_clear(v);
    return out;
}

/* Whether M * 2^E becomes zero without overflowing (e1m0's max finite
 * is zero). */
static bool to_zero(const fpk_format *f, const opts *o, bool neg, uint64_t m, long e)
{
    unsigned fl;
    return fpk_classify(f, probe(f, o, neg, m, e, &fl)) == FPK_CLASS_ZERO && !(fl & FPK_OVERFLOW);
}

/* Where nonzero values become zero, for one sign, found by probing the
 * library: below B (the smallest subnormal, or with ftz the smallest
 * normal) and around H, halfway from B down to the grid point below. */
static char *zero_threshold(const fpk_format *f, const opts *o, bool neg)
{
    const int g = 8; /* probes 2^-8 of a subnormal ulp off the boundaries */
    long q = f->emin - f->man_bits; /* the smallest subnormal is 2^q */
    long unit = q - 1 - g;
    uint64_t b = (uint64_t)1 << ((o->ctx.ftz ? f->man_bits : 0) + 1 + g), h = b - ((uint64_t)1 << g);
    const char *x = neg ? "-x" : "x";
    char *t = NULL, *out;
    if (to_zero(f, o, neg, b - 1, unit))
        out = cli_strf("0 < %s < %s", x, t = scaled_text(b, unit));
    else if (to_zero(f, o, neg, h, unit))
        out = cli_strf("0 < %s <= %s", x, t = scaled_text(h, unit));
    else if (to_zero(f, o, neg, h - 1, unit))
        out = cli_strf("0 < %s < %s", x, t = scaled_text(h, unit));
    else
        out = cli_strf(f->max_finite == 0 ? "never (every %s > 0 overflows)"
                                          : "never (%s > 0 keeps a nonzero result)",
                       x);
    free(t);
    return out;
}

/* Where results stop being finite, for one sign, found by probing the
 * library just above max finite, at the midpoint to the next point of the
 * grid of the format's precision (which may lie beyond the format's
 * encodings) and just above it.  That grid is the format's at a normal max
 * finite; a format without normal numbers (e1mY) has a subnormal one, in
 * the binade below 2^emin, where the precision's grid is twice as fine. */
static char *overflow_threshold(const fpk_format *f, const opts *o, bool neg)
{
    fpk_bits mag = f->max_finite;
    bool normal = (mag >> f->man_bits) != 0;
    uint64_t msig = normal ? (mag & f->man_mask) | (fpk_bits)1 << f->man_bits : mag << 1;
    long unit = (normal ? f->emax : f->emin - 1) - f->man_bits - 2; /* a quarter ulp of max */
    const char *x = neg ? "-x" : "x";
    static const char *const rel[] = {">", ">=", ">", ">="};
    char *t = NULL, *out = NULL;
    for (int i = 0; i < 4 && !out; i++) {
        unsigned fl;
        fpk_bits r = probe(f, o, neg, msig * 4 + (uint64_t)i + 1, unit, &fl); /* max + (i+1)/4 ulp */
        if (!(fl & FPK_OVERFLOW) && i < 3)
            continue;
        fpk_class k = fpk_classify(f, r);
        const char *what = k == FPK_CLASS_INF ? "goes to inf"
                           : k > FPK_CLASS_INF ? "becomes NaN"
                                               : "gives max finite, overflow raised";
        /* i = 2 is "just above the midpoint": state it as "> midpoint" */
        uint64_t at = msig * 4 + (i == 0 ? 0 : i == 3 ? 4 : 2);
        out = cli_strf("%s %s %s %s", x, rel[i], t = scaled_text(at, unit), what);
    }
    free(t);
    return out;
}

static void info(const fpk_format *f, const opts *o)
{
    fpk_bits minn = min_normal(f), mins = 1;
    int m = f->man_bits;
    double digits = (m + 1) * log10(2.0);
    int binades = f->emax - f->emin + 1;
    bool signed_ = f->sign_mask != 0, subnormals = m > 0 && f->special != FPK_SPECIAL_E8M0;
    char *z_pos = zero_threshold(f, o, false), *o_pos = overflow_threshold(f, o, false);
    char *z_neg = signed_ ? zero_threshold(f, o, true) : cli_strf("no negative numbers");
    char *o_neg = signed_ ? overflow_threshold(f, o, true) : cli_strf("no negative numbers");
    char *maxv = exact_text(f, f->max_finite), *minnv = exact_text(f, minn);
    char *minsv = subnormals ? exact_text(f, mins) : cli_strf("none");
    char *eps = pow2_text(-m), *u = pow2_text(-m - 1);
    char *maxh = bits_hex(f, f->max_finite), *minnh = bits_hex(f, minn);
    char *minsh = subnormals ? bits_hex(f, mins) : cli_strf("none");
    char *nanh = bits_hex(f, f->nan), *infh = f->inf ? bits_hex(f, f->inf) : cli_strf("none");
    const char *spec = rule_text(f);
    if (o->json) {
        json_t *j = json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:s,s:{s:s,s:s},s:{s:s,s:s},s:{s:s,s:s},"
                              "s:s,s:s,s:{s:s,s:i},s:{s:s,s:i},s:f,s:i,s:i,s:s,"
                              "s:{s:s,s:s},s:{s:s,s:s}}",
                              "format", f->name, "aliases", f->aliases, "width", f->width,
                              "exp_bits", f->exp_bits, "man_bits", m, "bias", f->bias, "special", spec,
                              "max_finite", "bits", maxh, "value", maxv, "min_normal", "bits", minnh, "value", minnv,
                              "min_subnormal", "bits", minsh, "value", minsv, "nan", nanh, "inf", infh,
                              "epsilon", "value", eps, "log2", -m, "unit_roundoff", "value", u, "log2", -m - 1,
                              "decimal_digits", digits, "normal_binades", binades, "subnormal_binades", m,
                              "round", fpk_round_name(o->ctx.round), "to_zero", "positive", z_pos, "negative", z_neg,
                              "overflow", "positive", o_pos, "negative", o_neg);
        json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(j);
    } else {
        printf("%s%s%s%s\n", f->name, *f->aliases ? " (also " : "", f->aliases, *f->aliases ? ")" : "");
        printf("  width            %d bits: %s sign, %d exponent, %d mantissa\n", f->width,
               signed_ ? "1" : "no", f->exp_bits, m);
        printf("  bias             %d (emin %d, emax %d)\n", f->bias, f->emin, f->emax);
        printf("  special values   %s; NaN %s, inf %s\n", spec, nanh, infh);
        printf("  max finite       %-10s %s\n", maxh, maxv);
        if (minn <= f->max_finite)
            printf("  min normal       %-10s 2^%d = %s\n", minnh, f->emin, minnv);
        else
            printf("  min normal       none (the format has no normal numbers)\n");
        if (subnormals && mins <= f->max_finite)
            printf("  min subnormal    %-10s 2^%d = %s\n", minsh, f->emin - m, minsv);
        else
            printf("  min subnormal    none (the format has no subnormal numbers)\n");
        printf("  epsilon          2^%d = %s\n", -m, eps);
        printf("  unit roundoff    2^%d = %s\n", -m - 1, u);
        printf("  decimal digits   %.2f\n", digits);
        printf("  range            %d binades of normals, %d of subnormals\n", binades, m);
        printf("  to zero (%s)    %s; negative: %s\n", fpk_round_name(o->ctx.round), z_pos, z_neg);
        printf("  overflow (%s)   %s; negative: %s\n", fpk_round_name(o->ctx.round), o_pos, o_neg);
    }
    free(maxv), free(minnv), free(minsv), free(eps), free(u), free(maxh), free(minnh), free(minsh), free(nanh), free(infh);
    free(z_pos), free(z_neg), free(o_pos), free(o_neg);
}

static void table(const fpk_format *f, const opts *o)
{
    if (f->width > 8)
        cli_die(CLI_EXIT_USAGE, "--table %s: the format has %d bits; tables list formats of at most 8 bits",
                f->name, f->width);
    json_t *rows = json_array();
    if (!o->json)
        printf("%-6s %s %-*s %-*s %5s  %-22s %s\n", "bits", "s", f->exp_bits, "exp", f->man_bits > 3 ? f->man_bits : 3,
               "man", "E", "value", "class");
    for (fpk_bits a = 0; a < (fpk_bits)1 << f->width; a++) {
        fpk_class k = fpk_classify(f, a);
        fpk_bits ef = (a & f->exp_mask) >> f->man_bits;
        char eb[16], mb[64], *h = bits_hex(f, a), *v = exact_text(f, a);
        bin(eb, ef, f->exp_bits);
        bin(mb, a & f->man_mask, f->man_bits);
        int e = ef == 0 ? f->emin : (int)ef - f->bias;
        if (o->json) {
            json_array_append_new(rows, json_pack("{s:s,s:i,s:s,s:s,s:i,s:s,s:s}", "bits", h, "sign",
                                                  (int)fpk_signbit(f, a), "exponent", eb, "mantissa", mb, "E", e,
                                                  "value", v, "class", class_name(k)));
        } else {
            char es[8];
            snprintf(es, sizeof es, "%d", e);
            printf("%-6s %d %-*s %-*s %5s  %-22s %s\n", h, (int)fpk_signbit(f, a), f->exp_bits > 3 ? f->exp_bits : 3,
                   eb, f->man_bits > 3 ? f->man_bits : 3, mb, k <= FPK_CLASS_NORMAL ? es : "", v, class_name(k));
        }
        free(h), free(v);
    }
    if (o->json) {
        json_t *j = json_pack("{s:s,s:o}", "format", f->name, "table", rows);
        json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(j);
    } else {
        json_decref(rows);
    }
}

static void formats(const opts *o)
{
    json_t *arr = json_array();
    if (!o->json)
        printf("%-8s %5s %4s %4s %5s  %-24s %-24s %-24s %6s  %s\n", "name", "bits", "exp", "man", "bias", "max finite",
               "min normal", "min subnormal", "digits", "specials");
    for (const fpk_format *const *p = fpk_formats; *p; p++) {
        const fpk_format *f = *p;
        bool subnormals = f->man_bits > 0 && f->special != FPK_SPECIAL_E8M0;
        char *maxv = exact_text(f, f->max_finite), *minn = exact_text(f, min_normal(f)),
             *mins = subnormals ? exact_text(f, 1) : cli_strf("none");
        double digits = (f->man_bits + 1) * log10(2.0);
        const char *spec = specials_text(f);
        if (o->json) {
            json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:f,s:s}", "name", f->name,
                                                 "aliases", f->aliases, "width", f->width, "exp_bits", f->exp_bits,
                                                 "man_bits", f->man_bits, "bias", f->bias, "max_finite", maxv,
                                                 "min_normal", minn, "min_subnormal", mins, "decimal_digits",
                                                 digits, "specials", spec));
        } else {
            /* Long exact values are shown with their first digits here;
             * --info gives every digit. */
            char a[25], b[25], c[25];
            snprintf(a, sizeof a, "%.6g", fpk_to_double(f, f->max_finite));
            snprintf(b, sizeof b, "2^%d", f->emin);
            if (subnormals)
                snprintf(c, sizeof c, "2^%d", f->emin - f->man_bits);
            else
                snprintf(c, sizeof c, "none");
            printf("%-8s %5d %4d %4d %5d  %-24s %-24s %-24s %6.2f  %s\n", f->name, f->width, f->exp_bits, f->man_bits,
                   f->bias, a, b, c, digits, spec);
        }
        free(maxv), free(minn), free(mins);
    }
    if (o->json) {
        json_t *j = json_pack("{s:o}", "formats", arr);
        json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(j);
    } else {
        json_decref(arr);
    }
}

/* Whether ARG looks like a value rather than an option: "-3e-8", "-inf". */
static bool is_value(const char *arg)
{
    if (arg[0] != '-')
        return true;
    const char *p = arg + 1;
    return isdigit((unsigned char)*p) || *p == '.' || strncasecmp(p, "inf", 3) == 0 || strcasecmp(p, "nan") == 0;
}

/* What the tool's own options set. */
typedef struct own_opts {
    bool json, list_formats;
    const char *info, *table;
} own_opts;

static void own_option(void *state, int key, char *const *v)
{
    own_opts *o = state;
    if (key == OPT_JSON)
        o->json = true;
    else if (key == OPT_INFO)
        o->info = v[0];
    else if (key == OPT_TABLE)
        o->table = v[0];
    else if (key == OPT_LIST_FORMATS)
        o->list_formats = true;
}

static const cli_tool tool = {
    .name = "fpinspect",
    .synopsis = synopsis,
    .intro = "VALUE is a bit pattern (0x3c00, 0b0011110000000000), a decimal (1.1, -3e-8), a "
             "hexadecimal float (0x1.8p-3), inf, -inf or nan.",
    .opts = options,
    .own = own_option,
    .is_operand = is_value,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    /* the reference holds any exponent a value can be written with, short
     * of 2^(2^62) */
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_set_emin(mpfr_get_emin_min());
    cli_common c;
    cli_common_init(&c);
    own_opts own = {0};
    cli_parse(&tool, &c, argc, argv, &own);
    if (c.ctx.round == FPK_SR)
        cli_die(CLI_EXIT_USAGE, "--round sr: fpinspect shows deterministic roundings only");
    opts o = {.fmt = c.format ? c.format : &fpk_fp32, .ctx = c.ctx, .json = own.json};
    o.nto = c.nto;
    memcpy(o.to, c.to, sizeof c.to);

    if (!c.noperands && !own.info && !own.table && !own.list_formats) {
        cli_common_free(&c);
        return cli_usage_error(&tool);
    }
    if (own.info)
        info(cli_format(own.info), &o);
    if (own.table)
        table(cli_format(own.table), &o);
    if (own.list_formats)
        formats(&o);
    for (int i = 0; i < c.noperands; i++)
        inspect(c.operands[i], &o);
    cli_common_free(&c);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(CLI_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno));
    return 0;
}
