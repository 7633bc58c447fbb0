/* The statistics' thresholds between rounding classes (stats-thresholds.h),
 * found with the public API alone, so that cuda/ can compile this file
 * into a library of its own. */
#include "stats-thresholds.h"

void fpki_stats_thresholds(const fpk_stats *s, const fpk_format *f, fpk_round mode, bool neg,
                           const fpk_format *d, uint64_t t[3])
{
    fpk_ctx c = fpki_stats_ctx(s);
    c.round = mode;
    /* Each class's least magnitude is at least the one before's. */
    uint64_t lo = 1;
    for (int k = 0; k < 3; k++) {
        fpki_stats_class want = (fpki_stats_class)(k + 1);
        uint64_t hi = d->max_finite + 1;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            double x = fpk_to_double(d, mid);
            if (fpki_stats_classify(f, neg ? -x : x, s->scale, &c) >= want)
                hi = mid;
            else
                lo = mid + 1;
        }
        t[k] = lo;
    }
}
