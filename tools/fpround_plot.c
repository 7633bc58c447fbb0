/* fpround's plot: the data into a temporary directory, then gnuplot runs
 * plots/fpround.gp on it (gnuplot found as fpgrad finds it). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "fpround.h"
#include "grad.h"
#include "outfile.h"

extern char **environ;

#ifndef FPK_SRC_PLOTDIR
#define FPK_SRC_PLOTDIR "plots"
#endif
#ifndef FPK_PLOTDIR
#define FPK_PLOTDIR FPK_SRC_PLOTDIR
#endif

char *fr_plot_script(void)
{
    /* FPKIT_PLOTDIR, else the installed scripts, else (run from the build
     * tree before make install) the source tree's. */
    const char *plotdir = getenv("FPKIT_PLOTDIR");
    char *script = cli_strf("%s/fpround.gp", plotdir && *plotdir ? plotdir : FPK_PLOTDIR);
    if (!(plotdir && *plotdir) && access(script, R_OK) != 0) {
        free(script);
        script = cli_strf("%s/fpround.gp", FPK_SRC_PLOTDIR);
    }
    if (access(script, R_OK) != 0)
        cli_die(CLI_EXIT_FAILURE, "%s: cannot read the plot script: %s (set FPKIT_PLOTDIR)", script,
                strerror(errno));
    return script;
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

/* The data: a header line of column titles (quoted), then rows. */
static bool write_data(const fr_run *run, FILE *fp)
{
    if (run->kind == FR_ERROR) {
        fprintf(fp, "\"ulp\"");
        for (int j = 0; j < run->nformats; j++)
            for (int m = 0; m < run->nmodes; m++)
                fprintf(fp, " \"%s %s\"", run->formats[j]->name, fpk_round_name(run->modes[m]));
        fprintf(fp, "\n");
        for (int b = 0; b < FR_HIST_BINS; b++) {
            fprintf(fp, "%.6f", (double)(b - FR_HIST_HALF) / FR_HIST_HALF);
            for (int j = 0; j < run->nformats; j++)
                for (int m = 0; m < run->nmodes; m++) {
                    const fr_err *e = &run->total.err[j][m];
                    fprintf(fp, " %.9g",
                            e->measured ? (double)e->hist[b] / (double)e->measured : 0.0);
                }
            fprintf(fp, "\n");
        }
    } else {
        fprintf(fp, "\"step\" \"exact\"");
        for (int s = 0; s < run->nseries; s++)
            fprintf(fp, " \"%s\"", run->series[s].title);
        fprintf(fp, "\n");
        for (size_t p = 0; p < run->npoints; p++) {
            fprintf(fp, "%llu %.17g", (unsigned long long)run->steps[p], run->exact_running[p]);
            for (int s = 0; s < run->nseries; s++)
                fprintf(fp, " %.17g", run->series[s].y[p]);
            fprintf(fp, "\n");
        }
    }
    return !ferror(fp);
}

/* The first line of the file ERR with text in it, into LINE. */
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

static char *title_of(const fr_run *run)
{
    if (run->kind == FR_ERROR)
        return run->nrows == 1 ? cli_strf("rounding error: %s", run->rows[0].name)
                               : cli_strf("rounding error: %zu tensors", run->nrows);
    const fr_row *r = &run->rows[0];
    if (run->kind == FR_DOT)
        return cli_strf("running dot product, sequential: %s . %s (%s)", r->name, r->name_b, r->file);
    return cli_strf("running sum, sequential: %s (%s)", r->name, r->file);
}

void fr_plot(const fr_run *run, const char *path, int width, int height)
{
    const char *gnuplot = grad_gnuplot();
    if (!gnuplot)
        cli_die(CLI_EXIT_FAILURE,
                "%s: gnuplot is needed for plots and was not found: install the Debian package "
                "gnuplot-nox, or set FPKIT_GNUPLOT",
                path);
    char *script = fr_plot_script();
    const char *tmpenv = getenv("TMPDIR");
    char *dir = cli_strf("%s/fpround.XXXXXX", tmpenv && *tmpenv ? tmpenv : "/tmp");
    if (!mkdtemp(dir))
        cli_die(CLI_EXIT_FAILURE, "%s: cannot create a temporary directory: %s", dir,
                strerror(errno));
    char *data = cli_strf("%s/plot.dat", dir), *err = cli_strf("%s/gnuplot.err", dir);
    FILE *fp = fopen(data, "w");
    bool wrote = fp && write_data(run, fp);
    if (fp)
        wrote &= fclose(fp) == 0;
    char *why = wrote ? NULL : cli_strf("cannot write the plot's data in %s", dir);

    size_t plen = strlen(path);
    bool svg = strcasecmp(path + plen - 4, ".svg") == 0;
    char *tmp = outfile_tmpname(path), *title = title_of(run);
    char *q_data = gp_quote(data), *q_out = gp_quote(tmp), *q_title = gp_quote(title);
    char *expr = cli_strf("datafile=%s; out=%s; term='%s'; width=%d; height=%d; title=%s; "
                          "kind='%s'; nseries=%d",
                          q_data, q_out, svg ? "svg" : "png", width, height, q_title,
                          run->kind == FR_ERROR ? "hist" : "running",
                          run->kind == FR_ERROR ? run->nformats * run->nmodes : run->nseries);
    free(q_data), free(q_out), free(q_title), free(title);

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
        int status = 0;
        struct stat st;
        char line[512];
        if (rc != 0)
            why = cli_strf("cannot run %s: %s", gnuplot, strerror(rc));
        while (!why && waitpid(pid, &status, 0) < 0)
            if (errno != EINTR)
                why = cli_strf("waiting for %s: %s", gnuplot, strerror(errno));
        if (!why && WIFSIGNALED(status))
            why = cli_strf("%s was killed by signal %d", gnuplot, WTERMSIG(status));
        else if (!why && WEXITSTATUS(status) != 0)
            why = cli_strf("gnuplot failed: %s", first_line(err, line, sizeof line));
        else if (!why && (stat(tmp, &st) != 0 || st.st_size == 0))
            why = cli_strf("gnuplot wrote nothing");
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
