/* Helpers shared by the fpkit tools. */
#define _GNU_SOURCE /* vasprintf, sched_getaffinity */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"

static const char *prog = "fpkit";

void cli_init(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    prog = slash ? slash + 1 : argv0 ? argv0 : prog;
}

const char *cli_prog(void)
{
    return prog;
}

/* The file the thread reads views of, for on_sigbus. */
static _Thread_local const char *viewed;

static void write_all(const char *s)
{
    for (size_t n = strlen(s); n;) {
        ssize_t k = write(STDERR_FILENO, s, n);
        if (k <= 0)
            return;
        s += k, n -= (size_t)k;
    }
}

/* (Only what a signal handler may call.) */
static void on_sigbus(int sig)
{
    const char *path = viewed;
    if (!path) { /* not a view: the default action, once this returns */
        signal(sig, SIG_DFL);
        return;
    }
    write_all(prog);
    write_all(": ");
    write_all(path);
    write_all(": the file shrank while it was being read\n");
    _exit(CLI_EXIT_USAGE);
}

static void catch_sigbus(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

void cli_viewing(const char *path)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, catch_sigbus);
    viewed = path;
}

static cli_die_fn *die_hook;

void cli_set_die_hook(cli_die_fn *hook)
{
    die_hook = hook;
}

void cli_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (die_hook) {
        char *msg;
        if (vasprintf(&msg, fmt, ap) < 0)
            msg = "out of memory";
        die_hook(status, msg);
        exit(status); /* a hook that returned */
    }
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(status);
}

void cli_buf_put(cli_buf *b, const void *x, size_t n)
{
    if (n > b->cap - b->len) {
        b->cap = (b->len + n) * 2;
        if (!(b->p = realloc(b->p, b->cap)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    memcpy(b->p + b->len, x, n);
    b->len += n;
}

void cli_buf_get(cli_buf *b, void *x, size_t n)
{
    if (n > b->len - b->at)
        cli_die(b->status, "%s: byte %zu: the data ends early", b->what, b->at);
    memcpy(x, b->p + b->at, n);
    b->at += n;
}

uint64_t cli_buf_hash(const cli_buf *b)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < b->len; i++)
        h = (h ^ b->p[i]) * UINT64_C(0x100000001b3);
    return h;
}

void cli_failure_set(cli_failure *f, int status, const char *msg)
{
    bool first = false;
    if (!atomic_compare_exchange_strong(&f->failed, &first, true))
        return;
    f->status = status;
    snprintf(f->msg, sizeof f->msg, "%s", msg);
}

void cli_failure_check(const cli_failure *f)
{
    if (atomic_load(&f->failed))
        cli_die(f->status, "%s", f->msg);
}

int cli_error_status(const fpk_error *err)
{
    return err->code == FPK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_USAGE;
}

void cli_die_error(const fpk_error *err)
{
    cli_die(cli_error_status(err), "%s", err->msg);
}

char *cli_strf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    return s;
}

void *cli_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    return p;
}

void *cli_xcalloc_pages(size_t n, size_t size)
{
    const size_t page = 4096;
    if (size && n > (SIZE_MAX - page) / size)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    if (n * size < page)
        return cli_xcalloc(n ? n : 1, size ? size : 1);
    size_t round = (n * size + page - 1) / page * page;
    round = round ? round : page;
    void *p = aligned_alloc(page, round);
    if (!p)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    return memset(p, 0, round);
}

static int share_cpus, share_sharers = 1;

void cli_set_cpu_share(int cpus, int sharers)
{
    share_cpus = cpus;
    share_sharers = sharers;
}

int cli_affinity_cpus(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_ALLOC
    /* a mask as large as the kernel's: sched_getaffinity fails with
     * EINVAL on one too small */
    for (int size = 1024; size <= (1 << 22); size *= 2) {
        cpu_set_t *mask = CPU_ALLOC(size);
        if (!mask)
            break;
        size_t bytes = CPU_ALLOC_SIZE(size);
        int got = sched_getaffinity(0, bytes, mask) == 0 ? CPU_COUNT_S(bytes, mask) : -1;
        int failure = errno;
        CPU_FREE(mask);
        if (got > 0)
            return got;
        if (got == 0 || failure != EINVAL)
            break;
    }
#endif
    return online > 0 && online <= INT_MAX ? (int)online : 1;
}

/* The positive count that environment variable NAME holds first (digits
 * between spaces, then its end or a comma), too large ones as LONG_MAX; or
 * 0: as nproc(1) reads OMP_NUM_THREADS and OMP_THREAD_LIMIT. */
static long env_count(const char *name)
{
    const char *s = getenv(name);
    if (!s)
        return 0;
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    char *end;
    long v = strtol(s, &end, 10); /* (LONG_MAX when too large) */
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    return v > 0 && (*end == '\0' || *end == ',') ? v : 0;
}

int cli_default_threads(void)
{
    long n = env_count("OMP_NUM_THREADS");
    if (!n) {
        n = cli_affinity_cpus();
        if (share_sharers > 1 && share_cpus > 0 && share_cpus / share_sharers < n)
            n = share_cpus / share_sharers;
    }
    long limit = env_count("OMP_THREAD_LIMIT");
    if (limit && limit < n)
        n = limit;
    return n < 1 ? 1 : n > CLI_MAX_THREADS ? CLI_MAX_THREADS : (int)n;
}

bool cli_is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

static int add_file(const char *file, void *arg)
{
    cli_files *fs = arg;
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? 2 * fs->cap : 16;
        if (!(fs->v = realloc(fs->v, fs->cap * sizeof *fs->v)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    fs->v[fs->n++] = cli_strf("%s", file);
    return 0;
}

void cli_walk_files(const char *path, cli_files *fs)
{
    fpk_error err;
    if (fpk_dump_walk(path, add_file, fs, &err) != FPK_OK)
        cli_die_error(&err);
}

void cli_files_free(cli_files *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        free(fs->v[i]);
    free(fs->v);
    *fs = (cli_files){0};
}
