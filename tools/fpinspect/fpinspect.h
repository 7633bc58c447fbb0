/* fpinspect's parts: the options every report reads; the pieces of text
 * and JSON the reports share (report.c); decimal texts of values, exact or
 * shortened, and the exact value of a number given (decimal.c); and the
 * reports: a value (value.c, its --to table in convert.c), --info
 * (info.c), --table (encodings.c), --list-formats (formats.c) and a block
 * of values under --recipe (recipe.c). */
#ifndef FPINSPECT_H
#define FPINSPECT_H

#include <jansson.h>
#include <mpfr.h>
#include <stdbool.h>

#include "cli.h"
#include "table.h"

/* The significant digits a long decimal is shortened to: enough to tell
 * any two fp64 numbers apart. */
#define SHORT_DIGITS 17

/* The options that shape every report. */
typedef struct opts {
    const fpk_format *fmt;
    fpk_ctx ctx; /* mode, ftz, saturate; flags always start at 0 */
    const fpk_format *to[CLI_MAX_TO];
    int nto;
    bool json;
    bool exact; /* every digit of every decimal, however long */
} opts;

/* report.c: names, bits and JSON. */
const char *class_name(fpk_class k);
/* "invalid", "underflow,inexact", or "-" for none. */
void flags_text(unsigned flags, char *buf, size_t len);
json_t *flags_json(unsigned flags);
/* A JSON number, or "nan", "inf", "-inf". */
json_t *num_json(double v);
int hex_digits(const fpk_format *f);
char *bits_hex(const fpk_format *f, fpk_bits a);
/* The N low bits of V in binary, most significant first, into OUT. */
void bin(char *out, fpk_bits v, int n);
/* The smallest positive normal encoding: E8M0's exponent field 0 is one. */
fpk_bits min_normal(const fpk_format *f);
/* J on one line of standard output, compact, keys in order; frees J. */
void print_json(json_t *j);

/* decimal.c: decimal texts.  Each returns new memory (free it). */
/* X's exact decimal (finite binary expansion), in the library's style:
 * plain for decimal exponents -5..15, else scientific. */
char *mpfr_exact(mpfr_srcptr x);
/* EXACT, a text in that style, cut after DIGITS significant digits with
 * "..." (before the exponent) when it has more: "1.0000000000000000...e-08";
 * plain only while every digit before the point is kept.  Special values
 * and short texts come back as they are. */
char *decimal_short(const char *exact, int digits);
char *exact_text(const fpk_format *f, fpk_bits a);
char *shortest_text(const fpk_format *f, fpk_bits a);
/* A's value for a text report: exact with --exact, else shortened to
 * DIGITS significant digits. */
char *value_text(const fpk_format *f, fpk_bits a, const opts *o, int digits);
/* 2^E for a text report, likewise. */
char *pow2_text(long e, const opts *o);
/* A's exact value into X (precision 64 holds every format's value). */
void value_of(mpfr_ptr x, const fpk_format *f, fpk_bits a);
/* |z - x| / |x| as a double; inf when z is not finite, 0 when both are 0,
 * the same infinity or both NaN. */
double rel_error(mpfr_srcptr x, mpfr_srcptr z);
/* The value of S, a number fpk_parse accepts, into X (4096 bits, rounded
 * to nearest); 0, or 1 if it is at least 2^emax of MPFR in magnitude, -1
 * if nonzero and below 2^(emin-1) (X is then not set). */
int read_number(mpfr_ptr x, const char *s);

/* The reports. */
/* One VALUE: its rounding (a number) or its fields (a bit pattern), and
 * what it becomes in each --to format. */
void report_value(const char *arg, const opts *o);
/* The --to table: ROWS results of one value in formats (LABEL heads the
 * first column), fitted to TABLE_WIDTH; value.c fills the rows. */
typedef enum outcome {
    OUT_EXACT,
    OUT_UP,
    OUT_DOWN,
    OUT_SUB_EXACT,
    OUT_SUB_UP,
    OUT_SUB_DOWN,
    OUT_TO_ZERO,
    OUT_OVER_INF,
    OUT_OVER_NAN,
    OUT_OVER_MAX,
    OUT_BECAME_NAN,
    OUT_NAN,
    OUT_NAN_LACKING,
} outcome;
typedef struct result {
    const fpk_format *f;
    fpk_bits bits;
    unsigned flags;
    double rel_error;
    outcome what;
    bool underflow, subnormal, overflow;
} result;
/* Z (flags FLAGS) in F, the result of rounding or converting the value X. */
result judge(const fpk_format *f, fpk_bits z, unsigned flags, mpfr_srcptr x);
void print_results(const char *label, const result *rows, int n, const opts *o);
/* One entry of a report's "to" array; FROM says what was rounded:
 * "input" (the number given) or "encoding" (the bit pattern). */
json_t *result_json(const result *r, const char *from);
/* The label of the --to table's first column: "to (rne)", "to (rtz ftz sat)". */
char *results_label(const opts *o);

void report_info(const fpk_format *f, const opts *o);
void report_encodings(const fpk_format *f, const opts *o);
void report_formats(const opts *o);
/* The values of the words VALUES (each one value or several,
 * comma-separated, read by fpk_parse into float32) quantised as one
 * tensor under R, called NAME, viewed as SHAPE when HAS_SHAPE. */
void report_recipe(const char *name, const fpk_recipe *r, char *const *values, int nvalues,
                   const fpk_raw_spec *shape, bool has_shape, const opts *o);

#endif
