/* Scalar throughput of fpk_add, fpk_sub, fpk_mul, fpk_div, fpk_fma and
 * fpk_sqrt per format, single thread, RNE with flags, next to the same
 * operations through MPFR: the reference of record (ref_*, bits and flags
 * with every rule of docs/DESIGN.md "Corner cases") and bare MPFR calls (mpfr_add and friends
 * at the format's precision with its exponent range and
 * mpfr_subnormalize, operands decoded beforehand, no special-value rules).
 *
 * Operands are normal numbers drawn once into an array (see random_operand;
 * square roots take their magnitudes); every result is summed into a
 * checksum so that no call can be skipped.  The library is timed twice: on
 * N random operand tuples, where its data-dependent branches are
 * unpredictable, and on CYCLE tuples repeated through the array, a pattern
 * short enough for the branch predictor to learn, as with the fixed input
 * tables of SoftFloat's timesoftfloat.  Each figure is the median of REPS
 * timed runs, a run being enough passes over the array to take at least
 * MIN_RUN_S seconds of the thread's CPU time, so that other load on the
 * machine counts as little as it can.
 *
 * Usage: bench_ops [FORMAT...]   (default: fp16 bf16 e4m3 fp32 fp64) */
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fpkit.h"
#include "ref.h"

#define N 4096        /* operand tuples per pass */
#define CYCLE 32
#define REPS 7
#define MIN_RUN_S 0.05

typedef enum op { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FMA, OP_SQRT, OP_COUNT } op;
static const char *const op_names[OP_COUNT] = {"add", "sub", "mul", "div", "fma", "sqrt"};

typedef enum engine { ENG_FPKIT, ENG_FPKIT_CYCLE, ENG_REF, ENG_MPFR, ENG_COUNT } engine;

static fpk_bits rnd_a[N], rnd_b[N], rnd_d[N]; /* drawn once per format */
static fpk_bits opa[N], opb[N], opd[N];       /* what a pass reads */
static mpfr_t ma[N], mb[N], md[N];
static uint64_t checksum;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng_state = UINT64_C(0x853c49e6748fea9b);

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A random normal encoding of F: random sign and mantissa, the exponent
 * field uniform over the middle half of its range, so that sums, products
 * and quotients are mostly normal numbers, as in ordinary use. */
static fpk_bits random_operand(const fpk_format *f)
{
    uint64_t fields = UINT64_C(1) << f->exp_bits;
    uint64_t e = fields / 4 + rng_next() % (fields / 2 > 0 ? fields / 2 : 1);
    fpk_bits a = (rng_next() & (f->sign_mask | f->man_mask)) | e << f->man_bits;
    return (a & ~f->sign_mask) > f->max_finite ? a - 1 : a;
}

/* One pass over the array with the library. */
static uint64_t pass_fpkit(op o, const fpk_format *f, fpk_ctx *c)
{
    uint64_t sum = 0;
    switch (o) {
    case OP_ADD:
        for (int i = 0; i < N; i++)
            sum += fpk_add(f, opa[i], opb[i], c);
        break;
    case OP_SUB:
        for (int i = 0; i < N; i++)
            sum += fpk_sub(f, opa[i], opb[i], c);
        break;
    case OP_MUL:
        for (int i = 0; i < N; i++)
            sum += fpk_mul(f, opa[i], opb[i], c);
        break;
    case OP_DIV:
        for (int i = 0; i < N; i++)
            sum += fpk_div(f, opa[i], opb[i], c);
        break;
    case OP_FMA:
        for (int i = 0; i < N; i++)
            sum += fpk_fma(f, opa[i], opb[i], opd[i], c);
        break;
    default:
        for (int i = 0; i < N; i++)
            sum += fpk_sqrt(f, opa[i] & ~f->sign_mask, c);
        break;
    }
    return sum;
}

/* One pass with the MPFR reference. */
static uint64_t pass_ref(op o, const fpk_format *f, const fpk_ctx *c)
{
    uint64_t sum = 0;
    for (int i = 0; i < N; i++) {
        ref_result r;
        switch (o) {
        case OP_ADD: r = ref_add(f, opa[i], opb[i], c); break;
        case OP_SUB: r = ref_sub(f, opa[i], opb[i], c); break;
        case OP_MUL: r = ref_mul(f, opa[i], opb[i], c); break;
        case OP_DIV: r = ref_div(f, opa[i], opb[i], c); break;
        case OP_FMA: r = ref_fma(f, opa[i], opb[i], opd[i], c); break;
        default: r = ref_sqrt(f, opa[i] & ~f->sign_mask, c); break;
        }
        sum += r.bits + r.flags;
    }
    return sum;
}

/* One pass with bare MPFR calls; the exponent range is F's (set by the
 * caller), Z has F's precision. */
static uint64_t pass_mpfr(op o, mpfr_ptr z)
{
    uint64_t sum = 0;
    for (int i = 0; i < N; i++) {
        int t;
        switch (o) {
        case OP_ADD: t = mpfr_add(z, ma[i], mb[i], MPFR_RNDN); break;
        case OP_SUB: t = mpfr_sub(z, ma[i], mb[i], MPFR_RNDN); break;
        case OP_MUL: t = mpfr_mul(z, ma[i], mb[i], MPFR_RNDN); break;
        case OP_DIV: t = mpfr_div(z, ma[i], mb[i], MPFR_RNDN); break;
        case OP_FMA: t = mpfr_fma(z, ma[i], mb[i], md[i], MPFR_RNDN); break;
        default: t = mpfr_sqrt(z, ma[i], MPFR_RNDN); break;
        }
        t = mpfr_check_range(z, t, MPFR_RNDN);
        mpfr_subnormalize(z, t, MPFR_RNDN);
        sum += (uint64_t)mpfr_get_exp(z) + mpfr_flags_save();
    }
    return sum;
}

static uint64_t run_pass(engine e, op o, const fpk_format *f, fpk_ctx *c, mpfr_ptr z)
{
    switch (e) {
    case ENG_FPKIT:
    case ENG_FPKIT_CYCLE: return pass_fpkit(o, f, c);
    case ENG_REF: return pass_ref(o, f, c);
    default: return pass_mpfr(o, z);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Millions of operations per second: the median of REPS runs. */
static double measure(engine e, op o, const fpk_format *f, mpfr_ptr z)
{
    fpk_ctx c = fpk_ctx_default();
    long passes = 1;
    for (;;) { /* calibrate: enough passes for MIN_RUN_S */
        double t0 = now();
        for (long p = 0; p < passes; p++)
            checksum += run_pass(e, o, f, &c, z);
        if (now() - t0 >= MIN_RUN_S)
            break;
        passes *= 2;
    }
    double rate[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (long p = 0; p < passes; p++)
            checksum += run_pass(e, o, f, &c, z);
        rate[r] = (double)passes * N / (now() - t0) / 1e6;
    }
    checksum += c.flags;
    qsort(rate, REPS, sizeof rate[0], cmp_double);
    return rate[REPS / 2];
}

/* The first PERIOD random tuples, repeated through the pass's arrays. */
static void use_operands(int period)
{
    for (int i = 0; i < N; i++) {
        opa[i] = rnd_a[i % period];
        opb[i] = rnd_b[i % period];
        opd[i] = rnd_d[i % period];
    }
}

static void bench_format(const fpk_format *f)
{
    for (int i = 0; i < N; i++) {
        rnd_a[i] = random_operand(f);
        rnd_b[i] = random_operand(f);
        rnd_d[i] = random_operand(f);
    }
    /* Bare MPFR: operands decoded at F's precision, F's exponent range
     * (MPFR's exponents are IEEE's plus one). */
    mpfr_prec_t prec = f->man_bits + 1;
    for (int i = 0; i < N; i++) {
        mpfr_inits2(prec, ma[i], mb[i], md[i], (mpfr_ptr)0);
        ref_decode(ma[i], f, rnd_a[i]);
        ref_decode(mb[i], f, rnd_b[i]);
        ref_decode(md[i], f, rnd_d[i]);
    }
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t z;
    mpfr_init2(z, prec);

    for (op o = 0; o < OP_COUNT; o++) {
        if (o == OP_SQRT)
            for (int i = 0; i < N; i++)
                mpfr_abs(ma[i], ma[i], MPFR_RNDN);
        double rate[ENG_COUNT];
        for (engine e = 0; e < ENG_COUNT; e++) {
            use_operands(e == ENG_FPKIT_CYCLE ? CYCLE : N);
            if (e == ENG_MPFR) {
                mpfr_set_emin(f->emin - f->man_bits + 1);
                mpfr_set_emax(f->emax + 1);
            }
            rate[e] = measure(e, o, f, z);
            mpfr_set_emin(emin);
            mpfr_set_emax(emax);
        }
        printf("%-6s %-5s %9.1f %9.1f %9.2f %9.2f %9.1fx\n", f->name, op_names[o],
               rate[ENG_FPKIT], rate[ENG_FPKIT_CYCLE], rate[ENG_REF], rate[ENG_MPFR],
               rate[ENG_FPKIT] / rate[ENG_MPFR]);
        fflush(stdout);
    }
    mpfr_clear(z);
    for (int i = 0; i < N; i++)
        mpfr_clears(ma[i], mb[i], md[i], (mpfr_ptr)0);
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"fp16", "bf16", "e4m3", "fp32", "fp64"};
    int nf = argc > 1 ? argc - 1 : (int)(sizeof defaults / sizeof defaults[0]);
    const char *const *names = argc > 1 ? (const char *const *)argv + 1 : defaults;

    printf("bench_ops: Mops/s of thread CPU time, RNE with flags, median of %d runs;\n"
           "  fpkit: %d random operand tuples; fpkit-32: %d of them repeated;\n"
           "  ref: the MPFR reference (ref_*); mpfr: bare MPFR calls\n",
           REPS, N, CYCLE);
    printf("%-6s %-5s %9s %9s %9s %9s %10s\n", "format", "op", "fpkit", "fpkit-32",
           "ref", "mpfr", "fpkit/mpfr");
    for (int i = 0; i < nf; i++) {
        const fpk_format *f = fpk_format_lookup(names[i]);
        if (f == NULL) {
            fprintf(stderr, "bench_ops: %s: unknown format\n", names[i]);
            return 2;
        }
        bench_format(f);
    }
    printf("checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
