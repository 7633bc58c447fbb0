/* The AVX2 kernel set (AVX2, BMI2, F16C, FMA and POPCNT), whatever the build flags:
 * array-kern.h's bodies, and kernels of its own for the five kernel
 * formats under RNE, RTZ and SR (near8), fp16 with tininess before
 * rounding (F16C), the statistics of magnitudes and their SR fix-up, and
 * the squared errors of fake quantisation under RNE and RTZ.
 *
 * F16C's vcvtps2ph, with the rounding mode in its immediate (so MXCSR's
 * mode, FTZ and DAZ play no part), gives the correctly rounded fp16
 * encoding of every input, NaN payloads included, so only NaNs need
 * fixing up (to the canonical NaN); the flags come from integer compares
 * and the exact round trip vcvtph2ps.  near8 is faster where both apply. */
#include <string.h>

#include "array-kern.h"
#include "array-kern-x86.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,f16c,fma,popcnt")))

TARGET_AVX2 static void store_avx2(void *z, size_t i, const uint32_t *block, size_t n,
                                   size_t size, bool stream)
{
    if (!stream) {
        fpki_store_plain(z, i, block, n, size);
        return;
    }
    uint32_t t[FPKI_BLOCK] __attribute__((aligned(32)));
    fpki_narrow(block, t, size);
    uint8_t *dst = (uint8_t *)z + size * i;
    for (size_t b = 0; b < size * FPKI_BLOCK; b += 32)
        _mm256_stream_si256((__m256i *)(dst + b),
                            _mm256_load_si256((const __m256i *)((const uint8_t *)t + b)));
}

/* F16C, 8 elements at a time; the head before Z's alignment and the tail
 * go through the integer kernel. */
TARGET_AVX2 static inline __attribute__((always_inline)) unsigned
f16c_avx2(const fpki_conv *p, const uint32_t *x, void *z, size_t n, bool stream, bool rtz)
{
    size_t width = p->quant ? 4 : 2;
    size_t head = stream ? fpki_stream_head(z, width) : 0;
    if (head == SIZE_MAX)
        head = 0, stream = false;
    if (head > n)
        head = n;
    unsigned fl = fpki_conv_any(p, x, z, head, 0, false, store_avx2);
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i quiet = _mm256_set1_epi32(0x400000), zero = _mm256_setzero_si256();
    const __m256i of_at = _mm256_set1_epi32((int)((rtz ? F16C_OF_RTZ : F16C_OF_RNE) - 1));
    const __m256i tiny = _mm256_set1_epi32(
        (int)(p->tiny_before || rtz ? F16C_MIN_NORMAL : F16C_TINY_RNE));
    const __m128i hmag = _mm_set1_epi16(0x7fff), hinf = _mm_set1_epi16(0x7c00);
    const __m128i hnan = _mm_set1_epi16(F16C_NAN);
    __m256i ix = zero, uf = zero, of = zero, inv = zero;
    size_t i = head;
    for (; n - i >= 8; i += 8) {
        if (i % 16 == 0)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m256i xi = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i a = _mm256_and_si256(xi, mag);
        __m128i h = rtz ? _mm256_cvtps_ph(_mm256_castsi256_ps(xi),
                                          _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
                        : _mm256_cvtps_ph(_mm256_castsi256_ps(xi),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m128i hnanm = _mm_cmpgt_epi16(_mm_and_si128(h, hmag), hinf);
        h = _mm_blendv_epi8(h, hnan, hnanm);
        __m256i back = _mm256_castps_si256(_mm256_cvtph_ps(h));
        __m256i fin = _mm256_cmpgt_epi32(inf, a), isnan = _mm256_cmpgt_epi32(a, inf);
        __m256i ixv = _mm256_andnot_si256(_mm256_cmpeq_epi32(back, xi), fin);
        ix = _mm256_or_si256(ix, ixv);
        of = _mm256_or_si256(of, _mm256_and_si256(fin, _mm256_cmpgt_epi32(a, of_at)));
        uf = _mm256_or_si256(uf, _mm256_and_si256(ixv, _mm256_cmpgt_epi32(tiny, a)));
        inv = _mm256_or_si256(
            inv, _mm256_and_si256(isnan, _mm256_cmpeq_epi32(_mm256_and_si256(a, quiet), zero)));
        if (p->quant) {
            __m256i *dst = (__m256i *)((uint32_t *)z + i);
            if (stream)
                _mm256_stream_si256(dst, back);
            else
                _mm256_storeu_si256(dst, back);
        } else {
            __m128i *dst = (__m128i *)((uint16_t *)z + i);
            if (stream)
                _mm_stream_si128(dst, h);
            else
                _mm_storeu_si128(dst, h);
        }
    }
    fl |= kern_flags(!_mm256_testz_si256(ix, ix), !_mm256_testz_si256(uf, uf),
                     !_mm256_testz_si256(of, of), !_mm256_testz_si256(inv, inv));
    return fl | fpki_conv_any(p, x + i, (uint8_t *)z + width * i, n - i, 0, false, store_avx2);
}

/* The AVX2 kernel for the five kernel formats under RNE, RTZ and SR
 * without options (near8): near16's (array_kern_avx512.c) eight lanes
 * wide.  Under RNE, formats with float32's exponent range round in the
 * integers, the others by the vector unit (adding C, as near_round does:
 * the kernels run in the default floating-point environment, whose
 * rounding is to nearest even, and DAZ cannot matter); under SR those
 * round in the integers as fpki_conv1 does, under RTZ by a mask and a
 * truncating conversion (AVX2 has no rounding mode in the instruction of
 * an add).  A line of 32 bytes of output at a time; the
 * flags from running minima, and overflows, infinities and NaNs only in
 * the lines that hold one. */
typedef struct near8_consts {
    near_scalars k;
    __m256i mag, inf, low, high, half, one, rebias, min_normal, tiny, maxf_up, max32, quiet;
    __m256i of_val, inf_val, nan_val, d0_exp, rebias_c;
    __m256i man, hidden, sub_dd, rebias32, d0v, tiny_away, min_sub32, max_val;
    __m256 sub_scale;
    /* SR: the seed, and the shift to the random bits used */
    __m256i seed_mix;
    __m128i sr_shift;
} near8_consts;

TARGET_AVX2 static inline __attribute__((always_inline)) near8_consts
near8_setup(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv *p)
{
    near8_consts c;
    const near_scalars k = c.k = near_scalars_of(f, mode, quant);
    c.mag = _mm256_set1_epi32((int)FPKI_F32_MAG);
    c.inf = _mm256_set1_epi32((int)FPKI_F32_INF);
    c.low = _mm256_set1_epi32((int)k.low);
    c.high = _mm256_set1_epi32((int)k.high);
    c.half = _mm256_set1_epi32((int)k.half);
    c.one = _mm256_set1_epi32(1);
    c.rebias = _mm256_set1_epi32((int)k.rebias);
    c.min_normal = _mm256_set1_epi32((int)k.min_normal);
    c.tiny = _mm256_set1_epi32((int)k.tiny);
    c.maxf_up = _mm256_set1_epi32((int)(k.maxf + 1));
    c.max32 = _mm256_set1_epi32((int)k.max32);
    c.quiet = _mm256_set1_epi32((int)FPKI_F32_QUIET);
    c.of_val = _mm256_set1_epi32((int)k.of_val);
    c.inf_val = _mm256_set1_epi32((int)k.inf_val);
    c.nan_val = _mm256_set1_epi32((int)k.nan_val);
    c.d0_exp = _mm256_set1_epi32((int)k.d0_exp);
    c.rebias_c = _mm256_set1_epi32((int)k.rebias_c);
    c.man = _mm256_set1_epi32(0x7fffff);
    c.hidden = _mm256_set1_epi32(0x800000);
    c.sub_dd = _mm256_set1_epi32((int)k.sub_dd);
    c.rebias32 = _mm256_set1_epi32((int)k.rebias32);
    c.d0v = _mm256_set1_epi32(k.d0);
    c.tiny_away = _mm256_set1_epi32((int)k.tiny_away);
    c.min_sub32 = _mm256_set1_epi32((int)k.min_sub32);
    c.max_val = _mm256_set1_epi32((int)k.max_val);
    c.sub_scale = _mm256_castsi256_ps(_mm256_set1_epi32((int)k.sub_scale));
    c.seed_mix = _mm256_set1_epi64x((long long)(k.sr ? p->seed_mix : 0));
    c.sr_shift = _mm_cvtsi32_si128(k.sr ? p->sr_shift : 0);
    return c;
}

/* The flags near8 finds, as lane masks. */
typedef struct near8_flags {
    __m256i ix, uf, of, inv;
} near8_flags;

/* A >= B for unsigned 32-bit lanes. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i cmpge_epu32(__m256i a, __m256i b)
{
    return _mm256_cmpeq_epi32(_mm256_max_epu32(a, b), a);
}

/* The integer rounding's operands for the 8 magnitudes A where F has
 * exponents below float32's (fpki_conv1's): *DD bits of *V are discarded,
 * *SIG is A's significand with its hidden bit.  DD may exceed 31, where
 * AVX2's variable shifts give zeros, as fpki_conv1 wants. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
int8_operands(const near8_consts *c, __m256i a, __m256i *dd, __m256i *v, __m256i *sig)
{
    __m256i ef = _mm256_srli_epi32(a, 23), man = _mm256_and_si256(a, c->man);
    __m256i sub = _mm256_cmpgt_epi32(c->min_normal, a);
    *sig = _mm256_or_si256(
        man, _mm256_andnot_si256(_mm256_cmpeq_epi32(ef, _mm256_setzero_si256()), c->hidden));
    *dd = _mm256_blendv_epi8(c->d0v, _mm256_sub_epi32(c->sub_dd, _mm256_max_epu32(ef, c->one)),
                             sub);
    *v = _mm256_blendv_epi8(_mm256_sub_epi32(a, c->rebias32), *sig, sub);
}

/* Rounds the 8 magnitudes A under RNE or RTZ: *K gets the encodings'
 * magnitudes, *Q their values as float32 (both right where A is at most
 * max32; *K above max finite, unsigned, where A rounds above it): as
 * near_round, but for RTZ where F has exponents below float32's, which
 * truncates normals by a mask and subnormals (of F) by float32's
 * truncating conversion of A over F's least subnormal (the scalings, by
 * powers of two, are exact; the quotient is below 2^man_bits). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
round8(const near8_consts *c, __m256i a, __m256i *k, __m256i *q)
{
    if (c->k.subs && !c->k.rne) {
        __m256i sub = _mm256_cmpgt_epi32(c->min_normal, a);
        __m256i ks = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), c->sub_scale));
        __m256 qs = _mm256_mul_ps(_mm256_cvtepi32_ps(ks), _mm256_castsi256_ps(c->min_sub32));
        *k = _mm256_blendv_epi8(
            _mm256_sub_epi32(_mm256_srli_epi32(a, (unsigned)c->k.d0), c->rebias), ks, sub);
        *q = _mm256_blendv_epi8(_mm256_and_si256(a, c->high), _mm256_castps_si256(qs), sub);
        return;
    }
    if (c->k.subs) {
        __m256i cv = _mm256_add_epi32(
            _mm256_and_si256(_mm256_max_epu32(a, c->min_normal), c->inf), c->d0_exp);
        __m256 cf = _mm256_castsi256_ps(cv);
        __m256 sum = _mm256_add_ps(_mm256_castsi256_ps(a), cf);
        __m256i n = _mm256_sub_epi32(_mm256_castps_si256(sum), cv);
        *k = _mm256_add_epi32(n, _mm256_sub_epi32(_mm256_srli_epi32(cv, (unsigned)c->k.d0),
                                                  c->rebias_c));
        *q = _mm256_castps_si256(_mm256_sub_ps(sum, cf));
        return;
    }
    __m256i t = a;
    if (c->k.rne)
        t = _mm256_add_epi32(_mm256_add_epi32(a, c->half),
                             _mm256_and_si256(_mm256_srli_epi32(a, (unsigned)c->k.d0), c->one));
    *k = _mm256_sub_epi32(_mm256_srli_epi32(t, (unsigned)c->k.d0), c->rebias);
    *q = _mm256_and_si256(t, c->high);
}

/* The low 64 bits of the products of the 64-bit lanes of A with the
 * constant whose halves are in the low dwords of LO and HI (AVX2 has no
 * vpmullq). */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i mul64(__m256i a, __m256i lo,
                                                                      __m256i hi)
{
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), lo),
                                     _mm256_mul_epu32(a, hi));
    return _mm256_add_epi64(_mm256_mul_epu32(a, lo), _mm256_slli_epi64(cross, 32));
}

/* fpk_sr_hash's mixing of the four words W (counters times
 * FPKI_SR_GOLDEN plus FPKI_SR_OFFSET), but for its last step. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i hash4(__m256i w, __m256i seed_mix)
{
    const uint64_t m1 = 0xbf58476d1ce4e5b9u, m2 = 0x94d049bb133111ebu;
    const __m256i m1lo = _mm256_set1_epi64x((long long)m1),
                  m1hi = _mm256_set1_epi64x((long long)(m1 >> 32));
    const __m256i m2lo = _mm256_set1_epi64x((long long)m2),
                  m2hi = _mm256_set1_epi64x((long long)(m2 >> 32));
    __m256i z = _mm256_xor_si256(seed_mix, w);
    z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), m1lo, m1hi);
    return mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), m2lo, m2hi);
}

/* fpki_sr_bits(seed, CTR + i) in lane i, for 8 counters: the hashes of
 * elements 0, 1, 4, 5 and of 2, 3, 6, 7, four at a time, so that one
 * shuffle of their high halves puts them in order, and the last step
 * taken on those (the high half of Z ^ (Z >> 31) is H ^ (H >> 31)). */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i rnd8(__m256i seed_mix,
                                                                      uint64_t ctr)
{
    const uint64_t g = FPKI_SR_GOLDEN;
    __m256i base = _mm256_set1_epi64x((long long)(ctr * g + FPKI_SR_OFFSET));
    __m256i w0 = _mm256_add_epi64(
        base, _mm256_set_epi64x((long long)(5 * g), (long long)(4 * g), (long long)g, 0));
    __m256i w1 = _mm256_add_epi64(base, _mm256_set_epi64x((long long)(7 * g), (long long)(6 * g),
                                                          (long long)(3 * g), (long long)(2 * g)));
    __m256i hi = _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(hash4(w0, seed_mix)),
                                                       _mm256_castsi256_ps(hash4(w1, seed_mix)),
                                                       _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_xor_si256(hi, _mm256_srli_epi32(hi, 31));
}

/* Stochastic rounding of the 8 magnitudes A (signs S), the first with
 * counter CTR, as fpki_conv1 rounds them; the results of overflows,
 * infinities and NaNs wrong, and *INC the lanes rounded up. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
sr8(const near8_consts *c, __m256i a, __m256i s, uint64_t ctr, __m256i *k, __m256i *inc,
    __m256i *inexact, near8_flags *fl)
{
    const __m256i one = c->one, zero = _mm256_setzero_si256();
    const __m256i thirty_two = _mm256_set1_epi32(32), flip = _mm256_set1_epi32(INT32_MIN);
    /* DD bits of V go; FRAC: the top 32 bits of the fraction of an ulp
     * they make */
    __m256i kept, disc, frac, dd = c->d0v;
    if (!c->k.subs) {
        kept = _mm256_srli_epi32(a, (unsigned)c->k.d0);
        disc = _mm256_and_si256(a, c->low);
        frac = _mm256_slli_epi32(disc, (unsigned)(32 - c->k.d0));
    } else {
        __m256i v, sig;
        int8_operands(c, a, &dd, &v, &sig);
        kept = _mm256_srlv_epi32(v, dd);
        disc = _mm256_and_si256(v, _mm256_sub_epi32(_mm256_sllv_epi32(one, dd), one));
        frac = _mm256_or_si256(_mm256_sllv_epi32(disc, _mm256_sub_epi32(thirty_two, dd)),
                               _mm256_srlv_epi32(sig, _mm256_sub_epi32(dd, thirty_two)));
    }
    __m256i rnd = rnd8(c->seed_mix, ctr);
    /* rnd < frac in the bits used, unsigned: none where nothing is discarded */
    *inc = _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_srl_epi32(frac, c->sr_shift), flip),
                              _mm256_xor_si256(_mm256_srl_epi32(rnd, c->sr_shift), flip));
    *inexact = _mm256_xor_si256(_mm256_cmpeq_epi32(disc, zero), _mm256_set1_epi32(-1));
    *k = _mm256_sub_epi32(kept, *inc);
    __m256i tiny_up = _mm256_and_si256(*inc, _mm256_cmpgt_epi32(c->tiny_away, a));
    __m256i tiny_down = _mm256_andnot_si256(*inc, _mm256_cmpgt_epi32(c->min_normal, a));
    fl->uf =
        _mm256_or_si256(fl->uf, _mm256_and_si256(*inexact, _mm256_or_si256(tiny_up, tiny_down)));
    if (!c->k.quant)
        return _mm256_or_si256(*k, _mm256_srli_epi32(s, c->k.sign_shift));
    /* the value: A with the discarded bits cleared and the increment
     * added, or below F's grid (DD > 23) zero or the least subnormal */
    __m256i up = _mm256_and_si256(*inc, one), r;
    if (!c->k.subs) {
        r = _mm256_slli_epi32(_mm256_add_epi32(_mm256_srli_epi32(a, (unsigned)c->k.d0), up),
                              (unsigned)c->k.d0);
    } else {
        r = _mm256_sllv_epi32(_mm256_add_epi32(_mm256_srlv_epi32(a, dd), up), dd);
        r = _mm256_blendv_epi8(r, _mm256_and_si256(*inc, c->min_sub32),
                               _mm256_cmpgt_epi32(dd, _mm256_set1_epi32(23)));
    }
    return _mm256_or_si256(r, s);
}

/* The results of the 8 elements at X, the first with SR counter CTR. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
near8(const near8_consts *c, const uint32_t *x, uint64_t ctr, near8_flags *fl)
{
    const __m256i ones = _mm256_set1_epi32(-1);
    __m256i xi = _mm256_loadu_si256((const __m256i *)x);
    __m256i a = _mm256_and_si256(xi, c->mag), s = _mm256_andnot_si256(c->mag, xi);
    __m256i sv = c->k.quant ? s : _mm256_srli_epi32(s, c->k.sign_shift);
    __m256i kv, r, inc = _mm256_setzero_si256(), inexact;
    if (c->k.sr) {
        r = sr8(c, a, s, ctr, &kv, &inc, &inexact, fl);
    } else {
        __m256i qv;
        round8(c, a, &kv, &qv);
        inexact = _mm256_xor_si256(_mm256_cmpeq_epi32(qv, a), ones);
        fl->uf = _mm256_or_si256(fl->uf, _mm256_and_si256(inexact, _mm256_cmpgt_epi32(c->tiny, a)));
        r = _mm256_or_si256(c->k.quant ? qv : kv, sv);
    }
    /* Overflows, infinities and NaNs (all above max finite), seldom:
     * their results replace the others. */
    __m256i rare = _mm256_cmpgt_epi32(a, c->max32);
    if (__builtin_expect(!_mm256_testz_si256(rare, rare), 0)) {
        __m256i special = _mm256_cmpgt_epi32(a, _mm256_sub_epi32(c->inf, c->one));
        __m256i of =
            _mm256_andnot_si256(special, _mm256_and_si256(rare, cmpge_epu32(kv, c->maxf_up)));
        __m256i isinf = _mm256_cmpeq_epi32(a, c->inf);
        __m256i isnan = _mm256_andnot_si256(isinf, special);
        __m256i inf_val = c->k.inf_enc ? _mm256_or_si256(c->inf_val, sv) : c->inf_val;
        inexact = _mm256_andnot_si256(special, inexact);
        fl->of = _mm256_or_si256(fl->of, of);
        if (!c->k.inf_enc)
            fl->inv = _mm256_or_si256(fl->inv, isinf);
        fl->inv = _mm256_or_si256(
            fl->inv, _mm256_and_si256(isnan, _mm256_cmpeq_epi32(_mm256_and_si256(a, c->quiet),
                                                                _mm256_setzero_si256())));
        if (c->k.sr) {
            /* up, or exact: to infinity; else to max finite */
            __m256i to_inf =
                _mm256_and_si256(of, _mm256_or_si256(inc, _mm256_xor_si256(inexact, ones)));
            r = _mm256_blendv_epi8(r, _mm256_or_si256(c->max_val, sv),
                                   _mm256_andnot_si256(to_inf, of));
            r = _mm256_blendv_epi8(r, inf_val, _mm256_or_si256(to_inf, isinf));
        } else {
            r = _mm256_blendv_epi8(r, c->k.of_signed ? _mm256_or_si256(c->of_val, sv) : c->of_val,
                                   of);
            r = _mm256_blendv_epi8(r, inf_val, isinf);
        }
        r = _mm256_blendv_epi8(r, c->nan_val, isnan);
    }
    fl->ix = _mm256_or_si256(fl->ix, inexact);
    return r;
}

/* near8 for 8 elements under RNE or RTZ, the common case only: right
 * unless a magnitude is above max32, which the lanes' largest magnitudes
 * so far in *TOP tell; the least inexact magnitudes so far are in *LEAST
 * (exact ones read as all ones; the inexact and underflow flags at the
 * end). */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
near8_common(const near8_consts *c, const uint32_t *x, __m256i *top, __m256i *least)
{
    __m256i xi = _mm256_loadu_si256((const __m256i *)x), a = _mm256_and_si256(xi, c->mag), kv, qv;
    round8(c, a, &kv, &qv);
    *least = _mm256_min_epu32(*least, _mm256_or_si256(a, _mm256_cmpeq_epi32(qv, a)));
    *top = _mm256_max_epi32(*top, a);
    __m256i s = _mm256_andnot_si256(c->mag, xi);
    return c->k.quant ? _mm256_or_si256(qv, s)
                    : _mm256_or_si256(kv, _mm256_srli_epi32(s, c->k.sign_shift));
}

/* The results for the 32 bytes of output at X (of SIZE bytes each):
 * near8_common where no element is rare, near8 where one is and under
 * SR. */
TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
near8_line(const near8_consts *c, const uint32_t *x, size_t size, uint64_t ctr, __m256i *least,
           near8_flags *fl)
{
    const int nv = size == 1 ? 4 : size == 2 ? 2 : 1;
    __m256i r[4];
    if (!c->k.sr) {
        __m256i top = _mm256_setzero_si256(), lst = _mm256_set1_epi32(-1);
        for (int v = 0; v < nv; v++)
            r[v] = near8_common(c, x + 8 * v, &top, &lst);
        __m256i rare = _mm256_cmpgt_epi32(top, c->max32);
        if (__builtin_expect(_mm256_testz_si256(rare, rare), 1))
            *least = _mm256_min_epu32(*least, lst);
        else
            for (int v = 0; v < nv; v++)
                r[v] = near8(c, x + 8 * v, 0, fl);
    } else
        for (int v = 0; v < nv; v++)
            r[v] = near8(c, x + 8 * v, ctr + 8 * (uint64_t)v, fl);
    /* packs with unsigned saturation (every result fits), which work
     * within 128-bit lanes, then a permute back into order */
    if (size == 1)
        return _mm256_permutevar8x32_epi32(
            _mm256_packus_epi16(_mm256_packus_epi32(r[0], r[1]), _mm256_packus_epi32(r[2], r[3])),
            _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if (size == 2)
        return _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xd8);
    return r[0];
}

/* The N < 64 elements at X into Z (SIZE bytes each) by near8, through a
 * buffer padded with zeros (which raise nothing). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
near8_part(const near8_consts *c, const uint32_t *x, void *z, size_t n, uint64_t ctr,
           size_t size, near8_flags *fl)
{
    uint32_t in[64], out[64];
    memset(in, 0, sizeof in);
    memcpy(in, x, 4 * n);
    for (size_t i = 0; i < n; i += 8)
        _mm256_storeu_si256((__m256i *)(out + i), near8(c, in + i, ctr + i, fl));
    fpki_store_plain(z, 0, out, n, size);
}

/* X[0..N-1] into Z under F and MODE (near8), a line of Z at a time with
 * non-temporal stores when STREAM, after the head before its alignment;
 * returns the flags. */
TARGET_AVX2 static inline __attribute__((always_inline)) unsigned
near_avx2(const fpk_format *f, fpk_round mode, bool quant, const fpki_conv *p, const uint32_t *x,
          void *z, size_t n, uint64_t index, bool stream)
{
    const near8_consts c = near8_setup(f, mode, quant, p);
    const size_t size = quant ? 4 : f->width <= 8 ? 1 : f->width <= 16 ? 2 : 4;
    const size_t line = 32 / size;
    size_t head = stream ? fpki_stream_head(z, size) : 0;
    if (head == SIZE_MAX)
        head = 0, stream = false;
    if (head > n)
        head = n;
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi32(-1);
    near8_flags fl = {zero, zero, zero, zero};
    if (head)
        near8_part(&c, x, z, head, index, size, &fl);
    size_t i = head;
    __m256i least = ones;
    for (; n - i >= line; i += line) {
        for (size_t b = 0; b < 4 * line; b += 64)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH + b, _MM_HINT_T1);
        __m256i out = near8_line(&c, x + i, size, index + i, &least, &fl);
        __m256i *dst = (__m256i *)((uint8_t *)z + size * i);
        if (stream)
            _mm256_stream_si256(dst, out);
        else
            _mm256_storeu_si256(dst, out);
    }
    if (i < n)
        near8_part(&c, x + i, (uint8_t *)z + size * i, n - i, index + i, size, &fl);
    fl.ix = _mm256_or_si256(fl.ix, _mm256_xor_si256(_mm256_cmpeq_epi32(least, ones), ones));
    fl.uf = _mm256_or_si256(fl.uf, _mm256_xor_si256(cmpge_epu32(least, c.tiny), ones));
    return kern_flags(!_mm256_testz_si256(fl.ix, fl.ix), !_mm256_testz_si256(fl.uf, fl.uf),
                      !_mm256_testz_si256(fl.of, fl.of), !_mm256_testz_si256(fl.inv, fl.inv));
}

TARGET_AVX2 static unsigned near8_any(const fpki_conv *p, const uint32_t *x, void *z, size_t n,
                                      uint64_t index, bool stream)
{
#define RUN(f, mode, quant) near_avx2(f, mode, quant, p, x, z, n, index, stream)
    NEAR_DISPATCH(RUN, p)
#undef RUN
}

TARGET_AVX2 unsigned fpki_conv_avx2(const fpki_conv *p, const uint32_t *x, void *z, size_t n,
                                      uint64_t index, bool stream)
{
    unsigned fl = 0;
    if (near_plain(p))
        fl = near8_any(p, x, z, n, index, stream);
    else if (f16c_exact(p))
        fl = p->mode == FPK_RTZ ? f16c_avx2(p, x, z, n, stream, true)
                                : f16c_avx2(p, x, z, n, stream, false);
    else
        fl = fpki_conv_any(p, x, z, n, index, stream, store_avx2);
    if (stream)
        _mm_sfence();
    return fl;
}

TARGET_AVX2 void fpki_widen_avx2(fpk_dtype t, const void *x, uint32_t *z, size_t n, bool daz)
{
    fpki_widen_any(t, x, z, n, daz);
}

/* fpki_srfix_any, 8 elements at a time, as fpki_srfix_avx512: per class
 * boundary, vector compares find the elements that may cross it, and only
 * vectors holding some compute the rule (hash and discarded fraction);
 * per lane counters count the crossings.  The thresholds and the elements
 * are compared with their top bits flipped (AVX2 compares signed only),
 * the thresholds flipped once.  The top bit of a significand (AVX2 has no
 * vplzcntd) is the exponent of its exact conversion to float.  NF is the
 * number of formats, a constant where the caller can make it one, so that
 * the loops unroll and their vectors stay in registers. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
srfix8(const fpki_srkeys *k, int nf, const uint32_t *x, size_t n, uint64_t index,
       int64_t (*delta)[4])
{
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG), one = _mm256_set1_epi32(1);
    const __m256i man = _mm256_set1_epi32(0x7fffff), hidden = _mm256_set1_epi32(0x800000);
    const __m256i thirty_two = _mm256_set1_epi32(32), flip = _mm256_set1_epi32(INT32_MIN);
    const __m256i zero = _mm256_setzero_si256(), bias = _mm256_set1_epi32(127);
    const __m256i seed_mix = _mm256_set1_epi64x((long long)fpki_mix64(0));
    const __m256i lsb_exp = _mm256_set1_epi32(k->k - 150);
    __m256i tz[FPK_STATS_MAX_FORMATS][3], away[FPK_STATS_MAX_FORMATS][3];
    __m256i crossed[FPK_STATS_MAX_FORMATS][3];
#pragma GCC unroll 4
    for (int j = 0; j < nf; j++)
#pragma GCC unroll 4
        for (int c = 0; c < 3; c++) {
            tz[j][c] = _mm256_set1_epi32((int)(k->tz[j][c] ^ 0x80000000u));
            away[j][c] = _mm256_set1_epi32((int)(k->away[j][c] ^ 0x80000000u));
            crossed[j][c] = zero;
        }
    uint32_t tail[8];
    for (size_t i = 0; i < n; i += 8) {
        /* zeros, infinities and NaNs lie in no range (away[0] > 0): the
         * tail is padded with zeros */
        const uint32_t *at = x + i;
        if (n - i < 8) {
            memset(tail, 0, sizeof tail);
            at = memcpy(tail, x + i, 4 * (n - i));
        }
        __m256i raw = _mm256_loadu_si256((const __m256i *)at), a = _mm256_and_si256(raw, mag);
        __m256i raw_f = _mm256_xor_si256(raw, flip), a_f = _mm256_xor_si256(a, flip);
        __m256i may[FPK_STATS_MAX_FORMATS][3], any = zero;
#pragma GCC unroll 4
        for (int j = 0; j < nf; j++) {
            __m256i v = k->mask[j] == FPKI_F32_MAG ? a_f : raw_f; /* (masks: these two) */
#pragma GCC unroll 4
            for (int c = 0; c < 3; c++) {
                may[j][c] = _mm256_andnot_si256(_mm256_cmpgt_epi32(away[j][c], v),
                                                _mm256_cmpgt_epi32(tz[j][c], v));
                any = _mm256_or_si256(any, may[j][c]);
            }
        }
        if (_mm256_testz_si256(any, any))
            continue;
        __m256i rnd = _mm256_xor_si256(rnd8(seed_mix, index + i), flip);
        /* |x| = sig * 2^e0 (times the scale), its top bit at TOP */
        __m256i ef = _mm256_srli_epi32(a, 23);
        __m256i sig = _mm256_blendv_epi8(a, _mm256_or_si256(_mm256_and_si256(a, man), hidden),
                                         _mm256_cmpgt_epi32(ef, zero));
        __m256i e0 = _mm256_add_epi32(_mm256_max_epi32(ef, one), lsb_exp);
        __m256i top = _mm256_add_epi32(
            e0, _mm256_sub_epi32(
                    _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(sig)), 23), bias));
#pragma GCC unroll 4
        for (int j = 0; j < nf; j++) {
            __m256i mine = _mm256_or_si256(_mm256_or_si256(may[j][0], may[j][1]), may[j][2]);
            if (_mm256_testz_si256(mine, mine))
                continue;
            /* d bits discarded: the low d moved to the top when d <= 32,
             * else shifted down (AVX2's shifts by 32 or more, or by
             * negative counts, give zeros; none go where d <= 0) */
            __m256i d = _mm256_sub_epi32(
                _mm256_max_epi32(top, _mm256_set1_epi32(k->emin[j])),
                _mm256_add_epi32(e0, _mm256_set1_epi32(k->man_bits[j])));
            __m256i low = _mm256_sub_epi32(_mm256_sllv_epi32(one, d), one);
            __m256i frac = _mm256_or_si256(
                _mm256_sllv_epi32(_mm256_and_si256(sig, low), _mm256_sub_epi32(thirty_two, d)),
                _mm256_srlv_epi32(sig, _mm256_sub_epi32(d, thirty_two)));
            __m256i rounds_away =
                _mm256_and_si256(mine, _mm256_cmpgt_epi32(_mm256_xor_si256(frac, flip), rnd));
#pragma GCC unroll 4
            for (int c = 0; c < 3; c++)
                crossed[j][c] =
                    _mm256_sub_epi32(crossed[j][c], _mm256_and_si256(rounds_away, may[j][c]));
        }
    }
#pragma GCC unroll 4
    for (int j = 0; j < nf; j++)
#pragma GCC unroll 4
        for (int c = 0; c < 3; c++) {
            uint32_t lanes[8];
            _mm256_storeu_si256((__m256i *)lanes, crossed[j][c]);
            int64_t m = 0;
            for (int l = 0; l < 8; l++)
                m += lanes[l];
            delta[j][c] -= m;
            delta[j][c + 1] += m;
        }
}

TARGET_AVX2 void fpki_srfix_avx2(const fpki_srkeys *k, const uint32_t *x, size_t n,
                                 uint64_t index, int64_t (*delta)[4])
{
    for (int j = 0; j < k->n; j++)
        if (k->mask[j] != FPKI_F32_MAG && k->mask[j] != ~0u) {
            fpki_srfix_any(k, x, n, index, delta);
            return;
        }
    switch (k->n) {
    case 1: srfix8(k, 1, x, n, index, delta); break;
    case 2: srfix8(k, 2, x, n, index, delta); break;
    case 3: srfix8(k, 3, x, n, index, delta); break;
    case 4: srfix8(k, 4, x, n, index, delta); break;
    default: srfix8(k, k->n, x, n, index, delta); break;
    }
}

/* For each 8-bit mask M, the byte indices of its set bits from the
 * lowest, packed into a uint64_t: vpermd's indices that move M's lanes to
 * the front, in order (AVX2 has no vpcompressd). */
#define PACK_BIT(m, i) (((m) >> (i)) & 1u)
#define PACK_BELOW(m, i) __builtin_popcount((m) & ((1u << (i)) - 1))
#define PACK_LANE(m, i) ((uint64_t)(PACK_BIT(m, i) * (i)) << (8 * PACK_BELOW(m, i)))
#define PACK_ENTRY(m)                                                                              \
    (PACK_LANE(m, 1) | PACK_LANE(m, 2) | PACK_LANE(m, 3) | PACK_LANE(m, 4) | PACK_LANE(m, 5) |     \
     PACK_LANE(m, 6) | PACK_LANE(m, 7))
#define PACK_4(m) PACK_ENTRY(m), PACK_ENTRY(m + 1), PACK_ENTRY(m + 2), PACK_ENTRY(m + 3)
#define PACK_16(m) PACK_4(m), PACK_4(m + 4), PACK_4(m + 8), PACK_4(m + 12)
#define PACK_64(m) PACK_16(m), PACK_16(m + 16), PACK_16(m + 32), PACK_16(m + 48)
static const uint64_t pack8_table[256] = {PACK_64(0u), PACK_64(64u), PACK_64(128u),
                                          PACK_64(192u)};
#undef PACK_64
#undef PACK_16
#undef PACK_4
#undef PACK_ENTRY
#undef PACK_LANE
#undef PACK_BELOW
#undef PACK_BIT

TARGET_AVX2 static inline __attribute__((always_inline)) __m256i pack8_indices(unsigned m)
{
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&pack8_table[m]));
}

/* The 8-bit mask of the lanes IS_ZERO (a compare's result) leaves out. */
TARGET_AVX2 static inline __attribute__((always_inline)) unsigned keep8(__m256i is_zero)
{
    return ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(is_zero)) & 0xff;
}

/* Stores the lanes of V in the 8-bit mask KEEP at DST, in order, and
 * returns how many. */
TARGET_AVX2 static inline __attribute__((always_inline)) size_t pack8(__m256i v, unsigned keep,
                                                                      void *dst)
{
    _mm256_storeu_si256((__m256i *)dst, _mm256_permutevar8x32_epi32(v, pack8_indices(keep)));
    return (size_t)__builtin_popcount(keep);
}

/* The largest and the least of the 8 lanes of V. */
TARGET_AVX2 static inline __attribute__((always_inline)) uint32_t max8_epu32(__m256i v)
{
    __m128i m = _mm_max_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4e));
    return (uint32_t)_mm_cvtsi128_si32(_mm_max_epu32(m, _mm_shuffle_epi32(m, 0xb1)));
}

TARGET_AVX2 static inline __attribute__((always_inline)) uint32_t min8_epu32(__m256i v)
{
    __m128i m = _mm_min_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_min_epu32(m, _mm_shuffle_epi32(m, 0x4e));
    return (uint32_t)_mm_cvtsi128_si32(_mm_min_epu32(m, _mm_shuffle_epi32(m, 0xb1)));
}

/* Stores the nonzero magnitudes of the N float32 elements at X at DST,
 * in order (DST has room for N: whole vectors are stored, but none past
 * the N-th), and returns how many; widens [*LEAST, *TOP] to take in each
 * of them.  Prefetches ahead of X every 16 elements. */
TARGET_AVX2 static inline __attribute__((always_inline)) size_t
pack_nonzero(const uint32_t *x, size_t n, uint32_t *dst, uint32_t *least, uint32_t *top)
{
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG), zero = _mm256_setzero_si256();
    __m256i top8 = zero, least8 = _mm256_set1_epi32(-1), top8b = zero, least8b = least8;
    size_t m = 0, i = 0;
    for (; n - i >= 16; i += 16) { /* two a step, as the AVX-512 first_pass */
        _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m256i a0 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), mag);
        __m256i a1 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i + 8)), mag);
        __m256i z0 = _mm256_cmpeq_epi32(a0, zero), z1 = _mm256_cmpeq_epi32(a1, zero);
        top8 = _mm256_max_epu32(top8, a0);
        top8b = _mm256_max_epu32(top8b, a1);
        least8 = _mm256_min_epu32(least8, _mm256_or_si256(a0, z0));
        least8b = _mm256_min_epu32(least8b, _mm256_or_si256(a1, z1));
        size_t m0 = pack8(a0, keep8(z0), dst + m);
        m += m0 + pack8(a1, keep8(z1), dst + m + m0);
    }
    top8 = _mm256_max_epu32(top8, top8b);
    least8 = _mm256_min_epu32(least8, least8b);
    for (; n - i >= 8; i += 8) {
        if (i % 16 == 0)
            _mm_prefetch((const char *)(x + i) + FPKI_PREFETCH, _MM_HINT_T1);
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), mag);
        __m256i is_zero = _mm256_cmpeq_epi32(a, zero);
        top8 = _mm256_max_epu32(top8, a);
        least8 = _mm256_min_epu32(least8, _mm256_or_si256(a, is_zero));
        m += pack8(a, keep8(is_zero), dst + m);
    }
    uint32_t lo = min8_epu32(least8), hi = max8_epu32(top8);
    for (; i < n; i++) {
        uint32_t a = x[i] & FPKI_F32_MAG;
        if (a == 0)
            continue;
        dst[m++] = a;
        lo = a < lo ? a : lo, hi = a > hi ? a : hi;
    }
    *least = lo < *least ? lo : *least, *top = hi > *top ? hi : *top;
    return m;
}

/* The squared errors of the 16 float32 elements at XT and their results
 * at YT (as fpki_lanes_any adds them: the uncounted ones add zeros) into
 * the lanes SX and SE, four to a vector. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
sq16_avx2(const float *xt, const float *yt, bool want_x2, __m256d *sx, __m256d *se)
{
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG);
    const __m256i inf = _mm256_set1_epi32((int)FPKI_F32_INF);
    for (int g = 0; g < 2; g++) {
        __m256 xv = _mm256_load_ps(xt + 8 * g), yv = _mm256_load_ps(yt + 8 * g);
        __m256i ax = _mm256_and_si256(_mm256_castps_si256(xv), mag);
        __m256i ay = _mm256_and_si256(_mm256_castps_si256(yv), mag);
        __m256i counted = _mm256_and_si256(
            _mm256_and_si256(_mm256_cmpgt_epi32(ax, _mm256_setzero_si256()),
                             _mm256_cmpgt_epi32(inf, ax)),
            _mm256_cmpgt_epi32(inf, ay));
        __m256 xk = _mm256_and_ps(xv, _mm256_castsi256_ps(counted));
        __m256 yk = _mm256_and_ps(yv, _mm256_castsi256_ps(counted));
        for (int h = 0; h < 2; h++) {
            __m128 xq = h ? _mm256_extractf128_ps(xk, 1) : _mm256_castps256_ps128(xk);
            __m128 yq = h ? _mm256_extractf128_ps(yk, 1) : _mm256_castps256_ps128(yk);
            __m256d xd = _mm256_cvtps_pd(xq);
            __m256d ed = _mm256_sub_pd(_mm256_cvtps_pd(yq), xd);
            if (want_x2)
                sx[2 * g + h] = _mm256_add_pd(sx[2 * g + h], _mm256_mul_pd(xd, xd));
            se[2 * g + h] = _mm256_add_pd(se[2 * g + h], _mm256_mul_pd(ed, ed));
        }
    }
}

/* fpki_lanes_fn with AVX2, as fpki_lanes_avx512: the nonzero elements of
 * SQ_BLOCK and their results packed (pack8) behind the fewer than 16 left
 * from the last block, then summed 16 at a time. */
TARGET_AVX2 unsigned fpki_lanes_avx2(const float *x, const float *y, size_t n, unsigned lane,
                                       double *x2, double *e2)
{
    __m256d sx[4], se[4];
    for (int k = 0; k < 4; k++) {
        sx[k] = x2 ? _mm256_loadu_pd(x2 + 4 * k) : _mm256_setzero_pd();
        se[k] = e2 ? _mm256_loadu_pd(e2 + 4 * k) : _mm256_setzero_pd();
    }
    float xp[SQ_BLOCK + 32] __attribute__((aligned(32)));
    float yp[SQ_BLOCK + 32] __attribute__((aligned(32)));
    memset(xp, 0, 16 * sizeof *xp); /* lanes before LANE: zeros, which add nothing */
    memset(yp, 0, 16 * sizeof *yp);
    const __m256i mag = _mm256_set1_epi32((int)FPKI_F32_MAG);
    size_t left = lane;
    for (size_t i0 = 0; i0 < n; i0 += SQ_BLOCK) {
        size_t len = n - i0 < SQ_BLOCK ? n - i0 : SQ_BLOCK, m = left, i = 0;
        for (; len - i >= 8; i += 8) {
            __m256 xv = _mm256_loadu_ps(x + i0 + i);
            __m256 yv = y ? _mm256_loadu_ps(y + i0 + i) : _mm256_setzero_ps();
            unsigned keep = keep8(_mm256_cmpeq_epi32(
                _mm256_and_si256(_mm256_castps_si256(xv), mag), _mm256_setzero_si256()));
            pack8(_mm256_castps_si256(yv), keep, yp + m);
            m += pack8(_mm256_castps_si256(xv), keep, xp + m);
        }
        for (; i < len; i++) {
            uint32_t xb;
            memcpy(&xb, &x[i0 + i], sizeof xb);
            xp[m] = x[i0 + i];
            yp[m] = y ? y[i0 + i] : 0;
            m += (xb & FPKI_F32_MAG) != 0;
        }
        size_t whole = m & ~(size_t)15;
        sq_ahead px = sq_next_block(x, n, i0), py = sq_next_block(y, n, i0);
        for (size_t r = 0; r < whole; r += 16) {
            sq_prefetch(&px);
            sq_prefetch(&py);
            sq16_avx2(xp + r, yp + r, x2 != NULL, sx, se);
        }
        left = m - whole;
        memmove(xp, xp + whole, 16 * sizeof *xp);
        memmove(yp, yp + whole, 16 * sizeof *yp);
    }
    if (left) {
        memset(xp + left, 0, (16 - left) * sizeof *xp);
        memset(yp + left, 0, (16 - left) * sizeof *yp);
        sq16_avx2(xp, yp, x2 != NULL, sx, se);
    }
    for (int k = 0; k < 4; k++) {
        if (x2)
            _mm256_storeu_pd(x2 + 4 * k, sx[k]);
        if (e2)
            _mm256_storeu_pd(e2 + 4 * k, se[k]);
    }
    return (unsigned)left;
}

/* ACC->below[KEY[q]] += how many of the M magnitudes at V (padded with
 * 0x7fffffff to a whole vector) are below the key, for the NK <= 8 keys
 * indexed by KEY, each at most 0x7fffffff. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
count_below8(const fpki_skeys *keys, const int *key, int nk, const uint32_t *v, size_t m,
             fpki_sacc *acc)
{
    __m256i kv[8], cv[8];
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++) {
        kv[q] = _mm256_set1_epi32((int)keys->key[key[q]]);
        cv[q] = _mm256_setzero_si256();
    }
    for (size_t r = 0; r < m; r += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(v + r));
#pragma GCC unroll 8
        for (int q = 0; q < nk; q++) /* (signed compares: both below 2^31) */
            cv[q] = _mm256_sub_epi32(cv[q], _mm256_cmpgt_epi32(kv[q], a));
    }
#pragma GCC unroll 8
    for (int q = 0; q < nk; q++) {
        uint32_t c[8];
        _mm256_storeu_si256((__m256i *)c, cv[q]);
        acc->below[key[q]] += (uint64_t)c[0] + c[1] + c[2] + c[3] + c[4] + c[5] + c[6] + c[7];
    }
}

/* count_below8 with a loop for each count, its counters in registers. */
TARGET_AVX2 static void count_below(const fpki_skeys *keys, const int *key, int nk,
                                    const uint32_t *v, size_t m, fpki_sacc *acc)
{
    switch (nk) {
#define COUNT_CASE(K)                                                                              \
    case K: count_below8(keys, key, K, v, m, acc); break;
        COUNT_CASE(1) COUNT_CASE(2) COUNT_CASE(3) COUNT_CASE(4)
        COUNT_CASE(5) COUNT_CASE(6) COUNT_CASE(7) default: COUNT_CASE(8)
#undef COUNT_CASE
    }
}

/* The exponent histogram with AVX2, as stats_avx512's: each magnitude's
 * exponent field e, when in the window [base, base + 63], sets bit
 * e - base - 32w of a one-hot vector for half w, and carry-save adders
 * sum sixteen such vectors at a time into bitsliced counters: bit j of
 * lane l of plane p is bit p of how many of lane l's elements set bit j. */
#define EH8_PLANES 40
#define EH8_GROUP 128 /* elements a group of adders sums */
#define EH8_PIECE 256 /* elements of a block whose range is looked at */
#define EH8_PIECES (FPKI_SBLOCK / EH8_PIECE)

typedef struct ehist8 {
    __m256i plane[2][EH8_PLANES];
    uint32_t base; /* 0 until the first nonzero element chose it */
    int nplanes;
} ehist8;

/* HI:LO = LO + A + B, bit by bit. */
#define EH8_CSA(hi, lo, a, b)                                                                      \
    do {                                                                                           \
        __m256i a_ = (a), b_ = (b), u_ = _mm256_xor_si256(lo, a_);                                 \
        hi = _mm256_or_si256(_mm256_and_si256(lo, a_), _mm256_and_si256(u_, b_));                 \
        lo = _mm256_xor_si256(u_, b_);                                                             \
    } while (0)

/* Adds C, of weight 2^P, to half W's counters. */
TARGET_AVX2 static inline __attribute__((always_inline)) void eh8_carry(ehist8 *h, int w, int p,
                                                                        __m256i c)
{
    for (; !_mm256_testz_si256(c, c); p++) {
        __m256i t = _mm256_and_si256(h->plane[w][p], c);
        h->plane[w][p] = _mm256_xor_si256(h->plane[w][p], c);
        c = t;
    }
    if (p > h->nplanes)
        h->nplanes = p;
}

/* The one-hot vectors for both halves of the 8 magnitudes at P (vpsllvd
 * gives 0 for counts past 31, which those below the half wrap to). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
eh8_onehot(const uint32_t *p, __m256i b0, __m256i b1, __m256i *h0, __m256i *h1)
{
    const __m256i one = _mm256_set1_epi32(1);
    __m256i e = _mm256_srli_epi32(_mm256_load_si256((const __m256i *)p), 23);
    *h0 = _mm256_sllv_epi32(one, _mm256_sub_epi32(e, b0));
    *h1 = _mm256_sllv_epi32(one, _mm256_sub_epi32(e, b1));
}

/* Counts the exponents of the EH8_GROUP magnitudes at NZ (aligned; zeros
 * count nowhere, the window starting above them). */
TARGET_AVX2 static inline __attribute__((always_inline)) void eh8_group(ehist8 *h,
                                                                        const uint32_t *nz)
{
    const __m256i b0 = _mm256_set1_epi32((int)h->base);
    const __m256i b1 = _mm256_set1_epi32((int)h->base + 32);
    __m256i x0, x1, y0, y1;
#define EH8_PAIR(k, t0, t1)                                                                        \
    do {                                                                                           \
        eh8_onehot(nz + 8 * (k), b0, b1, &x0, &x1);                                                \
        eh8_onehot(nz + 8 * (k) + 8, b0, b1, &y0, &y1);                                            \
        EH8_CSA(t0, ones0, x0, y0);                                                                \
        EH8_CSA(t1, ones1, x1, y1);                                                                \
    } while (0)
    EH_ADDERS(__m256i, EH8_CSA, EH8_PAIR, eh8_carry, h);
#undef EH8_PAIR
}

/* Adds the counters into HIST: each half's 8 lanes summed into lane 0
 * first, by bitsliced adds of lanes R.. onto lanes 0.. (R = 4, 2, 1),
 * then lane 0's bits read out. */
TARGET_AVX2 static void eh8_flush(const ehist8 *h, uint64_t *hist)
{
    for (int w = 0; w < 2; w++) {
        __m256i pl[EH8_PLANES + 3];
        int np = h->nplanes;
        for (int p = 0; p < np; p++)
            pl[p] = h->plane[w][p];
        for (int r = 4; r >= 1; r /= 2) {
            const __m256i from = _mm256_setr_epi32(r, r + 1, r + 2, r + 3, r + 4, r + 5, r + 6,
                                                   r + 7); /* (past 7: wraps round, not read) */
            __m256i carry = _mm256_setzero_si256();
            for (int p = 0; p < np; p++) {
                EH8_CSA(carry, pl[p], _mm256_permutevar8x32_epi32(pl[p], from), carry);
            }
            pl[np++] = carry;
        }
        uint64_t *half = hist + h->base + 32 * w;
        for (int p = 0; p < np; p++)
            for (uint32_t b = (uint32_t)_mm256_cvtsi256_si32(pl[p]); b; b &= b - 1)
                half[__builtin_ctz(b)] += UINT64_C(1) << p;
    }
}

/* Adds to HIST the exponents of the M magnitudes at V (padded to a whole
 * vector) outside the window from BASE. */
TARGET_AVX2 static void eh8_outside(const uint32_t *v, size_t m, uint32_t base, uint64_t *hist)
{
    const __m256i b = _mm256_set1_epi32((int)base), last = _mm256_set1_epi32(EH_WINDOW - 1);
    for (size_t r = 0; r < m; r += 8) {
        __m256i e = _mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(v + r)), 23);
        __m256i d = _mm256_sub_epi32(e, b); /* outside: above 63 as unsigned */
        __m256i inside = _mm256_cmpeq_epi32(_mm256_max_epu32(d, last), last);
        for (unsigned out = keep8(inside); out; out &= out - 1) {
            size_t q = r + (size_t)__builtin_ctz(out);
            if (q < m)
                hist[v[q] >> 23]++;
        }
    }
}

/* fpki_stats_fn with AVX2, for magnitudes (keys on the encodings, SIGN,
 * take the portable code): as fpki_stats_avx512, the zeros left out at
 * once and the other magnitudes packed (pack8); the keys the block's range
 * leaves undecided counted over them, eight a pass; their exponents
 * counted by carry-save adders, a group at a time; the float32 subnormals
 * among them counted only where the least is one. */
TARGET_AVX2 void fpki_stats_avx2(const fpki_skeys *keys, const uint32_t *x, size_t n,
                                   fpki_sacc *acc)
{
    if (keys->sign) {
        fpki_stats_any(keys, x, n, acc);
        return;
    }
    ehist8 eh;
    memset(&eh, 0, sizeof eh);
    eh.nplanes = 4;
    /* The histogram's leftovers (fewer than a group), then a block's
     * magnitudes and a vector of padding. */
    uint32_t nz[EH8_GROUP + FPKI_SBLOCK + 8] __attribute__((aligned(32)));
    size_t left = 0;
    for (size_t i0 = 0; i0 < n; i0 += FPKI_SBLOCK) {
        size_t len = n - i0 < FPKI_SBLOCK ? n - i0 : FPKI_SBLOCK, m = 0, i = 0;
        uint32_t *bz = nz + left; /* the block's */
        /* Each piece's extremes and where its elements start at BZ: the
         * few far below the others (in half the blocks of real gradients,
         * a piece in nine) are looked for in their pieces only. */
        uint32_t piece_top[EH8_PIECES], piece_least[EH8_PIECES];
        size_t piece_at[EH8_PIECES + 1], np = 0;
        for (; i < len; i += EH8_PIECE, np++) {
            piece_at[np] = m, piece_top[np] = 0, piece_least[np] = UINT32_MAX;
            m += pack_nonzero(x + i0 + i, len - i < EH8_PIECE ? len - i : EH8_PIECE, bz + m,
                              &piece_least[np], &piece_top[np]);
        }
        piece_at[np] = m;
        uint32_t block_top = 0, block_least = UINT32_MAX;
        for (size_t q = 0; q < np; q++) {
            block_top = piece_top[q] > block_top ? piece_top[q] : block_top;
            block_least = piece_least[q] < block_least ? piece_least[q] : block_least;
        }
        uint32_t zeros = (uint32_t)(len - m), amax = block_top;
        if (block_top >= FPKI_F32_INF) { /* seldom: the largest finite one */
            amax = 0;
            for (size_t r = 0; r < m; r++)
                amax = bz[r] < FPKI_F32_INF && bz[r] > amax ? bz[r] : amax;
        }
        if (amax > acc->amax)
            acc->amax = amax;
        acc->hist[0] += zeros;
        if (m && !eh.base)
            eh.base = eh_window_base(amax);
        for (size_t r = m; r < m + 8; r++) /* a whole vector: above every key */
            bz[r] = FPKI_F32_MAG;
        for (size_t q = 0; q < np; q++)
            if (piece_at[q + 1] > piece_at[q] &&
                (piece_least[q] >> 23 < eh.base || piece_top[q] >> 23 >= eh.base + EH_WINDOW))
                eh8_outside(bz + piece_at[q], piece_at[q + 1] - piece_at[q], eh.base, acc->hist);
        if (block_least < 0x800000u)
            for (size_t r = 0; r < m; r++)
                if (bz[r] < 0x800000u)
                    acc->subnormal[31 - __builtin_clz(bz[r])]++;
        /* Keys: zeros are below every positive one; none of the packed
         * is below the least of them, and all below one above the top. */
        int undecided[FPKI_MAX_KEYS], nu = 0;
        for (int k = 0; k < keys->n; k++) {
            uint32_t key = keys->key[k];
            acc->below[k] += key > 0 ? zeros : 0;
            if (key > block_top)
                acc->below[k] += m;
            else if (key > block_least)
                undecided[nu++] = k;
        }
        for (int q = 0; q < nu; q += 8)
            count_below(keys, undecided + q, nu - q < 8 ? nu - q : 8, bz, m, acc);
        /* The histogram, whole groups at a time; the rest waits for more. */
        size_t have = left + m, r = 0;
        for (; r + EH8_GROUP <= have; r += EH8_GROUP)
            eh8_group(&eh, nz + r);
        left = have - r;
        memmove(nz, nz + r, left * sizeof *nz);
    }
    if (left) {
        memset(nz + left, 0, (EH8_GROUP - left) * sizeof *nz);
        eh8_group(&eh, nz);
    }
    if (eh.base)
        eh8_flush(&eh, acc->hist);
}

/* Adds the squares of the float32 values A (if WANT_X2) and of the
 * errors E to the lanes *X0 and *E0 (from A's and E's lanes 0-3) and *X1
 * and *E1 (4-7).  Each square is exact in double, so one FMA rounds as a
 * product and a sum would. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
sq8_exact(__m256 a, __m256 e, bool want_x2, __m256d *x0, __m256d *x1, __m256d *e0, __m256d *e1)
{
    __m256d el = _mm256_cvtps_pd(_mm256_castps256_ps128(e));
    __m256d eh = _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1));
    *e0 = _mm256_fmadd_pd(el, el, *e0);
    *e1 = _mm256_fmadd_pd(eh, eh, *e1);
    if (want_x2) {
        __m256d al = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
        __m256d ah = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
        *x0 = _mm256_fmadd_pd(al, al, *x0);
        *x1 = _mm256_fmadd_pd(ah, ah, *x1);
    }
}

/* One format's squared errors between blocks with AVX2: its lanes, the
 * least magnitude rounded inexactly on the fast path, and its flags. */
typedef struct sq8_state {
    __m256d x[4], e[4];
    __m256i least;
    unsigned flags;
} sq8_state;

/* Adds to *ST the squared errors of the 16 magnitudes at A (and their
 * squares if WANT_X2) rounded by the set's conversion of P (its general
 * code where round8 does not apply). */
TARGET_AVX2 static void sq16_any(const fpki_conv *p, const uint32_t *a, bool want_x2,
                                 sq8_state *st)
{
    float y[16] __attribute__((aligned(32)));
    st->flags |= fpki_conv_avx2(p, a, y, 16, 0, false);
    sq16_avx2((const float *)a, y, want_x2, st->x, st->e);
}

/* Adds to the lanes *X0, *X1, *E0 and *E1 (as sq8_exact) the squared
 * errors of the 8 magnitudes A (none above C's max32) rounded by round8,
 * and their squares if WANT_X2; if TRACK, lowers *LEAST to the least of
 * them rounded inexactly. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
sq8_round(const near8_consts *c, __m256i a, bool want_x2, bool track, __m256i *least,
          __m256d *x0, __m256d *x1, __m256d *e0, __m256d *e1)
{
    __m256i k, q;
    round8(c, a, &k, &q);
    if (track) /* exact results read as all ones, above every magnitude */
        *least = _mm256_min_epu32(*least, _mm256_or_si256(a, _mm256_cmpeq_epi32(q, a)));
    __m256 af = _mm256_castsi256_ps(a);
    sq8_exact(af, _mm256_sub_ps(_mm256_castsi256_ps(q), af), want_x2, x0, x1, e0, e1);
}

/* Adds to *ST P's squared errors (F under MODE, RNE or RTZ, no options)
 * of the M nonzero magnitudes at NZ (aligned; M a multiple of 16, and the
 * M + 16 after them zeros when TAIL, the last call's), and of X2 too if
 * WANT_X2; none of the M is above TOP nor below BOTTOM.  Sixteen with none
 * above max32 are rounded by round8: every result is finite and each error
 * exact in float32 (the result is zero or within a factor of two of the
 * magnitude); sixteen with one, and the tail, by the portable kernel, their
 * terms as fpk_array_sqerr adds them.  The sums stay in registers between
 * (in memory, each sum's chain of adds waited on a store).  Once the flags
 * hold inexact, and underflow unless no magnitude is tiny, and none is
 * above max32, the loop looks only at the sums (a third fewer operations). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
sq8_run(const fpk_format *f, fpk_round mode, bool want_x2, const fpki_conv *p, sq8_state *st,
        const uint32_t *nz, size_t m, bool tail, uint32_t top, uint32_t bottom, sq_ahead *pf)
{
    const near8_consts c = near8_setup(f, mode, true, p);
    sq_ahead ahead = sq_ahead_take(pf);
    __m256d x0 = st->x[0], x1 = st->x[1], x2 = st->x[2], x3 = st->x[3];
    __m256d e0 = st->e[0], e1 = st->e[1], e2 = st->e[2], e3 = st->e[3];
    __m256i least = st->least;
    bool flagged = (st->flags & FPK_INEXACT) && ((st->flags & FPK_UNDERFLOW) || bottom >= c.k.tiny);
    if (!tail && flagged && top <= c.k.max32) {
        for (size_t r = 0; r < m; r += 16) {
            sq_prefetch(&ahead);
            sq8_round(&c, _mm256_load_si256((const __m256i *)(nz + r)), want_x2, false, &least,
                      &x0, &x1, &e0, &e1);
            sq8_round(&c, _mm256_load_si256((const __m256i *)(nz + r + 8)), want_x2, false,
                      &least, &x2, &x3, &e2, &e3);
        }
        m = 0;
    }
    for (size_t r = 0; r < m + (tail ? 16 : 0); r += 16) {
        sq_prefetch(&ahead);
        __m256i a0 = _mm256_load_si256((const __m256i *)(nz + r));
        __m256i a1 = _mm256_load_si256((const __m256i *)(nz + r + 8));
        __m256i over = _mm256_or_si256(_mm256_cmpgt_epi32(a0, c.max32),
                                       _mm256_cmpgt_epi32(a1, c.max32));
        if (__builtin_expect(r >= m || !_mm256_testz_si256(over, over), 0)) {
            st->x[0] = x0, st->x[1] = x1, st->x[2] = x2, st->x[3] = x3;
            st->e[0] = e0, st->e[1] = e1, st->e[2] = e2, st->e[3] = e3;
            sq16_any(p, nz + r, want_x2, st);
            x0 = st->x[0], x1 = st->x[1], x2 = st->x[2], x3 = st->x[3];
            e0 = st->e[0], e1 = st->e[1], e2 = st->e[2], e3 = st->e[3];
            continue;
        }
        sq8_round(&c, a0, want_x2, true, &least, &x0, &x1, &e0, &e1);
        sq8_round(&c, a1, want_x2, true, &least, &x2, &x3, &e2, &e3);
    }
    sq_ahead_put(pf, ahead);
    st->x[0] = x0, st->x[1] = x1, st->x[2] = x2, st->x[3] = x3;
    st->e[0] = e0, st->e[1] = e1, st->e[2] = e2, st->e[3] = e3;
    const __m256i ones = _mm256_set1_epi32(-1);
    if (!_mm256_testc_si256(_mm256_cmpeq_epi32(least, ones), ones))
        st->flags |= FPK_INEXACT;
    if (!_mm256_testc_si256(_mm256_cmpeq_epi32(_mm256_min_epu32(least, c.tiny), c.tiny), ones))
        st->flags |= FPK_UNDERFLOW;
    st->least = least;
}

TARGET_AVX2 static void sq8_block(const fpki_conv *p, bool want_x2, sq8_state *st,
                                  const uint32_t *nz, size_t m, bool tail, uint32_t top,
                                  uint32_t bottom, sq_ahead *pf)
{
#define SQ8M(f, mode)                                                                              \
    (want_x2 ? sq8_run(f, mode, true, p, st, nz, m, tail, top, bottom, pf)                         \
             : sq8_run(f, mode, false, p, st, nz, m, tail, top, bottom, pf))
#define SQ8(f) (p->mode == FPK_RNE ? SQ8M(f, FPK_RNE) : SQ8M(f, FPK_RTZ))
    switch (p->fmt) {
    case FPKI_K_FP16: SQ8(&fpki_k_fp16); break;
    case FPKI_K_BF16: SQ8(&fpki_k_bf16); break;
    case FPKI_K_TF32: SQ8(&fpki_k_tf32); break;
    case FPKI_K_E4M3: SQ8(&fpki_k_e4m3); break;
    default: SQ8(&fpki_k_e5m2); break;
    }
#undef SQ8
#undef SQ8M
}

/* fpki_sqerr_fn with AVX2, for formats under RNE or RTZ without options,
 * as fpki_sqerr_avx512: the nonzero magnitudes of SQ_BLOCK elements packed
 * (pack8) behind the fewer than 16 left from the last block, their largest
 * and least noted, then each format's errors summed 16 at a time over them
 * while they are in L1. */
TARGET_AVX2 bool fpki_sqerr_avx2(const fpki_conv *p, int nf, const uint32_t *x, size_t n,
                                   double *x2, double *e2, unsigned *flags)
{
    for (int j = 0; j < nf; j++)
        if (!near_plain(&p[j]) || !p[j].quant || (p[j].mode != FPK_RNE && p[j].mode != FPK_RTZ))
            return false;
    sq8_state st[FPKI_SQ_FORMATS];
    for (int j = 0; j < nf; j++) {
        for (int k = 0; k < 4; k++) {
            st[j].x[k] = j == 0 && x2 ? _mm256_loadu_pd(x2 + 4 * k) : _mm256_setzero_pd();
            st[j].e[k] = _mm256_loadu_pd(e2 + FPK_LANES * j + 4 * k);
        }
        st[j].least = _mm256_set1_epi32(-1);
        st[j].flags = 0;
    }
    uint32_t nz[SQ_BLOCK + 32] __attribute__((aligned(32)));
    size_t left = 0;
    for (size_t i0 = 0; i0 < n; i0 += SQ_BLOCK) {
        size_t len = n - i0 < SQ_BLOCK ? n - i0 : SQ_BLOCK, m = left;
        uint32_t top = 0, bottom = UINT32_MAX;
        for (size_t k = 0; k < left; k++)
            top = nz[k] > top ? nz[k] : top, bottom = nz[k] < bottom ? nz[k] : bottom;
        m += pack_nonzero(x + i0, len, nz + m, &bottom, &top);
        size_t whole = m & ~(size_t)15;
        sq_ahead pf = sq_next_block(x, n, i0);
        for (int j = 0; j < nf; j++)
            sq8_block(&p[j], j == 0 && x2, &st[j], nz, whole, false, top, bottom, &pf);
        left = m - whole;
        memmove(nz, nz + whole, 16 * sizeof *nz);
    }
    if (left)
        memset(nz + left, 0, (16 - left) * sizeof *nz);
    for (int j = 0; j < nf; j++) {
        if (left)
            sq8_block(&p[j], j == 0 && x2, &st[j], nz, 0, true, UINT32_MAX, 0, NULL);
        for (int k = 0; k < 4; k++) {
            if (j == 0 && x2)
                _mm256_storeu_pd(x2 + 4 * k, st[j].x[k]);
            _mm256_storeu_pd(e2 + FPK_LANES * j + 4 * k, st[j].e[k]);
        }
        flags[j] |= st[j].flags;
    }
    return true;
}
/* MX scaling's kernels, 8 elements at a time (unsigned compares with the
 * sign bit flipped), the last ones by array-kern.h's bodies. */
TARGET_AVX2 static inline __m256i flip(__m256i v)
{
    return _mm256_xor_si256(v, _mm256_set1_epi32(INT32_MIN));
}

TARGET_AVX2 uint64_t fpki_mxmax_avx2(const uint32_t *x, size_t n)
{
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    __m256i top = _mm256_setzero_si256(), nonfinite = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), mag);
        __m256i fin = _mm256_cmpgt_epi32(inf, a); /* (magnitudes: signed compares) */
        nonfinite = _mm256_or_si256(nonfinite, _mm256_andnot_si256(fin, a));
        top = _mm256_max_epi32(top, _mm256_and_si256(fin, a));
    }
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, top);
    uint64_t r = fpki_mxmax_any(x + i, n - i);
    uint32_t amax = (uint32_t)r;
    for (int l = 0; l < 8; l++)
        amax = lanes[l] > amax ? lanes[l] : amax;
    return amax | (r & UINT64_C(0x100000000)) |
           (uint64_t)!_mm256_testz_si256(nonfinite, nonfinite) << 32;
}

TARGET_AVX2 bool fpki_mxdown_avx2(const fpki_mxspan *s, const uint32_t *x, uint32_t *xs,
                                    size_t n, uint8_t *odd_bits)
{
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), shift = _mm256_set1_epi32((int)s->shift);
    const __m256i lo = _mm256_set1_epi32((int)s->lo), span = flip(_mm256_set1_epi32((int)s->span));
    const __m256i below = _mm256_set1_epi32((int)s->zero_below - 1);
    __m256i odd = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i a = _mm256_and_si256(b, mag);
        __m256i keep = _mm256_cmpgt_epi32(a, below);
        __m256i v = _mm256_or_si256(_mm256_andnot_si256(mag, b),
                                    _mm256_and_si256(keep, _mm256_sub_epi32(a, shift)));
        __m256i o =
            _mm256_and_si256(keep, _mm256_cmpgt_epi32(flip(_mm256_sub_epi32(a, lo)), span));
        odd_bits[i / 8] = (uint8_t)_mm256_movemask_ps(_mm256_castsi256_ps(o));
        odd = _mm256_or_si256(odd, o);
        _mm256_storeu_si256((__m256i *)(xs + i), v);
    }
    bool tail_odd = fpki_mxdown_any(s, x + i, xs + i, n - i, odd_bits + i / 8);
    return tail_odd || !_mm256_testz_si256(odd, odd);
}

TARGET_AVX2 bool fpki_mxup_avx2(const fpki_mxspan *s, const uint32_t *q, const uint32_t *xs,
                                  uint32_t *y, size_t n, uint32_t counts[2])
{
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), shift = _mm256_set1_epi32((int)s->shift);
    const __m256i lo = _mm256_set1_epi32((int)s->lo), span = flip(_mm256_set1_epi32((int)s->span));
    const __m256i min_norm = _mm256_set1_epi32((int)s->min_norm), zero = _mm256_setzero_si256();
    __m256i odd = zero, flushed = zero, subnormal = zero;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(q + i));
        __m256i a = _mm256_and_si256(v, mag);
        __m256i is_zero = _mm256_cmpeq_epi32(a, zero);
        __m256i was = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(xs + i)), mag);
        if (y)
            _mm256_storeu_si256((__m256i *)(y + i),
                                _mm256_add_epi32(v, _mm256_andnot_si256(is_zero, shift)));
        __m256i outside = _mm256_cmpgt_epi32(flip(_mm256_sub_epi32(a, lo)), span);
        odd = _mm256_or_si256(odd, _mm256_andnot_si256(is_zero, outside));
        /* (each a lane's count, as minus ones) */
        flushed = _mm256_add_epi32(flushed,
                                   _mm256_andnot_si256(_mm256_cmpeq_epi32(was, zero), is_zero));
        subnormal = _mm256_add_epi32(
            subnormal, _mm256_andnot_si256(is_zero, _mm256_cmpgt_epi32(min_norm, a)));
    }
    uint32_t f[8], u[8];
    _mm256_storeu_si256((__m256i *)f, flushed);
    _mm256_storeu_si256((__m256i *)u, subnormal);
    for (int l = 0; l < 8; l++) {
        counts[0] -= f[l];
        counts[1] -= u[l];
    }
    bool tail_odd = fpki_mxup_any(s, q + i, xs + i, y ? y + i : NULL, n - i, counts);
    return tail_odd || !_mm256_testz_si256(odd, odd);
}
#endif
