/* Square root (IEEE 754-2019 §5.4.1), rounded once. */
#include "arith.h"

/* 128/sqrt(x) at the midpoints of x = i/32 .. (i+1)/32, i = 8..31: a start
 * for Newton's iteration good to about 5 bits. */
static const uint8_t rsqrt_start[24] = {
    248, 235, 223, 214, 205, 197, 190, 184, 178, 173, 168, 164,
    160, 156, 153, 149, 146, 143, 141, 138, 136, 133, 131, 129,
};

/* floor(sqrt(X * 4^K)) for X in [2^62, 2^64) and 0 <= K <= 28 (the root
 * has 32 + K bits), with *REM := X * 4^K - root^2, in [0, 2 * root].
 *
 * An approximation r of 1/sqrt(X / 2^64), in (1, 2], comes from the table
 * and four Newton steps r' = r * (3 - x*r^2) / 2 in fixed point (r * 2^61),
 * which leave an error of a few units of 2^-60; X * r / 2^32 is then sqrt(X)
 * within a unit or two of the root's last bit, and the exact remainder
 * corrects it.  The correction makes the result exact whatever the
 * approximation; the approximation only makes it quick. */
static uint64_t isqrt(uint64_t x, int k, fpki_u128 *rem)
{
    uint64_t r = (uint64_t)rsqrt_start[(x >> 59) - 8] << 54;
    for (int i = 0; i < 4; i++) {
        uint64_t r2 = (uint64_t)(((fpki_u128)r * r) >> 61);  /* r^2 * 2^61 */
        uint64_t xr2 = (uint64_t)(((fpki_u128)x * r2) >> 64); /* x r^2 * 2^61 */
        r = (uint64_t)(((fpki_u128)r * ((UINT64_C(3) << 61) - xr2)) >> 62);
    }
    uint64_t s = (uint64_t)(((fpki_u128)x * r) >> (93 - k));

    fpki_u128 n = (fpki_u128)x << 2 * k;
    fpki_u128 sq = (fpki_u128)s * s;
    while (sq > n) { /* (s - 1)^2 = s^2 - (2s - 1) */
        sq -= 2 * (fpki_u128)s - 1;
        s--;
    }
    fpki_u128 e = n - sq;
    while (e > 2 * (fpki_u128)s) { /* (s + 1)^2 = s^2 + 2s + 1 */
        e -= 2 * (fpki_u128)s + 1;
        s++;
    }
    *rem = e;
    return s;
}

fpk_bits fpk_sqrt(const fpk_format *f, fpk_bits a, fpk_ctx *c)
{
    fpki_unpacked x = fpki_unpack(f, a, c);
    if (fpki_is_nan_class(x.cls))
        return fpki_nan(f, x.cls == FPK_CLASS_SNAN, c);
    if (x.cls == FPK_CLASS_ZERO)
        return fpki_zero_result(f, x.sign, c); /* sqrt(-0) = -0 (§6.3) */
    if (x.sign)
        return fpki_nan(f, true, c); /* sqrt(x < 0), -inf included (§7.2) */
    if (x.cls == FPK_CLASS_INF)
        return fpki_inf(f, false, c);

    /* x = v * 2^exp with exp even and v in [2^62, 2^64): sqrt(x) =
     * sqrt(v * 4^k) * 2^(exp/2 - k). */
    uint64_t v = x.sig;
    int64_t exp = x.exp;
    if (exp & 1) {
        v <<= 1;
        exp -= 1;
    }
    int shift = fpki_clz64(v) & ~1;
    v <<= shift;
    exp -= shift;

    /* The core rounds with 2 bits below the last kept one, a guard bit and
     * a sticky bit: the root needs man_bits + 3 bits, and has at least 32.
     * SR reads 64 bits of the discarded fraction, so it gets 66 below the
     * last kept bit and the sticky bit below all of them: digits from
     * there on come one at a time, the remainder staying <= 2 * root. */
    int root_bits = f->man_bits + 3 > 32 ? f->man_bits + 3 : 32;
    int k = root_bits - 32;
    fpki_u128 rem;
    fpki_u128 root = isqrt(v, k, &rem);
    if (c->round == FPK_SR) {
        for (int i = root_bits; i < f->man_bits + 1 + 66; i++, k++) {
            rem <<= 2;
            fpki_u128 trial = root << 2 | 1; /* (2r+1)^2 - (2r)^2 = 4r + 1 */
            bool one = rem >= trial;
            rem -= trial & -(fpki_u128)one;
            root = root << 1 | one;
        }
    }
    return fpki_round_pack128(f, false, exp / 2 - k, root | (rem != 0), c);
}
