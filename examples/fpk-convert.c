/* fpk-convert: rounds decimal numbers into fp16, bf16, e4m3 and e5m2 under
 * every rounding mode and prints each result's encoding, the exception flags
 * it raised and its exact value.
 *
 *     fpk-convert [NUMBER ...]        (default: 0.1 65504 1e-8 464)
 *
 * Each number is rounded once, straight from its decimal text (fpk_parse),
 * so no intermediate binary64 rounding can hide a double rounding, and its
 * value is printed with every digit (fpk_format_exact).  Stochastic rounding
 * uses a fresh context with seed 0 for every line, so its output is
 * reproducible. */
#include <stdio.h>
#include <string.h>

#include "fpkit.h"

static const char *const mode_names[FPK_ROUND_COUNT] = {
    "rne", "rna", "rtz", "rup", "rdn", "rod", "sr",
};

static const fpk_format *const targets[] = {&fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2};

/* FLAGS as "of,ix", in IEEE 754 order, or "-" for none. */
static const char *flags_text(unsigned flags, char buf[16])
{
    static const struct {
        unsigned flag;
        const char *name;
    } names[] = {
        {FPK_INVALID, "nv"},  {FPK_DIVBYZERO, "dz"}, {FPK_OVERFLOW, "of"},
        {FPK_UNDERFLOW, "uf"}, {FPK_INEXACT, "ix"},
    };
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (flags & names[i].flag) {
            if (buf[0])
                strcat(buf, ",");
            strcat(buf, names[i].name);
        }
    return buf[0] ? buf : "-";
}

/* Prints the lines for TEXT; returns 0, or 2 if it is not a number. */
static int show(const char *text)
{
    printf("%s\n", text);
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        const fpk_format *f = targets[t];
        for (int mode = 0; mode < FPK_ROUND_COUNT; mode++) {
            fpk_ctx ctx = fpk_ctx_default();
            ctx.round = (fpk_round)mode;
            fpk_bits z;
            fpk_error err;
            if (fpk_parse(f, text, &z, &ctx, &err) != FPK_OK) {
                fprintf(stderr, "fpk-convert: %s: %s\n", text, err.msg);
                return 2;
            }
            char bits[24], value[256], flags[16];
            snprintf(bits, sizeof bits, "0x%0*llx", (f->width + 3) / 4, (unsigned long long)z);
            fpk_format_exact(f, z, value, sizeof value);
            printf("  %-4s %-3s  %-6s  %-5s  %s\n", f->name, mode_names[mode], bits,
                   flags_text(ctx.flags, flags), value);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"0.1", "65504", "1e-8", "464"};
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: fpk-convert [NUMBER ...]\n");
        return 0;
    }
    printf("flags: nv invalid, dz divide-by-zero, of overflow, uf underflow, ix inexact\n");
    int status = 0;
    if (argc > 1)
        for (int i = 1; i < argc && status == 0; i++)
            status = show(argv[i]);
    else
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0] && status == 0; i++)
            status = show(defaults[i]);
    return status;
}
