/* The reference of record: every operation computed with MPFR and rounded
 * once into the format, following docs/DESIGN.md "The reference".  It shares no code
 * with libfpkit beyond the format descriptors (which define the formats):
 * it decodes encodings itself and rounds with MPFR.  Deterministic modes only;
 * FPK_SR is checked statistically through ref_neighbours. */
#ifndef FPKIT_REF_H
#define FPKIT_REF_H

#include <mpfr.h>

#include "fpkit.h"

typedef struct ref_result {
    fpk_bits bits;
    unsigned flags;
} ref_result;

/* Options of C that the reference honours: round (not FPK_SR), tiny_before,
 * ftz, daz, saturate.  C->flags is ignored and never written. */

/* X (initialised by the caller, any precision) := the exact value of A,
 * which must not be NaN.  Returns false for NaN.  No daz. */
bool ref_decode(mpfr_ptr x, const fpk_format *f, fpk_bits a);

/* Rounds the value X + DIR*epsilon into F: DIR is 0 if X is exact, and the
 * sign of (true value - X) otherwise, for a true value strictly between X and
 * the next number of X's precision (an "inexact" truncation).  X may be zero
 * (signed), infinite or NaN (ref_nan(F, false): the caller raises invalid
 * where the operation is invalid).  Returns the encoding and the flags
 * raised. */
ref_result ref_round(const fpk_format *f, mpfr_srcptr x, int dir, const fpk_ctx *c);

/* The canonical NaN as a result: flags invalid if INVALID, and always in a
 * FPK_SPECIAL_NONE format, which has no NaN (its .nan stands in). */
ref_result ref_nan(const fpk_format *f, bool invalid);

/* True if A is a signaling NaN of F: in an IEEE format, the all-ones
 * exponent with a nonzero mantissa whose top bit is clear (FN formats have
 * none). */
bool ref_is_snan(const fpk_format *f, fpk_bits a);

/* ref_decode, with C's daz: a subnormal A reads as a zero of its sign. */
bool ref_decode_ctx(mpfr_ptr x, const fpk_format *f, fpk_bits a, const fpk_ctx *c);

ref_result ref_convert(const fpk_format *to, const fpk_format *from, fpk_bits a, const fpk_ctx *c);
ref_result ref_add(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c);
ref_result ref_sub(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c);
ref_result ref_mul(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c);
ref_result ref_div(const fpk_format *f, fpk_bits a, fpk_bits b, const fpk_ctx *c);
ref_result ref_fma(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_bits d, const fpk_ctx *c);
ref_result ref_sqrt(const fpk_format *f, fpk_bits a, const fpk_ctx *c);

/* S parsed as a decimal or hex float and rounded once into F. */
ref_result ref_parse(const fpk_format *f, const char *s, const fpk_ctx *c);

/* fpk_to_int64 / fpk_from_int64 / the comparisons: the value in *Z (int
 * results) or bits, and flags. */
ref_result ref_to_int64(const fpk_format *f, fpk_bits a, const fpk_ctx *c, int64_t *z);
ref_result ref_from_int64(const fpk_format *f, int64_t i, const fpk_ctx *c);

/* For an exact value X (not NaN, not zero, finite): the two neighbours of X
 * on F's grid (exponent unbounded above), toward zero (*lo) and away from zero
 * (*hi), as encodings under the RTZ and "away" directed rules with all of C's
 * options, and the discarded fraction of an ulp as a double in [0,1);
 * returns false when X is exactly representable (then *lo == *hi). */
bool ref_neighbours(const fpk_format *f, mpfr_srcptr x, const fpk_ctx *c,
                    ref_result *lo, ref_result *hi, double *frac);

#endif
