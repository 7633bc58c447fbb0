/* The block-quantisation kernels' plan (kernels.h: fpki_blockq_plan):
 * the element format's constants, and what the core gives for an
 * infinity and a NaN, which the kernels take from here rather than
 * repeat. */
#include <string.h>

#include "core-impl.h"
#include "kernels.h"
#include "sr-hash.h"

void fpki_blockq_plan_init(fpki_blockq_plan *p, const fpk_format *f, fpki_blockq_how how,
                           fpk_round mode, uint64_t seed, int sr_bits)
{
    memset(p, 0, sizeof *p);
    p->how = how;
    p->mode = mode;
    p->seed_mix = fpki_sr_mix(seed);
    p->sr_shift = mode == FPK_SR ? (uint32_t)(32 - sr_bits) : 0;
    p->man_bits = f->man_bits;
    p->bias = f->bias;
    p->emin = f->emin;
    p->maxf = (uint32_t)f->max_finite;
    p->sign_bit = (uint32_t)f->sign_mask;
    p->nan = (uint32_t)f->nan;
    p->fnuz = f->special == FPK_SPECIAL_FNUZ;
    fpk_ctx c = fpk_ctx_default();
    c.round = mode;
    c.saturate = true;
    fpk_bits z = fpk_convert(f, &fpk_fp32, UINT32_C(0x7f800000), &c);
    p->inf_code = (uint32_t)(z & ~f->sign_mask);
    p->inf_flags = c.flags;
    fpk_ctx d = fpk_ctx_default();
    p->inf_value = (uint32_t)fpk_convert(&fpk_fp32, f, p->inf_code, &d);
    c.flags = 0;
    p->nan_code = (uint32_t)fpk_convert(f, &fpk_fp32, UINT32_C(0x7fc00000), &c);
    p->nan_flags = c.flags;
    p->nan_value = (uint32_t)fpk_convert(&fpk_fp32, f, p->nan_code, &d);
}
