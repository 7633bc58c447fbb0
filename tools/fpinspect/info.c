/* --info: a format's parameters, its extreme values, and where values
 * round to zero and overflow under the options given, found by asking the
 * library (fpk_parse of exact values around each boundary). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpinspect.h"

/* The special-value rule. */
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
 * but with --exact. */
static char *scaled_text(uint64_t units, long e, const opts *o)
{
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_ui_2exp(v, units, e, MPFR_RNDN);
    char *d = mpfr_exact(v), *out;
    bool pow2 = units != 0 && (units & (units - 1)) == 0;
    if (strlen(d) <= 28 || o->exact) {
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
        out = cli_strf("0 < %s < %s", x, t = scaled_text(b, unit, o));
    else if (to_zero(f, o, neg, h, unit))
        out = cli_strf("0 < %s <= %s", x, t = scaled_text(h, unit, o));
    else if (to_zero(f, o, neg, h - 1, unit))
        out = cli_strf("0 < %s < %s", x, t = scaled_text(h, unit, o));
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
        out = cli_strf("%s %s %s %s", x, rel[i], t = scaled_text(at, unit, o), what);
    }
    free(t);
    return out;
}

void report_info(const fpk_format *f, const opts *o)
{
    fpk_bits minn = min_normal(f), mins = 1;
    int m = f->man_bits;
    double digits = (m + 1) * log10(2.0);
    int binades = f->emax - f->emin + 1;
    bool signed_ = f->sign_mask != 0, subnormals = m > 0 && f->special != FPK_SPECIAL_E8M0;
    char *z_pos = zero_threshold(f, o, false), *o_pos = overflow_threshold(f, o, false);
    char *z_neg = signed_ ? zero_threshold(f, o, true) : cli_strf("no negative numbers");
    char *o_neg = signed_ ? overflow_threshold(f, o, true) : cli_strf("no negative numbers");
    opts vo = *o;
    vo.exact |= o->json; /* JSON: every digit */
    char *maxv = value_text(f, f->max_finite, &vo, SHORT_DIGITS), *minnv = value_text(f, minn, &vo, SHORT_DIGITS);
    char *minsv = subnormals ? value_text(f, mins, &vo, SHORT_DIGITS) : cli_strf("none");
    char *eps = pow2_text(-m, &vo), *u = pow2_text(-m - 1, &vo);
    char *maxh = bits_hex(f, f->max_finite), *minnh = bits_hex(f, minn);
    char *minsh = subnormals ? bits_hex(f, mins) : cli_strf("none");
    char *nanh = bits_hex(f, f->nan), *infh = f->inf ? bits_hex(f, f->inf) : cli_strf("none");
    const char *spec = rule_text(f), *mode = fpk_round_name(o->ctx.round);
    if (o->json) {
        print_json(json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:s,s:{s:s,s:s},s:{s:s,s:s},s:{s:s,s:s},"
                             "s:s,s:s,s:{s:s,s:i},s:{s:s,s:i},s:f,s:i,s:i,s:s,"
                             "s:{s:s,s:s},s:{s:s,s:s}}",
                             "format", f->name, "aliases", f->aliases, "width", f->width,
                             "exp_bits", f->exp_bits, "man_bits", m, "bias", f->bias, "special", spec,
                             "max_finite", "bits", maxh, "value", maxv, "min_normal", "bits", minnh, "value", minnv,
                             "min_subnormal", "bits", minsh, "value", minsv, "nan", nanh, "inf", infh,
                             "epsilon", "value", eps, "log2", -m, "unit_roundoff", "value", u, "log2", -m - 1,
                             "decimal_digits", digits, "normal_binades", binades, "subnormal_binades", m,
                             "round", mode, "to_zero", "positive", z_pos, "negative", z_neg,
                             "overflow", "positive", o_pos, "negative", o_neg));
    } else {
        printf("%s%s%s%s\n", f->name, *f->aliases ? " (also " : "", f->aliases, *f->aliases ? ")" : "");
        printf("  width            %d bits: %s sign, %d exponent, %d mantissa\n", f->width,
               signed_ ? "1" : "no", f->exp_bits, m);
        printf("  bias             %d (emin %d, emax %d)\n", f->bias, f->emin, f->emax);
        /* the encodings after the rule, or under it where the line would
         * be too long */
        int len = snprintf(NULL, 0, "  special values   %s; NaN %s, inf %s", spec, nanh, infh);
        printf("  special values   %s%s", spec, len <= TABLE_WIDTH ? "; " : "\n                   ");
        printf("NaN %s, inf %s\n", nanh, infh);
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
        /* positive values, then negative ones on a line of their own */
        printf("  to zero (%s)    %s\n                   %s\n", mode, z_pos, z_neg);
        printf("  overflow (%s)   %s\n                   %s\n", mode, o_pos, o_neg);
    }
    free(maxv), free(minnv), free(minsv), free(eps), free(u), free(maxh), free(minnh), free(minsh), free(nanh), free(infh);
    free(z_pos), free(z_neg), free(o_pos), free(o_neg);
}
