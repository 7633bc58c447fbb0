/* The report of one VALUE: a number is rounded once, straight from its
 * exact value, into the --format format and into each --to format, and
 * the report leads with those results; a bit pattern is an encoding of the
 * --format format, converted into each --to format.  Then the --format
 * encoding in detail: fields, value, ulp and neighbours. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fpinspect.h"

/* The fields line with its legend when the line fits, without it for the
 * widest formats (fp64's 52 mantissa bits). */
static void print_fields(const char *s, const char *e, const char *m)
{
    char *line = cli_strf("  fields       %s | %s | %s", s, e, m);
    const char *legend = "   (sign | exponent | mantissa)";
    printf("%s%s\n", line, strlen(line) + strlen(legend) <= TABLE_WIDTH ? legend : "");
    free(line);
}

/* The description of encoding A of F: fields, value, ulp and neighbours,
 * printed, or (--json) returned as an object. */
static json_t *describe(const fpk_format *f, fpk_bits a, const opts *o)
{
    fpk_class k = fpk_classify(f, a);
    bool sign = fpk_signbit(f, a);
    fpk_bits ef = (a & f->exp_mask) >> f->man_bits, man = a & f->man_mask;
    char sbits[2], ebits[16], mbits[64];
    bin(sbits, sign, f->sign_mask != 0); /* E8M0 has no sign bit */
    bin(ebits, ef, f->exp_bits);
    bin(mbits, man, f->man_bits);
    char *hexs = bits_hex(f, a);
    bool finite = k <= FPK_CLASS_NORMAL;
    int unbiased = ef == 0 ? f->emin : (int)ef - f->bias;
    int ulp_exp = unbiased - f->man_bits;
    uint64_t sig = (k == FPK_CLASS_NORMAL ? (fpk_bits)1 << f->man_bits : 0) | man;
    fpk_ctx nc = fpk_ctx_default();
    fpk_bits below = fpk_next_down(f, a, &nc), above = fpk_next_up(f, a, &nc);
    char *below_h = bits_hex(f, below), *above_h = bits_hex(f, above);
    char *shortest = shortest_text(f, a);
    opts exact = *o;
    exact.exact = true;
    const opts *vo = o->json ? &exact : o; /* JSON: every digit */
    char *value = value_text(f, a, vo, SHORT_DIGITS), *ulp = finite ? pow2_text(ulp_exp, vo) : NULL;
    char *below_v = value_text(f, below, vo, SHORT_DIGITS), *above_v = value_text(f, above, vo, SHORT_DIGITS);

    json_t *j = NULL;
    if (o->json) {
        j = json_object();
        json_object_set_new(j, "format", json_string(f->name));
        json_object_set_new(j, "bits", json_string(hexs));
        json_object_set_new(j, "width", json_integer(f->width));
        json_object_set_new(j, "fields", json_pack("{s:s,s:s,s:s}", "sign", sbits, "exponent", ebits, "mantissa", mbits));
        json_object_set_new(j, "sign", json_integer(sign));
        json_object_set_new(j, "exponent", json_pack("{s:I,s:i,s:i}", "biased", (json_int_t)ef, "unbiased", unbiased, "bias", f->bias));
        json_object_set_new(j, "class", json_string(class_name(k)));
        json_object_set_new(j, "value", json_string(value));
        json_object_set_new(j, "shortest", json_string(shortest));
        if (finite) {
            char *sigs = cli_strf("%c.%s", k == FPK_CLASS_NORMAL ? '1' : '0', mbits);
            json_object_set_new(j, "significand", json_string(sigs));
            json_object_set_new(j, "m", json_integer((json_int_t)sig));
            json_object_set_new(j, "e", json_integer(ulp_exp));
            json_object_set_new(j, "ulp", json_pack("{s:i,s:s}", "log2", ulp_exp, "value", ulp));
            free(sigs);
        }
        json_object_set_new(j, "below", json_pack("{s:s,s:s}", "bits", below_h, "value", below_v));
        json_object_set_new(j, "above", json_pack("{s:s,s:s}", "bits", above_h, "value", above_v));
    } else {
        printf("%s %s\n", f->name, hexs);
        print_fields(sbits, ebits, mbits);
        if (f->sign_mask)
            printf("  sign         %s (%c)\n", sbits, sign ? '-' : '+');
        else
            printf("  sign         none (unsigned)\n");
        printf("  exponent     %s = %" PRIu64 ", unbiased %d, bias %d%s\n", ebits, ef, unbiased, f->bias,
               k == FPK_CLASS_SUBNORMAL || k == FPK_CLASS_ZERO ? " (field 0 reads as emin)" : "");
        if (finite)
            printf("  significand  %c.%s (binary)\n", k == FPK_CLASS_NORMAL ? '1' : '0', mbits);
        printf("  class        %s\n", class_name(k));
        printf("  value        %s\n", value);
        if (finite)
            printf("               = %s%" PRIu64 " × 2^%d\n", sign ? "-" : "", sig, ulp_exp);
        printf("  shortest     %s\n", shortest);
        if (finite)
            printf("  ulp          2^%d = %s\n", ulp_exp, ulp);
        printf("  below        %s  %s\n", below_h, below_v);
        printf("  above        %s  %s\n", above_h, above_v);
    }
    free(hexs), free(value), free(shortest), free(ulp), free(below_v), free(above_v), free(below_h), free(above_h);
    return j;
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

/* The number ARG rounded once into F under O's context. */
static result round_input(const fpk_format *f, const char *arg, mpfr_srcptr x, const opts *o)
{
    fpk_ctx c = o->ctx;
    fpk_bits z;
    fpk_error err;
    if (fpk_parse(f, arg, &z, &c, &err) != FPK_OK)
        cli_die(CLI_EXIT_USAGE, "%s", err.msg);
    return judge(f, z, c.flags, x);
}

/* The --format's rounding of the number X as JSON: direction, error. */
static json_t *rounding_json(const result *r, mpfr_srcptr x, const opts *o)
{
    mpfr_t z, d;
    mpfr_inits2(4096, z, d, (mpfr_ptr)0);
    value_of(z, r->f, r->bits);
    mpfr_sub(d, z, x, MPFR_RNDN);
    char err_s[64];
    mpfr_snprintf(err_s, sizeof err_s, "%.6Rg", d);
    int dir = mpfr_nan_p(x) || mpfr_nan_p(z) ? 0 : mpfr_cmp(z, x);
    const char *how = mpfr_nan_p(z) && !mpfr_nan_p(x)   ? "NaN"                  /* inf into e4m3 */
                      : mpfr_nan_p(x) && !mpfr_nan_p(z) ? "no NaN in the format" /* NaN into e2m1 */
                      : dir > 0                         ? "up"
                      : dir < 0                         ? "down"
                                                        : "exact";
    mpfr_clears(z, d, (mpfr_ptr)0);
    return json_pack("{s:s,s:s,s:s,s:o,s:o}", "mode", fpk_round_name(o->ctx.round), "direction", how,
                     "error", err_s, "rel_error", num_json(r->rel_error), "flags", flags_json(r->flags));
}

void report_value(const char *arg, const opts *o)
{
    const fpk_format *f = o->fmt;
    if (!*arg)
        cli_die(CLI_EXIT_USAGE, "empty value: give a bit pattern, a decimal, a hex float, 2^K, inf or nan");
    fpk_bits a;
    bool pattern = parse_pattern(arg, f, &a);
    mpfr_t x;
    mpfr_init2(x, 64);
    result *rows = cli_xcalloc((size_t)o->nto + 1, sizeof *rows);
    int n = 0;
    json_t *to = json_array(), *rounding = NULL;
    if (pattern) {
        value_of(x, f, a);
        for (int i = 0; i < o->nto; i++) {
            fpk_ctx c = o->ctx;
            fpk_bits b = fpk_convert(o->to[i], f, a, &c);
            rows[n] = judge(o->to[i], b, c.flags, x);
            json_array_append_new(to, result_json(&rows[n++], "encoding"));
        }
    } else {
        /* The syntax first (its message names the offset), then the range
         * the error is measured in: the reference holds any exponent short
         * of 2^(2^62). */
        fpk_error err;
        if (fpk_parse(f, arg, NULL, NULL, &err) != FPK_OK)
            cli_die(CLI_EXIT_USAGE, "%s", err.msg);
        int range = read_number(x, arg);
        if (range)
            cli_die(CLI_EXIT_USAGE, "%s: %s 2^%ld in magnitude, outside the range fpinspect measures rounding in",
                    arg, range > 0 ? "at least" : "below", (long)(range > 0 ? mpfr_get_emax() : mpfr_get_emin() - 1));
        rows[n++] = round_input(f, arg, x, o);
        a = rows[0].bits;
        rounding = rounding_json(&rows[0], x, o);
        for (int i = 0; i < o->nto; i++) {
            result r = round_input(o->to[i], arg, x, o);
            json_array_append_new(to, result_json(&r, "input"));
            if (o->to[i] != f) /* the --format's row is the first */
                rows[n++] = r;
        }
    }
    if (o->json) {
        json_t *j = describe(f, a, o);
        json_object_set_new(j, "input", json_string(arg));
        if (rounding)
            json_object_set_new(j, "rounding", rounding);
        json_object_set_new(j, "to", to);
        print_json(j);
    } else {
        char *label = results_label(o);
        if (!pattern) {
            char *shown = table_shorten(arg, TABLE_WIDTH - 6);
            printf("input %s\n", shown);
            print_results(label, rows, n, o);
            free(shown);
        }
        describe(f, a, o);
        if (pattern && n)
            print_results(label, rows, n, o);
        putchar('\n');
        free(label);
        json_decref(to);
        json_decref(rounding);
    }
    free(rows);
    mpfr_clear(x);
}
