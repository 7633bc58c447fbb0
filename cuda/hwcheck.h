/* fpk-hwcheck: the library against the GPU's own conversion, arithmetic and
 * matrix instructions.  The device runs the instructions (hwcheck_dev.cu);
 * the host computes the library's results and compares (hwcheck_ref.c,
 * hwcheck_mma.c); hwcheck.c drives and reports. */
#ifndef FPKIT_CUDA_HWCHECK_H
#define FPKIT_CUDA_HWCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpkit-tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The conversions from float32, in the order of their device buffers. */
typedef enum hw_conv {
    HW_FP16,     /* __float2half_rn */
    HW_BF16,     /* __float2bfloat16_rn */
    HW_TF32_RNA, /* cvt.rna.tf32.f32 (sm_80 on) */
    HW_TF32_RN,  /* cvt.rn.tf32.f32 (sm_90 on) */
    HW_TF32_RZ,  /* cvt.rz.tf32.f32 (sm_90 on) */
    HW_E4M3,     /* __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) */
    HW_E5M2,     /* __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2) */
    HW_E2M3,     /* __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest) */
    HW_E3M2,     /* __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest) */
    HW_E2M1,     /* __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) */
    HW_NCONV,
} hw_conv;

/* The binary operations, per format (fp16, bf16): __hadd, __hmul, and
 * __hfma with each third operand of hw_fma_c. */
enum { HW_ADD, HW_MUL, HW_FMA0, HW_FMA1, HW_NOPS };
#define HW_NFMA_C 2

/* One compiled check: what the device computes and the library's
 * counterpart. */
typedef struct hw_conv_desc {
    const char *name;     /* "fp32->fp16 __float2half_rn" */
    const fpk_format *f;  /* the result's format */
    fpk_round mode;
    bool saturate;
    int bytes;            /* of a device result */
    int shift;            /* device result >> shift is the encoding */
} hw_conv_desc;
extern const hw_conv_desc hw_convs[HW_NCONV];

/* The third operands of the __hfma checks, per format (0 fp16, 1 bf16). */
extern const fpk_bits hw_fma_c[2][HW_NFMA_C];

/* What a mismatch is. */
enum {
    HW_ROUNDING,  /* the neighbouring encoding: rounded the other way */
    HW_SUBNORMAL, /* a zero or subnormal result on either side */
    HW_OVERFLOW,  /* infinity or the largest finite number on either side */
    HW_NAN,       /* NaN on one side only */
    HW_SIGN,      /* the same magnitude, the other sign */
    HW_OTHER,
    HW_NCLASSES,
};
extern const char *const hw_class_names[HW_NCLASSES];

#define HW_EXAMPLES 8

typedef struct hw_example {
    uint64_t in[3]; /* the operands */
    fpk_bits want, got;
    int cls;        /* HW_ROUNDING .. */
} hw_example;

/* Results that differ by a documented convention, not by a rounding. */
typedef struct hw_convention {
    uint64_t n;
    fpk_bits want, got; /* the first pair */
    bool varied;        /* other pairs too */
} hw_convention;

/* The results of one check. */
typedef struct hw_tally {
    uint64_t cases, agree;
    hw_convention nan_pattern; /* both NaN, different encodings */
    hw_convention nan_into;    /* a NaN operand into a format without NaN */
    hw_convention nan_to_inf;  /* a NaN operand whose result is an infinity */
    uint64_t by_class[HW_NCLASSES];
    int nex;
    hw_example ex[HW_EXAMPLES]; /* the first mismatches, in input order */
} hw_tally;

/* The class of the mismatch WANT (the library's) != GOT in F. */
int hw_classify(const fpk_format *f, fpk_bits want, fpk_bits got);

/* Counts one case of F with operands IN (three, unused ones 0; NAN_IN if
 * one is a NaN) into T: an agreement, a convention or a mismatch. */
void hw_tally_one(hw_tally *t, const fpk_format *f, const uint64_t *in, bool nan_in,
                  fpk_bits want, fpk_bits got);

/* INTO += FROM, FROM's cases coming after INTO's. */
void hw_tally_merge(hw_tally *into, const hw_tally *from);
uint64_t hw_tally_mismatches(const hw_tally *t);

/* Conversions of the float32 inputs FIRST .. FIRST+N-1: OUT[c] holds the
 * device results of conversion c (bytes per hw_convs[c]), NULL for one the
 * device lacks.  Adds to T[c] over THREADS threads. */
void hw_compare_conv(uint32_t first, size_t n, void *const out[HW_NCONV], hw_tally t[HW_NCONV],
                     int threads);

/* The operand pairs FIRST .. FIRST+N-1 (pair i is a = i >> 16, b = i &
 * 0xffff) of format FMT (0 fp16, 1 bf16): OUT[op] holds the device results
 * (uint16_t).  Adds to T[op]. */
void hw_compare_arith(int fmt, uint64_t first, size_t n, const uint16_t *const out[HW_NOPS],
                      hw_tally t[HW_NOPS], int threads);

/* The device's side (hwcheck_dev.cu).  Each returns 0, or -1 with MSG
 * (LEN bytes) saying what failed; hw_dev_open returns 1, with MSG, when
 * there is no CUDA device (or no driver) at all, or none of the ordinal
 * asked for. */
typedef struct hw_device {
    char name[256];
    int major, minor;  /* compute capability */
    unsigned features; /* bit per hw_conv this build and device have */
    bool ampere;       /* code for 8.0 on runs: bf16 arithmetic, bf16 and tf32 mma */
    bool fp8;          /* code for 8.9 on runs: e4m3 and e5m2 mma */
} hw_device;
#define HW_AMPERE (1u << 31) /* the feature probe's bits for .ampere, .fp8 */
#define HW_FP8 (1u << 30)
int hw_dev_open(int ordinal, hw_device *d, char *msg, size_t len);
/* Conversions of FIRST .. FIRST+N-1 into the host buffers OUT (pinned, from
 * hw_dev_host_alloc). */
int hw_dev_conv(uint32_t first, size_t n, void *const out[HW_NCONV], char *msg, size_t len);
/* The binary operations on the pairs FIRST .. FIRST+N-1 of format FMT
 * (bf16: only where D->ampere). */
int hw_dev_arith(int fmt, uint64_t first, size_t n, uint16_t *const out[HW_NOPS], char *msg,
                 size_t len);
/* The tensor cores' inputs the checks take, each with the device code
 * that multiplies them (hw_dev_dots): wmma for fp16, bf16 (16 products an
 * instruction) and tf32 (8); mma.sync m16n8k32 for e4m3 and e5m2 (32), in
 * a chain of instructions, or with promotion every 128 products: a chain
 * from +0 whose result is added to a binary32 accumulator, c at first, as
 * DeepSeek-V3's kernels do. */
typedef enum hw_tc_input {
    HW_TC_FP16,
    HW_TC_BF16,
    HW_TC_TF32,
    HW_TC_E4M3,
    HW_TC_E5M2,
    HW_TC_E4M3_P128,
    HW_TC_E5M2_P128,
    HW_NTC,
} hw_tc_input;
typedef struct hw_tc_desc {
    const char *name; /* "e4m3/p128" */
    const fpk_format *in;
    int k;       /* products an instruction */
    int promote; /* 0: a plain chain */
} hw_tc_desc;
extern const hw_tc_desc hw_tcs[HW_NTC];

/* Whether D runs the device code of WHICH (bf16 and tf32 from compute
 * capability 8.0, FP8 from 8.9, where this build has code for them). */
bool hw_tc_on(const hw_device *d, hw_tc_input which);
/* The architecture whose model describes compute capability MAJOR.MINOR
 * (the nearest for one newer than Hopper). */
fpk_tc_arch hw_tc_arch_of(int major, int minor);
/* ARCH's published parameters for WHICH (fpk_tc_params_of, binary32
 * accumulation) with the promotion interval of WHICH's device code; false
 * where ARCH takes no such input. */
bool hw_tc_published(fpk_tc_arch arch, hw_tc_input which, fpk_tc_params *p);
/* "terms 16, window 25, wide, cut toward zero, rtz[, promoted every N]" */
void hw_tc_params_text(const fpk_tc_params *p, char *buf, size_t len);

/* D[i] := C[i] + A[i][0] * B[i][0] + ... for COUNT dot products of N
 * products (N a multiple of hw_tcs[WHICH].k; A[i] and B[i] N encodings of
 * its format each, after each other; C and D binary32 bits), on the
 * device as hw_tcs[WHICH] says.  0, or -1 with MSG. */
int hw_dev_dots(hw_tc_input which, int n, size_t count, const fpk_bits *a, const fpk_bits *b,
                const uint32_t *c, uint32_t *d, char *msg, size_t len);

/* The probe (hwcheck_probe.c): the parameter sets of the model that
 * reproduce the device's results on designed dot products. */
enum {
    HW_P_TERMS = 1,
    HW_P_WINDOW = 2,
    HW_P_WIDE = 4,
    HW_P_FLOOR = 8,
    HW_P_ROUND = 16,
    HW_P_PROMOTE = 32,
};
typedef struct hw_probe_result {
    int probes;            /* designed dot products run */
    long candidates;       /* parameter sets tried */
    long survivors;        /* those that reproduce every probe */
    fpk_tc_params found;   /* the first of them, or with none the closest */
    unsigned open;         /* HW_P_ bits: parameters the survivors differ in */
    char misfit[320];      /* with no survivor: the closest and its first misfit,
                              or the layout probe the device code fails */
    char published[320];   /* the first misfit of the architecture's published set */
} hw_probe_result;

/* Probes the device's accumulation of WHICH, comparing ARCH's published
 * parameters too.  0, or -1 with MSG. */
int hw_probe(hw_tc_input which, fpk_tc_arch arch, hw_probe_result *r, char *msg, size_t len);

/* D = A * B + C for NT tiles of 16 x 16 x K: A row-major 16 x K, B
 * column-major K x 16, C and D row-major 16 x 16 binary32; IN fp16, bf16
 * (K = 16, 16-bit encodings) or tf32 (K = 8, binary32 containers). */
int hw_dev_mma(const fpk_format *in, size_t nt, const void *a, const void *b, const float *c,
               float *d, char *msg, size_t len);
void *hw_dev_host_alloc(size_t bytes);
void hw_dev_host_free(void *p);

/* The matrix check's counts for one input (hwcheck_mma.c). */
typedef struct hw_mma_tally {
    uint64_t total;                    /* dot products; 0: not on this device */
    uint64_t agree[FPK_TC_ARCH_COUNT]; /* equal to each architecture's published set's */
    uint64_t agree_measured;           /* equal to the measured set's, where given */
    hw_tally first; /* against the measured set, else the device architecture's */
} hw_mma_tally;

/* The goal of a measured set: its share of agreement, in 1/10000ths. */
#define HW_MMA_GOAL 9999

/* The matrix check: for each input D runs (hw_tc_on), random and
 * adversarial inputs from SEED: NT tiles of 16 x 16 (fp16, bf16, tf32), or
 * 16 NT dot products along two instructions or two promotion intervals
 * (FP8); each result compared, into T[input], with the model under each
 * architecture's published parameters and under MEASURED[input] where
 * MEASURED and it are not NULL.  T zeroed by the caller.  0, or -1 with
 * MSG. */
int hw_mma_check(const hw_device *d, size_t nt, uint64_t seed, int threads,
                 const fpk_tc_params *const measured[HW_NTC], hw_mma_tally t[HW_NTC], char *msg,
                 size_t len);

#ifdef __cplusplus
}
#endif

#endif
