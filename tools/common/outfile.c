/* Output files written whole or not at all. */
#define _GNU_SOURCE /* realpath, syscall */
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"

/* The temporary files and directories in existence, and the child writing
 * one.  The signal handler reads them, so slots are only ever set to a
 * complete string or to NULL, and each string outlives its slot. */
#define MAX_LIVE 64
static const char *volatile live_files[MAX_LIVE];
static const char *volatile live_dirs[MAX_LIVE];
static const char *volatile live_trees[MAX_LIVE];
static volatile sig_atomic_t live_child;
static int cleanup_installed;

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define NSIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])

/* Removes the directory tree at DIRFD's NAME, DEPTH levels deep at most,
 * with the system calls alone (open, getdents64, unlinkat, close): safe in
 * a signal handler. */
static void remove_tree_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || depth == 0)
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096];
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long at = 0; at < n;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short len;
                unsigned char type;
                char name[];
            } *e = (void *)(buf + at);
            at += e->len;
            if (strcmp(e->name, ".") != 0 && strcmp(e->name, "..") != 0)
                remove_tree_at(fd, e->name, depth - 1);
        }
    }
    close(fd);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

void outfile_remove_tree(const char *path)
{
    remove_tree_at(AT_FDCWD, path, 8);
}

/* Async-signal-safe: kill, waitpid, unlink, rmdir and the calls of
 * remove_tree_at only. */
void outfile_cleanup(void)
{
    pid_t pid = (pid_t)live_child;
    if (pid > 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        live_child = 0;
    }
    for (int i = 0; i < MAX_LIVE; i++)
        if (live_files[i])
            unlink(live_files[i]);
    for (int i = 0; i < MAX_LIVE; i++)
        if (live_dirs[i])
            rmdir(live_dirs[i]);
    for (int i = 0; i < MAX_LIVE; i++)
        if (live_trees[i])
            outfile_remove_tree(live_trees[i]);
}

/* Cleans up, then dies of SIG as if there were no handler: SIG stays
 * blocked while the handler runs, so the raise takes effect on return. */
static void on_signal(int sig)
{
    outfile_cleanup();
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void install_cleanup(void)
{
    if (cleanup_installed)
        return;
    cleanup_installed = 1;
    atexit(outfile_cleanup);
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction old;
        if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* nohup, or a shell's background job: keep ignoring */
        struct sigaction sa = {.sa_handler = on_signal};
        sigfillset(&sa.sa_mask);
        sigaction(cleanup_signals[i], &sa, NULL);
    }
}

/* Blocks (BLOCK) or restores the cleanup signals around a change that must
 * not be split: creating a file and registering it. */
static void hold_signals(bool block, sigset_t *saved)
{
    if (block) {
        sigset_t set;
        sigemptyset(&set);
        for (size_t i = 0; i < NSIGNALS; i++)
            sigaddset(&set, cleanup_signals[i]);
        pthread_sigmask(SIG_BLOCK, &set, saved);
    } else {
        pthread_sigmask(SIG_SETMASK, saved, NULL);
    }
}

static void add_slot(const char *volatile *slots, const char *path)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!slots[i]) {
            slots[i] = path;
            return;
        }
    cli_die(CLI_EXIT_INTERNAL, "%s: too many temporary files at once", path);
}

void outfile_track(const char *path, bool dir)
{
    install_cleanup();
    add_slot(dir ? live_dirs : live_files, path);
}

void outfile_track_tree(const char *path)
{
    install_cleanup();
    add_slot(live_trees, path);
}

void outfile_forget(const char *path)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        if (live_files[i] == path)
            live_files[i] = NULL;
        if (live_dirs[i] == path)
            live_dirs[i] = NULL;
        if (live_trees[i] == path)
            live_trees[i] = NULL;
    }
}

void outfile_child(pid_t pid)
{
    live_child = pid;
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
    sigset_t saved;
    hold_signals(true, &saved);
    int fd = mkstemp(tmp);
    int errnum = errno;
    if (fd >= 0)
        outfile_track(tmp, false);
    hold_signals(false, &saved);
    if (fd < 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot create a file in its directory: %s", path,
                strerror(errnum));
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: %s", tmp, strerror(errno));
    *fdp = fd;
    return tmp;
}

/* Whether PATH exists and is something other than a regular file or a
 * directory: a device (/dev/null), a FIFO or a socket, which is written in
 * place, since replacing it would destroy it. */
static bool write_in_place(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

#define MAX_LINKS 40 /* links followed from an output's name, as the kernel does */

/* Where the temporary file of PATH goes and what it replaces: the file the
 * symbolic links from PATH lead to, whether or not it exists (the links
 * stay), else PATH.  A link's relative target is read from its directory. */
static char *destination(const char *path)
{
    char *cur = cli_strf("%s", path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        char target[PATH_MAX];
        ssize_t len = hops < MAX_LINKS ? readlink(cur, target, sizeof target - 1) : -1;
        if (len < 0)
            cli_die(CLI_EXIT_INTERNAL, "%s: cannot follow its symbolic links: %s", path,
                    hops < MAX_LINKS ? strerror(errno) : strerror(ELOOP));
        target[len] = '\0';
        const char *slash = strrchr(cur, '/');
        int dir = target[0] != '/' && slash ? (int)(slash - cur + 1) : 0;
        char *next = cli_strf("%.*s%s", dir, cur, target);
        free(cur);
        cur = next;
    }
}

/* The inputs' files, which no output replaces. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
} file_id;
static file_id *inputs;
static size_t ninputs;

void outfile_protect(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return; /* reading it fails, and says why */
    file_id *more = realloc(inputs, (ninputs + 1) * sizeof *inputs);
    if (!more)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    inputs = more;
    inputs[ninputs++] = (file_id){st.st_dev, st.st_ino};
}

/* Dies if DEST, the destination of the output PATH, is an input. */
void outfile_refuse_input(const char *path, const char *dest)
{
    struct stat st;
    if (stat(dest, &st) != 0)
        return;
    for (size_t i = 0; i < ninputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino)
            cli_die(CLI_EXIT_USAGE, "%s: is an input; %s does not write over its inputs", path,
                    cli_prog());
}

/* DEST with its directory's name made absolute and free of links (DEST
 * itself if that directory cannot be resolved: creating the file fails). */
static char *canonical(const char *dest)
{
    const char *slash = strrchr(dest, '/');
    char *dir = slash ? cli_strf("%.*s", slash == dest ? 1 : (int)(slash - dest), dest)
                      : cli_strf(".");
    char *real = realpath(dir, NULL);
    char *c = real ? cli_strf("%s/%s", real, slash ? slash + 1 : dest) : cli_strf("%s", dest);
    free(real);
    free(dir);
    return c;
}

/* Whether the destinations A and B are one file, existing or to be. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea || eb)
        return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *ca = canonical(a), *cb = canonical(b);
    bool same = strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return same;
}

void outfile_check(const char *const *outs, size_t n)
{
    char **dest = cli_xcalloc(n ? n : 1, sizeof *dest);
    const char *twice = NULL, *also = NULL; /* an output named as an earlier one */
    for (size_t k = 0; k < n && !twice; k++) {
        if (!outs[k] || cli_is_stdout(outs[k]))
            continue;
        dest[k] = destination(outs[k]);
        outfile_refuse_input(outs[k], dest[k]);
        if (write_in_place(dest[k])) { /* /dev/null may take them all */
            free(dest[k]);
            dest[k] = NULL;
            continue;
        }
        for (size_t j = 0; j < k && !twice; j++)
            if (dest[j] && same_file(dest[j], dest[k])) {
                twice = outs[k];
                also = strcmp(outs[j], outs[k]) ? outs[j] : NULL;
            }
    }
    for (size_t k = 0; k < n; k++)
        free(dest[k]);
    free(dest);
    if (twice && also)
        cli_die(CLI_EXIT_USAGE, "%s: is named for two outputs (also as %s)", twice, also);
    if (twice)
        cli_die(CLI_EXIT_USAGE, "%s: is named for two outputs", twice);
}

/* Opens PATH, which write_in_place accepted, for writing. */
static int open_in_place(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot write it: %s", path, strerror(errno));
    return fd;
}

void outfile_open(outfile *o, const char *path)
{
    o->tmp = NULL;
    if (strcmp(path, "-") == 0) {
        o->path = cli_strf("%s", path);
        o->fp = stdout;
        o->direct = false;
        return;
    }
    o->path = destination(path);
    outfile_refuse_input(path, o->path);
    int fd;
    o->direct = write_in_place(o->path);
    if (o->direct)
        fd = open_in_place(o->path);
    else
        o->tmp = make_tmp(o->path, &fd);
    if (!(o->fp = fdopen(fd, "w")))
        cli_die(CLI_EXIT_INTERNAL, "%s: %s", path, strerror(errno));
}

char *outfile_tmpname(const char *path)
{
    int fd;
    char *dest = destination(path);
    outfile_refuse_input(path, dest);
    char *tmp = make_tmp(dest, &fd);
    free(dest);
    close(fd);
    return tmp;
}

/* Copies the file TMP into PATH, written in place. */
static void copy_into(const char *tmp, const char *path)
{
    int in = open(tmp, O_RDONLY | O_CLOEXEC), out = open_in_place(path);
    if (in < 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: %s", tmp, strerror(errno));
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            cli_die(CLI_EXIT_INTERNAL, "%s: %s", tmp, strerror(errno));
        for (ssize_t done = 0, w; done < n; done += w)
            if ((w = write(out, buf + done, (size_t)(n - done))) < 0) {
                if (errno != EINTR)
                    cli_die(CLI_EXIT_INTERNAL, "%s: writing failed: %s", path, strerror(errno));
                w = 0;
            }
    }
    close(in);
    if (close(out) != 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: writing failed: %s", path, strerror(errno));
}

void outfile_rename(const char *tmp, const char *path)
{
    char *dest = destination(path);
    if (write_in_place(dest)) {
        copy_into(tmp, dest);
        unlink(tmp);
    } else if (rename(tmp, dest) != 0) {
        cli_die(CLI_EXIT_INTERNAL, "%s: cannot write it: %s", path, strerror(errno));
    }
    free(dest);
    outfile_forget(tmp);
}

void outfile_discard(const char *tmp)
{
    unlink(tmp);
    outfile_forget(tmp);
}

/* The flags of every JSON the tools write. */
#define JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

void outfile_json(const char *path, json_t *j)
{
    if (!j)
        cli_die(CLI_EXIT_INTERNAL, "%s: out of memory making the JSON", path);
    outfile f;
    outfile_open(&f, path);
    errno = 0;
    if (json_dumpf(j, f.fp, JSON_FLAGS) != 0 ||
        fputc('\n', f.fp) == EOF)
        cli_die(CLI_EXIT_INTERNAL, "%s: writing the JSON failed: %s", path,
                ferror(f.fp) && errno ? strerror(errno) : "a value JSON cannot encode");
    json_decref(j);
    outfile_commit(&f);
}

/* Writes the N bytes at S to O, each line break followed by INDENT spaces. */
static void put_indented(outfile *o, const char *s, size_t indent)
{
    for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        fwrite(s, 1, (size_t)(nl + 1 - s), o->fp);
        fprintf(o->fp, "%*s", (int)indent, "");
    }
    fputs(s, o->fp);
}

/* Items made and formatted at once, between writes. */
#define JSON_BATCH 512

/* One thread's share of a batch: items FIRST + K, FIRST + K + STRIDE, ...
 * below FIRST + N, formatted into TEXT (indexed from FIRST; NULL: out of
 * memory). */
typedef struct json_share {
    json_t *(*item)(size_t i, void *arg);
    void *arg;
    size_t first, n, k, stride;
    char **text;
} json_share;

static void *format_items(void *p)
{
    const json_share *s = p;
    for (size_t i = s->k; i < s->n; i += s->stride) {
        json_t *j = s->item(s->first + i, s->arg);
        s->text[i] = j ? json_dumps(j, JSON_FLAGS) : NULL;
        json_decref(j);
    }
    return NULL;
}

/* TEXT[0 .. N-1] := items FIRST .. FIRST + N - 1, formatted by up to
 * THREADS threads (those that cannot be started: by this one). */
static void format_batch(json_share *share, pthread_t *tid, int threads, size_t first, size_t n)
{
    int started = 0;
    for (int k = 0; k < threads; k++)
        share[k].first = first, share[k].n = n;
    for (int k = 1; k < threads && (size_t)k < n; k++, started++)
        if (pthread_create(&tid[k], NULL, format_items, &share[k]) != 0)
            break;
    format_items(&share[0]);
    for (int k = 1; k <= started; k++)
        pthread_join(tid[k], NULL);
    for (int k = started + 1; k < threads && (size_t)k < n; k++)
        format_items(&share[k]);
}

void outfile_json_items(const char *path, json_t *root, const char *key, size_t n,
                        json_t *(*item)(size_t i, void *arg), void *arg, int threads)
{
    /* ROOT written with a marker where the array goes, which is then
     * written item by item, each indented as json_dumpf indents it there
     * (JSON strings hold no raw line break) */
    static const char marker[] = "\001fpkit items\001";
    static const char dumped[] = "\"\\u0001fpkit items\\u0001\"";
    if (!root || json_object_set_new(root, key, json_string(marker)) != 0)
        cli_die(CLI_EXIT_INTERNAL, "%s: out of memory making the JSON", path);
    char *text = json_dumps(root, JSON_FLAGS);
    json_decref(root);
    char *at = text ? strstr(text, dumped) : NULL;
    if (!at)
        cli_die(CLI_EXIT_INTERNAL, "%s: out of memory making the JSON", path);
    /* the indentation of the line holding KEY */
    const char *line = at;
    while (line > text && line[-1] != '\n')
        line--;
    size_t indent = strspn(line, " ");
    outfile f;
    outfile_open(&f, path);
    errno = 0;
    fwrite(text, 1, (size_t)(at - text), f.fp);
    fputs(n ? "[" : "[]", f.fp);
    threads = threads < 1 ? 1 : threads > CLI_MAX_THREADS ? CLI_MAX_THREADS : threads;
    json_share share[CLI_MAX_THREADS];
    pthread_t tid[CLI_MAX_THREADS];
    char **texts = cli_xcalloc(JSON_BATCH, sizeof *texts);
    for (int k = 0; k < threads; k++)
        share[k] = (json_share){.item = item, .arg = arg, .k = (size_t)k,
                                .stride = (size_t)threads, .text = texts};
    for (size_t first = 0; first < n; first += JSON_BATCH) {
        size_t m = n - first < JSON_BATCH ? n - first : JSON_BATCH;
        format_batch(share, tid, threads, first, m);
        for (size_t i = 0; i < m; i++) {
            if (!texts[i])
                cli_die(CLI_EXIT_INTERNAL, "%s: out of memory making the JSON", path);
            fprintf(f.fp, "\n%*s", (int)(indent + 2), "");
            put_indented(&f, texts[i], indent + 2);
            if (first + i + 1 < n)
                fputc(',', f.fp);
            free(texts[i]);
            texts[i] = NULL;
        }
    }
    free(texts);
    if (n)
        fprintf(f.fp, "\n%*s]", (int)indent, "");
    fputs(at + strlen(dumped), f.fp);
    free(text);
    if (fputc('\n', f.fp) == EOF || ferror(f.fp))
        cli_die(CLI_EXIT_INTERNAL, "%s: writing the JSON failed: %s", path,
                errno ? strerror(errno) : "I/O error");
    outfile_commit(&f);
}

void outfile_commit(outfile *o)
{
    if (o->direct) {
        int bad = ferror(o->fp);
        if (fclose(o->fp) != 0 || bad)
            cli_die(CLI_EXIT_INTERNAL, "%s: writing failed: %s", o->path,
                    errno ? strerror(errno) : "I/O error");
    } else if (!o->tmp) {
        if (fflush(o->fp) != 0 || ferror(o->fp))
            cli_die(CLI_EXIT_INTERNAL, "writing to standard output failed: %s", strerror(errno));
    } else {
        int bad = ferror(o->fp);
        if (fclose(o->fp) != 0 || bad)
            cli_die(CLI_EXIT_INTERNAL, "%s: writing failed: %s", o->path,
                    errno ? strerror(errno) : "I/O error");
        outfile_rename(o->tmp, o->path);
        free(o->tmp);
    }
    free(o->path);
    o->path = o->tmp = NULL;
    o->fp = NULL;
}
