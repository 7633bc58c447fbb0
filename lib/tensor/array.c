/* Array conversions: whole arrays rounded into a format, as encodings or
 * as float32 values (fake quantisation), with the bits and flags of
 * fpk_convert element by element.
 *
 * Float32, fp16, bf16 and the FP8 dtypes converted into fp16, bf16, tf32,
 * e4m3 or e5m2 under RNE, RTZ or SR (sr_bits <= 32) take the kernels
 * (lib/kernels/), every other case fpk_convert itself.  Arrays of a few
 * pieces and more are split into pieces of FPKI_PIECE elements that
 * OpenMP threads share; under SR element i always rounds with counter
 * sr_counter + i, so neither threads nor pieces change a bit.
 *
 * The squared errors of fake quantisation (the sums of an SQNR) are
 * summed in lanes of doubles by the kernels too: rounded and summed in one
 * pass where a kernel can, else quantised a part at a time and summed. */
#include <string.h>

#include "array-impl.h"
#include "fast-check.h"
#include "sr-hash.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Outputs at least this large are written with non-temporal stores: they
 * cannot stay in the cache, and would only evict what can. */
#define STREAM_BYTES ((size_t)8 << 20)

/* Elements of a 16- or 8-bit array widened to float32 at a time, on the
 * stack, before the kernels convert them. */
#define WIDEN_PART 4096

int fpki_threads(int threads, size_t n)
{
#ifdef _OPENMP
    size_t pieces = n / FPKI_PIECE;
    if (threads <= 1 || pieces < 2)
        return 1;
    return (size_t)threads < pieces ? threads : (int)pieces;
#else
    (void)threads;
    (void)n;
    return 1;
#endif
}

void fpki_parallel(int nt, void (*body)(void *arg, int t, int nt), void *arg)
{
#ifdef _OPENMP
    if (nt > 1) {
        FPKI_OMP(omp parallel num_threads(nt))
        body(arg, omp_get_thread_num(), omp_get_num_threads());
        return;
    }
#endif
    (void)nt;
    body(arg, 0, 1);
}

size_t fpk_array_size(const fpk_format *f)
{
    return f->width <= 8 ? 1 : f->width <= 16 ? 2 : f->width <= 32 ? 4 : 8;
}

static bool same_format(const fpk_format *a, const fpk_format *b)
{
    return a->exp_bits == b->exp_bits && a->man_bits == b->man_bits && a->bias == b->bias &&
           a->special == b->special;
}

fpki_kformat fpki_kformat_of(const fpk_format *f)
{
    /* in fpki_kformat's order */
    static const fpk_format *const kernel_formats[] = {&fpk_fp16, &fpk_bf16, &fpk_tf32,
                                                       &fpk_e4m3, &fpk_e5m2};
    for (int k = 0; f && k < FPKI_KFORMAT_NONE; k++)
        if (same_format(f, kernel_formats[k]))
            return (fpki_kformat)k;
    return FPKI_KFORMAT_NONE;
}

/* Fills P for a kernel converting FROM into F; false when no kernel
 * does. */
static bool plan(fpki_conv_plan *p, const fpk_format *f, bool quant, fpk_dtype from, const fpk_ctx *c)
{
    int bits = c->sr_bits >= 1 && c->sr_bits <= 64 ? c->sr_bits : 32;
    *p = (fpki_conv_plan){
        .format = fpki_kformat_of(f),
        .mode = c->round,
        .quant = quant,
        .ftz = c->ftz,
        .daz = c->daz,
        .saturate = c->saturate,
        .tiny_before = c->tiny_before,
        .sr_shift = 32 - bits,
        .out_size = quant ? 4 : fpk_array_size(f),
    };
    if (p->mode == FPK_SR)
        p->seed_mix = fpki_sr_mix(c->sr_seed);
    return p->format != FPKI_KFORMAT_NONE && from != FPK_DTYPE_F64 &&
           (p->mode == FPK_RNE || p->mode == FPK_RTZ || (p->mode == FPK_SR && bits <= 32));
}

bool fpki_quantize_plan(fpki_conv_plan *p, const fpk_format *f, const fpk_ctx *c)
{
    return plan(p, f, true, FPK_DTYPE_F32, c);
}

bool fpki_array_fast(const fpk_format *f, const fpk_ctx *c)
{
    fpki_conv_plan p;
    return fpki_quantize_plan(&p, f, c);
}

static void store(void *z, size_t i, size_t size, fpk_bits b)
{
    switch (size) {
    case 1: ((uint8_t *)z)[i] = (uint8_t)b; break;
    case 2: ((uint16_t *)z)[i] = (uint16_t)b; break;
    case 4: ((uint32_t *)z)[i] = (uint32_t)b; break;
    default: memcpy((uint8_t *)z + 8 * i, &b, 8); break;
    }
}

fpk_bits fpki_convert_one(const fpk_format *f, bool quant, fpk_dtype from, fpk_bits a,
                          uint64_t counter, const fpk_ctx *c, unsigned *flags)
{
    fpk_ctx e = *c;
    e.flags = 0;
    e.sr_counter = counter;
    fpk_bits b = fpk_convert(f, fpk_dtype_format(from), a, &e);
    if (quant) {
        fpk_ctx exact = fpk_ctx_default();
        b = fpk_convert(&fpk_fp32, f, b, &exact);
    }
    *flags = e.flags;
    return b;
}

/* Elements FIRST .. FIRST+N-1 one by one through fpk_convert. */
static unsigned convert_scalar(const fpk_format *f, bool quant, void *z, fpk_dtype from,
                               const void *x, size_t first, size_t n, const fpk_ctx *c)
{
    size_t size = quant ? 4 : fpk_array_size(f);
    unsigned flags = 0;
    for (size_t i = first; i < first + n; i++) {
        unsigned fl;
        store(z, i, size,
              fpki_convert_one(f, quant, from, fpki_load(from, x, i), c->sr_counter + i, c, &fl));
        flags |= fl;
    }
    return flags;
}

/* Elements FIRST .. FIRST+N-1 through the kernels of ISA. */
static unsigned convert_fast(const fpki_conv_plan *p, fpki_isa isa, void *z, fpk_dtype from,
                             const void *x, size_t first, size_t n, uint64_t counter, bool stream)
{
    uint8_t *out = (uint8_t *)z + p->out_size * first;
    if (from == FPK_DTYPE_F32)
        return fpki_convert_fns[isa](p, (const uint32_t *)x + first, out, n, counter + first,
                                     stream);
    /* Widened a part at a time; the kernel reads no daz of its own, the
     * widening has applied the source's. */
    fpki_conv_plan q = *p;
    q.daz = false;
    uint32_t wide[WIDEN_PART];
    size_t esize = fpk_dtype_size(from);
    fpki_kformat kf = fpki_kformat_of_dtype(from);
    unsigned flags = 0;
    for (size_t i = 0; i < n; i += WIDEN_PART) {
        size_t k = n - i < WIDEN_PART ? n - i : WIDEN_PART;
        fpki_widen_fns[isa](kf, (const uint8_t *)x + esize * (first + i), wide, k, p->daz);
        flags |= fpki_convert_fns[isa](&q, wide, out + p->out_size * i, k, counter + first + i,
                                       stream);
    }
    return flags;
}

/* A conversion that threads share by pieces. */
typedef struct conv_job {
    const fpk_format *f;
    bool quant, fast, stream;
    fpki_conv_plan p;
    fpki_isa isa;
    void *z;
    fpk_dtype from;
    const void *x;
    size_t n, pieces;
    const fpk_ctx *c;
    unsigned flags; /* every thread's, ORed */
} conv_job;

static void convert_pieces(void *arg, int t, int nt)
{
    conv_job *j = arg;
    fpki_fpenv env;
    fpki_fp_default(&env);
    unsigned flags = 0;
    for (size_t k = fpki_share(j->pieces, t, nt); k < fpki_share(j->pieces, t + 1, nt); k++) {
        size_t first = k * FPKI_PIECE, len = j->n - first < FPKI_PIECE ? j->n - first : FPKI_PIECE;
        if (!j->fast) {
            flags |= convert_scalar(j->f, j->quant, j->z, j->from, j->x, first, len, j->c);
            continue;
        }
#ifdef FPK_ASSERTIONS
        /* the general path's results for a sample, before the kernels
         * may write over their input */
        fpki_convert_check check;
        fpki_convert_expect(&check, j->f, j->quant, j->from, j->x, first, len, j->c);
#endif
        unsigned got = convert_fast(&j->p, j->isa, j->z, j->from, j->x, first, len,
                                    j->c->sr_counter, j->stream);
        FPKI_ASSERT(fpki_convert_agrees(&check, j->z, j->p.out_size, got));
        flags |= got;
    }
    FPKI_OMP(omp atomic)
    j->flags |= flags;
    fpki_fp_restore(&env);
}

static void convert(const fpk_format *f, bool quant, void *z, fpk_dtype from, const void *x,
                    size_t n, fpk_ctx *c, int threads)
{
    conv_job j = {.f = f, .quant = quant, .isa = fpki_isa_best(), .z = z, .from = from, .x = x,
                  .n = n, .pieces = (n + FPKI_PIECE - 1) / FPKI_PIECE, .c = c};
    j.fast = plan(&j.p, f, quant, from, c);
    j.stream = n * j.p.out_size >= STREAM_BYTES;
    fpki_parallel(fpki_threads(threads, n), convert_pieces, &j);
    c->flags |= j.flags;
    if (c->round == FPK_SR)
        c->sr_counter += n;
}

void fpk_array_convert(const fpk_format *to, void *z, fpk_dtype from, const void *x, size_t n,
                       fpk_ctx *c, int threads)
{
    convert(to, false, z, from, x, n, c, threads);
}

/* Whether F's values are all float32 values. */
static bool quantizable(const fpk_format *f)
{
    return f->man_bits <= 23 && f->emax <= 127 && f->emin - f->man_bits >= -149;
}

bool fpk_array_quantize(const fpk_format *f, float *z, fpk_dtype from, const void *x, size_t n,
                        fpk_ctx *c, int threads)
{
    if (!quantizable(f))
        return false;
    convert(f, true, z, from, x, n, c, threads);
    return true;
}

void fpk_array_sqerr(const float *x, const float *y, size_t n, double *x2, double *e2)
{
    fpki_fpenv env;
    fpki_fp_default(&env);
    fpki_sqerr_fns[fpki_isa_best()](x, y, n, 0, x2, y ? e2 : NULL);
    fpki_fp_restore(&env);
}

/* Elements quantised at once where no kernel sums as it rounds (the
 * lanes carried from part to part). */
#define SQERR_PART 1024

/* fpk_array_quantize_sqerr of F by quantising and summing SQERR_PART
 * elements at a time. */
static void sqerr_parts(const fpk_format *f, const float *x, size_t n, fpk_ctx *c, double *x2,
                        double *e2, fpki_isa isa)
{
    float y[SQERR_PART];
    unsigned lane = 0;
    for (size_t i = 0; i < n; i += SQERR_PART) {
        size_t k = n - i < SQERR_PART ? n - i : SQERR_PART;
        convert(f, true, y, FPK_DTYPE_F32, x + i, k, c, 1);
        lane = fpki_sqerr_fns[isa](x + i, y, k, lane, x2, e2);
    }
}

bool fpk_array_quantize_sqerr_formats(int nf, const fpk_format *const *f, const float *x,
                                      size_t n, fpk_ctx *c, double *x2, double *e2)
{
    for (int j = 0; j < nf; j++)
        if (!quantizable(f[j]))
            return false;
    fpki_isa isa = fpki_isa_best();
    fpki_fpenv env;
    fpki_fp_default(&env);
    for (int j0 = 0; j0 < nf; j0 += FPKI_QUANTIZE_SQERR_MAX_FORMATS) {
        int k = nf - j0 < FPKI_QUANTIZE_SQERR_MAX_FORMATS ? nf - j0 : FPKI_QUANTIZE_SQERR_MAX_FORMATS;
        double *gx2 = j0 ? NULL : x2, *ge2 = e2 ? e2 + FPK_LANES * j0 : NULL;
        fpki_conv_plan p[FPKI_QUANTIZE_SQERR_MAX_FORMATS];
        unsigned flags[FPKI_QUANTIZE_SQERR_MAX_FORMATS];
        for (int j = 0; j < k; j++)
            flags[j] = c[j0 + j].flags;
        bool planned = ge2 != NULL;
        for (int j = 0; j < k && planned; j++)
            planned = plan(&p[j], f[j0 + j], true, FPK_DTYPE_F32, &c[j0 + j]);
        if (planned &&
            fpki_quantize_sqerr_fns[isa](p, k, (const uint32_t *)x, n, gx2, ge2, flags)) {
            for (int j = 0; j < k; j++)
                c[j0 + j].flags |= flags[j];
            continue;
        }
        for (int j = 0; j < k; j++)
            sqerr_parts(f[j0 + j], x, n, &c[j0 + j], j ? NULL : gx2,
                        ge2 ? ge2 + FPK_LANES * j : NULL, isa);
    }
    fpki_fp_restore(&env);
    return true;
}

bool fpk_array_quantize_sqerr(const fpk_format *f, const float *x, size_t n, fpk_ctx *c,
                              double *x2, double *e2)
{
    return fpk_array_quantize_sqerr_formats(1, &f, x, n, c, x2, e2);
}
