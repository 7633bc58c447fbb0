/* The device statistics' plan and its counters, on the host (stats_plan.h):
 * the thresholds are the host statistics' own (fpki_stats_thresholds,
 * lib/tensor/stats_thresholds.c), in the element type's encodings. */
#include <stdio.h>
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

    memset(p, 0, sizeof *p);
    p->width = (int)fpk_dtype_size(dtype);
    p->man_bits = d->man_bits;
    p->bias = d->bias;
    p->sign_mask = d->sign_mask;
    p->nonfinite_min = d->max_finite + 1;
    p->hist_lo = d->emin - d->man_bits;
    p->nbins = d->emax - p->hist_lo + 1;
    p->nformats = s->nformats;
    p->sr = s->round == FPK_SR;
    p->base = s->sr_index;
    uint64_t e = sbits >> 52;
    p->scale_sig = (sbits & (((uint64_t)1 << 52) - 1)) | (e ? (uint64_t)1 << 52 : 0);
    p->scale_exp = (int)(e ? e : 1) - 1075;
    for (int j = 0; j < s->nformats; j++) {
        const fpk_format *f = s->formats[j];
        p->fmt_man_bits[j] = f->man_bits;
        /* E8M0's grid has no subnormals: its draw is never below normal
         * (fpki_round_e8m0 in lib/core/round.c). */
        p->fmt_emin[j] = f->special == FPK_SPECIAL_E8M0 ? INT32_MIN : f->emin;
        for (int k = 0; k < (p->sr ? 4 : 2); k++) {
            /* The mode's steps on +x and on -x; under SR those of RTZ and
             * of rounding away from zero (RUP on +x, RDN on -x) on each. */
            bool neg = p->sr ? k >= 2 : k == 1;
            fpk_round mode = !p->sr ? s->round : k % 2 == 0 ? FPK_RTZ : neg ? FPK_RDN : FPK_RUP;
            fpki_stats_thresholds(s, f, mode, neg, d, p->t[j][k]);
        }
    }
    return FPK_OK;
}

size_t fpki_ds_ncounters(const fpki_ds_plan *p)
{
    return FPKI_DS_HIST + (size_t)p->nbins;
}

void fpki_ds_finish(fpk_stats *s, const fpki_ds_plan *p, fpk_dtype dtype, const uint64_t *k,
                    uint64_t n)
{
    s->count += n;
    s->sr_index += n;
    s->zeros += k[FPKI_DS_ZEROS];
    s->nonfinite += k[FPKI_DS_NONFINITE];
    if (k[FPKI_DS_AMAX]) {
        uint64_t a = f64_bits(fpk_dtype_format(dtype), k[FPKI_DS_AMAX]), b;
        memcpy(&b, &s->amax, sizeof b);
        if (a > b)
            memcpy(&s->amax, &a, sizeof a);
    }
    for (int b = 0; b < p->nbins; b++)
        s->log2_hist[p->hist_lo + b - FPK_LOG2_MIN] += k[FPKI_DS_HIST + b];
    for (int j = 0; j < p->nformats; j++) {
        s->fmt[j].underflow += k[FPKI_DS_FMT + 3 * j];
        s->fmt[j].subnormal += k[FPKI_DS_FMT + 3 * j + 1];
        s->fmt[j].overflow += k[FPKI_DS_FMT + 3 * j + 2];
    }
}
