/* Text for the tools' tables (text.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "text.h"

/* P, a percentage, into BUF of LEN bytes (cli_percent_of); WHOLE: it is
 * exactly 100. */
static const char *percent(char *buf, size_t len, double p, bool capped, bool whole)
{
    if (isnan(p))
        return "-";
    if (p == 0)
        return "0";
    if (capped && whole)
        return "100";
    if (p < 0.01)
        return "<0.01";
    if (capped && p > 99.99)
        return ">99.99";
    snprintf(buf, len, "%.2f", p);
    return buf;
}

const char *cli_percent(char *buf, uint64_t n, uint64_t d)
{
    if (!d)
        return "-";
    return percent(buf, 8, 100.0 * (double)n / (double)d, true, n == d);
}

const char *cli_percent_of(char *buf, double f, bool capped)
{
    return percent(buf, 24, 100 * f, capped, f == 1);
}

const char *cli_plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

void cli_shape_text(char *buf, size_t len, int ndim, const uint64_t *shape)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = -1; i <= ndim && used < len; i++) {
        int n = i < 0       ? snprintf(buf + used, len - used, "[")
                : i == ndim ? snprintf(buf + used, len - used, "]")
                            : snprintf(buf + used, len - used, "%s%" PRIu64, i ? ", " : "",
                                       shape[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

json_t *cli_json_count(uint64_t n)
{
    return json_integer((json_int_t)n);
}

json_t *cli_json_shape(int ndim, const uint64_t *shape)
{
    json_t *a = json_array();
    for (int d = 0; d < ndim; d++)
        json_array_append_new(a, cli_json_count(shape[d]));
    return a;
}

char *cli_printable(const char *s)
{
    char *out = cli_xcalloc(4 * strlen(s) + 1, 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p != 0x7f)
            *o++ = (char)*p;
        else if (*p == '\n' || *p == '\t' || *p == '\r')
            o += sprintf(o, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
        else
            o += sprintf(o, "\\x%02x", *p);
    }
    return out;
}

void cli_csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}
