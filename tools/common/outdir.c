/* Output directories written whole (outdir.h). */
#define _GNU_SOURCE /* renameat2, nftw's FTW_PHYS */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outdir.h"
#include "outfile.h"

static int refuse_inputs(const char *file, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_F)
        outfile_refuse_input(file, file);
    return 0;
}

void outdir_check(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode))
        cli_die(CLI_EXIT_USAGE, "%s: not a directory; a report is written into one", path);
    nftw(path, refuse_inputs, 16, FTW_PHYS);
}

void outdir_open(outdir *d, const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    d->path = cli_strf("%.*s", (int)n, path);
    const char *slash = strrchr(d->path, '/');
    const char *base = slash ? slash + 1 : d->path;
    d->tmp = cli_strf("%.*s.%s.XXXXXX", slash ? (int)(slash - d->path + 1) : 0, d->path, base);
    if (!mkdtemp(d->tmp))
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot create a directory beside it: %s", d->path,
                strerror(errno));
    outfile_track_tree(d->tmp);
    mode_t mask = umask(0);
    umask(mask);
    if (chmod(d->tmp, 0777 & ~mask) != 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: %s", d->tmp, strerror(errno));
}

char *outdir_file(const outdir *d, const char *name)
{
    return cli_strf("%s/%s", d->tmp, name);
}

void outdir_commit(outdir *d)
{
    struct stat st;
    if (lstat(d->path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* the new one in, the old one under the temporary name, at once */
        if (renameat2(AT_FDCWD, d->tmp, AT_FDCWD, d->path, RENAME_EXCHANGE) != 0)
            cli_die(CLI_EXIT_INTERNAL, "%s: cannot replace it: %s", d->path, strerror(errno));
        outfile_remove_tree(d->tmp);
    } else if (rename(d->tmp, d->path) != 0) {
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot create it: %s", d->path, strerror(errno));
    }
    outfile_forget(d->tmp);
    free(d->tmp);
    free(d->path);
    d->tmp = d->path = NULL;
}
