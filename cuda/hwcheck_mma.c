/* fpk-hwcheck --mma: the tensor-core model (fpk_tc_dot_params) against
 * the GPU's matrix products, on random and adversarial 16 x 16 tiles (fp16,
 * bf16, tf32: hw_dev_mma) and dot products (FP8: hw_dev_dots), with each
 * architecture's published parameters and with measured ones. */
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

/* The dot products of one input: COUNT of N products, as 16 x 16 tiles of
 * K = N (dot x: row x % 256 / 16 of tile x / 256's A, column x % 16 of its
 * B) or one after the other; C and D indexed by x either way. */
typedef struct dots {
    const fpk_format *in;
    size_t count;
    int n;
    bool tiles;
    fpk_bits *a, *b;
    uint32_t *c, *d;
} dots;

static void dot_at(const dots *s, size_t x, const fpk_bits **row, const fpk_bits **col)
{
    size_t n = (size_t)s->n;
    if (s->tiles) {
        size_t t = x / 256, i = x % 256 / 16, j = x % 16;
        *row = s->a + (t * 16 + i) * n;
        *col = s->b + (t * 16 + j) * n;
    } else {
        *row = s->a + x * n;
        *col = s->b + x * n;
    }
}

static void dots_free(dots *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    free(s->d);
}

/* S's inputs for WHICH from R, in blocks of one kind each (tile or dot x
 * of kind x % 8): a block's rows of A and columns of B, then its c. */
static void generate(dots *s, hw_tc_input which, rng *r)
{
    int k = hw_tcs[which].k;
    size_t n = (size_t)s->n, per = s->tiles ? 16 : 1;
    for (size_t q = 0; q < s->count / (per * per); q++) {
        int kind = (int)(q % 8);
        for (size_t i = q * per; i < (q + 1) * per; i++)
            for (size_t j = 0; j < n; j += (size_t)k) {
                gen_vec(s->in, kind, false, r, k, s->a + i * n + j);
                gen_vec(s->in, kind, true, r, k, s->b + i * n + j);
            }
        for (size_t x = q * per * per; x < (q + 1) * per * per; x++) {
            const fpk_bits *row, *col;
            dot_at(s, x, &row, &col);
            s->c[x] = gen_c(s->in, kind, r, row, col);
        }
    }
}

/* The device's results for S: tiles in the WMMA layouts (tf32 in binary32
 * containers), or dots. */
static int run(dots *s, hw_tc_input which, char *msg, size_t len)
{
    if (!s->tiles)
        return hw_dev_dots(which, s->n, s->count, s->a, s->b, s->c, s->d, msg, len);
    bool tf32 = s->in == &fpk_tf32;
    size_t m = s->count / 256 * 16 * (size_t)s->n;
    void *ad = malloc(m * 4), *bd = malloc(m * 4);
    int rc = -1;
    if (!ad || !bd) {
        snprintf(msg, len, "out of memory for %zu tiles", s->count / 256);
    } else {
        for (size_t i = 0; i < m; i++) {
            if (tf32) {
                ((uint32_t *)ad)[i] = (uint32_t)s->a[i] << 13;
                ((uint32_t *)bd)[i] = (uint32_t)s->b[i] << 13;
            } else {
                ((uint16_t *)ad)[i] = (uint16_t)s->a[i];
                ((uint16_t *)bd)[i] = (uint16_t)s->b[i];
            }
        }
        rc = hw_dev_mma(s->in, s->count / 256, ad, bd, (const float *)s->c, (float *)s->d, msg,
                        len);
    }
    free(ad);
    free(bd);
    return rc;
}

/* Counts S's results into T over THREADS threads: against each
 * architecture's published set, MEASURED (or NULL), and in T->first
 * against REF (or NULL). */
static void compare(const dots *s, hw_tc_input which, const fpk_tc_params *measured,
                    const fpk_tc_params *ref, int threads, hw_mma_tally *t)
{
    fpk_tc_params pub[FPK_TC_ARCH_COUNT];
    bool has[FPK_TC_ARCH_COUNT];
    for (int arch = 0; arch < FPK_TC_ARCH_COUNT; arch++)
        has[arch] = hw_tc_published((fpk_tc_arch)arch, which, &pub[arch]);
    hw_mma_tally *parts = calloc((size_t)threads, sizeof *parts);
    if (!parts)
        abort();
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(threads)
#endif
    for (int p = 0; p < threads; p++) {
        hw_mma_tally *q = &parts[p];
        size_t lo = s->count * (size_t)p / (size_t)threads;
        size_t hi = s->count * (size_t)(p + 1) / (size_t)threads;
        for (size_t x = lo; x < hi; x++) {
            const fpk_bits *row, *col;
            dot_at(s, x, &row, &col);
            size_t n = (size_t)s->n;
            fpk_bits got = s->d[x];
            for (int arch = 0; arch < FPK_TC_ARCH_COUNT; arch++)
                if (has[arch])
                    q->agree[arch] += fpk_tc_dot_params(&pub[arch], s->in, &fpk_fp32, row, col,
                                                        n, s->c[x]) == got;
            if (measured)
                q->agree_measured +=
                    fpk_tc_dot_params(measured, s->in, &fpk_fp32, row, col, n, s->c[x]) == got;
            if (ref) {
                uint64_t ops[3] = {x / 256, x % 256, s->c[x]};
                fpk_bits want = fpk_tc_dot_params(ref, s->in, &fpk_fp32, row, col, n, s->c[x]);
                hw_tally_one(&q->first, &fpk_fp32, ops, false, want, got);
            }
        }
    }
    t->total += s->count;
    for (int p = 0; p < threads; p++) {
        for (int arch = 0; arch < FPK_TC_ARCH_COUNT; arch++)
            t->agree[arch] += parts[p].agree[arch];
        t->agree_measured += parts[p].agree_measured;
        hw_tally_merge(&t->first, &parts[p].first);
    }
    free(parts);
}

int hw_mma_check(const hw_device *d, size_t nt, uint64_t seed, int threads,
                 const fpk_tc_params *const measured[HW_NTC], hw_mma_tally t[HW_NTC], char *msg,
                 size_t len)
{
    fpk_tc_arch own = hw_tc_arch_of(d->major, d->minor);
    threads = threads < 1 ? 1 : threads;
    for (int which = 0; which < HW_NTC; which++) {
        if (!hw_tc_on(d, (hw_tc_input)which))
            continue;
        const hw_tc_desc *tc = &hw_tcs[which];
        bool fp8 = tc->in == &fpk_e4m3 || tc->in == &fpk_e5m2;
        /* FP8: 16 dot products a tile asked for (one tile's rows), along two
         * instructions, or two promotion intervals */
        dots s = {.in = tc->in,
                  .count = fp8 ? nt * 16 : nt * 256,
                  .n = !fp8 ? tc->k : tc->promote ? 2 * tc->promote : 2 * tc->k,
                  .tiles = !fp8};
        size_t rows = s.tiles ? s.count / 16 : s.count;
        s.a = malloc(rows * (size_t)s.n * sizeof *s.a);
        s.b = malloc(rows * (size_t)s.n * sizeof *s.b);
        s.c = malloc(s.count * sizeof *s.c);
        s.d = malloc(s.count * sizeof *s.d);
        if (!s.a || !s.b || !s.c || !s.d) {
            snprintf(msg, len, "out of memory for %zu %s dot products", s.count, tc->name);
            dots_free(&s);
            return -1;
        }
        rng r = {seed ^ (uint64_t)which << 56};
        generate(&s, (hw_tc_input)which, &r);
        int rc = run(&s, (hw_tc_input)which, msg, len);
        if (rc == 0) {
            fpk_tc_params ref;
            const fpk_tc_params *m = measured ? measured[which] : NULL;
            bool has_ref = m || hw_tc_published(own, (hw_tc_input)which, &ref);
            compare(&s, (hw_tc_input)which, m, m ? m : has_ref ? &ref : NULL, threads, &t[which]);
        }
        dots_free(&s);
        if (rc != 0)
            return -1;
    }
    return 0;
}
