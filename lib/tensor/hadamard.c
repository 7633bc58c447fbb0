/* The 16-point random Hadamard transform of NVFP4 training (Transformer
 * Engine applies it to the inputs of the weight-gradient product): each
 * output an exact signed sum of the 16 inputs, divided by 4, rounded
 * once.  fpk_rht16, the general path, forms the sum in a fixed-point
 * accumulator wide enough for every float32 (2^-149 .. 2^128, with 4 bits
 * of carry for 16 terms), then rounded by the core; the recipes transform
 * rows with the kernels (rht-body.h), and by fpk_rht16 the runs those
 * cannot round exactly. */
#include <stdlib.h>
#include <string.h>

#include "fast-check.h"
#include "recipe-impl.h"

/* Bit 0 of the accumulator weighs 2^ACC_LSB: float32's least subnormal
 * over 4. */
#define ACC_LSB (-151)
#define ACC_LIMBS 5 /* 320 bits: 2^-151 .. 2^169 */

typedef struct acc {
    uint64_t w[ACC_LIMBS]; /* two's complement, least significant first */
} acc;

/* A += (or -= when NEG) SIG * 2^SHIFT, SIG < 2^24, SHIFT >= 0. */
static void acc_add(acc *a, uint64_t sig, int shift, bool neg)
{
    uint64_t t[ACC_LIMBS] = {0};
    int limb = shift / 64, bit = shift % 64;
    t[limb] = sig << bit;
    if (bit && limb + 1 < ACC_LIMBS)
        t[limb + 1] = sig >> (64 - bit);
    if (neg) { /* two's complement of T */
        uint64_t carry = 1;
        for (int i = 0; i < ACC_LIMBS; i++) {
            t[i] = ~t[i] + carry;
            carry = carry && t[i] == 0;
        }
    }
    uint64_t carry = 0;
    for (int i = 0; i < ACC_LIMBS; i++) {
        uint64_t s = a->w[i] + t[i];
        uint64_t c1 = s < t[i];
        a->w[i] = s + carry;
        carry = c1 | (a->w[i] < s);
    }
}

/* The accumulator's value rounded into F to nearest even, as float32. */
static uint32_t acc_round(acc *a, const fpk_format *f)
{
    bool neg = a->w[ACC_LIMBS - 1] >> 63;
    if (neg) {
        uint64_t carry = 1;
        for (int i = 0; i < ACC_LIMBS; i++) {
            a->w[i] = ~a->w[i] + carry;
            carry = carry && a->w[i] == 0;
        }
    }
    /* an exact zero sum is +0, as the sum of products is */
    fpk_bits z = fpki_limbs_round(a->w, ACC_LIMBS, ACC_LSB, neg, f);
    fpk_ctx c = fpk_ctx_default();
    return (uint32_t)fpk_convert(&fpk_fp32, f, z, &c);
}

void fpk_rht16(const float *x, uint16_t signs, const fpk_format *f, float *z)
{
    fpki_unpacked u[16];
    bool special = false;
    for (int i = 0; i < 16; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        u[i] = fpki_unpack(&fpk_fp32, b, NULL);
        special |= u[i].cls >= FPK_CLASS_INF;
    }
    for (int j = 0; j < 16; j++) {
        uint32_t out = UINT32_C(0x7fc00000);
        if (!special) {
            acc a = {{0}};
            for (int i = 0; i < 16; i++) {
                if (u[i].cls == FPK_CLASS_ZERO)
                    continue;
                bool neg = u[i].sign ^ (signs >> i & 1) ^ (__builtin_popcount(i & j) & 1);
                acc_add(&a, u[i].sig, u[i].exp - 2 - ACC_LSB, neg);
            }
            out = acc_round(&a, f);
        }
        memcpy(&z[j], &out, sizeof out);
    }
}

/* Runs of 16 a piece at a time: the kernels read a copy of the piece when
 * they write over their input. */
#define RHT_PIECE 1024

void fpki_rht_rows(const float *x, size_t n, uint16_t signs, float *z, fpki_recipe_path path)
{
    float in[RHT_PIECE];
    if (path.general) {
        for (size_t i = 0; i < n; i += 16) {
            memcpy(in, x + i, 16 * sizeof *in);
            fpk_rht16(in, signs, &fpk_bf16, z + i);
        }
        return;
    }
    fpki_rht16_fn *fn = fpki_rht16_fns[path.isa];
    uint8_t redo[RHT_PIECE / 16];
    fpki_fpenv env;
    fpki_fp_default(&env);
    for (size_t i = 0; i < n; i += RHT_PIECE) {
        size_t len = n - i < RHT_PIECE ? n - i : RHT_PIECE;
        const float *src = x + i;
        if (z == x) {
            memcpy(in, src, len * sizeof *in);
            src = in;
        }
        if (fn((const uint32_t *)(const void *)src, len, signs, fpk_bf16.man_bits + 1,
               (uint32_t *)(void *)(z + i), redo))
            for (size_t g = 0; g < len / 16; g++)
                if (redo[g])
                    fpk_rht16(src + 16 * g, signs, &fpk_bf16, z + i + 16 * g);
        /* a piece's first and last runs against the general path, which
         * costs far more per run than the kernels */
        FPKI_ASSERT(fpki_rht_agrees(src, len, signs, z + i, 2));
    }
    fpki_fp_restore(&env);
}
