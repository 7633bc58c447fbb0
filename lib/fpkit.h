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
 * "inf", "infinity" or "nan" (case-insensitive, optional sign; nothing
 * before or after), and rounds it once into F under ctx's mode, with flags:
 * no double rounding, however many digits S has, however large its
 * exponent ("1e-99999999999" rounds as any value below half the smallest
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

/* Block scaling: OCP Microscaling Formats (MX) v1.0.  A block of values V_i
 * shares one E8M0 scale X = 2^k; element i stores P_i, V_i / X rounded once
 * into the element format, and stands for P_i * X.  The rule for k: */
typedef enum fpk_mx_rule {
    FPK_MX_FLOOR, /* OCP MX v1.0 §6.3: k = floor(log2(amax)) - emax, amax the
                     block's largest magnitude and emax the element format's;
                     amax / X lies in [2^emax, 2^(emax+1)) and may exceed max
                     finite, which saturates */
    FPK_MX_CEIL,  /* rounded up (Mishra, Stosic, Layton, "Recipes for
                     Pre-training LLMs with MXFP8", arXiv:2506.08027): the
                     least k with amax / 2^k <= max finite, so that no element
                     saturates */
} fpk_mx_rule;
#define FPK_MX_BLOCK 32 /* the block size of every OCP MX format */

/* What quantisation did to one block. */
typedef struct fpk_mx_block {
    fpk_bits scale;     /* X's E8M0 encoding, k + 127; 0xff (NaN) for a block
                           holding a NaN or an infinity */
    uint32_t saturated; /* elements with |V / X| rounded beyond max finite,
                           stored as +-max finite */
    uint32_t flushed;   /* nonzero elements stored as zero */
    uint32_t subnormal; /* elements stored as nonzero subnormals */
} fpk_mx_block;

/* The E8M0 encoding of the scale that RULE gives a block of elements of
 * ELEM whose largest magnitude is AMAX (finite, >= 0, read exactly): k + 127
 * with k clamped to [-127, 127]; AMAX = 0 (a block of zeros) gives 0x00.
 * The canonical NaN 0xff for a NaN or infinite AMAX, and for an ELEM that
 * fpk_mx_quantize refuses. */
fpk_bits fpk_mx_scale(const fpk_format *elem, fpk_mx_rule rule, float amax);

/* Quantises X[0..N-1] (float32) into MX blocks of BLOCK elements of ELEM
 * (0 means FPK_MX_BLOCK; the last block may be shorter): per block the scale
 * of fpk_mx_scale for the largest magnitude, then every element V rounded
 * once, exactly as V * 2^-k, into ELEM under C's mode and options, always
 * saturating (§6.3 clamps to the largest normal), its flags ORed into
 * C->flags (daz reads subnormal inputs as zero, amax included).  A block
 * holding a NaN or an infinity gets the NaN scale and ELEM's canonical NaN
 * (.nan) in every element, with no flag.  Outputs, each optional (NULL):
 * ENC[i], the element encodings, one byte each; SCALES[b], the E8M0
 * encodings of the N / BLOCK blocks rounded up; Y[i], P_i * X as float32
 * (exact for the OCP element formats, but for 2^128, +-inf, which
 * FPK_MX_CEIL can give a block whose AMAX is within an element's ulp of
 * FLT_MAX; rounded to nearest even for another ELEM), NaN for a NaN scale; BLOCKS[b], each block's report.  Y may be X.
 * Under FPK_SR element i rounds with sr_counter C->sr_counter + i, as in
 * fpk_array_quantize, and C->sr_counter then advances by N.  Fast where
 * the array functions are (E4M3 and E5M2 under FPK_RNE, FPK_RTZ, and
 * FPK_SR with sr_bits <= 32); the same results everywhere.
 * ELEM must be at most 8 bits wide and not E8M0: returns false, doing
 * nothing, otherwise. */
bool fpk_mx_quantize(const fpk_format *elem, fpk_mx_rule rule, size_t block, const float *x,
                     size_t n, uint8_t *enc, uint8_t *scales, float *y, fpk_mx_block *blocks,
                     fpk_ctx *c);

/* Tensor dumps (fpkit-dumps(5)): NumPy .npy (versions 1-3), safetensors and
 * raw files.  A dump is opened once, its tensors listed, and their elements
 * read in chunks: files are mapped or read piecewise, so memory does not
 * grow with their size.  Every failure returns an error code and fills the
 * caller's fpk_error with a message naming the file and what was wrong. */
typedef enum fpk_dtype {
    FPK_DTYPE_F64,
    FPK_DTYPE_F32,
    FPK_DTYPE_F16,
    FPK_DTYPE_BF16,
    FPK_DTYPE_E4M3,
    FPK_DTYPE_E5M2,
} fpk_dtype;
#define FPK_DTYPE_COUNT 6

/* "f64", "f32", "f16", "bf16", "e4m3", "e5m2"; the element format; bytes. */
const char *fpk_dtype_name(fpk_dtype t);
const fpk_format *fpk_dtype_format(fpk_dtype t);
size_t fpk_dtype_size(fpk_dtype t);
/* A dtype by name: the names above, the format names and aliases of their
 * formats ("fp16", "float32", "bfloat16", "e4m3fn"), safetensors' ("F16",
 * "BF16", "F8_E4M3") and NumPy's ("<f4", "float16").  False if unknown. */
bool fpk_dtype_lookup(const char *name, fpk_dtype *t);

#define FPK_MAX_DIMS 32

typedef struct fpk_tensor {
    const char *name;     /* safetensors key; for .npy and raw the file name */
    fpk_dtype dtype;
    bool big_endian;      /* elements stored most significant byte first */
    bool fortran_order;   /* .npy: column-major storage */
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
    uint64_t count;       /* elements: the product of shape */
    uint64_t offset;      /* byte offset of the first element in the file */
} fpk_tensor;

typedef struct fpk_dump fpk_dump;

/* How to read a raw file: its dtype, byte order and shape (ndim 0 means one
 * dimension holding the whole file). */
typedef struct fpk_raw_spec {
    fpk_dtype dtype;
    bool big_endian;
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
} fpk_raw_spec;

/* Opens PATH: read as raw when RAW is given, otherwise recognised by its
 * contents (.npy magic, or a safetensors header).  The header is validated
 * completely before FPK_OK is returned. */
int fpk_dump_open(const char *path, const fpk_raw_spec *raw, fpk_dump **d, fpk_error *err);
void fpk_dump_close(fpk_dump *d);
const char *fpk_dump_path(const fpk_dump *d);
const char *fpk_dump_kind(const fpk_dump *d); /* "npy", "safetensors", "raw" */
size_t fpk_dump_ntensors(const fpk_dump *d);
const fpk_tensor *fpk_dump_tensor(const fpk_dump *d, size_t i);
/* A value of safetensors' __metadata__, or NULL. */
const char *fpk_dump_metadata(const fpk_dump *d, const char *key);

/* Elements FIRST .. FIRST+N-1 of tensor I, in storage order, converted
 * exactly to double (every dtype fits). */
int fpk_dump_read(fpk_dump *d, size_t i, uint64_t first, size_t n, double *out, fpk_error *err);
/* The same elements as stored (fpk_dtype_size bytes each), in the host's
 * byte order: for fpk_array_* and fpk_stats_add_array, without a
 * conversion to double.  On some CPUs the kernel's copy runs several
 * times slower into an OUT that lies 1 to 31 bytes past the data's place
 * within its page, as a large buffer from glibc's malloc (16 bytes into a
 * page) does for data that starts a page; an OUT that starts a page
 * avoids that for all data but that in the last 31 bytes of a page. */
int fpk_dump_read_raw(fpk_dump *d, size_t i, uint64_t first, size_t n, void *out,
                      fpk_error *err);
/* The same elements without a copy: *P := their place in a read-only
 * mapping of the file (the page cache's own pages, mapped by the first
 * call and kept until fpk_dump_close; see fpk_dump_unview), or NULL where the elements are
 * stored misaligned for their dtype or in the other byte order, or where
 * the file cannot be mapped: fpk_dump_read_raw then reads them.  Returns
 * as fpk_dump_read_raw does.  Reading a view of a file that has shrunk
 * since it was opened raises SIGBUS: a program that must report that,
 * rather than die of it, handles the signal. */
int fpk_dump_view(fpk_dump *d, size_t i, uint64_t first, size_t n, const void **p,
                  fpk_error *err);
/* Gives back the pages that hold the BYTES bytes at P, a view of D's that
 * the program is done with: they leave its resident set but stay in the
 * page cache (reading any view of them again maps them again).  A program
 * that reads a large file through views gives each part back once done,
 * so that its resident set stays as small as its reads. */
void fpk_dump_unview(fpk_dump *d, const void *p, size_t bytes);

/* Calls VISIT for every dump file under PATH: PATH itself if it is a file,
 * else the regular files named *.npy or *.safetensors below it, in sorted
 * order, following symbolic links but never into a loop.  Stops at the
 * first nonzero return of VISIT and returns it; FPK_EIO with a message for
 * an unreadable directory or a loop. */
int fpk_dump_walk(const char *path, int (*visit)(const char *file, void *arg), void *arg,
                  fpk_error *err);

/* Tensor statistics (DESIGN.md "Tensor statistics").  One pass over the
 * elements serves every format.  Counts are exact; statistics are additive,
 * so fpk_stats_merge of the statistics of two parts equals those of the
 * whole. */
#define FPK_STATS_MAX_FORMATS 16
#define FPK_LOG2_MIN (-1080) /* floor(log2|x|) of the smallest double is -1074 */
#define FPK_LOG2_BINS 2110   /* bins FPK_LOG2_MIN .. FPK_LOG2_MIN + FPK_LOG2_BINS - 1 */

typedef struct fpk_format_counts {
    uint64_t underflow; /* nonzero finite elements that round to zero */
    uint64_t subnormal; /* ... that round to a nonzero subnormal */
    uint64_t overflow;  /* ... that overflow (to inf or NaN, or saturated) */
} fpk_format_counts;

typedef struct fpk_stats {
    double scale;       /* S: elements are rounded as x * S */
    fpk_round round;
    bool ftz, saturate;
    int nformats;
    const fpk_format *formats[FPK_STATS_MAX_FORMATS];
    uint64_t count;     /* elements */
    uint64_t zeros;     /* exact zeros */
    uint64_t nonfinite; /* infinities and NaNs */
    double amax;        /* largest finite |x| (unscaled), 0 if none */
    uint64_t log2_hist[FPK_LOG2_BINS]; /* floor(log2|x|) of nonzero finite x, unscaled */
    fpk_format_counts fmt[FPK_STATS_MAX_FORMATS];
} fpk_stats;

/* Empty statistics for FORMATS[0..N-1] (N <= FPK_STATS_MAX_FORMATS), scale
 * S (1 for none; finite and positive) and the mode, ftz and saturate of C. */
void fpk_stats_init(fpk_stats *s, const fpk_format *const *formats, int n, double scale,
                    const fpk_ctx *c);
/* Adds X[0..N-1].  Under FPK_SR an element is rounded with seed 0 and
 * S->count as it is added as the counter (k for the k-th element since
 * init), in every format, so chunking does not change the result; merged
 * shards each count from 0, unless the caller sets count to a shard's
 * offset in the whole before adding it (and subtracts it after). */
void fpk_stats_add(fpk_stats *s, const double *x, size_t n);
/* INTO += FROM; false (and no change) unless both have the same formats,
 * scale and options. */
bool fpk_stats_merge(fpk_stats *into, const fpk_stats *from);
/* The statistics as JSON text (malloc'd; NULL if out of memory, or for
 * statistics JSON cannot hold: a format listed twice, a count of 2^63 or
 * more), and back:
 * fpk_stats_from_json(fpk_stats_to_json(s)) == s exactly. */
char *fpk_stats_to_json(const fpk_stats *s);
int fpk_stats_from_json(fpk_stats *s, const char *json, fpk_error *err);

/* Arrays: the operations above over whole arrays, at the speed of memory.
 * Elements are in the host's byte order; an array of encodings of F holds
 * fpk_array_size(F) bytes per element, each right-aligned.  Results are
 * those of the scalar functions element by element, bits and flags.
 * Fast paths run vector code chosen at each call for the CPU it runs on
 * (fpk_array_isa), whatever the machine that built the library.  THREADS
 * is the most threads a call may use on a large array (OpenMP, when the
 * library was built with it; 1 or less: the calling thread only, with no
 * parallel region, so that small calls are cheap); results never depend
 * on it, nor on whether the caller is a thread of an OpenMP region. */

/* Bytes per encoding of F in an array: the fewest of 1, 2, 4 and 8 that
 * hold F->width bits (e4m3 1, fp16 2, tf32 4, fp64 8). */
size_t fpk_array_size(const fpk_format *f);

/* Z[i] := fpk_convert(TO, fpk_dtype_format(FROM), X[i], C) for i < N,
 * where X holds N elements of FROM.  Element i rounds with sr_counter
 * C->sr_counter + i, whatever it holds (a zero or NaN too), so results do
 * not depend on how an array is split into calls; under FPK_SR
 * C->sr_counter then advances by N.  C->flags gets the OR of every
 * element's flags.  Z must not overlap X.  Fast: float32, fp16, bf16,
 * e4m3 and e5m2 into fp16, bf16, tf32, e4m3 and e5m2 under FPK_RNE,
 * FPK_RTZ, and FPK_SR with sr_bits <= 32, with any options. */
void fpk_array_convert(const fpk_format *to, void *z, fpk_dtype from, const void *x, size_t n,
                       fpk_ctx *c, int threads);

/* Fake quantisation: Z[i] := the value of the encoding fpk_array_convert
 * gives for X[i], as a float32 (NaN: the canonical 0x7fc00000; a
 * FPK_SPECIAL_NONE format's .nan, the sign bit alone, is -0.0f), with the
 * same flags and SR counters.  F's values must all be float32 values
 * (man_bits <= 23, emax <= 127, emin - man_bits >= -149; every built-in
 * format but fp64): returns false, and does nothing, for another F.  Z
 * may be X itself when FROM is FPK_DTYPE_F32, but must not otherwise
 * overlap it. */
bool fpk_array_quantize(const fpk_format *f, float *z, fpk_dtype from, const void *x, size_t n,
                        fpk_ctx *c, int threads);

/* Squared errors, the sums behind a signal-to-quantisation-noise ratio,
 * in FPK_LANES lanes: the k-th nonzero X[i] of the call (k = 0, 1, ...
 * in increasing i; infinities and NaNs count) goes to lane
 * l = k % FPK_LANES, where, if X[i] is finite and Y[i] too, X2[l] +=
 * X[i]^2 and E2[l] += (Y[i] - X[i])^2; each lane in increasing i, in
 * double with every operation rounded (no fused multiply-add), so that
 * the sums are the same on every CPU.  (Zeros add nothing and take no
 * lane: the kernels leave them out at once, as a ReLU's gradients are
 * half zeros.)  X2 or E2 may be NULL; Y NULL counts every nonzero finite
 * X[i] and leaves E2 alone. */
#define FPK_LANES 16
void fpk_array_sqerr(const float *x, const float *y, size_t n, double *x2, double *e2);

/* fpk_array_sqerr(X, Y, N, X2, E2) for Y := fpk_array_quantize(F, X),
 * without storing Y (the fast kernels round and sum in one pass), with
 * fpk_array_quantize's flags and SR counters, on the calling thread;
 * returns false, and does nothing, where fpk_array_quantize would. */
bool fpk_array_quantize_sqerr(const fpk_format *f, const float *x, size_t n, fpk_ctx *c,
                              double *x2, double *e2);

/* fpk_array_quantize_sqerr(F[j], X, N, &C[j], j ? NULL : X2, E2 + j *
 * FPK_LANES) for every j < NF, in one pass where the kernels can (the
 * nonzero elements packed once for all the formats); E2 NULL sums no
 * errors.  Returns false, and does nothing, where fpk_array_quantize
 * would for any F[j]. */
bool fpk_array_quantize_sqerr_formats(int nf, const fpk_format *const *f, const float *x,
                                      size_t n, fpk_ctx *c, double *x2, double *e2);

/* The vector code the fast paths run on this CPU: "avx512", "avx2" (with
 * F16C) or "c" (portable C); the environment variable FPK_ISA, set to one
 * of these, caps the choice. */
const char *fpk_array_isa(void);

/* fpk_stats_add for N elements of dtype T at X: the same statistics (and
 * under FPK_SR the same counters, from S->count on), in one pass over the
 * elements for every format.  Fast for every dtype but f64. */
void fpk_stats_add_array(fpk_stats *s, fpk_dtype t, const void *x, size_t n, int threads);

/* fpk_stats_add_array(S, FPK_DTYPE_F32, X, N, 1), then
 * fpk_array_quantize_sqerr_formats(NF, F, X, N, C, X2, E2), in one pass
 * where the kernels can (the nonzero elements packed once for both);
 * returns what the latter returns (false: it did nothing, but the
 * statistics were added). */
bool fpk_stats_add_sqerr(fpk_stats *s, const float *x, size_t n, int nf,
                         const fpk_format *const *f, fpk_ctx *c, double *x2, double *e2);

/* Reads elements FIRST .. FIRST+N-1 of tensor I of D once and adds them to
 * each of the distinct statistics S[0..NS-1], as fpk_stats_add_array
 * does; not one of them changes unless all goes well.  Returns FPK_OK, or
 * FPK_ERANGE, FPK_EIO or FPK_ENOMEM with ERR's message as fpk_dump_read
 * gives them. */
int fpk_stats_add_tensor(fpk_stats *s, int ns, fpk_dump *d, size_t i, uint64_t first,
                         uint64_t n, int threads, fpk_error *err);

/* Tensor cores: the dot-product step of NVIDIA's matrix units, as published
 * (Fasi, Higham, Mikaitis, Pranesh, PeerJ Comput. Sci. 7:e330, 2021; for
 * Hopper Khattak, Mikaitis, arXiv:2512.07004): each step adds up to
 * fpk_tc_terms exact products and the accumulator in one fused operation,
 * aligning every addend to the largest exponent and truncating below the
 * accumulator's precision plus the architecture's extra bits, summing
 * exactly and normalising once, then rounding toward zero into binary32 (to
 * nearest even into binary16).  See lib/tc.c for the details and their
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
 * on, fpk_tf32 from Ampere on) accumulated in ACC (fpk_fp32, or fpk_fp16
 * with fp16 inputs); 0 when ARCH's tensor cores take no such combination. */
int fpk_tc_terms(fpk_tc_arch arch, const fpk_format *in, const fpk_format *acc);
/* C + A[0]*B[0] + ... + A[N-1]*B[N-1] (A, B encodings of IN; C and the
 * result of ACC) as ARCH's tensor cores compute it: steps of
 * fpk_tc_terms(ARCH, IN, ACC) products in index order, each step's result
 * the next one's accumulator; N = 0 gives C.  A NaN operand, 0 * inf or
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
