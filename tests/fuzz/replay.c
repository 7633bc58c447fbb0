/* The fuzz regression corpus, replayed by make check without libFuzzer:
 * every file of CORPUS/TARGET/ (CORPUS: the argument, else the source
 * tree's tests/fuzz/corpus) through the target's entry function, the very
 * code make fuzz runs.  A crash or a broken invariant fails the test; a
 * signal names the input being replayed. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef FPK_FUZZ_CORPUS
#define FPK_FUZZ_CORPUS "tests/fuzz/corpus"
#endif

static char current[1400]; /* a directory (< 1024) and a name (< 256) */

/* Async-signal-safe: write only. */
static void say(const char *s)
{
    ssize_t n = write(STDERR_FILENO, s, strlen(s));
    (void)n;
}

static void on_fatal(int sig)
{
    say("fuzz_replay: died replaying ");
    say(current);
    say("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of DIR through T; returns how many, or -1. */
static long replay_dir(const fuzz_target *t, const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(stderr, "fuzz_replay: %s: cannot open the corpus directory\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names)))
            abort();
        if (!(names[n++] = strdup(e->d_name)))
            abort();
    }
    closedir(dp);
    if (n)
        qsort(names, n, sizeof *names, name_cmp);
    long done = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(current, sizeof current, "%s/%s", dir, names[i]);
        FILE *fp = fopen(current, "rb");
        if (!fp) {
            fprintf(stderr, "fuzz_replay: %s: cannot open\n", current);
            return -1;
        }
        size_t len = 0, room = 4096;
        unsigned char *buf = malloc(room);
        for (size_t got; buf && (got = fread(buf + len, 1, room - len, fp)) > 0;) {
            len += got;
            if (len == room)
                buf = realloc(buf, room *= 2);
        }
        fclose(fp);
        if (!buf)
            abort();
        t->run(buf, len);
        free(buf);
        free(names[i]);
        done++;
    }
    free(names);
    return n ? done : -1;
}

int main(int argc, char **argv)
{
    const char *corpus = argc > 1 ? argv[1] : FPK_FUZZ_CORPUS;
    static const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], on_fatal);
    long total = 0;
    int failed = 0, ntargets = 0;
    for (const fuzz_target *t = fuzz_targets; t->name; t++, ntargets++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", corpus, t->name);
        long n = replay_dir(t, dir);
        if (n < 0) {
            fprintf(stderr, "fuzz_replay: %s: no inputs replayed\n", dir);
            failed = 1;
            continue;
        }
        printf("fuzz_replay: %s: %ld inputs\n", t->name, n);
        total += n;
    }
    printf("fuzz_replay: %ld inputs replayed through %d targets, %s\n", total, ntargets,
           failed ? "FAILED" : "no failure");
    return failed;
}
