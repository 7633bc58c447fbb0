/* fpk-hwcheck --mma: the tensor-core model (fpk_tc_dot) against the GPU's
 * matrix products, on random and adversarial 16 x 16 tiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcheck.h"

typedef struct rng {
    uint64_t s;
} rng;

/* SplitMix64 (Steele, Lea, Flood 2014). */
static uint64_t next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int between(rng *r, int lo, int hi)
{
    return lo + (int)(next(r) % (uint64_t)(hi - lo + 1));
}

/* A finite encoding of F of exponent E (below emin: subnormal, or zero),
 * a random significand, TOP bits of it forced to ones, and sign NEG. */
static fpk_bits make(const fpk_format *f, rng *r, int e, int top, bool neg)
{
    int m = f->man_bits;
    fpk_bits man = next(r) & f->man_mask;
    if (top > 0)
        man |= f->man_mask & ~(f->man_mask >> (top < m ? top : m));
    int field = e + f->bias;
    int most = (int)(f->max_finite >> m);
    if (field > most)
        field = most;
    if (field < 1) {
        int shift = 1 - field;
        man = shift > m ? 0 : (man | (fpk_bits)1 << m) >> shift;
        field = 0;
    }
    return (neg ? f->sign_mask : 0) | (fpk_bits)field << m | man;
}

static fpk_bits gen(const fpk_format *f, rng *r, int lo, int hi)
{
    return make(f, r, between(r, lo, hi), 0, next(r) & 1);
}

/* The binary32 bits of a*b, exact (products of these inputs fit). */
static uint32_t product32(const fpk_format *in, fpk_bits a, fpk_bits b)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits x = fpk_convert(&fpk_fp32, in, a, &c), y = fpk_convert(&fpk_fp32, in, b, &c);
    return (uint32_t)fpk_mul(&fpk_fp32, x, y, &c);
}

/* The tiles, by kind: 0 random, 1 one large product and the rest at the
 * window's edge, 2 a dominant accumulator, 3 c cancelling the first product
 * exactly, 4 products cancelling in pairs, 5 carries (significands near 2,
 * one sign), 6 subnormal inputs, 7 a leading product in [2, 4) against c of
 * its exponent.  A row of A (or, with COL, a column of B) of K entries: */
static void gen_vec(const fpk_format *in, int kind, bool col, rng *r, int k, fpk_bits *v)
{
    int sub = in->emin - in->man_bits; /* exponent of the least subnormal */
    int small_lo = -30 > sub ? -30 : sub;
    for (int i = 0; i < k; i++)
        v[i] = gen(in, r, -3, 3);
    switch (kind) {
    case 1:
    case 3:
    case 7:
        if (col)
            for (int i = 1; i < k; i++)
                v[i] = gen(in, r, small_lo, kind == 1 ? -18 : -20);
        if (kind == 7)
            v[0] = make(in, r, 0, 1, false);
        break;
    case 2:
        for (int i = 0; i < k; i++)
            v[i] = col ? gen(in, r, -26 > sub ? -26 : sub, -16) : gen(in, r, -1, 1);
        break;
    case 4:
        for (int i = 0; i + 1 < k; i += 2)
            v[i + 1] = col ? v[i] ^ in->sign_mask : v[i];
        if (col)
            v[k - 1] = gen(in, r, -24 > sub ? -24 : sub, -12);
        break;
    case 5:
        for (int i = 0; i < k; i++)
            v[i] = make(in, r, 0, 3, false);
        break;
    case 6:
        for (int i = 0; i < k; i++)
            v[i] = col ? gen(in, r, -2, 2) : gen(in, r, sub, in->emin + 2);
        break;
    default:
        break;
    }
}

/* ... and the accumulator of row A and column B. */
static uint32_t gen_c(const fpk_format *in, int kind, rng *r, const fpk_bits *a,
                      const fpk_bits *b)
{
    const fpk_format *f32 = &fpk_fp32;
    switch (kind) {
    case 1: return next(r) % 2 ? 0 : (uint32_t)gen(f32, r, -28, -20);
    case 2: return (uint32_t)gen(f32, r, 1, 3);
    case 3: return product32(in, a[0], b[0]) ^ 0x80000000u;
    case 5: return (uint32_t)make(f32, r, between(r, 1, 5), 8, false);
    case 6: return (uint32_t)(next(r) % 2 ? gen(f32, r, -149, -126) : gen(f32, r, -40, -10));
    case 7: /* at or just off the product */
        return (product32(in, a[0], b[0]) ^ 0x80000000u) ^ (uint32_t)(next(r) % 4);
    default: return next(r) % 8 ? (uint32_t)gen(f32, r, -6, 6) : 0;
    }
}

static void free_all(void **p, int n)
{
    for (int i = 0; i < n; i++)
        free(p[i]);
}

/* The architecture whose model describes compute capability MAJOR.MINOR
 * (the nearest for one newer than Hopper). */
static fpk_tc_arch device_arch(int major, int minor)
{
    if (major < 8)
        return major == 7 && minor >= 5 ? FPK_TC_TURING : FPK_TC_VOLTA;
    return major == 8 ? FPK_TC_AMPERE : FPK_TC_HOPPER;
}

int hw_mma_check(const hw_device *d, size_t nt, uint64_t seed, int threads,
                 uint64_t agree[3][FPK_TC_ARCH_COUNT], uint64_t total[3], hw_tally first[3],
                 char *msg, size_t len)
{
    const fpk_format *ins[3] = {&fpk_fp16, &fpk_bf16, &fpk_tf32};
    bool have[3] = {true, d->ampere, d->ampere};
    fpk_tc_arch own = device_arch(d->major, d->minor);
    threads = threads < 1 ? 1 : threads;
    for (int fi = 0; fi < 3; fi++) {
        if (!have[fi])
            continue;
        const fpk_format *in = ins[fi];
        bool tf32 = in == &fpk_tf32;
        int k = tf32 ? 8 : 16;
        size_t per = 16 * (size_t)k;
        /* A and B as encodings, C and D as binary32 bits, A and B as the
         * device takes them */
        void *buf[6] = {malloc(nt * per * sizeof(fpk_bits)), malloc(nt * per * sizeof(fpk_bits)),
                        malloc(nt * 256 * 4), malloc(nt * 256 * 4), malloc(nt * per * 4),
                        malloc(nt * per * 4)};
        fpk_bits *a = buf[0], *b = buf[1];
        uint32_t *c = buf[2], *dd = buf[3];
        void *ad = buf[4], *bd = buf[5];
        if (!a || !b || !c || !dd || !ad || !bd) {
            snprintf(msg, len, "out of memory for %zu tiles", nt);
            free_all(buf, 6);
            return -1;
        }
        rng r = {seed ^ (uint64_t)fi << 56};
        for (size_t t = 0; t < nt; t++) {
            int kind = (int)(t % 8);
            for (int i = 0; i < 16; i++) {
                gen_vec(in, kind, false, &r, k, &a[t * per + (size_t)i * k]);
                gen_vec(in, kind, true, &r, k, &b[t * per + (size_t)i * k]);
            }
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++)
                    c[t * 256 + (size_t)i * 16 + j] = gen_c(in, kind, &r, &a[t * per + (size_t)i * k],
                                                            &b[t * per + (size_t)j * k]);
        }
        for (size_t i = 0; i < nt * per; i++) {
            if (tf32) {
                ((uint32_t *)ad)[i] = (uint32_t)a[i] << 13;
                ((uint32_t *)bd)[i] = (uint32_t)b[i] << 13;
            } else {
                ((uint16_t *)ad)[i] = (uint16_t)a[i];
                ((uint16_t *)bd)[i] = (uint16_t)b[i];
            }
        }
        int rc = hw_dev_mma(in, nt, ad, bd, (const float *)c, (float *)dd, msg, len);
        if (rc == 0) {
            uint64_t(*ag)[FPK_TC_ARCH_COUNT] = calloc((size_t)threads, sizeof *ag);
            hw_tally *parts = calloc((size_t)threads, sizeof *parts);
            if (!ag || !parts)
                abort();
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(threads)
#endif
            for (int p = 0; p < threads; p++) {
                size_t lo = nt * (size_t)p / (size_t)threads;
                size_t hi = nt * (size_t)(p + 1) / (size_t)threads;
                for (size_t t = lo; t < hi; t++)
                    for (int i = 0; i < 16; i++)
                        for (int j = 0; j < 16; j++) {
                            const fpk_bits *row = &a[t * per + (size_t)i * k];
                            const fpk_bits *col = &b[t * per + (size_t)j * k];
                            fpk_bits cij = c[t * 256 + (size_t)i * 16 + j];
                            fpk_bits got = dd[t * 256 + (size_t)i * 16 + j];
                            for (int arch = 0; arch < FPK_TC_ARCH_COUNT; arch++) {
                                if (!fpk_tc_terms((fpk_tc_arch)arch, in, &fpk_fp32))
                                    continue;
                                fpk_bits want = fpk_tc_dot((fpk_tc_arch)arch, in, &fpk_fp32,
                                                           row, col, (size_t)k, cij);
                                ag[p][arch] += want == got;
                                if (arch == (int)own) {
                                    uint64_t ops[3] = {t, (uint64_t)(i * 16 + j), cij};
                                    hw_tally_one(&parts[p], &fpk_fp32, ops, false, want, got);
                                }
                            }
                        }
            }
            for (int p = 0; p < threads; p++) {
                for (int arch = 0; arch < FPK_TC_ARCH_COUNT; arch++)
                    agree[fi][arch] += ag[p][arch];
                hw_tally_merge(&first[fi], &parts[p]);
            }
            total[fi] += nt * 256;
            free(ag);
            free(parts);
        }
        free_all(buf, 6);
        if (rc != 0)
            return -1;
    }
    return 0;
}
