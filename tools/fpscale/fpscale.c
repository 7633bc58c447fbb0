/* fpscale: dynamic loss scaling (PyTorch's GradScaler) or FP8 delayed
 * scaling (Transformer Engine's) replayed over a series of gradient dumps,
 * one dump per step: the scale at each step, the skipped steps, and what
 * overflowed, saturated or underflowed at that scale. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fpscale.h"
#include "gnuplot.h"
#include "outfile.h"
#include "scaling.h"
#include "scan.h"

enum {
    OPT_INIT_SCALE = CLI_OWN,
    OPT_GROWTH_FACTOR,
    OPT_BACKOFF_FACTOR,
    OPT_GROWTH_INTERVAL,
    OPT_FP8,
    OPT_FP8_FORMAT,
    OPT_HISTORY,
    OPT_AMAX,
    OPT_SWEEP,
    OPT_GRADS_SCALED,
};

static const cli_opt options[] = {
    {.key = CLI_HEADING, .help = "Dynamic loss scaling (default), as PyTorch's GradScaler:"},
    {.key = CLI_FORMAT, .help = "the gradients' format (default fp16)"},
    {.key = OPT_INIT_SCALE, .name = "--init-scale", .value = "S",
     .help = "the first scale (default 2^16)"},
    {.key = OPT_GROWTH_FACTOR, .name = "--growth-factor", .value = "G",
     .help = "multiply the scale by G (default 2) after"},
    {.key = OPT_GROWTH_INTERVAL, .name = "--growth-interval", .value = "N",
     .help = "N steps in a row without overflow (default 2000)"},
    {.key = OPT_BACKOFF_FACTOR, .name = "--backoff-factor", .value = "B",
     .help = "multiply it by B (default 0.5) on a skipped step"},
    {.key = CLI_HEADING, .help = "FP8 delayed scaling, per tensor, as Transformer Engine:"},
    {.key = OPT_FP8, .name = "--fp8", .help = "replay FP8 delayed scaling instead"},
    {.key = OPT_FP8_FORMAT, .name = "--fp8-format", .value = "FMT",
     .help = "e4m3 (default) or e5m2"},
    {.key = OPT_HISTORY, .name = "--history", .value = "H",
     .help = "amax history length (default 1024)"},
    {.key = OPT_AMAX, .name = "--amax-rule", .value = "max|most-recent",
     .help = "the scale from the history's largest amax (default) or its most recent"},
    {.key = CLI_MARGIN, .help = "divide the scale by 2^M (default 0)"},
    {.key = CLI_FP8_SCALE},
    {.key = OPT_SWEEP, .name = "--sweep", .value = "PARAM=LIST",
     .help = "replay each value of PARAM (history, amax-rule, margin, fp8-scale), comma-separated; "
             "once per parameter swept, every combination ranked by its loss"},
    {.key = CLI_CSV, .help = "every setting's tensor at every step as CSV (- for standard output)"},
    {.key = CLI_HEADING, .help = "Both:"},
    {.key = CLI_MATCH, .help = "tensors whose name matches (default ^grad/)"},
    {.key = OPT_GRADS_SCALED, .name = "--grads-scaled",
     .help = "the dumps hold gradients times their loss_scale: divide by it first"},
    {.key = CLI_TOP},
    {.key = CLI_ALL, .help = "after the summary, every tensor at every step"},
    {.key = CLI_JSON, .help = "the replay as JSON (- for standard output)"},
    {.key = CLI_PLOT, .help = "the scales, and the share underflowing per step; .png or .svg"},
    {.key = CLI_PLOT_SIZE},
    {.key = CLI_THREADS, .help = "threads per tensor (default: all its CPUs)"},
    {.key = CLI_QUIET},
    {0},
};

static const char *const synopsis[] = {
    "--format --init-scale --growth-factor --backoff-factor --growth-interval --match "
    "--grads-scaled --top --all --json --plot --plot-size --threads --quiet PATH...",
    "!--fp8 --fp8-format --history --amax-rule --margin --fp8-scale --sweep --match --grads-scaled "
    "--top --all --json --csv --plot --plot-size --threads --quiet PATH...",
    NULL,
};

#define DEFAULT_MATCH "^grad/"

typedef struct opts {
    scale_run run;
    cli_common c;
    const fpk_format *fp8_format;
    fp8_setting set; /* --history, --amax-rule, --margin, --fp8-scale */
    scale_sweep sweep;
    bool own_given[OPT_GRADS_SCALED - CLI_OWN + 1];
} opts;

/* With --grads-scaled, the file's loss scale from its metadata. */
static void file_loss_scale(scale_file *f, const fpk_dump *d)
{
    const char *meta = fpk_dump_metadata(d, "loss_scale");
    if (!meta)
        cli_die(CLI_EXIT_USAGE,
                "%s: --grads-scaled needs the loss scale, and the file has no "
                "__metadata__ loss_scale",
                f->path);
    fpk_bits bits = 0;
    fpk_class k = FPK_CLASS_ZERO;
    if (fpk_parse(&fpk_fp64, meta, &bits, NULL, NULL) == FPK_OK)
        k = fpk_classify(&fpk_fp64, bits);
    if (fpk_signbit(&fpk_fp64, bits) || (k != FPK_CLASS_NORMAL && k != FPK_CLASS_SUBNORMAL))
        cli_die(CLI_EXIT_USAGE,
                "%s: __metadata__ loss_scale \"%s\" is not a finite positive number", f->path,
                meta);
    f->loss_scale = fpk_to_double(&fpk_fp64, bits);
}

const char *scale_name(scale_run *run, const char *name)
{
    for (size_t i = run->nnames; i-- > 0;)
        if (strcmp(run->names[i], name) == 0)
            return run->names[i];
    if (run->nnames == run->capnames) {
        run->capnames = run->capnames ? 2 * run->capnames : 16;
        if (!(run->names = realloc(run->names, run->capnames * sizeof *run->names)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    return run->names[run->nnames++] = cli_strf("%s", name);
}

static int by_step(const void *a, const void *b)
{
    const scale_file *x = a, *y = b;
    return (x->step > y->step) - (x->step < y->step);
}

/* Reads every header of S: the steps, in order. */
static void list_steps(scale_run *run, const scan *s)
{
    run->nfiles = s->files.n;
    run->files = cli_xcalloc(s->files.n, sizeof *run->files);
    for (size_t i = 0; i < s->files.n; i++) {
        scale_file *f = &run->files[i];
        f->path = s->files.v[i];
        f->scan_file = i;
        f->loss_scale = 1;
        fpk_dump *d = scan_open_file(s, i);
        f->npy = strcmp(fpk_dump_kind(d), "npy") == 0;
        f->step = scan_need_step(s, i);
        f->step_from_metadata = s->steps[i].from_metadata;
        if (run->grads_scaled)
            file_loss_scale(f, d);
        fpk_dump_close(d);
    }
    qsort(run->files, run->nfiles, sizeof *run->files, by_step);
    for (size_t i = 1; i < run->nfiles; i++)
        if (run->files[i].step == run->files[i - 1].step)
            cli_die(CLI_EXIT_USAGE, "step %" PRId64 " twice: %s and %s; give one dump per step",
                    run->files[i].step, run->files[i - 1].path, run->files[i].path);
}

bool scale_div(double x, double l, double *q, const char *path, char *why, size_t len)
{
    fpk_ctx c = fpk_ctx_default();
    *q = fpk_to_double(&fpk_fp64, fpk_div(&fpk_fp64, fpk_from_double(&fpk_fp64, x, &c),
                                          fpk_from_double(&fpk_fp64, l, &c), &c));
    if (!(c.flags & (FPK_INEXACT | FPK_UNDERFLOW | FPK_OVERFLOW)))
        return true;
    snprintf(why, len,
             "%s: dividing by the loss scale %.17g is not exact in double; --grads-scaled "
             "needs a loss scale that divides exactly (a power of two)",
             path, l);
    return false;
}

double scale_exact_div(double x, double l, const char *path)
{
    double q;
    char why[SCALE_WHY_LEN];
    if (!scale_div(x, l, &q, path, why, sizeof why))
        cli_die(CLI_EXIT_USAGE, "%s", why);
    return q;
}

/* A tensor's statistics at one step, computed as a job of the scan: in
 * the run's format at SCALE, saturating if SATURATE (RNE). */
typedef struct tensor_job {
    const scan_tensor *t;
    double scale;
    bool saturate;
    scale_counts c; /* out */
    uint64_t nonfinite;
    double amax;
} tensor_job;

typedef struct step_jobs {
    const scale_run *run;
    tensor_job *v;
    size_t n;
} step_jobs;

static void counts_of(scale_counts *c, const fpk_stats *s);

static bool tensor_stats(scan_worker *w, size_t j, void *arg)
{
    const step_jobs *sj = arg;
    tensor_job *jb = &sj->v[j];
    fpk_stats *s = scan_scratch(w, sizeof *s);
    fpk_ctx c = fpk_ctx_default();
    c.saturate = jb->saturate;
    fpk_stats_init(s, &sj->run->format, 1, jb->scale, &c);
    if (!scan_add_stats(w, jb->t, s, 1))
        return false;
    counts_of(&jb->c, s);
    jb->nonfinite = s->nonfinite;
    jb->amax = s->amax;
    return true;
}

/* Every job of SJ, shared among THREADS threads. */
static void run_step(const scan *s, step_jobs *sj, int threads)
{
    scan_pool pool = {.s = s, .njobs = sj->n, .threads = threads, .job = tensor_stats,
                      .arg = sj};
    scan_run(&pool);
}

const scan_tensor **scale_step_tensors(const scale_run *run, const regex_t *match, const scan *s,
                                       const scale_file *f, size_t *n)
{
    const scan_tensor **v = cli_xcalloc(s->ntensors ? s->ntensors : 1, sizeof *v);
    size_t in_file = 0;
    const char *first = NULL;
    *n = 0;
    for (size_t k = 0; k < s->ntensors; k++) {
        const scan_tensor *t = &s->tensors[k];
        if (t->file != f->scan_file)
            continue;
        if (!in_file++)
            first = t->t.name;
        if (regexec(match, t->t.name, 0, NULL, 0) == 0)
            v[(*n)++] = t;
    }
    if (!*n)
        cli_die(CLI_EXIT_USAGE,
                "%s: no tensor matches --match '%s' (of %zu: %s%s); a .npy tensor is named by "
                "its file",
                f->path, run->match, in_file, first ? first : "none", in_file > 1 ? ", ..." : "");
    return v;
}

/* The tensors of step F as jobs, their scales to be set. */
static void step_tensors(const opts *o, const scan *s, const scale_file *f, step_jobs *sj)
{
    const scan_tensor **ts = scale_step_tensors(&o->run, &o->c.match, s, f, &sj->n);
    sj->run = &o->run;
    sj->v = cli_xcalloc(sj->n, sizeof *sj->v);
    for (size_t j = 0; j < sj->n; j++)
        sj->v[j].t = ts[j];
    free(ts);
}

static void counts_of(scale_counts *c, const fpk_stats *s)
{
    c->count = s->count;
    c->nonfinite = s->nonfinite;
    c->nonzero = s->count - s->zeros - s->nonfinite;
    c->overflow = s->fmt[0].overflow;
    c->underflow = s->fmt[0].underflow;
}

void scale_add_counts(scale_counts *into, const scale_counts *c)
{
    into->count += c->count;
    into->nonzero += c->nonzero;
    into->nonfinite += c->nonfinite;
    into->overflow += c->overflow;
    into->underflow += c->underflow;
    into->x2 += c->x2;
    into->e2 += c->e2;
}

/* S (fp32) times the factor G (fp64), rounded to fp64 and then to fp32, as
 * GradScaler's update does (float * double, stored in a float). */
static fpk_bits f32_times(fpk_bits s, double g)
{
    fpk_ctx c = fpk_ctx_default();
    fpk_bits p = fpk_mul(&fpk_fp64, fpk_convert(&fpk_fp64, &fpk_fp32, s, &c),
                         fpk_from_double(&fpk_fp64, g, &c), &c);
    return fpk_convert(&fpk_fp32, &fpk_fp64, p, &c);
}

/* Loss mode: GradScaler over the steps. */
static void replay_loss(opts *o, const scan *s)
{
    scale_run *run = &o->run;
    fpk_bits scale = run->init_scale;
    int64_t tracker = 0;
    for (size_t i = 0; i < run->nfiles; i++) {
        const scale_file *f = &run->files[i];
        scale_step *st = &run->steps[i];
        st->scale = scale;
        step_jobs sj;
        step_tensors(o, s, f, &sj);
        /* A scale of 0 (after enough backoffs) makes every element zero. */
        bool zero = fpk_classify(&fpk_fp32, scale) == FPK_CLASS_ZERO;
        double eff = zero ? 1 : scale_exact_div(scale_f32(scale), f->loss_scale, f->path);
        for (size_t j = 0; j < sj.n; j++)
            sj.v[j].scale = eff;
        run_step(s, &sj, o->c.threads);
        st->t = cli_xcalloc(sj.n, sizeof *st->t);
        for (size_t j = 0; j < sj.n; j++) {
            scale_entry *e = &st->t[st->n++];
            e->name = scale_name(run, sj.v[j].t->t.name);
            e->c = sj.v[j].c;
            if (zero) {
                e->c.overflow = 0;
                e->c.underflow = e->c.nonzero;
            }
            scale_add_counts(&st->sum, &e->c);
        }
        free(sj.v);
        /* GradScaler.update (_amp_update_scale_): back off and reset the
         * tracker on inf/NaN; else count the step and grow after
         * growth_interval in a row, unless the grown scale is not finite. */
        st->skipped = st->sum.overflow + st->sum.nonfinite > 0;
        if (st->skipped) {
            scale = f32_times(scale, run->backoff_factor);
            tracker = 0;
        } else if (++tracker == run->growth_interval) {
            fpk_bits grown = f32_times(scale, run->growth_factor);
            if (fpk_classify(&fpk_fp32, grown) != FPK_CLASS_INF)
                scale = grown;
            tracker = 0;
        }
        st->tracker = tracker;
        st->next_scale = scale;
    }
}

/* Checks the outputs before the work: no output replaces an input (the
 * scan protects those) or another output. */
static void guard_outputs(const opts *o)
{
    const char *outs[] = {o->c.json, o->c.csv, o->c.plot};
    outfile_check(outs, sizeof outs / sizeof outs[0]);
}

static void write_outputs(const opts *o)
{
    if (o->c.json)
        outfile_json(o->c.json, scale_json(&o->run));
    if (o->c.csv) {
        outfile f;
        outfile_open(&f, o->c.csv);
        scale_csv(&o->run, f.fp);
        outfile_commit(&f);
    }
    if (o->c.plot)
        scale_plot(&o->run, o->c.plot, o->c.plot_width, o->c.plot_height);
    if (!o->c.quiet && !cli_is_stdout(o->c.json) && !cli_is_stdout(o->c.csv)) {
        scale_text(&o->run, stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    }
}

static void own_option(void *state, int key, char *const *v)
{
    opts *o = state;
    scale_run *run = &o->run;
    o->own_given[key - CLI_OWN] = true;
    switch (key) {
    case OPT_INIT_SCALE: {
        /* GradScaler keeps the scale in a float32 tensor. */
        fpk_ctx c = fpk_ctx_default();
        run->init_scale = fpk_from_double(&fpk_fp32, cli_parse_positive("--init-scale", v[0], NULL), &c);
        fpk_class k = fpk_classify(&fpk_fp32, run->init_scale);
        if (k != FPK_CLASS_NORMAL && k != FPK_CLASS_SUBNORMAL)
            cli_die(CLI_EXIT_USAGE, "option --init-scale: \"%s\" is 0 or infinite in float32", v[0]);
        break;
    }
    case OPT_GROWTH_FACTOR:
        run->growth_factor = cli_parse_positive("--growth-factor", v[0], NULL);
        if (!(run->growth_factor > 1))
            cli_die(CLI_EXIT_USAGE, "option --growth-factor: \"%s\" is not above 1", v[0]);
        break;
    case OPT_BACKOFF_FACTOR:
        run->backoff_factor = cli_parse_positive("--backoff-factor", v[0], NULL);
        if (!(run->backoff_factor < 1))
            cli_die(CLI_EXIT_USAGE, "option --backoff-factor: \"%s\" is not below 1", v[0]);
        break;
    case OPT_GROWTH_INTERVAL:
        run->growth_interval = cli_parse_int("--growth-interval", v[0], 1, INT32_MAX);
        break;
    case OPT_FP8: run->fp8 = true; break;
    case OPT_FP8_FORMAT:
        o->fp8_format = cli_format(v[0]);
        if (o->fp8_format->width > 8)
            cli_die(CLI_EXIT_USAGE, "option --fp8-format: %s is not an 8-bit format",
                    o->fp8_format->name);
        break;
    case OPT_HISTORY: o->set.history = (long)cli_parse_int("--history", v[0], 1, 1000000); break;
    case OPT_AMAX:
        if (!sweep_amax_lookup(v[0], &o->set.most_recent))
            cli_die(CLI_EXIT_USAGE, "option --amax-rule: \"%s\" is neither max nor most-recent",
                    v[0]);
        break;
    case OPT_SWEEP: sweep_parse(&o->sweep, v[0]); break;
    case OPT_GRADS_SCALED: run->grads_scaled = true; break;
    }
}

static const cli_tool tool = {
    .name = "fpscale",
    .synopsis = synopsis,
    .intro = "Each PATH is a dump file (.npy or safetensors), one step, or a directory searched "
             "for them; steps are ordered by __metadata__ step, else by the number in the file "
             "name.",
    .opts = options,
    .own = own_option,
};

/* FP8 mode: the format, checked as the library's casts take it, and the
 * settings: the options', or the sweep's. */
static void fp8_settings(opts *o)
{
    scale_run *run = &o->run;
    fpk_recipe r = {.elem = o->fp8_format, .scale = &fpk_fp32, .rule = FPK_SCALE_AMAX};
    fpk_error err;
    if (!fpk_recipe_valid(&r, &err))
        cli_die(CLI_EXIT_USAGE, "option --fp8-format: %s: %s", o->fp8_format->name, err.msg);
    run->format = o->fp8_format;
    o->set.margin = o->c.margin;
    o->set.rule = o->c.fp8_scale;
    if (o->sweep.nparams) {
        run->settings = sweep_settings(&o->sweep, &o->set, &run->nsettings);
        run->sweep = &o->sweep;
    } else {
        run->settings = cli_xcalloc(1, sizeof *run->settings);
        run->settings[0] = o->set;
        run->nsettings = 1;
    }
}

/* The options of one mode only: those of loss scaling, then those of --fp8. */
static const int loss_only[] = {CLI_FORMAT, OPT_INIT_SCALE, OPT_GROWTH_FACTOR, OPT_BACKOFF_FACTOR,
                                OPT_GROWTH_INTERVAL};
static const int fp8_only[] = {OPT_FP8_FORMAT, OPT_HISTORY, OPT_AMAX, CLI_MARGIN,
                               CLI_FP8_SCALE, OPT_SWEEP, CLI_CSV};
/* The option of each parameter --sweep takes, in scale_sweep's order. */
static const int swept_option[SWEEP_PARAMS] = {OPT_HISTORY, OPT_AMAX, CLI_MARGIN, CLI_FP8_SCALE};

static bool given(const opts *o, int key)
{
    return key >= CLI_OWN ? o->own_given[key - CLI_OWN] : cli_given(&o->c, key);
}

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    opts o = {.fp8_format = &fpk_e4m3};
    scale_run *run = &o.run;
    run->format = &fpk_fp16;
    run->growth_factor = 2;
    run->backoff_factor = 0.5;
    run->growth_interval = 2000;
    o.set.history = 1024;
    run->init_scale = scale_f32_int(65536);
    cli_common_init(&o.c);
    cli_parse(&tool, &o.c, argc, argv, &o);
    if (!o.c.noperands) {
        cli_common_free(&o.c);
        return cli_usage_error(&tool);
    }
    for (size_t k = 0; k < sizeof loss_only / sizeof loss_only[0]; k++)
        if (given(&o, loss_only[k]) && run->fp8)
            cli_die(CLI_EXIT_USAGE, "option %s applies to loss scaling (not --fp8) only",
                    cli_option_name(&tool, loss_only[k]));
    for (size_t k = 0; k < sizeof fp8_only / sizeof fp8_only[0]; k++)
        if (given(&o, fp8_only[k]) && !run->fp8)
            cli_die(CLI_EXIT_USAGE, "option %s applies to --fp8 only",
                    cli_option_name(&tool, fp8_only[k]));
    for (int p = 0; p < SWEEP_PARAMS; p++)
        if (o.sweep.nvalues[p] && given(&o, swept_option[p]))
            cli_die(CLI_EXIT_USAGE, "option %s: %s is swept (--sweep %s=...)",
                    cli_option_name(&tool, swept_option[p]), sweep_param_name(p),
                    sweep_param_name(p));
    if (o.c.format)
        run->format = o.c.format;
    if (run->fp8)
        fp8_settings(&o);
    run->top = o.c.top;
    run->all = o.c.all;
    if (!o.c.has_match)
        cli_set_match(&o.c, DEFAULT_MATCH);
    run->match = o.c.match_text;
    if (o.c.plot)
        gp_check(o.c.plot, "fpscale.gp");

    scan s;
    scan_open(&s, o.c.operands, o.c.noperands, NULL);
    if (!s.files.n)
        cli_die(CLI_EXIT_USAGE, "no dumps found: the paths hold no .npy or safetensors files");
    list_steps(run, &s);
    guard_outputs(&o);
    if (run->fp8) {
        scale_replay_fp8(run, &o.c.match, &s, o.c.threads);
        if (run->sweep)
            sweep_rank(run);
    } else {
        run->steps = cli_xcalloc(run->nfiles, sizeof *run->steps);
        replay_loss(&o, &s);
    }
    write_outputs(&o);

    for (size_t k = 0; k < run->nsettings; k++) {
        for (size_t i = 0; i < run->nfiles; i++)
            free(run->fp8_steps[k][i].t);
        free(run->fp8_steps[k]);
    }
    if (run->fp8)
        run->steps = NULL;
    for (size_t i = 0; run->steps && i < run->nfiles; i++)
        free(run->steps[i].t);
    free(run->fp8_steps);
    free(run->settings);
    free(run->rank);
    sweep_free(&o.sweep);
    for (size_t i = 0; i < run->nnames; i++)
        free(run->names[i]);
    free(run->names);
    free(run->steps);
    free(run->files);
    scan_free(&s);
    cli_common_free(&o.c);
    return 0;
}
