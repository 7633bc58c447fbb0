/* Which compiled set of array kernels this CPU runs, asked at each call
 * (cheap: the compiler's runtime read CPUID once, at startup), so that one
 * library binary runs everywhere and uses what it finds. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

static const char *const isa_names[FPKI_ISA_COUNT] = {"c", "avx2", "avx512"};

const char *fpki_isa_name(fpki_isa isa)
{
    return (unsigned)isa < FPKI_ISA_COUNT ? isa_names[isa] : "?";
}

/* What the CPU (and the operating system, which must save the wider
 * registers) supports. */
static fpki_isa cpu_isa(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
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
