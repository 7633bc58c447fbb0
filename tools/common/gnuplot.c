/* The tools' plots through gnuplot (gnuplot.h). */
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
#include "gnuplot.h"
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

const char *gp_program(void)
{
    const char *env = getenv("FPKIT_GNUPLOT");
    if (env && *env)
        return runnable(env) ? env : NULL;
    if (*FPK_GNUPLOT && executable(FPK_GNUPLOT))
        return FPK_GNUPLOT;
    return runnable("gnuplot") ? "gnuplot" : NULL;
}

char *gp_script(const char *name)
{
    /* The source tree's serves when run from the build tree before make
     * install. */
    const char *plotdir = getenv("FPKIT_PLOTDIR");
    char *script = cli_strf("%s/%s", plotdir && *plotdir ? plotdir : FPK_PLOTDIR, name);
    if (!(plotdir && *plotdir) && access(script, R_OK) != 0) {
        free(script);
        script = cli_strf("%s/%s", FPK_SRC_PLOTDIR, name);
    }
    if (access(script, R_OK) != 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot read the plot script: %s (set FPKIT_PLOTDIR)", script,
                strerror(errno));
    return script;
}

/* The gnuplot to run; dies with status 3, naming PATH, if there is none. */
static const char *need_program(const char *path)
{
    const char *gnuplot = gp_program();
    if (!gnuplot)
        cli_die(CLI_EXIT_INTERNAL,
                "%s: gnuplot is needed for plots and was not found: install the "
                "Debian package gnuplot-nox, or set FPKIT_GNUPLOT",
                path);
    return gnuplot;
}

void gp_check(const char *path, const char *name)
{
    need_program(path);
    free(gp_script(name));
}

bool gp_ext_ok(const char *path)
{
    size_t n = strlen(path);
    return n > 4 &&
           (strcasecmp(path + n - 4, ".png") == 0 || strcasecmp(path + n - 4, ".svg") == 0);
}

char *gp_quote(const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 2 : 1;
    char *q = malloc(n), *o = q;
    if (!q)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
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

/* Removes P's temporary directory and frees what P holds. */
static void cleanup(gp_plot *p)
{
    outfile_forget(p->datafile), outfile_forget(p->err), outfile_forget(p->dir);
    unlink(p->datafile);
    unlink(p->err);
    rmdir(p->dir);
    free(p->datafile), free(p->err), free(p->dir), free(p->script);
}

void gp_begin(gp_plot *p, const char *path, const char *name)
{
    p->path = path;
    p->program = need_program(path);
    p->script = gp_script(name);
    const char *tmpenv = getenv("TMPDIR");
    p->dir = cli_strf("%s/%s.XXXXXX", tmpenv && *tmpenv ? tmpenv : "/tmp", cli_prog());
    if (!mkdtemp(p->dir))
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot create a temporary directory: %s", p->dir,
                strerror(errno));
    p->datafile = cli_strf("%s/plot.dat", p->dir);
    p->err = cli_strf("%s/gnuplot.err", p->dir);
    outfile_track(p->dir, true), outfile_track(p->datafile, false), outfile_track(p->err, false);
    if (!(p->data = fopen(p->datafile, "w"))) {
        char *dir = cli_strf("%s", p->dir);
        cleanup(p);
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot write the plot's data in %s", path, dir);
    }
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

/* Runs P's gnuplot with the -e assignments EXPR, its stderr into P->err;
 * returns why it failed (free it), or NULL once it has written TMP. */
static char *run(const gp_plot *p, const char *expr, const char *tmp)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, p->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)p->program, "-e", (char *)expr, p->script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, p->program, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return cli_strf("cannot run %s: %s", p->program, strerror(rc));
    outfile_child(pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return cli_strf("waiting for %s: %s", p->program, strerror(errno));
    outfile_child(0);
    struct stat st;
    char line[512];
    if (WIFSIGNALED(status))
        return cli_strf("%s was killed by signal %d", p->program, WTERMSIG(status));
    if (WEXITSTATUS(status) != 0)
        return cli_strf("gnuplot failed: %s", first_line(p->err, line, sizeof line));
    if (stat(tmp, &st) != 0 || st.st_size == 0)
        return cli_strf("gnuplot wrote nothing");
    return NULL;
}

void gp_end(gp_plot *p, const char *vars)
{
    int bad = ferror(p->data);
    char *why = fclose(p->data) != 0 || bad
                    ? cli_strf("cannot write the plot's data in %s", p->dir)
                    : NULL;
    char *tmp = outfile_tmpname(p->path);
    if (!why) {
        size_t plen = strlen(p->path);
        bool svg = strcasecmp(p->path + plen - 4, ".svg") == 0;
        char *q_data = gp_quote(p->datafile), *q_out = gp_quote(tmp);
        char *expr = cli_strf("datafile=%s; out=%s; term='%s'; %s", q_data, q_out,
                              svg ? "svg" : "png", vars);
        free(q_data), free(q_out);
        why = run(p, expr, tmp);
        free(expr);
    }
    cleanup(p);
    if (why) {
        outfile_discard(tmp);
        free(tmp); /* no leak for LeakSanitizer to report at the exit */
        cli_die(CLI_EXIT_INTERNAL, "%s: %s", p->path, why);
    }
    outfile_rename(tmp, p->path);
    free(tmp);
}
