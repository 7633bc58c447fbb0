/* fpgrad's plots: the data into a temporary directory, then gnuplot runs
 * plots/hist.gp on it. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "grad.h"
#include "outfile.h"

extern char **environ;

#ifndef FPK_GNUPLOT
#define FPK_GNUPLOT ""
#endif
#ifndef FPK_SRC_PLOTDIR
#define FPK_SRC_PLOTDIR "plots"
#endif
#ifndef FPK_PLOTDIR
#define FPK_PLOTDIR FPK_SRC_PLOTDIR
#endif

/* A format whose thresholds lie within this many binades of each other
 * widens the plot to show them; wider ones (bf16, fp32) would squash it. */
#define WIDEN_SPAN 64
#define NO_THRESHOLD (-9999.0)

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Whether PROG names an executable: a path, or a name found in PATH. */
static bool runnable(const char *prog)
{
    if (strchr(prog, '/'))
        return executable(prog);
    const char *path = getenv("PATH");
    if (!path)
        return false;
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *cand = cli_strf("%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
        bool ok = executable(cand);
        free(cand);
        if (ok)
            return true;
        if (!end)
            return false;
        p = end + 1;
    }
}

const char *grad_gnuplot(void)
{
    const char *env = getenv("FPKIT_GNUPLOT");
    if (env && *env)
        return runnable(env) ? env : NULL;
    if (*FPK_GNUPLOT && executable(FPK_GNUPLOT))
        return FPK_GNUPLOT;
    return runnable("gnuplot") ? "gnuplot" : NULL;
}

char *grad_plot_script(void)
{
    /* FPKIT_PLOTDIR, else the installed scripts, else (run from the build
     * tree before make install) the source tree's. */
    const char *plotdir = getenv("FPKIT_PLOTDIR");
    char *script = cli_strf("%s/hist.gp", plotdir && *plotdir ? plotdir : FPK_PLOTDIR);
    if (!(plotdir && *plotdir) && access(script, R_OK) != 0) {
        free(script);
        script = cli_strf("%s/hist.gp", FPK_SRC_PLOTDIR);
    }
    if (access(script, R_OK) != 0)
        cli_die(CLI_EXIT_FAILURE, "%s: cannot read the plot script: %s (set FPKIT_PLOTDIR)", script,
                strerror(errno));
    return script;
}

bool grad_plot_ext_ok(const char *path)
{
    size_t n = strlen(path);
    return n > 4 &&
           (strcasecmp(path + n - 4, ".png") == 0 || strcasecmp(path + n - 4, ".svg") == 0);
}

/* The log2 positions of F's ranges and of its thresholds for positive x
 * under MODE. */
typedef struct fmt_marks {
    double sub, norm, max, under, over;
} fmt_marks;

static fmt_marks marks(const fpk_format *f, fpk_round mode)
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
    return m;
}

/* The binades a plot of R shows: its data, and the thresholds of every
 * format narrow enough (WIDEN_SPAN). */
static void xrange(const grad_run *run, const grad_row *r, int *xmin, int *xmax)
{
    int lo = 0, hi = 0;
    bool any = grad_log2_range(r, &lo, &hi);
    for (int j = 0; j < run->nformats; j++) {
        fmt_marks m = marks(run->formats[j], run->round);
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

/* S as a gnuplot single-quoted string: quotes doubled. */
static char *gp_quote(const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 2 : 1;
    char *q = malloc(n), *o = q;
    if (!q)
        cli_die(CLI_EXIT_FAILURE, "out of memory");
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            *o++ = '\'';
        *o++ = *p;
    }
    *o++ = '\'';
    *o = '\0';
    return q;
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

static void cleanup(char *dir, char *data, char *err)
{
    unlink(data);
    unlink(err);
    rmdir(dir);
    free(data);
    free(err);
    free(dir);
}

/* The first line of the file ERR with text in it, into LINE, for a
 * message. */
static const char *first_line(const char *err, char *line, size_t len)
{
    line[0] = '\0';
    FILE *fp = fopen(err, "r");
    while (fp && fgets(line, (int)len, fp)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[strspn(line, " \t^")])
            break;
        line[0] = '\0';
    }
    if (fp)
        fclose(fp);
    return line[0] ? line : "no message";
}

void grad_plot(const grad_run *run, const grad_row *r, const char *title, const char *path,
               const grad_plot_opts *o)
{
    const char *gnuplot = grad_gnuplot();
    if (!gnuplot)
        cli_die(CLI_EXIT_FAILURE,
                "%s: gnuplot is needed for plots and was not found: install the "
                "Debian package gnuplot-nox, or set FPKIT_GNUPLOT",
                path);
    char *script = grad_plot_script();

    const char *tmpenv = getenv("TMPDIR");
    char *dir = cli_strf("%s/fpgrad.XXXXXX", tmpenv && *tmpenv ? tmpenv : "/tmp");
    if (!mkdtemp(dir))
        cli_die(CLI_EXIT_FAILURE, "%s: cannot create a temporary directory: %s", dir,
                strerror(errno));
    char *data = cli_strf("%s/hist.dat", dir), *err = cli_strf("%s/gnuplot.err", dir);

    int xmin, xmax;
    xrange(run, o->xrange_of ? o->xrange_of : r, &xmin, &xmax);
    int gap = (xmax - xmin) / 20; /* between the zero bar and the first binade */
    int zerox = xmin - (gap > 3 ? gap : 3);
    FILE *fp = fopen(data, "w");
    bool wrote = fp != NULL;
    if (fp) {
        if (r->zeros)
            fprintf(fp, "%d %llu 0\n", zerox, (unsigned long long)r->zeros);
        for (size_t i = 0; i < r->hist_n; i++)
            if (r->hist[i])
                fprintf(fp, "%d %llu 1\n", r->hist_min + (int)i, (unsigned long long)r->hist[i]);
        /* An empty data file is an error to gnuplot: a zero-height bar. */
        if (!r->zeros && !r->hist_n)
            fprintf(fp, "%d 0 0\n", zerox);
        wrote = fclose(fp) == 0;
    }
    if (!wrote) {
        cleanup(dir, data, err);
        cli_die(CLI_EXIT_FAILURE, "cannot write the plot's data in %s", tmpenv ? tmpenv : "/tmp");
    }

    char *names = NULL, *sub = NULL, *norm = NULL, *max = NULL, *under = NULL, *over = NULL;
    for (int j = 0; j < run->nformats; j++) {
        fmt_marks m = marks(run->formats[j], run->round);
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
    size_t plen = strlen(path);
    bool svg = strcasecmp(path + plen - 4, ".svg") == 0;
    char *tmp = outfile_tmpname(path);
    char *q_data = gp_quote(data), *q_out = gp_quote(tmp), *q_title = gp_quote(title);
    char *expr = cli_strf("datafile=%s; out=%s; term='%s'; width=%d; height=%d; xmin=%d; xmax=%d; "
                          "zerox=%d; logy=%d; small=%d; title=%s; fmtnames='%s'; fmtsub='%s'; "
                          "fmtnorm='%s'; fmtmax='%s'; fmtunder='%s'; fmtover='%s'",
                          q_data, q_out, svg ? "svg" : "png", o->width, o->height, xmin, xmax,
                          zerox, o->logy, o->small, q_title, names ? names : "", sub ? sub : "",
                          norm ? norm : "", max ? max : "", under ? under : "", over ? over : "");
    free(q_data), free(q_out), free(q_title);
    free(names), free(sub), free(norm), free(max), free(under), free(over);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)gnuplot, "-e", expr, script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, gnuplot, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(expr);
    char *why = NULL;
    if (rc != 0) {
        why = cli_strf("cannot run %s: %s", gnuplot, strerror(rc));
    } else {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) {
                why = cli_strf("waiting for %s: %s", gnuplot, strerror(errno));
                break;
            }
        struct stat st;
        char line[512];
        if (!why && WIFSIGNALED(status))
            why = cli_strf("%s was killed by signal %d", gnuplot, WTERMSIG(status));
        else if (!why && WEXITSTATUS(status) != 0)
            why = cli_strf("gnuplot failed: %s", first_line(err, line, sizeof line));
        else if (!why && (stat(tmp, &st) != 0 || st.st_size == 0))
            why = cli_strf("gnuplot wrote nothing");
    }
    cleanup(dir, data, err);
    free(script);
    if (why) {
        outfile_discard(tmp);
        cli_die(CLI_EXIT_FAILURE, "%s: %s", path, why);
    }
    outfile_rename(tmp, path);
    free(tmp);
}
