/* The values of decoded tensors (quant-impl.h): codes and block scales
 * read for the elements asked for, each value computed as the recipe
 * computes it (fpk_recipe_value): by a table of the 16 values of a block
 * scale for 4-bit codes, and for FP8 codes under a float32 multiplier as
 * the exact product in double rounded once to float32 (an FP8 value has 4
 * significant bits, a float32 24: the product is exact in double, so its
 * rounding to float32 is the one the recipe makes), in the default
 * floating-point environment. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "quant-impl.h"

#define NONE UINT32_MAX

void fpki_codec_elements(const struct fpki_codec *c, const uint8_t *p, size_t n, float *out)
{
    fpk_ctx x = fpk_ctx_default();
    for (size_t j = 0; j < n; j++) {
        uint32_t b = (uint32_t)fpk_convert(&fpk_fp32, c->recipe.elem, p[j], &x);
        memcpy(&out[j], &b, sizeof b);
    }
}

void fpki_codec_table16(const struct fpki_codec *c, uint32_t scale, float *tab)
{
    for (uint8_t p = 0; p < 16; p++)
        tab[p] = fpk_recipe_value(&c->recipe, p, scale, c->global_bits);
}

/* The block scale of the codec in the bytes at B (its stored type), as
 * the recipe's scale format holds it: an E8M0 or E4M3 byte, or float32
 * bits. */
static uint32_t scale_at(const struct fpki_codec *c, const uint8_t *b, bool big)
{
    size_t size = fpki_stype_of(c->scale_stype)->bits / 8;
    fpk_bits x = 0;
    for (size_t i = size; i-- > 0;)
        x = x << 8 | b[big ? size - 1 - i : i];
    if (size == 1)
        return (uint32_t)x;
    fpk_ctx ctx = fpk_ctx_default();
    return (uint32_t)fpk_convert(&fpk_fp32, fpki_stype_of(c->scale_stype)->format, x, &ctx);
}

/* Elements FIRST .. FIRST+N-1 of an element-wise decoded tensor. */
static int decode_elements(fpk_dump *d, const struct fpki_codec *c, uint64_t first, size_t n,
                           float *out, fpk_error *err)
{
    const fpki_stored *s = &d->stored[c->codes];
    const fpk_format *f = fpki_stype_of(s->stype)->format;
    float tab[256];
    fpk_ctx x = fpk_ctx_default();
    for (uint32_t b = 0; b < (c->packed ? 16u : 256u); b++) {
        uint32_t v = (uint32_t)fpk_convert(&fpk_fp32, f, b, &x);
        memcpy(&tab[b], &v, sizeof v);
    }
    uint8_t buf[4096];
    while (n > 0) {
        size_t m = n < 4096 ? n : 4096;
        if (c->packed) {
            /* bytes from element FIRST's on, FIRST rounded down to even */
            uint64_t from = first / 2 * 2;
            size_t k = (size_t)(first - from) + m;
            if (k > 4096 * 2 - 2)
                k = 4096 * 2 - 2, m = k - (size_t)(first - from);
            int rc = s->stype == FPKI_ST_F4
                         ? fpki_read_stored(d, s, from, k, buf, err)
                         : fpki_read_stored(d, s, from / 2, (k + 1) / 2, buf, err);
            if (rc != FPK_OK)
                return rc;
            for (size_t j = 0; j < m; j++) {
                uint64_t e = first - from + j;
                out[j] = tab[e % 2 ? buf[e / 2] >> 4 : buf[e / 2] & 0xf];
            }
        } else {
            int rc = fpki_read_stored(d, s, first, m, buf, err);
            if (rc != FPK_OK)
                return rc;
            for (size_t j = 0; j < m; j++)
                out[j] = tab[buf[j]];
        }
        out += m;
        n -= m;
        first += m;
    }
    return FPK_OK;
}

/* The decoding scales of the codec's blocks in scale rows BR0 .. BR1 as
 * float32 bits or scale bytes into SCALES (row-major, c->scols a row). */
static int read_scales(fpk_dump *d, const struct fpki_codec *c, uint64_t br0, uint64_t br1,
                       uint32_t *scales, fpk_error *err)
{
    const fpki_stored *s = &d->stored[c->scales];
    size_t size = fpki_stype_of(s->stype)->bits / 8;
    uint64_t count = (br1 - br0 + 1) * c->scols;
    uint8_t *raw = malloc((size_t)count * size);
    if (!raw)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    int rc = fpki_read_stored(d, s, br0 * c->scols, (size_t)count, raw, err);
    for (uint64_t j = 0; rc == FPK_OK && j < count; j++)
        scales[j] = scale_at(c, raw + j * size, false);
    free(raw);
    return rc;
}

/* The float32 value of an FP8 code times a float32 scale: see the file's
 * comment. */
static float fp8_times(const float *values, uint8_t code, uint32_t scale)
{
    float s;
    memcpy(&s, &scale, sizeof s);
    return (float)((double)values[code] * (double)s);
}

/* Elements FIRST .. FIRST+N-1 of a block-scaled tensor. */
static int decode_blocks(fpk_dump *d, const struct fpki_codec *c, uint64_t first, size_t n,
                         float *out, fpk_error *err)
{
    const fpki_stored *cs = &d->stored[c->codes];
    uint64_t bh = c->recipe.block_rows ? c->recipe.block_rows : c->rows;
    uint64_t bw = c->recipe.block_cols ? c->recipe.block_cols : c->cols;
    uint64_t r0 = first / c->cols, r1 = (first + n - 1) / c->cols;
    uint64_t br0 = r0 / bh, br1 = r1 / bh;
    /* the codes: their bytes, whole */
    uint64_t from = c->packed ? first / 2 : first;
    uint64_t to = c->packed ? (first + n + 1) / 2 : first + n;
    uint8_t *codes = malloc((size_t)(to - from));
    uint32_t *scales = malloc((size_t)((br1 - br0 + 1) * c->scols) * sizeof *scales);
    int rc = codes && scales ? FPK_OK : fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    if (rc == FPK_OK)
        rc = fpki_read_stored(d, cs, from, (size_t)(to - from), codes, err);
    if (rc == FPK_OK)
        rc = read_scales(d, c, br0, br1, scales, err);
    if (rc != FPK_OK) {
        free(codes);
        free(scales);
        return rc;
    }
    fpki_fpenv env;
    fpki_fp_default(&env);
    if (c->packed) {
        /* a table of 16 values per distinct block scale, made as met */
        float tab[16];
        uint32_t tab_scale = 0;
        bool have = false;
        for (size_t j = 0; j < n; j++) {
            uint64_t e = first + j, r = e / c->cols, col = e % c->cols;
            uint32_t sc = scales[(r / bh - br0) * c->scols + col / bw];
            if (!have || sc != tab_scale) {
                uint32_t stored = sc;
                if (c->conv == FPKI_CONV_NVFP4_CT) {
                    /* S / G, the decoding scale, as compressed-tensors
                     * computes it in float32 */
                    fpk_ctx x = fpk_ctx_default();
                    uint32_t s32 = (uint32_t)fpk_convert(&fpk_fp32, &fpk_e4m3, sc, &x);
                    stored = (uint32_t)fpk_div(&fpk_fp32, s32, c->global_bits, &x);
                }
                fpki_codec_table16(c, stored, tab);
                tab_scale = sc;
                have = true;
            }
            uint64_t b = e - from * 2;
            out[j] = tab[b % 2 ? codes[b / 2] >> 4 : codes[b / 2] & 0xf];
        }
    } else {
        float values[256];
        uint8_t all[256];
        for (int b = 0; b < 256; b++)
            all[b] = (uint8_t)b;
        fpki_codec_elements(c, all, 256, values);
        for (size_t j = 0; j < n; j++) {
            uint64_t e = first + j, r = e / c->cols, col = e % c->cols;
            uint32_t sc = scales[(r / bh - br0) * c->scols + col / bw];
            out[j] = fp8_times(values, codes[j], sc);
        }
    }
    fpki_fp_restore(&env);
    free(codes);
    free(scales);
    return FPK_OK;
}

int fpki_decode(fpk_dump *d, size_t i, uint64_t first, size_t n, float *out, fpk_error *err)
{
    const struct fpki_codec *c = d->decoders[d->sources[i].decoder].codec;
    if (n == 0)
        return FPK_OK;
    if (c->conv == FPKI_CONV_ELEMENT)
        return decode_elements(d, c, first, n, out, err);
    /* in pieces, so that the codes and scales read stay small */
    while (n > 0) {
        size_t m = n < 65536 ? n : 65536;
        int rc = decode_blocks(d, c, first, m, out, err);
        if (rc != FPK_OK)
            return rc;
        out += m;
        n -= m;
        first += m;
    }
    return FPK_OK;
}

void fpki_decoders_free(fpk_dump *d)
{
    free(d->decoders); /* their codecs live in the dump's arena */
}
