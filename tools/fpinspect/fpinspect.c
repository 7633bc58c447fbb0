/* fpinspect: what an encoding or a number is in any format, and what
 * happens to it in the others.  The options and the order of the reports;
 * the reports are in the files fpinspect.h names. */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "fpinspect.h"

enum { OPT_JSON = CLI_OWN, OPT_EXACT, OPT_INFO, OPT_TABLE, OPT_LIST_FORMATS };

static const cli_opt options[] = {
    {.key = CLI_FORMAT, .help = "format of VALUE (default fp32)"},
    {.key = CLI_ROUND, .help = "rne (default), rna, rtz, rup, rdn, rod"},
    {.key = CLI_TO, .help = "these formats too, each rounded once from VALUE (comma-separated, or all)"},
    {.key = CLI_FTZ},
    {.key = CLI_SATURATE},
    {.key = OPT_EXACT, .name = "--exact",
     .help = "every digit of every decimal (default: long ones cut after 17 digits, \"...\")"},
    {.key = OPT_JSON, .name = "--json", .help = "one JSON object per value or report"},
    {.key = CLI_THREADS,
     .help = "as for every fpkit tool (1 to 1024); fpinspect's work, a value at a time, "
             "needs one"},
    {.key = OPT_INFO, .name = "--info", .value = "FMT",
     .help = "the format's parameters and rounding thresholds"},
    {.key = OPT_TABLE, .name = "--table", .value = "FMT",
     .help = "every encoding of a format of at most 8 bits"},
    {.key = OPT_LIST_FORMATS, .name = "--list-formats", .help = "the built-in formats side by side"},
    {.key = CLI_RECIPE, .value = "RECIPE",
     .help = "quantise the VALUEs as one tensor under a scaled-quantisation recipe, a preset "
             "(nvfp4, mxfp8-e4m3, ...) or ELEM/SCALE/RULE/ROWSxCOLS (fpkit-recipes(7)), and "
             "show its blocks"},
    {.key = CLI_SHAPE,
     .help = "with --recipe, the VALUEs' shape (default: one row; for blocks of several rows, "
             "one block)"},
    {0},
};

static const char *const synopsis[] = {
    "--format --round --to --ftz --saturate --exact --json --threads VALUE...",
    "--json --exact --round --ftz --saturate !--info",
    "--json --exact !--table|--list-formats",
    "--shape --exact --json !--recipe VALUE...",
    NULL,
};

/* Whether ARG looks like a value rather than an option: "-3e-8", "-inf",
 * "-nan,1" (--recipe's lists). */
static bool is_value(const char *arg)
{
    if (arg[0] != '-')
        return true;
    const char *p = arg + 1;
    return isdigit((unsigned char)*p) || *p == '.' || strncasecmp(p, "inf", 3) == 0 ||
           (strncasecmp(p, "nan", 3) == 0 && (p[3] == '\0' || p[3] == ','));
}

/* What the tool's own options set. */
typedef struct own_opts {
    bool json, exact, list_formats;
    const char *info, *table;
} own_opts;

static void own_option(void *state, int key, char *const *v)
{
    own_opts *o = state;
    if (key == OPT_JSON)
        o->json = true;
    else if (key == OPT_EXACT)
        o->exact = true;
    else if (key == OPT_INFO)
        o->info = v[0];
    else if (key == OPT_TABLE)
        o->table = v[0];
    else if (key == OPT_LIST_FORMATS)
        o->list_formats = true;
}

static const cli_tool tool = {
    .name = "fpinspect",
    .synopsis = synopsis,
    .intro = "VALUE is a bit pattern (0x3c00, 0b0011110000000000), a decimal (1.1, -3e-8), a "
             "hexadecimal float (0x1.8p-3), a power of two or a multiple of one (2^-24, "
             "3*2^-10), inf, -inf or nan.  With --recipe the VALUEs are numbers, several to a "
             "word when comma-separated (1,0.3,-2.5).",
    .opts = options,
    .own = own_option,
    .is_operand = is_value,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    /* the reference holds any exponent a value can be written with, short
     * of 2^(2^62) */
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_set_emin(mpfr_get_emin_min());
    cli_common c;
    cli_common_init(&c);
    own_opts own = {0};
    cli_parse(&tool, &c, argc, argv, &own);
    if (c.ctx.round == FPK_SR)
        cli_die(CLI_EXIT_USAGE, "--round sr: fpinspect shows deterministic roundings only");
    opts o = {.fmt = c.format ? c.format : &fpk_fp32, .ctx = c.ctx, .json = own.json, .exact = own.exact};
    o.nto = c.nto;
    memcpy(o.to, c.to, sizeof c.to);

    if (cli_given(&c, CLI_SHAPE) && !c.nrecipes)
        cli_die(CLI_EXIT_USAGE, "option --shape goes with --recipe");
    static const int value_only[] = {CLI_FORMAT, CLI_ROUND, CLI_TO, CLI_FTZ, CLI_SATURATE};
    for (size_t k = 0; c.nrecipes && k < sizeof value_only / sizeof value_only[0]; k++)
        if (cli_given(&c, value_only[k]))
            cli_die(CLI_EXIT_USAGE, "option %s does not apply to --recipe, whose values are "
                    "float32 rounded as the recipe says", cli_option_name(&tool, value_only[k]));
    if (c.nrecipes && !c.noperands)
        cli_die(CLI_EXIT_USAGE, "option --recipe needs the VALUEs to quantise");
    if (!c.noperands && !own.info && !own.table && !own.list_formats) {
        cli_common_free(&c);
        return cli_usage_error(&tool);
    }
    if (own.info)
        report_info(cli_format(own.info), &o);
    if (own.table)
        report_encodings(cli_format(own.table), &o);
    if (own.list_formats)
        report_formats(&o);
    if (c.nrecipes)
        report_recipe(c.recipe_names[0], &c.recipes[0], c.operands, c.noperands, &c.raw,
                      cli_given(&c, CLI_SHAPE), &o);
    for (int i = 0; !c.nrecipes && i < c.noperands; i++)
        report_value(c.operands[i], &o);
    cli_common_free(&c);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(CLI_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno));
    return 0;
}
