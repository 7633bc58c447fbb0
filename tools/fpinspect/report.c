/* The pieces of text and JSON that fpinspect's reports share. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fpinspect.h"

static const char *const flag_names[] = {"invalid", "divbyzero", "overflow", "underflow", "inexact"};

const char *class_name(fpk_class k)
{
    static const char *const names[] = {"zero", "subnormal", "normal", "inf", "quiet NaN", "signaling NaN"};
    return names[k];
}

void flags_text(unsigned flags, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < 5; i++)
        if (flags & (1u << i))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "", flag_names[i]);
    if (!buf[0])
        snprintf(buf, len, "-");
}

json_t *flags_json(unsigned flags)
{
    json_t *a = json_array();
    for (int i = 0; i < 5; i++)
        if (flags & (1u << i))
            json_array_append_new(a, json_string(flag_names[i]));
    return a;
}

json_t *num_json(double v)
{
    return isfinite(v) ? json_real(v) : json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

int hex_digits(const fpk_format *f)
{
    return (f->width + 3) / 4;
}

char *bits_hex(const fpk_format *f, fpk_bits a)
{
    return cli_strf("0x%0*" PRIx64, hex_digits(f), a);
}

void bin(char *out, fpk_bits v, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = (char)('0' + (v >> (n - 1 - i) & 1));
    out[n] = '\0';
}

fpk_bits min_normal(const fpk_format *f)
{
    return f->special == FPK_SPECIAL_E8M0 ? 0 : (fpk_bits)1 << f->man_bits;
}

void print_json(json_t *j)
{
    json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(j);
}
