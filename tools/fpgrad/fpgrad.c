/* fpgrad: what FP16, BF16 and FP8 would do to the tensors of a dump
 * (gradients, activation gradients, weights): how much would vanish, go
 * subnormal or overflow, and what scaling rescues them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gnuplot.h"
#include "grad.h"
#include "grad_part.h"
#include "grad_recipe.h"
#include "outdir.h"
#include "outfile.h"
#ifdef FPGRAD_MPI
#include "mpi_job.h"
#endif

/* The name in --version and in messages that send the user to --help. */
#ifdef FPGRAD_MPI
#define TOOL "fpgrad-mpi"
#else
#define TOOL "fpgrad"
#endif

enum {
    OPT_SCALE = CLI_OWN,
    OPT_LOGY,
    OPT_REPORT,
    OPT_NO_SQNR,
    OPT_EMIT_PARTIAL,
    OPT_MERGE,
    OPT_SHARDS,
    OPT_LOSS_SCALED,
    OPT_REPORT_PLOTS,
    OPT_KEEP_BELOW,
};

/* The tensors a loss scale multiplies, by default: gradients of the
 * parameters and of the activations, in the dumper's layout. */
#define DEFAULT_LOSS_SCALED "^(grad|actgrad)/"

static const cli_opt options[] = {
    {.key = CLI_FORMATS,
     .help = "formats to round into (default fp16,bf16,e4m3,e5m2); mxfp8, mxfp6, mxfp4: OCP MX "
             "blocks of 32 with e4m3, e3m2, e2m1"},
    {.key = OPT_SCALE, .name = "--scale", .value = "S|auto",
     .help = "multiply by S before rounding (default 1); auto: recommend the loss scale and the "
             "FP8 scales, and show what remains"},
    {.key = OPT_LOSS_SCALED, .name = "--loss-scaled", .value = "REGEX",
     .help = "the tensors a loss scale multiplies, which --scale S and --scale auto apply to "
             "(default ^(grad|actgrad)/, the gradients of the dumper's layout; every tensor "
             "of a dump without that layout)"},
    {.key = CLI_RECIPES,
     .help = "compare these scaled-quantisation recipes instead of the formats: rank them, and "
             "name the tensors each should keep in BF16 (standard: fp8-tensor-current, "
             "fp8-block128, mxfp8-e4m3, mxfp4, nvfp4; all: every preset; fpkit-recipes(7))"},
    {.key = OPT_KEEP_BELOW, .name = "--keep-below", .value = "DB",
     .help = "with --recipes: keep in BF16 the tensors under DB dB of SQNR (default: 6 dB "
             "under what each recipe gives Gaussian data)"},
    {.key = CLI_FP8_SCALE},
    {.key = CLI_MARGIN},
    {.key = CLI_ROUND},
    {.key = CLI_MATCH},
    {.key = CLI_DTYPE},
    {.key = CLI_SHAPE},
    {.key = CLI_BIG_ENDIAN},
    {.key = CLI_JSON},
    {.key = CLI_CSV},
    {.key = CLI_PLOT, .help = "the histogram of log2|x| of all tensors, .png or .svg"},
    {.key = CLI_PLOT_SIZE},
    {.key = OPT_LOGY, .name = "--logy", .help = "counts on a log scale"},
    {.key = OPT_REPORT, .name = "--report", .value = "DIR",
     .help = "an HTML report in DIR: tables, plots, the JSON"},
    {.key = OPT_REPORT_PLOTS, .name = "--report-plots", .value = "N",
     .help = "the report's plot of each tensor: of the N that lose most (default 256)"},
    {.key = OPT_NO_SQNR, .name = "--no-sqnr",
     .help = "no SQNR, and no second read of each tensor for it (but for MX formats, whose "
             "counts need it)"},
    {.key = OPT_EMIT_PARTIAL, .name = "--emit-partial", .value = "FILE",
     .help = "also write the results as a partial file, for --merge"},
    {.key = OPT_MERGE, .name = "--merge",
     .help = "the paths are partial files of disjoint dumps: report them as one run over all "
             "their files would"},
    {.key = OPT_SHARDS, .name = "--shards",
     .help = "a tensor split across files named ...-00003-of-00008... or ...rank3...: one row, "
             "its shards together"},
#ifdef FPGRAD_MPI
    {.key = CLI_THREADS,
     .help = "threads: tensors read at once, and each tensor's share (default: this rank's "
             "share of its machine's CPUs)"},
#else
    {.key = CLI_THREADS,
     .help = "threads: tensors read at once, and each tensor's share (default: all its CPUs)"},
#endif
    {.key = CLI_TOP},
    {.key = CLI_ALL},
    {.key = CLI_QUIET, .help = "no text on standard output, no progress"},
    {0},
};

static const char *const synopsis[] = {
    "--formats --scale --loss-scaled --fp8-scale --margin --round --match --dtype --shape "
    "--big-endian --json --csv --plot --plot-size --logy --report --report-plots --no-sqnr --threads --top "
    "--all --quiet --shards --emit-partial PATH...",
    "!--merge --shards --json --csv --plot --plot-size --logy --report --report-plots --top "
    "--all --quiet PARTIAL...",
    "!--recipes --keep-below --match --dtype --shape --big-endian --json --csv --plot --plot-size "
    "--report --threads --top --all --quiet PATH...",
    NULL,
};

/* The options of the formats' analysis, which --recipes refuses. */
static const int format_options[] = {CLI_FORMATS, OPT_SCALE, OPT_LOSS_SCALED, CLI_FP8_SCALE,
                                     CLI_MARGIN, CLI_ROUND, OPT_NO_SQNR, OPT_EMIT_PARTIAL,
                                     OPT_MERGE, OPT_SHARDS, OPT_REPORT_PLOTS, OPT_LOGY};

/* The options that say how to analyse, which --merge refuses: the
 * partials hold how they were analysed. */
static const int analysis_options[] = {CLI_FORMATS, OPT_SCALE, OPT_LOSS_SCALED, CLI_FP8_SCALE,
                                       CLI_MARGIN, CLI_ROUND, CLI_MATCH, CLI_DTYPE, CLI_SHAPE,
                                       CLI_BIG_ENDIAN, OPT_NO_SQNR};

#define DEFAULT_FORMATS "fp16,bf16,e4m3,e5m2"

typedef struct opts {
    grad_run run;
    cli_common c;
    bool scale_given, no_sqnr_given;
    bool keep_given; /* --keep-below */
    double keep_below;
    bool flags[16]; /* which of the tool's own options were given, from CLI_OWN */
    const char *loss_scaled; /* --loss-scaled */
    const char *report;
    size_t report_plots;
    const char *emit;     /* --emit-partial */
    grad_sums *sums;      /* the rows' exact error sums */
    bool merge;           /* --merge: the paths are partial files */
    bool shards;          /* --shards */
    grad_plot_opts plot_opts;
} opts;

/* S is "auto", or a number (2^K and M*2^K too) read as the nearest double. */
static void parse_scale(opts *o, const char *s)
{
    if (strcmp(s, "auto") == 0) {
        o->run.autoscale = true;
        o->run.scale = 1;
        return;
    }
    o->run.autoscale = false;
    o->run.scale = cli_parse_positive("--scale", s, "a number, 2^K or auto");
}

static void write_outputs(const opts *o)
{
    const grad_run *run = &o->run;
    if (o->c.json) {
        grad_json_write(run, o->c.json);
    }
    if (o->c.csv) {
        outfile f;
        outfile_open(&f, o->c.csv);
        grad_csv(run, f.fp);
        outfile_commit(&f);
    }
    if (o->c.plot) {
        char *title = run->nrows == 1 ? cli_strf("%s", run->rows[0].name)
                                      : cli_strf("%zu tensors, %" PRIu64 " elements", run->nrows,
                                                 run->total.count);
        grad_plot(run, &run->total, title, o->c.plot, &o->plot_opts);
        free(title);
    }
    if (o->report)
        grad_report(run, o->report, &o->plot_opts, o->c.top, o->report_plots);
    if (!o->c.quiet && !cli_is_stdout(o->c.json) && !cli_is_stdout(o->c.csv)) {
        grad_text(run, stdout, o->c.top, o->c.all);
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    }
}

/* fpgrad --recipes on S: the analysis, then its outputs. */
static void run_recipes(opts *o, const scan *s)
{
    recipe_run run = {.keep_given = o->keep_given, .keep_below = o->keep_below,
                      .threads = o->c.threads};
    recipe_analyse(&run, s, &o->c, !o->c.quiet && isatty(STDERR_FILENO));
    if (o->c.json)
        recipe_json_write(&run, o->c.json);
    if (o->c.csv) {
        outfile f;
        outfile_open(&f, o->c.csv);
        recipe_csv(&run, f.fp);
        outfile_commit(&f);
    }
    if (o->c.plot)
        recipe_plot(&run, o->c.plot, o->plot_opts.width, o->plot_opts.height);
    if (o->report)
        recipe_report(&run, o->report, o->plot_opts.width, o->plot_opts.height, o->c.top);
    if (!o->c.quiet && !cli_is_stdout(o->c.json) && !cli_is_stdout(o->c.csv)) {
        recipe_text(&run, stdout, o->c.top, o->c.all);
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    }
    recipe_run_free(&run);
}

/* Checks the outputs before the work: no output replaces an input (the
 * scan protects those) or another output. */
static void guard_outputs(const opts *o)
{
    const char *outs[4 + GRAD_REPORT_FILES] = {o->c.json, o->c.csv, o->c.plot, o->emit};
    char *report[GRAD_REPORT_FILES] = {NULL};
    const char *const *files = o->c.nrecipes ? recipe_report_files : grad_report_files;
    int nfiles = o->c.nrecipes ? RECIPE_REPORT_FILES : GRAD_REPORT_FILES;
    for (int k = 0; o->report && k < nfiles; k++)
        outs[4 + k] = report[k] = cli_strf("%s/%s", o->report, files[k]);
    outfile_check(outs, sizeof outs / sizeof outs[0]);
    for (int k = 0; k < GRAD_REPORT_FILES; k++)
        free(report[k]);
    if (o->report) /* replaced whole: it must hold no input */
        outdir_check(o->report);
}

static void own_option(void *state, int key, char *const *v)
{
    opts *o = state;
    if (key - CLI_OWN < 16)
        o->flags[key - CLI_OWN] = true;
    switch (key) {
    case OPT_KEEP_BELOW: {
        char *end;
        o->keep_below = strtod(v[0], &end);
        if (end == v[0] || *end || !isfinite(o->keep_below))
            cli_die(CLI_EXIT_USAGE, "option --keep-below: expected a number of dB, not \"%s\"",
                    v[0]);
        o->keep_given = true;
        break;
    }
    case OPT_SCALE:
        parse_scale(o, v[0]);
        o->scale_given = true;
        break;
    case OPT_LOGY: o->plot_opts.logy = true; break;
    case OPT_REPORT: o->report = v[0]; break;
    case OPT_REPORT_PLOTS: o->report_plots = (size_t)cli_parse_int("--report-plots", v[0], 0, 1000000); break;
    case OPT_NO_SQNR:
        o->run.sqnr = false;
        o->no_sqnr_given = true;
        break;
    case OPT_EMIT_PARTIAL: o->emit = v[0]; break;
    case OPT_MERGE: o->merge = true; break;
    case OPT_SHARDS: o->shards = true; break;
    case OPT_LOSS_SCALED: o->loss_scaled = v[0]; break;
    }
}

static const cli_tool tool = {
    .name = TOOL,
    .synopsis = synopsis,
    .intro = CLI_PATHS_INTRO,
    .opts = options,
    .own = own_option,
    .lookup = grad_mx_lookup,
};

/* Whether option KEY, shared or fpgrad's own, was given. */
static bool given(const opts *o, int key)
{
    return key >= CLI_OWN ? key - CLI_OWN < 16 && o->flags[key - CLI_OWN] : cli_given(&o->c, key);
}

/* Dies unless the options go together. */
static void check_options(const opts *o)
{
    if (o->c.nrecipes) {
        for (size_t k = 0; k < sizeof format_options / sizeof format_options[0]; k++)
            if (given(o, format_options[k]))
                cli_die(CLI_EXIT_USAGE,
                        "option %s does not apply to --recipes, whose recipes say how they "
                        "scale and round",
                        cli_option_name(&tool, format_options[k]));
        return;
    }
    if (o->keep_given)
        cli_die(CLI_EXIT_USAGE, "option --keep-below applies to --recipes only");
    if (o->merge && o->emit)
        cli_die(CLI_EXIT_USAGE, "--merge and --emit-partial: merge the partials, then emit none");
    for (size_t k = 0; o->merge && k < sizeof analysis_options / sizeof analysis_options[0]; k++) {
        int key = analysis_options[k];
        bool given = key == OPT_SCALE         ? o->scale_given
                     : key == OPT_NO_SQNR   ? o->no_sqnr_given
                     : key == OPT_LOSS_SCALED ? o->loss_scaled != NULL
                                            : cli_given(&o->c, key);
        if (given)
            cli_die(CLI_EXIT_USAGE,
                    "option %s does not apply to --merge: the partials hold how they were "
                    "analysed",
                    cli_option_name(&tool, key));
    }
    if (o->emit && o->run.autoscale)
        cli_die(CLI_EXIT_USAGE, "--emit-partial cannot record --scale auto, which needs the "
                                "whole dump's largest magnitude: use fpgrad-mpi, or give the "
                                "scale");
    if (cli_given(&o->c, CLI_MARGIN) && !o->run.autoscale)
        cli_die(CLI_EXIT_USAGE, "option --margin applies to --scale auto only");
    if (cli_given(&o->c, CLI_FP8_SCALE) && !o->run.autoscale)
        cli_die(CLI_EXIT_USAGE, "option --fp8-scale applies to --scale auto only");
}

int main(int argc, char **argv)
{
    cli_init(argv[0]);
#ifdef FPGRAD_MPI
    mpi_job_init(&argc, &argv);
#endif
    opts o = {.plot_opts = {.width = 1000, .height = 600}, .report_plots = 256};
    o.run.sqnr = true;
    o.run.scale = 1;
    cli_common_init(&o.c);
    o.c.nformats = grad_parse_formats("--formats", DEFAULT_FORMATS, o.c.formats, CLI_MAX_FORMATS);
    cli_parse(&tool, &o.c, argc, argv, &o);
    o.run.round = o.c.ctx.round;
    o.run.threads = o.c.threads;
    o.run.margin = o.c.margin;
    o.run.fp8_rule = (scaling_rule)o.c.fp8_scale;
    o.run.loss_text = o.loss_scaled ? o.loss_scaled : DEFAULT_LOSS_SCALED;
    regex_t loss_re;
    cli_regex("--loss-scaled", o.run.loss_text, &loss_re);
    o.run.nformats = o.c.nformats;
    memcpy(o.run.formats, o.c.formats, sizeof o.c.formats);
    o.plot_opts.width = o.c.plot_width;
    o.plot_opts.height = o.c.plot_height;
    int npaths = o.c.noperands;
    char **paths = o.c.operands;
    if (!npaths) {
        regfree(&loss_re);
        int rc = cli_no_paths(&tool, &o.c);
        cli_common_free(&o.c);
        return rc;
    }
    check_options(&o);
#ifdef FPGRAD_MPI
    bool plots_here = mpi_job_rank() == 0; /* rank 0 writes everything */
#else
    bool plots_here = true;
#endif
    const char *script = o.c.nrecipes ? "recipes.gp" : "hist.gp";
    if (o.c.plot && plots_here)
        gp_check(o.c.plot, script);
    else if (o.report && plots_here && gp_program())
        free(gp_script(script));

    scan s = {0};
    if (o.merge) { /* partial files, named one by one */
        for (int i = 0; i < npaths; i++)
            outfile_protect(paths[i]);
    } else {
        scan_open(&s, paths, npaths, o.c.has_raw ? &o.c.raw : NULL);
    }
    guard_outputs(&o);
#ifdef FPGRAD_MPI
    if (mpi_job_rank() != 0) { /* rank 0 writes everything */
        o.c.quiet = true;
        o.c.json = o.c.csv = o.c.plot = NULL;
        o.report = o.emit = NULL;
    }
#endif
    if (o.c.nrecipes) {
        run_recipes(&o, &s);
        scan_free(&s);
        regfree(&loss_re);
        cli_common_free(&o.c);
        return 0;
    }
    if (o.merge)
        o.sums = grad_part_merge(&o.run, paths, (size_t)npaths);
    else
        o.sums = grad_analyse(&o.run, &s, &o.c, o.shards, !o.c.quiet && isatty(STDERR_FILENO),
                              &loss_re, o.loss_scaled == NULL);
    if (o.emit) /* the tensors as read, whatever --shards */
        grad_part_write(o.emit, &o.run, o.sums);
    grad_finish(&o.run, o.sums);
    free(o.sums);
    if (o.shards)
        grad_group_shards(&o.run);
    write_outputs(&o);

    for (size_t i = 0; i < o.run.nrows; i++)
        grad_row_free(&o.run.rows[i]);
    for (size_t i = 0; i < o.run.nsteps; i++)
        grad_row_free(&o.run.steps[i]);
    free(o.run.steps);
    grad_row_free(&o.run.total);
    regfree(&loss_re);
    free(o.run.rows);
    scan_free(&s);
    cli_common_free(&o.c);
    return 0;
}
