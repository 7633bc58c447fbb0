/* fpk-hwcheck: libfpkit against the GPU's own instructions.  Every float32
 * input through the conversions, every fp16 and bf16 operand pair through
 * __hadd, __hmul and __hfma, the tensor cores' accumulation measured, and
 * the tensor-core model against the matrix units; the library is the
 * reference of record, computed on the host. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"
#include "hwcheck.h"

enum { EXIT_NO_DEVICE = 4 };

enum { OPT_CONV = CLI_OWN, OPT_ARITH, OPT_PROBE, OPT_MMA, OPT_QUICK, OPT_DEVICE, OPT_TILES };

static const cli_opt options[] = {
    {.key = OPT_CONV, .name = "--conv", .help = "the conversions, every float32 input"},
    {.key = OPT_ARITH, .name = "--arith", .help = "the arithmetic, every fp16 and bf16 operand pair"},
    {.key = OPT_PROBE, .name = "--probe",
     .help = "the tensor cores' accumulation parameters, measured by designed dot products"},
    {.key = OPT_MMA, .name = "--mma",
     .help = "the matrix products against each architecture's model and the measured one (none "
             "of the four given: all four)"},
    {.key = OPT_QUICK, .name = "--quick",
     .help = "a sample instead: 2^26 inputs, 2^26 pairs, 1024 tiles"},
    {.key = OPT_DEVICE, .name = "--device", .value = "N", .help = "the CUDA device (default 0)"},
    {.key = CLI_THREADS, .help = "host threads for the library's side (default: all)"},
    {.key = OPT_TILES, .name = "--tiles", .value = "N",
     .help = "tiles per input format for --mma (default 16384)"},
    {.key = CLI_SEED, .value = "S", .help = "seed of the --mma inputs (default 1)"},
    {0},
};

static const char *const synopsis[] = {
    "--conv --arith --probe --mma --quick --device --threads --tiles --seed", NULL};

typedef struct opts {
    bool conv, arith, probe, mma, quick;
    int device, threads;
    size_t tiles;
    uint64_t seed;
} opts;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The inputs of a check: float32 encodings or pairs of 16-bit operands,
 * 2^32 either way, in chunks. */
#define CHUNK ((size_t)1 << 24)

/* The ranges of inputs a check covers: all of [0, 2^32) in chunks, or with
 * --quick 2 * 512 ranges of 2^16 at the bottom and the top of every 2^23-th
 * stretch (every exponent and sign of a float32, every 128th first operand
 * of a pair). */
typedef struct range_walk {
    uint64_t next;
    bool quick;
    int i;
} range_walk;

static bool range_next(range_walk *w, uint64_t *first, size_t *n)
{
    if (w->quick) {
        if (w->i == 1024)
            return false;
        uint64_t stretch = (uint64_t)1 << 23;
        uint64_t base = (uint64_t)(w->i / 2) * stretch;
        *first = w->i % 2 ? base + stretch - 65536 : base;
        *n = 65536;
        w->i++;
        return true;
    }
    if (w->next >> 32)
        return false;
    *first = w->next;
    *n = CHUNK;
    w->next += CHUNK;
    return true;
}

/* A blank line, the title (printf-style) and a table's head. */
static void section(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void section(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("\n");
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n%-44s %11s %11s %10s %9s\n", "check", "cases", "agree", "convention", "mismatch");
}

static void print_row(const char *name, const hw_tally *t)
{
    printf("%-44s %11" PRIu64 " %11" PRIu64 " %10" PRIu64 " %9" PRIu64 "\n", name, t->cases,
           t->agree, t->nan_pattern.n + t->nan_into.n + t->nan_to_inf.n, hw_tally_mismatches(t));
}

static void print_convention(const char *name, const char *what, const hw_convention *k,
                             int digits)
{
    if (k->n)
        printf("  %s: %s: library %#0*" PRIx64 ", GPU %#0*" PRIx64 "%s, %" PRIu64 " cases\n",
               name, what, digits + 2, k->want, digits + 2, k->got,
               k->varied ? " (and other pairs)" : "", k->n);
}

static void print_details(const char *name, const hw_tally *t, int digits, int nin)
{
    print_convention(name, "both NaN, different encodings (convention: the library's NaN is canonical)",
                     &t->nan_pattern, digits);
    print_convention(name, "a NaN operand into a format without NaN (the OCP format leaves it open)",
                     &t->nan_into, digits);
    print_convention(name, "DEVICE DEVIATION: a NaN operand gives an infinity (IEEE 754 wants a NaN)",
                     &t->nan_to_inf, digits);
    if (hw_tally_mismatches(t) == 0)
        return;
    printf("  %s: mismatches:", name);
    for (int c = 0; c < HW_NCLASSES; c++)
        if (t->by_class[c])
            printf(" %s %" PRIu64, hw_class_names[c], t->by_class[c]);
    printf("\n");
    for (int i = 0; i < t->nex; i++) {
        const hw_example *e = &t->ex[i];
        printf("    operands");
        for (int k = 0; k < nin; k++)
            printf(" %#" PRIx64, e->in[k]);
        printf(": library %#0*" PRIx64 ", GPU %#0*" PRIx64 " (%s)\n", digits + 2, e->want,
               digits + 2, e->got, hw_class_names[e->cls]);
    }
}

static int hex_digits(const fpk_format *f)
{
    return (f->width + 3) / 4;
}

static void die_dev(const char *msg)
{
    cli_die(CLI_EXIT_INTERNAL, "%s", msg);
}

static uint64_t run_conv(const opts *o, const hw_device *d)
{
    void *out[HW_NCONV] = {0};
    for (int k = 0; k < HW_NCONV; k++)
        if ((d->features & 1u << k) &&
            !(out[k] = hw_dev_host_alloc(CHUNK * (size_t)hw_convs[k].bytes)))
            cli_die(CLI_EXIT_INTERNAL, "out of pinned host memory");
    hw_tally *t = cli_xcalloc(HW_NCONV, sizeof *t);
    range_walk w = {.quick = o->quick};
    uint64_t first;
    size_t n;
    char msg[256];
    double t0 = now();
    while (range_next(&w, &first, &n)) {
        if (hw_dev_conv((uint32_t)first, n, out, msg, sizeof msg) != 0)
            die_dev(msg);
        hw_compare_conv((uint32_t)first, n, out, t, o->threads);
    }
    uint64_t bad = 0;
    section("conversions from float32 (%s, %.1f s)", o->quick ? "sampled" : "every input",
            now() - t0);
    for (int k = 0; k < HW_NCONV; k++)
        if (out[k])
            print_row(hw_convs[k].name, &t[k]);
        else
            printf("%-44s %s\n", hw_convs[k].name, "(not on this device or CUDA)");
    for (int k = 0; k < HW_NCONV; k++)
        if (out[k]) {
            print_details(hw_convs[k].name, &t[k], hex_digits(hw_convs[k].f), 1);
            bad += hw_tally_mismatches(&t[k]);
            hw_dev_host_free(out[k]);
        }
    free(t);
    return bad;
}

static uint64_t run_arith(const opts *o, const hw_device *d)
{
    static const char *const ops[HW_NOPS] = {"__hadd", "__hmul", "__hfma", "__hfma"};
    uint16_t *out[HW_NOPS];
    for (int k = 0; k < HW_NOPS; k++)
        if (!(out[k] = hw_dev_host_alloc(CHUNK * sizeof(uint16_t))))
            cli_die(CLI_EXIT_INTERNAL, "out of pinned host memory");
    uint64_t bad = 0;
    for (int fmt = 0; fmt < 2; fmt++) {
        const fpk_format *f = fmt ? &fpk_bf16 : &fpk_fp16;
        if (fmt && !d->ampere) {
            printf("\nbf16 arithmetic: not on this device\n");
            continue;
        }
        hw_tally t[HW_NOPS] = {0};
        range_walk w = {.quick = o->quick};
        uint64_t first;
        size_t n;
        char msg[256];
        double t0 = now();
        while (range_next(&w, &first, &n)) {
            if (hw_dev_arith(fmt, first, n, out, msg, sizeof msg) != 0)
                die_dev(msg);
            hw_compare_arith(fmt, first, n, (const uint16_t *const *)out, t, o->threads);
        }
        section("%s arithmetic, round to nearest even (%s, %.1f s)", f->name,
                o->quick ? "sampled pairs" : "every operand pair", now() - t0);
        for (int k = 0; k < HW_NOPS; k++) {
            char name[64];
            if (k >= HW_FMA0)
                snprintf(name, sizeof name, "%s %s(a, b, %#06" PRIx64 ")", f->name, ops[k],
                         hw_fma_c[fmt][k - HW_FMA0]);
            else
                snprintf(name, sizeof name, "%s %s(a, b)", f->name, ops[k]);
            print_row(name, &t[k]);
        }
        for (int k = 0; k < HW_NOPS; k++) {
            char name[64];
            snprintf(name, sizeof name, "%s %s", f->name, ops[k]);
            print_details(name, &t[k], 4, k >= HW_FMA0 ? 3 : 2);
            bad += hw_tally_mismatches(&t[k]);
        }
    }
    for (int k = 0; k < HW_NOPS; k++)
        hw_dev_host_free(out[k]);
    return bad;
}

/* The model's parameters for each input D runs, measured (hw_probe):
 * FOUND[input] and MEASURED[input] pointing at it where a set fits. */
static void run_probe(const hw_device *d, fpk_tc_params found[HW_NTC],
                      const fpk_tc_params *measured[HW_NTC])
{
    static const char *const names[] = {"terms", "window", "wide", "cut", "round", "promotion"};
    fpk_tc_arch own = hw_tc_arch_of(d->major, d->minor);
    double t0 = now();
    hw_probe_result r[HW_NTC];
    char msg[256], text[160];
    for (int w = 0; w < HW_NTC; w++)
        if (hw_tc_on(d, (hw_tc_input)w) && hw_probe((hw_tc_input)w, own, &r[w], msg, sizeof msg))
            die_dev(msg);
    printf("\ntensor-core accumulation, binary32: the model's parameters that reproduce the "
           "device\non designed dot products (%.1f s)\n%-10s %7s %13s  %s\n",
           now() - t0, "input", "probes", "sets fit", "parameters");
    for (int w = 0; w < HW_NTC; w++) {
        if (!hw_tc_on(d, (hw_tc_input)w)) {
            printf("%-10s %s\n", hw_tcs[w].name, "(not on this device or build)");
            continue;
        }
        char fit[32];
        snprintf(fit, sizeof fit, "%ld/%ld", r[w].survivors, r[w].candidates);
        hw_tc_params_text(&r[w].found, text, sizeof text);
        printf("%-10s %7d %13s  %s\n", hw_tcs[w].name, r[w].probes, fit,
               r[w].survivors ? text : "NONE FITS");
        if (r[w].survivors) {
            found[w] = r[w].found;
            measured[w] = &found[w];
        }
    }
    for (int w = 0; w < HW_NTC; w++) {
        if (!hw_tc_on(d, (hw_tc_input)w))
            continue;
        if (r[w].open) {
            printf("  %s: open (the probes cannot tell):", hw_tcs[w].name);
            for (int b = 0; b < 6; b++)
                if (r[w].open & 1u << b)
                    printf(" %s", names[b]);
            printf("\n");
        }
        if (!r[w].survivors)
            printf("  %s: %s\n", hw_tcs[w].name, r[w].misfit);
        fpk_tc_params pub;
        if (hw_tc_published(own, (hw_tc_input)w, &pub))
            printf("  %s: %s\n", hw_tcs[w].name,
                   r[w].published[0] ? r[w].published : "the published parameters fit");
    }
}

static void run_mma(const opts *o, const hw_device *d, const fpk_tc_params *const measured[HW_NTC])
{
    hw_mma_tally t[HW_NTC];
    memset(t, 0, sizeof t);
    char msg[256];
    double t0 = now();
    size_t tiles = o->quick ? 1024 : o->tiles;
    if (hw_mma_check(d, tiles, o->seed, o->threads, measured, t, msg, sizeof msg) != 0)
        die_dev(msg);
    printf("\nmatrix products, binary32 accumulation: bit-exact agreement with each model\n"
           "(%zu tiles of 16 x 16 per 16-bit and tf32 input, %zu dot products per FP8 input,\n"
           "random and adversarial, seed %" PRIu64 ", %.1f s)\n",
           tiles, tiles * 16, o->seed, now() - t0);
    for (int w = 0; w < HW_NTC; w++) {
        if (!t[w].total) {
            printf("  %-9s not on this device or build\n", hw_tcs[w].name);
            continue;
        }
        printf("  %-9s %9" PRIu64 " dot products:", hw_tcs[w].name, t[w].total);
        fpk_tc_params p;
        for (int a = 0; a < FPK_TC_ARCH_COUNT; a++)
            if (hw_tc_published((fpk_tc_arch)a, (hw_tc_input)w, &p))
                printf("  %s %.4f%%", fpk_tc_arch_name((fpk_tc_arch)a),
                       100.0 * (double)t[w].agree[a] / (double)t[w].total);
        if (measured && measured[w])
            printf("  measured %.4f%% (goal %.2f%%: %s)",
                   100.0 * (double)t[w].agree_measured / (double)t[w].total,
                   HW_MMA_GOAL / 100.0,
                   t[w].agree_measured * 10000 >= t[w].total * HW_MMA_GOAL ? "met" : "MISSED");
        else if (measured)
            printf("  measured: none");
        printf("\n");
    }
    for (int w = 0; w < HW_NTC; w++)
        if (t[w].total && t[w].first.nex) {
            printf("  %s: the first disagreements with the %s (operands: block of 256, dot in "
                   "it, c):\n",
                   hw_tcs[w].name,
                   measured && measured[w] ? "measured parameters" : "device architecture's model");
            print_details(hw_tcs[w].name, &t[w].first, 8, 3);
        }
}

static void own_option(void *state, int key, char *const *v)
{
    opts *o = state;
    switch (key) {
    case OPT_CONV: o->conv = true; break;
    case OPT_ARITH: o->arith = true; break;
    case OPT_PROBE: o->probe = true; break;
    case OPT_MMA: o->mma = true; break;
    case OPT_QUICK: o->quick = true; break;
    case OPT_DEVICE: o->device = (int)cli_parse_int("--device", v[0], 0, 1023); break;
    case OPT_TILES: o->tiles = (size_t)cli_parse_int("--tiles", v[0], 1, 1 << 22); break;
    }
}

static const cli_tool tool = {
    .name = "fpk-hwcheck",
    .synopsis = synopsis,
    .intro = "Compares libfpkit with the GPU's conversions from float32, its fp16 and bf16 "
             "__hadd, __hmul and __hfma, and its matrix products with the tensor-core model, "
             "whose parameters it measures on the device.",
    .outro = "Exit status: 0 all agree (conventions aside), 1 mismatches, 2 usage, 3 a CUDA "
             "failure, 4 no CUDA device.",
    .opts = options,
    .own = own_option,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    opts o = {.tiles = 16384};
    cli_common c;
    cli_common_init(&c);
    c.seed = 1;
    cli_parse(&tool, &c, argc, argv, &o);
    if (c.noperands)
        cli_die(CLI_EXIT_USAGE, "unexpected operand \"%s\" (see fpk-hwcheck --help)",
                c.operands[0]);
    o.seed = c.seed;
#ifdef _OPENMP
    o.threads = cli_given(&c, CLI_THREADS) ? c.threads : omp_get_max_threads();
#else
    o.threads = cli_given(&c, CLI_THREADS) ? c.threads : 1;
#endif
    cli_common_free(&c);
    if (!o.conv && !o.arith && !o.probe && !o.mma)
        o.conv = o.arith = o.probe = o.mma = true;

    hw_device d = {0};
    char msg[256];
    int rc = hw_dev_open(o.device, &d, msg, sizeof msg);
    if (rc > 0) {
        fprintf(stderr, "%s: %s\n", cli_prog(), msg);
        return EXIT_NO_DEVICE;
    }
    if (rc < 0)
        die_dev(msg);
    printf("fpk-hwcheck: device %d: %s (compute capability %d.%d); %s; %d host threads\n",
           o.device, d.name, d.major, d.minor, fpk_version(), o.threads);
    uint64_t bad = 0;
    if (o.conv)
        bad += run_conv(&o, &d);
    if (o.arith)
        bad += run_arith(&o, &d);
    fpk_tc_params found[HW_NTC];
    const fpk_tc_params *measured[HW_NTC] = {0};
    if (o.probe)
        run_probe(&d, found, measured);
    if (o.mma)
        run_mma(&o, &d, o.probe ? measured : NULL);
    printf("\n%s: %" PRIu64 " mismatches\n", cli_prog(), bad);
    return bad ? CLI_EXIT_FINDINGS : 0;
}
