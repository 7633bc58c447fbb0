/* Recipes' codes and scales in the byte layouts checkpoints use, and the
 * amax history of delayed scaling. */
#include <string.h>

#include "recipe-impl.h"

size_t fpk_recipe_code_bytes(const fpk_recipe *r, size_t n)
{
    return r->elem->width <= 4 ? (n + 1) / 2 : n;
}

size_t fpk_recipe_encode(const fpk_recipe *r, const uint8_t *codes, size_t n, uint8_t *out)
{
    if (r->elem->width > 4) {
        memcpy(out, codes, n);
        return n;
    }
    /* Two codes a byte, the even element in the low nibble (torchao's
     * pack_uint4, NVIDIA's e2m1x2). */
    for (size_t i = 0; i < n; i += 2)
        out[i / 2] = (uint8_t)((codes[i] & 0xf) | (i + 1 < n ? (codes[i + 1] & 0xf) << 4 : 0));
    return (n + 1) / 2;
}

void fpk_recipe_decode(const fpk_recipe *r, const uint8_t *in, size_t n, uint8_t *codes)
{
    if (r->elem->width > 4) {
        memcpy(codes, in, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        codes[i] = (uint8_t)(i % 2 ? in[i / 2] >> 4 : in[i / 2] & 0xf);
}

size_t fpk_recipe_scale_bytes(const fpk_recipe *r, size_t nblocks)
{
    return r->scale == &fpk_fp32 ? 4 * nblocks : nblocks;
}

size_t fpk_recipe_encode_scales(const fpk_recipe *r, const uint32_t *scales, size_t nblocks,
                                uint8_t *out)
{
    if (r->scale != &fpk_fp32) {
        /* Scales are positive: a signed format's sign bit is left out
         * (UE4M3, UE5M3). */
        for (size_t b = 0; b < nblocks; b++)
            out[b] = (uint8_t)scales[b];
        return nblocks;
    }
    for (size_t b = 0; b < nblocks; b++)
        for (int k = 0; k < 4; k++)
            out[4 * b + k] = (uint8_t)(scales[b] >> (8 * k));
    return 4 * nblocks;
}

void fpk_recipe_decode_scales(const fpk_recipe *r, const uint8_t *in, size_t nblocks,
                              uint32_t *scales)
{
    for (size_t b = 0; b < nblocks; b++) {
        if (r->scale != &fpk_fp32) {
            scales[b] = in[b];
            continue;
        }
        scales[b] = 0;
        for (int k = 0; k < 4; k++)
            scales[b] |= (uint32_t)in[4 * b + k] << (8 * k);
    }
}

void fpk_amax_history_init(fpk_amax_history *h, int len)
{
    memset(h, 0, sizeof *h);
    h->len = len < 1 ? 1 : len > FPK_HISTORY_MAX ? FPK_HISTORY_MAX : len;
}

void fpk_amax_history_push(fpk_amax_history *h, double amax)
{
    h->amax[h->next] = amax;
    h->next = (h->next + 1) % h->len;
    if (h->count < h->len)
        h->count++;
}

double fpk_amax_history_amax(const fpk_amax_history *h, bool max)
{
    if (!h->count)
        return 0;
    if (!max)
        return h->amax[(h->next + h->len - 1) % h->len];
    double m = 0;
    for (int i = 0; i < h->count; i++)
        m = h->amax[i] > m ? h->amax[i] : m;
    return m;
}
