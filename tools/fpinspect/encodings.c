/* --table: every encoding of a format of at most 8 bits, one per line, as
 * textbooks draw it. */
#include <stdlib.h>
#include <string.h>

#include "fpinspect.h"

void report_encodings(const fpk_format *f, const opts *o)
{
    if (f->width > 8)
        cli_die(CLI_EXIT_USAGE, "--table %s: the format has %d bits; tables list formats of at most 8 bits",
                f->name, f->width);
    size_t count = (size_t)1 << f->width;
    char **values = cli_xcalloc(count, sizeof *values);
    int vw = 22; /* the value column: at least 22 wide, as wide as its longest */
    for (fpk_bits a = 0; a < count; a++) {
        values[a] = o->json ? exact_text(f, a) : value_text(f, a, o, SHORT_DIGITS);
        if ((int)strlen(values[a]) > vw)
            vw = (int)strlen(values[a]);
    }
    int ew = f->exp_bits > 3 ? f->exp_bits : 3, mw = f->man_bits > 3 ? f->man_bits : 3;
    json_t *rows = json_array();
    if (!o->json)
        printf("%-6s %s %-*s %-*s %5s  %-*s %s\n", "bits", "s", f->exp_bits, "exp", mw, "man", "E", vw, "value",
               "class");
    for (fpk_bits a = 0; a < count; a++) {
        fpk_class k = fpk_classify(f, a);
        fpk_bits ef = (a & f->exp_mask) >> f->man_bits;
        char eb[16], mb[64], *h = bits_hex(f, a);
        bin(eb, ef, f->exp_bits);
        bin(mb, a & f->man_mask, f->man_bits);
        int e = ef == 0 ? f->emin : (int)ef - f->bias;
        if (o->json) {
            json_array_append_new(rows, json_pack("{s:s,s:i,s:s,s:s,s:i,s:s,s:s}", "bits", h, "sign",
                                                  (int)fpk_signbit(f, a), "exponent", eb, "mantissa", mb, "E", e,
                                                  "value", values[a], "class", class_name(k)));
        } else {
            char es[8];
            snprintf(es, sizeof es, "%d", e);
            printf("%-6s %d %-*s %-*s %5s  %-*s %s\n", h, (int)fpk_signbit(f, a), ew, eb, mw, mb,
                   k <= FPK_CLASS_NORMAL ? es : "", vw, values[a], class_name(k));
        }
        free(h), free(values[a]);
    }
    free(values);
    if (o->json)
        print_json(json_pack("{s:s,s:o}", "format", f->name, "table", rows));
    else
        json_decref(rows);
}
