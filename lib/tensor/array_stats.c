/* Tensor statistics of float32 elements (and of fp16, bf16 and FP8 ones,
 * widened to float32 exactly) in one pass, with the counts fpk_stats_add
 * gives element by element.
 *
 * For a format, a scale and a deterministic mode, what rounding does to a
 * nonzero finite element (zero, subnormal, normal, overflow) depends on
 * its magnitude alone and never decreases as the magnitude grows: three
 * float32 magnitudes, found once per call by bisection with the library's
 * own rounding (fpki_stats_thresholds, which the device statistics use
 * too), split the four.  (RUP and RDN round the two signs
 * differently, and a format without a sign makes every negative element
 * NaN: then each sign has its three, compared against the whole
 * encoding.)  The counts are then how many elements lie below each
 * threshold, which vector compares count; the exponent histogram, zeros,
 * infinities and NaNs, and amax need nothing else.  Under SR an element
 * rounds to the neighbour RTZ gives or to the one away from zero: it is
 * counted with RTZ's thresholds, and the few whose two neighbours differ
 * in class are decided one by one, as fpk_stats_add decides them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array-impl.h"
#include "dump-impl.h"
#include "stats.h"

/* Below this many elements fpk_stats_add does the work: the thresholds
 * would cost more than they save. */
#define SMALL 4096

/* Elements widened at a time, on the stack. */
#define WIDE 4096

#define F32_INF 0x7f800000u
#define F32_MAG 0x7fffffffu
#define F32_SIGN 0x80000000u

/* Per format: t[c - 1] is the least float32 magnitude whose class is at
 * least c (FPKI_STATS_SUBNORMAL .. FPKI_STATS_OVERFLOW), or infinity's
 * encoding if none. */
typedef struct thresholds {
    uint32_t t[3];
} thresholds;

/* How one fpk_stats is computed. */
typedef struct plan {
    fpk_stats *s;
    uint64_t base; /* s->sr_index when the call began: the first element's counter */
    fpk_ctx ctx;
    bool sr;
    fpki_stats_keys keys;
    bool sr_exact;                 /* SR at a scale of 2^k: the kernels decide */
    fpki_sr_fixup_plan sr_fixup;   /* SR: each format's thresholds under RTZ and away */
} plan;

/* The keys: the first few are shared, then three (or six) per format. */
enum { KEY_ZERO, KEY_FINITE, KEY_NEG_ZERO, KEY_NEG_FINITE };
#define SYM_FIRST 2  /* symmetric: key 1 (zeros) and infinity, then T */
#define SIGN_FIRST 4 /* by sign: and -0's and -infinity's, then T+ and T- */

/* What one thread adds up for one plan. */
typedef struct part {
    fpki_stats_totals acc;
    int64_t delta[FPK_STATS_MAX_FORMATS][4]; /* SR's corrections, by class */
} part;

static double f32_value(uint32_t a)
{
    fpk_ctx exact = fpk_ctx_default();
    uint64_t bits = fpk_convert(&fpk_fp64, &fpk_fp32, a, &exact);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The thresholds of F at S's scale and options under MODE, for the
 * elements of sign SIGN (0 or F32_SIGN). */
static thresholds find_thresholds(const fpk_stats *s, const fpk_format *f, fpk_round mode,
                                  uint32_t sign)
{
    uint64_t t[3];
    fpki_stats_thresholds(s, f, mode, sign != 0, &fpk_fp32, t);
    return (thresholds){{(uint32_t)t[0], (uint32_t)t[1], (uint32_t)t[2]}};
}

/* The thresholds found last on this thread, by format, scale, mode and
 * options: finding them (a binary search per class, each step a rounding)
 * costs about as much as the kernels spend on 30000 elements, and
 * callers such as fpgrad add many arrays, or a large one in pieces, with
 * the same statistics. */
#define CACHED 16

typedef struct cached {
    bool used;
    fpk_format f; /* a copy: the caller's descriptor may not outlive the call */
    double scale;
    fpk_round mode;
    uint32_t sign;
    bool ftz, saturate;
    thresholds t;
} cached;

static thresholds find_thresholds_cached(const fpk_stats *s, const fpk_format *f, fpk_round mode,
                                         uint32_t sign)
{
    static _Thread_local cached cache[CACHED];
    static _Thread_local unsigned next;
    for (int i = 0; i < CACHED; i++) {
        const cached *c = &cache[i];
        if (c->used && fpki_same_format(&c->f, f) && c->scale == s->scale && c->mode == mode &&
            c->sign == sign && c->ftz == s->ftz && c->saturate == s->saturate)
            return c->t;
    }
    cached want = {true, *f, s->scale, mode, sign, s->ftz, s->saturate, {{0}}};
    want.t = find_thresholds(s, f, mode, sign);
    cache[next++ % CACHED] = want;
    return want.t;
}

/* Whether S is 2^*K exactly. */
static bool power_of_two(double s, int *k)
{
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    uint64_t man = bits & ((UINT64_C(1) << 52) - 1);
    int e = (int)(bits >> 52 & 0x7ff);
    if (bits >> 63 || e == 0x7ff || (e ? man : man & (man - 1)) != 0 || (!e && !man))
        return false;
    *k = e ? e - 1023 : -1074 + __builtin_ctzll(man);
    return true;
}

/* Whether S needs each sign's thresholds: RUP and RDN round the two signs
 * differently, and a format without a sign makes negative elements NaN. */
static bool by_sign(const fpk_stats *s)
{
    if (s->round == FPK_RUP || s->round == FPK_RDN)
        return true;
    for (int j = 0; j < s->nformats; j++)
        if (!s->formats[j]->sign_mask)
            return true;
    return false;
}

static void make_plan(plan *p, fpk_stats *s)
{
    memset(p, 0, sizeof *p);
    p->s = s;
    p->base = s->sr_index;
    p->ctx = fpki_stats_ctx(s);
    p->sr = s->round == FPK_SR;
    bool sign = by_sign(s);
    fpki_stats_keys *k = &p->keys;
    k->sign = sign;
    k->key[KEY_ZERO] = 1;
    k->key[KEY_FINITE] = F32_INF;
    if (sign) {
        k->key[KEY_NEG_ZERO] = F32_SIGN + 1;
        k->key[KEY_NEG_FINITE] = F32_SIGN + F32_INF;
    }
    k->n = sign ? SIGN_FIRST : SYM_FIRST;
    /* SR counts by RTZ's neighbour, then decides the elements whose
     * neighbour away from zero has another class. */
    fpk_round counted = p->sr ? FPK_RTZ : s->round;
    for (int j = 0; j < s->nformats; j++) {
        const fpk_format *f = s->formats[j];
        thresholds t = find_thresholds_cached(s, f, counted, 0);
        memcpy(k->key + k->n, t.t, sizeof t.t);
        k->n += 3;
        if (sign) {
            thresholds neg = find_thresholds_cached(s, f, counted, F32_SIGN);
            for (int c = 0; c < 3; c++)
                k->key[k->n++] = F32_SIGN + neg.t[c];
        }
        if (p->sr) {
            thresholds away = find_thresholds_cached(s, f, FPK_RUP, 0);
            memcpy(p->sr_fixup.tz[j], t.t, sizeof t.t);
            memcpy(p->sr_fixup.away[j], away.t, sizeof away.t);
            p->sr_fixup.emin[j] = f->emin;
            p->sr_fixup.man_bits[j] = f->man_bits;
            p->sr_fixup.mask[j] = f->sign_mask ? F32_MAG : ~0u;
        }
    }
    p->sr_fixup.n = s->nformats;
    p->sr_exact = p->sr && power_of_two(s->scale, &p->sr_fixup.scale_exp);
}

/* SR: the elements whose RTZ and away neighbours differ in class, decided
 * as fpk_stats_add decides them (seed 0, their index as counter): by the
 * kernels when the scale is a power of two, else by the library's
 * rounding. */
static void sr_fixup(const plan *p, fpki_isa isa, const uint32_t *x, size_t n, uint64_t index,
                     part *out)
{
    if (p->sr_exact) {
        fpki_sr_fixup_fns[isa](&p->sr_fixup, x, n, index, out->delta);
        return;
    }
    fpk_ctx c = p->ctx;
    for (size_t i = 0; i < n; i++) {
        uint32_t a = x[i] & F32_MAG;
        if (a == 0 || a >= F32_INF)
            continue;
        for (int j = 0; j < p->s->nformats; j++) {
            uint32_t v = x[i] & p->sr_fixup.mask[j];
            int lo = fpki_threshold_class(p->sr_fixup.tz[j], v);
            int hi = fpki_threshold_class(p->sr_fixup.away[j], v);
            if (lo == hi)
                continue;
            c.sr_counter = index + i;
            int cls = (int)fpki_stats_classify(p->s->formats[j], f32_value(x[i]), p->s->scale, &c);
            out->delta[j][lo]--;
            out->delta[j][cls]++;
        }
    }
}

/* Adds float32 elements X[0..N-1], the first OFFSET elements into the
 * call, to OUT. */
static void add_f32(const plan *p, fpki_isa isa, const uint32_t *x, size_t n, uint64_t offset,
                    part *out)
{
    fpki_stats_fns[isa](&p->keys, x, n, &out->acc);
    if (p->sr)
        sr_fixup(p, isa, x, n, p->base + offset, out);
}

/* Adds N elements of dtype T at X (host order, not f64), the first OFFSET
 * elements into the call, to OUTS[k] for each of the NP plans. */
static void add_elements(const plan *plans, int np, fpki_isa isa, fpk_dtype t, const void *x,
                         size_t n, uint64_t offset, part *outs)
{
    if (t == FPK_DTYPE_F32) {
        for (int k = 0; k < np; k++)
            add_f32(&plans[k], isa, x, n, offset, &outs[k]);
        return;
    }
    uint32_t wide[WIDE];
    size_t size = fpk_dtype_size(t);
    fpki_kformat kf = fpki_kformat_of_dtype(t);
    for (size_t i = 0; i < n; i += WIDE) {
        size_t m = n - i < WIDE ? n - i : WIDE;
        fpki_widen_fns[isa](kf, (const uint8_t *)x + size * i, wide, m, false);
        for (int k = 0; k < np; k++)
            add_f32(&plans[k], isa, wide, m, offset + i, &outs[k]);
    }
}

static void merge_part(part *into, const part *from, int nformats, int nkeys)
{
    for (int b = 0; b < 256; b++)
        into->acc.hist[b] += from->acc.hist[b];
    for (int b = 0; b < 23; b++)
        into->acc.subnormal[b] += from->acc.subnormal[b];
    if (from->acc.amax > into->acc.amax)
        into->acc.amax = from->acc.amax;
    for (int k = 0; k < nkeys; k++)
        into->acc.below[k] += from->acc.below[k];
    for (int j = 0; j < nformats; j++)
        for (int c = 0; c < 4; c++)
            into->delta[j][c] += from->delta[j][c];
}

/* S += what OUT holds of N elements under plan P. */
static void commit(const plan *p, const part *out, uint64_t n)
{
    fpk_stats *s = p->s;
    const fpki_stats_totals *acc = &out->acc;
    const uint64_t *b = acc->below;
    uint64_t subnormals = 0;
    for (int e = 0; e < 23; e++) {
        subnormals += acc->subnormal[e];
        s->log2_hist[e - 149 - FPK_LOG2_MIN] += acc->subnormal[e];
    }
    for (int e = 1; e < 255; e++)
        s->log2_hist[e - 127 - FPK_LOG2_MIN] += acc->hist[e];
    s->count += n;
    s->sr_index += n;
    s->zeros += acc->hist[0] - subnormals;
    s->nonfinite += acc->hist[255];
    uint64_t amax = fpk_convert(&fpk_fp64, &fpk_fp32, acc->amax, &(fpk_ctx){0}), old;
    memcpy(&old, &s->amax, sizeof old);
    if (amax > old)
        memcpy(&s->amax, &amax, sizeof amax);
    bool sign = p->keys.sign;
    for (int j = 0; j < s->nformats; j++) {
        fpk_format_counts *k = &s->fmt[j];
        if (sign) {
            const uint64_t *tp = b + SIGN_FIRST + 6 * j, *tn = tp + 3;
            k->underflow += tp[0] - b[KEY_ZERO] + tn[0] - b[KEY_NEG_ZERO];
            k->subnormal += tp[1] - tp[0] + tn[1] - tn[0];
            k->overflow += b[KEY_FINITE] - tp[2] + b[KEY_NEG_FINITE] - tn[2];
        } else {
            const uint64_t *t = b + SYM_FIRST + 3 * j;
            k->underflow += t[0] - b[KEY_ZERO];
            k->subnormal += t[1] - t[0];
            k->overflow += b[KEY_FINITE] - t[2];
        }
        for (int c = 0; c < 4; c++)
            fpki_stats_count(k, (fpki_stats_class)c, out->delta[j][c]);
    }
}

/* X[0..N-1] (dtype T, host order) as doubles into fpk_stats_add: the
 * path for fp64 and for few elements. */
static void add_scalar(fpk_stats *s, fpk_dtype t, const void *x, size_t n)
{
    double buf[WIDE];
    const fpk_format *f = fpk_dtype_format(t);
    fpk_ctx exact = fpk_ctx_default();
    for (size_t i = 0; i < n; i += WIDE) {
        size_t m = n - i < WIDE ? n - i : WIDE;
        for (size_t j = 0; j < m; j++) {
            fpk_bits w = fpk_convert(&fpk_fp64, f, fpki_load(t, x, i + j), &exact);
            memcpy(&buf[j], &w, sizeof buf[j]);
        }
        fpk_stats_add(s, buf, m);
    }
}

/* fpk_stats_add_array's pieces, which threads share. */
typedef struct array_job {
    const plan *p;
    fpki_isa isa;
    fpk_dtype t;
    const void *x;
    size_t n, pieces;
    part *total; /* every thread's, merged */
} array_job;

static void add_array_pieces(void *arg, int t, int nt)
{
    const array_job *j = arg;
    fpki_fpenv env;
    fpki_fp_default(&env);
    part mine;
    memset(&mine, 0, sizeof mine);
    size_t size = fpk_dtype_size(j->t);
    for (size_t k = fpki_share(j->pieces, t, nt); k < fpki_share(j->pieces, t + 1, nt); k++) {
        size_t first = k * FPKI_PIECE, m = j->n - first < FPKI_PIECE ? j->n - first : FPKI_PIECE;
        add_elements(j->p, 1, j->isa, j->t, (const uint8_t *)j->x + size * first, m, first,
                     &mine);
    }
    FPKI_OMP(omp critical(fpki_merge))
    merge_part(j->total, &mine, j->p->s->nformats, j->p->keys.n);
    fpki_fp_restore(&env);
}

void fpk_stats_add_array(fpk_stats *s, fpk_dtype t, const void *x, size_t n, int threads)
{
    if (t == FPK_DTYPE_F64 || n < SMALL) {
        add_scalar(s, t, x, n);
        return;
    }
    plan p;
    make_plan(&p, s);
    part total;
    memset(&total, 0, sizeof total);
    array_job j = {.p = &p, .isa = fpki_isa_best(), .t = t, .x = x, .n = n,
                   .pieces = (n + FPKI_PIECE - 1) / FPKI_PIECE, .total = &total};
    fpki_parallel(fpki_threads(threads, n), add_array_pieces, &j);
    commit(&p, &total, n);
}

bool fpk_stats_add_sqerr(fpk_stats *s, const float *x, size_t n, int nf,
                         const fpk_format *const *f, fpk_ctx *c, double *x2, double *e2)
{
    fpki_conv_plan p[FPKI_QUANTIZE_SQERR_MAX_FORMATS];
    unsigned flags[FPKI_QUANTIZE_SQERR_MAX_FORMATS];
    bool fused = n >= SMALL && n <= UINT32_MAX && nf >= 1 &&
                 nf <= FPKI_QUANTIZE_SQERR_MAX_FORMATS && e2;
    for (int j = 0; j < nf && fused; j++) {
        fused = fpki_quantize_plan(&p[j], f[j], &c[j]);
        flags[j] = c[j].flags;
    }
    if (fused) {
        plan sp;
        make_plan(&sp, s);
        part out;
        memset(&out, 0, sizeof out);
        fpki_isa isa = fpki_isa_best();
        fpki_fpenv env;
        fpki_fp_default(&env);
        const uint32_t *bits = (const uint32_t *)(const void *)x;
        fused = fpki_stats_quantize_sqerr_fns[isa](&sp.keys, bits, n, &out.acc, p, nf, x2, e2,
                                                   flags);
        if (fused && sp.sr)
            sr_fixup(&sp, isa, bits, n, sp.base, &out);
        fpki_fp_restore(&env);
        if (fused) {
            commit(&sp, &out, n);
            for (int j = 0; j < nf; j++)
                c[j].flags = flags[j];
            return true;
        }
    }
    fpk_stats_add_array(s, FPK_DTYPE_F32, x, n, 1);
    return fpk_array_quantize_sqerr_formats(nf, f, x, n, c, x2, e2);
}

/* The elements FIRST .. FIRST+N-1 of tensor T of D through fpk_dump_read
 * and fpk_stats_add, into copies of S[0..NS-1] that replace them only if
 * all goes well: the path for fp64 and for few elements. */
static int add_tensor_scalar(fpk_stats *s, int ns, fpk_dump *d, size_t t, uint64_t first,
                             uint64_t n, fpk_error *err)
{
    fpk_stats *copy = malloc((size_t)ns * sizeof *copy);
    double *buf = malloc(WIDE * sizeof *buf);
    int rc = copy && buf ? FPK_OK : fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    if (rc == FPK_OK)
        memcpy(copy, s, (size_t)ns * sizeof *copy);
    for (uint64_t i = 0; rc == FPK_OK && i < n;) {
        size_t m = n - i < WIDE ? (size_t)(n - i) : WIDE;
        rc = fpk_dump_read(d, t, first + i, m, buf, err);
        for (int k = 0; rc == FPK_OK && k < ns; k++)
            fpk_stats_add(&copy[k], buf, m);
        i += m;
    }
    if (rc == FPK_OK)
        memcpy(s, copy, (size_t)ns * sizeof *copy);
    free(buf);
    free(copy);
    return rc;
}

/* fpk_stats_add_tensor's pieces, which threads share, each reading its
 * own. */
typedef struct tensor_job {
    const plan *plans;
    int ns;
    const fpk_stats *s;
    fpki_isa isa;
    fpk_dump *d;
    size_t i;
    fpk_dtype dtype;
    uint64_t first, n, pieces;
    part *total; /* every thread's, merged, if all read well */
    int rc;      /* the first failure's, with its message in *ERR */
    fpk_error *err;
} tensor_job;

static void add_tensor_pieces(void *arg, int t, int nt)
{
    tensor_job *j = arg;
    fpki_fpenv env;
    fpki_fp_default(&env);
    size_t size = fpk_dtype_size(j->dtype);
    unsigned char *raw = fpki_io_alloc(FPKI_PIECE * size);
    part *mine = calloc((size_t)j->ns, sizeof *mine);
    fpk_error e;
    int my_rc = raw && mine ? FPK_OK : fpki_dump_error(&e, FPK_ENOMEM, j->d, "out of memory");
    for (uint64_t k = fpki_share(j->pieces, t, nt); k < fpki_share(j->pieces, t + 1, nt); k++) {
        uint64_t at = k * FPKI_PIECE;
        size_t m = j->n - at < FPKI_PIECE ? (size_t)(j->n - at) : FPKI_PIECE;
        if (my_rc == FPK_OK)
            my_rc = fpk_dump_read_raw(j->d, j->i, j->first + at, m, raw, &e);
        if (my_rc != FPK_OK)
            continue;
        add_elements(j->plans, j->ns, j->isa, j->dtype, raw, m, at, mine);
    }
    FPKI_OMP(omp critical(fpki_merge))
    {
        if (my_rc != FPK_OK && j->rc == FPK_OK) {
            j->rc = my_rc;
            if (j->err)
                *j->err = e;
        }
        for (int k = 0; my_rc == FPK_OK && k < j->ns; k++)
            merge_part(&j->total[k], &mine[k], j->s[k].nformats, j->plans[k].keys.n);
    }
    free(mine);
    free(raw);
    fpki_fp_restore(&env);
}

int fpk_stats_add_tensor(fpk_stats *s, int ns, fpk_dump *d, size_t i, uint64_t first,
                         uint64_t n, int threads, fpk_error *err)
{
    /* The tensor and the first element checked as fpk_dump_read checks
     * them, then the count. */
    int rc = fpk_dump_read(d, i, first, 0, NULL, err);
    if (rc != FPK_OK)
        return rc;
    const fpk_tensor *t = &d->tensors[i];
    if (n > t->count - first)
        return fpki_dump_error(err, FPK_ERANGE, d,
                               "%" PRIu64 " elements from element %" PRIu64
                               " requested; the tensor has %" PRIu64,
                               n, first, t->count);
    if (ns <= 0)
        return FPK_OK;
    if (t->dtype == FPK_DTYPE_F64 || n < SMALL)
        return add_tensor_scalar(s, ns, d, i, first, n, err);

    plan *plans = malloc((size_t)ns * sizeof *plans);
    part *total = calloc((size_t)ns, sizeof *total);
    if (!plans || !total) {
        free(plans);
        free(total);
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    }
    for (int k = 0; k < ns; k++)
        make_plan(&plans[k], &s[k]);
    tensor_job j = {.plans = plans, .ns = ns, .s = s, .isa = fpki_isa_best(), .d = d, .i = i,
                    .dtype = t->dtype, .first = first, .n = n,
                    .pieces = (n + FPKI_PIECE - 1) / FPKI_PIECE, .total = total, .rc = FPK_OK,
                    .err = err};
    fpki_parallel(fpki_threads(threads, n < SIZE_MAX ? (size_t)n : SIZE_MAX), add_tensor_pieces,
                  &j);
    rc = j.rc;
    for (int k = 0; rc == FPK_OK && k < ns; k++)
        commit(&plans[k], &total[k], n);
    free(total);
    free(plans);
    return rc;
}
