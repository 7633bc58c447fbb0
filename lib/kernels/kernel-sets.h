/* Every kernel set's entry points, which cpu.c's tables index by
 * instruction set: the portable ones (*_c.c), and on x86-64 the AVX2 and
 * AVX-512 ones (*_avx2.c, *_avx512.c), which exist only there. */
#ifndef FPKIT_KERNEL_SETS_H
#define FPKIT_KERNEL_SETS_H

#include "kernels.h"

/* Whether this build has the x86-64 sets: GCC and clang take their
 * target attributes and intrinsics. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FPKI_X86 1
#else
#define FPKI_X86 0
#endif

fpki_convert_fn fpki_convert_c, fpki_convert_avx2, fpki_convert_avx512;
fpki_widen_fn fpki_widen_c, fpki_widen_avx2, fpki_widen_avx512;
fpki_stats_fn fpki_stats_c, fpki_stats_avx2, fpki_stats_avx512;
fpki_sr_fixup_fn fpki_sr_fixup_c, fpki_sr_fixup_avx2, fpki_sr_fixup_avx512;
fpki_sqerr_fn fpki_sqerr_c, fpki_sqerr_avx2, fpki_sqerr_avx512;
fpki_quantize_sqerr_fn fpki_quantize_sqerr_c, fpki_quantize_sqerr_avx2, fpki_quantize_sqerr_avx512;
fpki_stats_quantize_sqerr_fn fpki_stats_quantize_sqerr_c, fpki_stats_quantize_sqerr_avx512;
fpki_mx_amax_fn fpki_mx_amax_c, fpki_mx_amax_avx2, fpki_mx_amax_avx512;
fpki_mx_scale_down_fn fpki_mx_scale_down_c, fpki_mx_scale_down_avx2, fpki_mx_scale_down_avx512;
fpki_mx_scale_up_fn fpki_mx_scale_up_c, fpki_mx_scale_up_avx2, fpki_mx_scale_up_avx512;

#endif
