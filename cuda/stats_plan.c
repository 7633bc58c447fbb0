/* The device statistics' plan and its counters, on the host (stats_plan.h):
 * the keys are the host statistics' own thresholds (fpki_stats_thresholds,
 * lib/tensor/stats_thresholds.c), in the element type's encodings; the
 * bands they cut, with the element type's binades, are numbered as
 * fpki_ds_band numbers them. */
#include <stddef.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats-thresholds.h"
#include "stats_plan.h"

#define F64_INF ((uint64_t)0x7ff << 52)

/* The fp64 magnitude bits of the element magnitude MAG of format D. */
static uint64_t f64_bits(const fpk_format *d, uint64_t mag)
{
    double x = fpk_to_double(d, mag);
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static int fail(fpk_error *err, const char *msg)
{
    if (err) {
        err->code = FPK_EFORMAT;
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return FPK_EFORMAT;
}

/* The class (fpki_stats_class) of magnitude A under thresholds T. */
static int class_of(const uint64_t *t, uint64_t a)
{
    return (a >= t[0]) + (a >= t[1]) + (a >= t[2]);
}

/* The threshold sets (P->t's second index) of side S: the mode's, or under
 * SR RTZ's and rounding away's. */
static int first_set(const fpki_ds_plan *p, int s)
{
    return p->k.sr ? 2 * s : s;
}

static int compare_keys(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* KEY[0..] := side S's keys: every threshold of its sets and the least
 * nonfinite magnitude, increasing, each once, less those that start a
 * coarse range (every magnitude of the range is at or above them).
 * Returns their count. */
static int side_keys(const fpki_ds_plan *p, int s, uint64_t *key)
{
    int n = 0, sets = p->k.sr ? 2 : 1;
    for (int j = 0; j < p->k.nformats; j++)
        for (int m = first_set(p, s); m < first_set(p, s) + sets; m++)
            for (int i = 0; i < 3; i++)
                key[n++] = p->t[j][m][i];
    key[n++] = p->k.nonfinite_min;
    qsort(key, (size_t)n, sizeof *key, compare_keys);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        uint64_t a = key[i];
        if ((kept && key[kept - 1] == a) ||
            a == fpki_ds_range_start(&p->k, fpki_ds_coarse(&p->k, 8, a)))
            continue;
        key[kept++] = a;
    }
    return kept;
}

/* The least magnitude of band I of coarse range C on side S (I from 0 to
 * the keys in the range). */
static uint64_t band_start(const fpki_ds_plan *p, const fpki_ds_tables *t, int s, int c, int i)
{
    if (i == 0)
        return fpki_ds_range_start(&p->k, c);
    int first = (int)(t->range[s * p->k.ncoarse + c] >> 16);
    return fpki_ds_key(&p->k, t, p->k.width, s, first + i - 1);
}

/* The image's tables: the keys and coarse ranges of each side, and under
 * SR each band's transitions.  Returns false if a format would have more
 * transitions than a band's bits can name. */
static bool make_tables(fpki_ds_plan *p)
{
    fpki_ds_params *k = &p->k;
    uint64_t key[2][FPKI_DS_MAX_KEYS];
    int nkey[2] = {0, 0};
    k->nkeys = 0;
    for (int s = 0; s < k->nsides; s++) {
        nkey[s] = side_keys(p, s, key[s]);
        k->nkeys = nkey[s] > k->nkeys ? nkey[s] : k->nkeys;
    }
    k->nbands = k->ncoarse + k->nkeys;
    size_t sr_bytes = k->sr ? (size_t)k->nsides * (size_t)k->nbands * 4 : 0;
    size_t range_bytes = (size_t)k->nsides * (size_t)k->ncoarse * 4;
    size_t key_bytes = (size_t)k->nsides * (size_t)k->nkeys * (k->width <= 4 ? 4 : 8);
    k->sr_off = 0;
    k->range_off = (unsigned)((sr_bytes + 15) & ~(size_t)15);
    k->key_off = k->range_off + (unsigned)((range_bytes + 15) & ~(size_t)15);
    k->table_bytes = k->key_off + (unsigned)((key_bytes + 15) & ~(size_t)15);
    memset(p->image, 0, k->table_bytes);
    unsigned char *img = (unsigned char *)p->image;
    uint32_t *range = (uint32_t *)(img + k->range_off);
    for (int s = 0; s < k->nsides; s++) {
        int below = 0;
        for (int c = 0, i = 0; c < k->ncoarse; c++) {
            int in = 0;
            while (i < nkey[s] && fpki_ds_coarse(k, 8, key[s][i]) == c) {
                in++;
                i++;
            }
            range[s * k->ncoarse + c] = (uint32_t)below << 16 | (uint32_t)in;
            below += in;
        }
        for (int i = 0; i < nkey[s]; i++) {
            int at = s * k->nkeys + i;
            if (k->width <= 4)
                ((uint32_t *)(img + k->key_off))[at] = (uint32_t)key[s][i];
            else
                ((uint64_t *)(img + k->key_off))[at] = key[s][i];
        }
    }
    if (!k->sr)
        return true;

    fpki_ds_tables t = fpki_ds_tables_at(k, img);
    uint32_t *sr = (uint32_t *)(img + k->sr_off);
    for (int s = 0; s < k->nsides; s++)
        for (int c = 1; c < k->ncoarse; c++) {
            uint32_t r = t.range[s * k->ncoarse + c];
            for (int i = 0; i <= (int)(r & 0xffff); i++) {
                uint64_t a = band_start(p, &t, s, c, i);
                if (a >= k->nonfinite_min)
                    continue;
                uint32_t bits = 0;
                for (int j = 0; j < k->nformats; j++) {
                    int lo = class_of(p->t[j][2 * s], a), hi = class_of(p->t[j][2 * s + 1], a);
                    if (lo == hi)
                        continue;
                    int m = 0;
                    while (m < p->nmoves[j] && (p->moves[j][m][0] != lo || p->moves[j][m][1] != hi))
                        m++;
                    if (m == FPKI_DS_MAX_MOVES)
                        return false;
                    if (m == p->nmoves[j]) {
                        p->moves[j][m][0] = (unsigned char)lo;
                        p->moves[j][m][1] = (unsigned char)hi;
                        p->nmoves[j]++;
                    }
                    bits |= (uint32_t)(m + 1) << 2 * j;
                }
                sr[s * k->nbands + c + (int)(r >> 16) + i] = bits;
            }
        }
    return true;
}

int fpki_ds_plan_init(fpki_ds_plan *p, const fpk_stats *s, fpk_dtype dtype, fpk_error *err)
{
    const fpk_format *d = fpk_dtype_format(dtype);
    uint64_t sbits;
    memcpy(&sbits, &s->scale, sizeof sbits);
    if (!d)
        return fail(err, "device statistics: unknown element type");
    if (s->nformats < 0 || s->nformats > FPK_STATS_MAX_FORMATS)
        return fail(err, "device statistics: the format count is not 0 to 16");
    if (sbits == 0 || sbits >= F64_INF)
        return fail(err, "device statistics: the scale is not finite and positive");
    if ((unsigned)s->round >= FPK_ROUND_COUNT)
        return fail(err, "device statistics: unknown rounding mode");
    for (int j = 0; j < s->nformats; j++)
        if (!s->formats[j])
            return fail(err, "device statistics: a format is missing");

    memset(p, 0, offsetof(fpki_ds_plan, image));
    fpki_ds_params *k = &p->k;
    k->width = (int)fpk_dtype_size(dtype);
    k->man_bits = d->man_bits;
    k->bias = d->bias;
    k->sign_mask = d->sign_mask;
    k->nonfinite_min = d->max_finite + 1;
    k->ncoarse = (int)(d->exp_mask >> d->man_bits) + d->man_bits + 1;
    k->nformats = s->nformats;
    k->sr = s->round == FPK_SR;
    k->base = s->sr_index;
    p->hist_lo = d->emin - d->man_bits;
    uint64_t e = sbits >> 52;
    k->scale_sig = (sbits & (((uint64_t)1 << 52) - 1)) | (e ? (uint64_t)1 << 52 : 0);
    k->scale_exp = (int)(e ? e : 1) - 1075;
    int sets = k->sr ? 4 : 2;
    bool same = true; /* both signs have the same thresholds */
    for (int j = 0; j < s->nformats; j++) {
        const fpk_format *f = s->formats[j];
        k->fmt_man_bits[j] = f->man_bits;
        /* E8M0's grid has no subnormals: its draw is never below normal
         * (fpki_round_e8m0 in lib/core/round.c). */
        k->fmt_emin[j] = f->special == FPK_SPECIAL_E8M0 ? INT32_MIN : f->emin;
        for (int m = 0; m < sets; m++) {
            /* The mode's steps on +x and on -x; under SR those of RTZ and
             * of rounding away from zero (RUP on +x, RDN on -x) on each. */
            bool neg = k->sr ? m >= 2 : m == 1;
            fpk_round mode = !k->sr ? s->round : m % 2 == 0 ? FPK_RTZ : neg ? FPK_RDN : FPK_RUP;
            fpki_stats_thresholds(s, f, mode, neg, d, p->t[j][m]);
        }
        same &= memcmp(p->t[j][0], p->t[j][sets / 2], sizeof p->t[j][0] * (size_t)(sets / 2)) == 0;
    }
    k->nsides = same ? 1 : 2;
    if (k->ncoarse > FPKI_DS_MAX_COARSE)
        return fail(err, "device statistics: the element type has too many binades");
    if (!make_tables(p))
        return fail(err, "device statistics: a format has more than three SR transitions");
    return FPK_OK;
}

size_t fpki_ds_ncounters(const fpki_ds_plan *p)
{
    return FPKI_DS_BANDS + (size_t)p->k.nsides * (size_t)p->k.nbands;
}

/* Adds DELTA elements of class CLS to K. */
static void count(fpk_format_counts *k, int cls, int64_t delta)
{
    uint64_t *field = cls == FPKI_STATS_ZERO        ? &k->underflow
                      : cls == FPKI_STATS_SUBNORMAL ? &k->subnormal
                      : cls == FPKI_STATS_OVERFLOW  ? &k->overflow
                                                    : NULL;
    if (field)
        *field += (uint64_t)delta;
}

void fpki_ds_finish(fpk_stats *s, const fpki_ds_plan *p, fpk_dtype dtype, const uint64_t *k,
                    uint64_t n)
{
    const fpki_ds_params *q = &p->k;
    s->count += n;
    s->sr_index += n;
    if (k[FPKI_DS_AMAX]) {
        uint64_t a = f64_bits(fpk_dtype_format(dtype), k[FPKI_DS_AMAX]), b;
        memcpy(&b, &s->amax, sizeof b);
        if (a > b)
            memcpy(&s->amax, &a, sizeof a);
    }
    fpki_ds_tables t = fpki_ds_tables_at(q, p->image);
    for (int side = 0; side < q->nsides; side++)
        for (int c = 0; c < q->ncoarse; c++) {
            uint32_t r = t.range[side * q->ncoarse + c];
            for (int i = 0; i <= (int)(r & 0xffff); i++) {
                uint64_t m = k[FPKI_DS_BANDS + side * q->nbands + c + (int)(r >> 16) + i];
                uint64_t a = band_start(p, &t, side, c, i);
                if (m == 0)
                    continue;
                if (a == 0) {
                    s->zeros += m;
                } else if (a >= q->nonfinite_min) {
                    s->nonfinite += m;
                } else {
                    s->log2_hist[p->hist_lo + c - 1 - FPK_LOG2_MIN] += m;
                    for (int j = 0; j < q->nformats; j++)
                        count(&s->fmt[j], class_of(p->t[j][first_set(p, side)], a), (int64_t)m);
                }
            }
        }
    for (int j = 0; j < q->nformats; j++)
        for (int m = 0; m < p->nmoves[j]; m++) {
            int64_t moved = (int64_t)k[FPKI_DS_MOVED + FPKI_DS_MAX_MOVES * j + m];
            count(&s->fmt[j], p->moves[j][m][0], -moved);
            count(&s->fmt[j], p->moves[j][m][1], moved);
        }
}
