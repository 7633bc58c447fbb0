/* The fuzz targets: one entry function per parser, called by the libFuzzer
 * harness (fuzz_main.c, make fuzz) and, on every file of
 * tests/fuzz/corpus/TARGET/, by the regression replay of make check
 * (replay.c).  Each takes any bytes; a crash, a sanitizer report or an
 * abort from a broken invariant (fuzz_check) is a finding. */
#ifndef FPKIT_FUZZ_H
#define FPKIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Aborts, naming the broken invariant WHAT: the fuzzer's finding. */
#define fuzz_check(cond, what)                                                          \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", __FILE__, __LINE__, \
                    what);                                                              \
            abort();                                                                    \
        }                                                                               \
    } while (0)

/* A copy of DATA as a string (stopping at a NUL byte); free it. */
char *fuzz_string(const uint8_t *data, size_t size);

/* The bytes as a .npy file (fpk_dump_open, then every tensor read). */
int fuzz_npy(const uint8_t *data, size_t size);
/* The bytes as a safetensors file, read the same way. */
int fuzz_safetensors(const uint8_t *data, size_t size);
/* Up to the first newline: a raw reader's --shape text (cli_shape_parse);
 * then one byte choosing the dtype and byte order; the rest is the raw
 * file, opened with that shape and read. */
int fuzz_shape(const uint8_t *data, size_t size);
/* The bytes as a format name (fpk_format_lookup). */
int fuzz_format_lookup(const uint8_t *data, size_t size);
/* One byte choosing the format, one the mode and options; the rest is the
 * text given to fpk_parse (fpinspect's number reader). */
int fuzz_parse(const uint8_t *data, size_t size);
/* The bytes as statistics JSON (fpk_stats_from_json, as merging reads). */
int fuzz_stats_json(const uint8_t *data, size_t size);
/* The bytes as a torch.save file (zip, libzip; then its pickle). */
int fuzz_torch(const uint8_t *data, size_t size);
/* The bytes as the data.pkl of a torch.save file (the unpickler and the
 * tensors it rebuilds), with one 64-byte storage "0". */
int fuzz_pickle(const uint8_t *data, size_t size);
/* The bytes as a sharded model's index.json, beside a shard
 * "shard.safetensors" holding tensors "a" (F32 [2]) and "b" (U8 [2]). */
int fuzz_index(const uint8_t *data, size_t size);

/* The bytes as a recipe's text (fpk_recipe_parse, as --recipes reads). */
int fuzz_recipe(const uint8_t *data, size_t size);
/* The bytes as a recipe's statistics JSON (fpk_recipe_stats_from_json, as
 * fpgrad-mpi's ranks exchange them). */
int fuzz_recipe_stats_json(const uint8_t *data, size_t size);

typedef struct fuzz_target {
    const char *name; /* the corpus directory's name */
    int (*run)(const uint8_t *data, size_t size);
} fuzz_target;

/* Every target, NULL-ended. */
extern const fuzz_target fuzz_targets[];

#endif
