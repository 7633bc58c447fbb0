/* Helpers shared by the Check suites: seeds, a PRNG, operand generators,
 * the mode x option variants, names for messages, and a mismatch reporter.
 * Expected values never come from here: they come from the MPFR reference
 * (ref.h); this file only drives and reports. */
#ifndef FPKIT_TESTUTIL_H
#define FPKIT_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "fpkit-tensor.h"
#include "ref.h"

/* The random seed: FPK_SEED (decimal or 0x hex) if set, else a fixed
 * default.  Prints "SUITE: seed N (set FPK_SEED=N to replay)". */
uint64_t tu_seed(const char *suite);

/* True when FPK_EXHAUSTIVE is set to a value other than "" or "0". */
bool tu_exhaustive(void);

/* xoshiro256** seeded through splitmix64: fast, reproducible. */
typedef struct tu_rng {
    uint64_t s[4];
} tu_rng;
void tu_rng_init(tu_rng *r, uint64_t seed);
uint64_t tu_rng_next(tu_rng *r);
/* Uniform in [0, n); 0 when n <= 1. */
uint64_t tu_rng_below(tu_rng *r, uint64_t n);

/* A TestFloat-style operand of F: special values (zeros, infinities, quiet
 * and signaling NaNs, max finite, min normal, min subnormal) now and then,
 * fully random encodings sometimes, and mostly a random sign with an
 * exponent near a boundary of NEAR (its subnormal range and the one below,
 * min normal, 1, its overflow threshold, clamped to F's range) or anywhere
 * in F's range, and a significand from a pattern: zero, all ones, runs of
 * ones or zeros from the top or bottom, one bit, a random head then a single
 * one then zeros (a tie for NEAR at that exponent half the time, for some
 * narrower format otherwise), the same one ulp up or down, or random.  NEAR may be NULL (F itself); pass the target format when
 * F is a conversion source. */
fpk_bits tu_gen(const fpk_format *f, const fpk_format *near, tu_rng *r);

/* The deterministic rounding modes, in fpk_round order (FPK_SR excluded). */
#define TU_MODE_COUNT 6
extern const fpk_round tu_modes[TU_MODE_COUNT];

/* The option variants every suite runs each mode under. */
typedef struct tu_variant {
    const char *name; /* "plain", "ftz", "daz", "saturate", "tiny_before" */
    bool ftz, daz, saturate, tiny_before;
} tu_variant;
#define TU_VARIANT_COUNT 5
extern const tu_variant tu_variants[TU_VARIANT_COUNT];

/* A fresh context (flags 0) with MODE and the options of variant V. */
fpk_ctx tu_ctx(fpk_round mode, const tu_variant *v);

/* "rne", "rna", "rtz", "rup", "rdn", "rod", "sr". */
const char *tu_mode_name(fpk_round mode);

/* Flags as text, e.g. "of|ix", or "-" for none. */
typedef struct tu_flagstr {
    char s[24];
} tu_flagstr;
tu_flagstr tu_flags_name(unsigned flags);

/* Hex digits an encoding of F needs (fp16: 4, tf32: 5, e4m3: 2). */
int tu_hex_digits(const fpk_format *f);

/* Counts compared cases and mismatches, prints the first few mismatches in
 * full and a summary line per group of cases.  Usage:
 *
 *     tu_report rep;
 *     tu_report_init(&rep, "check_convert");
 *     ... tu_check(&rep, f, want, got, got_flags, "%s %04llx", "rne", a); ...
 *     tu_report_line(&rep, "fp16->e4m3 rne");   prints the counts since the
 *                                               previous line:
 *       "check_convert: fp16->e4m3 rne: 65536 cases, 0 mismatches"
 *     ck_assert_uint_eq(tu_report_done(&rep), 0);   prints the totals
 */
typedef struct tu_report {
    const char *suite;
    uint64_t cases, mismatches;             /* since the last line */
    uint64_t total_cases, total_mismatches; /* since init */
    unsigned max_print;                     /* mismatches printed in full: 10 */
} tu_report;
void tu_report_init(tu_report *rep, const char *suite);

/* Compares GOT/GOT_FLAGS of format F with WANT; counts the case.  On a
 * mismatch (bits or flags) prints, while fewer than max_print have been,
 * "SUITE: mismatch: <operands> expected BITS flags got BITS flags", the
 * operands described by the printf-style WHAT.  Returns true if they agree. */
bool tu_check(tu_report *rep, const fpk_format *f, ref_result want,
              fpk_bits got, unsigned got_flags, const char *what, ...)
    __attribute__((format(printf, 6, 7)));

/* Counts one case that failed for a reason the caller describes (a property
 * rather than a comparison of bits); printed like a mismatch. */
void tu_fail(tu_report *rep, const char *what, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "SUITE: LABEL: N cases, M mismatches" for the cases since the
 * previous line (label printf-style) and starts a new line count. */
void tu_report_line(tu_report *rep, const char *label, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints the totals "SUITE: total: N cases, M mismatches" and returns M. */
uint64_t tu_report_done(tu_report *rep);

#endif
