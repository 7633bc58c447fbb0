/* What bench_bulk's parts share: the data, the rows, the clocks. */
#ifndef FPKIT_BENCH_BULK_H
#define FPKIT_BENCH_BULK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define N ((size_t)1 << 26)
#define REPS 5
#define FILE_REPEATS 4 /* the .npy holds the data this many times: 1 GiB */

extern uint32_t *data; /* N float32 encodings */
extern uint64_t sink;  /* every result is folded in, so nothing is skipped */
struct fpk_format;
/* The formats of fpgrad's statistics: fp16, bf16, e4m3, e5m2. */
extern const struct fpk_format *const stat_formats[4];

double cpu_now(void);  /* the thread's CPU clock, seconds */
double wall_now(void);
void die(const char *what) __attribute__((noreturn));
/* N bytes, touched (no page faults in the timed runs); dies without. */
void *xmalloc(size_t n);
/* A row for ELEMS input elements of WIDTH bytes each, and for ELEMS
 * float32 inputs. */
void row_width(const char *what, double seconds, size_t elems, size_t width, const char *extra);
void row(const char *what, double seconds, size_t elems, const char *extra);

/* bench_fpgrad.c: fpgrad on a 1 GiB .npy from the page cache next to cat
 * of the same file: its statistics (unless RECIPES_ONLY) and its standard
 * recipes. */
void time_fpgrad(const char *fpgrad, bool recipes_only);

#endif
