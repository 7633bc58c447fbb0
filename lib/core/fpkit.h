/* fpkit: low-precision floating-point formats, emulated bit-exactly.
 *
 * Every format is one descriptor (struct fpk_format); every operation takes
 * its rounding mode and options from an explicit context (fpk_ctx) and ORs the
 * IEEE 754-2019 exception flags it raises into ctx->flags.  Encodings are
 * right-aligned in a uint64_t.  The library uses integer arithmetic only:
 * results never depend on the host FPU, its rounding mode or its flags. */
#ifndef FPKIT_H
#define FPKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t fpk_bits; /* an encoding, right-aligned */

/* The special-value rule: which encodings are infinities, NaNs and zeros. */
typedef enum fpk_special {
    FPK_SPECIAL_IEEE, /* mantissa 0: infinity; otherwise NaN (top bit set: quiet) */
    FPK_SPECIAL_FN,   /* no infinity; only all-ones exponent and mantissa is NaN
                         (OCP OFP8 E4M3, "finite") */
    FPK_SPECIAL_FNUZ, /* no infinity, no -0: the sign bit alone is the one NaN;
                         every other encoding is finite, so max finite has an
                         all-ones magnitude.  A -0 result is +0 (neg, abs and
                         copysign too leave zero and the NaN as they are;
                         daz reads a subnormal as +0); overflow and infinity
                         give the NaN, as in FN (e4m3fnuz, e5m2fnuz) */
    FPK_SPECIAL_NONE, /* every encoding finite: no infinity, no NaN (OCP MX
                         FP6 and FP4).  Overflow gives +-max finite with
                         overflow and inexact in every mode; an infinite
                         input gives +-max finite with invalid; a NaN input
                         or an invalid operation raises invalid and gives
                         the encoding .nan, the sign bit alone (-0), as
                         ml_dtypes does */
    FPK_SPECIAL_E8M0, /* unsigned and exponent-only (OCP MX E8M0, man_bits 0,
                         no sign bit: sign_mask 0): field 0 is the normal
                         2^-bias, all ones the NaN; no zero, no subnormals.
                         A value below 2^emin after rounding (with an
                         unbounded exponent) gives 2^emin with underflow and
                         inexact; zero and negative results or inputs give
                         the NaN with invalid (a negative value to round
                         still takes its SR counter value); overflow and
                         +inf give the NaN (max finite under saturate), as
                         in FN.  Ties between 2^k and 2^(k+1) go up. */
} fpk_special;

/* A format.  The first six fields define it; the rest are derived from them
 * once, at compile time, and are what the library uses. */
typedef struct fpk_format {
    const char *name;        /* canonical name: "fp16" */
    const char *aliases;     /* other names, comma-separated, "" if none */
    int exp_bits, man_bits;  /* field widths; 1 <= exp_bits <= 11, man_bits <= 52 */
    int bias;
    fpk_special special;
    int width;               /* 1 + exp_bits + man_bits */
    int emin;                /* unbiased exponent of the smallest normal: 1 - bias */
    int emax;                /* biased exponent field of max_finite minus bias */
    fpk_bits sign_mask, exp_mask, man_mask;
    fpk_bits max_finite;     /* largest finite encoding, positive */
    fpk_bits inf;            /* +infinity, or 0 if the format has none */
    fpk_bits nan;            /* the canonical NaN: positive, quiet */
} fpk_format;

extern const fpk_format fpk_fp64, fpk_fp32, fpk_tf32, fpk_fp16, fpk_bf16,
    fpk_e4m3, fpk_e5m2;
/* FP8 without negative zero (bias 8 and 16; 0x80 is the NaN), the OCP MX
 * element formats FP6 (e3m2, e2m3) and FP4 (e2m1), which have no infinity
 * and no NaN, and the OCP MX scale format E8M0. */
extern const fpk_format fpk_e4m3fnuz, fpk_e5m2fnuz, fpk_e3m2, fpk_e2m3, fpk_e2m1, fpk_e8m0;

/* The built-in formats, in the order above, terminated by NULL. */
extern const fpk_format *const fpk_formats[];

/* The format called NAME: a built-in name or alias ("fp16", "binary16",
 * "half", "bfloat16", "E4M3FN", "float8_e4m3fnuz", "fp4", "e8m0fnu", ...),
 * compared case-insensitively, or "eXmY" with 1 <= X <= 11 and 0 <= Y <= 52:
 * an IEEE-like format with bias 2^(X-1)-1, or with a suffix "fn" the same
 * with the FN rule, or "fnuz" the FNUZ rule with bias 2^(X-1).  A built-in
 * name or alias wins: "e4m3" is OCP E4M3, "e2m1" and "e2m1fn" OCP FP4,
 * "e8m0" the E8M0 scale; "e5m10" gives fpk_fp16, "e4m3fnuz" fpk_e4m3fnuz.
 * An eXm0 format has no room for both infinity and NaN: its all-ones exponent
 * is NaN (FPK_SPECIAL_FN).  Returns NULL for NULL or an unknown name. */
const fpk_format *fpk_format_lookup(const char *name);

typedef enum fpk_round {
    FPK_RNE, /* to nearest, ties to even */
    FPK_RNA, /* to nearest, ties away from zero */
    FPK_RTZ, /* toward zero */
    FPK_RUP, /* toward +infinity */
    FPK_RDN, /* toward -infinity */
    FPK_ROD, /* to odd: truncate, then set the last bit if inexact */
    FPK_SR,  /* stochastic: see fpk_ctx */
} fpk_round;
#define FPK_ROUND_COUNT 7

/* "rne", "rna", "rtz", "rup", "rdn", "rod", "sr"; "?" for another value. */
const char *fpk_round_name(fpk_round mode);
/* The mode called NAME (case-insensitive); false if none. */
bool fpk_round_lookup(const char *name, fpk_round *mode);

/* Exception flags (IEEE 754-2019 §7). */
enum {
    FPK_INVALID = 1,
    FPK_DIVBYZERO = 2,
    FPK_OVERFLOW = 4,
    FPK_UNDERFLOW = 8,
    FPK_INEXACT = 16,
};

typedef struct fpk_ctx {
    fpk_round round;      /* default FPK_RNE */
    unsigned flags;       /* sticky: every operation ORs its exceptions in */
    bool tiny_before;     /* tininess detected before rounding (default: after) */
    bool ftz, daz;        /* flush subnormal results / read subnormal inputs as zero */
    bool saturate;        /* every +-inf result becomes +-max finite (OCP SATFINITE) */
    uint64_t sr_seed;     /* stochastic rounding stream, reproducible from the seed */
    uint64_t sr_counter;  /* advanced by each SR rounding: bits = hash(seed, counter) */
    int sr_bits;          /* random bits compared with the discarded part, 1..64;
                             any other value means the default, 32 */
} fpk_ctx;

/* RNE, no flags, tininess after rounding, no ftz/daz/saturate, seed 0,
 * counter 0, 32 random bits. */
fpk_ctx fpk_ctx_default(void);

/* Stochastic rounding: a rounding whose exact result lies strictly between
 * two neighbours on the format's grid (exponent unbounded above) takes the one
 * away from zero iff r < floor(frac * 2^sr_bits), where frac in (0,1) is the
 * discarded fraction of an ulp and r is the top sr_bits bits of
 * fpk_sr_hash(sr_seed, sr_counter).  Every rounding in SR mode, exact or not,
 * then advances sr_counter by one.  Overflow, ftz and flags follow the
 * directed mode that picks the same neighbour; an exact value beyond the
 * largest finite one overflows as under RNE. */
uint64_t fpk_sr_hash(uint64_t seed, uint64_t counter);

/* Conversions.  fpk_convert rounds A (an encoding of FROM) into TO.
 * NaN gives TO's canonical NaN (invalid if A is signaling); infinity gives
 * infinity, or NaN with invalid where TO has none (+-max finite if
 * saturate).  The rules of TO's fpk_special apply beyond that: into a
 * FPK_SPECIAL_NONE format a NaN raises invalid and an infinity gives +-max
 * finite with invalid; into E8M0 zero and negative values give the NaN with
 * invalid; into FNUZ -0 gives +0.  fpk_from_double reads X's bits exactly (as fp64), so it is
 * fpk_convert(f, &fpk_fp64, bits of x).  fpk_to_double is exact for every
 * format (none exceeds fp64's range or precision); a NaN gives a quiet NaN. */
fpk_bits fpk_convert(const fpk_format *to, const fpk_format *from, fpk_bits a, fpk_ctx *c);
fpk_bits fpk_from_double(const fpk_format *f, double x, fpk_ctx *c);
double fpk_to_double(const fpk_format *f, fpk_bits a);

/* Arithmetic, each correctly rounded once (IEEE 754-2019 §5.4).
 * fpk_fma computes a*b+d with one rounding. */
fpk_bits fpk_add(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
fpk_bits fpk_sub(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
fpk_bits fpk_mul(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
fpk_bits fpk_div(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
fpk_bits fpk_fma(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_bits d, fpk_ctx *c);
fpk_bits fpk_sqrt(const fpk_format *f, fpk_bits a, fpk_ctx *c);

/* Comparisons (IEEE 754-2019 §5.11).  Any NaN operand makes them false.
 * The quiet ones raise invalid only for a signaling NaN; the _signaling ones
 * for any NaN.  -0 == +0.  DAZ applies to the operands. */
bool fpk_eq(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
bool fpk_lt(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
bool fpk_le(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
bool fpk_eq_signaling(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
bool fpk_lt_signaling(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);
bool fpk_le_signaling(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_ctx *c);

/* Minimum and maximum (IEEE 754-2019 §9.6); -0 is less than +0.
 * FPK_MINMAX_PROPAGATE is minimum/maximum: a NaN operand gives NaN.
 * FPK_MINMAX_NUMBER is minimumNumber/maximumNumber: a NaN operand is ignored
 * when the other is a number.  A signaling NaN raises invalid; NaN results are
 * canonical.  Of equal operands the first is returned; under daz a
 * subnormal operand reads, and is returned, as the zero of its sign. */
typedef enum fpk_minmax { FPK_MINMAX_PROPAGATE, FPK_MINMAX_NUMBER } fpk_minmax;
fpk_bits fpk_min(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_minmax kind, fpk_ctx *c);
fpk_bits fpk_max(const fpk_format *f, fpk_bits a, fpk_bits b, fpk_minmax kind, fpk_ctx *c);

/* Sign operations on the bits (IEEE 754-2019 §5.5.1): no flags, NaNs kept.
 * In FNUZ formats zero and the NaN (the sign bit alone) are left as they
 * are; E8M0 has no sign bit: they return its encoding unchanged. */
fpk_bits fpk_neg(const fpk_format *f, fpk_bits a);
fpk_bits fpk_abs(const fpk_format *f, fpk_bits a);
fpk_bits fpk_copysign(const fpk_format *f, fpk_bits a, fpk_bits b);

/* Integers.  fpk_to_int64 rounds A to an integer in ctx's mode (SR included);
 * inexact if it changed; NaN or a result outside int64 raises invalid (and
 * not inexact) and returns INT64_MIN for NaN and negative overflow, INT64_MAX
 * for positive overflow.  Under FPK_SR every nonzero finite A consumes one
 * counter value, as a rounding does.  fpk_from_int64 rounds I into F
 * (0 gives +0). */
int64_t fpk_to_int64(const fpk_format *f, fpk_bits a, fpk_ctx *c);
fpk_bits fpk_from_int64(const fpk_format *f, int64_t i, fpk_ctx *c);

typedef enum fpk_class {
    FPK_CLASS_ZERO,
    FPK_CLASS_SUBNORMAL,
    FPK_CLASS_NORMAL,
    FPK_CLASS_INF,
    FPK_CLASS_QNAN,
    FPK_CLASS_SNAN,
} fpk_class;

/* What A encodes (bits above f->width are ignored). */
fpk_class fpk_classify(const fpk_format *f, fpk_bits a);
bool fpk_signbit(const fpk_format *f, fpk_bits a);
bool fpk_is_nan(const fpk_format *f, fpk_bits a);

/* nextUp and nextDown (IEEE 754-2019 §5.3.1): the least encoding greater than
 * A, the greatest less than A.  nextUp(+-0) is the smallest subnormal;
 * nextUp(max finite) is +inf, or the canonical NaN in a format without
 * infinity (max finite itself in FPK_SPECIAL_NONE formats, where infinite
 * results are +-max finite); nextUp(+inf) is +inf; a result that would be
 * -0 is +0 in FNUZ formats.  In E8M0 nextDown(2^emin), whose result would
 * be zero, gives the NaN.  NaN gives the canonical NaN (invalid if
 * signaling).  No other flags. */
fpk_bits fpk_next_up(const fpk_format *f, fpk_bits a, fpk_ctx *c);
fpk_bits fpk_next_down(const fpk_format *f, fpk_bits a, fpk_ctx *c);

/* Errors from functions that read user input.  The library never prints:
 * it returns the code and fills the caller's fpk_error, if one is given. */
enum {
    FPK_OK = 0,
    FPK_ESYNTAX,  /* text that is not a number */
    FPK_ERANGE,   /* a number too large to handle */
    FPK_EIO,      /* reading a file failed */
    FPK_EFORMAT,  /* a file that does not follow its format */
    FPK_ENOMEM,
};
typedef struct fpk_error {
    int code;
    char msg[256];
} fpk_error;

/* Parses S, a decimal ("1.1", "-3e-8", ".5", "5."), a hexadecimal float
 * ("0x1.8p-3", "-0X.8P1"; the binary exponent is optional: "0x10" is 16),
 * a power of two or a decimal multiple of one ("2^-24", "-2^-24",
 * "3*2^-10", "1.5*2^-3": [+-]? (K '*')? '2^' [+-]? digits, K digits with an
 * optional point and no exponent), "inf", "infinity" or "nan"
 * (case-insensitive, optional sign; nothing before or after), and rounds it
 * once into F under ctx's mode, with flags: no double rounding, however
 * many digits S has, however large its exponent ("1e-99999999999" and
 * "2^-99999999999999999999" round as any value below half the smallest
 * subnormal does).  Zero keeps its sign (FNUZ: +0; E8M0: the NaN with
 * invalid); "nan" gives the canonical NaN with no flag (in a
 * FPK_SPECIAL_NONE format, its .nan with invalid); "inf" is an infinity converted into F (as fpk_convert: NaN with
 * invalid where F has none, +-max finite under saturate).  daz does not
 * apply to text.  Returns FPK_OK, or FPK_ESYNTAX (for NULL F or S too) with
 * *z and the flags untouched and ERR's message naming the problem and its
 * offset ("unexpected character "Z" at offset 2 in "0xZZ"").  Z, C (then
 * the default context, its flags discarded) and ERR may be NULL. */
int fpk_parse(const fpk_format *f, const char *s, fpk_bits *z, fpk_ctx *c, fpk_error *err);

/* Decimal text of A's value, written like snprintf: at most LEN bytes with
 * the terminating NUL (BUF may be NULL when LEN is 0), returning the length
 * the whole text needs.  fpk_format_exact writes every digit
 * ("5.9604644775390625e-08"); fpk_format_shortest the shortest decimal that
 * fpk_parse under RNE (default context) maps back to A, the nearest to A if
 * several have that length ("0.1" for fp32 0x3dcccccd, "450" for e4m3 448).
 * Style, as printf's %g: with X the decimal exponent of the first digit,
 * plain notation when -5 <= X < 16 ("65504", "0.00006103515625"), otherwise
 * scientific with a signed exponent of at least two digits ("1e+16",
 * "6e-08"); no trailing zeros.  Special values give "0", "-0", "inf",
 * "-inf", "nan" (any NaN). */
size_t fpk_format_exact(const fpk_format *f, fpk_bits a, char *buf, size_t len);
size_t fpk_format_shortest(const fpk_format *f, fpk_bits a, char *buf, size_t len);

/* Scaling: X * S rounded once into F (the loss scale of mixed-precision
 * training).  Exact in every mode: the product is formed exactly and
 * rounded by the core, never in host floating point.  NaN or infinite X or
 * S follow IEEE multiplication (inf * 0 is invalid). */
fpk_bits fpk_from_double_scaled(const fpk_format *f, double x, double s, fpk_ctx *c);

/* Tensor cores: the dot-product step of NVIDIA's matrix units, as published
 * (Fasi, Higham, Mikaitis, Pranesh, PeerJ Comput. Sci. 7:e330, 2021; for
 * Hopper Khattak, Mikaitis, arXiv:2512.07004): each step adds up to
 * fpk_tc_terms exact products and the accumulator in one fused operation,
 * aligning every addend to the largest exponent and truncating below the
 * accumulator's precision plus the architecture's extra bits, summing
 * exactly and normalising once, then rounding toward zero into binary32 (to
 * nearest even into binary16).  See lib/core/tc.c for the details and their
 * sources. */
typedef enum fpk_tc_arch {
    FPK_TC_VOLTA,  /* V100: 4 products a step, no extra bit */
    FPK_TC_TURING, /* T4: 4, one extra bit */
    FPK_TC_AMPERE, /* A100: 8 (tf32: 4), one extra bit */
    FPK_TC_HOPPER, /* H100, H200: 16 (tf32: 8), two extra bits */
} fpk_tc_arch;
#define FPK_TC_ARCH_COUNT 4

/* "volta", "turing", "ampere", "hopper"; "?" for another value. */
const char *fpk_tc_arch_name(fpk_tc_arch arch);
/* The architecture called NAME (as above); false if none. */
bool fpk_tc_arch_lookup(const char *name, fpk_tc_arch *arch);
/* Products one step adds for inputs IN (fpk_fp16, fpk_bf16 from Ampere
 * on, fpk_tf32 from Ampere on, fpk_e4m3 and fpk_e5m2 on Hopper)
 * accumulated in ACC (fpk_fp32, or fpk_fp16 with fp16 inputs); 0 when
 * ARCH's tensor cores take no such combination. */
int fpk_tc_terms(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc);

/* The model's parameters (lib/core/tc.c): a dot product is a chain of
 * steps of TERMS products, each step one fused operation whose addends are
 * aligned to their largest exponent E and cut below 2^(E - WINDOW) (one
 * bit lower when WIDE and a product of significand in [2, 4) holds E),
 * toward zero or, with FLOOR, toward minus infinity; the exact sum of the
 * cut addends rounded once into the accumulator under ROUND (FPK_RTZ or
 * FPK_RNE), an overflow giving infinity.  With PROMOTE > 0, every PROMOTE
 * products start a chain from +0 whose result is added to the
 * accumulator by an addition rounded to nearest even. */
typedef struct fpk_tc_params {
    int terms;      /* 1 to FPK_TC_MAX_TERMS */
    int window;     /* 1 to FPK_TC_MAX_WINDOW: 23 + the extra bits */
    bool wide;
    bool floor;
    fpk_round round;
    int promote;    /* 0: none */
} fpk_tc_params;
#define FPK_TC_MAX_TERMS 64
#define FPK_TC_MAX_WINDOW 52
/* *P := ARCH's published parameters for IN into ACC (for FP8 on Hopper a
 * candidate, not measured: a window of 13 bits and promotion every 128
 * products); false, P untouched, where fpk_tc_terms is 0. */
bool fpk_tc_params_of(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc,
                      fpk_tc_params *p);
/* C + A[0]*B[0] + ... + A[N-1]*B[N-1] under the parameters P: A, B
 * encodings of IN (a format of at most 32 bits and 23 fraction bits), C
 * and the result of ACC (fpk_fp32 or fpk_fp16); specials as fpk_tc_dot.
 * ACC's canonical NaN (binary32's for another ACC) when P or IN is out of
 * range.  No flags. */
fpk_bits fpk_tc_dot_params(const fpk_tc_params *p, const fpk_format *in, const fpk_format *acc,
                           const fpk_bits *a, const fpk_bits *b, size_t n, fpk_bits c);
/* C + A[0]*B[0] + ... + A[N-1]*B[N-1] (A, B encodings of IN; C and the
 * result of ACC) as ARCH's tensor cores compute it: fpk_tc_dot_params with
 * fpk_tc_params_of(ARCH, IN, ACC): steps of fpk_tc_terms(ARCH, IN, ACC)
 * products in index order, each step's result the next one's accumulator
 * (for FP8, promoted every 128 products); N = 0 gives C.  A NaN operand, 0 * inf or
 * inf - inf gives ACC's canonical NaN; an infinite operand otherwise its
 * infinity; an overflow infinity; a zero sum +0 (an exact cancellation,
 * or products and C all zeros, of any signs).  ACC's
 * canonical NaN also for a combination fpk_tc_terms refuses.  No flags. */
fpk_bits fpk_tc_dot(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc,
                    const fpk_bits *a, const fpk_bits *b, size_t n, fpk_bits c);

/* "fpkit X.Y.Z" */
const char *fpk_version(void);

#ifdef __cplusplus
}
#endif

#endif
