/* The bulk kernels' interface (lib/kernels/), which the tensor layer's
 * fast paths call (array.c, array_stats.c, mx.c, recipe_fast.c,
 * recipe_run.c, hadamard.c); not installed.  It depends on the core alone
 * (fpkit.h): the tensor layer maps its dtypes and limits onto the
 * kernels' own (lib/tensor/array-impl.h, recipe-impl.h).
 *
 * The kernels work on float32 encodings (16- and 8-bit inputs are widened
 * to float32 exactly first) with branch-free integer code that the
 * compiler vectorises, or with intrinsics.  Each algorithm (conversion and
 * widening, statistics, the stochastic-rounding fix-up of the statistics,
 * squared errors, MX block scaling, the recipes' block quantisation, the
 * Hadamard transform) is compiled once per instruction set: the build
 * machine's baseline (portable C, *_c.c) and, on x86-64, AVX2 and AVX-512
 * under target attributes (*_avx2.c, *_avx512.c).  A call indexes the
 * algorithm's table by what the CPU reports (fpki_isa_best), never by the
 * flags the library was built with; every set gives the same bits and
 * flags. */
#ifndef FPKIT_KERNELS_H
#define FPKIT_KERNELS_H

#include <fenv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpkit.h"

/* The instruction sets the kernels are compiled for, worst first. */
typedef enum fpki_isa {
    FPKI_ISA_C,      /* portable C, as the library was compiled */
    FPKI_ISA_AVX2,   /* AVX2, BMI2, F16C, FMA and POPCNT */
    FPKI_ISA_AVX512, /* AVX-512 F, BW, DQ, VL and CD, F16C and POPCNT */
    FPKI_ISA_COUNT,
} fpki_isa;

/* The best set this CPU runs, capped by the environment variable FPK_ISA
 * when it names one ("c", "avx2", "avx512"). */
fpki_isa fpki_isa_best(void);
const char *fpki_isa_name(fpki_isa isa);

/* The formats the kernels specialise: conversions from float32 round into
 * them, and widening reads those of 8 and 16 bits (all but tf32). */
typedef enum fpki_kformat {
    FPKI_KFORMAT_FP16,
    FPKI_KFORMAT_BF16,
    FPKI_KFORMAT_TF32,
    FPKI_KFORMAT_E4M3,
    FPKI_KFORMAT_E5M2,
    FPKI_KFORMAT_NONE,
} fpki_kformat;

/* A conversion from float32, fixed for a call.  Modes: FPK_RNE, FPK_RTZ and
 * FPK_SR with sr_bits <= 32. */
typedef struct fpki_conv_plan {
    fpki_kformat format;
    fpk_round mode;
    bool quant; /* out: float32 values (fake quantisation), not encodings */
    bool ftz, daz, saturate, tiny_before;
    uint64_t seed_mix; /* SR: the seed, mixed (fpki_sr_mix, lib/core/sr-hash.h) */
    int sr_shift;      /* SR: 32 - sr_bits */
    size_t out_size;   /* bytes per output element: 1, 2 or 4 */
} fpki_conv_plan;

/* Conversion.  Converts X[0..N-1] (float32 encodings) into Z (N elements
 * of p->out_size bytes), element i with SR counter INDEX + i, as
 * fpk_convert does (fpk_array_convert, fpk_array_quantize); returns the
 * flags raised.  Z may be X when both hold 4-byte elements.  STREAM asks
 * for non-temporal stores (large outputs that would only evict the
 * cache); the portable set ignores it. */
typedef unsigned fpki_convert_fn(const fpki_conv_plan *p, const uint32_t *x, void *z, size_t n,
                                 uint64_t index, bool stream);
extern fpki_convert_fn *const fpki_convert_fns[FPKI_ISA_COUNT];

/* Widening.  Z[i] := the N elements of format FROM (FPKI_KFORMAT_FP16,
 * BF16, E4M3 or E5M2; host byte order, 2 or 1 bytes each) at X exactly as
 * float32 encodings, NaN payloads and their quiet bit kept; with DAZ,
 * subnormals of FROM become zeros of their sign.  Whatever the set, the
 * result is the same. */
typedef void fpki_widen_fn(fpki_kformat from, const void *x, uint32_t *z, size_t n, bool daz);
extern fpki_widen_fn *const fpki_widen_fns[FPKI_ISA_COUNT];

/* The most formats one statistics call counts (the tensor layer's
 * FPK_STATS_MAX_FORMATS may not exceed it), and the most keys: three per
 * format and sign, and a few shared. */
#define FPKI_STATS_MAX_FORMATS 16
#define FPKI_STATS_MAX_KEYS (6 * FPKI_STATS_MAX_FORMATS + 8)

/* Statistics.  For float32 elements: the histogram of their exponent
 * fields, the float32 subnormals by binade, the largest finite magnitude,
 * and for each of a list of keys how many elements compare below it (the
 * tensor layer's thresholds between rounding classes, array_stats.c). */
typedef struct fpki_stats_keys {
    bool sign; /* compare the encoding (sign included),
                  not the magnitude */
    int n;
    uint32_t key[FPKI_STATS_MAX_KEYS]; /* counted: elements whose compared
                                          bits are below key[k] */
} fpki_stats_keys;

/* What fpki_stats_fn adds up; zero it before the first call. */
typedef struct fpki_stats_totals {
    uint64_t hist[256];     /* by exponent field: 0 holds zeros and
                               subnormals, 255 infinities and NaNs */
    uint64_t subnormal[23]; /* float32 subnormals by floor(log2|x|) + 149 */
    uint32_t amax;          /* largest finite magnitude, as its encoding */
    uint64_t below[FPKI_STATS_MAX_KEYS];
} fpki_stats_totals;

/* Adds X[0..N-1] (float32 encodings, N < 2^32) to T. */
typedef void fpki_stats_fn(const fpki_stats_keys *k, const uint32_t *x, size_t n,
                           fpki_stats_totals *t);
extern fpki_stats_fn *const fpki_stats_fns[FPKI_ISA_COUNT];

/* The stochastic-rounding fix-up of the statistics (array_stats.c), at a
 * scale of 2^scale_exp: an element is counted first with the class RTZ
 * gives it, and those whose neighbour away from zero has another class
 * are decided here by the SR rule (seed 0, 32 random bits, the element's
 * index as counter).  Per format, the least float32 magnitudes of each
 * class above zero under RTZ and rounding away, and the format's fields
 * the rule needs.  An element's bits under MASK are compared with the
 * thresholds: its magnitude, or for a format without a sign its encoding,
 * so that negative elements (NaN whatever the rounding) lie in no
 * range. */
typedef struct fpki_sr_fixup_plan {
    int n, scale_exp;
    uint32_t tz[FPKI_STATS_MAX_FORMATS][3], away[FPKI_STATS_MAX_FORMATS][3];
    uint32_t mask[FPKI_STATS_MAX_FORMATS];
    int emin[FPKI_STATS_MAX_FORMATS], man_bits[FPKI_STATS_MAX_FORMATS];
} fpki_sr_fixup_plan;

/* The class of the float32 magnitude A under a format's thresholds T[0..2]
 * (the least magnitudes of classes 1, 2 and 3): how many are at or below
 * A. */
static inline int fpki_threshold_class(const uint32_t *t, uint32_t a)
{
    return (a >= t[0]) + (a >= t[1]) + (a >= t[2]);
}

/* DELTA[j][c] += how format j's count of class c changes when X[0..N-1]
 * (float32 encodings, element i with counter INDEX + i) are decided by
 * the SR rule rather than counted with RTZ's class. */
typedef void fpki_sr_fixup_fn(const fpki_sr_fixup_plan *p, const uint32_t *x, size_t n,
                              uint64_t index, int64_t (*delta)[4]);
extern fpki_sr_fixup_fn *const fpki_sr_fixup_fns[FPKI_ISA_COUNT];

/* Squared errors, summed in FPKI_SQERR_LANES lanes of doubles (the tensor
 * layer's FPK_LANES).  fpk_array_sqerr: adds the squares of X[0..N-1] and
 * of their errors against Y to the lanes X2 and E2, the first nonzero
 * element's to lane LANE; returns the next one's lane. */
#define FPKI_SQERR_LANES 16
typedef unsigned fpki_sqerr_fn(const float *x, const float *y, size_t n, unsigned lane, double *x2,
                               double *e2);
extern fpki_sqerr_fn *const fpki_sqerr_fns[FPKI_ISA_COUNT];

/* The same for Y := X[0..N-1] quantised under each of P[0..NF-1]
 * (p->quant; NF at most FPKI_QUANTIZE_SQERR_MAX_FORMATS), rounded and
 * summed in one pass: format j's errors into the lanes E2 + j *
 * FPKI_SQERR_LANES (not NULL), X2 with format 0's results, FLAGS[j] |= the
 * flags it raises (those raised already on entry need not be looked for
 * again).  Returns false, doing nothing, where the set has no such kernel
 * for every P[j]. */
#define FPKI_QUANTIZE_SQERR_MAX_FORMATS 8
typedef bool fpki_quantize_sqerr_fn(const fpki_conv_plan *p, int nf, const uint32_t *x, size_t n,
                                    double *x2, double *e2, unsigned *flags);
extern fpki_quantize_sqerr_fn *const fpki_quantize_sqerr_fns[FPKI_ISA_COUNT];

/* fpki_stats_fn and then fpki_quantize_sqerr_fn over the same X, in one
 * pass where the set has a kernel for both (the nonzero elements packed
 * once); false, doing neither, where it has not. */
typedef bool fpki_stats_quantize_sqerr_fn(const fpki_stats_keys *k, const uint32_t *x, size_t n,
                                          fpki_stats_totals *t, const fpki_conv_plan *p, int nf,
                                          double *x2, double *e2, unsigned *flags);
extern fpki_stats_quantize_sqerr_fn *const fpki_stats_quantize_sqerr_fns[FPKI_ISA_COUNT];

/* Block scaling (MX, mx.c) scales a block's elements by 2^-k on their
 * exponent bits, a span at a time, and the results back by 2^k.  A span's
 * constants: SHIFT is k << 23 (mod 2^32); magnitudes in LO + [0, SPAN]
 * scale plainly (LO UINT32_MAX, SPAN 0: none); those below ZERO_BELOW
 * are zeros (1, or the least normal under daz); MIN_NORM is the element
 * format's least normal as float32 bits. */
typedef struct fpki_mx_span {
    uint32_t shift, lo, span, zero_below, min_norm;
} fpki_mx_span;

/* Whether magnitude bits MAG lie outside S's window, as 0 or 1. */
static inline uint32_t fpki_mx_outside(const fpki_mx_span *s, uint32_t mag)
{
    return mag - s->lo > s->span;
}

/* The largest finite magnitude of the N float32s at X, as bits, plus
 * 2^32 if one is an infinity or a NaN. */
typedef uint64_t fpki_mx_amax_fn(const uint32_t *x, size_t n);
extern fpki_mx_amax_fn *const fpki_mx_amax_fns[FPKI_ISA_COUNT];

/* XS[j] := X[j]'s sign bit alone where its magnitude is below
 * S->zero_below, otherwise X[j] - S->shift, for j < N; bit j % 8 of
 * ODD[j / 8] := whether it is one of the latter and lies outside S's
 * window (those XS[j] are left to mx.c).  Returns whether any bit is set.
 * ODD holds N / 8 + 2 bytes at least. */
typedef bool fpki_mx_scale_down_fn(const fpki_mx_span *s, const uint32_t *x, uint32_t *xs, size_t n,
                                   uint8_t *odd);
extern fpki_mx_scale_down_fn *const fpki_mx_scale_down_fns[FPKI_ISA_COUNT];

/* For j < N, the results Q[j] of the scaled elements XS[j]: Y[j] := Q[j]
 * + S->shift where Q[j] is not a zero (Y NULL: none), and COUNTS[0] += how
 * many Q[j] are zeros where XS[j] is not, COUNTS[1] += how many are
 * nonzero below S->min_norm; returns whether any nonzero Q[j] lies
 * outside S's window (those Y[j] are left to mx.c). */
typedef bool fpki_mx_scale_up_fn(const fpki_mx_span *s, const uint32_t *q, const uint32_t *xs,
                                 uint32_t *y, size_t n, uint32_t counts[2]);
extern fpki_mx_scale_up_fn *const fpki_mx_scale_up_fns[FPKI_ISA_COUNT];

/* Block quantisation (the recipes' elements, lib/tensor/recipe_fast.c):
 * one row's run of elements across consecutive blocks, each block
 * scaled by its own factor and rounded into an element format of at
 * most 8 bits, saturating, under RNE or SR.  The format's constants, the
 * mode and how blocks scale (fpki_blockq_plan_init fills them):
 * POW2 scales exactly by 2^-k on the exponent, MUL and DIV round V * m
 * or V / m to float32 first (host arithmetic, which the default
 * environment makes IEEE's). */
typedef enum fpki_blockq_how { FPKI_BLOCKQ_POW2, FPKI_BLOCKQ_MUL, FPKI_BLOCKQ_DIV } fpki_blockq_how;
typedef struct fpki_blockq_plan {
    fpki_blockq_how how;
    fpk_round mode;                 /* FPK_RNE or FPK_SR */
    uint64_t seed_mix;              /* SR: fpki_sr_mix(seed) */
    uint32_t sr_shift;              /* SR: 32 - sr_bits */
    int32_t man_bits, bias, emin;   /* the element format's */
    uint32_t maxf, sign_bit, nan;   /* its largest finite magnitude, sign, NaN */
    bool fnuz;                      /* no -0 */
    /* MUL, DIV: what an infinite scaled value (0 * inf: a NaN) rounds
     * to: the core's magnitude (NaN: encoding), flags, and its value as
     * float32 bits */
    uint32_t inf_code, inf_flags, inf_value;
    uint32_t nan_code, nan_flags, nan_value;
} fpki_blockq_plan;

/* A plan for element format F (at most 8 bits, signed, normal largest
 * value), MODE, SR's SEED and SR_BITS; the infinite case from the core. */
void fpki_blockq_plan_init(fpki_blockq_plan *p, const fpk_format *f, fpki_blockq_how how,
                           fpk_round mode, uint64_t seed, int sr_bits);

/* One block: POW2's k, MUL's or DIV's m (float32 bits), the decoding
 * scale (values are the code's times DECODE, rounded to float32), and
 * whether it holds a NaN or an infinity (every element the NaN). */
typedef struct fpki_blockq_block {
    int32_t k;
    uint32_t m, decode, nan;
} fpki_blockq_block;

/* What the elements add up to: counts of those in, flags ORed. */
typedef struct fpki_blockq_counts {
    uint64_t zeros, nonfinite, flushed, saturated, subnormal;
    unsigned flags;
} fpki_blockq_counts;

/* The sum of the sixteen lanes L in the order every path adds them:
 * L[i] += L[i + h] for h = 8, 4, 2, 1, then L[0]. */
static inline double fpki_blockq_fold(double *l)
{
    for (int h = 8; h; h /= 2)
        for (int i = 0; i < h; i++)
            l[i] += l[i + h];
    return l[0];
}

/* The N elements X of one row (encodings; element i with SR counter
 * INDEX + i) in blocks of W elements, the first at X, the last maybe
 * shorter, block j scaled by B[j]: CODES[i] and Y[i] (the value, float32
 * bits; each may be NULL); SUMS[2j] and SUMS[2j + 1] := the sums of the
 * squares of block j's elements and of their errors (Y - X), over its
 * nonzero finite elements (none in a NaN block), element i of the block
 * in lane i % 16, each lane added in order, folded by fpki_blockq_fold;
 * the counts and flags into C. */
typedef void fpki_blockq_fn(const fpki_blockq_plan *p, const fpki_blockq_block *b, size_t w,
                            const uint32_t *x, size_t n, uint64_t index, uint8_t *codes,
                            uint32_t *y, double *sums, fpki_blockq_counts *c);
extern fpki_blockq_fn *const fpki_blockq_fns[FPKI_ISA_COUNT];

/* The extremes of the N float32s X of one row in blocks of W, combined
 * into block j's: AMAX[j] the largest finite magnitude, AMIN[j] the least
 * nonzero finite one (0x7f800000 for none), NONFINITE[j] |= 1
 * where one is an infinity or a NaN. */
typedef void fpki_blockq_extremes_fn(const uint32_t *x, size_t n, size_t w, uint32_t *amax,
                                     uint32_t *amin, uint8_t *nonfinite);
extern fpki_blockq_extremes_fn *const fpki_blockq_extremes_fns[FPKI_ISA_COUNT];

/* The 16-point Hadamard transform of each of the N / 16 runs of 16
 * float32s at X into Z, as fpk_rht16 gives it rounded to PREC bits (8:
 * bfloat16, 24: float32), but for the runs where REDO[g] is set (those
 * whose sums this kernel cannot round exactly; Z's are then not final):
 * returns how many. */
typedef size_t fpki_rht16_fn(const uint32_t *x, size_t n, uint16_t signs, int prec, uint32_t *z,
                             uint8_t *redo);
extern fpki_rht16_fn *const fpki_rht16_fns[FPKI_ISA_COUNT];

/* The kernels run on the host's vector unit (F16C, vcvtph2ps, vsubps and
 * the squared errors' sums), which raises its own exception flags: each
 * thread that runs them does so in the default floating-point environment
 * (round to nearest, every exception masked, no FTZ or DAZ), whatever
 * traps the caller enabled (feenableexcept), and gets its own environment
 * back, flags included.  fpki_fp_default saves it into *SAVED and sets the
 * default; fpki_fp_restore(SAVED) restores it.  On x86-64 the library's
 * floating-point code is all SSE and AVX (no long double, no x87), which
 * MXCSR alone governs: stmxcsr and two ldmxcsr instead of fegetenv and
 * two fesetenv, which cost far more for a small call. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
typedef unsigned fpki_fpenv;
#define FPKI_MXCSR_DEFAULT 0x1f80u /* every exception masked, to nearest */
static inline void fpki_fp_default(fpki_fpenv *saved)
{
    *saved = __builtin_ia32_stmxcsr();
    __builtin_ia32_ldmxcsr(FPKI_MXCSR_DEFAULT);
}
static inline void fpki_fp_restore(const fpki_fpenv *saved)
{
    __builtin_ia32_ldmxcsr(*saved);
}
#else
typedef fenv_t fpki_fpenv;
static inline void fpki_fp_default(fpki_fpenv *saved)
{
    fegetenv(saved);
    fesetenv(FE_DFL_ENV);
}
static inline void fpki_fp_restore(const fpki_fpenv *saved)
{
    fesetenv(saved);
}
#endif

#endif
