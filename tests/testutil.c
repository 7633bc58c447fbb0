#include "testutil.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TU_DEFAULT_SEED UINT64_C(0x0f9c2d1e5eed2024)

uint64_t tu_seed(const char *suite)
{
    const char *s = getenv("FPK_SEED");
    uint64_t seed = TU_DEFAULT_SEED;
    if (s != NULL && *s != '\0') {
        char *end;
        seed = strtoull(s, &end, 0);
        if (*end != '\0') {
            fprintf(stderr, "%s: FPK_SEED=%s is not a number\n", suite, s);
            exit(2);
        }
    }
    printf("%s: seed %" PRIu64 " (set FPK_SEED=%" PRIu64 " to replay)\n", suite,
           seed, seed);
    return seed;
}

bool tu_exhaustive(void)
{
    const char *s = getenv("FPK_EXHAUSTIVE");
    return s != NULL && *s != '\0' && strcmp(s, "0") != 0;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void tu_rng_init(tu_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t tu_rng_next(tu_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t tu_rng_below(tu_rng *r, uint64_t n)
{
    if (n <= 1) /* an empty or one-value range, as degenerate formats give */
        return 0;
    /* Rejection keeps it uniform; the loop almost never repeats. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = tu_rng_next(r);
    while (x >= limit);
    return x % n;
}

static uint64_t low_mask(int n)
{
    return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

/* A special value of F with a random sign where it has one. */
static fpk_bits gen_special(const fpk_format *f, tu_rng *r)
{
    fpk_bits sign = (tu_rng_next(r) & 1) ? f->sign_mask : 0;
    fpk_bits all_exp = f->exp_mask;
    int m = f->man_bits;
    switch (tu_rng_below(r, 8)) {
    case 0:
        return sign;
    case 1:
        return f->inf != 0 ? sign | f->inf : sign | f->max_finite;
    case 2: /* a quiet NaN, payload random where there is room */
        if (f->special == FPK_SPECIAL_IEEE && m >= 1)
            return sign | all_exp | (UINT64_C(1) << (m - 1)) |
                   (tu_rng_next(r) & low_mask(m - 1));
        return sign | f->nan;
    case 3: /* a signaling NaN: top mantissa bit clear, mantissa nonzero */
        if (f->special == FPK_SPECIAL_IEEE && m >= 2) {
            fpk_bits payload = tu_rng_next(r) & low_mask(m - 1);
            return sign | all_exp | (payload != 0 ? payload : 1);
        }
        return sign | f->nan;
    case 4:
        return sign | f->max_finite;
    case 5:
        return sign | (f->exp_mask & (UINT64_C(1) << m)); /* min normal */
    case 6:
        return m > 0 ? sign | 1 : sign | (UINT64_C(1) << m);
    default:
        return sign | (f->max_finite - (f->max_finite > 1 ? 1 : 0));
    }
}

/* A mantissa field of M bits following one of TestFloat's patterns; TIE_AT,
 * if in [0, M), is the preferred length of the head before a tie bit. */
static uint64_t gen_pattern(int m, int tie_at, tu_rng *r)
{
    if (m == 0)
        return 0;
    uint64_t all = low_mask(m);
    int k = 1 + (int)tu_rng_below(r, (uint64_t)m); /* 1..m */
    switch (tu_rng_below(r, 11)) {
    case 0:
        return 0;
    case 1:
        return all;
    case 2: /* ones from the top */
        return all & ~low_mask(m - k);
    case 3: /* ones at the bottom */
        return low_mask(k);
    case 4: /* zeros at the top */
        return all >> k;
    case 5:
        return UINT64_C(1) << (k - 1);
    case 6:
    case 7:
    case 8: { /* a tie: head, a one, zeros; then one ulp up or down */
        int h = (tie_at >= 0 && tie_at < m && (tu_rng_next(r) & 1))
                    ? tie_at
                    : (int)tu_rng_below(r, (uint64_t)m);
        int p = m - 1 - h;
        uint64_t v = (tu_rng_next(r) & all & ~low_mask(p + 1)) | (UINT64_C(1) << p);
        uint64_t step = tu_rng_below(r, 3);
        if (step == 1 && v < all)
            v++;
        else if (step == 2)
            v--;
        return v;
    }
    case 9: { /* alternating runs of random lengths */
        uint64_t v = 0;
        int bit = (int)(tu_rng_next(r) & 1), pos = m;
        while (pos > 0) {
            int run = 1 + (int)tu_rng_below(r, (uint64_t)(pos < 8 ? pos : 8));
            pos -= run;
            if (bit)
                v |= low_mask(run) << pos;
            bit ^= 1;
        }
        return v;
    }
    default:
        return tu_rng_next(r) & all;
    }
}

fpk_bits tu_gen(const fpk_format *f, const fpk_format *near, tu_rng *r)
{
    if (near == NULL)
        near = f;
    uint64_t kind = tu_rng_below(r, 32);
    if (kind < 2)
        return gen_special(f, r);
    if (kind < 6)
        return tu_rng_next(r) & low_mask(f->width);

    int m = f->man_bits;
    fpk_bits sign = (tu_rng_next(r) & 1) ? f->sign_mask : 0;

    /* The unbiased exponent of the leading bit. */
    int lo = near->emin - near->man_bits, hi = near->emax;
    int e;
    switch (tu_rng_below(r, 8)) {
    case 0:
        e = lo - 2 + (int)tu_rng_below(r, 4); /* around the smallest subnormal */
        break;
    case 1:
        e = near->emin - 2 + (int)tu_rng_below(r, 4); /* around min normal */
        break;
    case 2:
        e = hi - 1 + (int)tu_rng_below(r, 3); /* around the overflow threshold */
        break;
    case 3:
        e = -1 + (int)tu_rng_below(r, 3);
        break;
    case 4:
    case 5:
        e = lo - 3 + (int)tu_rng_below(r, (uint64_t)(hi - lo + 6));
        break;
    default: /* anywhere in F */
        e = f->emin - m + (int)tu_rng_below(r, (uint64_t)(f->emax - f->emin + m + 1));
        break;
    }
    if (e > f->emax)
        e = f->emax;
    if (e < f->emin - m)
        e = f->emin - m;

    /* NEAR keeps man_bits bits after the leading one at this exponent, fewer
     * in its subnormal range: a tie for it has a head that long. */
    int kept = near->man_bits - (e < near->emin ? near->emin - e : 0);
    uint64_t man = gen_pattern(m, kept >= 0 && kept < m ? kept : -1, r);

    if (e >= f->emin) {
        fpk_bits z = sign | ((fpk_bits)(e + f->bias) << m) | man;
        if (f->special == FPK_SPECIAL_FN && (z & ~f->sign_mask) > f->max_finite)
            z = sign | f->max_finite;
        return z;
    }
    /* Subnormal in F: the leading bit (hidden in a normal) lands at bit
     * m - s; the pattern's low bits fall off. */
    int s = f->emin - e;
    return sign | (((UINT64_C(1) << m) | man) >> s);
}

const fpk_round tu_modes[TU_MODE_COUNT] = {FPK_RNE, FPK_RNA, FPK_RTZ,
                                           FPK_RUP, FPK_RDN, FPK_ROD};

const tu_variant tu_variants[TU_VARIANT_COUNT] = {
    {"plain", false, false, false, false},
    {"ftz", true, false, false, false},
    {"daz", false, true, false, false},
    {"saturate", false, false, true, false},
    {"tiny_before", false, false, false, true},
};

fpk_ctx tu_ctx(fpk_round mode, const tu_variant *v)
{
    fpk_ctx c = fpk_ctx_default();
    c.round = mode;
    c.flags = 0;
    c.ftz = v->ftz;
    c.daz = v->daz;
    c.saturate = v->saturate;
    c.tiny_before = v->tiny_before;
    return c;
}

const char *tu_mode_name(fpk_round mode)
{
    return fpk_round_name(mode);
}

tu_flagstr tu_flags_name(unsigned flags)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{FPK_INVALID, "iv"},
                 {FPK_DIVBYZERO, "dz"},
                 {FPK_OVERFLOW, "of"},
                 {FPK_UNDERFLOW, "uf"},
                 {FPK_INEXACT, "ix"}};
    tu_flagstr out = {""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (flags & names[i].bit) {
            if (out.s[0] != '\0')
                strcat(out.s, "|");
            strcat(out.s, names[i].name);
        }
    }
    if (flags & ~0x1fu)
        strcat(out.s, out.s[0] ? "|?" : "?");
    if (out.s[0] == '\0')
        strcpy(out.s, "-");
    return out;
}

int tu_hex_digits(const fpk_format *f)
{
    return (f->width + 3) / 4;
}

void tu_report_init(tu_report *rep, const char *suite)
{
    memset(rep, 0, sizeof *rep);
    rep->suite = suite;
    rep->max_print = 10;
}

static void count_failure(tu_report *rep)
{
    rep->mismatches++;
    rep->total_mismatches++;
}

bool tu_check(tu_report *rep, const fpk_format *f, ref_result want,
              fpk_bits got, unsigned got_flags, const char *what, ...)
{
    rep->cases++;
    rep->total_cases++;
    if (want.bits == got && want.flags == got_flags)
        return true;
    if (rep->total_mismatches < rep->max_print) {
        char buf[256];
        va_list ap;
        va_start(ap, what);
        vsnprintf(buf, sizeof buf, what, ap);
        va_end(ap);
        int w = tu_hex_digits(f);
        printf("%s: mismatch: %s: expected %0*" PRIx64 " %s got %0*" PRIx64 " %s\n",
               rep->suite, buf, w, want.bits, tu_flags_name(want.flags).s, w, got,
               tu_flags_name(got_flags).s);
    }
    count_failure(rep);
    return false;
}

void tu_fail(tu_report *rep, const char *what, ...)
{
    rep->cases++;
    rep->total_cases++;
    if (rep->total_mismatches < rep->max_print) {
        char buf[256];
        va_list ap;
        va_start(ap, what);
        vsnprintf(buf, sizeof buf, what, ap);
        va_end(ap);
        printf("%s: failure: %s\n", rep->suite, buf);
    }
    count_failure(rep);
}

void tu_report_line(tu_report *rep, const char *label, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, label);
    vsnprintf(buf, sizeof buf, label, ap);
    va_end(ap);
    printf("%s: %s: %" PRIu64 " cases, %" PRIu64 " mismatches\n", rep->suite, buf,
           rep->cases, rep->mismatches);
    fflush(stdout);
    rep->cases = 0;
    rep->mismatches = 0;
}

uint64_t tu_report_done(tu_report *rep)
{
    printf("%s: total: %" PRIu64 " cases, %" PRIu64 " mismatches\n", rep->suite,
           rep->total_cases, rep->total_mismatches);
    fflush(stdout);
    return rep->total_mismatches;
}
