/* The tensor cores' inputs fpk-hwcheck takes (--probe, --mma), each with
 * the device code that multiplies them, and what the model says of each. */
#include <stdio.h>

#include "hwcheck.h"

const hw_tc_desc hw_tcs[HW_NTC] = {
    [HW_TC_FP16] = {"fp16", &fpk_fp16, 16, 0},
    [HW_TC_BF16] = {"bf16", &fpk_bf16, 16, 0},
    [HW_TC_TF32] = {"tf32", &fpk_tf32, 8, 0},
    [HW_TC_E4M3] = {"e4m3", &fpk_e4m3, 32, 0},
    [HW_TC_E5M2] = {"e5m2", &fpk_e5m2, 32, 0},
    [HW_TC_E4M3_P128] = {"e4m3/p128", &fpk_e4m3, 32, 128},
    [HW_TC_E5M2_P128] = {"e5m2/p128", &fpk_e5m2, 32, 128},
};

bool hw_tc_on(const hw_device *d, hw_tc_input which)
{
    const fpk_format *in = hw_tcs[which].in;
    if (in == &fpk_fp16)
        return true;
    return in == &fpk_e4m3 || in == &fpk_e5m2 ? d->fp8 : d->ampere;
}

fpk_tc_arch hw_tc_arch_of(int major, int minor)
{
    if (major < 8)
        return major == 7 && minor >= 5 ? FPK_TC_TURING : FPK_TC_VOLTA;
    return major == 8 ? FPK_TC_AMPERE : FPK_TC_HOPPER;
}

bool hw_tc_published(fpk_tc_arch arch, hw_tc_input which, fpk_tc_params *p)
{
    if (!fpk_tc_params_of(arch, hw_tcs[which].in, &fpk_fp32, p))
        return false;
    p->promote = hw_tcs[which].promote;
    return true;
}

void hw_tc_params_text(const fpk_tc_params *p, char *buf, size_t len)
{
    int n = snprintf(buf, len, "terms %d, window %d, %s, cut toward %s, %s", p->terms, p->window,
                     p->wide ? "wide" : "not wide", p->floor ? "-inf" : "zero",
                     fpk_round_name(p->round));
    if (p->promote && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", promoted every %d", p->promote);
}
