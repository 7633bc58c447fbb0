/* --list-formats: the built-in formats side by side. */
#include <math.h>
#include <stdlib.h>

#include "fpinspect.h"

/* The special values in brief. */
static const char *specials_text(const fpk_format *f)
{
    switch (f->special) {
    case FPK_SPECIAL_IEEE: return "inf, NaN";
    case FPK_SPECIAL_FN: return "NaN only (no inf)";
    case FPK_SPECIAL_FNUZ: return "NaN only (no inf, no -0)";
    case FPK_SPECIAL_NONE: return "none (no inf, no NaN)";
    case FPK_SPECIAL_E8M0: return "NaN only (unsigned, no 0)";
    }
    return "?";
}

void report_formats(const opts *o)
{
    json_t *arr = json_array();
    if (!o->json)
        printf("%-8s %4s %3s %3s %4s %-15s %-10s %-13s %6s %s\n", "name", "bits", "exp", "man", "bias",
               "max finite", "min normal", "min subnormal", "digits", "specials");
    for (const fpk_format *const *p = fpk_formats; *p; p++) {
        const fpk_format *f = *p;
        bool subnormals = f->man_bits > 0 && f->special != FPK_SPECIAL_E8M0;
        double digits = (f->man_bits + 1) * log10(2.0);
        const char *spec = specials_text(f);
        if (o->json) {
            char *maxv = exact_text(f, f->max_finite), *minn = exact_text(f, min_normal(f)),
                 *mins = subnormals ? exact_text(f, 1) : cli_strf("none");
            json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:f,s:s}", "name", f->name,
                                                 "aliases", f->aliases, "width", f->width, "exp_bits", f->exp_bits,
                                                 "man_bits", f->man_bits, "bias", f->bias, "max_finite", maxv,
                                                 "min_normal", minn, "min_subnormal", mins, "decimal_digits",
                                                 digits, "specials", spec));
            free(maxv), free(minn), free(mins);
        } else {
            /* the largest value to six digits (--info or --exact gives
             * every one), the smallest as powers of two */
            char *maxv = value_text(f, f->max_finite, o, 6), *minn = cli_strf("2^%d", f->emin);
            char *mins = subnormals ? cli_strf("2^%d", f->emin - f->man_bits) : cli_strf("none");
            printf("%-8s %4d %3d %3d %4d %-15s %-10s %-13s %6.2f %s\n", f->name, f->width, f->exp_bits,
                   f->man_bits, f->bias, maxv, minn, mins, digits, spec);
            free(maxv), free(minn), free(mins);
        }
    }
    if (o->json)
        print_json(json_pack("{s:o}", "formats", arr));
    else
        json_decref(arr);
}
