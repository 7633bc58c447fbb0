/* Tensor statistics (docs/DESIGN.md "Tensor statistics"): counts, amax, the
 * histogram of floor(log2|x|), and per format what rounding x * S does to
 * each nonzero finite element.
 *
 * Every element is rounded with fpk_from_double_scaled in a context holding
 * the statistics' mode, ftz and saturate (tininess after rounding, no daz,
 * 32 random bits).  Under FPK_SR the stream has seed 0 and the element's
 * index in the sequence added so far as its counter, in every format: the
 * same elements added in any chunks give the same statistics.  Statistics
 * merged from shards use each shard's own indices, so under FPK_SR they can
 * differ from those of the whole, by chance alone. */
#include <string.h>

#include "stats.h"

void fpk_stats_init(fpk_stats *s, const fpk_format *const *formats, int n, double scale,
                    const fpk_ctx *c)
{
    memset(s, 0, sizeof *s);
    if (n < 0)
        n = 0;
    if (n > FPK_STATS_MAX_FORMATS)
        n = FPK_STATS_MAX_FORMATS;
    s->scale = scale;
    s->round = c->round;
    s->ftz = c->ftz;
    s->saturate = c->saturate;
    s->nformats = n;
    for (int i = 0; i < n; i++)
        s->formats[i] = formats[i];
}

void fpki_stats_count(fpk_format_counts *k, fpki_stats_class cls, int64_t by)
{
    if (cls == FPKI_STATS_ZERO)
        k->underflow += (uint64_t)by;
    else if (cls == FPKI_STATS_SUBNORMAL)
        k->subnormal += (uint64_t)by;
    else if (cls == FPKI_STATS_OVERFLOW)
        k->overflow += (uint64_t)by;
}

void fpk_stats_add(fpk_stats *s, const double *x, size_t n)
{
    fpk_ctx c = fpki_stats_ctx(s);
    uint64_t amax;
    memcpy(&amax, &s->amax, sizeof amax);
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        uint64_t mag = bits & ~FPKI_F64_SIGN;
        uint64_t index = s->sr_index++;
        s->count++;
        if (mag == 0) {
            s->zeros++;
            continue;
        }
        if ((mag & FPKI_F64_EXP_ALL) == FPKI_F64_EXP_ALL) {
            s->nonfinite++;
            continue;
        }
        /* Finite magnitudes order as their encodings do. */
        if (mag > amax)
            amax = mag;
        s->log2_hist[fpki_f64_floor_log2(mag) - FPK_LOG2_MIN]++;
        for (int j = 0; j < s->nformats; j++) {
            c.sr_counter = index;
            fpki_stats_count(&s->fmt[j], fpki_stats_classify(s->formats[j], x[i], s->scale, &c),
                             1);
        }
    }
    memcpy(&s->amax, &amax, sizeof amax);
}

bool fpk_stats_merge(fpk_stats *into, const fpk_stats *from)
{
    if (memcmp(&into->scale, &from->scale, sizeof into->scale) != 0 ||
        into->round != from->round || into->ftz != from->ftz ||
        into->saturate != from->saturate || into->nformats != from->nformats)
        return false;
    for (int j = 0; j < into->nformats; j++)
        if (!fpki_same_format(into->formats[j], from->formats[j]))
            return false;

    into->count += from->count;
    into->sr_index += from->count;
    into->zeros += from->zeros;
    into->nonfinite += from->nonfinite;
    uint64_t a, b;
    memcpy(&a, &into->amax, sizeof a);
    memcpy(&b, &from->amax, sizeof b);
    if (b > a)
        into->amax = from->amax;
    for (int i = 0; i < FPK_LOG2_BINS; i++)
        into->log2_hist[i] += from->log2_hist[i];
    for (int j = 0; j < into->nformats; j++) {
        into->fmt[j].underflow += from->fmt[j].underflow;
        into->fmt[j].subnormal += from->fmt[j].subnormal;
        into->fmt[j].overflow += from->fmt[j].overflow;
    }
    return true;
}
