/* How the statistics class a rounded element, and the thresholds between
 * the classes: the one plan of the host statistics (stats.c,
 * array_stats.c) and the device statistics (cuda/stats_plan.c, which
 * compiles stats_thresholds.c in: it calls the public API alone). */
#ifndef FPKIT_STATS_THRESHOLDS_H
#define FPKIT_STATS_THRESHOLDS_H

#include "core-impl.h"
#include "fpkit-tensor.h"

/* What rounding a nonzero finite element does in a format, as the
 * statistics count it, in increasing order of magnitude: for a fixed
 * format, scale and deterministic mode it never decreases as |x| grows. */
typedef enum fpki_stats_class {
    FPKI_STATS_ZERO,      /* underflow: the result is zero */
    FPKI_STATS_SUBNORMAL, /* a nonzero subnormal */
    FPKI_STATS_NORMAL,
    FPKI_STATS_OVERFLOW,  /* infinity or NaN, or the overflow flag raised */
} fpki_stats_class;

/* The context the statistics S round in: its mode, ftz and saturate,
 * tininess after rounding, no daz, seed 0, 32 random bits. */
static inline fpk_ctx fpki_stats_ctx(const fpk_stats *s)
{
    fpk_ctx c = fpk_ctx_default();
    c.round = s->round;
    c.ftz = s->ftz;
    c.saturate = s->saturate;
    return c;
}

/* The class of X * SCALE rounded into F under C (its flags overwritten). */
static inline fpki_stats_class fpki_stats_classify(const fpk_format *f, double x, double scale,
                                                   fpk_ctx *c)
{
    c->flags = 0;
    fpk_bits z = fpk_from_double_scaled(f, x, scale, c);
    fpk_class cls = fpki_classify(f, z);
    if (c->flags & FPK_OVERFLOW) /* first: e1mY overflows to max finite, a subnormal */
        return FPKI_STATS_OVERFLOW;
    if (cls == FPK_CLASS_ZERO)
        return FPKI_STATS_ZERO;
    if (cls == FPK_CLASS_SUBNORMAL)
        return FPKI_STATS_SUBNORMAL;
    if (cls != FPK_CLASS_NORMAL)
        return FPKI_STATS_OVERFLOW;
    return FPKI_STATS_NORMAL;
}

/* The thresholds of format F for elements of format D (an element type)
 * and sign NEG, rounded under MODE and S's scale and options: T[c - 1] :=
 * the least magnitude encoding of D, from 1 up, whose class is at least c
 * (FPKI_STATS_SUBNORMAL, NORMAL, OVERFLOW for c = 1, 2, 3), or D's
 * max_finite + 1 (the least nonfinite magnitude) where none is.  Found by
 * bisection with the library's own rounding: the class never decreases as
 * the magnitude grows, as D's encodings do (S's mode must not be SR). */
void fpki_stats_thresholds(const fpk_stats *s, const fpk_format *f, fpk_round mode, bool neg,
                           const fpk_format *d, uint64_t t[3]);

#endif
