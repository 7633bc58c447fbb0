/* fpcheck: whether the quantised tensors of checkpoints follow the
 * conventions fpkit reads them by (fpk_dump_check): the scales zero, NaN,
 * saturated or padded, the codes' range, the nibbles' order and the
 * scales' sense, the failures that leave a model running on wrong
 * weights; and the tensors not read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "options.h"
#include "outfile.h"
#include "table.h"
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

/* Lines to print after a file's table, each wrapped to TABLE_WIDTH. */
typedef struct notes {
    char **v;
    size_t n, cap;
} notes;

static void note(notes *s, char *line)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        if (!(s->v = realloc(s->v, s->cap * sizeof *s->v)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    s->v[s->n++] = line;
}

/* Prints S's lines (the later pieces of each indented by 4) and frees
 * them. */
static void notes_print(notes *s)
{
    for (size_t i = 0; i < s->n; i++) {
        table_wrap(stdout, s->v[i], 4);
        free(s->v[i]);
    }
    free(s->v);
    *s = (notes){0};
}

/* The problems Q shows, a line each into S; their number.  NAME is
 * shortened in the middle so that it leaves the message room. */
static int problems(notes *s, const char *name, const fpk_quant_check *q)
{
    int n = 0;
    char *shown = table_shorten(name, TABLE_WIDTH / 2);
    if (q->nibbles == FPK_VERDICT_WRONG) {
        note(s, cli_strf("  %s: nibbles swapped? neighbours across bytes differ %.3g times as "
                         "much as within a byte; the other order gives %.3g",
                         shown, q->diff_across / q->diff_within,
                         q->diff_swapped / q->diff_within));
        n++;
    }
    if (q->scales_order == FPK_VERDICT_WRONG) {
        note(s, cli_strf("  %s: scales inverted? the values' RMS is %.3g; with the scale "
                         "inverted %.3g, as weights are",
                         shown, q->rms, q->rms_inverted));
        n++;
    }
    if (q->scale_nan || q->scale_zero) {
        note(s, cli_strf("  %s: %" PRIu64 " of %" PRIu64 " blocks have a NaN scale, %" PRIu64
                         " a zero one",
                         shown, q->scale_nan, q->blocks, q->scale_zero));
        n++;
    }
    if (q->padding_nonzero) {
        note(s, cli_strf("  %s: %" PRIu64 " padding scales are not zero", shown,
                         q->padding_nonzero));
        n++;
    }
    free(shown);
    return n;
}

typedef struct checker {
    json_t *list;
    uint64_t checked, flagged, skipped;
} checker;

/* Under FILE's name, a table of its quantised tensors (the name column
 * shrinks to fit TABLE_WIDTH), then their problems, then the tensors not
 * read. */
static int visit(const char *file, void *arg)
{
    checker *k = arg;
    fpk_dump *d;
    fpk_error err;
    if (fpk_dump_open(file, NULL, &d, &err) != FPK_OK)
        cli_die_error(&err);
    static const char *const heads[] = {"tensor", "convention", "blocks", "top %",
                                        "nibbles", "scales", "rms"};
    table *tb = table_new(7, 2);
    for (int j = 0; j < 7; j++)
        table_column(tb, j, heads[j], j == 0 || j == 1 || j == 4 || j == 5, j == 0);
    notes found = {0};
    uint64_t rows = 0;
    for (size_t i = 0; i < fpk_dump_ntensors(d); i++) {
        const fpk_tensor *t = fpk_dump_tensor(d, i);
        fpk_quant_check q;
        if (t->layout != FPK_LAYOUT_DECODED || fpk_dump_check(d, i, &q, &err) != FPK_OK)
            continue;
        char *name = cli_printable(t->name);
        table_add(tb, "%s", name);
        table_add(tb, "%s", q.convention);
        table_add(tb, "%" PRIu64, q.blocks);
        table_add(tb, "%.1f",
                  q.blocks_nonzero ? 100.0 * (double)q.blocks_top / (double)q.blocks_nonzero : 0);
        table_add(tb, "%s", verdict(q.nibbles));
        table_add(tb, "%s", verdict(q.scales_order));
        table_add(tb, "%.3g", q.rms);
        rows++;
        int p = problems(&found, name, &q);
        k->checked++;
        k->flagged += p > 0;
        free(name);
        if (k->list)
            json_array_append_new(k->list, check_json(file, t, &q));
    }
    if (rows || fpk_dump_nskipped(d))
        printf("%s:\n", file);
    if (rows)
        table_print(tb, stdout, TABLE_WIDTH);
    table_free(tb);
    notes_print(&found);
    for (size_t i = 0; i < fpk_dump_nskipped(d); i++) {
        const fpk_skipped *s = fpk_dump_skipped(d, i);
        char shape[128];
        cli_shape_text(shape, sizeof shape, s->ndim, s->shape);
        char *name = cli_printable(s->name);
        char *line = cli_strf("  %s %s %s: not read (%s)", name, s->dtype, shape, s->why);
        table_wrap(stdout, line, 4);
        free(line);
        free(name);
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
