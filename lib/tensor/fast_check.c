/* Sample checks of the fast paths (fast-check.h): the general path's
 * results for a few elements or blocks of a call, taken before the
 * kernels run, then compared with theirs.  Edges are where a piece, a
 * block or a tail goes wrong first, so a sample always holds a range's
 * first and last elements; the rest are spread evenly over it. */
#include <string.h>

#include "fast-check.h"

void fpki_sample_of(fpki_sample *s, size_t n, size_t max)
{
    s->all = n <= max;
    if (s->all) {
        s->n = n;
        for (size_t i = 0; i < n; i++)
            s->at[i] = i;
        return;
    }
    const size_t edge = max < 8 ? 1 : max / 4 < 4 ? max / 4 : 4;
    const size_t inner = max - 2 * edge, span = n - 2 * edge;
    s->n = 0;
    for (size_t i = 0; i < edge; i++)
        s->at[s->n++] = i;
    /* the middle of each of INNER equal parts of the span between the
     * edges (SPAN > INNER: increasing, distinct) */
    for (size_t i = 0; i < inner; i++)
        s->at[s->n++] = edge + (size_t)((unsigned __int128)(2 * i + 1) * span / (2 * inner));
    for (size_t i = 0; i < edge; i++)
        s->at[s->n++] = n - edge + i;
}

void fpki_convert_expect(fpki_convert_check *k, const fpk_format *f, bool quant, fpk_dtype from,
                         const void *x, size_t first, size_t n, const fpk_ctx *c)
{
    fpki_sample_of(&k->s, n, FPKI_SAMPLE_MAX);
    k->first = first;
    k->flags = 0;
    for (size_t j = 0; j < k->s.n; j++) {
        size_t i = first + k->s.at[j];
        unsigned fl;
        k->z[j] = fpki_convert_one(f, quant, from, fpki_load(from, x, i), c->sr_counter + i, c,
                                   &fl);
        k->flags |= fl;
    }
}

bool fpki_convert_agrees(const fpki_convert_check *k, const void *z, size_t size, unsigned flags)
{
    for (size_t j = 0; j < k->s.n; j++)
        if (fpki_load_sized(size, z, k->first + k->s.at[j]) != k->z[j])
            return false;
    return k->s.all ? flags == k->flags : (flags & k->flags) == k->flags;
}

void fpki_recipe_expect(fpki_recipe_check *k, const fpk_recipe_plan *t, const float *in,
                        size_t row0, size_t nrows)
{
    const fpk_recipe *r = &t->recipe;
    k->nblocks = k->n = 0;
    k->flags = 0;
    k->all = true;
    if (!t->rows || !t->cols || !nrows)
        return;
    const fpki_recipe_band b = fpki_recipe_band_of(t, row0, nrows);
    const size_t bi0 = row0 / b.bh, nbi = (b.end - 1) / b.bh + 1 - bi0;
    fpki_sample blocks;
    fpki_sample_of(&blocks, nbi * b.bcols, FPKI_RECIPE_SAMPLE_BLOCKS);
    k->all = blocks.all;
    for (size_t m = 0; m < blocks.n; m++) {
        size_t bi = bi0 + blocks.at[m] / b.bcols, bj = blocks.at[m] % b.bcols;
        const fpki_recipe_block kb = fpki_recipe_block_at(&b, bi, bj);
        uint32_t bmax, bmin;
        const fpki_block_plan p = fpki_recipe_general_plan(t, &b, &kb, in, &bmax, &bmin);
        k->block[k->nblocks].at = kb.first ? bi * b.bcols + bj : SIZE_MAX;
        k->block[k->nblocks++].scale = p.scale;
        const size_t w = kb.c1 - kb.c0;
        fpki_sample elems;
        fpki_sample_of(&elems, (kb.r1 - kb.r0) * w, FPKI_RECIPE_SAMPLE_ELEMENTS);
        k->all = k->all && elems.all;
        for (size_t e = 0; e < elems.n; e++) {
            size_t i = kb.r0 + elems.at[e] / w, j = kb.c0 + elems.at[e] % w;
            unsigned fl;
            k->elem[k->n].at = i * b.cols + j;
            k->elem[k->n].code = fpki_recipe_general_element(
                r, &p, fpki_f32_bits(in[(i - row0) * b.cols + j]), i * b.cols + j, &k->elem[k->n].y,
                &fl);
            k->flags |= fl;
            k->n++;
        }
    }
}

bool fpki_recipe_agrees(const fpki_recipe_check *k, const fpk_quantized *q)
{
    for (size_t m = 0; m < k->nblocks; m++)
        if (q->scales && k->block[m].at != SIZE_MAX &&
            q->scales[k->block[m].at] != k->block[m].scale)
            return false;
    for (size_t e = 0; e < k->n; e++) {
        size_t at = k->elem[e].at;
        if (q->codes && q->codes[at] != k->elem[e].code)
            return false;
        if (q->y && fpki_f32_bits(q->y[at]) != k->elem[e].y)
            return false;
    }
    return k->all ? q->flags == k->flags : (q->flags & k->flags) == k->flags;
}

bool fpki_rht_agrees(const float *x, size_t len, uint16_t signs, const float *z, size_t max)
{
    fpki_sample runs;
    fpki_sample_of(&runs, len / 16, max);
    for (size_t m = 0; m < runs.n; m++) {
        float want[16];
        fpk_rht16(x + 16 * runs.at[m], signs, &fpk_bf16, want);
        if (memcmp(want, z + 16 * runs.at[m], sizeof want) != 0)
            return false;
    }
    return true;
}
