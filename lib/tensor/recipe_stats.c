/* Statistics of a recipe's quantisation: per element what rounding did,
 * per block what the scale did, all counts exact and additive. */
#include <math.h>
#include <string.h>

#include "recipe-impl.h"

#define F32_MAG UINT32_C(0x7fffffff)
#define F32_INF UINT32_C(0x7f800000)

bool fpki_recipe_same(const fpk_recipe *a, const fpk_recipe *b)
{
    char sa[256], sb[256];
    fpk_recipe_format(a, sa, sizeof sa);
    fpk_recipe_format(b, sb, sizeof sb);
    return strcmp(sa, sb) == 0;
}

void fpk_recipe_stats_init(fpk_recipe_stats *s, const fpk_recipe *r)
{
    memset(s, 0, sizeof *s);
    s->recipe = *r;
}

static double f32(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

void fpki_recipe_stats_element(fpk_recipe_stats *s, const fpki_block_plan *bp, uint32_t x,
                               uint8_t p, uint32_t y, unsigned flags)
{
    const fpk_format *e = s->recipe.elem;
    uint32_t a = x & F32_MAG;
    s->count++;
    if (a == 0) {
        s->zeros++;
        return;
    }
    if (a >= F32_INF) {
        s->nonfinite++;
        return;
    }
    if (bp->nan)
        return;
    fpk_class cls = fpki_classify(e, p);
    s->flushed += cls == FPK_CLASS_ZERO;
    s->subnormal += cls == FPK_CLASS_SUBNORMAL;
    s->saturated += (flags & FPK_OVERFLOW) != 0;
    double v = f32(x), d = f32(y) - v;
    s->x2 += v * v;
    s->e2 += d * d;
}

/* floor(log2) of the float32 magnitude bits A (finite, nonzero). */
static int floor_log2(uint32_t a)
{
    int e = (int)(a >> 23);
    if (e)
        return e - 127;
    return -150 + 32 - __builtin_clz(a);
}

/* floor(log2(A / B)) for float32 magnitudes A >= B > 0 (bits). */
static int floor_log2_ratio(uint32_t a, uint32_t b)
{
    int ea = floor_log2(a), eb = floor_log2(b);
    /* The significands normalised to [2^23, 2^24): A/B's binade is
     * ea - eb, less one where A's significand is below B's. */
    uint32_t sa = ea >= -126 ? (a & 0x7fffff) | 0x800000 : a << (-126 - ea);
    uint32_t sb = eb >= -126 ? (b & 0x7fffff) | 0x800000 : b << (-126 - eb);
    return ea - eb - (sa < sb);
}

void fpki_recipe_stats_block(fpk_recipe_stats *s, const fpki_block_plan *bp, uint32_t amax,
                             uint32_t amin)
{
    s->blocks++;
    if (bp->nan) {
        s->nan_blocks++;
        return;
    }
    if (bp->zero) {
        s->zero_blocks++;
        return;
    }
    s->scale_underflow += bp->under;
    s->scale_saturated += bp->sat;
    double d = f32(bp->decode);
    if (d > 0 && isfinite(d)) {
        if (s->scale_min == 0 || d < s->scale_min)
            s->scale_min = d;
        if (d > s->scale_max)
            s->scale_max = d;
        int k = ilogb(d) - FPK_SCALE_LOG2_MIN;
        s->scale_hist[k < 0 ? 0 : k >= FPK_SCALE_LOG2_BINS ? FPK_SCALE_LOG2_BINS - 1 : k]++;
    }
    if (amin) {
        int k = floor_log2_ratio(amax, amin);
        s->range_hist[k >= FPK_RANGE_BINS ? FPK_RANGE_BINS - 1 : k]++;
    }
}

bool fpk_recipe_stats_merge(fpk_recipe_stats *into, const fpk_recipe_stats *from)
{
    if (!fpki_recipe_same(&into->recipe, &from->recipe))
        return false;
    into->count += from->count;
    into->zeros += from->zeros;
    into->nonfinite += from->nonfinite;
    into->flushed += from->flushed;
    into->saturated += from->saturated;
    into->subnormal += from->subnormal;
    into->x2 += from->x2;
    into->e2 += from->e2;
    into->blocks += from->blocks;
    into->zero_blocks += from->zero_blocks;
    into->nan_blocks += from->nan_blocks;
    into->scale_underflow += from->scale_underflow;
    into->scale_saturated += from->scale_saturated;
    if (from->scale_max > 0) {
        if (into->scale_min == 0 || from->scale_min < into->scale_min)
            into->scale_min = from->scale_min;
        if (from->scale_max > into->scale_max)
            into->scale_max = from->scale_max;
    }
    for (int i = 0; i < FPK_SCALE_LOG2_BINS; i++)
        into->scale_hist[i] += from->scale_hist[i];
    for (int i = 0; i < FPK_RANGE_BINS; i++)
        into->range_hist[i] += from->range_hist[i];
    return true;
}

double fpk_recipe_stats_sqnr(const fpk_recipe_stats *s)
{
    if (s->e2 == 0)
        return INFINITY;
    return 10 * log10(s->x2 / s->e2);
}
