/* The tools' summaries (summary.h). */
#define _GNU_SOURCE /* vasprintf */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "summary.h"
#include "table.h"
#include "text.h"

/* Sorting the candidates: the larger badness first, then the larger
 * second key, then the earlier row. */
typedef struct ranked {
    double bad, then;
    size_t row;
} ranked;

static int by_badness(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->bad != y->bad)
        return x->bad < y->bad ? 1 : -1;
    if (x->then != y->then && !isnan(x->then) && !isnan(y->then))
        return x->then < y->then ? 1 : -1;
    return (x->row > y->row) - (x->row < y->row);
}

size_t summary_worst(const double *badness, const double *then, size_t n, size_t top, size_t *order)
{
    ranked *r = cli_xcalloc(n ? n : 1, sizeof *r);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(badness[i]))
            r[m++] = (ranked){badness[i], then ? then[i] : 0, i};
    qsort(r, m, sizeof *r, by_badness);
    if (m > top)
        m = top;
    for (size_t i = 0; i < m; i++)
        order[i] = r[i].row;
    free(r);
    return m;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void summary_steps_init(summary_steps *s, const scan_step *steps, size_t nrows)
{
    memset(s, 0, sizeof *s);
    s->step = cli_xcalloc(nrows ? nrows : 1, sizeof *s->step);
    s->of_row = cli_xcalloc(nrows ? nrows : 1, sizeof *s->of_row);
    for (size_t i = 0; i < nrows; i++)
        if (steps[i].known)
            s->step[s->n++] = steps[i].step;
    qsort(s->step, s->n, sizeof *s->step, by_value);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!k || s->step[i] != s->step[k - 1])
            s->step[k++] = s->step[i];
    s->n = k;
    for (size_t i = 0; i < nrows; i++) {
        s->of_row[i] = SIZE_MAX;
        if (!steps[i].known) {
            s->unknown++;
            continue;
        }
        int64_t *at = bsearch(&steps[i].step, s->step, s->n, sizeof *s->step, by_value);
        s->of_row[i] = (size_t)(at - s->step);
    }
}

void summary_steps_free(summary_steps *s)
{
    free(s->step);
    free(s->of_row);
    memset(s, 0, sizeof *s);
}

const char *summary_step_text(char *buf, const scan_step *st)
{
    if (!st->known)
        return "-";
    snprintf(buf, 24, "%" PRId64, st->step);
    return buf;
}

json_t *summary_step_json(const scan_step *st)
{
    return st->known ? json_integer((json_int_t)st->step) : json_null();
}

const char *summary_span_text(char *buf, const summary_steps *s)
{
    if (!s->n)
        buf[0] = '\0';
    else if (s->n == 1)
        snprintf(buf, 64, " (step %" PRId64 ")", s->step[0]);
    else
        snprintf(buf, 64, " (steps %" PRId64 " to %" PRId64 ")", s->step[0], s->step[s->n - 1]);
    return buf;
}

void summary_para(FILE *out, int indent, int hang, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text;
    if (vasprintf(&text, fmt, ap) < 0)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    va_end(ap);
    int col = 0, margin = indent;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (!len)
            break;
        if (col && col + 1 + (int)len > TABLE_WIDTH) {
            fputc('\n', out);
            col = 0;
            margin = hang;
        }
        if (!col) {
            fprintf(out, "%*s", margin, "");
            col = margin;
        } else {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, len, out);
        col += (int)len;
        p += len;
    }
    fputc('\n', out);
    free(text);
}

void summary_add(summary_line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *more;
    if (vasprintf(&more, fmt, ap) < 0)
        cli_die(CLI_EXIT_INTERNAL, "out of memory");
    va_end(ap);
    char *s = cli_strf("%s%s", l->s ? l->s : "", more);
    free(l->s), free(more);
    l->s = s;
}

void summary_end(summary_line *l, FILE *out)
{
    summary_para(out, 2, 4, "%s", l->s ? l->s : "");
    free(l->s);
    l->s = NULL;
}

void summary_worst_heading(FILE *out, size_t shown, size_t total, const char *one, const char *many,
                           const char *by)
{
    if (!shown)
        return;
    fputc('\n', out);
    if (shown == total && total == 1)
        summary_para(out, 0, 2, "The one %s, %s:", one, by);
    else if (shown == total)
        summary_para(out, 0, 2, "All %zu %s, worst first, %s:", total, many, by);
    else
        summary_para(out, 0, 2, "Worst %zu of %zu %s, %s (--top N, --all):", shown, total, many,
                     by);
}
