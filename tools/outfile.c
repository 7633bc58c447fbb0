/* Output files written whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"

/* The temporary files in existence; the signal handler reads this, so
 * slots are only ever set to a complete string or to NULL. */
#define MAX_LIVE 64
static char *volatile live[MAX_LIVE];
static int cleanup_installed;

static void remove_live(void)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i])
            unlink(live[i]);
}

static void on_signal(int sig)
{
    remove_live();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_cleanup(void)
{
    if (cleanup_installed)
        return;
    cleanup_installed = 1;
    atexit(remove_live);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static void track(char *tmp)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = tmp;
            return;
        }
    unlink(tmp);
    cli_die(CLI_EXIT_FAILURE, "%s: too many output files open at once", tmp);
}

static void untrack(const char *tmp)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == tmp)
            live[i] = NULL;
}

/* Creates "DIR/.BASE.XXXXXX" beside PATH with the permissions a new file
 * would get (mkstemp's are 0600); returns its name and descriptor. */
static char *make_tmp(const char *path, int *fdp)
{
    install_cleanup();
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base)
        cli_die(CLI_EXIT_USAGE, "%s: an output file name is needed, not a directory", path);
    char *tmp = cli_strf("%.*s.%s.XXXXXX", slash ? (int)(slash - path + 1) : 0, path, base);
    int fd = mkstemp(tmp);
    if (fd < 0)
        cli_die(CLI_EXIT_FAILURE, "%s: cannot create a file in its directory: %s", path,
                strerror(errno));
    track(tmp);
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0)
        cli_die(CLI_EXIT_FAILURE, "%s: %s", tmp, strerror(errno));
    *fdp = fd;
    return tmp;
}

void outfile_open(outfile *o, const char *path)
{
    o->path = cli_strf("%s", path);
    o->tmp = NULL;
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
        return;
    }
    int fd;
    o->tmp = make_tmp(path, &fd);
    if (!(o->fp = fdopen(fd, "w")))
        cli_die(CLI_EXIT_FAILURE, "%s: %s", path, strerror(errno));
}

char *outfile_tmpname(const char *path)
{
    int fd;
    char *tmp = make_tmp(path, &fd);
    close(fd);
    return tmp;
}

void outfile_rename(const char *tmp, const char *path)
{
    if (rename(tmp, path) != 0)
        cli_die(CLI_EXIT_FAILURE, "%s: cannot write it: %s", path, strerror(errno));
    untrack(tmp);
}

void outfile_discard(const char *tmp)
{
    unlink(tmp);
    untrack(tmp);
}

void outfile_commit(outfile *o)
{
    if (!o->tmp) {
        if (fflush(o->fp) != 0 || ferror(o->fp))
            cli_die(CLI_EXIT_FAILURE, "writing to standard output failed: %s", strerror(errno));
    } else {
        int bad = ferror(o->fp);
        if (fclose(o->fp) != 0 || bad)
            cli_die(CLI_EXIT_FAILURE, "%s: writing failed: %s", o->path,
                    errno ? strerror(errno) : "I/O error");
        outfile_rename(o->tmp, o->path);
        free(o->tmp);
    }
    free(o->path);
    o->path = o->tmp = NULL;
    o->fp = NULL;
}
