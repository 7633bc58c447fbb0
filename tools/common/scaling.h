/* The scales the tools recommend and replay: a loss scale (a power of two
 * that multiplies the loss, hence every gradient), and the per-tensor FP8
 * scale of Transformer Engine's recipes.  fpgrad and fpscale compute them
 * here, so that they agree. */
#ifndef FPKIT_SCALING_H
#define FPKIT_SCALING_H

#include <stdbool.h>

#include "fpkit.h"

/* The powers of two a double holds: scales are clamped to 2^-1074 .. 2^1023. */
#define SCALING_LOG2_MIN (-1074)
#define SCALING_LOG2_MAX 1023

/* The largest k with no element of magnitude AMAX > 0, of either sign,
 * overflowing F at scale 2^k under MODE (under stochastic rounding, in
 * either direction), judged by the library's rounding; clamped as above. */
int scaling_loss_log2(const fpk_format *f, double amax, fpk_round mode);

/* How an FP8 scale is rounded.  SCALING_EXACT: fp32(fp32(MAX / AMAX) /
 * 2^margin), MAX being F's largest finite value and AMAX rounded to fp32,
 * as Transformer Engine's DelayedScaling computes it ((fp8_max / amax) /
 * 2**margin on float32 tensors) and Float8CurrentScaling (fp8_max / amax,
 * no margin).  SCALING_POW2: 2^(k - margin) for the largest k with AMAX *
 * 2^k <= MAX exactly: the scale of Transformer Engine's first releases,
 * 2^(floor(log2(fp8_max / amax)) - margin), which torchao's
 * round_scales_to_power_of_2 and Transformer Engine's force_pow_2_scales
 * also give but where the float32 quotient rounds up onto a power of two. */
typedef enum scaling_rule { SCALING_EXACT, SCALING_POW2 } scaling_rule;

/* "exact", "pow2"; and the rule called NAME, false if none. */
const char *scaling_rule_name(scaling_rule r);
bool scaling_rule_lookup(const char *name, scaling_rule *r);

/* The FP8 scale of format F for a tensor whose largest finite magnitude
 * is AMAX (finite, > 0) under RULE and MARGIN, as a double (an fp32
 * value, or a power of two clamped as above); 0 where the fp32 quotient
 * is not a finite positive number (the scale is then left as it was). */
double scaling_fp8(const fpk_format *f, double amax, int margin, scaling_rule rule);

/* The float32 scale Transformer Engine takes for a tensor whose amax (of
 * its history, or its own) is AMAX, into *SCALE: scaling_fp8's, or where
 * MAX / AMAX overflows float32 its largest number (2^127 under pow2), as
 * its delayed and current scaling do.  False, *SCALE untouched, where
 * there is none: AMAX 0 or not finite, or a scale below float32's least
 * subnormal (a huge AMAX and a large margin); the delayed scale then stays
 * what it was. */
bool scaling_fp8_f32(const fpk_format *f, double amax, int margin, scaling_rule rule,
                     fpk_bits *scale);

#endif
