/* fpcheck: whether the quantised tensors of checkpoints follow the
 * conventions fpkit reads them by (fpk_dump_check): the scales zero, NaN,
 * saturated or padded, the codes' range, the nibbles' order and the
 * scales' sense, the failures that leave a model running on wrong
 * weights; and the tensors not read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "outfile.h"
#include "text.h"

static const cli_opt options[] = {
    {.key = CLI_JSON},
    {0},
};

static const char *const synopsis[] = {"--json PATH...", NULL};

static const char *verdict(fpk_verdict v)
{
    switch (v) {
    case FPK_VERDICT_OK: return "ok";
    case FPK_VERDICT_WRONG: return "WRONG";
    case FPK_VERDICT_UNDECIDED: return "undecided";
    default: return "-";
    }
}

static json_t *check_json(const char *file, const fpk_tensor *t, const fpk_quant_check *q)
{
    json_t *o = json_object();
    json_object_set_new(o, "file", json_string(file));
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "convention", json_string(q->convention));
    json_object_set_new(o, "recipe", json_string(q->recipe));
    json_object_set_new(o, "codes", json_string(q->codes));
    json_object_set_new(o, "scales", q->scales ? json_string(q->scales) : json_null());
    json_object_set_new(o, "global", q->global ? json_string(q->global) : json_null());
    json_object_set_new(o, "blocks", cli_json_count(q->blocks));
    json_object_set_new(o, "scale_entries", cli_json_count(q->scale_entries));
    json_object_set_new(o, "padding_nonzero", cli_json_count(q->padding_nonzero));
    json_object_set_new(o, "scale_zero", cli_json_count(q->scale_zero));
    json_object_set_new(o, "scale_nan", cli_json_count(q->scale_nan));
    json_object_set_new(o, "scale_max", cli_json_count(q->scale_max));
    json_object_set_new(o, "blocks_nonzero", cli_json_count(q->blocks_nonzero));
    json_object_set_new(o, "blocks_top", cli_json_count(q->blocks_top));
    json_object_set_new(o, "diff_within", json_real(q->diff_within));
    json_object_set_new(o, "diff_across", json_real(q->diff_across));
    json_object_set_new(o, "diff_swapped", json_real(q->diff_swapped));
    json_object_set_new(o, "nibbles", json_string(verdict(q->nibbles)));
    json_object_set_new(o, "rms", json_real(q->rms));
    json_object_set_new(o, "rms_inverted", json_real(q->rms_inverted));
    json_object_set_new(o, "scales_order", json_string(verdict(q->scales_order)));
    return o;
}

/* The problems Q shows, one line each on standard output; their number. */
static int problems(const char *name, const fpk_quant_check *q)
{
    int n = 0;
    if (q->nibbles == FPK_VERDICT_WRONG) {
        printf("  %s: nibbles swapped? neighbours across bytes differ %.3g times as much as "
               "within a byte; the other order gives %.3g\n",
               name, q->diff_across / q->diff_within, q->diff_swapped / q->diff_within);
        n++;
    }
    if (q->scales_order == FPK_VERDICT_WRONG) {
        printf("  %s: scales inverted? the values' RMS is %.3g; with the scale inverted "
               "%.3g, as weights are\n",
               name, q->rms, q->rms_inverted);
        n++;
    }
    if (q->scale_nan || q->scale_zero) {
        printf("  %s: %" PRIu64 " of %" PRIu64 " blocks have a NaN scale, %" PRIu64
               " a zero one\n",
               name, q->scale_nan, q->blocks, q->scale_zero);
        n++;
    }
    if (q->padding_nonzero) {
        printf("  %s: %" PRIu64 " padding scales are not zero\n", name, q->padding_nonzero);
        n++;
    }
    return n;
}

typedef struct checker {
    json_t *list;
    uint64_t checked, flagged, skipped;
} checker;

static int visit(const char *file, void *arg)
{
    checker *k = arg;
    fpk_dump *d;
    fpk_error err;
    if (fpk_dump_open(file, NULL, &d, &err) != FPK_OK)
        cli_die_error(&err);
    bool head = false;
    for (size_t i = 0; i < fpk_dump_ntensors(d); i++) {
        const fpk_tensor *t = fpk_dump_tensor(d, i);
        fpk_quant_check q;
        if (t->layout != FPK_LAYOUT_DECODED || fpk_dump_check(d, i, &q, &err) != FPK_OK)
            continue;
        if (!head) {
            printf("%s:\n  %-32s %-24s %8s %6s %-9s %-9s %10s\n", file, "tensor", "convention",
                   "blocks", "top %", "nibbles", "scales", "rms");
            head = true;
        }
        char *name = cli_printable(t->name);
        /* (a name longer than its column on a line of its own) */
        if (strlen(name) > 32)
            printf("  %s\n  %-32s", name, "");
        else
            printf("  %-32s", name);
        printf(" %-24s %8" PRIu64 " %6.1f %-9s %-9s %10.3g\n", q.convention,
               q.blocks, q.blocks_nonzero ? 100.0 * (double)q.blocks_top / (double)q.blocks_nonzero : 0,
               verdict(q.nibbles), verdict(q.scales_order), q.rms);
        int p = problems(name, &q);
        k->checked++;
        k->flagged += p > 0;
        free(name);
        if (k->list)
            json_array_append_new(k->list, check_json(file, t, &q));
    }
    for (size_t i = 0; i < fpk_dump_nskipped(d); i++) {
        const fpk_skipped *s = fpk_dump_skipped(d, i);
        char shape[128];
        cli_shape_text(shape, sizeof shape, s->ndim, s->shape);
        printf("%s: %s %s %s: not read (%s)\n", file, s->name, s->dtype, shape, s->why);
        k->skipped++;
    }
    fpk_dump_close(d);
    return 0;
}

static const cli_tool tool = {
    .name = "fpcheck",
    .synopsis = synopsis,
    .intro = "Checks that the quantised tensors of each PATH (a file, or the checkpoints "
             "under a directory) follow the convention fpkit decodes them by, and lists the "
             "tensors it does not read.",
    .outro = "Exit status 1 when a tensor is flagged.",
    .opts = options,
};

int main(int argc, char **argv)
{
    cli_init(argv[0]);
    cli_common c;
    cli_common_init(&c);
    cli_parse(&tool, &c, argc, argv, NULL);
    if (c.noperands == 0) {
        cli_common_free(&c);
        return cli_usage_error(&tool);
    }
    checker k = {.list = c.json ? json_array() : NULL};
    cli_files files = {0};
    for (int i = 0; i < c.noperands; i++)
        cli_walk_files(c.operands[i], &files);
    for (size_t i = 0; i < files.n; i++)
        outfile_protect(files.v[i]);
    const char *outs[] = {c.json};
    outfile_check(outs, 1);
    for (size_t i = 0; i < files.n; i++)
        visit(files.v[i], &k);
    printf("fpcheck: %" PRIu64 " quantised tensors checked, %" PRIu64 " flagged; %" PRIu64
           " tensors not read\n",
           k.checked, k.flagged, k.skipped);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(CLI_EXIT_INTERNAL, "writing the output failed");
    if (k.list) {
        json_t *root = json_object();
        json_object_set_new(root, "tool", json_string("fpcheck"));
        json_object_set_new(root, "tensors", k.list);
        outfile_json(c.json, root);
    }
    cli_files_free(&files);
    cli_common_free(&c);
    return k.flagged ? CLI_EXIT_FINDINGS : 0;
}
