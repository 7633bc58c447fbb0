/* Decimal texts of values for fpinspect's reports: exact, or shortened to
 * fit a terminal; and the exact value of a number as given. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpinspect.h"

/* SIGN, the digits D (no leading zero) and X, the decimal exponent of
 * D[0], in the library's style: plain for -5 <= X < 16, else scientific
 * with a signed exponent of at least two digits.  MORE adds "..." after
 * the digits (before the exponent), and then plain needs every digit
 * before the point in D. */
static char *styled(const char *sign, const char *d, long x, bool more)
{
    static const char zeros[] = "0000000000000000";
    long nd = (long)strlen(d);
    const char *dots = more ? "..." : "";
    if (x >= 16 || x < -5 || (more && x >= nd))
        return cli_strf("%s%c%s%s%se%+03ld", sign, d[0], d[1] ? "." : "", d + 1, dots, x);
    if (x < 0)
        return cli_strf("%s0.%.*s%s%s", sign, (int)(-x - 1), zeros, d, dots);
    if (nd <= x + 1)
        return cli_strf("%s%s%.*s", sign, d, (int)(x + 1 - nd), zeros);
    return cli_strf("%s%.*s.%s%s", sign, (int)(x + 1), d, d + x + 1, dots);
}

char *mpfr_exact(mpfr_srcptr x)
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
    bool neg = d[0] == '-';
    char *out = styled(neg ? "-" : "", d + neg, (long)e10 - 1, false);
    mpfr_free_str(d);
    return out;
}

char *decimal_short(const char *exact, int digits)
{
    const char *p = exact + (exact[0] == '-');
    if (*p < '0' || *p > '9')
        return cli_strf("%s", exact); /* inf, nan */
    /* the significant digits, and the decimal exponent of the first */
    char *d = cli_xcalloc(strlen(exact) + 1, 1);
    size_t nd = 0;
    long point = -1, lead = 0; /* digits before the point; zeros before the first */
    for (; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
        if (*p == '.')
            point = (long)(nd + (size_t)lead);
        else if (nd == 0 && *p == '0')
            lead++;
        else
            d[nd++] = *p;
    }
    if (nd <= (size_t)digits || nd == 0) {
        free(d);
        return cli_strf("%s", exact);
    }
    long x = (point < 0 ? (long)nd + lead : point) - lead - 1;
    if (*p == 'e')
        x += strtol(p + 1, NULL, 10);
    d[digits] = '\0';
    char *out = styled(exact[0] == '-' ? "-" : "", d, x, true);
    free(d);
    return out;
}

/* Text of A in F from one of the library's writers. */
static char *lib_text(size_t (*writer)(const fpk_format *, fpk_bits, char *, size_t),
                      const fpk_format *f, fpk_bits a)
{
    size_t n = writer(f, a, NULL, 0) + 1;
    char *s = cli_xcalloc(n, 1);
    writer(f, a, s, n);
    return s;
}

char *exact_text(const fpk_format *f, fpk_bits a)
{
    return lib_text(fpk_format_exact, f, a);
}

char *shortest_text(const fpk_format *f, fpk_bits a)
{
    return lib_text(fpk_format_shortest, f, a);
}

char *value_text(const fpk_format *f, fpk_bits a, const opts *o, int digits)
{
    char *s = exact_text(f, a);
    if (o->exact)
        return s;
    char *t = decimal_short(s, digits);
    free(s);
    return t;
}

char *pow2_text(long e, const opts *o)
{
    mpfr_t x;
    mpfr_init2(x, 2);
    mpfr_set_si_2exp(x, 1, e, MPFR_RNDN);
    char *s = mpfr_exact(x);
    mpfr_clear(x);
    if (o->exact)
        return s;
    char *t = decimal_short(s, SHORT_DIGITS);
    free(s);
    return t;
}

void value_of(mpfr_ptr x, const fpk_format *f, fpk_bits a)
{
    mpfr_set_d(x, fpk_to_double(f, a), MPFR_RNDN);
}

double rel_error(mpfr_srcptr x, mpfr_srcptr z)
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

int read_number(mpfr_ptr x, const char *s)
{
    mpfr_set_prec(x, 4096);
    mpfr_clear_flags();
    const char *hat = strchr(s, '^');
    if (!hat) {
        mpfr_strtofr(x, s, NULL, 0, MPFR_RNDN);
    } else { /* [+-]K*2^E or [+-]2^E: K, then scaled by 2^E exactly */
        bool neg = s[0] == '-';
        const char *star = strchr(s, '*');
        char *k = star ? cli_strf("%.*s", (int)(star - s), s) : cli_strf("%s1", neg ? "-" : "");
        mpfr_strtofr(x, k, NULL, 10, MPFR_RNDN);
        free(k);
        errno = 0;
        long e = strtol(hat + 1, NULL, 10);
        if (mpfr_zero_p(x))
            return 0;
        if (errno == ERANGE)
            return e > 0 ? 1 : -1;
        mpfr_mul_2si(x, x, e, MPFR_RNDN);
    }
    return mpfr_overflow_p() ? 1 : mpfr_underflow_p() ? -1 : 0;
}
