/* fpk_parse against the MPFR reference (ref_parse) on bits and flags, for
 * every built-in format, deterministic mode and option variant: exact ties
 * and ties one part in 10^30 off, subnormal boundaries, overflow thresholds,
 * 40+ digit values, hexadecimal floats, multiples of powers of two
 * ("3*2^-10", against MPFR scaling the factor), absurd exponents and
 * random text.
 * Then the syntax (a POSIX regular expression as the independent grammar),
 * and fpk_format_exact / fpk_format_shortest: hand-computed texts, round
 * trips over every 8- and 16-bit encoding, and the shortest output against
 * a search made with mpfr_get_str and ref_parse. */
#include <check.h>
#include <errno.h>
#include <gmp.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit.h"
#include "ref.h"
#include "testutil.h"

#define IV FPK_INVALID
#define OF FPK_OVERFLOW
#define UF FPK_UNDERFLOW
#define IX FPK_INEXACT

/* Room for any text made here: fp64's longest exact value has 767 digits. */
#define TEXT_MAX 4096

/* A decimal: digits d[0..] (d[0] may be '0' only in perturbed values) with
 * d[0] of weight 10^x. */
typedef struct dec {
    char d[TEXT_MAX];
    long x;
} dec;

typedef struct text {
    char s[TEXT_MAX];
} text;

/* Appends to T like snprintf; text longer than TEXT_MAX is a test bug. */
static void tappend(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tappend(text *t, const char *fmt, ...)
{
    size_t n = strlen(t->s);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s + n, sizeof t->s - n, fmt, ap);
    va_end(ap);
    ck_assert_int_lt(k, (int)(sizeof t->s - n));
}

/* Counts one case of a property: passes if OK, else reported with WHAT. */
static void expect(tu_report *rep, bool ok, const char *what, ...)
    __attribute__((format(printf, 3, 4)));

static void expect(tu_report *rep, bool ok, const char *what, ...)
{
    if (ok) {
        rep->cases++;
        rep->total_cases++;
        return;
    }
    char buf[512];
    va_list ap;
    va_start(ap, what);
    vsnprintf(buf, sizeof buf, what, ap);
    va_end(ap);
    tu_fail(rep, "%s", buf);
}

/* The number of built-in formats. */
static size_t format_count(void)
{
    size_t n = 0;
    while (fpk_formats[n])
        n++;
    return n;
}

/* The exact decimal digits of |X| (finite, nonzero), trailing zeros
 * dropped, from X = z * 2^e: z * 2^e, or z * 5^-e * 10^e. */
static void dec_of(mpfr_srcptr x, dec *v)
{
    mpz_t z, p;
    mpz_inits(z, p, NULL);
    mpfr_exp_t e = mpfr_get_z_2exp(z, x);
    mpz_abs(z, z);
    long r = 0;
    if (e >= 0) {
        mpz_mul_2exp(z, z, (mp_bitcnt_t)e);
    } else {
        mpz_ui_pow_ui(p, 5, (unsigned long)-e);
        mpz_mul(z, z, p);
        r = e;
    }
    ck_assert_uint_lt(mpz_sizeinbase(z, 10) + 2, sizeof v->d);
    mpz_get_str(v->d, 10, z);
    size_t n = strlen(v->d);
    v->x = r + (long)n - 1;
    while (n > 1 && v->d[n - 1] == '0')
        v->d[--n] = '\0';
    mpz_clears(z, p, NULL);
}

/* V plus one unit of its 30th digit past the last (one part in ~10^30). */
static void dec_plus(const dec *v, dec *out)
{
    *out = *v;
    strcat(out->d, "000000000000000000000000000001");
}

/* V minus one unit of its 30th digit past the last: the last digit (never
 * 0) less one, then thirty 9s. */
static void dec_minus(const dec *v, dec *out)
{
    *out = *v;
    out->d[strlen(out->d) - 1]--;
    strcat(out->d, "999999999999999999999999999999");
}

/* V followed by 40 random digits: a value of 40+ digits just above V. */
static void dec_tail(const dec *v, dec *out, tu_rng *r)
{
    *out = *v;
    size_t n = strlen(out->d);
    for (int i = 0; i < 40; i++)
        out->d[n++] = (char)('0' + tu_rng_below(r, 10));
    out->d[n] = '\0';
}

/* V as text in one of several equivalent spellings chosen by STYLE:
 * "d.ddde-X", plain "ddd.ddd" or ".000ddd", an integer significand with an
 * 'E' exponent, or leading zeros with an exponent. */
static void render(const dec *v, bool neg, int style, text *t)
{
    const char *d = v->d;
    long n = (long)strlen(d);
    t->s[0] = '\0';
    tappend(t, "%s", neg ? "-" : (style & 4) ? "+" : "");
    switch (style & 3) {
    case 0:
        tappend(t, "%c%s%s", d[0], n > 1 ? "." : "", d + 1);
        tappend(t, "e%ld", v->x);
        break;
    case 1:
        if (v->x >= 60 || v->x <= -60) {
            tappend(t, "%c.%se%+ld", d[0], d + 1, v->x);
        } else if (v->x >= 0) {
            for (long i = 0; i <= v->x || i < n; i++) {
                if (i == v->x + 1)
                    tappend(t, ".");
                tappend(t, "%c", i < n ? d[i] : '0');
            }
        } else {
            tappend(t, "%s.", (style & 4) ? "0" : "");
            for (long i = -1; i > v->x; i--)
                tappend(t, "0");
            tappend(t, "%s", d);
        }
        break;
    case 2:
        tappend(t, "%sE%ld", d, v->x - n + 1);
        break;
    default:
        tappend(t, "000.%se%ld", d, v->x + 1);
        break;
    }
}

/* The value of X in hexadecimal: z * 2^e written "0x<z>p<e>" or
 * "0X<z0>.<rest>P<e'>", perturbed by DELTA (-1, 0, +1) units of 2^-32
 * relative to z's last digit. */
static void render_hex(mpfr_srcptr x, int delta, int style, text *t)
{
    mpz_t z;
    mpz_init(z);
    mpfr_exp_t e = mpfr_get_z_2exp(z, x);
    bool neg = mpz_sgn(z) < 0;
    mpz_abs(z, z);
    if (delta) {
        mpz_mul_2exp(z, z, 32);
        e -= 32;
        if (delta > 0)
            mpz_add_ui(z, z, 1);
        else
            mpz_sub_ui(z, z, 1);
    }
    char h[TEXT_MAX];
    ck_assert_uint_lt(mpz_sizeinbase(z, 16) + 2, sizeof h);
    mpz_get_str(h, 16, z);
    t->s[0] = '\0';
    if (style & 1)
        tappend(t, "%s0X%c.%sP%+ld", neg ? "-" : "", h[0], h + 1,
                (long)e + 4 * ((long)strlen(h) - 1));
    else
        tappend(t, "%s0x%sp%ld", neg ? "-" : "", h, (long)e);
    mpz_clear(z);
}

/* The reference for "[+-]K*2^E" and "[+-]2^E", which ref_parse does not
 * read: MPFR reads K toward zero at a precision far above any format's and
 * scales it by 2^E exactly; an E beyond +-10^6 makes, as ref_parse's
 * absurd exponents do, a stand-in 2^(+-4000) (the factors here are never
 * far from 1, so the product is as far outside every format). */
static ref_result ref_parse_scaled(const fpk_format *f, const char *s, const fpk_ctx *c)
{
    const char *star = strchr(s, '*'), *hat = strchr(s, '^');
    ck_assert_ptr_nonnull(hat);
    bool neg = s[0] == '-';
    size_t len = strlen(s);
    char *k = malloc(len + 3);
    ck_assert_ptr_nonnull(k);
    if (star)
        snprintf(k, len + 3, "%.*s", (int)(star - s), s);
    else
        snprintf(k, len + 3, "%s", neg ? "-1" : "1");
    mpfr_prec_t prec = 4096;
    if ((mpfr_prec_t)(4 * len + 64) > prec)
        prec = (mpfr_prec_t)(4 * len + 64);
    mpfr_t x;
    mpfr_init2(x, prec);
    char *end;
    int ternary = mpfr_strtofr(x, k, &end, 10, MPFR_RNDZ);
    ck_assert_msg(*end == '\0' && end != k, "the factor of \"%.80s\" is not a number", s);
    int dir = ternary < 0 ? 1 : ternary > 0 ? -1 : 0; /* sign(true - x) */
    errno = 0;
    long long e = strtoll(hat + 1, &end, 10);
    ck_assert(*end == '\0');
    if (!mpfr_zero_p(x)) {
        if (errno == ERANGE || e > 1000000 || e < -1000000) {
            mpfr_set_si_2exp(x, neg ? -1 : 1, e > 0 ? 4000 : -4000, MPFR_RNDN);
            dir = (e > 0) != neg ? 1 : -1;
        } else {
            ck_assert_int_eq(mpfr_mul_2si(x, x, (long)e, MPFR_RNDN), 0);
        }
    }
    ref_result r = ref_round(f, x, dir, c);
    mpfr_clear(x);
    free(k);
    return r;
}

/* The reference result for any text fpk_parse accepts. */
static ref_result ref_text(const fpk_format *f, const char *s, const fpk_ctx *c)
{
    return strchr(s, '^') ? ref_parse_scaled(f, s, c) : ref_parse(f, s, c);
}

/* The value N / 10^J (N >= 0) times 2^E as "[-]ddd.ddd*2^E". */
static void render_factor(mpz_srcptr n, long j, long e, bool neg, text *t)
{
    char d[TEXT_MAX];
    ck_assert_uint_lt(mpz_sizeinbase(n, 10) + 2, sizeof d);
    mpz_get_str(d, 10, n);
    long len = (long)strlen(d);
    t->s[0] = '\0';
    tappend(t, "%s", neg ? "-" : "");
    if (j == 0)
        tappend(t, "%s", d);
    else if (len <= j)
        tappend(t, "0.%.*s%s", (int)(j - len), "000000000000000000000000000000000000000000000000", d);
    else
        tappend(t, "%.*s.%s", (int)(len - j), d, d + len - j);
    tappend(t, "*2^%ld", e);
}

/* The value of X (nonzero) as a multiple of a power of two: z * 2^e with
 * z = x's integer significand, then the factor z / 2^J written in decimal
 * (z * 5^J / 10^J) for J = STYLE % 13, perturbed by DELTA (-1, 0, +1) units
 * of its 30th digit past the last; "2^e" itself when X is a power of two,
 * STYLE is 0 and DELTA 0. */
static void render_scaled(mpfr_srcptr x, int delta, int style, text *t)
{
    mpz_t z, n;
    mpz_inits(z, n, NULL);
    long e = (long)mpfr_get_z_2exp(z, x);
    bool neg = mpz_sgn(z) < 0;
    mpz_abs(z, z);
    long j = style % 13;
    if (style == 0 && delta == 0 && mpz_popcount(z) == 1) {
        t->s[0] = '\0';
        tappend(t, "%s2^%ld", neg ? "-" : "", e + (long)mpz_scan1(z, 0));
    } else {
        mpz_ui_pow_ui(n, 5, (unsigned long)j);
        mpz_mul(n, n, z);
        if (delta) {
            mpz_ui_pow_ui(z, 10, 30);
            mpz_mul(n, n, z);
            if (delta > 0)
                mpz_add_ui(n, n, 1);
            else
                mpz_sub_ui(n, n, 1);
            j += 30;
        }
        render_factor(n, j, e + style % 13, neg, t);
    }
    mpz_clears(z, n, NULL);
}

/* Compares fpk_parse with ref_parse for S in F under every deterministic
 * mode and option variant, on bits and flags. */
static void compare_all_modes(tu_report *rep, const fpk_format *f, const char *s)
{
    for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
        for (int vi = 0; vi < TU_VARIANT_COUNT; vi++) {
            fpk_ctx c = tu_ctx(tu_modes[mi], &tu_variants[vi]);
            ref_result want = ref_text(f, s, &c);
            fpk_bits z = 0;
            fpk_error err;
            if (fpk_parse(f, s, &z, &c, &err) != FPK_OK) {
                tu_fail(rep, "%s: \"%.80s\" rejected: %s", f->name, s, err.msg);
                continue;
            }
            tu_check(rep, f, want, z, c.flags, "%s %s %s \"%.100s\"", f->name,
                     tu_mode_name(tu_modes[mi]), tu_variants[vi].name, s);
        }
    }
}

/* The value of encoding A (finite) of F, exactly. */
static void decode(mpfr_ptr x, const fpk_format *f, fpk_bits a)
{
    ck_assert(ref_decode(x, f, a));
}

/* Texts around the value X: X itself, one part in 10^30 above and below,
 * X with 40 more digits, and its hexadecimal and K*2^E forms, exact and
 * perturbed; each with both signs, each compared under every mode and
 * variant. */
static void compare_around(tu_report *rep, const fpk_format *f, mpfr_srcptr x, tu_rng *r)
{
    text t;
    for (int neg = 0; neg < 2; neg++) {
        if (mpfr_zero_p(x)) {
            compare_all_modes(rep, f, neg ? "-0" : "0");
            compare_all_modes(rep, f, neg ? "-0*2^-99999" : "0.000*2^99999");
            continue;
        }
        dec v, w;
        dec_of(x, &v);
        render(&v, neg, (int)tu_rng_below(r, 8), &t);
        compare_all_modes(rep, f, t.s);
        dec_plus(&v, &w);
        render(&w, neg, (int)tu_rng_below(r, 8), &t);
        compare_all_modes(rep, f, t.s);
        dec_minus(&v, &w);
        render(&w, neg, (int)tu_rng_below(r, 8), &t);
        compare_all_modes(rep, f, t.s);
        dec_tail(&v, &w, r);
        render(&w, neg, (int)tu_rng_below(r, 8), &t);
        compare_all_modes(rep, f, t.s);
        for (int delta = -1; delta <= 1; delta++) {
            mpfr_t y;
            mpfr_init2(y, mpfr_get_prec(x));
            mpfr_set(y, x, MPFR_RNDN);
            if (neg)
                mpfr_neg(y, y, MPFR_RNDN);
            render_hex(y, delta, (int)tu_rng_below(r, 2), &t);
            compare_all_modes(rep, f, t.s);
            render_scaled(y, delta, (int)tu_rng_below(r, 13), &t);
            compare_all_modes(rep, f, t.s);
            mpfr_clear(y);
        }
    }
}

/* Positive finite encodings where rounding is delicate: zero and the
 * smallest subnormals, the subnormal/normal boundary, 1 and its neighbours,
 * the largest finite numbers; then RANDOM ones from tu_gen. */
static size_t boundary_encodings(const fpk_format *f, fpk_bits *out, int random, tu_rng *r)
{
    fpk_bits one = (fpk_bits)f->bias << f->man_bits;
    fpk_bits minnorm = (fpk_bits)1 << f->man_bits;
    fpk_bits fixed[] = {0, 1, 2, 3, f->man_mask - 1, f->man_mask, minnorm, minnorm + 1,
                        one - 1, one, one + 1, f->max_finite - 1, f->max_finite};
    size_t n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i] <= f->max_finite) /* E8M0 has no mantissa: man_mask - 1 wraps */
            out[n++] = fixed[i];
    while (random > 0) {
        fpk_bits a = tu_gen(f, NULL, r) & ~f->sign_mask;
        if (a <= f->max_finite) {
            out[n++] = a;
            random--;
        }
    }
    return n;
}

/* Around each boundary encoding A of F: its value, the midpoint to the
 * next encoding (the exact tie), and above max finite the next point of
 * the unbounded grid (the overflow threshold is the midpoint below it) and
 * the point a quarter of the way there (the threshold of a format without
 * normal numbers, e1mY, on the grid of its precision). */
static void ties_around(tu_report *rep, const fpk_format *f, int random, tu_rng *r)
{
    fpk_bits enc[16 + 400];
    size_t n = boundary_encodings(f, enc, random, r);
    mpfr_t v, w, mid;
    mpfr_inits2(256, v, w, mid, NULL);
    for (size_t i = 0; i < n; i++) {
        fpk_bits a = enc[i];
        decode(v, f, a);
        if (a < f->max_finite) {
            decode(w, f, a + 1);
        } else { /* next on the unbounded grid: v + (v - pred) */
            decode(w, f, a - 1);
            ck_assert_int_eq(mpfr_mul_2ui(mid, v, 1, MPFR_RNDN), 0);
            ck_assert_int_eq(mpfr_sub(w, mid, w, MPFR_RNDN), 0);
            compare_around(rep, f, w, r);
            ck_assert_int_eq(mpfr_mul_ui(mid, v, 3, MPFR_RNDN), 0);
            ck_assert_int_eq(mpfr_add(mid, mid, w, MPFR_RNDN), 0);
            ck_assert_int_eq(mpfr_div_2ui(mid, mid, 2, MPFR_RNDN), 0);
            compare_around(rep, f, mid, r);
        }
        ck_assert_int_eq(mpfr_add(mid, v, w, MPFR_RNDN), 0);
        ck_assert_int_eq(mpfr_div_2ui(mid, mid, 1, MPFR_RNDN), 0);
        compare_around(rep, f, v, r);
        compare_around(rep, f, mid, r);
    }
    mpfr_clears(v, w, mid, NULL);
    tu_report_line(rep, "%s ties, boundaries, +-1e-30, 40+ digits, hex, K*2^E", f->name);
}

START_TEST(ties_and_boundaries)
{
    tu_report rep;
    tu_report_init(&rep, "check_parse");
    tu_rng r;
    tu_rng_init(&r, tu_seed("check_parse") + 1);
    int random = tu_exhaustive() ? 400 : 30;
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
        ties_around(&rep, *fp, random, &r);
    static const char *const names[] = {"e1m1", "e1m3", "e1m3fn", "e1m52", "e3m4"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ties_around(&rep, fpk_format_lookup(names[i]), random, &r);
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Random decimal texts: 1 to 45 digits, a random point, an exponent
 * anywhere from below F's smallest subnormal to above its overflow
 * threshold; random hexadecimal and K*2^E texts likewise. */
START_TEST(random_texts)
{
    tu_report rep;
    tu_report_init(&rep, "check_parse");
    tu_rng r;
    tu_rng_init(&r, tu_seed("check_parse") + 2);
    int count = tu_exhaustive() ? 3000 : 200;
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++) {
        const fpk_format *f = *fp;
        /* decimal exponents spanning 2^(emin - man_bits - 4) .. 2^(emax + 4):
         * 3/10 is below log10(2), so the span is a little wider */
        long lo = (long)(f->emin - f->man_bits - 4) * 3 / 10 - 2;
        long hi = (long)(f->emax + 4) * 3 / 10 + 3;
        long blo = f->emin - f->man_bits - 8, bhi = f->emax + 8;
        for (int i = 0; i < count; i++) {
            text t = {""};
            int ndig = 1 + (int)tu_rng_below(&r, 45);
            int point = (int)tu_rng_below(&r, (uint64_t)ndig + 2) - 1;
            tappend(&t, "%s", tu_rng_below(&r, 2) ? "-" : "");
            for (int k = 0; k < ndig; k++) {
                if (k == point)
                    tappend(&t, ".");
                tappend(&t, "%d", (int)tu_rng_below(&r, 10));
            }
            long e = lo + (long)tu_rng_below(&r, (uint64_t)(hi - lo + 1)) - (point >= 0 ? point : ndig);
            tappend(&t, "e%ld", e);
            compare_all_modes(&rep, f, t.s);

            text h = {""};
            tappend(&h, "%s0x", tu_rng_below(&r, 2) ? "-" : "");
            int nhex = 1 + (int)tu_rng_below(&r, 20);
            for (int k = 0; k < nhex; k++)
                tappend(&h, "%x", (unsigned)tu_rng_below(&r, 16));
            tappend(&h, "p%ld", blo + (long)tu_rng_below(&r, (uint64_t)(bhi - blo + 1)) - 4 * nhex);
            compare_all_modes(&rep, f, h.s);

            /* K*2^E: K of 1 to 25 digits with a random point, E such that
             * the product lands between blo and bhi (10^3 ~ 2^10) */
            text k = {""};
            ndig = 1 + (int)tu_rng_below(&r, 25);
            point = (int)tu_rng_below(&r, (uint64_t)ndig + 2) - 1;
            tappend(&k, "%s", tu_rng_below(&r, 2) ? "-" : "");
            for (int d = 0; d < ndig; d++) {
                if (d == point)
                    tappend(&k, ".");
                tappend(&k, "%d", (int)tu_rng_below(&r, 10));
            }
            long whole = point >= 0 ? point : ndig; /* digits before the point */
            tappend(&k, "*2^%ld", blo + (long)tu_rng_below(&r, (uint64_t)(bhi - blo + 1)) - whole * 10 / 3);
            compare_all_modes(&rep, f, k.s);
        }
        tu_report_line(&rep, "%s random decimal, hex and K*2^E texts", f->name);
    }
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Exponents beyond every format, beyond MPFR's range and beyond a long;
 * zeros with huge exponents; texts of 20000 and 10^6 digits; stochastic
 * rounding of a value too small for any random draw. */
START_TEST(absurd_texts)
{
    static const char *const texts[] = {
        "1e-99999999999", "-1e-99999999999", "1e99999999999", "-1e99999999999",
        "1e-999999999999999999999999999999", "9e999999999999999999999999999999",
        "0x1p-99999999999999999999", "-0x1p99999999999999999999",
        "0.000000000000000000000000000000000000000001e-99999999999",
        "1000000000000000000000000000000000000000000e-400", "1e-340", "1e-339",
        "1e-330", "1e329", "1e330", "0x1p-1200", "0x1p-1199", "0x1p1100",
        "0x0.00000000000000001p-1150", "0e99999999999", "-0e-99999999999",
        "0x0p99999999999", "-0.000000e+000",
        /* K*2^E: E beyond a long, beyond the clamp at 2^60 and near it */
        "2^99999999999999999999", "-2^99999999999999999999", "2^-99999999999999999999",
        "-2^-99999999999999999999", "3*2^-99999999999999999999", "0.5*2^99999999999999999999",
        "0*2^99999999999999999999", "-0*2^-99999999999999999999", "2^1152921504606846976",
        "2^-1152921504606846976", "2^1152921504606846977", "2^9223372036854775807",
        "-2^-9223372036854775808", "2^1200", "2^-1200", "2^-1075", "2^-1074", "1.5*2^-1075",
        "1.5*2^-1080", "1.5*2^1100", "0.0000000000000000000000000000000000000001*2^1200",
        "123456789012345678901234567890*2^-1200", "2^+3", "+2^-0",
    };
    tu_report rep;
    tu_report_init(&rep, "check_parse");
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
            compare_all_modes(&rep, *fp, texts[i]);
    tu_report_line(&rep, "absurd exponents");

    /* 20000 digits: 0.999...9 (just below 1), 1.000...01 (just above), and
     * 10^-20000 written with 20000 digits and the exponent 19995 */
    size_t n = 20000;
    char *s = malloc(n + 32);
    ck_assert_ptr_nonnull(s);
    s[0] = '0';
    s[1] = '.';
    memset(s + 2, '9', n);
    s[n + 2] = '\0';
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
        compare_all_modes(&rep, *fp, s);
    s[0] = '1';
    memset(s + 2, '0', n);
    s[n + 1] = '1';
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
        compare_all_modes(&rep, *fp, s);
    s[0] = '0';
    snprintf(s + n + 2, 30, "e%zu", n - 5);
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
        compare_all_modes(&rep, *fp, s);
    /* as factors: 0.999...9 * 2 (just below 2), 10^19999 * 2^-66400
     * (about 2^35.4) */
    s[0] = '0';
    memset(s + 2, '9', n);
    snprintf(s + n + 2, 30, "*2^1");
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
        compare_all_modes(&rep, *fp, s);
    s[0] = '1';
    memset(s + 1, '0', n - 1);
    snprintf(s + n, 30, "*2^-66400");
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
        compare_all_modes(&rep, *fp, s);
    free(s);
    tu_report_line(&rep, "20000-digit texts and factors");

    /* 10^6 nines after the point, by hand: 1 under RNE, 1 - 2^-11 under RTZ */
    n = 1000000;
    s = malloc(n + 3);
    ck_assert_ptr_nonnull(s);
    s[0] = '0';
    s[1] = '.';
    memset(s + 2, '9', n);
    s[n + 2] = '\0';
    static const struct {
        fpk_round mode;
        fpk_bits bits;
    } nines[] = {{FPK_RNE, 0x3c00}, {FPK_RTZ, 0x3bff}};
    for (size_t i = 0; i < 2; i++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = nines[i].mode;
        fpk_bits z = 0;
        ref_result want = {nines[i].bits, IX};
        ck_assert_int_eq(fpk_parse(&fpk_fp16, s, &z, &c, NULL), FPK_OK);
        tu_check(&rep, &fpk_fp16, want, z, c.flags, "fp16 %s 0.(10^6 nines)",
                 tu_mode_name(c.round));
    }
    free(s);
    tu_report_line(&rep, "a text of 10^6 digits");

    /* stochastic rounding: a value below 2^-64 of an ulp never rounds up
     * (one that were 2^-16 of an ulp would, about 5 times in 300000) */
    fpk_ctx sr = fpk_ctx_default();
    sr.round = FPK_SR;
    sr.sr_bits = 64;
    sr.sr_seed = tu_seed("check_parse");
    for (int i = 0; i < 300000; i++) {
        fpk_bits z = 1;
        sr.flags = 0;
        ref_result want = {0, UF | IX};
        ck_assert_int_eq(fpk_parse(&fpk_fp16, "1e-99999999999", &z, &sr, NULL), FPK_OK);
        tu_check(&rep, &fpk_fp16, want, z, sr.flags, "fp16 sr counter %" PRIu64 " 1e-99999999999",
                 sr.sr_counter - 1);
    }
    tu_report_line(&rep, "fp16 sr of 1e-99999999999, 300000 draws");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Expected results worked out by hand (and by docs/DESIGN.md "Corner cases"). */
static const struct {
    const fpk_format *f;
    const char *s;
    fpk_round mode;
    bool saturate;
    fpk_bits bits;
    unsigned flags;
} hand[] = {
    /* fp16: 1 + 2^-11 is the tie between 1 and 1 + 2^-10 */
    {&fpk_fp16, "1.00048828125", FPK_RNE, false, 0x3c00, IX},
    {&fpk_fp16, "1.000488281250000000000000000000001", FPK_RNE, false, 0x3c01, IX},
    {&fpk_fp16, "1.000488281249999999999999999999999", FPK_RNE, false, 0x3c00, IX},
    {&fpk_fp16, "-1.000488281250000000000000000000001", FPK_RNE, false, 0xbc01, IX},
    {&fpk_fp16, "1.00048828125", FPK_RNA, false, 0x3c01, IX},
    {&fpk_fp16, "1.0009765625", FPK_RNE, false, 0x3c01, 0},
    {&fpk_fp16, "1.00146484375", FPK_RNE, false, 0x3c02, IX}, /* 1 + 3 * 2^-11 */
    {&fpk_fp16, "65504", FPK_RNE, false, 0x7bff, 0},
    {&fpk_fp16, "65519.99999999999999999999999999999", FPK_RNE, false, 0x7bff, IX},
    {&fpk_fp16, "65520", FPK_RNE, false, 0x7c00, OF | IX},
    {&fpk_fp16, "65520", FPK_RNE, true, 0x7bff, OF | IX},
    {&fpk_fp16, "65520", FPK_RTZ, false, 0x7bff, IX},
    {&fpk_fp16, "5.9604644775390625e-08", FPK_RNE, false, 0x0001, 0},
    {&fpk_fp16, "2.98023223876953125e-08", FPK_RNE, false, 0x0000, UF | IX},
    {&fpk_fp16, "2.98023223876953125e-08", FPK_RNA, false, 0x0001, UF | IX},
    {&fpk_fp16, "2.98023223876953125000000000000001e-08", FPK_RNE, false, 0x0001, UF | IX},
    {&fpk_fp16, "1e-99999999999", FPK_RUP, false, 0x0001, UF | IX},
    {&fpk_fp16, "1e-99999999999", FPK_RNE, false, 0x0000, UF | IX},
    {&fpk_fp16, "-1e-99999999999", FPK_RDN, false, 0x8001, UF | IX},
    {&fpk_fp16, "-1e-99999999999", FPK_ROD, false, 0x8001, UF | IX},
    {&fpk_fp16, "1e99999999999", FPK_RNE, false, 0x7c00, OF | IX},
    {&fpk_fp16, "1e99999999999", FPK_RTZ, false, 0x7bff, OF | IX},
    {&fpk_fp16, "-1e999999999999999999999999999999", FPK_RNE, false, 0xfc00, OF | IX},
    {&fpk_fp16, "0e99999999999", FPK_RNE, false, 0x0000, 0},
    {&fpk_fp16, "-0.000e-99999999999999", FPK_RUP, false, 0x8000, 0},
    {&fpk_fp16, "nan", FPK_RNE, false, 0x7e00, 0},
    {&fpk_fp16, "-NaN", FPK_RNE, false, 0x7e00, 0},
    {&fpk_fp16, "INFINITY", FPK_RNE, false, 0x7c00, 0},
    {&fpk_fp16, "-Inf", FPK_RTZ, false, 0xfc00, 0},
    {&fpk_fp16, "inf", FPK_RNE, true, 0x7bff, 0},
    {&fpk_fp16, "0x10", FPK_RNE, false, 0x4c00, 0},
    /* fp32 and fp64 ties: 1 + 2^-24, 1 + 2^-53 */
    {&fpk_fp32, "1.000000059604644775390625", FPK_RNE, false, 0x3f800000, IX},
    {&fpk_fp32, "1.000000059604644775390625000000000000001", FPK_RNE, false, 0x3f800001, IX},
    {&fpk_fp64, "1.00000000000000011102230246251565404236316680908203125", FPK_RNE, false,
     0x3ff0000000000000, IX},
    {&fpk_fp64, "1.000000000000000111022302462515654042363166809082031250000000000000000000000001",
     FPK_RNE, false, 0x3ff0000000000001, IX},
    {&fpk_fp64, "0.1", FPK_RNE, false, 0x3fb999999999999a, IX},
    {&fpk_fp64, "4.9406564584124654e-324", FPK_RNE, false, 0x1, UF | IX},
    {&fpk_fp64, "2.4703282292062327e-324", FPK_RNE, false, 0x0, UF | IX},
    {&fpk_fp64, "2.4703282292062328e-324", FPK_RNE, false, 0x1, UF | IX},
    {&fpk_fp64, "1.7976931348623157e308", FPK_RNE, false, 0x7fefffffffffffff, IX},
    {&fpk_fp64, "1.7976931348623158e308", FPK_RNE, false, 0x7fefffffffffffff, IX},
    {&fpk_fp64, "1.7976931348623159e308", FPK_RNE, false, 0x7ff0000000000000, OF | IX},
    {&fpk_fp64, "1e-99999999999", FPK_RUP, false, 0x1, UF | IX},
    {&fpk_fp64, "0x1p-99999999999999999999", FPK_RUP, false, 0x1, UF | IX},
    {&fpk_fp64, "0x1p99999999999999999999", FPK_RNE, false, 0x7ff0000000000000, OF | IX},
    /* the accepted spellings */
    {&fpk_fp32, "0.1", FPK_RNE, false, 0x3dcccccd, IX},
    {&fpk_fp32, "1.1", FPK_RNE, false, 0x3f8ccccd, IX},
    {&fpk_fp32, "0x1.8p-3", FPK_RNE, false, 0x3e400000, 0},
    {&fpk_fp32, "0X1P+4", FPK_RNE, false, 0x41800000, 0},
    {&fpk_fp32, "-0x.8p1", FPK_RNE, false, 0xbf800000, 0},
    {&fpk_fp32, "0x10", FPK_RNE, false, 0x41800000, 0},
    {&fpk_fp32, "0x1e5", FPK_RNE, false, 0x43f28000, 0}, /* 485: e is a hex digit */
    {&fpk_fp32, ".5", FPK_RNE, false, 0x3f000000, 0},
    {&fpk_fp32, "5.", FPK_RNE, false, 0x40a00000, 0},
    {&fpk_fp32, "+1", FPK_RNE, false, 0x3f800000, 0},
    {&fpk_fp32, "1E5", FPK_RNE, false, 0x47c35000, 0},
    {&fpk_fp32, "1e0000000000000000000000005", FPK_RNE, false, 0x47c35000, 0},
    {&fpk_fp32, "0x1P-2", FPK_RNE, false, 0x3e800000, 0},
    /* e4m3: 464 ties to 448; no infinity */
    {&fpk_e4m3, "464", FPK_RNE, false, 0x7e, IX},
    {&fpk_e4m3, "464.000000000000000000000000000001", FPK_RNE, false, 0x7f, OF | IX},
    {&fpk_e4m3, "464.000000000000000000000000000001", FPK_RNE, true, 0x7e, OF | IX},
    {&fpk_e4m3, "464", FPK_RNA, false, 0x7f, OF | IX},
    {&fpk_e4m3, "inf", FPK_RNE, false, 0x7f, IV},
    {&fpk_e4m3, "-inf", FPK_RNE, true, 0xfe, IV},
    {&fpk_e4m3, "nan", FPK_RNE, false, 0x7f, 0},
    /* powers of two and their multiples: one rounding of the exact value */
    {&fpk_fp16, "2^-24", FPK_RNE, false, 0x0001, 0},
    {&fpk_fp16, "-2^-24", FPK_RNE, false, 0x8001, 0},
    {&fpk_fp16, "2^-25", FPK_RNE, false, 0x0000, UF | IX},
    {&fpk_fp16, "2^-25", FPK_RUP, false, 0x0001, UF | IX},
    {&fpk_fp16, "1.5*2^-25", FPK_RNE, false, 0x0001, UF | IX},
    {&fpk_fp16, "3*2^-10", FPK_RNE, false, 0x1a00, 0},
    {&fpk_fp16, "2^15", FPK_RNE, false, 0x7800, 0},
    {&fpk_fp16, "2^16", FPK_RNE, false, 0x7c00, OF | IX},
    {&fpk_fp16, "2^16", FPK_RTZ, false, 0x7bff, OF | IX},
    {&fpk_fp16, "65520*2^0", FPK_RNE, false, 0x7c00, OF | IX},
    {&fpk_fp16, "1.000488281250000909*2^0", FPK_RNE, false, 0x3c01, IX},
    {&fpk_fp16, "2.00097656250000001*2^-1", FPK_RNE, false, 0x3c01, IX}, /* just above the tie */
    {&fpk_fp16, "2.0009765625*2^-1", FPK_RNE, false, 0x3c00, IX},        /* the tie, even */
    {&fpk_fp16, "2^99999999999999999999", FPK_RNE, false, 0x7c00, OF | IX},
    {&fpk_fp16, "-2^99999999999999999999", FPK_RTZ, false, 0xfbff, OF | IX},
    {&fpk_fp16, "2^-99999999999999999999", FPK_RUP, false, 0x0001, UF | IX},
    {&fpk_fp16, "-2^-99999999999999999999", FPK_RNE, false, 0x8000, UF | IX},
    {&fpk_fp16, "0*2^99999999999999999999", FPK_RNE, false, 0x0000, 0},
    {&fpk_fp16, "-0.0*2^5", FPK_RNE, false, 0x8000, 0},
    {&fpk_fp32, "1.5*2^-3", FPK_RNE, false, 0x3e400000, 0},
    {&fpk_fp32, ".5*2^1", FPK_RNE, false, 0x3f800000, 0},
    {&fpk_fp32, "5.*2^+1", FPK_RNE, false, 0x41200000, 0},
    {&fpk_fp32, "0.1*2^3", FPK_RNE, false, 0x3f4ccccd, IX},
    {&fpk_fp32, "+2^-149", FPK_RNE, false, 0x00000001, 0},
    {&fpk_fp32, "2^-150", FPK_RNA, false, 0x00000001, UF | IX},
    {&fpk_fp64, "2^-1074", FPK_RNE, false, 0x1, 0},
    {&fpk_fp64, "2^1023", FPK_RNE, false, 0x7fe0000000000000, 0},
    {&fpk_fp64, "3*2^1023", FPK_RNE, false, 0x7ff0000000000000, OF | IX},
    {&fpk_e4m3, "29*2^4", FPK_RNE, false, 0x7e, IX}, /* 464 */
    {&fpk_e8m0, "2^-127", FPK_RNE, false, 0x00, 0},
    {&fpk_e8m0, "2^127", FPK_RNE, false, 0xfe, 0},
};

START_TEST(hand_written)
{
    tu_report rep;
    tu_report_init(&rep, "check_parse");
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        fpk_ctx c = fpk_ctx_default();
        c.round = hand[i].mode;
        c.saturate = hand[i].saturate;
        ref_result want = {hand[i].bits, hand[i].flags};
        fpk_bits z = 0;
        fpk_error err;
        if (fpk_parse(hand[i].f, hand[i].s, &z, &c, &err) != FPK_OK) {
            tu_fail(&rep, "%s: \"%s\" rejected: %s", hand[i].f->name, hand[i].s, err.msg);
            continue;
        }
        const char *what = "%s %s%s \"%s\"";
        tu_check(&rep, hand[i].f, want, z, c.flags, what, hand[i].f->name,
                 tu_mode_name(hand[i].mode), hand[i].saturate ? " saturate" : "", hand[i].s);
        /* the reference agrees with the hand too */
        ref_result ref = ref_text(hand[i].f, hand[i].s, &c);
        tu_check(&rep, hand[i].f, want, ref.bits, ref.flags, "ref_parse: %s %s%s \"%s\"",
                 hand[i].f->name, tu_mode_name(hand[i].mode),
                 hand[i].saturate ? " saturate" : "", hand[i].s);
    }
    tu_report_line(&rep, "hand-written values");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The grammar of fpk_parse, written independently as a POSIX extended
 * regular expression (case-insensitive: every letter of the grammar is). */
static const char grammar[] =
    "^[+-]?(inf|infinity|nan"
    "|0x([0-9a-f]+\\.?[0-9a-f]*|\\.[0-9a-f]+)(p[+-]?[0-9]+)?"
    "|([0-9]+\\.?[0-9]*|\\.[0-9]+)(e[+-]?[0-9]+)?"
    "|(([0-9]+\\.?[0-9]*|\\.[0-9]+)\\*)?2\\^[+-]?[0-9]+)$";

/* Whether fpk_parse rejects S the way it must: FPK_ESYNTAX, a message,
 * *z and the flags untouched. */
static bool rejects(const fpk_format *f, const char *s, fpk_error *err)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits z = 0x5a5a;
    memset(err, 0, sizeof *err);
    int rc = fpk_parse(f, s, &z, &c, err);
    return rc == FPK_ESYNTAX && err->code == FPK_ESYNTAX && err->msg[0] != '\0' &&
           z == 0x5a5a && c.flags == 0;
}

START_TEST(syntax_errors)
{
    static const char *const bad[] = {
        "", " 1", "1 ", "\t1", "1\n", "0x", "0X", "1e", "1e+", "1E-", "--1", "+-1", "-+1",
        "++1", "@inf@", "@nan@", "0b101", "0B1", "0x1p", "0x1p+", ".", "-", "+", "e5", ".e5",
        "1.2.3", "nan(1)", "nan()", "infinit", "infx", "infinityx", "-in", "na", "1p5",
        "0x.p1", "0xp1", "0x.", "1,5", "1e5.0", "0x1p1.5", "0x-1", "- 1", "1e--5",
        "1ee5", "1.5f", "1_000", "0x1.8e+3", "1e5e5", "0xx1", "x1", "\xef\xbc\x91",
        "1\xc2\xa0", "0x1g", "1e0x5", "inf inf", "1d5", "1.0L", "\"1\"",
        /* K*2^E */
        "2^", "2^x", "2^+", "-2^-", "3*2^", "3*2^-", "3*", "3*2", "3*3^2", "3*22^1", "*2^3",
        "2^^3", "2^3.5", "3*2^3.5", "2^3*2^4", "1e3*2^4", "0x1*2^3", "0x1p0*2^3", "3**2^3",
        "3*2 ^3", "3 *2^3", "2 ^3", "inf*2^1", "nan*2^1", "2^1e3", "+-2^3", "2^0x10", ".*2^3",
        "e*2^3", "-*2^3", "3*-2^3", "3*+2^3", "2^-+3", "^3", "2*^3", "3*2^3 ", "02^3", "2.^3",
        "3*2^3x", "2^99999999999999999999x", "3*2e3", "10^3", "2**3",
    };
    tu_report rep;
    tu_report_init(&rep, "check_parse");
    regex_t re;
    ck_assert_int_eq(regcomp(&re, grammar, REG_EXTENDED | REG_ICASE | REG_NOSUB), 0);
    fpk_error err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect(&rep, regexec(&re, bad[i], 0, NULL, 0) != 0,
               "the grammar accepts \"%s\" listed as bad", bad[i]);
        for (const fpk_format *const *fp = fpk_formats; *fp; fp++)
            expect(&rep, rejects(*fp, bad[i], &err),
                   "%s: \"%s\" not rejected cleanly (msg \"%s\")", (*fp)->name, bad[i], err.msg);
    }
    /* NULL text or format */
    fpk_ctx c = fpk_ctx_default();
    fpk_bits z = 7;
    expect(&rep, fpk_parse(&fpk_fp16, NULL, &z, &c, &err) == FPK_ESYNTAX && err.msg[0] && z == 7,
           "NULL text not rejected cleanly");
    expect(&rep, fpk_parse(NULL, "1", &z, &c, &err) == FPK_ESYNTAX && err.msg[0] && z == 7,
           "NULL format not rejected cleanly");
    expect(&rep, fpk_parse(&fpk_fp16, "1x", &z, &c, NULL) == FPK_ESYNTAX && z == 7,
           "\"1x\" without an error buffer not rejected cleanly");

    /* messages name what is wrong and where */
    static const struct {
        const char *s, *msg;
    } msgs[] = {
        {"0xZZ", "unexpected character \"Z\" at offset 2 in \"0xZZ\""},
        {"", "empty string"},
        {"1e", "missing exponent digits at offset 2 in \"1e\""},
        {"0x", "missing digits at offset 2 in \"0x\""},
        {"--1", "unexpected character \"-\" at offset 1 in \"--1\""},
        {" 1", "unexpected character \" \" at offset 0 in \" 1\""},
        {"2^", "missing exponent digits at offset 2 in \"2^\""},
        {"2^x", "unexpected character \"x\" at offset 2 in \"2^x\""},
        {"3*2^", "missing exponent digits at offset 4 in \"3*2^\""},
        {"3*", "missing \"2^\" at offset 2 in \"3*\""},
        {"3*2", "missing \"^\" at offset 3 in \"3*2\""},
        {"3*3^2", "unexpected character \"3\" at offset 2 in \"3*3^2\""},
        {"1e3*2^4", "unexpected character \"*\" at offset 3 in \"1e3*2^4\""},
        {"1\n", "unexpected character \"\\x0a\" at offset 1 in \"1\\x0a\""},
    };
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
        bool ok = rejects(&fpk_fp32, msgs[i].s, &err);
        expect(&rep, ok && strcmp(err.msg, msgs[i].msg) == 0,
               "message for \"%s\": \"%s\", expected \"%s\"", msgs[i].s, err.msg, msgs[i].msg);
    }
    /* a long bad text: the message stays within the buffer, quoted in part */
    char longbad[1000];
    memset(longbad, '1', sizeof longbad - 1);
    longbad[sizeof longbad - 2] = 'x';
    longbad[sizeof longbad - 1] = '\0';
    bool ok = rejects(&fpk_fp64, longbad, &err);
    expect(&rep, ok && strstr(err.msg, "\"x\" at offset 998 in \"1111") && strstr(err.msg, "...\""),
           "message for 998 ones and x: \"%s\"", err.msg);
    tu_report_line(&rep, "syntax errors");

    /* random short texts over the grammar's alphabet: accepted exactly when
     * the regular expression matches, and then equal to ref_parse */
    tu_rng r;
    tu_rng_init(&r, tu_seed("check_parse") + 3);
    static const char alphabet[] = "0123456789abcdefxXpPeE+-.infINFnaNty @\t*^2^";
    int count = tu_exhaustive() ? 2000000 : 100000;
    for (int i = 0; i < count; i++) {
        char s[16];
        int n = (int)tu_rng_below(&r, sizeof s);
        for (int k = 0; k < n; k++)
            s[k] = alphabet[tu_rng_below(&r, sizeof alphabet - 1)];
        s[n] = '\0';
        bool valid = regexec(&re, s, 0, NULL, 0) == 0;
        const fpk_format *f = fpk_formats[tu_rng_below(&r, format_count())];
        if (!valid) {
            expect(&rep, rejects(f, s, &err), "%s: \"%s\" not rejected cleanly", f->name, s);
            continue;
        }
        fpk_ctx ctx = tu_ctx(tu_modes[tu_rng_below(&r, TU_MODE_COUNT)],
                             &tu_variants[tu_rng_below(&r, TU_VARIANT_COUNT)]);
        ref_result want = ref_text(f, s, &ctx);
        fpk_bits got = 0;
        if (fpk_parse(f, s, &got, &ctx, &err) != FPK_OK)
            tu_fail(&rep, "%s: \"%s\" rejected: %s", f->name, s, err.msg);
        else
            tu_check(&rep, f, want, got, ctx.flags, "%s %s \"%s\"", f->name,
                     tu_mode_name(ctx.round), s);
    }
    regfree(&re);
    tu_report_line(&rep, "random texts over the grammar's alphabet");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* The text style of fpk_format_exact and fpk_format_shortest, written out
 * here independently: plain for decimal exponents in [-5, 16), otherwise
 * "d.ddd" and a signed exponent of at least two digits. */
static void render_g(const dec *v, bool neg, text *t)
{
    const char *d = v->d;
    long n = (long)strlen(d);
    t->s[0] = '\0';
    tappend(t, "%s", neg ? "-" : "");
    if (v->x >= 16 || v->x < -5) {
        tappend(t, "%c%s%se%+03ld", d[0], n > 1 ? "." : "", d + 1, v->x);
    } else if (v->x >= 0) {
        for (long i = 0; i <= v->x; i++)
            tappend(t, "%c", i < n ? d[i] : '0');
        if (n > v->x + 1)
            tappend(t, ".%s", d + v->x + 1);
    } else {
        tappend(t, "0.%.*s%s", (int)(-v->x - 1), "00000", d);
    }
}

/* The expected fpk_format_exact text of A, a finite number or a special. */
static void expected_exact(const fpk_format *f, fpk_bits a, text *t)
{
    bool neg = (a & f->sign_mask) != 0;
    mpfr_t x;
    mpfr_init2(x, 128);
    if (!ref_decode(x, f, a))
        strcpy(t->s, "nan");
    else if (mpfr_inf_p(x))
        strcpy(t->s, neg ? "-inf" : "inf");
    else if (mpfr_zero_p(x))
        strcpy(t->s, neg ? "-0" : "0");
    else {
        dec v;
        dec_of(x, &v);
        render_g(&v, neg, t);
    }
    mpfr_clear(x);
}

/* Whether the decimal 0.D * 10^E (mpfr_get_str's convention) parses back
 * to the positive encoding A under RNE, by the reference. */
static bool ref_roundtrips(const fpk_format *f, fpk_bits a, const char *d, mpfr_exp_t e)
{
    char s[128];
    snprintf(s, sizeof s, "0.%se%ld", d, (long)e);
    fpk_ctx c = fpk_ctx_default();
    ref_result r = ref_parse(f, s, &c);
    return r.bits == a;
}

/* Q := 0.D * 10^E, mpfr_get_str's convention. */
static void q_of(mpq_t q, const char *d, mpfr_exp_t e)
{
    long s = (long)e - (long)strlen(d);
    mpz_set_str(mpq_numref(q), d, 10);
    mpz_set_ui(mpq_denref(q), 1);
    mpz_t p;
    mpz_init(p);
    mpz_ui_pow_ui(p, 10, (unsigned long)(s < 0 ? -s : s));
    mpz_mul(s < 0 ? mpq_denref(q) : mpq_numref(q), s < 0 ? mpq_denref(q) : mpq_numref(q), p);
    mpz_clear(p);
    mpq_canonicalize(q);
}

/* The shortest decimal that parses back to the positive finite nonzero
 * encoding A, the nearer of the two candidates of that length when both
 * do (the even one on a tie), found with mpfr_get_str and ref_parse only. */
static void ref_shortest(const fpk_format *f, fpk_bits a, dec *out)
{
    mpfr_t x;
    mpfr_init2(x, 128);
    decode(x, f, a);
    out->d[0] = '\0';
    for (int n = 1; n <= 40; n++) {
        char dn[48], up[48];
        mpfr_exp_t en, eu;
        mpfr_get_str(dn, &en, 10, (size_t)n, x, MPFR_RNDD);
        mpfr_get_str(up, &eu, 10, (size_t)n, x, MPFR_RNDU);
        bool ok_dn = ref_roundtrips(f, a, dn, en), ok_up = ref_roundtrips(f, a, up, eu);
        if (!ok_dn && !ok_up)
            continue;
        bool use_up = ok_up;
        if (ok_dn && ok_up) {
            /* the nearer: compare x - down with up - x, i.e. 2x with down + up */
            mpq_t qx, qd, qu;
            mpq_inits(qx, qd, qu, NULL);
            mpfr_get_q(qx, x);
            mpq_add(qx, qx, qx);
            q_of(qd, dn, en);
            q_of(qu, up, eu);
            mpq_add(qd, qd, qu);
            int c = mpq_cmp(qx, qd);
            use_up = c > 0 || (c == 0 && (dn[n - 1] - '0') % 2 == 1);
            mpq_clears(qx, qd, qu, NULL);
        }
        strcpy(out->d, use_up ? up : dn);
        out->x = (long)(use_up ? eu : en) - 1;
        size_t k = strlen(out->d);
        while (k > 1 && out->d[k - 1] == '0')
            out->d[--k] = '\0';
        break;
    }
    ck_assert_str_ne(out->d, "");
    mpfr_clear(x);
}

/* fpk_format_exact and fpk_format_shortest of A, checked: both texts parse
 * back (exact in every mode with no flags, shortest under RNE); the exact
 * text is the expected one; with CHECK_SHORTEST, the shortest text is the
 * one ref_shortest finds. */
static void check_texts(tu_report *rep, const fpk_format *f, fpk_bits a, bool check_shortest)
{
    char got[TEXT_MAX];
    text want;
    size_t n = fpk_format_exact(f, a, got, sizeof got);
    expected_exact(f, a, &want);
    int w = tu_hex_digits(f);
    expect(rep, n == strlen(got) && strcmp(got, want.s) == 0,
           "%s %0*" PRIx64 ": exact \"%.80s\" (%zu), expected \"%.80s\"", f->name, w, a, got,
           n, want.s);
    bool nan = fpk_is_nan(f, a);
    ref_result back = {nan ? f->nan : a, 0};
    fpk_error err;
    for (int mi = 0; mi < TU_MODE_COUNT; mi++) {
        fpk_ctx c = tu_ctx(tu_modes[mi], &tu_variants[0]);
        fpk_bits z = 0;
        if (fpk_parse(f, got, &z, &c, &err) != FPK_OK)
            tu_fail(rep, "%s exact \"%.80s\" rejected: %s", f->name, got, err.msg);
        else
            tu_check(rep, f, back, z, c.flags, "%s %s exact \"%.80s\" back", f->name,
                     tu_mode_name(tu_modes[mi]), got);
    }

    n = fpk_format_shortest(f, a, got, sizeof got);
    fpk_ctx c = fpk_ctx_default();
    fpk_bits z = 0;
    int rc = fpk_parse(f, got, &z, &c, &err);
    expect(rep, rc == FPK_OK && n == strlen(got) && (nan ? fpk_is_nan(f, z) : z == a),
           "%s %0*" PRIx64 ": shortest \"%s\" parses to %0*" PRIx64, f->name, w, a, got, w, z);
    fpk_class cls = fpk_classify(f, a);
    if (check_shortest && (cls == FPK_CLASS_NORMAL || cls == FPK_CLASS_SUBNORMAL)) {
        dec v;
        ref_shortest(f, a & ~f->sign_mask, &v);
        render_g(&v, (a & f->sign_mask) != 0, &want);
        expect(rep, strcmp(got, want.s) == 0, "%s %0*" PRIx64 ": shortest \"%s\", expected \"%s\"",
               f->name, w, a, got, want.s);
    }
}

/* Every encoding of the 8- and 16-bit formats (tf32 too when exhaustive),
 * samples of the others; then every encoding of a few "eXmY" formats from
 * fpk_format_lookup, down to no mantissa bits. */
START_TEST(round_trips)
{
    tu_report rep;
    tu_report_init(&rep, "check_parse");
    tu_rng r;
    tu_rng_init(&r, tu_seed("check_parse") + 4);
    bool all = tu_exhaustive();
    for (const fpk_format *const *fp = fpk_formats; *fp; fp++) {
        const fpk_format *f = *fp;
        if (f->width <= 16 || (all && f->width <= 19)) {
            /* every shortest text against the search where it is cheap */
            uint64_t count = (uint64_t)1 << f->width;
            uint64_t stride = f->width <= 8 || all ? 1 : 37;
            for (uint64_t a = 0; a < count; a++)
                check_texts(&rep, f, a, a % stride == 0);
            tu_report_line(&rep, "%s every encoding: exact and shortest texts parse back", f->name);
        } else {
            int count = all ? 20000 : 1500;
            for (int i = 0; i < count; i++)
                check_texts(&rep, f, tu_gen(f, NULL, &r), true);
            tu_report_line(&rep, "%s %d sampled encodings: exact and shortest texts", f->name,
                           count);
        }
    }
    static const char *const names[] = {"e3m2", "e2m3", "e2m1", "e5m0", "e8m0", "e6m9",
                                        "e1m0", "e1m1", "e1m3", "e1m3fn"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const fpk_format *f = fpk_format_lookup(names[i]);
        ck_assert_ptr_nonnull(f);
        for (uint64_t a = 0; a < (uint64_t)1 << f->width; a++)
            check_texts(&rep, f, a, f->width <= 8 || all || a % 37 == 0);
        tu_report_line(&rep, "%s every encoding: exact and shortest texts parse back", f->name);
    }
    /* Without normal numbers overflow starts a quarter ulp above max
     * finite, not half (e1m27's 1.99999999 overflows). */
    for (int m = 0; m <= 52; m++) {
        char name[16];
        snprintf(name, sizeof name, "e1m%d", m);
        const fpk_format *f = fpk_format_lookup(name);
        ck_assert_ptr_nonnull(f);
        for (fpk_bits a = f->max_finite > 2 ? f->max_finite - 2 : 0; a <= f->max_finite; a++)
            check_texts(&rep, f, a, true);
    }
    tu_report_line(&rep, "e1m0 to e1m52: texts of the largest finite values");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

/* Texts worked out by hand. */
START_TEST(texts_by_hand)
{
    static const struct {
        const fpk_format *f;
        fpk_bits a;
        const char *exact, *shortest;
    } cases[] = {
        {&fpk_fp16, 0x0001, "5.9604644775390625e-08", "6e-08"},
        {&fpk_fp16, 0x7bff, "65504", "65500"},
        {&fpk_fp16, 0x3555, "0.333251953125", "0.3333"},
        {&fpk_fp16, 0x3c00, "1", "1"},
        {&fpk_fp16, 0x7000, "8192", "8190"}, /* 8190 ties to 8192's even significand */
        {&fpk_fp16, 0x8000, "-0", "-0"},
        {&fpk_fp16, 0x0000, "0", "0"},
        {&fpk_fp16, 0x7c00, "inf", "inf"},
        {&fpk_fp16, 0xfc00, "-inf", "-inf"},
        {&fpk_fp16, 0x7e00, "nan", "nan"},
        {&fpk_fp16, 0xfd00, "nan", "nan"},
        {&fpk_fp32, 0x3dcccccd, "0.100000001490116119384765625", "0.1"},
        {&fpk_fp32, 0x7f7fffff, "3.4028234663852885981170418348451692544e+38", "3.4028235e+38"},
        {&fpk_fp32, 0xbf800000, "-1", "-1"},
        {&fpk_bf16, 0x7f7f, "3.3895313892515354759047080037148786688e+38", "3.39e+38"},
        {&fpk_fp64, 0x3fb999999999999a, "0.1000000000000000055511151231257827021181583404541015625", "0.1"},
        {&fpk_fp64, 0x7fefffffffffffff, NULL, "1.7976931348623157e+308"},
        {&fpk_fp64, 0x4341c37937e08000, "1e+16", "1e+16"},
        {&fpk_fp64, 0x40fe240000000000, "123456", "123456"},
        {&fpk_fp64, 0x3eb0000000000000, "9.5367431640625e-07", "9.5367431640625e-07"},
        {&fpk_fp64, 0x0000000000000001, NULL, "5e-324"},
        {&fpk_e4m3, 0x7e, "448", "450"}, /* 440 and 450 both parse back: the nearer */
        {&fpk_e4m3, 0x01, "0.001953125", "0.002"},
        {&fpk_e4m3, 0x7f, "nan", "nan"},
        {&fpk_e5m2, 0x7b, "57344", "60000"},
        {&fpk_tf32, 0x3fbff, "3.40116213421465348979261631549233168384e+38", NULL},
    };
    tu_report rep;
    tu_report_init(&rep, "check_parse");
    char got[TEXT_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const fpk_format *f = cases[i].f;
        for (int k = 0; k < 2; k++) {
            const char *want = k ? cases[i].shortest : cases[i].exact;
            if (!want)
                continue;
            size_t n = k ? fpk_format_shortest(f, cases[i].a, got, sizeof got)
                         : fpk_format_exact(f, cases[i].a, got, sizeof got);
            expect(&rep, strcmp(got, want) == 0 && n == strlen(want),
                   "%s %0*" PRIx64 ": %s \"%s\", expected \"%s\"", f->name, tu_hex_digits(f),
                   cases[i].a, k ? "shortest" : "exact", got, want);
        }
    }

    /* fp64's smallest subnormal 2^-1074 = 5^1074 * 10^-1074: 751 significant
     * digits; 5^1074 ends in ...5625 (5^n mod 10^4 cycles with period 4) */
    size_t n = fpk_format_exact(&fpk_fp64, 1, got, sizeof got);
    const char *head = "4.9406564584124654417656879286822137236505980261432476442558568250067550727";
    expect(&rep, n == 751 + 1 + 5 && strncmp(got, head, strlen(head)) == 0 &&
                     strcmp(got + n - 14, "447265625e-324") == 0,
           "fp64 0x1: exact \"%.40s...%s\" (%zu chars)", got, got + (n > 20 ? n - 20 : 0), n);

    /* snprintf semantics: the full length back, at most LEN bytes written */
    expect(&rep, fpk_format_exact(&fpk_fp16, 0x0001, NULL, 0) == 22, "exact length, no buffer");
    expect(&rep, fpk_format_shortest(&fpk_fp16, 0x7bff, NULL, 0) == 5, "shortest length, no buffer");
    memset(got, 'x', 16);
    n = fpk_format_exact(&fpk_fp16, 0x0001, got, 5);
    expect(&rep, n == 22 && strcmp(got, "5.96") == 0, "exact into 5 bytes: \"%s\" %zu", got, n);
    n = fpk_format_shortest(&fpk_fp16, 0xfc00, got, 1);
    expect(&rep, n == 4 && got[0] == '\0', "shortest into 1 byte: \"%s\" %zu", got, n);
    n = fpk_format_shortest(&fpk_fp16, 0x7bff, got, 5);
    expect(&rep, n == 5 && strcmp(got, "6550") == 0, "shortest into 5 bytes: \"%s\" %zu", got, n);
    n = fpk_format_shortest(&fpk_fp16, 0x7bff, got, 6);
    expect(&rep, n == 5 && strcmp(got, "65500") == 0, "shortest into 6 bytes: \"%s\" %zu", got, n);
    expect(&rep, got[6] == 'x', "a byte past LEN written");
    tu_report_line(&rep, "texts by hand, snprintf semantics");
    ck_assert_uint_eq(tu_report_done(&rep), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("parse");
    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, hand_written);
    tcase_add_test(tc, texts_by_hand);
    tcase_add_test(tc, syntax_errors);
    tcase_add_test(tc, absurd_texts);
    tcase_add_test(tc, ties_and_boundaries);
    tcase_add_test(tc, random_texts);
    tcase_add_test(tc, round_trips);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
