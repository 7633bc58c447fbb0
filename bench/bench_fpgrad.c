/* bench_bulk's end-to-end rows: fpgrad on a 1 GiB .npy of the data from
 * the page cache, next to cat of the same file, numpy on the same data,
 * and fpgrad's statistics pass alone (fpk_stats_add_tensor). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-bulk.h"
#include "fpkit-tensor.h"

extern char **environ;

/* The data FILE_REPEATS times over as a .npy at PATH. */
static void write_npy(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        die(path);
    char dict[128];
    int len = snprintf(dict, sizeof dict,
                       "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu,), }",
                       N * FILE_REPEATS);
    int total = (10 + len + 1 + 63) / 64 * 64;
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)((total - 10) & 0xff),
                              (unsigned char)((total - 10) >> 8)};
    fwrite(head, 1, sizeof head, f);
    fprintf(f, "%s%*s\n", dict, total - 10 - len - 1, "");
    for (int r = 0; r < FILE_REPEATS; r++)
        if (fwrite(data, sizeof *data, N, f) != N)
            die(path);
    /* written back now, not by a kernel thread beside the timed runs */
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0)
        die(path);
}

static double cpu_children(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Runs ARGV with standard output to /dev/null; *CPU := its user and
 * system time; returns its wall time, or -1 if it failed. */
static double run(char *const argv[], double *cpu)
{
    /* posix_spawn, not fork: this process's gigabyte of page tables is
     * not copied inside the timed span */
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0 ||
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0) != 0)
        die("posix_spawn_file_actions");
    double c0 = cpu_children(), t0 = wall_now();
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        die(argv[0]);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0)
        die("waitpid");
    double wall = wall_now() - t0;
    *cpu = cpu_children() - c0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? wall : -1;
}

/* A command timed: its best wall and CPU times so far. */
typedef struct timed {
    const char *what;
    char *argv[8];
    double wall, cpu;
} timed;

/* One more run of T. */
static void run_again(timed *t)
{
    double c, w = run(t->argv, &c);
    if (w < 0) {
        fprintf(stderr, "bench_bulk: %s failed\n", t->argv[0]);
        exit(1);
    }
    t->wall = w < t->wall ? w : t->wall;
    t->cpu = c < t->cpu ? c : t->cpu;
}

/* The best of REPS runs of each of the N commands at T, run in turn
 * (REPS rounds of all N), so that a slow spell of the machine falls on
 * them alike. */
static void best_of(timed *t, size_t n)
{
    for (size_t k = 0; k < n; k++)
        t[k].wall = t[k].cpu = 1e30;
    for (int r = 0; r < REPS; r++)
        for (size_t k = 0; k < n; k++)
            run_again(&t[k]);
}

/* fpgrad's statistics pass alone, in this process: the .npy at PATH read
 * once by fpk_stats_add_tensor for the four formats, one thread; the best
 * of REPS by wall time (the reads are system time) and by CPU time. */
static void time_tensor_stats(const char *path, double *wall, double *cpu)
{
    fpk_stats *s = xmalloc(sizeof *s);
    fpk_ctx c = fpk_ctx_default();
    *wall = *cpu = 1e30;
    for (int r = 0; r < REPS; r++) {
        struct rusage r0, r1;
        getrusage(RUSAGE_SELF, &r0);
        double t0 = wall_now();
        fpk_dump *d;
        fpk_error err;
        if (fpk_dump_open(path, NULL, &d, &err) != FPK_OK ||
            (fpk_stats_init(s, stat_formats, 4, 1, &c),
             fpk_stats_add_tensor(s, 1, d, 0, 0, fpk_dump_tensor(d, 0)->count, 1, &err)) !=
                FPK_OK) {
            fprintf(stderr, "bench_bulk: %s\n", err.msg);
            exit(1);
        }
        fpk_dump_close(d);
        double w = wall_now() - t0;
        getrusage(RUSAGE_SELF, &r1);
        double u = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
                   (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * 1e-6 +
                   (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
                   (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e-6;
        sink += s->fmt[2].underflow;
        *wall = w < *wall ? w : *wall;
        *cpu = u < *cpu ? u : *cpu;
    }
    free(s);
}

static void numpy(const char *path)
{
    static const char script[] =
        "import os, sys, time\n"
        "try:\n"
        "    import numpy as np\n"
        "except ImportError:\n"
        "    sys.exit(3)\n"
        "x = np.array(np.load(os.environ['BENCH_NPY'], mmap_mode='r')[:int(sys.argv[1])])\n"
        "def best(f):\n"
        "    b = 1e30\n"
        "    for _ in range(int(sys.argv[2])):\n"
        "        t = time.thread_time(); f(); b = min(b, time.thread_time() - t)\n"
        "    return b\n"
        "def hist():\n"
        "    a = np.abs(x)\n"
        "    a = a[(a > 0) & np.isfinite(a)]\n"
        "    e = np.floor(np.log2(a)).astype(np.int64)\n"
        "    return np.bincount(e - e.min())\n"
        "print(best(lambda: x.astype(np.float16)), best(hist), np.__version__)\n";
    char cmd[192];
    snprintf(cmd, sizeof cmd,
             "for p in python3 /usr/bin/python3; do \"$p\" -c \"$BENCH_NUMPY\" %zu %d 2>/dev/null &&"
             " exit; done",
             N, REPS);
    setenv("BENCH_NUMPY", script, 1);
    setenv("BENCH_NPY", path, 1);
    FILE *p = popen(cmd, "r");
    double astype, hist;
    char version[32];
    int got = p ? fscanf(p, "%lf %lf %31s", &astype, &hist, version) : 0;
    if (p)
        pclose(p);
    if (got != 3) {
        printf("numpy: rows skipped (neither python3 nor /usr/bin/python3 imports numpy"
               " and runs them)\n");
        return;
    }
    char note[64];
    snprintf(note, sizeof note, "numpy %s", version);
    row("numpy astype(float16)", astype, N, note);
    row("numpy log2 histogram", hist, N, note);
}

/* fpgrad on a 1 GiB .npy from the page cache next to cat of the same
 * file: its statistics (unless RECIPES_ONLY) and its standard recipes. */
void time_fpgrad(const char *fpgrad, bool recipes_only)
{
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_bulk.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(path))
        die(path);
    char npy[sizeof path + 16];
    snprintf(npy, sizeof npy, "%s/grad.npy", path);
    write_npy(npy);
    if (!recipes_only)
        numpy(npy);

    /* cat, then fpgrad's runs; the raw one reads the same bytes as a raw
     * file (its 128-byte header as 32 more elements), whose data starts a
     * page */
    timed runs[] = {
        {"cat", {"cat", npy, NULL}, 0, 0},
        {"--quiet --threads 1", {(char *)fpgrad, "--quiet", "--threads", "1", npy, NULL}, 0, 0},
        {"--quiet --threads 1 --no-sqnr",
         {(char *)fpgrad, "--quiet", "--threads", "1", "--no-sqnr", npy, NULL}, 0, 0},
        {"--quiet --threads 2", {(char *)fpgrad, "--quiet", "--threads", "2", npy, NULL}, 0, 0},
        {"--quiet (threads: the CPUs it may run on)", {(char *)fpgrad, "--quiet", npy, NULL}, 0, 0},
        {"--quiet --threads 1, read as raw --dtype f32",
         {(char *)fpgrad, "--quiet", "--threads", "1", "--dtype", "f32", npy, NULL}, 0, 0},
        {"--quiet --round sr --threads 1",
         {(char *)fpgrad, "--quiet", "--round", "sr", "--threads", "1", npy, NULL}, 0, 0},
        {"--quiet --round sr (the CPUs it may run on)",
         {(char *)fpgrad, "--quiet", "--round", "sr", npy, NULL}, 0, 0},
        {"--quiet --recipes standard --threads 2",
         {(char *)fpgrad, "--quiet", "--recipes", "standard", "--threads", "2", npy, NULL}, 0, 0},
        {"--quiet --recipes standard --threads 1",
         {(char *)fpgrad, "--quiet", "--recipes", "standard", "--threads", "1", npy, NULL}, 0, 0},
    };
    size_t nruns = sizeof runs / sizeof runs[0];
    if (recipes_only) { /* cat and the recipes' runs */
        runs[1] = runs[nruns - 2];
        runs[2] = runs[nruns - 1];
        nruns = 3;
    }
    run_again(&runs[0]); /* (fills the page cache) */
    best_of(runs, nruns);
    double cat_wall = runs[0].wall, cat_cpu = runs[0].cpu;
    size_t bytes = N * FILE_REPEATS * 4;
    printf("1 GiB .npy (page cache): cat %.3f s wall, %.3f s CPU (%.2f GB/s)\n", cat_wall,
           cat_cpu, (double)bytes / cat_wall / 1e9);
    double st_wall, st_cpu;
    if (!recipes_only) {
        time_tensor_stats(npy, &st_wall, &st_cpu);
        printf("  fpk_stats_add_tensor, 4 formats: %.3f s wall, %.3f s CPU (%.2f GB/s): %.2fx cat's"
           " wall time\n",
               st_wall, st_cpu, (double)bytes / st_wall / 1e9, st_wall / cat_wall);
    }
    for (size_t r = 1; r < nruns; r++)
        printf("  fpgrad %s: %.3f s wall, %.3f s CPU (%.2f GB/s): %.2fx cat's wall time\n",
               runs[r].what, runs[r].wall, runs[r].cpu, (double)bytes / runs[r].wall / 1e9,
               runs[r].wall / cat_wall);
    unlink(npy);
    rmdir(path);
}

