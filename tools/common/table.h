/* Text tables that fit a terminal: a tool adds columns and rows of cells;
 * printed, the columns take the width their cells need, and when the whole
 * is wider than the width allowed, the one column marked elastic (the
 * tensor names) gives up what is too much, its long cells shortened in
 * the middle ("grad/layer....fc2.weight"), so that no line is wider than
 * it.  Every tool's default text goes through it. */
#ifndef FPKIT_TABLE_H
#define FPKIT_TABLE_H

#include <stdbool.h>
#include <stdio.h>

/* The width of the tools' default text. */
#define TABLE_WIDTH 100

typedef struct table table;

/* A table of NCOLS columns, no rows yet; INDENT spaces before each line. */
table *table_new(int ncols, int indent);
void table_free(table *t);

/* Column J: its header (may be ""), left- or right-aligned, and whether it
 * is the one that shrinks to fit. */
void table_column(table *t, int j, const char *header, bool left, bool elastic);

/* The next cell, in row order: a new row begins after NCOLS cells. */
void table_add(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes T, header line first (when any header is nonempty), each line at
 * most WIDTH columns. */
void table_print(const table *t, FILE *out, int width);

/* LINE on OUT, broken after a ", " or "; " (else at a space) into lines
 * of at most TABLE_WIDTH columns, the later ones indented by INDENT. */
void table_wrap(FILE *out, const char *line, int indent);

/* S shortened to at most WIDTH columns by cutting its middle: "ab...yz".
 * Malloc'd. */
char *table_shorten(const char *s, int width);

#endif
