/* The quantised checkpoints' conventions (quant_group.c finds them,
 * quant_decode.c computes their values, quant_check.c checks them); not
 * installed. */
#ifndef FPKIT_QUANT_IMPL_H
#define FPKIT_QUANT_IMPL_H

#include "dump-impl.h"

/* How a decoded tensor's values follow from what is stored. */
typedef enum fpki_convention {
    FPKI_CONV_ELEMENT,  /* an element type fpk_dtype lacks, one value per
                           element (F4: two a byte, low nibble first) */
    FPKI_CONV_MXFP4,    /* gpt-oss: X_blocks U8 [..., G, 16] of E2M1 pairs,
                           low nibble first; X_scales U8 [..., G], E8M0 */
    FPKI_CONV_NVFP4,    /* ModelOpt: X.weight U8 [R, C/2], E2M1 pairs low
                           nibble first; X.weight_scale F8_E4M3 [R, C/16];
                           X.weight_scale_2 F32, one: value = P * (S * S2) */
    FPKI_CONV_NVFP4_CT, /* compressed-tensors nvfp4-pack-quantized:
                           X.weight_packed as above; X.weight_scale
                           F8_E4M3 [R, C/16]; X.weight_global_scale F32,
                           one, a divisor: value = P * (S / G) */
    FPKI_CONV_MXFP4_CT, /* compressed-tensors mxfp4-pack-quantized:
                           X.weight_packed; X.weight_scale U8 E8M0 [R, C/32] */
    FPKI_CONV_FP8_BLOCK, /* DeepSeek-V3: X.weight F8_E4M3 [R, C];
                            X.weight_scale_inv F32 per BR x BC tile (128 x
                            128), a multiplier despite its name */
    FPKI_CONV_FP8_SCALED, /* ModelOpt FP8, compressed-tensors
                             float-quantized: X.weight F8 [R, C];
                             X.weight_scale a float per tensor, row or
                             tile, a multiplier */
} fpki_convention;

struct fpki_codec {
    fpki_convention conv;
    const char *convention; /* its name for people: "gpt-oss MXFP4" */
    fpk_recipe recipe;      /* element and scale formats, block shape */
    uint32_t codes, scales, global; /* stored tensors (UINT32_MAX: none) */
    uint64_t rows, cols;    /* the decoded 2-D view: rows x cols */
    uint64_t srows, scols;  /* the scales' 2-D view (maybe padded) */
    uint32_t global_bits;   /* float32 bits of the per-tensor scale */
    fpki_stype scale_stype;
    bool packed;            /* 4-bit codes, two a byte */
};

/* Values of 16 E2M1 codes in block scale SCALE (a byte of the codec's
 * scale format) through the recipe (fpk_recipe_value): TAB[0..15]. */
void fpki_codec_table16(const struct fpki_codec *c, uint32_t scale, float *tab);

/* The element values of codes P[0..N-1] of codec C (its element format,
 * decoded with fpk_convert) into OUT, without scales. */
void fpki_codec_elements(const struct fpki_codec *c, const uint8_t *p, size_t n, float *out);

#endif
