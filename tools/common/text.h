/* Text for the tools' tables and JSON: percentages, shapes, names made
 * printable. */
#ifndef FPKIT_TEXT_H
#define FPKIT_TEXT_H

#include <stddef.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* A percentage N/D for tables: "0", "100", "<0.01", ">99.99", "12.34";
 * "-" when D is 0.  BUF holds at least 8 bytes. */
const char *cli_percent(char *buf, uint64_t n, uint64_t d);

/* "[128, 64]", a shape of NDIM dimensions, into BUF of LEN bytes
 * (truncated to fit). */
void cli_shape_text(char *buf, size_t len, int ndim, const uint64_t *shape);

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
