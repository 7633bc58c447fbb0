/* Internals of the array paths (array.c, array_stats.c, array_kern*.c,
 * cpu.c); not installed.
 *
 * The fast paths work on float32 encodings (other 16- and 8-bit inputs are
 * widened to float32 exactly first) in blocks of FPKI_BLOCK elements, with
 * branch-free integer code that the compiler vectorises.  The same
 * kernels are compiled once per instruction set: for the build machine's
 * baseline ("c", array_kern.c), and, on x86-64, for AVX2 and AVX-512 with
 * target attributes (array_kern_avx2.c, array_kern_avx512.c), chosen when called by what the CPU reports
 * (fpki_isa), never by the flags the library was built with. */
#ifndef FPKIT_ARRAY_IMPL_H
#define FPKIT_ARRAY_IMPL_H

#include <fenv.h>

#include "core-impl.h"
#include "fpkit-tensor.h"

/* Elements per kernel block: a multiple of every vector length, and small
 * enough for a block's temporaries to stay in the L1 cache. */
#define FPKI_BLOCK 256

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

/* The formats with fast conversion kernels from float32. */
typedef enum fpki_kfmt {
    FPKI_K_FP16,
    FPKI_K_BF16,
    FPKI_K_TF32,
    FPKI_K_E4M3,
    FPKI_K_E5M2,
    FPKI_K_NONE,
} fpki_kfmt;

/* The kernel format that is F, or FPKI_K_NONE. */
fpki_kfmt fpki_kfmt_of(const fpk_format *f);

/* Whether the kernels convert float32 into F under C (its mode and
 * sr_bits), rather than fpk_convert element by element. */
bool fpki_array_fast(const fpk_format *f, const fpk_ctx *c);

/* A conversion from float32, fixed for a call.  Modes: FPK_RNE, FPK_RTZ and
 * FPK_SR with sr_bits <= 32. */
typedef struct fpki_conv {
    fpki_kfmt fmt;
    fpk_round mode;
    bool quant;    /* out: float32 values (fake quantisation), not encodings */
    bool ftz, daz, saturate, tiny_before;
    uint64_t seed_mix; /* SR: the seed, mixed as fpk_sr_hash mixes it */
    int sr_shift;      /* SR: 32 - sr_bits */
    size_t out_size;   /* bytes per output element: 1, 2 or 4 */
} fpki_conv;

/* *P := the kernels' fake quantisation of float32 into F under C, if they
 * have one (fpki_array_fast). */
bool fpki_quant_plan(fpki_conv *p, const fpk_format *f, const fpk_ctx *c);

/* Converts X[0..N-1] (float32 encodings) into Z (N elements of
 * p->out_size bytes), element i with SR counter INDEX + i; returns the
 * flags raised.  Z may be X when both hold 4-byte elements.  STREAM asks
 * for non-temporal stores (large outputs that would only evict the
 * cache); the C set ignores it. */
typedef unsigned fpki_conv_fn(const fpki_conv *p, const uint32_t *x, void *z, size_t n,
                              uint64_t index, bool stream);
extern fpki_conv_fn *const fpki_conv_fns[FPKI_ISA_COUNT];

/* Widens N elements of T (FPK_DTYPE_F16, BF16, E4M3 or E5M2; host byte
 * order) at X exactly into float32 encodings at Z, NaN payloads and their
 * quiet bit kept; with DAZ, subnormals of T become zeros of their sign.
 * Whatever the set, the result is the same. */
typedef void fpki_widen_fn(fpk_dtype t, const void *x, uint32_t *z, size_t n, bool daz);
extern fpki_widen_fn *const fpki_widen_fns[FPKI_ISA_COUNT];

/* Statistics of float32 elements: per block, how many elements compare
 * below each of a list of keys, and the histogram of exponent fields. */
#define FPKI_MAX_KEYS (6 * FPK_STATS_MAX_FORMATS + 8)

typedef struct fpki_skeys {
    bool sign;                   /* compare the encoding (sign included),
                                    not the magnitude */
    int n;
    uint32_t key[FPKI_MAX_KEYS]; /* counted: elements whose compared bits
                                    are below key[k] */
} fpki_skeys;

/* What fpki_stats_fn accumulates; zero it before the first call. */
typedef struct fpki_sacc {
    uint64_t hist[256];     /* by exponent field: 0 holds zeros and
                               subnormals, 255 infinities and NaNs */
    uint64_t subnormal[23]; /* float32 subnormals by floor(log2|x|) + 149 */
    uint32_t amax;          /* largest finite magnitude, as its encoding */
    uint64_t below[FPKI_MAX_KEYS];
} fpki_sacc;

/* Adds X[0..N-1] (float32 encodings, N < 2^32) to ACC. */
typedef void fpki_stats_fn(const fpki_skeys *k, const uint32_t *x, size_t n, fpki_sacc *acc);
extern fpki_stats_fn *const fpki_stats_fns[FPKI_ISA_COUNT];

/* The statistics under SR (array_stats.c), at a scale of 2^k: an element
 * is counted first with the class RTZ gives it, and those whose neighbour
 * away from zero has another class are decided by the SR rule (seed 0, 32
 * random bits, the element's index as counter).  Per format, the least
 * float32 magnitudes of each class above zero under RTZ and rounding
 * away, and the format's fields the rule needs.  An element's bits under
 * MASK are compared with the thresholds: its magnitude, or for a format
 * without a sign its encoding, so that negative elements (NaN whatever
 * the rounding) lie in no range. */
typedef struct fpki_srkeys {
    int n, k;
    uint32_t tz[FPK_STATS_MAX_FORMATS][3], away[FPK_STATS_MAX_FORMATS][3];
    uint32_t mask[FPK_STATS_MAX_FORMATS];
    int emin[FPK_STATS_MAX_FORMATS], man_bits[FPK_STATS_MAX_FORMATS];
} fpki_srkeys;

/* The number of T[0..2] (a format's thresholds) at or below the float32
 * magnitude A: A's class under them. */
static inline int fpki_class_below(const uint32_t *t, uint32_t a)
{
    return (a >= t[0]) + (a >= t[1]) + (a >= t[2]);
}

/* DELTA[j][c] += how format j's count of class c (fpki_stats_class)
 * changes when X[0..N-1] (float32 encodings, element i with counter
 * INDEX + i) are decided so. */
typedef void fpki_srfix_fn(const fpki_srkeys *k, const uint32_t *x, size_t n, uint64_t index,
                           int64_t (*delta)[4]);
extern fpki_srfix_fn *const fpki_srfix_fns[FPKI_ISA_COUNT];

/* fpk_array_sqerr: adds the squares of X[0..N-1] and of their errors
 * against Y to the lanes X2 and E2, the first nonzero element's to lane
 * LANE; returns the next one's lane. */
typedef unsigned fpki_lanes_fn(const float *x, const float *y, size_t n, unsigned lane,
                               double *x2, double *e2);
extern fpki_lanes_fn *const fpki_lanes_fns[FPKI_ISA_COUNT];

/* The same for Y := X[0..N-1] quantised under each of P[0..NF-1]
 * (p->quant; NF at most FPKI_SQ_FORMATS), rounded and summed in one
 * pass: format j's errors into the lanes E2 + j * FPK_LANES (not NULL),
 * X2 with format 0's results, FLAGS[j] |= the flags it raises (those
 * raised already on entry need not be looked for again).  Returns
 * false, doing nothing, where the set has no such kernel for every P[j]. */
#define FPKI_SQ_FORMATS 8
typedef bool fpki_sqerr_fn(const fpki_conv *p, int nf, const uint32_t *x, size_t n, double *x2,
                           double *e2, unsigned *flags);
extern fpki_sqerr_fn *const fpki_sqerr_fns[FPKI_ISA_COUNT];

/* fpki_stats_fn and then fpki_sqerr_fn over the same X, in one pass where
 * the set has a kernel for both (the nonzero elements packed once);
 * false, doing neither, where it has not. */
typedef bool fpki_stats_sqerr_fn(const fpki_skeys *k, const uint32_t *x, size_t n,
                                 fpki_sacc *acc, const fpki_conv *p, int nf, double *x2,
                                 double *e2, unsigned *flags);
extern fpki_stats_sqerr_fn *const fpki_stats_sqerr_fns[FPKI_ISA_COUNT];

/* MX quantisation (mx.c) scales a block's elements by 2^-k on their
 * exponent bits, a span at a time, and the results back by 2^k.  A span's
 * constants: SHIFT is k << 23 (mod 2^32); magnitudes in LO + [0, SPAN]
 * scale plainly (LO UINT32_MAX, SPAN 0: none); those below ZERO_BELOW
 * are zeros (1, or the least normal under daz); MIN_NORM is the element
 * format's least normal as float32 bits. */
typedef struct fpki_mxspan {
    uint32_t shift, lo, span, zero_below, min_norm;
} fpki_mxspan;

/* The largest finite magnitude of the N float32s at X, as bits, plus
 * 2^32 if one is an infinity or a NaN. */
typedef uint64_t fpki_mxmax_fn(const uint32_t *x, size_t n);
extern fpki_mxmax_fn *const fpki_mxmax_fns[FPKI_ISA_COUNT];

/* XS[j] := X[j]'s sign bit alone where its magnitude is below
 * S->zero_below, otherwise X[j] - S->shift, for j < N; bit j % 8 of
 * ODD[j / 8] := whether it is one of the latter and lies outside S's
 * window (those XS[j] are left to mx.c).  Returns whether any bit is set.
 * ODD holds N / 8 + 2 bytes at least. */
typedef bool fpki_mxdown_fn(const fpki_mxspan *s, const uint32_t *x, uint32_t *xs, size_t n,
                            uint8_t *odd);
extern fpki_mxdown_fn *const fpki_mxdown_fns[FPKI_ISA_COUNT];

/* For j < N, the results Q[j] of the scaled elements XS[j]: Y[j] := Q[j]
 * + S->shift where Q[j] is not a zero (Y NULL: none), and COUNTS[0] += how
 * many Q[j] are zeros where XS[j] is not, COUNTS[1] += how many are
 * nonzero below S->min_norm; returns whether any nonzero Q[j] lies
 * outside S's window (those Y[j] are left to mx.c). */
typedef bool fpki_mxup_fn(const fpki_mxspan *s, const uint32_t *q, const uint32_t *xs,
                          uint32_t *y, size_t n, uint32_t counts[2]);
extern fpki_mxup_fn *const fpki_mxup_fns[FPKI_ISA_COUNT];

/* The encoding of element I of X, an array of dtype T in host order. */
static inline fpk_bits fpki_load(fpk_dtype t, const void *x, size_t i)
{
    switch (fpk_dtype_size(t)) {
    case 1: return ((const uint8_t *)x)[i];
    case 2: return ((const uint16_t *)x)[i];
    case 4: return ((const uint32_t *)x)[i];
    default: return ((const uint64_t *)x)[i];
    }
}

/* The kernels run on the host's vector unit (F16C, vcvtph2ps, vsubps and
 * the squared errors' sums), which raises its own exception flags: each
 * thread that runs them does so in the default floating-point environment
 * (round to nearest, every exception masked, no FTZ or DAZ), whatever
 * traps the caller enabled (feenableexcept), and gets its own environment
 * back, flags included.  fpki_fp_default saves it into *SAVED and sets the
 * default; fpki_fp_restore(SAVED) restores it.  On x86-64 the library's
 * floating-point code is all SSE and AVX (no long double, no x87), which
 * MXCSR alone governs: stmxcsr and two ldmxcsr instead of fegetenv and
 * two fesetenv, which cost a few hundred nanoseconds a call. */
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

/* An OpenMP directive, or nothing where the library is built without
 * OpenMP (an unknown pragma would be a warning). */
#ifdef _OPENMP
#define FPKI_OMP(directive) _Pragma(#directive)
#else
#define FPKI_OMP(directive)
#endif

/* Where the OpenMP threads of a call split an array: every piece but the
 * last holds FPKI_PIECE elements, so that pieces, not threads, fix which
 * element goes where. */
#define FPKI_PIECE ((size_t)1 << 16)

/* The threads a call over N elements uses: 1 below a few pieces, or
 * without OpenMP. */
int fpki_threads(int threads, size_t n);

/* Runs BODY(ARG, T, NT') for T < NT' on the NT' threads of an OpenMP
 * parallel region of NT (NT' <= NT: OpenMP may give fewer), or BODY(ARG,
 * 0, 1) on the calling thread alone for NT = 1: starting a region, even of
 * one thread, costs about a microsecond, most of a small call.  BODY takes
 * the T-th of NT' shares of its work (fpki_share) and guards what it
 * merges (omp atomic, or omp critical named, so as not to wait on a
 * caller's unnamed one); it uses no worksharing construct, which outside a
 * region would bind to a region of the caller's. */
void fpki_parallel(int nt, void (*body)(void *arg, int t, int nt), void *arg);

/* Where the T-th of NT contiguous shares of N items begins (T = NT: the
 * end): floor(N T / NT), without N T. */
static inline uint64_t fpki_share(uint64_t n, int t, int nt)
{
    uint64_t q = n / (unsigned)nt, r = n % (unsigned)nt;
    return q * (unsigned)t + r * (unsigned)t / (unsigned)nt;
}

#endif
