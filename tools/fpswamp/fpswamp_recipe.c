/* fpswamp --recipe: weights stored under a scaled-quantisation recipe
 * (fpkit-recipes(7)), a tensor at a time, as fpswamp(1), RECIPES, says:
 * the weights as stored, W = Q(w); a step adds the update in FP32 and
 * stores the sum again, Q(W + D), the whole tensor quantised by
 * fpk_recipe_quantize and its scales recomputed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fpswamp.h"

void sw_recipe_check(const sw_run *run)
{
    for (int k = 0; k < run->nrecipes; k++)
        if (run->recipes[k].rht)
            cli_die(CLI_EXIT_USAGE,
                    "recipe %s transforms its input (rht): what it stores are not the "
                    "weights", run->recipe_names[k]);
}

/* One recipe storing one tensor of ROWS x COLS: the delayed history its
 * quantisations share, and how many it has done. */
typedef struct store {
    const fpk_recipe *r;
    size_t rows, cols;
    fpk_amax_history h;
    uint64_t done;
} store;

/* Y := X stored under S's recipe and read back.  A stochastic recipe
 * draws each quantisation's bits afresh: the Jth quantisation of a tensor
 * (0 the weights as read) takes the seed fpk_sr_hash(seed, J), but for
 * J = 0 the recipe's own.  A delayed recipe's history holds the amaxes
 * of the tensors stored before (the weights' own before the first). */
static bool put(store *s, const float *x, float *y, fpk_error *err)
{
    fpk_recipe r = *s->r;
    if (r.round == FPK_SR && s->done)
        r.seed = fpk_sr_hash(s->r->seed, s->done);
    fpk_quantized q = {.y = y};
    if (fpk_recipe_quantize(&r, x, s->rows, s->cols, r.history ? &s->h : NULL, &q, NULL, err) !=
        FPK_OK)
        return false;
    if (r.history && s->done)
        fpk_amax_history_push(&s->h, q.amax);
    s->done++;
    return true;
}

/* Whether a step that leaves the stored weights as they were leaves every
 * later one so: the quantisation is a function of its input alone. */
static bool settles(const fpk_recipe *r)
{
    return r->round != FPK_SR && !r->history;
}

static bool counted(double w, double u)
{
    return isfinite(w) && isfinite(u) && u != 0;
}

/* D := the update at learning rate LR in FP32; S := W0 + D in FP32. */
static void step_input(const sw_run *run, const double *u, double lr, const float *w0, size_t n,
                       float *d, float *s)
{
    const fpk_format *f = &fpk_fp32;
    fpk_ctx c = fpk_ctx_default();
    for (size_t i = 0; i < n; i++) {
        /* (an infinite or NaN update as it is) */
        d[i] = isfinite(u[i]) ? (float)fpk_to_double(f, sw_update_in(run, f, u[i], lr)) : (float)u[i];
        fpk_bits a = fpk_from_double(f, w0[i], &c), b = fpk_from_double(f, d[i], &c);
        s[i] = (float)fpk_to_double(f, fpk_add(f, a, b, &c));
    }
}

bool sw_recipe_row(sw_calc *x, const sw_run *run, sw_row *row, const double *w, const double *u,
                   size_t rows, size_t cols, fpk_error *err)
{
    size_t n = rows * cols;
    float *wf = cli_xcalloc(n ? n : 1, 5 * sizeof *wf), *w0 = wf + n, *d = w0 + n, *s = d + n,
          *w1 = s + n;
    for (size_t i = 0; i < n; i++)
        wf[i] = (float)w[i]; /* to nearest even */
    bool ok = true;
    for (int k = 0; ok && k < run->nrecipes; k++) {
        const fpk_recipe *r = &run->recipes[k];
        store st = {.r = r, .rows = rows, .cols = cols};
        if (r->history) { /* no tensor before: as if the history held the weights' amax */
            fpk_recipe_range e = {0};
            fpk_amax_history_init(&st.h, r->history);
            ok = fpk_recipe_scan(r, wf, rows, cols, &e, err) == FPK_OK;
            fpk_amax_history_push(&st.h, e.amax);
        }
        ok = ok && put(&st, wf, w0, err);
        const store first = st; /* each point of the sweep steps from here */
        for (int p = 0; ok && p < run->sweep_n; p++) {
            store sp = first;
            step_input(run, u, run->sweep_lr[p], w0, n, d, s);
            ok = put(&sp, s, w1, err);
            size_t at = (size_t)p * (size_t)sw_targets(run) + (size_t)(run->nformats + k);
            for (size_t i = 0; ok && i < n; i++) {
                if (!counted(w[i], u[i]))
                    continue;
                sw_acc a = {0};
                bool fin = isfinite(w0[i]) && isfinite(d[i]) && isfinite(w1[i]);
                sw_calc_measure(x, run, &a, u[i], run->sweep_lr[p], 1, w0[i], w1[i], w1[i], fin);
                row->sweep_lost[at] += a.lost;
                row->sweep_half[at] += a.half;
            }
        }
        if (!ok || !run->main_report)
            continue;
        /* the steps from w0, each sum stored again: w1 after the first, cur
         * after the last */
        float *cur = cli_xcalloc(n ? n : 1, sizeof *cur);
        memcpy(cur, w0, n * sizeof *cur);
        for (int t = 0; ok && t < run->steps; t++) {
            float *next = t == 0 ? w1 : s;
            step_input(run, u, run->lr, cur, n, d, s);
            ok = put(&st, s, next, err);
            bool same = memcmp(next, cur, n * sizeof *cur) == 0;
            memcpy(cur, next, n * sizeof *cur);
            if (same && settles(r))
                break;
        }
        for (size_t i = 0; ok && i < n; i++)
            if (counted(w[i], u[i]))
                sw_calc_measure(x, run, &row->recipe[k], u[i], run->lr, run->steps, w0[i], w1[i],
                                cur[i],
                                isfinite(w0[i]) && isfinite(d[i]) && isfinite(w1[i]) &&
                                    isfinite(cur[i]));
        free(cur);
    }
    free(wf);
    return ok;
}
