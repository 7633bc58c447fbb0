/* Checking a quantised tensor's convention (fpk_dump_check): its scales
 * (zero, NaN, saturated, padding), its codes' use of their range, the
 * order of the nibbles and the sense of the scales, measured on the
 * values the convention and its mistaken twins give.  The silent
 * failures of quantised checkpoints (fpkit-checkpoints(5)) make a model
 * that runs; these are what tells them apart. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant-impl.h"

#define NONE UINT32_MAX

/* The band of root mean squares that trained weights lie in. */
#define RMS_LOW 0x1p-20
#define RMS_HIGH 8.0

typedef struct tally {
    double within, across, swapped; /* sums of squared differences */
    uint64_t pairs;
    double sq, sq_inverted;         /* sums of squares */
    uint64_t n;
} tally;

/* The decoding scale of a block whose stored scale is STORED (a byte of
 * the scale format, or float32 bits), as a double; *NAN if it is NaN. */
static double decoding_scale(const struct fpki_codec *c, uint32_t stored, bool *nan)
{
    double s;
    switch (c->conv) {
    case FPKI_CONV_MXFP4:
    case FPKI_CONV_MXFP4_CT:
        *nan = stored == 0xff;
        return ldexp(1.0, (int)stored - 127);
    case FPKI_CONV_NVFP4:
    case FPKI_CONV_NVFP4_CT: {
        double e = fpk_to_double(&fpk_e4m3, stored), g;
        uint32_t gb = c->global_bits;
        float gf;
        memcpy(&gf, &gb, sizeof gf);
        g = gf;
        *nan = isnan(e) || isnan(g);
        s = c->conv == FPKI_CONV_NVFP4 ? e * g : e / g;
        return s;
    }
    default: {
        float f;
        memcpy(&f, &stored, sizeof f);
        *nan = isnan(f);
        return f;
    }
    }
}

/* The decoding scale of a block were the convention's scale inverted:
 * the per-tensor one where there is one (NVFP4's weight_scale_2, a
 * multiplier, and compressed-tensors' global scale, a divisor, are the
 * ones writers mistake), else the block's. */
static double inverted_scale(const struct fpki_codec *c, uint32_t stored)
{
    bool nan;
    if (c->conv != FPKI_CONV_NVFP4 && c->conv != FPKI_CONV_NVFP4_CT) {
        double s = decoding_scale(c, stored, &nan);
        return s != 0 ? 1 / s : 0;
    }
    double e = fpk_to_double(&fpk_e4m3, stored);
    float g;
    memcpy(&g, &c->global_bits, sizeof g);
    return c->conv == FPKI_CONV_NVFP4 ? e / g : e * g;
}

/* Whether STORED is the scale format's largest (or infinite). */
static bool scale_max(const struct fpki_codec *c, uint32_t stored)
{
    switch (c->conv) {
    case FPKI_CONV_MXFP4:
    case FPKI_CONV_MXFP4_CT:
        return stored == 0xfe;
    case FPKI_CONV_NVFP4:
    case FPKI_CONV_NVFP4_CT:
        return (stored & 0x7f) == 0x7e;
    default:
        return (stored & 0x7fffffff) >= 0x7f7fffff && (stored & 0x7fffffff) <= 0x7f800000;
    }
}

/* Element code P's value in the element format. */
static double code_value(const struct fpki_codec *c, uint8_t p)
{
    return fpk_to_double(c->recipe.elem, p);
}

int fpk_dump_check(fpk_dump *d, size_t i, fpk_quant_check *q, fpk_error *err)
{
    memset(q, 0, sizeof *q);
    if (i >= d->ntensors || d->sources[i].decoder < 0 ||
        d->decoders[d->sources[i].decoder].codec->conv == FPKI_CONV_ELEMENT)
        return fpki_dump_error(err, FPK_ERANGE, d, "tensor %zu is not a block-scaled tensor", i);
    const struct fpki_codec *c = d->decoders[d->sources[i].decoder].codec;
    q->convention = c->convention;
    fpk_recipe_format(&c->recipe, q->recipe, sizeof q->recipe);
    q->codes = d->stored[c->codes].name;
    q->scales = c->scales != NONE ? d->stored[c->scales].name : NULL;
    q->global = c->global != NONE ? d->stored[c->global].name : NULL;
    uint64_t bh = c->recipe.block_rows ? c->recipe.block_rows : c->rows;
    uint64_t bw = c->recipe.block_cols ? c->recipe.block_cols : c->cols;
    uint64_t brows = (c->rows + bh - 1) / bh, bcols = (c->cols + bw - 1) / bw;
    q->blocks = brows * bcols;
    q->scale_entries = c->srows * c->scols;
    const fpki_stored *ss = &d->stored[c->scales];
    size_t ssize = fpki_stype_of(ss->stype)->bits / 8;
    /* every scale, padding included */
    uint8_t *sraw = malloc((size_t)q->scale_entries * ssize + 1);
    uint64_t rowbytes = c->packed ? c->cols / 2 : c->cols;
    uint8_t *codes = malloc((size_t)rowbytes + 1);
    uint8_t *un = malloc((size_t)c->cols + 1);
    double *top = calloc((size_t)bcols + 1, sizeof *top);
    int rc = sraw && codes && un && top ? FPK_OK
                                        : fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    if (rc == FPK_OK)
        rc = fpki_read_stored(d, ss, 0, (size_t)q->scale_entries, sraw, err);
    uint32_t *sc = rc == FPK_OK ? malloc((size_t)q->scale_entries * sizeof *sc + 4) : NULL;
    if (rc == FPK_OK && !sc)
        rc = fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    for (uint64_t k = 0; rc == FPK_OK && k < q->scale_entries; k++) {
        fpk_bits x = 0;
        for (size_t b = ssize; b-- > 0;)
            x = x << 8 | sraw[k * ssize + b];
        fpk_ctx ctx = fpk_ctx_default();
        sc[k] = ssize == 1 ? (uint32_t)x
                           : (uint32_t)fpk_convert(&fpk_fp32, fpki_stype_of(ss->stype)->format,
                                                   x, &ctx);
        bool pad = k / c->scols >= brows || k % c->scols >= bcols;
        q->padding_nonzero += pad && x != 0;
        if (pad)
            continue;
        bool nan;
        double s = decoding_scale(c, sc[k], &nan);
        q->scale_nan += nan;
        q->scale_zero += !nan && s == 0;
        q->scale_max += scale_max(c, sc[k]);
    }
    double toplim = ldexp(1.0, c->recipe.elem->emax);
    double *row = rc == FPK_OK ? malloc((size_t)c->cols * sizeof *row + 8) : NULL;
    if (rc == FPK_OK && !row)
        rc = fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    tally t = {0};
    const fpki_stored *cs = &d->stored[c->codes];
    for (uint64_t r = 0; rc == FPK_OK && r < c->rows; r++) {
        rc = fpki_read_stored(d, cs, r * rowbytes, (size_t)rowbytes, codes, err);
        if (rc != FPK_OK)
            break;
        if (c->packed)
            for (uint64_t j = 0; j < c->cols; j++)
                un[j] = (uint8_t)(j % 2 ? codes[j / 2] >> 4 : codes[j / 2] & 0xf);
        else
            memcpy(un, codes, (size_t)c->cols);
        if (r % bh == 0)
            memset(top, 0, (size_t)bcols * sizeof *top);
        for (uint64_t j = 0; j < c->cols; j++) {
            bool nan;
            double s = decoding_scale(c, sc[(r / bh) * c->scols + j / bw], &nan);
            double p = code_value(c, un[j]);
            row[j] = p * s;
            if (fabs(p) > top[j / bw])
                top[j / bw] = fabs(p);
            double alt = p * inverted_scale(c, sc[(r / bh) * c->scols + j / bw]);
            if (!nan && isfinite(row[j]) && isfinite(alt)) {
                t.sq += row[j] * row[j];
                t.sq_inverted += alt * alt;
                t.n++;
            }
        }
        /* neighbours: within a byte (2m, 2m+1); across bytes as decoded
         * (2m+1, 2m+2), and were the nibbles the other way (2m, 2m+3) */
        for (uint64_t m = 0; c->packed && 2 * m + 3 < c->cols; m++) {
            double w = row[2 * m + 1] - row[2 * m], a = row[2 * m + 2] - row[2 * m + 1];
            double o = row[2 * m + 3] - row[2 * m];
            if (isfinite(w) && isfinite(a) && isfinite(o)) {
                t.within += w * w;
                t.across += a * a;
                t.swapped += o * o;
                t.pairs++;
            }
        }
        if ((r + 1) % bh == 0 || r + 1 == c->rows)
            for (uint64_t b = 0; b < bcols; b++) {
                q->blocks_nonzero += top[b] > 0;
                q->blocks_top += top[b] >= toplim;
            }
    }
    free(row);
    free(sraw);
    free(sc);
    free(codes);
    free(un);
    free(top);
    if (rc != FPK_OK)
        return rc;
    if (t.n) {
        q->rms = sqrt(t.sq / (double)t.n);
        q->rms_inverted = sqrt(t.sq_inverted / (double)t.n);
        bool here = q->rms >= RMS_LOW && q->rms <= RMS_HIGH;
        bool there = q->rms_inverted >= RMS_LOW && q->rms_inverted <= RMS_HIGH;
        q->scales_order = here && !there   ? FPK_VERDICT_OK
                          : there && !here ? FPK_VERDICT_WRONG
                                           : FPK_VERDICT_UNDECIDED;
    }
    if (t.pairs) {
        q->pairs = t.pairs;
        q->diff_within = t.within / (double)t.pairs;
        q->diff_across = t.across / (double)t.pairs;
        q->diff_swapped = t.swapped / (double)t.pairs;
        /* the order whose neighbours across bytes differ as those within
         * do, by a clear margin over the other's */
        double w = q->diff_within > 0 ? q->diff_within : 1e-300;
        double a = fabs(log((q->diff_across + 1e-300) / w));
        double s = fabs(log((q->diff_swapped + 1e-300) / w));
        double margin = 0.25 + 8 / sqrt((double)t.pairs);
        q->nibbles = s - a > margin   ? FPK_VERDICT_OK
                     : a - s > margin ? FPK_VERDICT_WRONG
                                      : FPK_VERDICT_UNDECIDED;
    }
    return FPK_OK;
}
