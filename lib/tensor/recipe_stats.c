/* Statistics of a recipe's quantisation: per element what rounding did,
 * per block what the scale did, all counts and sums exact and additive
 * (the sums in fixed point, fpk_recipe_sum). */
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
                               uint8_t p, uint32_t y, unsigned flags, fpki_recipe_lanes *l,
                               int lane)
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
    l->x2[lane] += v * v;
    l->e2[lane] += d * d;
}

/* S += V, V a nonnegative double that is a multiple of 2^-298 (or an
 * infinity or a NaN, noted apart). */
static inline void sum_add(fpk_recipe_sum *s, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    if (b == 0)
        return;
    if (b >= UINT64_C(0x7ff0000000000000)) { /* (a negative NaN too) */
        s->inf |= b == UINT64_C(0x7ff0000000000000);
        s->nan |= b != UINT64_C(0x7ff0000000000000);
        return;
    }
    /* V = M * 2^(max(e, 1) - 1075): bit POS of the sum */
    int e = (int)(b >> 52);
    uint64_t m = (b & ((UINT64_C(1) << 52) - 1)) | (uint64_t)(e != 0) << 52;
    int pos = (e ? e : 1) - 1075 + FPKI_SUM_LSB;
    if (pos < 0) { /* (its bits below 2^-298 are zeros) */
        m >>= -pos < 64 ? -pos : 63;
        pos = 0;
    }
    if (pos + 53 > 64 * FPK_RECIPE_SUM_LIMBS) { /* beyond any sum of squares */
        s->inf = 1;
        return;
    }
    int at = pos / 64, sh = pos % 64;
    uint64_t lo = m << sh, hi = sh ? m >> (64 - sh) : 0;
    uint64_t t = s->limb[at] + lo;
    hi += t < lo; /* (hi < 2^53: no carry out) */
    s->limb[at] = t;
    for (int i = at + 1; hi && i < FPK_RECIPE_SUM_LIMBS; i++) {
        t = s->limb[i] + hi;
        hi = t < hi;
        s->limb[i] = t;
    }
}

static void sum_merge(fpk_recipe_sum *into, const fpk_recipe_sum *from)
{
    uint64_t carry = 0;
    for (int i = 0; i < FPK_RECIPE_SUM_LIMBS; i++) {
        uint64_t t = into->limb[i] + from->limb[i];
        uint64_t c1 = t < from->limb[i];
        into->limb[i] = t + carry;
        carry = c1 | (into->limb[i] < t);
    }
    into->inf |= from->inf;
    into->nan |= from->nan;
}

double fpki_recipe_sum_value(const fpk_recipe_sum *s)
{
    if (s->nan)
        return NAN;
    if (s->inf)
        return INFINITY;
    uint64_t d = (uint64_t)fpki_limbs_round(s->limb, FPK_RECIPE_SUM_LIMBS, -FPKI_SUM_LSB, false,
                                            &fpk_fp64);
    double v;
    memcpy(&v, &d, sizeof v);
    return v;
}

fpk_bits fpki_limbs_round(const uint64_t *w, int n, int64_t lsb, bool neg, const fpk_format *f)
{
    int top = n - 1;
    while (top >= 0 && !w[top])
        top--;
    if (top < 0)
        return 0;
    /* hi:lo := the 128 bits from the top limb down, the rest sticky */
    uint64_t hi = top ? w[top] : 0, lo = top ? w[top - 1] : w[0], sticky = 0;
    for (int i = top - 2; i >= 0; i--)
        sticky |= w[i];
    fpk_ctx c = fpk_ctx_default();
    return fpki_round_pack(f, neg, lsb + 64 * (int64_t)(top > 0 ? top - 1 : 0), hi,
                           lo | (sticky != 0), &c);
}

void fpki_recipe_stats_run(fpk_recipe_stats *s, fpki_recipe_lanes *l)
{
    double sums[2] = {fpki_blockq_fold(l->x2), fpki_blockq_fold(l->e2)};
    fpki_recipe_stats_sums(s, sums, 1);
}

void fpki_recipe_stats_sums(fpk_recipe_stats *s, const double *sums, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        sum_add(&s->x2_sum, sums[2 * j]);
        sum_add(&s->e2_sum, sums[2 * j + 1]);
    }
}

void fpki_recipe_stats_round(fpk_recipe_stats *s)
{
    s->x2 = fpki_recipe_sum_value(&s->x2_sum);
    s->e2 = fpki_recipe_sum_value(&s->e2_sum);
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
    uint32_t dec = bp->decode;
    if (dec - 1 < F32_INF - 1) { /* positive and finite */
        double d = f32(dec);
        if (s->scale_min == 0 || d < s->scale_min)
            s->scale_min = d;
        if (d > s->scale_max)
            s->scale_max = d;
        int k = floor_log2(dec) - FPK_SCALE_LOG2_MIN;
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
    sum_merge(&into->x2_sum, &from->x2_sum);
    sum_merge(&into->e2_sum, &from->e2_sum);
    fpki_recipe_stats_round(into);
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
