/* fpk_parse: decimal and hexadecimal text, and multiples of powers of two
 * ("3*2^-10"), rounded once into any format.
 *
 * The text is checked by a strict scanner of our own (MPFR accepts more:
 * leading spaces, "@inf@", "0b" binary), then MPFR reads the significant
 * part truncated to 128 bits with an exact ternary value.  The truncated
 * significand, with the ternary as a sticky bit, goes to fpki_round_pack:
 * 128 bits with a sticky bit round correctly into any precision up to 126
 * bits, so there is one rounding, whatever the number of digits.  For
 * K*2^E the factor K is read so and E added to the exponent: scaling by a
 * power of two is exact, so it is still one rounding.  MPFR's exponent
 * range is left as the caller has it (it must cover the formats', 2^-1100
 * .. 2^1100, as MPFR's default does by far), but for the factor K, read in
 * MPFR's widest range and restored after, as MPFR's flags are. */
#include <gmp.h>
#include <stdint.h>
#include <mpfr.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core-impl.h"

/* What the scanner found in a syntactically valid text. */
typedef struct scanned {
    bool sign;
    enum { SC_NUMBER, SC_INF, SC_NAN } kind;
    int base;             /* 10 or 16 */
    const char *body;     /* the text after the sign, as MPFR reads it; for
                             K*2^E, K followed by "*2^E", NULL for 2^E */
    bool scaled;          /* K*2^E or 2^E */
    int64_t pow2;         /* E, clamped to +-FPKI_POW2_CLAMP */
} scanned;

/* |E| beyond this is held at it: 2^(+-2^60) lies beyond every format and,
 * with a factor of fewer than 10^17 digits, the product does too. */
#define FPKI_POW2_CLAMP ((int64_t)1 << 60)

static void set_error(fpk_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_error(fpk_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    err->code = FPK_ESYNTAX;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* Writes C into OUT printably: itself, or \xNN.  OUT holds 5 bytes. */
static void quote_char(char out[5], unsigned char c)
{
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
        snprintf(out, 5, "%c", c);
    else
        snprintf(out, 5, "\\x%02x", c);
}

/* The first 40 characters of S, quoted printably, "..." if longer. */
typedef struct quoted {
    char s[40 * 4 + 8];
} quoted;

static quoted quote_text(const char *s)
{
    quoted q;
    size_t n = 0;
    size_t i;
    for (i = 0; s[i] && i < 40; i++) {
        char c[5];
        quote_char(c, (unsigned char)s[i]);
        size_t k = strlen(c);
        memcpy(q.s + n, c, k);
        n += k;
    }
    if (s[i]) {
        memcpy(q.s + n, "...", 3);
        n += 3;
    }
    q.s[n] = '\0';
    return q;
}

/* The error for position P of S: an unexpected character, or the end of
 * the text where WHAT ("digits", "exponent digits") was still expected. */
static int syntax_error(fpk_error *err, const char *s, size_t p, const char *what)
{
    quoted q = quote_text(s);
    if (s[p] == '\0') {
        set_error(err, "missing %s at offset %zu in \"%s\"", what, p, q.s);
    } else {
        char c[5];
        quote_char(c, (unsigned char)s[p]);
        set_error(err, "unexpected character \"%s\" at offset %zu in \"%s\"", c, p, q.s);
    }
    return FPK_ESYNTAX;
}

static bool ci_prefix(const char *s, const char *word)
{
    for (; *word; s++, word++)
        if ((*s | 0x20) != *word)
            return false;
    return true;
}

static int digit_value(char ch, int base)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (base == 16 && (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
        return (ch | 0x20) - 'a' + 10;
    return -1;
}

/* Scans the exponent E = [+-]? [0-9]+ at S + *P into *E, clamped to
 * +-FPKI_POW2_CLAMP; false if there are no digits. */
static bool scan_pow2(const char *s, size_t *p, int64_t *e)
{
    bool neg = s[*p] == '-';
    if (s[*p] == '-' || s[*p] == '+')
        ++*p;
    if (digit_value(s[*p], 10) < 0)
        return false;
    uint64_t v = 0; /* below 2^60 before a step, so below 2^64 after it */
    for (; digit_value(s[*p], 10) >= 0; ++*p)
        if (v < (uint64_t)FPKI_POW2_CLAMP)
            v = v * 10 + (uint64_t)digit_value(s[*p], 10);
    int64_t m = v < (uint64_t)FPKI_POW2_CLAMP ? (int64_t)v : FPKI_POW2_CLAMP;
    *e = neg ? -m : m;
    return true;
}

/* Scans S per fpk_parse's grammar:
 *     [+-]? ( inf | infinity | nan | 0[xX] M ([pP] E)? | M ([eE] E)?
 *             | (M '*')? '2^' E )
 *     M = D* ( '.' D* )? with at least one digit D (hex digits after 0x)
 *     E = [+-]? [0-9]+
 * where the factor M before "*2^" is decimal.  Returns FPK_OK and fills
 * *SC, or FPK_ESYNTAX with the message in ERR. */
static int scan(const char *s, scanned *sc, fpk_error *err)
{
    size_t p = 0;
    if (s[0] == '\0') {
        set_error(err, "empty string");
        return FPK_ESYNTAX;
    }
    *sc = (scanned){.sign = s[p] == '-', .kind = SC_NUMBER, .base = 10};
    if (s[p] == '-' || s[p] == '+')
        p++;
    sc->body = s + p;
    if (ci_prefix(s + p, "inf") || ci_prefix(s + p, "nan")) {
        sc->kind = (s[p] | 0x20) == 'n' ? SC_NAN : SC_INF;
        p += ci_prefix(s + p, "infinity") ? 8 : 3;
        return s[p] ? syntax_error(err, s, p, "") : FPK_OK;
    }
    if (s[p] == '2' && s[p + 1] == '^') { /* 2^E: the factor is 1 */
        sc->body = NULL;
        sc->scaled = true;
        p += 2;
        if (!scan_pow2(s, &p, &sc->pow2))
            return syntax_error(err, s, p, "exponent digits");
        return s[p] ? syntax_error(err, s, p, "") : FPK_OK;
    }
    if (s[p] == '0' && (s[p + 1] | 0x20) == 'x') {
        sc->base = 16;
        p += 2;
    }

    size_t ndigits = 0;
    bool dot = false;
    for (;; p++) {
        if (s[p] == '.' && !dot)
            dot = true;
        else if (digit_value(s[p], sc->base) >= 0)
            ndigits++;
        else
            break;
    }
    if (ndigits == 0)
        return syntax_error(err, s, p, "digits");

    if (s[p] == '*' && sc->base == 10) { /* K*2^E */
        sc->scaled = true;
        if (s[++p] != '2')
            return syntax_error(err, s, p, "\"2^\"");
        if (s[++p] != '^')
            return syntax_error(err, s, p, "\"^\"");
        p++;
        if (!scan_pow2(s, &p, &sc->pow2))
            return syntax_error(err, s, p, "exponent digits");
        return s[p] ? syntax_error(err, s, p, "") : FPK_OK;
    }
    char mark = sc->base == 16 ? 'p' : 'e';
    if ((s[p] | 0x20) == mark) {
        p++;
        if (s[p] == '-' || s[p] == '+')
            p++;
        if (digit_value(s[p], 10) < 0)
            return syntax_error(err, s, p, "exponent digits");
        while (digit_value(s[p], 10) >= 0)
            p++;
    }
    return s[p] ? syntax_error(err, s, p, "") : FPK_OK;
}

/* A stand-in for a magnitude far outside F's range, above it if ABOVE,
 * else below: a leading bit with a sticky bit, far below half the smallest
 * subnormal or far above the overflow threshold, which every rounding mode
 * treats as it treats the true value (the tiny one lies below 2^-64 of an
 * ulp, so SR too never rounds it up). */
static fpk_bits far_value(const fpk_format *f, bool sign, bool above, fpk_ctx *c)
{
    const uint64_t top = UINT64_C(1) << 63;
    int64_t e = above ? (int64_t)f->emax + 16 : (int64_t)f->emin - f->man_bits - 256;
    return fpki_round_pack(f, sign, e - 127, top, 1, c);
}

/* Rounds the number of SC into F.  MPFR reads it (for K*2^E, K) toward zero
 * at 128 bits; a magnitude beyond MPFR's exponent range (MPFR's underflow
 * or overflow flag: "1e-99999999999") goes to the core as far_value, and
 * so does K * 2^E when its leading bit lies beyond the stand-ins.  (A
 * factor K of fewer than 10^17 digits lies inside MPFR's widest range, so
 * E never has to pull back a K that MPFR could not hold.)  MPFR's own
 * flags and exponent range are left as they were. */
static fpk_bits round_number(const fpk_format *f, const scanned *sc, fpk_ctx *c)
{
    mpfr_flags_t saved = mpfr_flags_save();
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    if (sc->scaled) {
        mpfr_set_emin(mpfr_get_emin_min());
        mpfr_set_emax(mpfr_get_emax_max());
    }
    mpfr_clear_flags();
    mpfr_t x;
    mpfr_init2(x, 128);
    int ternary = sc->body ? mpfr_strtofr(x, sc->body, NULL, sc->base, MPFR_RNDZ)
                           : mpfr_set_ui(x, 1, MPFR_RNDZ);
    fpk_bits z;
    if (mpfr_underflow_p() || mpfr_overflow_p()) {
        z = far_value(f, sc->sign, mpfr_overflow_p(), c);
    } else if (mpfr_zero_p(x)) {
        z = fpki_zero_result(f, sc->sign, c);
    } else {
        mpz_t m;
        mpz_init(m);
        /* |pow2| <= 2^60 and |e| < 2^62: the sum fits */
        int64_t e = (int64_t)mpfr_get_z_2exp(m, x) + (sc->scaled ? sc->pow2 : 0);
        uint64_t w[2] = {0, 0};
        mpz_export(w, NULL, -1, sizeof w[0], 0, 0, m);
        mpz_clear(m);
        if (e + 127 > (int64_t)f->emax + 16)
            z = far_value(f, sc->sign, true, c);
        else if (e + 127 < (int64_t)f->emin - f->man_bits - 256)
            z = far_value(f, sc->sign, false, c);
        else
            z = fpki_round_pack(f, sc->sign, e, w[1], w[0] | (ternary != 0), c);
    }
    mpfr_clear(x);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
    return z;
}

int fpk_parse(const fpk_format *f, const char *s, fpk_bits *z, fpk_ctx *c, fpk_error *err)
{
    if (!s) {
        set_error(err, "no text to parse (NULL)");
        return FPK_ESYNTAX;
    }
    if (!f) {
        set_error(err, "no format given for \"%s\" (NULL)", quote_text(s).s);
        return FPK_ESYNTAX;
    }
    scanned sc;
    int rc = scan(s, &sc, err);
    if (rc != FPK_OK)
        return rc;

    fpk_ctx local = fpk_ctx_default();
    if (!c)
        c = &local;
    fpk_bits r;
    if (sc.kind == SC_NAN) {
        r = fpki_nan(f, false, c);
    } else if (sc.kind == SC_INF) {
        /* Exactly as converting an infinity (fpk_convert): NaN with invalid
         * where F has no infinity, +-max finite under saturate. */
        r = fpk_convert(f, &fpk_fp64, sc.sign ? UINT64_C(0xfff0000000000000)
                                              : UINT64_C(0x7ff0000000000000), c);
    } else {
        r = round_number(f, &sc, c);
    }
    if (z)
        *z = r;
    if (err) {
        err->code = FPK_OK;
        err->msg[0] = '\0';
    }
    return FPK_OK;
}
