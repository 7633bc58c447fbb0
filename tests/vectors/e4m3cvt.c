/* A small fp32 -> e4m3 converter (OCP OFP8 E4M3, round to nearest even,
 * tininess after rounding), written without libfpkit as a user's own
 * implementation would be: the example of fpvectors(1) and fpverify(1).
 *
 *     e4m3cvt [--bug NAME] -
 *
 * reads fpvectors lines (the first field is the fp32 operand, 8 hex
 * digits) from standard input and writes "OPERAND RESULT FLAGS" for each,
 * in the same layout.  --bug plants one subtle bug: ties (ties truncated),
 * flags (underflow raised for exact subnormal results), subnormal
 * (subnormal results flushed to zero), nan (the NaN keeps the operand's
 * sign), overflow (overflow gives the largest finite value instead of
 * NaN).  Without arguments it checks itself on values worked out by hand,
 * and exits 1 on a difference. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* TestFloat's flag bits. */
enum { INEXACT = 0x01, UNDERFLOW = 0x02, OVERFLOW = 0x04, INVALID = 0x10 };
enum { BUG_NONE, BUG_TIES, BUG_FLAGS, BUG_SUBNORMAL, BUG_NAN, BUG_OVERFLOW };

/* SIG >> SHIFT rounded to nearest even (ties truncated under BUG_TIES);
 * *INEXACT when bits were dropped. */
static uint32_t round_sig(uint32_t sig, int shift, int bug, bool *inexact)
{
    if (shift > 30) { /* everything is below half a unit */
        *inexact = sig != 0;
        return 0;
    }
    uint32_t kept = sig >> shift, rem = sig & ((1u << shift) - 1), half = 1u << (shift - 1);
    *inexact = rem != 0;
    bool tie = rem == half;
    if (rem > half || (tie && (kept & 1) && bug != BUG_TIES))
        kept++;
    return kept;
}

static unsigned convert(uint32_t a, int bug, unsigned *flags)
{
    unsigned sign = a >> 31 << 7;
    int exp = (int)(a >> 23 & 0xff);
    uint32_t man = a & 0x7fffff;
    *flags = 0;
    if (exp == 0xff) { /* e4m3 has no infinity: inf and every NaN give NaN */
        if (man == 0 || !(man & 0x400000))
            *flags = INVALID;
        return bug == BUG_NAN && man ? sign | 0x7f : 0x7f;
    }
    if (exp == 0 && man == 0)
        return sign;
    uint32_t sig = exp ? man | 0x800000 : man; /* value = sig * 2^e */
    int e = (exp ? exp : 1) - 127 - 23;
    int lead = e + 31 - __builtin_clz(sig); /* floor(log2 value) */
    int q = (lead < -6 ? -6 : lead) - 3;    /* exponent of the result's unit */
    bool inexact;
    uint32_t kept = round_sig(sig, q - e, bug, &inexact);
    /* Tiny after rounding: rounded with an unbounded exponent, below 2^-6;
     * only a value in [2^-7, 2^-6) can round up to 2^-6. */
    bool tiny = lead < -6;
    if (lead == -7) {
        bool ignored;
        tiny = round_sig(sig, lead - 3 - e, BUG_NONE, &ignored) != 16;
    }
    if (inexact)
        *flags |= INEXACT;
    if (tiny && (inexact || bug == BUG_FLAGS))
        *flags |= UNDERFLOW;
    if (kept == 16) /* carried into the next binade */
        kept = 8, q++;
    if (q > 5 || (q == 5 && kept > 14)) { /* above 448 */
        *flags = OVERFLOW | INEXACT;
        return bug == BUG_OVERFLOW ? sign | 0x7e : 0x7f;
    }
    if (kept < 8) { /* subnormal: the unit is 2^-9 */
        if (bug == BUG_SUBNORMAL && kept) {
            *flags = UNDERFLOW | INEXACT;
            return sign;
        }
        return sign | kept;
    }
    return sign | (unsigned)(q + 10) << 3 | (kept - 8);
}

static int self_check(void)
{
    static const struct {
        uint32_t a;
        unsigned z, flags;
    } cases[] = {
        {0x3F800000, 0x38, 0x00}, /* 1 */
        {0xBF800000, 0xB8, 0x00}, /* -1 */
        {0x3F880000, 0x38, 0x01}, /* 1.0625: the tie of 1 and 1.125, to even 1 */
        {0x3F980000, 0x3A, 0x01}, /* 1.1875: the tie of 1.125 and 1.25, to even 1.25 */
        {0x43E00000, 0x7E, 0x00}, /* 448, max finite */
        {0x43E80000, 0x7E, 0x01}, /* 464: the tie of 448 and 480, to 448 */
        {0x43E80001, 0x7F, 0x05}, /* just above 464: overflow, NaN */
        {0xC3F00000, 0x7F, 0x05}, /* -480 */
        {0x3B000000, 0x01, 0x00}, /* 2^-9, the smallest subnormal */
        {0x3A800000, 0x00, 0x03}, /* 2^-10: the tie of 0 and 2^-9, to 0 */
        {0x3A800001, 0x01, 0x03}, /* just above it */
        {0x3C700000, 0x08, 0x03}, /* 1.875 * 2^-7: the tie of 7 and 8 * 2^-9, to 2^-6; tiny,
                                     exact with an unbounded exponent */
        {0x3C780000, 0x08, 0x01}, /* 1.9375 * 2^-7: rounds to 2^-6 unbounded too, not tiny */
        {0x3C600000, 0x07, 0x00}, /* 7 * 2^-9, the largest subnormal */
        {0x7FC00000, 0x7F, 0x00}, /* quiet NaN */
        {0xFF800001, 0x7F, 0x10}, /* signaling NaN */
        {0x7F800000, 0x7F, 0x10}, /* inf: no infinity in e4m3 */
        {0x80000000, 0x80, 0x00}, /* -0 */
        {0x00000001, 0x00, 0x03}, /* the smallest fp32 subnormal */
    };
    int bad = 0, n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++) {
        unsigned flags, z = convert(cases[i].a, BUG_NONE, &flags);
        if (z != cases[i].z || flags != cases[i].flags) {
            printf("e4m3cvt: %08" PRIX32 " gives %02X %02X, expected %02X %02X\n", cases[i].a, z, flags, cases[i].z,
                   cases[i].flags);
            bad++;
        }
    }
    printf("e4m3cvt: %d passed, %d failed\n", n - bad, bad);
    return bad != 0;
}

int main(int argc, char **argv)
{
    static const char *const bugs[] = {"none", "ties", "flags", "subnormal", "nan", "overflow"};
    int bug = BUG_NONE;
    if (argc == 1)
        return self_check();
    if (argc == 4 && strcmp(argv[1], "--bug") == 0) {
        for (bug = 5; bug > 0 && strcmp(argv[2], bugs[bug]) != 0; bug--)
            ;
        if (bug == 0) {
            fprintf(stderr, "e4m3cvt: unknown bug \"%s\"\n", argv[2]);
            return 2;
        }
    } else if (argc != 2) {
        fprintf(stderr, "usage: e4m3cvt [--bug NAME] -\n");
        return 2;
    }
    char line[256];
    unsigned long lineno = 0;
    while (fgets(line, sizeof line, stdin)) {
        char *end;
        lineno++;
        unsigned long a = strtoul(line, &end, 16);
        if (end == line || a > 0xffffffff) {
            fprintf(stderr, "e4m3cvt: line %lu: no fp32 operand\n", lineno);
            return 2;
        }
        unsigned flags, z = convert((uint32_t)a, bug, &flags);
        printf("%08lX %02X %02X\n", a, z, flags);
    }
    return 0;
}
