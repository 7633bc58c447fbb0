/* Test-vector lines shared by fpvectors and fpverify: one case of one
 * operation per line, in Berkeley TestFloat's layout (testfloat_gen):
 *
 *     OPERAND... RESULT FLAGS
 *
 * fields separated by one space, each upper-case hexadecimal zero-padded to
 * its width: a format's encoding in ceil(width/4) digits (tf32 in its
 * 32-bit container, 8 digits with the low 13 bits zero), an int64 in 16
 * digits (two's complement), a comparison's result as one digit 0 or 1, and
 * the flags in 2 digits with TestFloat's bits: inexact 01, underflow 02,
 * overflow 04, infinite (divide by zero) 08, invalid 10. */
#ifndef FPKIT_VECTORS_H
#define FPKIT_VECTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fpkit-tensor.h"
#include "options.h"

typedef enum vec_opcode {
    VEC_ADD, VEC_SUB, VEC_MUL, VEC_DIV, VEC_FMA, VEC_SQRT, VEC_CONVERT,
    VEC_EQ, VEC_LT, VEC_LE, VEC_EQ_SIGNALING, VEC_LT_SIGNALING, VEC_LE_SIGNALING,
    VEC_TO_INT, VEC_FROM_INT,
} vec_opcode;

/* What a field holds. */
typedef enum vec_kind { VEC_FLOAT, VEC_INT, VEC_BOOL } vec_kind;

typedef struct vec_op {
    const char *name;
    vec_opcode code;
    int arity;        /* operands, 1 to 3 */
    vec_kind in, out; /* the operands' kind and the result's */
} vec_op;

/* What the vectors of a file test: the operation, its formats and context. */
typedef struct vec_spec {
    const vec_op *op;
    const fpk_format *fmt; /* --format: the operands' format, or from_int's result's */
    const fpk_format *to;  /* convert's --to; NULL for the other operations */
    fpk_ctx ctx;           /* mode and options; flags always 0 */
} vec_spec;

/* One case: operands, result (an encoding, an int64's two's complement, or
 * 0/1) and fpkit's flags (FPK_INVALID ...). */
typedef struct vec_case {
    uint64_t in[3];
    uint64_t z;
    unsigned flags;
} vec_case;

/* The options both tools take, as entries of their option tables. */
#define VEC_OPTIONS                                                                            \
    {.key = CLI_OP, .help = "add, sub, mul, div, fma, sqrt, convert, eq, lt, le, eq_signaling, "      \
                     "lt_signaling, le_signaling, to_int, from_int"},                          \
        {.key = CLI_FORMAT, .help = "the operands' format (from_int: the result's)"},                 \
        {.key = CLI_TO, .value = "FMT", .help = "convert's result format"},                           \
        {.key = CLI_ROUND, .help = "rne (default), rna, rtz, rup, rdn, rod"},                         \
        {.key = CLI_TININESS, .value = "before|after"}, {.key = CLI_FTZ}, {.key = CLI_DAZ},                          \
        {.key = CLI_SATURATE, .help = "overflow and infinite results give the largest finite value"}, \
        {.key = CLI_THREADS, .help = "as for every fpkit tool (1 to 1024); the cases take one"}
/* Their usage words. */
#define VEC_SYNOPSIS "!--op !--format --to --round --tininess --ftz --daz --saturate --threads"

/* *S from the options C read: the operation, its formats and context.
 * Exits with status 2 unless they name an operation and a format, and
 * --to exactly for convert, with a deterministic rounding mode. */
void vec_spec_from(vec_spec *s, const cli_common *c);

/* The format of operand fields and of the result field (NULL: not a
 * format's encoding). */
const fpk_format *vec_in_format(const vec_spec *s);
const fpk_format *vec_out_format(const vec_spec *s);

/* "add fp16 rne", "convert fp32 -> e4m3 rna, ftz": the operation and its
 * context, for messages.  Static storage, overwritten by the next call. */
const char *vec_describe(const vec_spec *s);

/* The library's result of C's operands under S's context (or under MODE
 * when MODE is not NULL) into C->z and C->flags. */
void vec_eval(const vec_spec *s, vec_case *c, const fpk_round *mode);

/* fpkit's flags as TestFloat's, and back (the map is its own inverse). */
unsigned vec_flags_tf(unsigned flags);

/* Writes C as a line into BUF (at least VEC_LINE_MAX bytes), with the flags
 * field when WITH_FLAGS; returns the line's length, newline included. */
#define VEC_LINE_MAX 96
size_t vec_format_line(const vec_spec *s, const vec_case *c, bool with_flags, char *buf);

/* Reads LINE (without its newline) into C: the operands, the result and,
 * when WITH_FLAGS, the flags.  Returns 0, or the number of the field at
 * fault (1-based: the first missing or extra one when the count is wrong)
 * with a message in WHY ("field 2 (result): "1FF" does not fit e4m3's 8
 * bits"). */
int vec_parse_line(const vec_spec *s, const char *line, bool with_flags, vec_case *c, char *why,
                   size_t len);

#endif
