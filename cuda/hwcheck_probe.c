/* fpk-hwcheck --probe: the parameters of the GPU's tensor-core accumulation
 * (fpk_tc_params), measured.  Designed dot products, run by the device
 * (hw_dev_dots), each tell some parameter sets of the model apart:
 *  - layout: small integers, exact under every set, check the device code
 *    first (a misfit there ends the probe);
 *  - window: 1 - 1 + 2^-t keeps 2^-t while t is at most the window; with
 *    c = +-(1 + 2^-23) * 2^-t against a product of 1, 2 or 2.25 of the
 *    other sign, c keeps both its bits, its leading one or none (which
 *    shows the window to steps of one product too);
 *  - cut: 1 - 1 +- 1.75 * 2^-t at the window's edge (the -1 a product or
 *    c) gives +-2^-t cut toward zero, -2^(1-t) cut toward minus infinity
 *    (and 2^(1-t) if aligned addends were rounded, which no parameter set
 *    does);
 *  - wide: 1.5 * 1.5 - 2.25 + 2^-t (c or a product cancelling), against
 *    2 * 1 - 2 + 2^-t;
 *  - round: 1 + 1.5 * 2^-23 and 1 + 1.75 * 2^-23, and the same past
 *    carries (2, 3 or 7 products of 1.875), with their negatives, where
 *    the window and the step hold them;
 *  - steps: +2^l and -2^l at positions b and b + 1 (2^l the largest
 *    product the format forms, up to 2^LEAD) and the tiniest product at m:
 *    lost when m shares the step of the +2^l or precedes it, kept when its
 *    step comes later, which maps the steps (their size and the order of
 *    the products) across two instructions;
 *  - the accumulator: c = -2^l against +2^l at position i, the same tiny
 *    product;
 *  - Fasi et al.'s tests of the accumulator (normalisation once a step,
 *    carries, monotonicity);
 *  - promotion (FP8): 2^l at position 0 (or as c) and 2^(l-16) or
 *    1.5 * 2^(l-23) at m of 512: cut along a chain, added by binary32
 *    once m starts a chain of its own.
 * Inputs a format cannot hold are left out.  The answer is every parameter
 * set of a grid (steps dividing the instruction, windows 4 to 52, wide or
 * not, either cut, either rounding, promotion every multiple of the
 * instruction below 512) that reproduces every result; a parameter on
 * which those sets differ is reported open.  With none, the set that held
 * out longest and the probe it fails say how the device departs from the
 * model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcheck.h"

/* The length of the promotion probes. */
#define LONG 512
/* The tiniest and the largest product the steps' probes use: 2^-TINY
 * and 2^LEAD, or the least and the largest a format forms; their ratio
 * is beyond the widest window wherever the format allows. */
#define TINY 60
#define LEAD 30

/* Designed dot products of N products each. */
typedef struct batch {
    const fpk_format *in;
    int n;
    size_t count, cap;
    fpk_bits *a, *b;
    uint32_t *c, *d;
    char (*what)[96];
    bool ok; /* the dot being built: every product is representable */
} batch;

static bool grow(batch *t)
{
    if (t->count < t->cap)
        return true;
    size_t cap = t->cap ? 2 * t->cap : 256, n = (size_t)t->n;
    fpk_bits *a = realloc(t->a, cap * n * sizeof *a), *b;
    if (!a)
        return false;
    t->a = a;
    if (!(b = realloc(t->b, cap * n * sizeof *b)))
        return false;
    t->b = b;
    uint32_t *c = realloc(t->c, cap * sizeof *c), *d;
    if (!c)
        return false;
    t->c = c;
    if (!(d = realloc(t->d, cap * sizeof *d)))
        return false;
    t->d = d;
    char(*w)[96] = realloc(t->what, cap * sizeof *w);
    if (!w)
        return false;
    t->what = w;
    t->cap = cap;
    return true;
}

static void batch_free(batch *t)
{
    free(t->a);
    free(t->b);
    free(t->c);
    free(t->d);
    free(t->what);
}

/* Starts a dot product with accumulator C (binary32 bits), zero products,
 * described by WHAT. */
static bool begin(batch *t, uint32_t c, const char *what)
{
    if (!grow(t))
        return false;
    size_t i = t->count, n = (size_t)t->n;
    memset(t->a + i * n, 0, n * sizeof *t->a);
    memset(t->b + i * n, 0, n * sizeof *t->b);
    t->c[i] = c;
    snprintf(t->what[i], sizeof t->what[i], "%s", what);
    t->ok = true;
    return true;
}

/* The encoding of X in F, if F holds it exactly (nonzero, finite). */
static bool exact(const fpk_format *f, double x, fpk_bits *z)
{
    fpk_ctx c = fpk_ctx_default();
    *z = fpk_from_double(f, x, &c);
    return c.flags == 0 && x != 0 && isfinite(x);
}

/* Position POS := factors X and Y exactly, or the dot is left out. */
static void put2(batch *t, int pos, double x, double y)
{
    size_t i = t->count * (size_t)t->n + (size_t)pos;
    if (pos >= t->n || !exact(t->in, x, &t->a[i]) || !exact(t->in, y, &t->b[i]))
        t->ok = false;
}

/* Position POS := a product of M * 2^E (M of magnitude 1 to 2, three
 * fraction bits at most), split between the factors as the format allows. */
static void put(batch *t, int pos, double m, int e)
{
    size_t i = t->count * (size_t)t->n + (size_t)pos;
    for (int k = 0; k <= 300; k++)
        for (int s = -1; s <= 1; s += 2) {
            int ea = e / 2 + s * k;
            if (pos < t->n && exact(t->in, ldexp(m, ea), &t->a[i]) &&
                exact(t->in, ldexp(1.0, e - ea), &t->b[i]))
                return;
        }
    t->ok = false;
}

/* Ends the dot product: kept if every product was representable. */
static void end(batch *t)
{
    if (t->ok)
        t->count++;
}

/* The exponent X furthest from 0 in direction DIR (1 or -1), LIMIT at
 * most, such that the format forms every power of two from 2^0 to 2^X as
 * a product. */
static int reach(batch *t, int dir, int limit)
{
    int e = 0;
    for (int x = dir; x * dir <= limit; x += dir) {
        fpk_bits a, b;
        bool ok = false;
        for (int ea = 0; ea * dir <= x * dir && !ok; ea += dir)
            ok = exact(t->in, ldexp(1.0, ea), &a) && exact(t->in, ldexp(1.0, x - ea), &b);
        if (!ok)
            break;
        e = x;
    }
    return e;
}

/* The number of layout probes. */
#define LAYOUT 64

/* Small integers, exact under every parameter set, in other places in
 * each dot: WANT[q] the binary32 bits of dot q.  A device result that
 * differs is the device code's (dots, positions, c or d misplaced), not
 * the accumulation's.  (n is even: i and j differ.) */
static bool design_layout(batch *t, uint32_t want[LAYOUT])
{
    char w[96];
    int n = t->n;
    for (int q = 0; q < LAYOUT; q++) {
        int i = q * 7 % n, j = (q * 3 + 1) % n, x = q % 3 + 1, y = q / 4 % 2 + 1;
        fpk_ctx rn = fpk_ctx_default();
        snprintf(w, sizeof w, "layout: c = %d, %d at %d, -%d at %d", q % 4, x, i, y, j);
        if (!begin(t, (uint32_t)fpk_from_double(&fpk_fp32, q % 4, &rn), w))
            return false;
        put2(t, i, x, 1);
        put2(t, j, -y, 1);
        end(t);
        want[t->count - 1] = (uint32_t)fpk_from_double(&fpk_fp32, q % 4 + x - y, &rn);
    }
    return t->count == LAYOUT;
}

/* The probes of length 2K (two instructions). */
static bool design_short(batch *t, int k)
{
    char w[96];
    int s = -reach(t, -1, TINY), l = reach(t, 1, LEAD), n = t->n;
    /* A leading part that cancels (products, c), then a small product of
     * m * 2^-e: the window (1 - 1 + 2^-e), the cut (+-1.75 * 2^-e at the
     * window's edge), the wide window (2.25 cancelled, against 2). */
    static const struct {
        const char *what;
        uint32_t c;
        int np;
        double f[2][2]; /* the leading products' factors */
        double m;
    } cancel[] = {
        {"window: 1 - 1", 0, 2, {{1, 1}, {-1, 1}}, 1},
        {"cut: 1 - 1", 0, 2, {{1, 1}, {-1, 1}}, 1.75},
        {"cut: 1 - 1", 0, 2, {{1, 1}, {-1, 1}}, -1.75},
        {"cut: c = -1, 1", 0xbf800000u, 1, {{1, 1}}, 1.75},
        {"cut: c = -1, 1", 0xbf800000u, 1, {{1, 1}}, -1.75},
        {"wide: c = -2.25, 1.5 * 1.5", 0xc0100000u, 1, {{1.5, 1.5}}, 1},
        {"wide: 1.5 * 1.5 - 1.5 * 1.5", 0, 2, {{1.5, 1.5}, {-1.5, 1.5}}, 1},
        {"wide: 2 * 1 - 2 * 1", 0, 2, {{2, 1}, {-2, 1}}, 1},
    };
    for (int e = 1; e <= s; e++)
        for (size_t q = 0; q < sizeof cancel / sizeof cancel[0]; q++) {
            snprintf(w, sizeof w, "%s %c %g * 2^-%d", cancel[q].what, cancel[q].m < 0 ? '-' : '+',
                     fabs(cancel[q].m), e);
            if (!begin(t, cancel[q].c, w))
                return false;
            for (int i = 0; i < cancel[q].np; i++)
                put2(t, i, cancel[q].f[i][0], cancel[q].f[i][1]);
            put(t, cancel[q].np, cancel[q].m, -e);
            end(t);
        }
    /* c the small addend, which shows the window to steps of one product
     * too: c = +-(1 + 2^-23) * 2^-e against a leading product of the other
     * sign, 1, 2 or 2.25 (1.5 * 1.5, of significand in [2, 4)), keeps
     * both its bits, its leading bit or none */
    static const double lead[][2] = {{1, 1}, {2, 1}, {1.5, 1.5}};
    for (int e = 1; e <= FPK_TC_MAX_WINDOW + 1; e++)
        for (int q = 0; q < 3; q++)
            for (int neg = 0; neg < 2; neg++) {
                uint32_t c = (neg ? 0 : 0x80000000u) | (uint32_t)(127 - e) << 23 | 1;
                snprintf(w, sizeof w, "window: c = %c(1 + 2^-23) * 2^-%d, %s%g * %g",
                         neg ? '+' : '-', e, neg ? "-" : "", lead[q][0], lead[q][1]);
                if (!begin(t, c, w))
                    return false;
                put2(t, 0, neg ? -lead[q][0] : lead[q][0], lead[q][1]);
                end(t);
            }
    static const double fracs[] = {1.5, 1.75, 1.25};
    for (int i = 0; i < 6; i++) {
        double m = fracs[i % 3] * (i < 3 ? 1 : -1);
        snprintf(w, sizeof w, "round: %s1 %c %.2f * 2^-23", i < 3 ? "" : "-", i < 3 ? '+' : '-',
                 fracs[i % 3]);
        if (!begin(t, 0, w))
            return false;
        put(t, 0, i < 3 ? 1 : -1, 0);
        put(t, 1, m, -23);
        end(t);
    }
    /* the same past carries: Q products of 1.875 and 1.5 or 1.75 ulps of
     * their sum (whose exponent is 1, 2 or 3) */
    for (int q = 2; q <= 7; q += q == 2 ? 1 : 4)
        for (int i = 0; i < 4; i++) {
            double m = i % 2 ? 1.75 : 1.5, sign = i < 2 ? 1 : -1;
            int e = (q == 2 ? 1 : q == 3 ? 2 : 3) - 23;
            snprintf(w, sizeof w, "round: %s%d * 1.875 %c %.2f * 2^%d", sign < 0 ? "-" : "", q,
                     sign < 0 ? '-' : '+', m, e);
            if (!begin(t, 0, w))
                return false;
            for (int j = 0; j < q; j++)
                put(t, j, sign * 1.875, 0);
            put(t, q, sign * m, e);
            end(t);
        }
    /* The steps: anchors near the ends and the middle of each instruction. */
    int anchors[] = {0, 1, k / 2 - 1, k / 2, k - 2, k - 1, k, k + 1, n - 2};
    for (size_t q = 0; q < sizeof anchors / sizeof anchors[0]; q++) {
        int b = anchors[q];
        if (b < 0 || b + 1 >= n || (q && b == anchors[q - 1]))
            continue;
        for (int m = 0; m < n; m++) {
            if (m == b || m == b + 1)
                continue;
            snprintf(w, sizeof w, "steps: +2^%d at %d, -2^%d at %d, 2^-%d at %d", l, b, l, b + 1,
                     s, m);
            if (!begin(t, 0, w))
                return false;
            put(t, b, 1, l);
            put(t, b + 1, -1, l);
            put(t, m, 1, -s);
            end(t);
        }
    }
    int places[] = {0, 1, k / 2, k - 1, k, n - 1};
    for (size_t q = 0; q < sizeof places / sizeof places[0]; q++)
        for (size_t r = 0; r < sizeof places / sizeof places[0]; r++) {
            if (q == r)
                continue;
            snprintf(w, sizeof w, "accumulator: c = -2^%d, +2^%d at %d, 2^-%d at %d", l, l,
                     places[q], s, places[r]);
            if (!begin(t, 0x80000000u | (uint32_t)(127 + l) << 23, w))
                return false;
            put(t, places[q], 1, l);
            put(t, places[r], 1, -s);
            end(t);
        }
    /* Fasi et al., section D, with their inputs where the format holds
     * them: 1 - (1 - 2^-24); (1 - 2^-24) + 4 * 2^-24; 1 - 2^-24 - (1 - 2^-24);
     * carries into 1 + 2^-22 + 2^-23 and 1.875; monotonicity. */
    struct {
        const char *what;
        uint32_t c;
        int np;
        double m[5];
        int e[5];
    } fasi[] = {
        {"fasi D1: 1 - (1 - 2^-24)", 0xbf7fffffu, 1, {1}, {0}},
        {"fasi D2: (1 - 2^-24) + 4 * 2^-24", 0x3f7fffffu, 4, {1, 1, 1, 1}, {-24, -24, -24, -24}},
        {"fasi D3: 1 - 2^-24 - (1 - 2^-24)", 0xbf7fffffu, 2, {1, -1}, {0, -24}},
        {"fasi D4: 4 + 1 + 2^-22 + 2^-23", 0x3f800003u, 4, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"fasi D4: 1 + 1.5 + 1.75 + 1.875 + 1.875", 0x3ff00000u, 4, {1, 1.5, 1.75, 1.875},
         {0, 0, 0, 0}},
        {"fasi D5: (1 - 2^-24) + 3 * 2^-25 + 1.5 * 2^-24", 0x3f7fffffu, 4, {1, 1, 1, 1.5},
         {-25, -25, -25, -24}},
        {"fasi D5: 1 + 3 * 2^-25 + 1.5 * 2^-24", 0x3f800000u, 4, {1, 1, 1, 1.5},
         {-25, -25, -25, -24}},
    };
    for (size_t q = 0; q < sizeof fasi / sizeof fasi[0]; q++) {
        if (!begin(t, fasi[q].c, fasi[q].what))
            return false;
        for (int i = 0; i < fasi[q].np; i++)
            put(t, i, fasi[q].m[i], fasi[q].e[i]);
        end(t);
    }
    return true;
}

/* The probes of length LONG: promotion along K.  A product at m after
 * 2^l (a product at 0, or c): 2^(l-16), lost along a chain whose window
 * is narrower, kept by a binary32 addition once m starts a chain of its
 * own; 1.5 * 2^(l-23), 1.5 ulps of 2^l, cut to one by a chain's step
 * under RTZ, rounded to two by the addition. */
static bool design_long(batch *t, int k)
{
    char w[96];
    int l = reach(t, 1, LEAD);
    uint32_t c = (uint32_t)(127 + l) << 23;
    static const struct {
        double m;
        int e;
    } small[] = {{1, -16}, {1.5, -23}};
    for (int j = 0; j < LONG / k; j++)
        for (int d = -1; d <= 1; d++) {
            int m = j * k + d;
            if (m < 1 || m >= LONG || (j == 0 && d < 1))
                continue;
            for (int q = 0; q < 4; q++) {
                double x = small[q / 2].m;
                int e = l + small[q / 2].e;
                bool in_c = q % 2;
                snprintf(w, sizeof w, "promotion: %s2^%d%s, %g * 2^%d at %d of %d",
                         in_c ? "c = " : "", l, in_c ? "" : " at 0", x, e, m, LONG);
                if (!begin(t, in_c ? c : 0, w))
                    return false;
                if (!in_c)
                    put(t, 0, 1, l);
                put(t, m, x, e);
                end(t);
            }
        }
    return true;
}

/* The grid of parameter sets, in the order of preference: the published
 * choices first (wide, cut toward zero, RTZ), then smaller steps,
 * windows and promotion intervals. */
typedef struct grid {
    int nterms, terms[8], npromote, promote[LONG / 8 + 1];
} grid;

static long grid_size(const grid *g)
{
    return (long)2 * 2 * 2 * g->nterms * (FPK_TC_MAX_WINDOW - 3) * g->npromote;
}

static fpk_tc_params grid_at(const grid *g, long i)
{
    fpk_tc_params p;
    p.promote = g->promote[i % g->npromote];
    i /= g->npromote;
    p.window = 4 + (int)(i % (FPK_TC_MAX_WINDOW - 3));
    i /= FPK_TC_MAX_WINDOW - 3;
    p.terms = g->terms[i % g->nterms];
    i /= g->nterms;
    p.round = i % 2 ? FPK_RNE : FPK_RTZ;
    p.floor = i / 2 % 2;
    p.wide = i / 4 % 2 == 0;
    return p;
}

/* The index of the first probe of T that P disagrees with (T->count if
 * none); *MODEL its result there. */
static size_t misfit(const fpk_tc_params *p, const batch *t, uint32_t *model)
{
    size_t n = (size_t)t->n;
    for (size_t i = 0; i < t->count; i++) {
        uint32_t z = (uint32_t)fpk_tc_dot_params(p, t->in, &fpk_fp32, t->a + i * n, t->b + i * n,
                                                 n, t->c[i]);
        if (z != t->d[i]) {
            *model = z;
            return i;
        }
    }
    return t->count;
}

/* The same for T0 then T1, counting on. */
static size_t first_misfit(const fpk_tc_params *p, const batch *t0, const batch *t1,
                           uint32_t *model)
{
    size_t at = misfit(p, t0, model);
    return at < t0->count ? at : at + misfit(p, t1, model);
}

static const batch *probe_at(const batch *t0, const batch *t1, size_t at, size_t *i)
{
    *i = at < t0->count ? at : at - t0->count;
    return at < t0->count ? t0 : t1;
}

int hw_probe(hw_tc_input which, fpk_tc_arch arch, hw_probe_result *r, char *msg, size_t len)
{
    const hw_tc_desc *tc = &hw_tcs[which];
    int k = tc->k;
    bool fp8 = tc->in == &fpk_e4m3 || tc->in == &fpk_e5m2;
    batch tl = {.in = tc->in, .n = 2 * k}, t0 = {.in = tc->in, .n = 2 * k},
          t1 = {.in = tc->in, .n = LONG};
    uint32_t want[LAYOUT];
    memset(r, 0, sizeof *r);
    int rc = -1;
    if (!design_layout(&tl, want) || !design_short(&t0, k) || (fp8 && !design_long(&t1, k))) {
        snprintf(msg, len, "out of memory for the probes");
        goto done;
    }
    if (hw_dev_dots(which, tl.n, tl.count, tl.a, tl.b, tl.c, tl.d, msg, len) != 0 ||
        hw_dev_dots(which, t0.n, t0.count, t0.a, t0.b, t0.c, t0.d, msg, len) != 0 ||
        (t1.count && hw_dev_dots(which, t1.n, t1.count, t1.a, t1.b, t1.c, t1.d, msg, len) != 0))
        goto done;
    r->probes = (int)(tl.count + t0.count + t1.count);
    for (size_t q = 0; q < tl.count; q++)
        if (tl.d[q] != want[q]) {
            snprintf(r->misfit, sizeof r->misfit,
                     "the device code misplaces its inputs: \"%s\": device 0x%08x, exact 0x%08x",
                     tl.what[q], tl.d[q], want[q]);
            rc = 0;
            goto done;
        }

    grid g = {0};
    for (int s = 1; s <= k; s *= 2)
        g.terms[g.nterms++] = s;
    g.promote[g.npromote++] = 0;
    for (int p = k; fp8 && p < LONG; p += k)
        g.promote[g.npromote++] = p;
    r->candidates = grid_size(&g);
    size_t total = t0.count + t1.count;
    long best = -1; /* the most probes a set agreed with before its first misfit */
    fpk_tc_params first = {0}, closest = {0};
    uint32_t model = 0;
    /* the short probes see no promotion interval of their length or more:
     * each such set's misfit there is that of the first (promotion varies
     * fastest in the grid) */
    size_t shared_at = 0;
    uint32_t shared_z = 0;
    for (long i = 0; i < r->candidates; i++) {
        fpk_tc_params p = grid_at(&g, i);
        uint32_t z = 0;
        size_t at;
        if (p.promote >= t0.n && i % g.npromote && grid_at(&g, i - 1).promote >= t0.n) {
            at = shared_at;
            z = shared_z;
        } else {
            at = misfit(&p, &t0, &z);
            shared_at = at;
            shared_z = z;
        }
        if (at == t0.count)
            at += misfit(&p, &t1, &z);
        if (at < total) {
            if ((long)at > best) {
                best = (long)at;
                closest = p;
                model = z;
            }
        } else if (r->survivors++ == 0) {
            first = p;
        } else {
            r->open |= (p.terms != first.terms) * HW_P_TERMS |
                       (p.window != first.window) * HW_P_WINDOW |
                       (p.wide != first.wide) * HW_P_WIDE | (p.floor != first.floor) * HW_P_FLOOR |
                       (p.round != first.round) * HW_P_ROUND |
                       (p.promote != first.promote) * HW_P_PROMOTE;
        }
    }
    size_t i;
    if (r->survivors) {
        r->found = first;
    } else {
        r->found = closest;
        const batch *t = probe_at(&t0, &t1, (size_t)best, &i);
        char p[128];
        hw_tc_params_text(&closest, p, sizeof p);
        snprintf(r->misfit, sizeof r->misfit,
                 "the closest (%s) agrees with the first %ld of %zu probes of the accumulation, "
                 "not with \"%s\": device 0x%08x, model 0x%08x",
                 p, best, total, t->what[i], t->d[i], model);
    }
    fpk_tc_params pub;
    if (hw_tc_published(arch, which, &pub)) {
        size_t at = first_misfit(&pub, &t0, &t1, &model);
        if (at < total) {
            const batch *t = probe_at(&t0, &t1, at, &i);
            snprintf(r->published, sizeof r->published,
                     "%s's parameters disagree first on \"%s\": device 0x%08x, model 0x%08x",
                     fpk_tc_arch_name(arch), t->what[i], t->d[i], model);
        }
    }
    rc = 0;
done:
    batch_free(&tl);
    batch_free(&t0);
    batch_free(&t1);
    return rc;
}
