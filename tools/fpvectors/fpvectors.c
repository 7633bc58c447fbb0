/* fpvectors: rounding regression vectors for any format and operation, in
 * Berkeley TestFloat's line layout, with results and flags from libfpkit.
 *
 * The cases come first from a structured list (special values, boundary
 * exponents with significands of runs of ones and zeros, ties of the result
 * format and values one ulp off them, operand pairs made to hit ties,
 * cancellation and the thresholds of the result) and then from a weighted
 * random generator of the same shapes, as TestFloat's generators do. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vectors.h"

enum { OPT_LEVEL = CLI_OWN, OPT_EXHAUSTIVE, OPT_N };

static const cli_opt options[] = {
    VEC_OPTIONS,
    {.key = OPT_LEVEL, .name = "--level", .value = "1|2",
     .help = "level 1 (default) or 2: a fixed number of cases, see fpvectors(1)"},
    {.key = OPT_EXHAUSTIVE, .name = "--exhaustive",
     .help = "every input, where there are at most 2^24"},
    {.key = OPT_N, .name = "-n", .value = "N", .help = "N cases"},
    {.key = CLI_SEED, .value = "S", .help = "the random part's seed (default 1)"},
    {0},
};

static const char *const synopsis[] = {VEC_SYNOPSIS " --level|--exhaustive|-n --seed", NULL};

/* What the tool's own options set. */
typedef struct own_opts {
    int level;
    bool all;
    uint64_t n;
} own_opts;

static void own_option(void *state, int key, char *const *v)
{
    own_opts *o = state;
    if (key == OPT_LEVEL)
        o->level = (int)cli_parse_int("--level", v[0], 1, 2);
    else if (key == OPT_EXHAUSTIVE)
        o->all = true;
    else if (key == OPT_N)
        o->n = (uint64_t)cli_parse_int("-n", v[0], 1, INT64_MAX);
}

static const cli_tool tool = {
    .name = "fpvectors",
    .synopsis = synopsis,
    .intro = "Writes one case per line, OPERAND... RESULT FLAGS in hexadecimal (fpvectors(1)).",
    .opts = options,
    .own = own_option,
};

/* Cases of each level, by the operation's number of operands. */
static const uint64_t level_cases[2][3] = {{10000, 50000, 100000}, {200000, 1000000, 2000000}};
#define EXHAUSTIVE_MAX ((uint64_t)1 << 24)
#define NO_TIE (-1000)

typedef struct gen {
    const vec_spec *s;
    const fpk_format *f; /* the operands' format; from_int: the result's */
    int level;
    uint64_t seed, counter;
    int exps[64]; /* boundary exponents (of the leading bit), no repeats */
    int nexps;
    fpk_bits core[32]; /* special values, both signs */
    int ncore;
    fpk_bits core3[16]; /* fewer of them, for three operands */
    int ncore3;
    uint64_t *pool; /* structured operands: encodings, or int64 for from_int */
    size_t npool, cap_pool;
    vec_case *cases; /* the structured cases */
    size_t ncases, cap_cases;
} gen;

static uint64_t rnd(gen *g)
{
    return fpk_sr_hash(g->seed, g->counter++);
}

/* Uniform enough in [0, n) for test cases; 0 when N is 0. */
static uint64_t below(gen *g, uint64_t n)
{
    return n ? rnd(g) % n : 0;
}

static bool coin(gen *g)
{
    return rnd(g) >> 63;
}

static void *grow(void *p, size_t *cap, size_t size)
{
    *cap = *cap ? 2 * *cap : 1024;
    p = realloc(p, *cap * size);
    if (!p)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    return p;
}

static void push_operand(gen *g, uint64_t x)
{
    if (g->npool == g->cap_pool)
        g->pool = grow(g->pool, &g->cap_pool, sizeof *g->pool);
    g->pool[g->npool++] = x;
}

static void push_case(gen *g, uint64_t a, uint64_t b, uint64_t c)
{
    if (g->ncases == g->cap_cases)
        g->cases = grow(g->cases, &g->cap_cases, sizeof *g->cases);
    g->cases[g->ncases++] = (vec_case){.in = {a, b, c}};
}

/* +-(1 + FRAC/2^64) * 2^E in F, truncated to F's precision: below the
 * normal range a subnormal (at least the smallest), above it the exponent
 * held at F's largest. */
static fpk_bits compose(const fpk_format *f, bool neg, int e, uint64_t frac)
{
    int m = f->man_bits;
    fpk_bits sign = neg ? f->sign_mask : 0, man = m ? frac >> (64 - m) : 0;
    if (e > f->emax)
        e = f->emax;
    if (e >= f->emin)
        return sign | (fpk_bits)(e + f->bias) << m | man;
    int d = f->emin - e;
    fpk_bits sig = d > m ? 0 : (((fpk_bits)1 << m) | man) >> d;
    return sign | (sig ? sig : 1);
}

/* The exponent of X's leading bit, for finite nonzero X. */
static bool lead_exp(const fpk_format *f, fpk_bits x, int *e)
{
    fpk_class k = fpk_classify(f, x);
    if (k == FPK_CLASS_NORMAL)
        *e = (int)((x & f->exp_mask) >> f->man_bits) - f->bias;
    else if (k == FPK_CLASS_SUBNORMAL)
        *e = f->emin - f->man_bits + 63 - __builtin_clzll(x & f->man_mask);
    return k == FPK_CLASS_NORMAL || k == FPK_CLASS_SUBNORMAL;
}

/* A fraction (64 bits, the first below the binary point at the top) of
 * one of TestFloat's shapes, for K from 1 to 63 and F's M fraction bits. */
static uint64_t pattern(int kind, int k, int m)
{
    switch (kind) {
    case 0: return 0;
    case 1: return UINT64_MAX;
    case 2: return ~(UINT64_MAX >> k);                    /* K ones at the top */
    case 3: return UINT64_MAX >> k;                       /* K zeros at the top */
    case 4: return m ? (UINT64_MAX >> (64 - k)) << (64 - m) : 0; /* K ones at the bottom */
    default: return (uint64_t)1 << (64 - k);              /* bit K alone */
    }
}
#define PATTERN_KINDS 6

/* The fraction bits the result keeps at leading exponent E, for the
 * operations whose single operand rounds (convert, to_int); NO_TIE where
 * nothing rounds.  -1: the operand is the tie itself (half the smallest
 * step). */
static int tie_keep(const gen *g, int e)
{
    const fpk_format *f = g->f, *t = g->s->to;
    int k;
    if (g->s->op->code == VEC_CONVERT)
        k = t->man_bits - (e < t->emin ? t->emin - e : 0);
    else if (g->s->op->code == VEC_TO_INT)
        k = e;
    else
        return NO_TIE;
    return k >= -1 && k < f->man_bits ? k : NO_TIE;
}

/* A tie at K kept bits with the kept bits shaped by HEAD (0: zeros, 1:
 * ones, 2: alternating, 3: only the last kept bit), then moved by STEP
 * (-1, 0, 1) of F's ulp; into F at exponent E with sign NEG. */
static fpk_bits tie(const gen *g, bool neg, int e, int k, int head, int step)
{
    static const uint64_t heads[] = {0, UINT64_MAX, 0xaaaaaaaaaaaaaaaa, 0};
    uint64_t frac = k < 0 ? 0 : (uint64_t)1 << (63 - k);
    if (k > 0)
        frac |= (head == 3 ? (uint64_t)1 << (64 - k) : heads[head] & ~(UINT64_MAX >> k));
    if (g->f->man_bits == 0) /* no fraction: the neighbours are powers of two */
        return compose(g->f, neg, e + step, 0);
    uint64_t ulp = (uint64_t)1 << (64 - g->f->man_bits);
    if (step < 0 && frac < ulp)
        return compose(g->f, neg, e - 1, UINT64_MAX); /* just below 2^E */
    return compose(g->f, neg, e, step < 0 ? frac - ulp : step > 0 ? frac + ulp : frac);
}

static void add_exp(gen *g, int e)
{
    const fpk_format *f = g->f;
    int lo = f->emin - f->man_bits;
    e = e < lo ? lo : e > f->emax ? f->emax : e;
    for (int i = 0; i < g->nexps; i++)
        if (g->exps[i] == e)
            return;
    g->exps[g->nexps++] = e;
}

/* The exponents where F's and the result's behaviour changes. */
static void boundary_exps(gen *g)
{
    const fpk_format *f = g->f, *t = g->s->to;
    int m = f->man_bits;
    int own[] = {f->emin - m, f->emin - m + 1, f->emin - 1, f->emin, f->emin + 1, -2, -1, 0, 1, 2,
                 f->emax - 1, f->emax};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        add_exp(g, own[i]);
    switch (g->s->op->code) {
    case VEC_CONVERT:
        for (int d = -2; d <= 1; d++)
            add_exp(g, t->emin - t->man_bits + d); /* around the smallest subnormal's half */
        add_exp(g, t->emin - 1), add_exp(g, t->emin), add_exp(g, t->emin + 1);
        add_exp(g, t->emax - 1), add_exp(g, t->emax), add_exp(g, t->emax + 1);
        break;
    case VEC_TO_INT:
        add_exp(g, m - 1), add_exp(g, m), add_exp(g, m + 1);
        add_exp(g, 31), add_exp(g, 62), add_exp(g, 63), add_exp(g, 64);
        break;
    case VEC_ADD:
    case VEC_SUB:
        add_exp(g, f->emin + m), add_exp(g, f->emin + m + 1); /* cancelling into subnormals */
        break;
    case VEC_MUL:
    case VEC_DIV:
    case VEC_FMA:
    case VEC_SQRT:
        add_exp(g, f->emin / 2 - 1), add_exp(g, f->emin / 2); /* products at the thresholds */
        add_exp(g, f->emax / 2), add_exp(g, f->emax / 2 + 1);
        break;
    default:
        break;
    }
}

/* Zeros, infinities, quiet and signaling NaNs, max finite, min normal, the
 * smallest and largest subnormal and 1, each with both signs. */
static void specials(gen *g)
{
    const fpk_format *f = g->f;
    int m = f->man_bits;
    fpk_bits v[10];
    int n = 0;
    v[n++] = 0;
    v[n++] = compose(f, false, 0, 0);
    v[n++] = f->max_finite;
    v[n++] = (fpk_bits)1 << m;
    if (m > 0)
        v[n++] = 1, v[n++] = ((fpk_bits)1 << m) - 1;
    if (f->inf)
        v[n++] = f->inf;
    v[n++] = f->nan;
    if (f->special == FPK_SPECIAL_IEEE && m >= 1)
        v[n++] = f->exp_mask | f->man_mask; /* quiet, every payload bit set */
    if (f->special == FPK_SPECIAL_IEEE && m >= 2)
        v[n++] = f->exp_mask | 1; /* signaling */
    for (int i = 0; i < n; i++) {
        g->core[g->ncore++] = v[i];
        g->core[g->ncore++] = v[i] | f->sign_mask;
        /* +-0, +-1, and the rest positive only */
        g->core3[g->ncore3++] = v[i];
        if (i < 2)
            g->core3[g->ncore3++] = v[i] | f->sign_mask;
    }
}

/* Run lengths of the structured significands: a few at level 1, all at 2. */
static int run_lengths(const gen *g, int m, int *k)
{
    int n = 0;
    if (g->level >= 2) {
        for (int i = 1; i < m; i++)
            k[n++] = i;
        return n;
    }
    int want[] = {1, 2, m / 2, m - 1};
    for (int i = 0; i < 4; i++) {
        bool seen = false;
        for (int j = 0; j < n; j++)
            seen |= k[j] == want[i];
        if (want[i] >= 1 && want[i] < m && !seen)
            k[n++] = want[i];
    }
    return n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts the structured operands and drops repeats. */
static void sort_pool(gen *g)
{
    qsort(g->pool, g->npool, sizeof *g->pool, cmp_u64);
    size_t n = 0;
    for (size_t i = 0; i < g->npool; i++)
        if (n == 0 || g->pool[i] != g->pool[n - 1])
            g->pool[n++] = g->pool[i];
    g->npool = n;
}

/* The structured operands of a floating-point operand: the specials, then
 * every sign, boundary exponent and shape of significand, and the ties of
 * the result with their neighbours one ulp off; in encoding order. */
static void float_pool(gen *g)
{
    const fpk_format *f = g->f;
    int m = f->man_bits, ks[64];
    int nk = run_lengths(g, m, ks);
    for (int i = 0; i < g->ncore; i++)
        push_operand(g, g->core[i]);
    /* sqrt of a negative number is invalid whatever it is: the specials
     * hold enough of them */
    int signs = g->s->op->code == VEC_SQRT ? 1 : 2;
    for (int neg = 0; neg < signs; neg++)
        for (int i = 0; i < g->nexps; i++) {
            int e = g->exps[i];
            push_operand(g, compose(f, neg, e, pattern(0, 1, m)));
            push_operand(g, compose(f, neg, e, pattern(1, 1, m)));
            for (int j = 0; j < nk; j++)
                for (int kind = 2; kind < PATTERN_KINDS; kind++)
                    push_operand(g, compose(f, neg, e, pattern(kind, ks[j], m)));
            int k = tie_keep(g, e);
            for (int head = 0; k != NO_TIE && head < 4; head++)
                for (int step = -1; step <= 1; step++)
                    push_operand(g, tie(g, neg, e, k, head, step));
        }
    sort_pool(g);
}

/* An integer of BITS significant bits (1 to 63) shaped as a tie of F's
 * precision where it has more bits than that, moved by STEP. */
static uint64_t int_tie(const fpk_format *f, int bits, uint64_t head, int step)
{
    int p = f->man_bits + 1;
    uint64_t top = (uint64_t)1 << (bits - 1);
    if (bits <= p)
        return top | (head & (top - 1));
    int low = bits - p; /* dropped bits */
    uint64_t v = (top | (head << low & (top - 1))) & ~(((uint64_t)1 << low) - 1);
    return (v | (uint64_t)1 << (low - 1)) + (uint64_t)step;
}

static uint64_t negate(uint64_t v)
{
    return (uint64_t)0 - v; /* two's complement, INT64_MIN stays */
}

/* from_int's structured operands: 0, +-1, the ends of int64, powers of
 * two and their neighbours, and ties of F's precision, by bit length. */
static void int_pool(gen *g)
{
    int lens[64], n = 0, p = g->f->man_bits + 1;
    if (g->level >= 2)
        for (int b = 1; b <= 63; b++)
            lens[n++] = b;
    else {
        int want[] = {1, 2, 3, p - 1, p, p + 1, p + 2, 31, 32, 33, 53, 54, 55, 62, 63};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            if (want[i] >= 1 && want[i] <= 63)
                lens[n++] = want[i];
    }
    push_operand(g, 0), push_operand(g, 1), push_operand(g, negate(1));
    push_operand(g, (uint64_t)INT64_MAX), push_operand(g, (uint64_t)INT64_MIN);
    push_operand(g, (uint64_t)INT64_MIN + 1);
    for (int i = 0; i < n; i++) {
        int b = lens[i];
        uint64_t top = (uint64_t)1 << (b - 1), v[] = {top, top | (top - 1), top + 1,
                                                       int_tie(g->f, b, 0, 0), int_tie(g->f, b, UINT64_MAX, 0),
                                                       int_tie(g->f, b, 0, 1), int_tie(g->f, b, UINT64_MAX, -1)};
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++)
            push_operand(g, v[j]), push_operand(g, negate(v[j]));
    }
    sort_pool(g);
}

/* The half ulp of X (finite nonzero, leading exponent E) moved by STEP
 * of its own ulp, with sign NEG: added to X it makes a tie, or misses one
 * by one ulp. */
static fpk_bits half_ulp(const fpk_format *f, bool neg, int e, int step)
{
    int m = f->man_bits;
    if (step < 0)
        return compose(f, neg, e - m - 2, UINT64_MAX);
    return compose(f, neg, e - m - 1, step > 0 && m ? (uint64_t)1 << (64 - m) : 0);
}

/* The cases made from each structured operand X (leading exponent E) to
 * hit ties, cancellation, equality and the thresholds of the result. */
static void partner_cases(gen *g, fpk_bits x, int e)
{
    const fpk_format *f = g->f;
    int m = f->man_bits;
    fpk_bits one = compose(f, false, 0, 0), sign = f->sign_mask, mask = f->sign_mask | f->exp_mask | f->man_mask;
    fpk_bits ulp1 = compose(f, false, 0, m ? (uint64_t)1 << (64 - m) : 0);
    fpk_bits half3 = compose(f, false, 0, (uint64_t)1 << 63); /* 1.5 */
    int thresholds[] = {f->emin - 1, f->emin - m - 1, f->emax + 1};
    switch (g->s->op->code) {
    case VEC_ADD:
    case VEC_SUB:
        for (int step = -1; step <= 1; step++) {
            push_case(g, x, half_ulp(f, false, e, step), 0);
            push_case(g, x, half_ulp(f, true, e, step), 0);
        }
        push_case(g, x, x ^ sign, 0);
        push_case(g, x, x, 0);
        push_case(g, x, ((x & ~sign) + 1) | (~x & sign), 0);
        break;
    case VEC_MUL:
    case VEC_DIV:
        push_case(g, x, half3, 0);
        push_case(g, x, ulp1, 0);
        push_case(g, x, x, 0);
        for (size_t i = 0; i < sizeof thresholds / sizeof thresholds[0]; i++) {
            int d = g->s->op->code == VEC_MUL ? thresholds[i] - e : e - thresholds[i];
            push_case(g, x, compose(f, false, d, 0), 0);
            push_case(g, x, compose(f, true, d, UINT64_MAX), 0);
        }
        break;
    case VEC_FMA:
        for (int step = -1; step <= 1; step++)
            push_case(g, x, one, half_ulp(f, step != 0, e, step));
        push_case(g, x, one | sign, x);
        push_case(g, x, x, x ^ sign);
        break;
    case VEC_EQ: case VEC_LT: case VEC_LE:
    case VEC_EQ_SIGNALING: case VEC_LT_SIGNALING: case VEC_LE_SIGNALING:
        push_case(g, x, x, 0);
        push_case(g, x, x ^ sign, 0);
        push_case(g, x, (x + 1) & mask, 0);
        push_case(g, x, (x - 1) & mask, 0);
        break;
    default:
        break;
    }
}

/* Every structured case of the operation. */
static void structured(gen *g)
{
    const vec_op *op = g->s->op;
    if (op->in == VEC_INT)
        int_pool(g);
    else
        float_pool(g);
    if (op->arity == 1) {
        for (size_t i = 0; i < g->npool; i++)
            push_case(g, g->pool[i], 0, 0);
        return;
    }
    if (op->arity == 2) {
        for (int i = 0; i < g->ncore; i++)
            for (int j = 0; j < g->ncore; j++)
                push_case(g, g->core[i], g->core[j], 0);
    } else {
        for (int i = 0; i < g->ncore3; i++)
            for (int j = 0; j < g->ncore3; j++)
                for (int k = 0; k < g->ncore3; k++)
                    push_case(g, g->core3[i], g->core3[j], g->core3[k]);
    }
    for (size_t i = 0; i < g->npool; i++) {
        int e;
        if (lead_exp(g->f, g->pool[i], &e))
            partner_cases(g, g->pool[i], e);
    }
}

/* A fraction of random shape: one of TestFloat's with a random run
 * length, alternating runs of random lengths, or random bits. */
static uint64_t random_frac(gen *g)
{
    int m = g->f->man_bits;
    switch (below(g, 3)) {
    case 0:
        return m > 1 ? pattern((int)below(g, PATTERN_KINDS), 1 + (int)below(g, (uint64_t)m - 1), m) : 0;
    case 1: {
        uint64_t v = 0;
        for (int pos = 64, bit = coin(g); pos > 0; bit ^= 1) {
            int run = 1 + (int)below(g, 12);
            run = run > pos ? pos : run;
            pos -= run;
            if (bit)
                v |= (UINT64_MAX >> (64 - run)) << pos;
        }
        return v;
    }
    default:
        return rnd(g);
    }
}

/* A random operand: now and then a special value or random bits; mostly a
 * random sign, a boundary or uniformly drawn exponent and a shaped
 * significand, with the result's ties where the operation has them. */
static fpk_bits random_float(gen *g)
{
    const fpk_format *f = g->f;
    switch (below(g, 16)) {
    case 0:
        return g->core[below(g, (uint64_t)g->ncore)];
    case 1:
        return rnd(g) & (f->sign_mask | f->exp_mask | f->man_mask);
    default:
        break;
    }
    int lo = f->emin - f->man_bits;
    int e = coin(g) ? g->exps[below(g, (uint64_t)g->nexps)] : lo + (int)below(g, (uint64_t)(f->emax - lo + 1));
    bool neg = g->s->op->code == VEC_SQRT ? below(g, 16) == 0 : coin(g);
    int k = tie_keep(g, e);
    if (k != NO_TIE && below(g, 3) == 0)
        return tie(g, neg, e, k, (int)below(g, 4), (int)below(g, 3) - 1);
    return compose(f, neg, e, random_frac(g));
}

/* Operands whose product is exact: A and B of about half F's precision
 * each; *E gets the product's leading exponent. */
static void short_pair(gen *g, fpk_bits *a, fpk_bits *b, int *e)
{
    const fpk_format *f = g->f;
    int p = f->man_bits + 1, h = p / 2, range = (f->emax - f->emin) / 2;
    uint64_t fa = rnd(g) & ~(UINT64_MAX >> (h - 1)), fb = rnd(g) & ~(UINT64_MAX >> (p - h - 1));
    int ea = f->emin / 2 + (int)below(g, (uint64_t)range + 1), eb = f->emin / 2 + (int)below(g, (uint64_t)range + 1);
    *a = compose(f, coin(g), ea, h > 1 ? fa : 0);
    *b = compose(f, coin(g), eb, p - h > 1 ? fb : 0);
    /* (1 + fa) (1 + fb) >= 2 carries the leading bit one place up */
    uint64_t sa = (uint64_t)1 << 31 | fa >> 33, sb = (uint64_t)1 << 31 | fb >> 33;
    *e = ea + eb + ((sa * sb) >> 63 ? 1 : 0);
}

static void random_case(gen *g, vec_case *c)
{
    const fpk_format *f = g->f;
    const vec_op *op = g->s->op;
    int m = f->man_bits, e, eb;
    *c = (vec_case){0};
    if (op->in == VEC_INT) {
        int bits = (int)below(g, 64);
        uint64_t v = bits == 0 ? 0 : int_tie(f, bits, rnd(g), below(g, 3) ? 0 : (int)below(g, 3) - 1);
        if (bits && below(g, 3) == 0)
            v = ((uint64_t)1 << (bits - 1)) | (rnd(g) >> 1 >> (64 - bits));
        c->in[0] = coin(g) ? negate(v) : v;
        return;
    }
    fpk_bits a = random_float(g), b = random_float(g), d = random_float(g);
    bool related = coin(g) && lead_exp(f, a, &e);
    if (related) {
        switch (op->code) {
        case VEC_ADD:
        case VEC_SUB:
            b = coin(g) ? half_ulp(f, coin(g), e, (int)below(g, 3) - 1)
                        : compose(f, coin(g), e + 1 - (int)below(g, (uint64_t)m + 4), random_frac(g));
            break;
        case VEC_MUL:
        case VEC_DIV: {
            int t[] = {f->emin - 1 - (int)below(g, (uint64_t)m + 2), f->emax + (int)below(g, 2), 0};
            int target = t[below(g, 3)];
            b = compose(f, coin(g), op->code == VEC_MUL ? target - e : e - target, random_frac(g));
            break;
        }
        case VEC_FMA:
            if (coin(g) && m >= 1) {
                short_pair(g, &a, &b, &e);
                d = half_ulp(f, coin(g), e, (int)below(g, 3) - 1);
            } else if (lead_exp(f, b, &eb)) {
                d = compose(f, coin(g), e + eb + 1 - (int)below(g, (uint64_t)m + 4), random_frac(g));
            }
            break;
        case VEC_EQ: case VEC_LT: case VEC_LE:
        case VEC_EQ_SIGNALING: case VEC_LT_SIGNALING: case VEC_LE_SIGNALING: {
            fpk_bits mask = f->sign_mask | f->exp_mask | f->man_mask;
            fpk_bits v[] = {a, a ^ f->sign_mask, (a + 1) & mask, (a - 1) & mask};
            b = v[below(g, 4)];
            break;
        }
        default:
            break;
        }
    }
    c->in[0] = a, c->in[1] = b, c->in[2] = d;
}

/* The number of distinct inputs, or 0 when it exceeds 2^63. */
static uint64_t input_space(const vec_spec *s)
{
    int bits = s->op->in == VEC_INT ? 64 : s->fmt->width;
    int total = bits * s->op->arity;
    return total < 64 ? (uint64_t)1 << total : 0;
}

static void write_case(const vec_spec *s, vec_case *c)
{
    char line[VEC_LINE_MAX];
    vec_eval(s, c, NULL);
    size_t n = vec_format_line(s, c, true, line);
    if (fwrite(line, 1, n, stdout) != n)
        cli_die(CLI_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno));
}

static void exhaustive(const vec_spec *s, uint64_t total)
{
    int w = s->fmt->width, arity = s->op->arity;
    uint64_t mask = ((uint64_t)1 << w) - 1;
    for (uint64_t i = 0; i < total; i++) {
        vec_case c = {0};
        for (int j = 0; j < arity; j++)
            c.in[j] = i >> (w * (arity - 1 - j)) & mask;
        write_case(s, &c);
    }
}

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    cli_common c;
    cli_common_init(&c);
    c.seed = 1;
    own_opts o = {0};
    cli_parse(&tool, &c, argc, argv, &o);
    if (c.noperands)
        cli_die(CLI_EXIT_USAGE, "unexpected operand \"%s\" (see fpvectors --help)", c.operands[0]);
    if (argc == 1) {
        cli_common_free(&c);
        return cli_usage_error(&tool);
    }
    vec_spec s;
    vec_spec_from(&s, &c);
    int level = o.level;
    bool all = o.all;
    uint64_t n = o.n, seed = c.seed;
    if ((level != 0) + all + (n != 0) > 1)
        cli_die(CLI_EXIT_USAGE, "--level, --exhaustive and -n: give one of them");

    uint64_t space = input_space(&s);
    if (all && (space == 0 || space > EXHAUSTIVE_MAX))
        cli_die(CLI_EXIT_USAGE,
                "--exhaustive: %s has %s inputs, more than the 2^24 it writes; use --level or -n",
                vec_describe(&s), space ? cli_strf("%" PRIu64, space) : "2^64 or more");
    bool by_level = !all && !n;
    if (by_level)
        n = level_cases[level == 2][s.op->arity - 1];
    if (all || (by_level && space && space <= n)) {
        exhaustive(&s, space);
    } else {
        gen g = {.s = &s, .f = s.fmt, .level = level ? level : 1, .seed = seed};
        boundary_exps(&g);
        specials(&g);
        structured(&g);
        for (uint64_t i = 0; i < n; i++) {
            vec_case c;
            if (i < g.ncases)
                c = g.cases[i];
            else
                random_case(&g, &c);
            write_case(&s, &c);
        }
        free(g.pool);
        free(g.cases);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(CLI_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno));
    cli_common_free(&c);
    return 0;
}
