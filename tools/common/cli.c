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

int cli_next(cli_args *a)
{
    if (++a->i >= a->argc)
        return CLI_END;
    const char *arg = a->arg = a->argv[a->i];
    a->value = NULL;
    if (!a->rest && strcmp(arg, "--") == 0) {
        a->rest = true;
        return cli_next(a);
    }
    if (a->rest || (a->is_operand ? a->is_operand(arg) : arg[0] != '-' || arg[1] == '\0'))
        return CLI_OPERAND;
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (nlen >= sizeof a->name)
        cli_unknown(a);
    memcpy(a->name, arg, nlen);
    a->name[nlen] = '\0';
    bool takes = false;
    for (const char *const *w = a->with_value; *w && !takes; w++)
        takes = strcmp(a->name, *w) == 0;
    if (takes) {
        if (eq)
            a->value = eq + 1;
        else if (a->i + 1 < a->argc)
            a->value = a->argv[++a->i];
        else
            cli_die(CLI_EXIT_USAGE, "option %s needs an argument (see %s --help)", a->name, a->tool);
    } else if (eq) {
        cli_die(CLI_EXIT_USAGE, "option %s takes no argument", a->name);
    }
    return CLI_OPTION;
}

void cli_unknown(const cli_args *a)
{
    cli_die(CLI_EXIT_USAGE, "unknown option \"%s\" (see %s --help)", a->arg, a->tool);
}

void cli_list_formats(FILE *out)
{
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        fprintf(out, "%s%s", f == fpk_formats ? "" : ", ", (*f)->name);
    fputs(", or eXmY, eXmYfn, eXmYfnuz (1 <= X <= 11, 0 <= Y <= 52)", out);
}

const fpk_format *cli_format(const char *name)
{
    const fpk_format *f = fpk_format_lookup(name);
    if (!f) {
        char *list = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&list, &len);
        if (!m)
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
        cli_list_formats(m);
        if (fclose(m) != 0)
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
        cli_die(CLI_EXIT_USAGE, "unknown format \"%s\"; known formats: %s", name, list);
    }
    return f;
}

fpk_round cli_round(const char *name)
{
    fpk_round mode;
    if (fpk_round_lookup(name, &mode))
        return mode;
    cli_die(CLI_EXIT_USAGE, "unknown rounding mode \"%s\"; known modes: rne, rna, rtz, rup, rdn, rod, sr", name);
}

const char *cli_round_name(fpk_round mode)
{
    return fpk_round_name(mode);
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
    size_t round = (n * size + page - 1) / page * page;
    round = round ? round : page;
    void *p = aligned_alloc(page, round);
    if (!p)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    return memset(p, 0, round);
}

long long cli_parse_int(const char *opt, const char *s, long long min, long long max)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    bool digits = isdigit((unsigned char)s[s[0] == '-']); /* no space, no '+' */
    if (!digits || *end || errno || v < min || v > max)
        cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is not an integer from %lld to %lld", opt, s,
                min, max);
    return v;
}

int cli_parse_threads(const char *s)
{
    return (int)cli_parse_int("--threads", s, 1, CLI_MAX_THREADS);
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

void cli_parse_size(const char *opt, const char *s, int *width, int *height)
{
    char *copy = cli_strf("%s", s), *x = strchr(copy, 'x');
    if (!x)
        cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is not WIDTHxHEIGHT", opt, s);
    *x = '\0';
    *width = (int)cli_parse_int(opt, copy, 64, 10000);
    *height = (int)cli_parse_int(opt, x + 1, 64, 10000);
    free(copy);
}

void cli_parse_regex(const char *opt, const char *re, regex_t *out, bool *compiled)
{
    if (compiled && *compiled)
        regfree(out);
    int rc = regcomp(out, re, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[256];
        regerror(rc, out, why, sizeof why);
        cli_die(CLI_EXIT_USAGE, "option %s: \"%s\" is not a regular expression: %s", opt, re, why);
    }
    if (compiled)
        *compiled = true;
}

char **cli_split_names(const char *opt, const char *list, int *n)
{
    size_t len = strlen(list), parts = 1;
    for (const char *p = list; *p; p++)
        parts += *p == ',';
    char **names = cli_xcalloc(1, (parts + 1) * sizeof *names + len + 1);
    char *copy = memcpy(names + parts + 1, list, len + 1);
    for (size_t k = 0; k < parts; k++) {
        names[k] = copy;
        copy += strcspn(copy, ",");
        *copy++ = '\0';
        if (!*names[k]) {
            free(names);
            cli_die(CLI_EXIT_USAGE, "option %s: an empty name in \"%s\"; expected NAME[,NAME...]",
                    opt, list);
        }
    }
    *n = (int)parts;
    return names;
}

int cli_parse_formats_with(const char *opt, const char *list, const fpk_format **formats, int max,
                           const fpk_format *(*lookup)(const char *name))
{
    int n = 0, count;
    char **names = cli_split_names(opt, list, &count);
    for (int k = 0; k < count; k++) {
        const char *t = names[k];
        const fpk_format *f = lookup ? lookup(t) : NULL;
        if (!f)
            f = cli_format(t);
        for (int j = 0; j < n; j++)
            if (formats[j] == f)
                cli_die(CLI_EXIT_USAGE, "option %s: %s is named twice", opt, f->name);
        if (n == max)
            cli_die(CLI_EXIT_USAGE, "option %s: at most %d formats", opt, max);
        formats[n++] = f;
    }
    free(names);
    return n;
}

char *cli_printable(const char *s)
{
    char *out = cli_xcalloc(4 * strlen(s) + 1, 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p != 0x7f)
            *o++ = (char)*p;
        else if (*p == '\n' || *p == '\t' || *p == '\r')
            o += sprintf(o, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
        else
            o += sprintf(o, "\\x%02x", *p);
    }
    return out;
}

void cli_need_zero(const char *opt, const fpk_format *const *formats, int n, const char *what)
{
    for (int j = 0; j < n; j++)
        if (fpk_classify(formats[j], 0) != FPK_CLASS_ZERO)
            cli_die(CLI_EXIT_USAGE, "option %s: %s has no zero for %s to start from", opt,
                    formats[j]->name, what);
}

int cli_parse_formats(const char *opt, const char *list, const fpk_format **formats, int max)
{
    return cli_parse_formats_with(opt, list, formats, max, NULL);
}

bool cli_shape_parse(const char *s, fpk_raw_spec *raw, char *why, size_t len)
{
    raw->ndim = 0;
    for (const char *t = s;;) {
        size_t n = strcspn(t, ",");
        uint64_t v = 0;
        bool ok = n > 0;
        for (size_t i = 0; ok && i < n; i++)
            ok = t[i] >= '0' && t[i] <= '9' && !__builtin_mul_overflow(v, 10, &v) &&
                 !__builtin_add_overflow(v, (uint64_t)(t[i] - '0'), &v);
        if (!ok) {
            snprintf(why, len, "\"%.*s\" is not a dimension (a count from 0) in \"%s\"",
                     (int)n, t, s);
            return false;
        }
        if (raw->ndim == FPK_MAX_DIMS) {
            snprintf(why, len, "at most %d dimensions", FPK_MAX_DIMS);
            return false;
        }
        raw->shape[raw->ndim++] = v;
        if (!t[n])
            return true;
        t += n + 1;
    }
}

void cli_parse_shape(const char *opt, const char *s, fpk_raw_spec *raw)
{
    char why[256];
    if (!cli_shape_parse(s, raw, why, sizeof why))
        cli_die(CLI_EXIT_USAGE, "option %s: %s", opt, why);
}

bool cli_is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

static bool echo = true;

void cli_set_echo(bool e)
{
    echo = e;
}

int cli_usage(const char *usage)
{
    if (echo)
        fputs(usage, stderr);
    return CLI_EXIT_USAGE;
}

bool cli_help_version(const char *name, const char *tool, const char *usage, const char *help)
{
    bool help_opt = strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0;
    if (!help_opt && strcmp(name, "--version") != 0)
        return false;
    if (!echo)
        return true;
    if (help_opt)
        printf("%s\n%s", usage, help);
    else
        printf("%s (%s)\n", tool, fpk_version());
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(CLI_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno));
    return true;
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
