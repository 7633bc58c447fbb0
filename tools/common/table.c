/* Tables that fit a terminal (table.h). */
#define _GNU_SOURCE /* vasprintf */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "table.h"

struct table {
    int ncols, indent;
    char **headers;
    bool *left, *elastic;
    char **cells;
    size_t ncells, cap;
};

table *table_new(int ncols, int indent)
{
    table *t = cli_xcalloc(1, sizeof *t);
    t->ncols = ncols;
    t->indent = indent;
    t->headers = cli_xcalloc((size_t)ncols, sizeof *t->headers);
    t->left = cli_xcalloc((size_t)ncols, sizeof *t->left);
    t->elastic = cli_xcalloc((size_t)ncols, sizeof *t->elastic);
    return t;
}

void table_free(table *t)
{
    if (!t)
        return;
    for (int j = 0; j < t->ncols; j++)
        free(t->headers[j]);
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->headers), free(t->left), free(t->elastic), free(t->cells);
    free(t);
}

void table_column(table *t, int j, const char *header, bool left, bool elastic)
{
    free(t->headers[j]);
    t->headers[j] = cli_strf("%s", header);
    t->left[j] = left;
    t->elastic[j] = elastic;
}

void table_add(table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    va_end(ap);
    if (t->ncells == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        if (!(t->cells = realloc(t->cells, t->cap * sizeof *t->cells)))
            cli_die(CLI_EXIT_INTERNAL, "out of memory");
    }
    t->cells[t->ncells++] = s;
}

/* The columns text takes: bytes, but for UTF-8 continuation bytes. */
static int columns(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xc0) != 0x80;
    return n;
}

char *table_shorten(const char *s, int width)
{
    int n = columns(s);
    if (n <= width || width < 5)
        return cli_strf("%s", s);
    /* (the name's bytes, ASCII in practice; a cut inside a UTF-8 sequence
     * is avoided by stepping over continuation bytes) */
    int head = (width - 3 + 1) / 2, tail = width - 3 - head;
    size_t len = strlen(s), h = 0, tpos = len;
    for (int k = 0; k < head && h < len; k++)
        do
            h++;
        while (h < len && ((unsigned char)s[h] & 0xc0) == 0x80);
    for (int k = 0; k < tail && tpos > h; k++)
        do
            tpos--;
        while (tpos > h && ((unsigned char)s[tpos] & 0xc0) == 0x80);
    return cli_strf("%.*s...%s", (int)h, s, s + tpos);
}

static void pad(FILE *out, int n)
{
    for (int i = 0; i < n; i++)
        fputc(' ', out);
}

void table_print(const table *t, FILE *out, int width)
{
    int *w = cli_xcalloc((size_t)t->ncols, sizeof *w);
    bool any_header = false;
    for (int j = 0; j < t->ncols; j++) {
        w[j] = columns(t->headers[j] ? t->headers[j] : "");
        any_header |= w[j] > 0;
    }
    for (size_t i = 0; i < t->ncells; i++) {
        int j = (int)(i % (size_t)t->ncols), n = columns(t->cells[i]);
        if (n > w[j])
            w[j] = n;
    }
    int total = t->indent;
    for (int j = 0; j < t->ncols; j++)
        total += w[j] + (j ? 2 : 0);
    for (int j = 0; j < t->ncols && total > width; j++)
        if (t->elastic[j]) {
            int least = 12, give = total - width;
            int keep = w[j] - give > least ? w[j] - give : least < w[j] ? least : w[j];
            total -= w[j] - keep;
            w[j] = keep;
        }
    size_t rows = (t->ncells + (size_t)t->ncols - 1) / (size_t)t->ncols;
    for (size_t r = any_header ? 0 : 1; r <= rows; r++) {
        /* the line ends with its last nonempty cell: no trailing blanks */
        int end = 0;
        for (int j = 0; j < t->ncols; j++) {
            size_t i = (r - 1) * (size_t)t->ncols + (size_t)j;
            const char *cell = r == 0 ? t->headers[j] : i < t->ncells ? t->cells[i] : NULL;
            if (cell && *cell)
                end = j + 1;
        }
        pad(out, end ? t->indent : 0);
        for (int j = 0; j < end; j++) {
            size_t i = (r - 1) * (size_t)t->ncols + (size_t)j;
            const char *cell = r == 0 ? (t->headers[j] ? t->headers[j] : "")
                               : i < t->ncells ? t->cells[i]
                                               : "";
            char *s = table_shorten(cell, w[j]);
            int n = columns(s), gap = w[j] - n;
            bool last = j == end - 1;
            if (j)
                pad(out, 2);
            if (t->left[j]) {
                fputs(s, out);
                if (!last)
                    pad(out, gap);
            } else {
                pad(out, gap);
                fputs(s, out);
            }
            free(s);
        }
        fputc('\n', out);
    }
    free(w);
}

void table_wrap(FILE *out, const char *line, int indent)
{
    int at = 0;
    size_t len = strlen(line);
    while ((size_t)at + len > TABLE_WIDTH) {
        size_t cut = 0, space = 0;
        for (size_t i = 0; i + 2 <= TABLE_WIDTH - (size_t)at && i + 1 < len; i++) {
            if ((line[i] == ',' || line[i] == ';') && line[i + 1] == ' ')
                cut = i + 1;
            if (line[i] == ' ' && i > 0)
                space = i;
        }
        if (!cut)
            cut = space;
        if (!cut)
            break;
        fprintf(out, "%*s%.*s\n", at, "", (int)cut, line);
        line += cut + 1;
        len -= cut + 1;
        at = indent;
    }
    fprintf(out, "%*s%s\n", at, "", line);
}
