/* fpk_format_exact and fpk_format_shortest: decimal text of an encoding.
 *
 * Both work on the exact value with GMP integers, never in floating point.
 * A finite nonzero value is sig * 2^q with q its ulp exponent; for q < 0 it
 * equals (sig * 5^-q) * 10^q, so its exact decimal digits are those of one
 * integer.  Text style (both functions), like printf's %g: with X the
 * decimal exponent of the first significant digit, plain notation
 * ("65504", "0.1", "0.00001") when -5 <= X < 16, otherwise scientific with
 * a signed exponent of at least two digits ("1e+16", "5.9604644775390625e-08");
 * no trailing zeros, no trailing point. */
#include <gmp.h>
#include <stdio.h>
#include <string.h>

#include "core-impl.h"

/* Output like snprintf: counts every byte, stores those that fit. */
typedef struct sink {
    char *buf;
    size_t len, n;
} sink;

static void put(sink *o, char ch)
{
    if (o->n + 1 < o->len)
        o->buf[o->n] = ch;
    o->n++;
}

static void put_str(sink *o, const char *s)
{
    for (; *s; s++)
        put(o, *s);
}

static size_t finish(sink *o)
{
    if (o->len > 0)
        o->buf[o->n < o->len ? o->n : o->len - 1] = '\0';
    return o->n;
}

/* Writes -D[0].D[1..N-1] * 10^X (the sign if SIGN) in the style above.
 * D holds N >= 1 digits, the first nonzero, the last nonzero. */
static void put_decimal(sink *o, bool sign, const char *d, size_t n, long x)
{
    if (sign)
        put(o, '-');
    if (x >= 0 && x < 16) {
        for (size_t i = 0; i <= (size_t)x; i++)
            put(o, i < n ? d[i] : '0');
        if (n > (size_t)x + 1) {
            put(o, '.');
            for (size_t i = (size_t)x + 1; i < n; i++)
                put(o, d[i]);
        }
    } else if (x < 0 && x >= -5) {
        put_str(o, "0.");
        for (long i = -1; i > x; i--)
            put(o, '0');
        for (size_t i = 0; i < n; i++)
            put(o, d[i]);
    } else {
        put(o, d[0]);
        if (n > 1) {
            put(o, '.');
            for (size_t i = 1; i < n; i++)
                put(o, d[i]);
        }
        char e[24];
        snprintf(e, sizeof e, "e%c%02ld", x < 0 ? '-' : '+', x < 0 ? -x : x);
        put_str(o, e);
    }
}

/* A finite nonzero encoding as sig * 2^q, q the exponent of its ulp. */
typedef struct finite {
    bool sign;
    uint64_t sig;
    int64_t q;
    bool lower_closer; /* the next encoding toward zero is half an ulp away */
    bool upper_closer; /* overflow starts a quarter ulp above: max finite
                          of a format without normal numbers (e1mY), where
                          overflow is judged at the format's precision */
    bool open_hi;      /* every larger value rounds to it: max finite, where
                          overflow saturates (FPK_SPECIAL_NONE) */
    bool open_lo;      /* every smaller positive value rounds to it: E8M0's
                          2^emin */
} finite;

/* Writes the text of A if it is zero, infinite or NaN and returns true;
 * otherwise fills *V and returns false. */
static bool special_or_finite(const fpk_format *f, fpk_bits a, sink *o, finite *v)
{
    fpk_ctx c = fpk_ctx_default();
    fpki_unpacked u = fpki_unpack(f, a, &c);
    switch (u.cls) {
    case FPK_CLASS_QNAN:
    case FPK_CLASS_SNAN:
        put_str(o, "nan");
        return true;
    case FPK_CLASS_INF:
        put_str(o, u.sign ? "-inf" : "inf");
        return true;
    case FPK_CLASS_ZERO:
        put_str(o, u.sign ? "-0" : "0");
        return true;
    default:
        break;
    }
    /* unpack gives sig with the hidden bit at man_bits for normals and the
     * mantissa field for subnormals, so exp is the ulp's exponent */
    v->sign = u.sign;
    v->sig = u.sig;
    v->q = u.exp;
    v->lower_closer = u.exp > f->emin - f->man_bits && u.sig == UINT64_C(1) << f->man_bits;
    fpk_bits mag = a & (f->exp_mask | f->man_mask);
    v->upper_closer = f->emax < f->emin && mag == f->max_finite;
    v->open_hi = f->special == FPK_SPECIAL_NONE && mag == f->max_finite;
    v->open_lo = f->special == FPK_SPECIAL_E8M0 && mag == 0;
    return false;
}

/* The exact decimal digits of a value: d[0..n-1] without trailing zeros,
 * the first nonzero; x is the decimal exponent of d[0].  The string is
 * GMP-allocated (alloc bytes). */
typedef struct digits {
    char *d;
    size_t n, alloc;
    long x;
} digits;

static digits exact_digits(const finite *v)
{
    mpz_t n;
    mpz_init(n);
    mpz_import(n, 1, -1, sizeof v->sig, 0, 0, &v->sig);
    long r = 0; /* the value is n * 10^r */
    if (v->q >= 0) {
        mpz_mul_2exp(n, n, (mp_bitcnt_t)v->q);
    } else {
        mpz_t p;
        mpz_init(p);
        mpz_ui_pow_ui(p, 5, (unsigned long)-v->q);
        mpz_mul(n, n, p);
        mpz_clear(p);
        r = (long)v->q;
    }
    digits g;
    g.d = mpz_get_str(NULL, 10, n);
    mpz_clear(n);
    g.alloc = strlen(g.d) + 1;
    g.n = g.alloc - 1;
    g.x = r + (long)g.n - 1;
    while (g.d[g.n - 1] == '0')
        g.n--;
    g.d[g.n] = '\0';
    return g;
}

static void free_digits(digits *g)
{
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(g->d, g->alloc);
}

size_t fpk_format_exact(const fpk_format *f, fpk_bits a, char *buf, size_t len)
{
    sink o = {buf, len, 0};
    finite v;
    if (!special_or_finite(f, a, &o, &v)) {
        digits g = exact_digits(&v);
        put_decimal(&o, v.sign, g.d, g.n, g.x);
        free_digits(&g);
    }
    return finish(&o);
}

/* Compares A * 10^R with 2^K: negative, zero or positive. */
static int cmp_pow(const mpz_t a, long r, int64_t k)
{
    mpz_t lhs, rhs, p;
    mpz_inits(lhs, rhs, p, NULL);
    mpz_ui_pow_ui(p, 10, (unsigned long)(r < 0 ? -r : r));
    mpz_mul_2exp(lhs, a, (mp_bitcnt_t)(k < 0 ? -k : 0));
    mpz_set_ui(rhs, 1);
    mpz_mul_2exp(rhs, rhs, (mp_bitcnt_t)(k > 0 ? k : 0));
    if (r >= 0)
        mpz_mul(lhs, lhs, p);
    else
        mpz_mul(rhs, rhs, p);
    int cmp = mpz_cmp(lhs, rhs);
    mpz_clears(lhs, rhs, p, NULL);
    return cmp;
}

/* Shortest round trip.  Under RNE every value less than half a gap away
 * from v rounds to v: 2^k_hi above, 2^k_lo below (a quarter ulp below a
 * power of two whose predecessor is half an ulp away).  A midpoint goes to
 * the neighbour whose significand is even: the upper one to v iff v's
 * significand is even (at max finite it is the overflow threshold, the
 * same rule: e4m3's 464 goes to 448); the lower one likewise, and always
 * below such a power of two (the predecessor is all ones, odd; with no
 * mantissa bits both are 1 and ties round up).  Where overflow saturates
 * (FPK_SPECIAL_NONE) every value above max finite goes to it; in a format
 * without normal numbers overflow starts a quarter ulp above max finite
 * (the midpoint on the grid of the format's precision, where max finite's
 * significand is even, so it is included); in E8M0
 * every positive value below 2^emin goes to 2^emin: those intervals are
 * open-ended (e2m3's 7.5 prints as "8").  For each length n, the
 * candidates are v's digits truncated to n (down) and that plus one unit in
 * the last place (up); the first length with a candidate inside the
 * interval wins, the nearer one if both are, the even one on a tie.  The
 * full exact digits always qualify, so the loop ends. */
size_t fpk_format_shortest(const fpk_format *f, fpk_bits a, char *buf, size_t len)
{
    sink o = {buf, len, 0};
    finite v;
    if (special_or_finite(f, a, &o, &v))
        return finish(&o);
    digits g = exact_digits(&v);
    bool even = (v.sig & 1) == 0;
    bool incl_hi = even || v.upper_closer, incl_lo = even || v.lower_closer;
    int64_t k_hi = v.upper_closer ? v.q - 2 : v.q - 1, k_lo = v.lower_closer ? v.q - 2 : v.q - 1;
    long r = g.x - (long)g.n + 1; /* weight of the last exact digit: 10^r */
    size_t n = 1;
    bool up = false;
    mpz_t tail, comp, p;
    mpz_inits(tail, comp, p, NULL);
    for (; n < g.n; n++) {
        /* down = v - tail * 10^r, up = v + comp * 10^r */
        mpz_set_str(tail, g.d + n, 10);
        mpz_ui_pow_ui(p, 10, g.n - n);
        mpz_sub(comp, p, tail);
        int c_lo = cmp_pow(tail, r, k_lo), c_hi = cmp_pow(comp, r, k_hi);
        bool down_ok = v.open_lo || c_lo < 0 || (c_lo == 0 && incl_lo);
        bool up_ok = v.open_hi || c_hi < 0 || (c_hi == 0 && incl_hi);
        if (down_ok && up_ok) {
            int near = mpz_cmp(tail, comp);
            up = near > 0 || (near == 0 && (g.d[n - 1] - '0') % 2 == 1);
            break;
        }
        if (down_ok || up_ok) {
            up = up_ok;
            break;
        }
    }
    mpz_clears(tail, comp, p, NULL);

    /* The first n digits, plus one in the last place if up. */
    long x = g.x;
    if (up) {
        size_t i = n;
        while (i > 0 && g.d[i - 1] == '9')
            g.d[--i] = '0';
        if (i > 0) {
            g.d[i - 1]++;
        } else {
            g.d[0] = '1'; /* 99..9 + 1: 10^(x+1) */
            x++;
        }
    }
    while (n > 1 && g.d[n - 1] == '0')
        n--;
    put_decimal(&o, v.sign, g.d, n, x);
    free_digits(&g);
    return finish(&o);
}
