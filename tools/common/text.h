/* Text for the tools' tables and JSON: percentages, shapes, names made
 * printable. */
#ifndef FPKIT_TEXT_H
#define FPKIT_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A percentage N/D for tables: "0", "100", "<0.01", ">99.99", "12.34";
 * "-" when D is 0.  BUF holds at least 8 bytes. */
const char *cli_percent(char *buf, uint64_t n, uint64_t d);

/* The fraction F as a percentage, the same way: "-" for NaN, "0" and
 * "100" only when exact, "<0.01", ">99.99" (with CAPPED; without, a
 * fraction may pass 1 and is written "123.45"), else two decimals.  BUF
 * holds at least 24 bytes. */
const char *cli_percent_of(char *buf, double f, bool capped);

/* "[128, 64]", a shape of NDIM dimensions, into BUF of LEN bytes
 * (truncated to fit). */
void cli_shape_text(char *buf, size_t len, int ndim, const uint64_t *shape);

/* "s" for a count N other than 1, else "": "%d step%s", n, cli_plural(n). */
const char *cli_plural(uint64_t n);

/* A count as a JSON integer, and a shape as a JSON array of them. */
json_t *cli_json_count(uint64_t n);
json_t *cli_json_shape(int ndim, const uint64_t *shape);

/* S for a text table (malloc'd): its control characters escaped, \n, \t,
 * \r or \xNN, so that a tensor named "a\nb" keeps to its line. */
char *cli_printable(const char *s);

/* S as a CSV field (RFC 4180) on OUT: quoted when it holds a comma, a
 * quote or a line break. */
void cli_csv_field(FILE *out, const char *s);

#endif
