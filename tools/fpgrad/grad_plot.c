/* fpgrad's plots: the histogram's data, then gnuplot runs plots/hist.gp on
 * it (gnuplot.h); the report's plots, the trend over the steps by
 * plots/trend.gp among them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "gnuplot.h"
#include "grad.h"
#include "outdir.h"

/* A format whose thresholds lie within this many binades of each other
 * widens the plot to show them; wider ones (bf16, fp32) would squash it. */
#define WIDEN_SPAN 64
#define NO_THRESHOLD (-9999.0)

/* The log2 positions of F's ranges and of its thresholds for positive x
 * under MODE; for a block-scaled format, those of the block that holds
 * AMAX, the element format's shifted by its scale. */
typedef struct fmt_marks {
    double sub, norm, max, under, over;
} fmt_marks;

static fmt_marks marks(const fpk_format *f, fpk_round mode, double amax)
{
    fmt_marks m;
    m.sub = f->emin - f->man_bits;
    m.norm = f->emin;
    /* max finite = mx * 2^emax with mx in [1, 2); one ulp there is 2^-man_bits. */
    double mx = ldexp(fpk_to_double(f, f->max_finite), -f->emax), u = ldexp(1.0, -f->man_bits);
    m.max = f->emax + log2(mx);
    switch (mode) {
    case FPK_RNE:
    case FPK_RNA: /* half the smallest subnormal rounds to 0 (RNE) or up (RNA) */
        m.under = m.sub - 1;
        m.over = f->emax + log2(mx + u / 2);
        break;
    case FPK_RTZ:
    case FPK_RDN:
        m.under = m.sub;
        m.over = f->emax + log2(mx + u);
        break;
    case FPK_SR: /* below the smallest subnormal, zero by chance */
        m.under = m.sub;
        m.over = m.max;
        break;
    default: /* RUP, ROD: a positive x never becomes 0 */
        m.under = NO_THRESHOLD;
        m.over = m.max;
        break;
    }
    if (grad_is_mx(f)) {
        int k = grad_mx_scale_log2(f, amax);
        m.sub += k, m.norm += k, m.max += k, m.over += k;
        m.under += m.under == NO_THRESHOLD ? 0 : k;
    }
    return m;
}

/* The binades a plot of R shows: its data, and the thresholds of every
 * format narrow enough (WIDEN_SPAN). */
static void xrange(const grad_run *run, const grad_row *r, int *xmin, int *xmax)
{
    int lo = 0, hi = 0;
    bool any = grad_log2_range(r, &lo, &hi);
    for (int j = 0; j < run->nformats; j++) {
        fmt_marks m = marks(run->formats[j], run->round, r->amax);
        double a = m.under == NO_THRESHOLD ? m.sub : m.under;
        if (m.over - a > WIDEN_SPAN)
            continue;
        int flo = (int)floor(a) - 1, fhi = (int)ceil(m.over);
        lo = any && lo < flo ? lo : flo;
        hi = any && hi > fhi ? hi : fhi;
        any = true;
    }
    if (!any)
        lo = -25, hi = 16;
    *xmin = lo - 1;
    *xmax = hi + 1;
}

/* Appends " VALUE" to the list *L. */
static void add_word(char **l, const char *fmt, double v)
{
    char *n = cli_strf(fmt, v);
    char *joined = cli_strf("%s%s%s", *l ? *l : "", *l ? " " : "", n);
    free(*l);
    free(n);
    *l = joined;
}

void grad_plot(const grad_run *run, const grad_row *r, const char *title, const char *path,
               const grad_plot_opts *o)
{
    gp_plot p;
    gp_begin(&p, path, "hist.gp");
    int xmin, xmax;
    xrange(run, o->xrange_of ? o->xrange_of : r, &xmin, &xmax);
    int gap = (xmax - xmin) / 20; /* between the zero bar and the first binade */
    int zerox = xmin - (gap > 3 ? gap : 3);
    if (r->zeros)
        fprintf(p.data, "%d %llu 0\n", zerox, (unsigned long long)r->zeros);
    for (size_t i = 0; i < r->hist_n; i++)
        if (r->hist[i])
            fprintf(p.data, "%d %llu 1\n", r->hist_min + (int)i, (unsigned long long)r->hist[i]);
    /* An empty data file is an error to gnuplot: a zero-height bar. */
    if (!r->zeros && !r->hist_n)
        fprintf(p.data, "%d 0 0\n", zerox);

    char *names = NULL, *sub = NULL, *norm = NULL, *max = NULL, *under = NULL, *over = NULL;
    for (int j = 0; j < run->nformats; j++) {
        fmt_marks m = marks(run->formats[j], run->round, r->amax);
        char *n = cli_strf("%s", run->formats[j]->name);
        char *joined = cli_strf("%s%s%s", names ? names : "", names ? " " : "", n);
        free(names);
        free(n);
        names = joined;
        add_word(&sub, "%.0f", m.sub);
        add_word(&norm, "%.0f", m.norm);
        add_word(&max, "%.6f", m.max);
        add_word(&under, "%.6f", m.under);
        add_word(&over, "%.6f", m.over);
    }
    char *q_title = gp_quote(title);
    char *vars = cli_strf("width=%d; height=%d; xmin=%d; xmax=%d; zerox=%d; logy=%d; small=%d; "
                          "title=%s; fmtnames='%s'; fmtsub='%s'; fmtnorm='%s'; fmtmax='%s'; "
                          "fmtunder='%s'; fmtover='%s'",
                          o->width, o->height, xmin, xmax, zerox, o->logy, o->small, q_title,
                          names ? names : "", sub ? sub : "", norm ? norm : "", max ? max : "",
                          under ? under : "", over ? over : "");
    free(q_title);
    free(names), free(sub), free(norm), free(max), free(under), free(over);
    gp_end(&p, vars);
    free(vars);
}

/* The trend over RUN's steps into PATH: per format, the share of the
 * nonzero values it loses (rounded to zero or overflowed), by step. */
static void plot_trend(const grad_run *run, const char *path, const grad_plot_opts *o)
{
    gp_plot p;
    gp_begin(&p, path, "trend.gp");
    for (size_t k = 0; k < run->nsteps; k++) {
        const grad_row *s = &run->steps[k];
        fprintf(p.data, "%" PRId64, s->step);
        uint64_t nz = grad_nonzero(s);
        for (int j = 0; j < run->nformats; j++) {
            const fpk_format_counts *c = grad_counts(run, s, j);
            fprintf(p.data, " %.17g", nz ? 100.0 * (double)(c->underflow + c->overflow) / (double)nz
                                         : 0.0);
        }
        fputc('\n', p.data);
    }
    char *names = NULL;
    for (int j = 0; j < run->nformats; j++) {
        char *joined = cli_strf("%s%s%s", names ? names : "", names ? " " : "",
                                run->formats[j]->name);
        free(names);
        names = joined;
    }
    char *vars = cli_strf("width=%d; height=%d; fmtnames='%s'", o->width, o->height / 2 + 120,
                          names ? names : "");
    free(names);
    gp_end(&p, vars);
    free(vars);
}

void grad_report_plots(const grad_run *run, const struct outdir *d, const grad_plot_opts *plot,
                       const size_t *rows, size_t n)
{
    char *title = cli_strf("all %zu tensors, %" PRIu64 " elements", run->nrows, run->total.count);
    grad_plot_opts o = *plot;
    o.xrange_of = NULL;
    o.small = false;
    for (int logy = 0; logy < 2; logy++) {
        o.logy = logy;
        char *path = outdir_file(d, grad_report_files[logy ? REPORT_HIST_LOG : REPORT_HIST]);
        grad_plot(run, &run->total, title, path, &o);
        free(path);
    }
    free(title);
    if (run->nsteps) {
        char *path = outdir_file(d, grad_report_files[REPORT_TREND]);
        plot_trend(run, path, plot);
        free(path);
    }
    char *dir = outdir_file(d, "tensors");
    if (mkdir(dir, 0777) != 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot create the directory: %s", dir, strerror(errno));
    free(dir);
    o = (grad_plot_opts){.width = 330, .height = 230, .logy = true, .small = true};
    for (size_t k = 0; k < n; k++) {
        const grad_row *r = &run->rows[rows[k]];
        char name[48];
        snprintf(name, sizeof name, "tensors/%04zu.png", k);
        char *path = outdir_file(d, name);
        char *t = r->has_step ? cli_strf("%s, step %" PRId64, r->name, r->step)
                              : cli_strf("%s", r->name);
        grad_plot(run, r, t, path, &o);
        free(t);
        free(path);
    }
}
