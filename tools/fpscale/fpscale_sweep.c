/* fpscale --sweep: the settings of FP8 delayed scaling to replay (each
 * combination of the values given), their ranking by what they lose, and
 * the text that leads with the answer. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpscale.h"
#include "scaling.h"
#include "summary.h"
#include "table.h"
#include "text.h"

#define SWEEP_MAX_SETTINGS 256

static const char *const param_names[SWEEP_PARAMS] = {"history", "amax-rule", "margin",
                                                      "fp8-scale"};
#define PARAMS_TEXT "history, amax-rule, margin or fp8-scale"

const char *sweep_param_name(int p)
{
    return param_names[p];
}

bool sweep_amax_lookup(const char *s, bool *most_recent)
{
    if (strcmp(s, "max") == 0)
        *most_recent = false;
    else if (strcmp(s, "most-recent") == 0)
        *most_recent = true;
    else
        return false;
    return true;
}

const char *sweep_amax_name(bool most_recent)
{
    return most_recent ? "most-recent" : "max";
}

/* The value S of parameter P of OPT ("--sweep margin"), or an exit with
 * status 2. */
static long param_value(int p, const char *opt, const char *s)
{
    bool b;
    scaling_rule r;
    switch (p) {
    case SWEEP_HISTORY: return (long)cli_parse_int(opt, s, 1, 1000000);
    case SWEEP_MARGIN: return (long)cli_parse_int(opt, s, 0, 64);
    case SWEEP_AMAX:
        if (!sweep_amax_lookup(s, &b))
            cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is neither max nor most-recent", opt, s);
        return b;
    default:
        if (!scaling_rule_lookup(s, &r))
            cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is neither exact nor pow2", opt, s);
        return (long)r;
    }
}

void sweep_parse(scale_sweep *sw, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq)
        cli_die(CLI_EXIT_USAGE, "option --sweep: \"%s\" is not PARAM=V1,V2,... (PARAM one of "
                PARAMS_TEXT ")", arg);
    int p = 0;
    while (p < SWEEP_PARAMS && !(strlen(param_names[p]) == (size_t)(eq - arg) &&
                                 strncmp(arg, param_names[p], (size_t)(eq - arg)) == 0))
        p++;
    if (p == SWEEP_PARAMS)
        cli_die(CLI_EXIT_USAGE, "option --sweep: unknown parameter \"%.*s\" (" PARAMS_TEXT ")",
                (int)(eq - arg), arg);
    if (sw->nvalues[p])
        cli_die(CLI_EXIT_USAGE, "option --sweep: %s is swept twice", param_names[p]);
    const char *list = eq + 1;
    if (!*list || *list == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
        cli_die(CLI_EXIT_USAGE, "option --sweep: an empty value in \"%s\"; expected %s=V1,V2,...",
                arg, param_names[p]);
    char *opt = cli_strf("--sweep %s", param_names[p]);
    int n;
    char **v = cli_split_names(opt, list, &n);
    sw->values[p] = cli_xcalloc((size_t)n, sizeof *sw->values[p]);
    for (int k = 0; k < n; k++) {
        long x = param_value(p, opt, v[k]);
        for (size_t q = 0; q < sw->nvalues[p]; q++)
            if (sw->values[p][q] == x)
                cli_die(CLI_EXIT_USAGE, "option --sweep: %s \"%s\" twice", param_names[p], v[k]);
        sw->values[p][sw->nvalues[p]++] = x;
    }
    size_t total = 1;
    for (int q = 0; q < SWEEP_PARAMS; q++)
        total *= sw->nvalues[q] ? sw->nvalues[q] : 1;
    if (total > SWEEP_MAX_SETTINGS)
        cli_die(CLI_EXIT_USAGE, "option --sweep: %zu settings, more than %d", total,
                SWEEP_MAX_SETTINGS);
    sw->order[sw->nparams++] = p;
    free(v);
    free(opt);
}

fp8_setting *sweep_settings(const scale_sweep *sw, const fp8_setting *base, size_t *n)
{
    *n = 1;
    for (int q = 0; q < sw->nparams; q++)
        *n *= sw->nvalues[sw->order[q]];
    fp8_setting *v = cli_xcalloc(*n, sizeof *v);
    for (size_t k = 0; k < *n; k++) {
        v[k] = *base;
        size_t rest = k; /* its digits, the last parameter given the fastest */
        for (int q = sw->nparams - 1; q >= 0; q--) {
            int p = sw->order[q];
            long x = sw->values[p][rest % sw->nvalues[p]];
            rest /= sw->nvalues[p];
            if (p == SWEEP_HISTORY)
                v[k].history = x;
            else if (p == SWEEP_AMAX)
                v[k].most_recent = x != 0;
            else if (p == SWEEP_MARGIN)
                v[k].margin = (int)x;
            else
                v[k].rule = (int)x;
        }
    }
    return v;
}

void sweep_free(scale_sweep *sw)
{
    for (int p = 0; p < SWEEP_PARAMS; p++)
        free(sw->values[p]);
}

void sweep_setting_text(char *buf, size_t len, const fp8_setting *set)
{
    snprintf(buf, len, "history %ld, %s, margin %d, %s", set->history,
             sweep_amax_name(set->most_recent), set->margin,
             scaling_rule_name((scaling_rule)set->rule));
}

/* What a setting lost over the run, and current scaling beside it: the
 * counts, the SQNR of their sums, the least SQNR of a tensor at a step
 * (NAN: no signal). */
typedef struct loss {
    scale_counts all, cur;
    double db, worst_db, cur_db, cur_worst_db;
} loss;

static loss loss_of(const scale_run *run, size_t k)
{
    scale_run v = scale_view(run, k);
    loss l = {.db = NAN, .worst_db = NAN, .cur_db = NAN, .cur_worst_db = NAN};
    scale_totals(&v, &l.all, &l.cur);
    scale_db(&l.all, &l.db);
    scale_db(&l.cur, &l.cur_db);
    for (size_t i = 0; i < v.nfiles; i++)
        for (size_t j = 0; j < v.steps[i].n; j++) {
            double db;
            if (scale_db(&v.steps[i].t[j].c, &db) && !(db >= l.worst_db))
                l.worst_db = db;
            if (scale_db(&v.steps[i].t[j].cur, &db) && !(db >= l.cur_worst_db))
                l.cur_worst_db = db;
        }
    return l;
}

static uint64_t lost(const loss *l)
{
    return l->all.overflow + l->all.underflow;
}

/* A setting and what it lost, to be ranked. */
typedef struct ranked {
    loss l;
    size_t k;
} ranked;

/* Fewer elements lost first, then the higher SQNR (none last), then the
 * order given. */
static int by_loss(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (lost(&a->l) != lost(&b->l))
        return lost(&a->l) < lost(&b->l) ? -1 : 1;
    bool ha = !isnan(a->l.db), hb = !isnan(b->l.db);
    if (ha != hb)
        return ha ? -1 : 1;
    if (ha && a->l.db != b->l.db)
        return a->l.db > b->l.db ? -1 : 1;
    return (a->k > b->k) - (a->k < b->k);
}

void sweep_rank(scale_run *run)
{
    size_t n = run->nsettings;
    ranked *v = cli_xcalloc(n, sizeof *v);
    for (size_t k = 0; k < n; k++)
        v[k] = (ranked){loss_of(run, k), k};
    qsort(v, n, sizeof *v, by_loss);
    run->rank = cli_xcalloc(n, sizeof *run->rank);
    for (size_t r = 0; r < n; r++)
        run->rank[r] = v[r].k;
    free(v);
    run->set = run->settings[run->rank[0]];
    run->steps = run->fp8_steps[run->rank[0]];
}

/* An SQNR for the text: "21.30", "inf", "-" without signal. */
static const char *db_text(char *buf, size_t len, double db)
{
    if (isnan(db))
        snprintf(buf, len, "-");
    else if (isinf(db))
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%.2f", db);
    return buf;
}

/* "history 1,16,1024 x margin 0,1,2", the parameters swept. */
static void swept_text(char *buf, size_t len, const scale_sweep *sw)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int q = 0; q < sw->nparams && at < len; q++) {
        int p = sw->order[q];
        at += (size_t)snprintf(buf + at, len - at, "%s%s ", q ? " x " : "", param_names[p]);
        for (size_t k = 0; k < sw->nvalues[p] && at < len; k++) {
            long x = sw->values[p][k];
            const char *sep = k ? "," : "";
            if (p == SWEEP_AMAX)
                at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, sweep_amax_name(x));
            else if (p == SWEEP_FP8_SCALE)
                at += (size_t)snprintf(buf + at, len - at, "%s%s", sep,
                                       scaling_rule_name((scaling_rule)x));
            else
                at += (size_t)snprintf(buf + at, len - at, "%s%ld", sep, x);
        }
    }
}

/* A row of the ranking: setting SET at RANK, or current scaling by RULE
 * (SET NULL); C its counts. */
static void rank_row(table *t, size_t rank, const fp8_setting *set, int rule,
                     const scale_counts *c, double db, double worst)
{
    char p[8], b[16];
    if (set) {
        table_add(t, "%zu", rank);
        table_add(t, "%ld", set->history);
        table_add(t, "%s", sweep_amax_name(set->most_recent));
        table_add(t, "%d", set->margin);
        rule = set->rule;
    } else {
        table_add(t, "-");
        table_add(t, "current");
        table_add(t, "-");
        table_add(t, "-");
    }
    table_add(t, "%s", scaling_rule_name((scaling_rule)rule));
    table_add(t, "%s", cli_percent(p, c->overflow, c->nonzero));
    table_add(t, "%s", cli_percent(p, c->underflow, c->nonzero));
    table_add(t, "%" PRIu64, c->overflow + c->underflow);
    table_add(t, "%s", db_text(b, sizeof b, db));
    table_add(t, "%s", db_text(b, sizeof b, worst));
}

void sweep_text(const scale_run *run, FILE *out)
{
    size_t n = run->nsettings;
    loss *l = cli_xcalloc(n, sizeof *l);
    for (size_t k = 0; k < n; k++)
        l[k] = loss_of(run, k);
    char sw[512], set[128], a[64], b[16], c[16], p[8], q[8];
    swept_text(sw, sizeof sw, run->sweep);
    fpk_format_exact(run->format, run->format->max_finite, a, sizeof a);
    summary_para(out, 0, 2, "FP8 delayed scaling in %s (max %s), %zu settings: %s",
                 run->format->name, a, n, sw);

    const loss *best = &l[run->rank[0]];
    uint64_t cur_lost = best->cur.overflow + best->cur.underflow;
    sweep_setting_text(set, sizeof set, &run->settings[run->rank[0]]);
    summary_line t = {0};
    summary_add(&t,
                "Least loss: %s, where %" PRIu64 " of the %" PRIu64
                " nonzero elements saturate and %" PRIu64
                " round to zero (%s%% lost), SQNR %s dB; current scaling loses %" PRIu64
                " (%s%%), SQNR %s dB.",
                set, best->all.overflow, best->all.nonzero, best->all.underflow,
                cli_percent(p, lost(best), best->all.nonzero), db_text(b, sizeof b, best->db),
                cur_lost, cli_percent(q, cur_lost, best->cur.nonzero),
                db_text(c, sizeof c, best->cur_db));
    fputc('\n', out);
    summary_end(&t, out);

    fprintf(out, "\nSettings, least loss first (by the elements saturated or rounded to zero, "
                 "then SQNR):\n");
    table *tb = table_new(10, 2);
    const char *h[] = {"rank", "history", "amax rule", "margin", "scale",
                       "satur %", "under %", "lost", "SQNR dB", "worst dB"};
    for (int k = 0; k < 10; k++)
        table_column(tb, k, h[k], k == 2 || k == 4, false);
    for (size_t r = 0; r < n; r++) {
        const loss *x = &l[run->rank[r]];
        rank_row(tb, r + 1, &run->settings[run->rank[r]], 0, &x->all, x->db, x->worst_db);
    }
    for (int rule = 0; rule < 2; rule++) /* current scaling, by each rule swept */
        for (size_t k = 0; k < n; k++)
            if (run->settings[k].rule == rule) {
                rank_row(tb, 0, NULL, rule, &l[k].cur, l[k].cur_db, l[k].cur_worst_db);
                break;
            }
    table_print(tb, out, TABLE_WIDTH);
    table_free(tb);
    free(l);
}
