/* fpswamp's plots: the data into a temporary directory, then gnuplot runs
 * plots/fpswamp.gp on it (found as fpgrad finds hist.gp). */
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
#include "fpswamp.h"
#include "grad.h"
#include "outfile.h"

extern char **environ;

#ifndef FPK_SRC_PLOTDIR
#define FPK_SRC_PLOTDIR "plots"
#endif
#ifndef FPK_PLOTDIR
#define FPK_PLOTDIR FPK_SRC_PLOTDIR
#endif

/* $FPKIT_PLOTDIR/fpswamp.gp, else the installed one, else the source
 * tree's (free it); dies with status 1 if it cannot be read. */
static char *script_path(void)
{
    const char *plotdir = getenv("FPKIT_PLOTDIR");
    char *script = cli_strf("%s/fpswamp.gp", plotdir && *plotdir ? plotdir : FPK_PLOTDIR);
    if (!(plotdir && *plotdir) && access(script, R_OK) != 0) {
        free(script);
        script = cli_strf("%s/fpswamp.gp", FPK_SRC_PLOTDIR);
    }
    if (access(script, R_OK) != 0)
        cli_die(CLI_EXIT_FAILURE, "%s: cannot read the plot script: %s (set FPKIT_PLOTDIR)", script,
                strerror(errno));
    return script;
}

void sw_plot_check(const char *path)
{
    if (!grad_gnuplot())
        cli_die(CLI_EXIT_FAILURE,
                "%s: gnuplot is needed for plots and was not found: install the "
                "Debian package gnuplot-nox, or set FPKIT_GNUPLOT",
                path);
    free(script_path());
}

/* S as a gnuplot single-quoted string, quotes doubled. */
static char *gp_quote(const char *s)
{
    char *q = cli_strf("'");
    for (const char *p = s; *p; p++) {
        char *n = cli_strf("%s%s", q, *p == '\'' ? "''" : (char[]){*p, '\0'});
        free(q);
        q = n;
    }
    char *n = cli_strf("%s'", q);
    free(q);
    return n;
}

/* S as a double-quoted gnuplot data column (no quote or backslash inside). */
static void data_label(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const char *p = s; *p; p++)
        fputc(*p == '"' || *p == '\\' ? '_' : *p, fp);
    fputc('"', fp);
}

/* The data: per tensor (and the total) its RNE lost percentage in each
 * format, or per learning rate of the sweep the total's. */
static bool write_data(const sw_run *run, FILE *fp)
{
    if (run->sweep_n) {
        for (int p = 0; p < run->sweep_n; p++) {
            fprintf(fp, "%.17g", run->sweep_lr[p]);
            for (int j = 0; j < run->nformats; j++)
                fprintf(fp, " %.17g",
                        run->total.nonzero ? 100.0 *
                                                 (double)run->total.sweep_lost[p * run->nformats + j] /
                                                 (double)run->total.nonzero
                                           : 0.0);
            fputc('\n', fp);
        }
        return !ferror(fp);
    }
    for (size_t i = 0; i <= run->nrows; i++) {
        const sw_row *r = i < run->nrows ? &run->rows[i] : &run->total;
        char label[512];
        sw_row_label(run, r, label, sizeof label);
        data_label(fp, label);
        for (int j = 0; j < run->nformats; j++) {
            double f = sw_lost_frac(r, &r->fmt[j].rne);
            fprintf(fp, " %.17g", isnan(f) ? 0.0 : 100 * f);
        }
        fputc('\n', fp);
    }
    return !ferror(fp);
}

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

void sw_plot(const sw_run *run, const char *path, int width, int height)
{
    sw_plot_check(path);
    const char *gnuplot = grad_gnuplot();
    char *script = script_path();
    const char *tmpenv = getenv("TMPDIR");
    char *dir = cli_strf("%s/fpswamp.XXXXXX", tmpenv && *tmpenv ? tmpenv : "/tmp");
    if (!mkdtemp(dir))
        cli_die(CLI_EXIT_FAILURE, "%s: cannot create a temporary directory: %s", dir,
                strerror(errno));
    char *data = cli_strf("%s/swamp.dat", dir), *err = cli_strf("%s/gnuplot.err", dir);
    FILE *fp = fopen(data, "w");
    bool wrote = fp && write_data(run, fp);
    if (fp && fclose(fp) != 0)
        wrote = false;
    char *why = wrote ? NULL : cli_strf("cannot write the plot's data in %s", dir);

    char *names = cli_strf("%s", "");
    for (int j = 0; j < run->nformats; j++) {
        char *n = cli_strf("%s%s%s", names, j ? " " : "", run->formats[j]->name);
        free(names);
        names = n;
    }
    char *title = run->sweep_n ? cli_strf("updates lost against the learning rate, %zu tensor%s",
                                          run->nrows, run->nrows == 1 ? "" : "s")
                               : cli_strf("updates lost (w + dw rounds to w), round to nearest even");
    size_t plen = strlen(path);
    bool svg = strcasecmp(path + plen - 4, ".svg") == 0;
    char *tmp = outfile_tmpname(path);
    char *q_data = gp_quote(data), *q_out = gp_quote(tmp), *q_title = gp_quote(title);
    char *expr = cli_strf("datafile=%s; out=%s; term='%s'; width=%d; height=%d; kind='%s'; "
                          "title=%s; fmtnames='%s'",
                          q_data, q_out, svg ? "svg" : "png", width, height,
                          run->sweep_n ? "sweep" : "bars", q_title, names);
    free(q_data), free(q_out), free(q_title), free(names), free(title);

    if (!why) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char *argv[] = {(char *)gnuplot, "-e", expr, script, NULL};
        pid_t pid;
        int rc = posix_spawnp(&pid, gnuplot, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (rc != 0) {
            why = cli_strf("cannot run %s: %s", gnuplot, strerror(rc));
        } else {
            int status = 0;
            while (!why && waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                    why = cli_strf("waiting for %s: %s", gnuplot, strerror(errno));
            struct stat st;
            char line[512];
            if (!why && WIFSIGNALED(status))
                why = cli_strf("%s was killed by signal %d", gnuplot, WTERMSIG(status));
            else if (!why && WEXITSTATUS(status) != 0)
                why = cli_strf("gnuplot failed: %s", first_line(err, line, sizeof line));
            else if (!why && (stat(tmp, &st) != 0 || st.st_size == 0))
                why = cli_strf("gnuplot wrote nothing");
        }
    }
    free(expr);
    unlink(data);
    unlink(err);
    rmdir(dir);
    free(data), free(err), free(dir), free(script);
    if (why) {
        outfile_discard(tmp);
        cli_die(CLI_EXIT_FAILURE, "%s: %s", path, why);
    }
    outfile_rename(tmp, path);
    free(tmp);
}
