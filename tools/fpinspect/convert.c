/* What a value became in each format: the judgement of one result, its
 * line of the text table (fitted to TABLE_WIDTH) and its JSON entry. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpinspect.h"

/* What happened: in the table, short, and in JSON, as it always read. */
static const struct {
    const char *text, *json;
} outcome_names[] = {
    [OUT_EXACT] = {"exact", "exact"},
    [OUT_UP] = {"rounded up", "rounded up"},
    [OUT_DOWN] = {"rounded down", "rounded down"},
    [OUT_SUB_EXACT] = {"subnormal, exact", "subnormal, exact"},
    [OUT_SUB_UP] = {"subnormal, up", "subnormal, rounded"},
    [OUT_SUB_DOWN] = {"subnormal, down", "subnormal, rounded"},
    [OUT_TO_ZERO] = {"to zero", "underflowed to zero"},
    [OUT_OVER_INF] = {"overflow to inf", "overflowed to inf"},
    [OUT_OVER_NAN] = {"overflow to NaN", "overflowed to NaN"},
    [OUT_OVER_MAX] = {"to max finite", "overflowed, held at max finite"},
    [OUT_BECAME_NAN] = {"became NaN", "became NaN"},
    [OUT_NAN] = {"NaN", "NaN"},
    [OUT_NAN_LACKING] = {"format lacks NaN", "NaN, which the format lacks"},
};

result judge(const fpk_format *f, fpk_bits z, unsigned flags, mpfr_srcptr x)
{
    mpfr_t v;
    mpfr_init2(v, 64);
    value_of(v, f, z);
    fpk_class k = fpk_classify(f, z);
    result r = {.f = f, .bits = z, .flags = flags, .rel_error = rel_error(x, v)};
    r.underflow = mpfr_regular_p(x) && k == FPK_CLASS_ZERO;
    r.subnormal = k == FPK_CLASS_SUBNORMAL;
    r.overflow = (flags & FPK_OVERFLOW) != 0;
    int dir = mpfr_nan_p(x) || mpfr_nan_p(v) ? 0 : mpfr_cmp(v, x);
    r.what = mpfr_nan_p(x)               ? (mpfr_nan_p(v) ? OUT_NAN : OUT_NAN_LACKING)
             : mpfr_nan_p(v)             ? (r.overflow ? OUT_OVER_NAN : OUT_BECAME_NAN)
             : r.overflow && mpfr_inf_p(v) ? OUT_OVER_INF
             : r.overflow                ? OUT_OVER_MAX
             : r.underflow               ? OUT_TO_ZERO
             : r.subnormal               ? (dir > 0 ? OUT_SUB_UP : dir < 0 ? OUT_SUB_DOWN : OUT_SUB_EXACT)
             : dir > 0                   ? OUT_UP
             : dir < 0                   ? OUT_DOWN
                                         : OUT_EXACT;
    mpfr_clear(v);
    return r;
}

json_t *result_json(const result *r, const char *from)
{
    char *h = bits_hex(r->f, r->bits), *v = exact_text(r->f, r->bits);
    json_t *e = json_pack("{s:s,s:s,s:s,s:o,s:o,s:b,s:b,s:b,s:s,s:s}", "format", r->f->name, "bits", h,
                          "value", v, "rel_error", num_json(r->rel_error), "flags", flags_json(r->flags),
                          "underflow", r->underflow, "subnormal", r->subnormal, "overflow", r->overflow,
                          "note", outcome_names[r->what].json, "from", from);
    free(h), free(v);
    return e;
}

char *results_label(const opts *o)
{
    return cli_strf("to (%s%s%s)", fpk_round_name(o->ctx.round), o->ctx.ftz ? " ftz" : "",
                    o->ctx.saturate ? " sat" : "");
}

/* The widest value text of ROWS with DIGITS significant digits. */
static int value_width(const result *rows, int n, const opts *o, int digits)
{
    int w = (int)strlen("value"); /* (every cell here is ASCII) */
    for (int i = 0; i < n; i++) {
        char *v = value_text(rows[i].f, rows[i].bits, o, digits);
        if ((int)strlen(v) > w)
            w = (int)strlen(v);
        free(v);
    }
    return w;
}

enum { COL_NAME, COL_BITS, COL_VALUE, COL_REL, COL_FLAGS, COL_WHAT, NCOLS };

/* R's cell in column J, but for the value's. */
static char *cell(const result *r, int j)
{
    char fl[64];
    switch (j) {
    case COL_NAME: return cli_strf("%s", r->f->name);
    case COL_BITS: return bits_hex(r->f, r->bits);
    case COL_REL: return isfinite(r->rel_error) ? cli_strf("%.3e", r->rel_error) : cli_strf("inf");
    case COL_FLAGS: flags_text(r->flags, fl, sizeof fl); return cli_strf("%s", fl);
    default: return cli_strf("%s", outcome_names[r->what].text);
    }
}

void print_results(const char *label, const result *rows, int n, const opts *o)
{
    static const char *const headers[NCOLS] = {"", "bits", "value", "rel.err", "flags", "result"};
    const int indent = 2;
    char **cells = cli_xcalloc((size_t)n * NCOLS, sizeof *cells);
    int others = indent + 2 * (NCOLS - 1); /* the width of all but the values */
    for (int j = 0; j < NCOLS; j++) {
        if (j == COL_VALUE)
            continue;
        int w = (int)strlen(j == COL_NAME ? label : headers[j]);
        for (int i = 0; i < n; i++) {
            cells[i * NCOLS + j] = cell(&rows[i], j);
            if ((int)strlen(cells[i * NCOLS + j]) > w)
                w = (int)strlen(cells[i * NCOLS + j]);
        }
        others += w;
    }
    /* Values lose digits until the table fits.  One digit always does:
     * the label is at most 16 wide, a name 10, the bits 18, a relative
     * error 10 ("4.941e-324"), the flags 17 ("underflow,inexact") and what
     * happened 16, which leaves 11 for "-0.00001..." or "-1...e-308". */
    int digits = SHORT_DIGITS;
    while (!o->exact && digits > 1 && others + value_width(rows, n, o, digits) > TABLE_WIDTH)
        digits--;
    for (int i = 0; i < n; i++)
        cells[i * NCOLS + COL_VALUE] = value_text(rows[i].f, rows[i].bits, o, digits);

    table *t = table_new(NCOLS, indent);
    for (int j = 0; j < NCOLS; j++)
        table_column(t, j, j == COL_NAME ? label : headers[j], true, false);
    for (int k = 0; k < n * NCOLS; k++) {
        table_add(t, "%s", cells[k]);
        free(cells[k]);
    }
    table_print(t, stdout, TABLE_WIDTH);
    table_free(t);
    free(cells);
}
