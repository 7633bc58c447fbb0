/* Finding quantised tensors among a checkpoint's stored ones: each
 * convention (quant-impl.h) by its tensors' names, dtypes and shapes; the
 * parts of one become a decoded tensor named for the whole. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant-impl.h"

#define NONE UINT32_MAX

/* Stored tensors by name: open addressing over d->stored. */
typedef struct names {
    uint32_t *slot; /* index + 1; 0: empty */
    size_t cap;
} names;

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

/* The stored tensor called BASE[0..BLEN-1] followed by SUFFIX, or NONE. */
static uint32_t lookup(const names *m, const fpk_dump *d, const char *base, size_t blen,
                       const char *suffix)
{
    size_t slen = strlen(suffix);
    uint64_t h = hash(base, blen); /* continued over the suffix */
    for (size_t i = 0; i < slen; i++)
        h = (h ^ (unsigned char)suffix[i]) * 1099511628211u;
    for (size_t j = h & (m->cap - 1); m->slot[j]; j = (j + 1) & (m->cap - 1)) {
        const char *n = d->stored[m->slot[j] - 1].name;
        if (strncmp(n, base, blen) == 0 && strcmp(n + blen, suffix) == 0)
            return m->slot[j] - 1;
    }
    return NONE;
}

static int make_names(fpk_dump *d, names *m, fpk_error *err)
{
    m->cap = 16;
    while (m->cap < 2 * d->nstored + 2)
        m->cap *= 2;
    m->slot = calloc(m->cap, sizeof *m->slot);
    if (!m->slot)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    for (size_t i = 0; i < d->nstored; i++) {
        const char *n = d->stored[i].name;
        size_t j = hash(n, strlen(n)) & (m->cap - 1);
        while (m->slot[j])
            j = (j + 1) & (m->cap - 1);
        m->slot[j] = (uint32_t)i + 1;
    }
    return FPK_OK;
}

/* The product of all but the last dimension of S, and the last. */
static void view2d(const fpki_stored *s, uint64_t *rows, uint64_t *cols)
{
    *rows = 1;
    for (int k = 0; k + 1 < s->ndim; k++)
        *rows *= s->shape[k];
    *cols = s->ndim ? s->shape[s->ndim - 1] : 1;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

static bool plain(const fpki_stored *s)
{
    return !s->strides && !s->used && s->decoder < 0;
}

/* The single float of a per-tensor scale S, as float32 bits. */
static int read_scalar(fpk_dump *d, const fpki_stored *s, uint32_t *bits, fpk_error *err)
{
    unsigned char b[8];
    size_t size = fpki_stype_of(s->stype)->bits / 8;
    int rc = fpki_read_stored(d, s, 0, 1, b, err);
    if (rc != FPK_OK)
        return rc;
    fpk_bits x = 0;
    for (size_t i = size; i-- > 0;)
        x = x << 8 | b[s->big_endian ? size - 1 - i : i];
    fpk_ctx c = fpk_ctx_default();
    *bits = (uint32_t)fpk_convert(&fpk_fp32, fpki_stype_of(s->stype)->format, x, &c);
    return FPK_OK;
}

/* A new decoder for codec C named NAME (BLEN bytes), of shape SHAPE;
 * marks its parts. */
static int add_decoder(fpk_dump *d, struct fpki_codec *c, const char *name, size_t blen,
                       const char *encoding, int ndim, const uint64_t *shape, fpk_error *err)
{
    fpki_decoder *v = realloc(d->decoders, (d->ndecoders + 1) * sizeof *v);
    if (!v)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    d->decoders = v;
    struct fpki_codec *copy = fpki_arena_alloc(&d->arena, sizeof *copy);
    fpki_decoder *k = &v[d->ndecoders];
    memset(k, 0, sizeof *k);
    if (!copy || !(k->name = fpki_arena_copy(&d->arena, name, blen)))
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    *copy = *c;
    k->codec = copy;
    k->encoding = encoding;
    k->ndim = ndim;
    memcpy(k->shape, shape, (size_t)ndim * sizeof *shape);
    k->count = c->rows * c->cols;
    d->stored[c->codes].decoder = (int32_t)d->ndecoders;
    d->stored[c->codes].used = true;
    if (c->scales != NONE)
        d->stored[c->scales].used = true;
    if (c->global != NONE)
        d->stored[c->global].used = true;
    d->ndecoders++;
    return FPK_OK;
}

static bool is_fp8(fpki_stype t)
{
    return t == FPKI_ST_E4M3 || t == FPKI_ST_E5M2;
}

static bool is_wide_float(fpki_stype t)
{
    return t == FPKI_ST_F32 || t == FPKI_ST_BF16 || t == FPKI_ST_F16;
}

/* gpt-oss MXFP4: X_blocks (or X.blocks) with X_scales. */
static int try_mxfp4(fpk_dump *d, const names *m, uint32_t i, bool *found, fpk_error *err)
{
    const fpki_stored *b = &d->stored[i];
    size_t n = strlen(b->name);
    const char *sfx = n > 7 && strcmp(b->name + n - 7, "_blocks") == 0   ? "_scales"
                      : n > 7 && strcmp(b->name + n - 7, ".blocks") == 0 ? ".scales"
                                                                         : NULL;
    if (!sfx || b->stype != FPKI_ST_U8 || b->ndim < 2 || b->shape[b->ndim - 1] != 16)
        return FPK_OK;
    uint32_t s = lookup(m, d, b->name, n - 7, sfx);
    if (s == NONE || !plain(&d->stored[s]))
        return FPK_OK;
    const fpki_stored *sc = &d->stored[s];
    if ((sc->stype != FPKI_ST_U8 && sc->stype != FPKI_ST_E8M0) || sc->ndim != b->ndim - 1 ||
        memcmp(sc->shape, b->shape, (size_t)sc->ndim * sizeof sc->shape[0]) != 0)
        return FPK_OK;
    struct fpki_codec c = {.conv = FPKI_CONV_MXFP4, .convention = "gpt-oss MXFP4",
                           .codes = i, .scales = s, .global = NONE, .packed = true,
                           .scale_stype = FPKI_ST_E8M0};
    fpk_recipe_parse("mxfp4", &c.recipe, NULL);
    uint64_t shape[FPK_MAX_DIMS];
    int ndim = b->ndim - 1;
    memcpy(shape, b->shape, (size_t)ndim * sizeof shape[0]);
    shape[ndim - 1] = b->shape[ndim - 1] * 32;
    c.rows = 1;
    for (int k = 0; k + 1 < ndim; k++)
        c.rows *= shape[k];
    c.cols = shape[ndim - 1];
    c.srows = c.rows;
    c.scols = b->shape[ndim - 1];
    *found = true;
    return add_decoder(d, &c, b->name, n - 7, "mxfp4", ndim, shape, err);
}

/* The packed-FP4 conventions: ModelOpt's X.weight with X.weight_scale
 * and X.weight_scale_2; compressed-tensors' X.weight_packed with
 * X.weight_scale (and X.weight_global_scale for NVFP4). */
static int try_fp4(fpk_dump *d, const names *m, uint32_t i, bool *found, fpk_error *err)
{
    const fpki_stored *w = &d->stored[i];
    size_t n = strlen(w->name);
    bool ct = n > 14 && strcmp(w->name + n - 14, ".weight_packed") == 0;
    bool mo = n > 7 && strcmp(w->name + n - 7, ".weight") == 0;
    if ((!ct && !mo) || w->stype != FPKI_ST_U8 || w->ndim != 2)
        return FPK_OK;
    size_t blen = n - (ct ? 14 : 7); /* the module's name, "....mlp.up_proj" */
    uint32_t s = lookup(m, d, w->name, blen, ".weight_scale");
    uint32_t g = lookup(m, d, w->name, blen, ct ? ".weight_global_scale" : ".weight_scale_2");
    if (s == NONE || !plain(&d->stored[s]))
        return FPK_OK;
    const fpki_stored *sc = &d->stored[s];
    struct fpki_codec c = {.codes = i, .scales = s, .global = NONE, .packed = true,
                           .rows = w->shape[0], .cols = 2 * w->shape[1]};
    view2d(sc, &c.srows, &c.scols);
    const char *encoding;
    if (sc->stype == FPKI_ST_E4M3) {
        if (g == NONE || !plain(&d->stored[g]) || d->stored[g].count != 1 ||
            !is_wide_float(d->stored[g].stype))
            return FPK_OK;
        c.conv = ct ? FPKI_CONV_NVFP4_CT : FPKI_CONV_NVFP4;
        c.convention = ct ? "compressed-tensors NVFP4" : "ModelOpt NVFP4";
        c.global = g;
        c.scale_stype = FPKI_ST_E4M3;
        fpk_recipe_parse(ct ? "e2m1/fp32/amax/1x16" : "e2m1/e4m3/nvfp4/1x16", &c.recipe, NULL);
        int rc = read_scalar(d, &d->stored[g], &c.global_bits, err);
        if (rc != FPK_OK)
            return rc;
        encoding = "nvfp4";
    } else if (ct && (sc->stype == FPKI_ST_U8 || sc->stype == FPKI_ST_E8M0)) {
        c.conv = FPKI_CONV_MXFP4_CT;
        c.convention = "compressed-tensors MXFP4";
        c.scale_stype = FPKI_ST_E8M0;
        fpk_recipe_parse("mxfp4", &c.recipe, NULL);
        encoding = "mxfp4";
    } else {
        return FPK_OK;
    }
    uint64_t block = c.recipe.block_cols;
    /* scales for every block (ModelOpt may pad them: rows to 128,
     * blocks to 4) */
    if (c.srows < c.rows || c.scols < ceil_div(c.cols, block))
        return FPK_OK;
    *found = true;
    uint64_t shape[2] = {c.rows, c.cols};
    return add_decoder(d, &c, w->name, blen + 7, encoding, 2, shape, err);
}

/* The block of R x C elements that a scale grid of SR x SC covers:
 * the configured one, else 128 x 128 (DeepSeek-V3), else the only one. */
static bool block_of(const fpk_dump *d, uint64_t r, uint64_t c, uint64_t sr, uint64_t sc,
                     uint32_t *br, uint32_t *bc)
{
    uint64_t tries[3][2] = {{d->quant_block_rows, d->quant_block_cols}, {128, 128}, {0, 0}};
    if (sr && sc) {
        tries[2][0] = ceil_div(r, sr);
        tries[2][1] = ceil_div(c, sc);
    }
    for (int t = 0; t < 3; t++) {
        uint64_t a = tries[t][0], b = tries[t][1];
        if (a && b && a <= UINT32_MAX && b <= UINT32_MAX && ceil_div(r, a) == sr &&
            ceil_div(c, b) == sc) {
            *br = (uint32_t)a;
            *bc = (uint32_t)b;
            return true;
        }
    }
    return false;
}

/* FP8 with a multiplier: DeepSeek-V3's X.weight_scale_inv per tile, or
 * X.weight_scale per tensor, row or tile. */
static int try_fp8(fpk_dump *d, const names *m, uint32_t i, bool *found, fpk_error *err)
{
    const fpki_stored *w = &d->stored[i];
    size_t n = strlen(w->name);
    if (n <= 7 || strcmp(w->name + n - 7, ".weight") != 0 || !is_fp8(w->stype) || w->ndim < 1 ||
        w->strides)
        return FPK_OK;
    size_t blen = n - 7;
    uint32_t s = lookup(m, d, w->name, blen, ".weight_scale_inv");
    bool deepseek = s != NONE;
    if (!deepseek)
        s = lookup(m, d, w->name, blen, ".weight_scale");
    if (s == NONE || !plain(&d->stored[s]) || !is_wide_float(d->stored[s].stype))
        return FPK_OK;
    const fpki_stored *sc = &d->stored[s];
    struct fpki_codec c = {.conv = deepseek ? FPKI_CONV_FP8_BLOCK : FPKI_CONV_FP8_SCALED,
                           .convention = deepseek ? "DeepSeek-V3 FP8" : "FP8 with weight_scale",
                           .codes = i, .scales = s, .global = NONE,
                           .scale_stype = sc->stype};
    view2d(w, &c.rows, &c.cols);
    uint32_t br, bc;
    if (sc->count == 1) {
        br = bc = 0; /* one block: the whole tensor */
        c.srows = c.scols = 1;
    } else {
        view2d(sc, &c.srows, &c.scols);
        if (sc->ndim == 1) { /* one per row */
            c.srows = sc->shape[0];
            c.scols = 1;
        }
        if (!block_of(d, c.rows, c.cols, c.srows, c.scols, &br, &bc))
            return FPK_OK;
    }
    char spec[64];
    snprintf(spec, sizeof spec, "%s/fp32/amax/%" PRIu32 "x%" PRIu32,
             w->stype == FPKI_ST_E4M3 ? "e4m3" : "e5m2", br, bc);
    if (fpk_recipe_parse(spec, &c.recipe, NULL) != FPK_OK)
        return FPK_OK;
    *found = true;
    return add_decoder(d, &c, w->name, n, deepseek ? "fp8-block" : "fp8-scaled", w->ndim,
                       w->shape, err);
}

int fpki_quant_group(fpk_dump *d, fpk_error *err)
{
    names m = {0};
    int rc = make_names(d, &m, err);
    for (size_t i = 0; rc == FPK_OK && i < d->nstored; i++) {
        if (!plain(&d->stored[i]))
            continue;
        bool found = false;
        rc = try_mxfp4(d, &m, (uint32_t)i, &found, err);
        if (rc == FPK_OK && !found)
            rc = try_fp4(d, &m, (uint32_t)i, &found, err);
        if (rc == FPK_OK && !found)
            rc = try_fp8(d, &m, (uint32_t)i, &found, err);
    }
    free(m.slot);
    return rc;
}

int fpki_element_decoder(fpk_dump *d, size_t i, int *k, fpk_error *err)
{
    const fpki_stored *s = &d->stored[i];
    struct fpki_codec c = {.conv = FPKI_CONV_ELEMENT, .convention = fpki_stype_of(s->stype)->name,
                           .codes = (uint32_t)i, .scales = NONE, .global = NONE,
                           .packed = s->stype == FPKI_ST_F4 || s->stype == FPKI_ST_F4X2};
    uint64_t shape[FPK_MAX_DIMS];
    memcpy(shape, s->shape, (size_t)s->ndim * sizeof shape[0]);
    int ndim = s->ndim;
    if (s->stype == FPKI_ST_F4X2) {
        if (ndim == 0)
            shape[ndim++] = 1;
        shape[ndim - 1] *= 2; /* two elements a byte */
    }
    uint64_t count = 1;
    for (int j = 0; j < ndim; j++)
        count *= shape[j];
    c.rows = 1;
    c.cols = count;
    *k = (int)d->ndecoders;
    return add_decoder(d, &c, s->name, strlen(s->name), fpki_stype_of(s->stype)->name, ndim,
                       shape, err);
}
