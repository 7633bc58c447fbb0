/* fpscale --fp8: Transformer Engine's delayed scaling replayed per tensor
 * over the steps, for one setting or each of a sweep's, beside current
 * scaling of the same tensors at the same steps.  The scales are kept
 * here, as Transformer Engine keeps them; every cast is the library's
 * (fpk_recipe_quantize). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpscale.h"
#include "scaling.h"

/* A tensor followed from step to step: its amaxes, and per setting the
 * scale in force. */
typedef struct series {
    char *name;
    double *amax; /* the last CAP amaxes, a ring, the newest at NEXT - 1 */
    size_t n, next, cap;
    fpk_bits *scale; /* [nsettings] fp32 */
} series;

/* A tensor at the step being replayed: read, scanned and cast by a job. */
typedef struct fp8_job {
    const scan_tensor *t;
    scale_entry **entry; /* [nsettings]: each setting's record of it */
} fp8_job;

typedef struct fp8_step {
    const scale_run *run;
    const scale_file *f;
    fpk_recipe recipe; /* the cast: the run's format, one fp32 scale */
    fp8_job *v;
    size_t n;
} fp8_step;

/* The scale of a series at this step under setting SET, from the amaxes
 * of its steps before (Transformer Engine's amax_and_scale_update): the
 * largest of the last history ones, or the most recent; the scale in
 * force stays where there is none (scaling_fp8_f32). */
static void delayed_scale(const scale_run *run, const fp8_setting *set, series *h,
                          fpk_bits *scale, scale_entry *e)
{
    size_t n = h->n < (size_t)set->history ? h->n : (size_t)set->history;
    e->history = n;
    e->has_hist_amax = n > 0;
    e->hist_amax = 0;
    for (size_t i = 0; i < (set->most_recent && n ? 1 : n); i++) {
        double a = h->amax[(h->next + h->cap - 1 - i) % h->cap];
        if (!(a <= e->hist_amax)) /* an infinity too */
            e->hist_amax = a;
    }
    if (n)
        scaling_fp8_f32(run->format, e->hist_amax, set->margin, (scaling_rule)set->rule, scale);
    e->scale = *scale;
}

static series *series_of(series **hs, size_t *n, size_t *cap, const char *name,
                         const scale_run *run)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*hs)[i].name, name) == 0)
            return &(*hs)[i];
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        if (!(*hs = realloc(*hs, *cap * sizeof **hs)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    series *x = &(*hs)[(*n)++];
    size_t len = 1; /* the longest history, but no more amaxes than steps */
    for (size_t k = 0; k < run->nsettings; k++)
        if ((size_t)run->settings[k].history > len)
            len = (size_t)run->settings[k].history;
    *x = (series){.name = cli_strf("%s", name), .cap = len < run->nfiles ? len : run->nfiles};
    x->amax = cli_xcalloc(x->cap, sizeof *x->amax);
    x->scale = cli_xcalloc(run->nsettings, sizeof *x->scale);
    for (size_t k = 0; k < run->nsettings; k++)
        x->scale[k] = scale_f32_int(1); /* Transformer Engine's first scale */
    return x;
}

/* The name under which tensor NAME of F keeps its amax history: a .npy
 * file's one tensor is named after its file, step number included, so
 * there the number is made "*" (g-7.npy and g-10.npy: one tensor, g-*.npy,
 * at two steps). */
static char *series_name(const scale_file *f, const char *name)
{
    const char *start, *end;
    if (!f->npy || !scan_last_number(name, &start, &end))
        return cli_strf("%s", name);
    return cli_strf("%.*s*%s", (int)(start - name), name, end);
}

/* X / F's loss scale into *Q, or the run failed (status 2) where that is
 * not exact. */
static bool divide(scan_worker *w, double x, const scale_file *f, double *q)
{
    char why[SCALE_WHY_LEN];
    return scale_div(x, f->loss_scale, q, f->path, why, sizeof why) ||
           scan_fail(w, CLI_EXIT_USAGE, why);
}

/* The scale S (fp32 bits) divided by F's loss scale into *B, a float32
 * again, or the run failed (status 2): the division by the loss scale is
 * folded into the cast's scale. */
static bool unscaled(scan_worker *w, fpk_bits s, const scale_file *f, fpk_bits *b)
{
    double q;
    fpk_ctx c = fpk_ctx_default();
    if (!divide(w, scale_f32(s), f, &q))
        return false;
    *b = fpk_from_double(&fpk_fp32, q, &c);
    if (!(c.flags & (FPK_INEXACT | FPK_OVERFLOW | FPK_UNDERFLOW)))
        return true;
    char *why = cli_strf("%s: the FP8 scale %.9g divided by the loss scale %.17g is not a "
                         "float32 number",
                         f->path, scale_f32(s), f->loss_scale);
    scan_fail(w, CLI_EXIT_USAGE, why);
    free(why);
    return false;
}

static void counts_of(scale_counts *c, const fpk_recipe_stats *s)
{
    *c = (scale_counts){.count = s->count, .nonzero = s->count - s->zeros - s->nonfinite,
                        .nonfinite = s->nonfinite, .overflow = s->saturated,
                        .underflow = s->flushed, .x2 = s->x2, .e2 = s->e2};
}

/* The cast of the N elements X at scale S (fp32 bits, positive and
 * finite) into C: the library's one-block recipe R, whose scale is
 * float32(MAX / a) for the amax a of its history.  A history of the one
 * amax a = MAX / S, rounded to double, gives back S: MAX / a lies within
 * 2^-52 of S, relatively, well inside half of S's float32 spacing. */
static bool cast_at(scan_worker *w, const fpk_recipe *r, const float *x, size_t n, fpk_bits s,
                    scale_counts *c)
{
    fpk_ctx cx = fpk_ctx_default();
    fpk_bits max = fpk_convert(&fpk_fp64, r->elem, r->elem->max_finite, &cx);
    fpk_bits a = fpk_div(&fpk_fp64, max, fpk_convert(&fpk_fp64, &fpk_fp32, s, &cx), &cx);
    struct {
        fpk_amax_history h;
        fpk_recipe_stats st;
    } *m = scan_scratch(w, sizeof *m);
    fpk_amax_history_init(&m->h, 1);
    fpk_amax_history_push(&m->h, fpk_to_double(&fpk_fp64, a));
    fpk_recipe_stats_init(&m->st, r);
    uint32_t decode = 0;
    fpk_quantized q = {.scales = &decode};
    fpk_error err;
    if (n && fpk_recipe_quantize(r, x, 1, n, &m->h, &q, &m->st, &err) != FPK_OK)
        return scan_fail_error(w, &err);
    /* Its decoding scale is 1/S, rounded to float32: the scale was S. */
    fpk_bits inv = fpk_div(&fpk_fp32, scale_f32_int(1), s, &cx);
    if (n && !m->st.nonfinite && decode != inv)
        return scan_fail(w, CLI_EXIT_INTERNAL, "the library cast at another scale than asked");
    counts_of(c, &m->st);
    return true;
}

/* Whether an earlier cast of the job was at the scale S: *C its counts. */
static bool cast_before(const fp8_job *jb, size_t k, fpk_bits s, const scale_counts **c)
{
    for (size_t i = 0; i < k; i++)
        if (jb->entry[i]->scale == s) {
            *c = &jb->entry[i]->c;
            return true;
        }
    return false;
}

static bool tensor_job(scan_worker *w, size_t j, void *arg)
{
    const fp8_step *sj = arg;
    const scale_run *run = sj->run;
    const fp8_job *jb = &sj->v[j];
    const scan_tensor *t = jb->t;
    size_t n = (size_t)t->t.count;
    float *x = cli_xcalloc_pages(n ? n : 1, sizeof(float));
    bool ok = scan_read_floats(w, t, scan_inner(w), x);
    fpk_recipe_range range = {0};
    fpk_error err;
    if (ok && fpk_recipe_scan(&sj->recipe, x, 1, n, &range, &err) != FPK_OK)
        ok = scan_fail_error(w, &err);
    /* The amax recorded: of the unscaled gradient, inf if any element is
     * inf or NaN. */
    double amax = fpk_to_double(&fpk_fp64, fpk_fp64.inf);
    if (ok && !range.nonfinite)
        ok = divide(w, range.amax, sj->f, &amax);
    /* Current scaling, by each rule the settings use. */
    scale_counts cur[2];
    fpk_bits cur_scale[2];
    for (int rule = 0; ok && rule < 2; rule++) {
        bool used = false;
        for (size_t k = 0; k < run->nsettings; k++)
            used |= run->settings[k].rule == rule;
        cur_scale[rule] = scale_f32_int(1); /* for a tensor of zeros */
        scaling_fp8_f32(run->format, amax, 0, (scaling_rule)rule, &cur_scale[rule]);
        fpk_bits s;
        if (used)
            ok = unscaled(w, cur_scale[rule], sj->f, &s) &&
                 cast_at(w, &sj->recipe, x, n, s, &cur[rule]);
    }
    for (size_t k = 0; ok && k < run->nsettings; k++) {
        scale_entry *e = jb->entry[k];
        int rule = run->settings[k].rule;
        const scale_counts *same;
        fpk_bits s;
        e->amax = amax;
        e->cur_scale = cur_scale[rule];
        e->cur = cur[rule];
        if (cast_before(jb, k, e->scale, &same))
            e->c = *same;
        else if (e->scale == cur_scale[rule])
            e->c = cur[rule];
        else
            ok = unscaled(w, e->scale, sj->f, &s) && cast_at(w, &sj->recipe, x, n, s, &e->c);
    }
    free(x);
    return ok;
}

/* Step I: the scales from the histories, the casts, then the amaxes
 * added to the histories. */
static void replay_step(scale_run *run, const regex_t *match, const scan *s, size_t i,
                        int threads, series **hs, size_t *nh, size_t *caph)
{
    const scale_file *f = &run->files[i];
    fp8_step sj = {.run = run, .f = f,
                   .recipe = {.elem = run->format, .scale = &fpk_fp32, .rule = FPK_SCALE_AMAX,
                              .round = FPK_RNE, .history = 1}};
    const scan_tensor **ts = scale_step_tensors(run, match, s, f, &sj.n);
    sj.v = cli_xcalloc(sj.n, sizeof *sj.v);
    size_t *which = cli_xcalloc(sj.n, sizeof *which); /* each tensor's series */
    for (size_t k = 0; k < run->nsettings; k++) {
        run->fp8_steps[k][i].t = cli_xcalloc(sj.n, sizeof(scale_entry));
        run->fp8_steps[k][i].n = sj.n;
    }
    for (size_t j = 0; j < sj.n; j++) {
        char *name = series_name(f, ts[j]->t.name);
        for (size_t q = 0; q < j; q++)
            if (strcmp((*hs)[which[q]].name, name) == 0)
                cli_die(CLI_EXIT_USAGE, "%s: tensor %s twice", f->path, name);
        series *h = series_of(hs, nh, caph, name, run);
        which[j] = (size_t)(h - *hs);
        free(name);
        sj.v[j] = (fp8_job){.t = ts[j],
                            .entry = cli_xcalloc(run->nsettings, sizeof(scale_entry *))};
        for (size_t k = 0; k < run->nsettings; k++) {
            scale_entry *e = sj.v[j].entry[k] = &run->fp8_steps[k][i].t[j];
            e->name = scale_name(run, h->name);
            delayed_scale(run, &run->settings[k], h, &h->scale[k], e);
        }
    }
    scan_pool pool = {.s = s, .njobs = sj.n, .threads = threads, .job = tensor_job, .arg = &sj};
    scan_run(&pool);
    for (size_t j = 0; j < sj.n; j++) {
        series *h = &(*hs)[which[j]];
        h->amax[h->next] = sj.v[j].entry[0]->amax;
        h->next = (h->next + 1) % h->cap;
        h->n += h->n < h->cap;
        for (size_t k = 0; k < run->nsettings; k++) {
            scale_step *st = &run->fp8_steps[k][i];
            scale_add_counts(&st->sum, &st->t[j].c);
            scale_add_counts(&st->cur, &st->t[j].cur);
        }
        free(sj.v[j].entry);
    }
    free(which);
    free(sj.v);
    free(ts);
}

void scale_replay_fp8(scale_run *run, const regex_t *match, const scan *s, int threads)
{
    series *hs = NULL;
    size_t nh = 0, caph = 0;
    run->fp8_steps = cli_xcalloc(run->nsettings, sizeof *run->fp8_steps);
    for (size_t k = 0; k < run->nsettings; k++)
        run->fp8_steps[k] = cli_xcalloc(run->nfiles, sizeof **run->fp8_steps);
    for (size_t i = 0; i < run->nfiles; i++)
        replay_step(run, match, s, i, threads, &hs, &nh, &caph);
    for (size_t i = 0; i < nh; i++) {
        free(hs[i].name);
        free(hs[i].amax);
        free(hs[i].scale);
    }
    free(hs);
    run->set = run->settings[0];
    run->steps = run->fp8_steps[0];
}

scale_run scale_view(const scale_run *run, size_t k)
{
    scale_run v = *run;
    v.set = run->settings[k];
    v.steps = run->fp8_steps[k];
    return v;
}

void scale_totals(const scale_run *run, scale_counts *all, scale_counts *cur)
{
    *all = *cur = (scale_counts){0};
    for (size_t i = 0; i < run->nfiles; i++) {
        scale_add_counts(all, &run->steps[i].sum);
        scale_add_counts(cur, &run->steps[i].cur);
    }
}

bool scale_db(const scale_counts *c, double *db)
{
    if (!(c->x2 > 0))
        return false;
    *db = c->e2 > 0 ? 10 * log10(c->x2 / c->e2) : INFINITY;
    return true;
}
