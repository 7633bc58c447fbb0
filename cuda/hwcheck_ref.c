/* fpk-hwcheck's host side: the library's results and the comparison with
 * the device's, counted by class (hwcheck.h). */
#include <stdlib.h>
#include <string.h>

#include "hwcheck.h"

const hw_conv_desc hw_convs[HW_NCONV] = {
    [HW_FP16] = {"fp32->fp16 __float2half_rn", &fpk_fp16, FPK_RNE, false, 2, 0},
    [HW_BF16] = {"fp32->bf16 __float2bfloat16_rn", &fpk_bf16, FPK_RNE, false, 2, 0},
    [HW_TF32_RNA] = {"fp32->tf32 cvt.rna.tf32.f32", &fpk_tf32, FPK_RNA, false, 4, 13},
    [HW_TF32_RN] = {"fp32->tf32 cvt.rn.tf32.f32", &fpk_tf32, FPK_RNE, false, 4, 13},
    [HW_TF32_RZ] = {"fp32->tf32 cvt.rz.tf32.f32", &fpk_tf32, FPK_RTZ, false, 4, 13},
    [HW_E4M3] = {"fp32->e4m3 __nv_cvt_float_to_fp8 satfinite", &fpk_e4m3, FPK_RNE, true, 1, 0},
    [HW_E5M2] = {"fp32->e5m2 __nv_cvt_float_to_fp8 satfinite", &fpk_e5m2, FPK_RNE, true, 1, 0},
    [HW_E2M3] = {"fp32->e2m3 __nv_cvt_float_to_fp6", &fpk_e2m3, FPK_RNE, true, 1, 0},
    [HW_E3M2] = {"fp32->e3m2 __nv_cvt_float_to_fp6", &fpk_e3m2, FPK_RNE, true, 1, 0},
    [HW_E2M1] = {"fp32->e2m1 __nv_cvt_float_to_fp4", &fpk_e2m1, FPK_RNE, true, 1, 0},
};

/* -1 and the least subnormal: cancellation against products near 1, and a
 * sticky bit under products of every size. */
const fpk_bits hw_fma_c[2][HW_NFMA_C] = {{0xbc00, 0x0001}, {0xbf80, 0x0001}};

const char *const hw_class_names[HW_NCLASSES] = {
    [HW_ROUNDING] = "rounding", [HW_SUBNORMAL] = "subnormal", [HW_OVERFLOW] = "overflow",
    [HW_NAN] = "nan",           [HW_SIGN] = "sign",           [HW_OTHER] = "other",
};

int hw_classify(const fpk_format *f, fpk_bits want, fpk_bits got)
{
    if (fpk_is_nan(f, want) != fpk_is_nan(f, got))
        return HW_NAN;
    fpk_bits wm = want & ~f->sign_mask, gm = got & ~f->sign_mask;
    if (wm == gm)
        return HW_SIGN;
    fpk_class wc = fpk_classify(f, want), gc = fpk_classify(f, got);
    if (wc == FPK_CLASS_INF || gc == FPK_CLASS_INF || wm == f->max_finite ||
        gm == f->max_finite)
        return HW_OVERFLOW;
    if (wc == FPK_CLASS_ZERO || wc == FPK_CLASS_SUBNORMAL || gc == FPK_CLASS_ZERO ||
        gc == FPK_CLASS_SUBNORMAL)
        return HW_SUBNORMAL;
    if ((want & f->sign_mask) == (got & f->sign_mask) && (wm - gm == 1 || gm - wm == 1))
        return HW_ROUNDING;
    return HW_OTHER;
}

static void convention(hw_convention *k, fpk_bits want, fpk_bits got)
{
    if (k->n++ == 0) {
        k->want = want;
        k->got = got;
    } else if (k->want != want || k->got != got) {
        k->varied = true;
    }
}

static void record(hw_tally *t, const uint64_t *in, fpk_bits want, fpk_bits got, int cls)
{
    t->by_class[cls]++;
    if (t->nex < HW_EXAMPLES)
        t->ex[t->nex++] = (hw_example){{in[0], in[1], in[2]}, want, got, cls};
}

void hw_tally_one(hw_tally *t, const fpk_format *f, const uint64_t *in, bool nan_in,
                  fpk_bits want, fpk_bits got)
{
    t->cases++;
    if (want == got)
        t->agree++;
    else if (fpk_is_nan(f, want) && fpk_is_nan(f, got))
        convention(&t->nan_pattern, want, got);
    else if (nan_in && !fpk_is_nan(f, f->nan))
        convention(&t->nan_into, want, got);
    else if (nan_in && fpk_is_nan(f, want) && fpk_classify(f, got) == FPK_CLASS_INF)
        convention(&t->nan_to_inf, want, got);
    else
        record(t, in, want, got, hw_classify(f, want, got));
}

static void merge_convention(hw_convention *into, const hw_convention *from)
{
    if (from->n == 0)
        return;
    if (into->n == 0) {
        *into = *from;
        return;
    }
    into->n += from->n;
    into->varied |= from->varied || from->want != into->want || from->got != into->got;
}

void hw_tally_merge(hw_tally *into, const hw_tally *from)
{
    into->cases += from->cases;
    into->agree += from->agree;
    merge_convention(&into->nan_pattern, &from->nan_pattern);
    merge_convention(&into->nan_into, &from->nan_into);
    merge_convention(&into->nan_to_inf, &from->nan_to_inf);
    for (int c = 0; c < HW_NCLASSES; c++)
        into->by_class[c] += from->by_class[c];
    for (int i = 0; i < from->nex && into->nex < HW_EXAMPLES; i++)
        into->ex[into->nex++] = from->ex[i];
}

uint64_t hw_tally_mismatches(const hw_tally *t)
{
    uint64_t n = 0;
    for (int c = 0; c < HW_NCLASSES; c++)
        n += t->by_class[c];
    return n;
}

static uint64_t load(const void *p, int bytes, size_t i)
{
    switch (bytes) {
    case 1: return ((const uint8_t *)p)[i];
    case 2: return ((const uint16_t *)p)[i];
    default: return ((const uint32_t *)p)[i];
    }
}

/* What a part of a comparison reads: the chunk's first input and the
 * device's results, and for the arithmetic the format. */
typedef struct chunk {
    uint64_t first;
    const void *const *out;
    int fmt;
} chunk;

static void conv_part(const chunk *k, size_t lo, size_t hi, hw_tally t[HW_NCONV])
{
    fpk_ctx c = fpk_ctx_default();
    for (size_t i = lo; i < hi; i++) {
        uint64_t in[3] = {(uint32_t)(k->first + i), 0, 0};
        bool nan_in = fpk_is_nan(&fpk_fp32, in[0]);
        for (int j = 0; j < HW_NCONV; j++) {
            const hw_conv_desc *d = &hw_convs[j];
            if (!k->out[j])
                continue;
            c.round = d->mode;
            c.saturate = d->saturate;
            fpk_bits want = fpk_convert(d->f, &fpk_fp32, in[0], &c);
            uint64_t raw = load(k->out[j], d->bytes, i), got = raw >> d->shift;
            if ((raw & (((uint64_t)1 << d->shift) - 1)) && !fpk_is_nan(d->f, got)) {
                /* a container whose bits below the encoding are not zero */
                t[j].cases++;
                record(&t[j], in, want << d->shift, raw, HW_OTHER);
            } else {
                hw_tally_one(&t[j], d->f, in, nan_in, want, got);
            }
        }
    }
}

static void arith_part(const chunk *k, size_t lo, size_t hi, hw_tally t[HW_NOPS])
{
    const fpk_format *f = k->fmt ? &fpk_bf16 : &fpk_fp16;
    const uint16_t *const *out = (const uint16_t *const *)k->out;
    fpk_ctx c = fpk_ctx_default();
    for (size_t i = lo; i < hi; i++) {
        uint64_t pair = k->first + i;
        uint64_t in[3] = {pair >> 16 & 0xffff, pair & 0xffff, 0};
        bool nan_in = fpk_is_nan(f, in[0]) || fpk_is_nan(f, in[1]);
        hw_tally_one(&t[HW_ADD], f, in, nan_in, fpk_add(f, in[0], in[1], &c), out[HW_ADD][i]);
        hw_tally_one(&t[HW_MUL], f, in, nan_in, fpk_mul(f, in[0], in[1], &c), out[HW_MUL][i]);
        for (int j = 0; j < HW_NFMA_C; j++) {
            in[2] = hw_fma_c[k->fmt][j];
            hw_tally_one(&t[HW_FMA0 + j], f, in, nan_in, fpk_fma(f, in[0], in[1], in[2], &c),
                         out[HW_FMA0 + j][i]);
        }
    }
}

/* PART over [0, N) of K in THREADS contiguous parts, each into its own PER
 * tallies, merged into T in order so that the examples stay in input
 * order. */
static void compare(const chunk *k, size_t n, void (*part)(const chunk *, size_t, size_t, hw_tally *),
                    int per, hw_tally *t, int threads)
{
    threads = threads < 1 ? 1 : threads;
    hw_tally *parts = calloc((size_t)threads * (size_t)per, sizeof *parts);
    if (!parts)
        abort();
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(threads)
#endif
    for (int p = 0; p < threads; p++)
        part(k, n * (size_t)p / (size_t)threads, n * (size_t)(p + 1) / (size_t)threads,
             &parts[p * per]);
    for (int p = 0; p < threads; p++)
        for (int j = 0; j < per; j++)
            hw_tally_merge(&t[j], &parts[p * per + j]);
    free(parts);
}

void hw_compare_conv(uint32_t first, size_t n, void *const out[HW_NCONV], hw_tally t[HW_NCONV],
                     int threads)
{
    chunk k = {first, (const void *const *)out, 0};
    compare(&k, n, conv_part, HW_NCONV, t, threads);
}

void hw_compare_arith(int fmt, uint64_t first, size_t n, const uint16_t *const out[HW_NOPS],
                      hw_tally t[HW_NOPS], int threads)
{
    chunk k = {first, (const void *const *)out, fmt};
    compare(&k, n, arith_part, HW_NOPS, t, threads);
}
