/* From what a file stores to the tensors a dump shows (fpki_present):
 * quantised tensors decoded, floats read as stored, views of a storage
 * read in place or gathered, and everything else listed as skipped. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dump-impl.h"

_Static_assert((int)FPKI_ST_F64 == (int)FPK_DTYPE_F64 && (int)FPKI_ST_F32 == (int)FPK_DTYPE_F32 &&
                   (int)FPKI_ST_F16 == (int)FPK_DTYPE_F16 &&
                   (int)FPKI_ST_BF16 == (int)FPK_DTYPE_BF16 &&
                   (int)FPKI_ST_E4M3 == (int)FPK_DTYPE_E4M3 &&
                   (int)FPKI_ST_E5M2 == (int)FPK_DTYPE_E5M2,
               "the six dtypes number alike in fpk_dtype and fpki_stype");

/* Whether the strides of view S make its elements fill a block of its
 * storage (a permutation of a contiguous layout: a transpose); *C_ORDER
 * whether they are the row-major ones, *F_ORDER the column-major ones. */
static bool dense(const fpki_stored *s, bool *c_order, bool *f_order)
{
    uint64_t expect = 1;
    *c_order = *f_order = true;
    for (int k = s->ndim - 1; k >= 0; k--) {
        if (s->shape[k] > 1 && (uint64_t)s->strides[k] != expect)
            *c_order = false;
        expect *= s->shape[k];
    }
    expect = 1;
    for (int k = 0; k < s->ndim; k++) {
        if (s->shape[k] > 1 && (uint64_t)s->strides[k] != expect)
            *f_order = false;
        expect *= s->shape[k];
    }
    if (*c_order || *f_order)
        return true;
    /* any other order: the dimensions longer than 1 by increasing stride */
    bool done[FPK_MAX_DIMS] = {false};
    expect = 1;
    for (;;) {
        int best = -1;
        for (int k = 0; k < s->ndim; k++)
            if (!done[k] && s->shape[k] > 1 &&
                (best < 0 || s->strides[k] < s->strides[best]))
                best = k;
        if (best < 0)
            return true;
        if ((uint64_t)s->strides[best] != expect)
            return false;
        done[best] = true;
        expect *= s->shape[best];
    }
}

static int skip(fpk_dump *d, const fpki_stored *s, const char *why, fpk_error *err)
{
    fpk_skipped *v = realloc(d->skipped, (d->nskipped + 1) * sizeof *v);
    if (!v)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    d->skipped = v;
    fpk_skipped *k = &v[d->nskipped++];
    memset(k, 0, sizeof *k);
    k->name = s->name;
    k->dtype = fpki_stype_of(s->stype)->name;
    k->ndim = s->ndim;
    memcpy(k->shape, s->shape, (size_t)s->ndim * sizeof s->shape[0]);
    k->why = why;
    return FPK_OK;
}

/* Why stored tensor S is not read. */
static const char *why_skipped(const fpki_stored *s)
{
    switch (s->stype) {
    case FPKI_ST_C32:
    case FPKI_ST_C64:
    case FPKI_ST_C128:
        return "complex";
    case FPKI_ST_OTHER:
        return "a quantised integer type";
    case FPKI_ST_BOOL:
        return "boolean";
    default:
        return "integer";
    }
}

int fpki_present(fpk_dump *d, fpk_error *err)
{
    int rc = fpki_quant_group(d, err);
    if (rc != FPK_OK)
        return rc;
    d->tensors = calloc(d->nstored ? d->nstored : 1, sizeof *d->tensors);
    d->sources = calloc(d->nstored ? d->nstored : 1, sizeof *d->sources);
    if (!d->tensors || !d->sources)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory for %zu tensors", d->nstored);
    for (size_t i = 0; i < d->nstored; i++) {
        fpki_stored *s = &d->stored[i];
        if (s->used && s->decoder < 0)
            continue; /* a part of a quantised tensor */
        const fpki_stype_info *info = fpki_stype_of(s->stype);
        int k = s->decoder;
        if (k < 0 && info->dtype < 0 && info->format &&
            (rc = fpki_element_decoder(d, i, &k, err)) != FPK_OK)
            return rc;
        if (k < 0 && info->dtype < 0) {
            if ((rc = skip(d, s, why_skipped(s), err)) != FPK_OK)
                return rc;
            continue;
        }
        fpk_tensor *t = &d->tensors[d->ntensors];
        d->sources[d->ntensors] = (fpki_source){.stored = (uint32_t)i, .decoder = k};
        d->ntensors++;
        t->file = d->files[s->file].path;
        if (k >= 0) {
            const fpki_decoder *dec = &d->decoders[k];
            t->name = dec->name;
            t->dtype = FPK_DTYPE_F32;
            t->layout = FPK_LAYOUT_DECODED;
            t->encoding = dec->encoding;
            t->ndim = dec->ndim;
            memcpy(t->shape, dec->shape, (size_t)dec->ndim * sizeof t->shape[0]);
            t->count = dec->count;
            continue;
        }
        t->name = s->name;
        t->dtype = (fpk_dtype)info->dtype;
        t->big_endian = s->big_endian;
        t->fortran_order = s->fortran_order;
        t->ndim = s->ndim;
        memcpy(t->shape, s->shape, (size_t)s->ndim * sizeof t->shape[0]);
        t->count = s->count;
        t->offset = s->offset;
        t->layout = FPK_LAYOUT_PLAIN;
        bool c_order, f_order;
        if (s->strides && dense(s, &c_order, &f_order)) {
            /* read in place, in the storage's order, as .npy's Fortran
             * arrays are */
            t->fortran_order = !c_order && f_order;
            s->strides = NULL;
        } else if (s->strides) {
            t->layout = FPK_LAYOUT_STRIDED;
        }
    }
    return FPK_OK;
}
