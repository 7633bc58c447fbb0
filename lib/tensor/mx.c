/* Block scaling: OCP Microscaling Formats (MX) v1.0.  A block of float32
 * values shares one E8M0 scale 2^k (§6.3 or its rounded-up variant, see
 * fpk_mx_rule); each element is rounded once, exactly as V * 2^-k: the
 * product, exact in float32 but for magnitudes no element format can
 * hold, is formed on the exponent bits and rounded by the array functions
 * (their fast paths where the element format has them, the core
 * otherwise), so that no quotient is ever formed in floating point. */
#include <limits.h>
#include <string.h>

#include "array-impl.h"

#define F32_INF UINT32_C(0x7f800000)
#define F32_MIN_NORMAL UINT32_C(0x00800000)

/* OCP MX element formats and their like: at most 8 bits, signed, with a
 * normal largest value (emax is then its exponent). */
static bool mx_element(const fpk_format *elem)
{
    return elem && elem->width <= 8 && elem->special != FPK_SPECIAL_E8M0 &&
           fpki_classify(elem, elem->max_finite) == FPK_CLASS_NORMAL;
}

/* The scale exponent k for a block of ELEM whose largest magnitude has the
 * float32 magnitude bits AMAX (finite): floor(log2(amax)) - emax, plus one
 * under FPK_MX_CEIL when amax / 2^k, in [2^emax, 2^(emax+1)), exceeds max
 * finite, i.e. when amax's significand exceeds max finite's; clamped to
 * E8M0's range, and its least for a block of zeros. */
static int scale_exp(const fpk_format *elem, fpk_mx_rule rule, uint32_t amax)
{
    if (amax == 0)
        return fpk_e8m0.emin;
    fpki_unpacked u = fpki_unpack(&fpk_fp32, amax, NULL);
    int lead = 63 - fpki_clz64(u.sig);
    int64_t k = (int64_t)u.exp + lead - elem->emax;
    if (rule == FPK_MX_CEIL) {
        const int m = elem->man_bits;
        uint64_t max_sig = ((elem->max_finite & elem->man_mask) | (fpk_bits)1 << m) << (63 - m);
        k += u.sig << (63 - lead) > max_sig;
    }
    return k < fpk_e8m0.emin ? fpk_e8m0.emin : k > fpk_e8m0.emax ? fpk_e8m0.emax : (int)k;
}

fpk_bits fpk_mx_scale(const fpk_format *elem, fpk_mx_rule rule, float amax)
{
    uint32_t bits;
    memcpy(&bits, &amax, sizeof bits);
    bits &= INT32_MAX;
    if (bits >= F32_INF || !mx_element(elem))
        return fpk_e8m0.nan;
    return (fpk_bits)(scale_exp(elem, rule, bits) + fpk_e8m0.bias);
}

/* P * 2^K as float32 bits, P an encoding of F (not NaN): exact for the
 * OCP element formats and float32 (but infinite for 2^128), rounded to
 * nearest even otherwise. */
static uint32_t scaled_value(const fpk_format *f, fpk_bits p, int k)
{
    fpki_unpacked u = fpki_unpack(f, p, NULL);
    if (u.cls == FPK_CLASS_ZERO)
        return u.sign ? UINT32_C(0x80000000) : 0;
    fpk_ctx rne = fpk_ctx_default();
    return (uint32_t)fpki_round_pack(&fpk_fp32, u.sign, (int64_t)u.exp + k, 0, u.sig, &rne);
}

/* Where the array functions' kernels round into the element format under
 * the call's mode, elements are rounded a piece at a time: scaled into a
 * buffer on their exponent bits, rounded there by one call, and scaled
 * back.  Elsewhere each is rounded alone by the core. */
#define MX_PIECE 1024
#define MX_SEGS 64           /* runs of one block's elements in a piece */
#define MX_NAN_BLOCK INT_MIN /* the k of a block with the NaN scale */

/* A run of one block's elements in a piece, from FROM on. */
typedef struct mx_seg {
    size_t from, block;
    int k; /* the block's scale exponent; MX_NAN_BLOCK */
} mx_seg;

/* One call's state: its outputs and, for pieces, elements FIRST .. FIRST +
 * N - 1 scaled, in NSEG runs. */
typedef struct mx_run {
    const fpk_format *elem;
    fpk_ctx ec;        /* the call's context, saturating */
    fpk_ctx qc;        /* the pieces': without saturation or daz */
    uint64_t counter;  /* the SR counter of element 0 */
    uint32_t maxf;     /* ELEM's max finite, as float32 bits */
    uint32_t min_norm; /* ELEM's least normal, as float32 bits */
    uint8_t *enc;
    float *y;
    fpk_mx_block *blocks;
    fpki_mx_amax_fn *max_fn; /* the kernels of the CPU's set */
    fpki_mx_scale_down_fn *down_fn;
    fpki_mx_scale_up_fn *up_fn;
    size_t first, n, nseg;
    mx_seg seg[MX_SEGS];
    uint32_t xs[MX_PIECE];
} mx_run;

/* Element I (float32 bits BITS: finite, nonzero) of block B, of scale
 * exponent K, rounded by the core as V * 2^-K into R's element format
 * under R->ec, which gets its flags; an overflow counts as saturated. */
static fpk_bits round_one(mx_run *r, uint32_t bits, int k, size_t i, size_t b)
{
    fpki_unpacked u = fpki_unpack(&fpk_fp32, bits, NULL);
    unsigned flags = r->ec.flags;
    r->ec.flags = 0;
    r->ec.sr_counter = r->counter + i;
    fpk_bits p = fpki_round_pack(r->elem, u.sign, (int64_t)u.exp - k, 0, u.sig, &r->ec);
    if (r->blocks)
        r->blocks[b].saturated += (r->ec.flags & FPK_OVERFLOW) != 0;
    r->ec.flags |= flags;
    return p;
}

/* The LEN elements of block B at X + FIRST, of scale exponent K
 * (MX_NAN_BLOCK: the NaN scale), rounded one by one. */
static void block_by_element(mx_run *r, const float *x, size_t first, size_t len, int k,
                             size_t b)
{
    const fpk_format *elem = r->elem;
    for (size_t i = first; i < first + len; i++) {
        uint32_t bits, out = fpk_fp32.nan;
        memcpy(&bits, &x[i], sizeof bits);
        fpk_bits p = elem->nan;
        if (k != MX_NAN_BLOCK) {
            if (r->ec.daz && (bits & INT32_MAX) < F32_MIN_NORMAL)
                bits &= ~(uint32_t)INT32_MAX;
            if ((bits & INT32_MAX) == 0) {
                p = fpki_zero(elem, bits != 0);
            } else {
                p = round_one(r, bits, k, i, b);
                fpk_class cls = fpki_classify(elem, p);
                if (r->blocks) {
                    r->blocks[b].flushed += cls == FPK_CLASS_ZERO;
                    r->blocks[b].subnormal += cls == FPK_CLASS_SUBNORMAL;
                }
            }
            out = scaled_value(elem, p, k);
        }
        if (r->enc)
            r->enc[i] = (uint8_t)p;
        if (r->y)
            memcpy(&r->y[i], &out, sizeof out);
    }
}

/* The float32 bits of V * 2^-K, V a finite nonzero float32 (bits BITS)
 * whose product is below 2^127: exact where it is 2^-126 or more.  Below,
 * the least subnormal of V's sign stands in for it: an MX element
 * format's least subnormal is 2^-63 or more, so that every mode rounds
 * both alike, with the same flags (SR too: floor(frac * 2^sr_bits) is 0
 * for both). */
static uint32_t scaled_down(uint32_t bits, int k)
{
    uint32_t sign = bits & ~(uint32_t)INT32_MAX, man = bits & 0x7fffff;
    int e = (int)((bits & INT32_MAX) >> 23);
    if (e == 0) { /* man * 2^-149 = 1.f * 2^(lead - 149) */
        int lead = 63 - fpki_clz64(man);
        e = lead - 22;
        man = (man << (23 - lead)) & 0x7fffff;
    }
    int biased = e - k;
    return biased < 1 ? sign | 1 : sign | (uint32_t)biased << 23 | man;
}

/* Float32 bits as an exponent field E: E << 23, E clamped to [0, 255]. */
static uint32_t exp_bits(int e)
{
    return (uint32_t)(e < 0 ? 0 : e > 255 ? 255 : e) << 23;
}

/* The window LO + [0, HI - LO] of S (HI below LO: none). */
static void set_window(fpki_mx_span *s, uint32_t lo, int64_t hi)
{
    s->lo = hi < lo ? UINT32_MAX : lo;
    s->span = hi < lo ? 0 : (uint32_t)(hi - lo);
}

/* The span constants of scale exponent K for scaling down: the normal
 * magnitudes whose products are normal float32s within max finite
 * R->maxf scale plainly. */
static fpki_mx_span down_span(const mx_run *r, int k)
{
    fpki_mx_span s = {.shift = (uint32_t)k << 23,
                     .zero_below = r->ec.daz ? F32_MIN_NORMAL : 1,
                     .min_norm = r->min_norm};
    int64_t hi = (int64_t)r->maxf + (int64_t)k * ((int64_t)1 << 23);
    set_window(&s, exp_bits(k < 0 ? 1 : k + 1), hi > INT32_MAX ? INT32_MAX : hi);
    return s;
}

/* The same for scaling back by 2^K: the normal magnitudes whose products
 * are normal float32s (an element format's values are normal float32s,
 * but a window of normal ones alone stays right for any). */
static fpki_mx_span up_span(const mx_run *r, int k)
{
    fpki_mx_span s = down_span(r, k);
    set_window(&s, exp_bits(k > 0 ? 1 : 1 - k), (int64_t)exp_bits(255 - k) - 1);
    return s;
}

/* XS[j] for the elements fpki_mx_scale_down_fn left (bit j of ODD): the exact
 * product, or its stand-in (scaled_down); beyond max finite, where every
 * mode saturates to +-max finite, the core rounds element I + j for its
 * flags and the count, and XS[j] holds +-max finite, which rounds
 * exactly. */
static void mx_exact(mx_run *r, uint32_t *xs, const float *x, const uint8_t *odd, size_t i,
                     size_t n, int k, size_t b)
{
    for (size_t j = 0; j < n; j++) {
        if (!odd[j / 8]) { /* (mostly) */
            j |= 7;
            continue;
        }
        if (odd[j / 8] >> (j % 8) & 1) {
            uint32_t v;
            memcpy(&v, &x[j], sizeof v);
            xs[j] = scaled_down(v, k);
            if ((xs[j] & INT32_MAX) > r->maxf) {
                round_one(r, v, k, i + j, b);
                xs[j] = (v & ~(uint32_t)INT32_MAX) | r->maxf;
            }
        }
    }
}

/* Y[j] for the results fpki_mx_scale_up_fn left under UP (up_span's for K):
 * Q[j] * 2^K by scaled_value, where the product is not a normal float32. */
static void unscale_exact(const fpki_mx_span *up, float *y, const uint32_t *q, size_t n, int k)
{
    for (size_t j = 0; j < n; j++) {
        uint32_t mag = q[j] & INT32_MAX;
        if (mag && fpki_mx_outside(up, mag))
            memcpy(&y[j], &(uint32_t){scaled_value(&fpk_fp32, q[j], k)}, sizeof(uint32_t));
    }
}

/* Rounds the piece, and writes its outputs and counts. */
static void mx_flush(mx_run *r)
{
    uint32_t q[MX_PIECE];
    uint8_t e[MX_PIECE];
    r->qc.sr_counter = r->counter + r->first;
    fpk_array_quantize(r->elem, (float *)q, FPK_DTYPE_F32, r->xs, r->n, &r->qc, 1);
    if (r->enc) {
        r->qc.sr_counter = r->counter + r->first;
        fpk_array_convert(r->elem, e, FPK_DTYPE_F32, r->xs, r->n, &r->qc, 1);
    }
    for (size_t s = 0; s < r->nseg; s++) {
        const mx_seg *g = &r->seg[s];
        size_t from = g->from, to = s + 1 < r->nseg ? g[1].from : r->n;
        size_t i = r->first + from;
        if (g->k == MX_NAN_BLOCK) {
            for (size_t j = from; j < to; j++) {
                if (r->enc)
                    r->enc[i + j - from] = (uint8_t)r->elem->nan;
                if (r->y)
                    memcpy(&r->y[i + j - from], &(uint32_t){(uint32_t)fpk_fp32.nan},
                           sizeof(uint32_t));
            }
            continue;
        }
        if (r->enc)
            memcpy(r->enc + i, e + from, to - from);
        const fpki_mx_span up = up_span(r, g->k);
        uint32_t counts[2] = {0, 0};
        uint32_t *y = r->y ? (uint32_t *)(void *)(r->y + i) : NULL;
        if (r->up_fn(&up, q + from, r->xs + from, y, to - from, counts) && r->y)
            unscale_exact(&up, r->y + i, q + from, to - from, g->k);
        if (r->blocks) {
            r->blocks[g->block].flushed += counts[0];
            r->blocks[g->block].subnormal += counts[1];
        }
    }
    r->first += r->n;
    r->n = r->nseg = 0;
}

/* Adds the LEN elements of block B at X + FIRST, of scale exponent K
 * (MX_NAN_BLOCK: the NaN scale), to the pieces. */
static void block_to_pieces(mx_run *r, const float *x, size_t first, size_t len, int k,
                            size_t b)
{
    const fpki_mx_span down = down_span(r, k == MX_NAN_BLOCK ? 0 : k);
    uint8_t odd[MX_PIECE / 8 + 2];
    for (size_t i = first; i < first + len;) {
        if (r->n == MX_PIECE || r->nseg == MX_SEGS)
            mx_flush(r);
        size_t take = first + len - i < MX_PIECE - r->n ? first + len - i : MX_PIECE - r->n;
        uint32_t *xs = r->xs + r->n;
        r->seg[r->nseg++] = (mx_seg){r->n, b, k};
        if (k == MX_NAN_BLOCK)
            memset(xs, 0, take * sizeof *xs);
        else if (r->down_fn(&down, (const uint32_t *)(const void *)(x + i), xs, take, odd))
            mx_exact(r, xs, x + i, odd, i, take, k, b);
        r->n += take;
        i += take;
    }
}

/* The scale exponent of the LEN elements at X under R's daz, or
 * MX_NAN_BLOCK if one is an infinity or a NaN. */
static int block_exp(const mx_run *r, fpk_mx_rule rule, const float *x, size_t len)
{
    uint64_t top = r->max_fn((const uint32_t *)(const void *)x, len);
    if (top >> 32)
        return MX_NAN_BLOCK;
    uint32_t amax = (uint32_t)top;
    return scale_exp(r->elem, rule, r->ec.daz && amax < F32_MIN_NORMAL ? 0 : amax);
}

bool fpk_mx_quantize(const fpk_format *elem, fpk_mx_rule rule, size_t block, const float *x,
                     size_t n, uint8_t *enc, uint8_t *scales, float *y, fpk_mx_block *blocks,
                     fpk_ctx *c)
{
    if (!mx_element(elem))
        return false;
    if (block == 0)
        block = FPK_MX_BLOCK;
    mx_run r = {.elem = elem, .ec = *c, .counter = c->sr_counter, .enc = enc, .y = y,
                .blocks = blocks};
    r.ec.saturate = true; /* §6.3: "clamping normal numbers" */
    r.qc = r.ec;
    r.qc.saturate = r.qc.daz = false;
    r.qc.flags = 0;
    r.maxf = scaled_value(elem, elem->max_finite, 0);
    r.min_norm = (uint32_t)(elem->emin + 127) << 23;
    const bool pieces = fpki_array_fast(elem, &r.qc);
    fpki_isa isa = fpki_isa_best();
    r.max_fn = fpki_mx_amax_fns[isa];
    r.down_fn = fpki_mx_scale_down_fns[isa];
    r.up_fn = fpki_mx_scale_up_fns[isa];
    for (size_t first = 0, b = 0; first < n; first += block, b++) {
        size_t len = n - first < block ? n - first : block;
        int k = block_exp(&r, rule, x + first, len);
        fpk_bits scale = k == MX_NAN_BLOCK ? fpk_e8m0.nan : (fpk_bits)(k + fpk_e8m0.bias);
        if (scales)
            scales[b] = (uint8_t)scale;
        if (blocks)
            blocks[b] = (fpk_mx_block){.scale = scale};
        if (pieces)
            block_to_pieces(&r, x, first, len, k, b);
        else
            block_by_element(&r, x, first, len, k, b);
    }
    if (r.n)
        mx_flush(&r);
    c->flags = r.ec.flags | r.qc.flags;
    c->sr_counter = r.counter + n;
    return true;
}
