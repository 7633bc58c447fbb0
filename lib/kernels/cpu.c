/* Which compiled set of kernels this CPU runs, asked at each call (cheap:
 * the compiler's runtime read CPUID once, at startup), so that one library
 * binary runs everywhere and uses what it finds; and each algorithm's
 * table of its sets, which that choice indexes. */
#include <stdlib.h>
#include <string.h>

#include "kernel-sets.h"

static const char *const isa_names[FPKI_ISA_COUNT] = {"c", "avx2", "avx512"};

const char *fpki_isa_name(fpki_isa isa)
{
    return (unsigned)isa < FPKI_ISA_COUNT ? isa_names[isa] : "?";
}

/* What the CPU (and the operating system, which must save the wider
 * registers) supports. */
static fpki_isa cpu_isa(void)
{
#if FPKI_X86
    __builtin_cpu_init();
    /* x86-64-v3: AVX2, BMI1, BMI2, F16C, FMA and POPCNT among others.  clang's
     * runtime knows neither that name nor F16C's; every AVX2 CPU has F16C. */
#ifdef __clang__
    bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
              __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma") &&
              __builtin_cpu_supports("popcnt");
#else
    bool v3 = __builtin_cpu_supports("x86-64-v3");
#endif
    if (!v3)
        return FPKI_ISA_C;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512cd"))
        return FPKI_ISA_AVX512;
    return FPKI_ISA_AVX2;
#else
    return FPKI_ISA_C;
#endif
}

fpki_isa fpki_isa_best(void)
{
    fpki_isa best = cpu_isa();
    const char *cap = getenv("FPK_ISA");
    for (int i = 0; cap && i < (int)best; i++)
        if (strcmp(cap, isa_names[i]) == 0)
            return (fpki_isa)i;
    return best;
}

const char *fpk_array_isa(void)
{
    return fpki_isa_name(fpki_isa_best());
}

/* Each algorithm's sets, indexed by fpki_isa: outside x86-64, the portable
 * set in every place. */
#if FPKI_X86
#define FPKI_SETS(c, avx2, avx512)                                                                 \
    {                                                                                              \
        c, avx2, avx512                                                                            \
    }
#else
#define FPKI_SETS(c, avx2, avx512)                                                                 \
    {                                                                                              \
        c, c, c                                                                                    \
    }
#endif

fpki_convert_fn *const fpki_convert_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_convert_c, fpki_convert_avx2, fpki_convert_avx512);
fpki_widen_fn *const fpki_widen_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_widen_c, fpki_widen_avx2, fpki_widen_avx512);
fpki_stats_fn *const fpki_stats_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_stats_c, fpki_stats_avx2, fpki_stats_avx512);
fpki_sr_fixup_fn *const fpki_sr_fixup_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_sr_fixup_c, fpki_sr_fixup_avx2, fpki_sr_fixup_avx512);
fpki_sqerr_fn *const fpki_sqerr_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_sqerr_c, fpki_sqerr_avx2, fpki_sqerr_avx512);
fpki_quantize_sqerr_fn *const fpki_quantize_sqerr_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_quantize_sqerr_c, fpki_quantize_sqerr_avx2, fpki_quantize_sqerr_avx512);
/* (AVX2 has no one-pass kernel for both) */
fpki_stats_quantize_sqerr_fn *const fpki_stats_quantize_sqerr_fns[FPKI_ISA_COUNT] = FPKI_SETS(
    fpki_stats_quantize_sqerr_c, fpki_stats_quantize_sqerr_c, fpki_stats_quantize_sqerr_avx512);
fpki_mx_amax_fn *const fpki_mx_amax_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_mx_amax_c, fpki_mx_amax_avx2, fpki_mx_amax_avx512);
fpki_mx_scale_down_fn *const fpki_mx_scale_down_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_mx_scale_down_c, fpki_mx_scale_down_avx2, fpki_mx_scale_down_avx512);
fpki_mx_scale_up_fn *const fpki_mx_scale_up_fns[FPKI_ISA_COUNT] =
    FPKI_SETS(fpki_mx_scale_up_c, fpki_mx_scale_up_avx2, fpki_mx_scale_up_avx512);
