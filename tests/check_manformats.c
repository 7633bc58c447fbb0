/* man/fpkit-formats.7 agrees with the format descriptors.
 *
 * The page's tables are mdoc column lists.  In each, a header row
 * ".It Sy name Ta Sy COLUMN ..." names the columns and every other row starts
 * with a format's name.  Each cell under a column this test knows is compared
 * with the text derived here from the descriptor in fpk_formats[]; every
 * built-in format needs a row in every table, no row may name anything else,
 * and every known column must appear, so the page cannot drift from the
 * descriptors or lose a fact. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit.h"

#define MAX_FORMATS 32
#define MAX_TABLES 16
#define MAX_CELLS 16
#define MAX_PRINT 10

/* The columns this test checks; a table may hold any subset of them. */
static const char *const columns[] = {
    "width", "exp", "man", "bias", "specials", "aliases", "emin", "emax",
    "min subnormal", "min normal", "max finite", "+1", "+max", "-0", "+inf",
    "-inf", "NaN",
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])

typedef struct counts {
    unsigned long cases, mismatches;
} counts;

static void mismatch(counts *n, int line, const char *what, ...)
    __attribute__((format(printf, 3, 4)));

/* Counts a failed case and prints it, with the page's LINE if nonzero,
 * while fewer than MAX_PRINT have been. */
static void mismatch(counts *n, int line, const char *what, ...)
{
    n->cases++;
    if (n->mismatches++ >= MAX_PRINT)
        return;
    va_list ap;
    va_start(ap, what);
    if (line > 0)
        printf("check_manformats: mismatch: fpkit-formats.7:%d: ", line);
    else
        printf("check_manformats: mismatch: fpkit-formats.7: ");
    vprintf(what, ap);
    putchar('\n');
    va_end(ap);
}

/* "0x" and the encoding in as many hex digits as F's width needs. */
static void hex(char *buf, size_t len, const fpk_format *f, fpk_bits a)
{
    unsigned digits = ((unsigned)f->width + 3) / 4;
    snprintf(buf, len, "0x%0*llx", (int)(digits < 16 ? digits : 16), (unsigned long long)a);
}

/* The name of a special-value rule on the page. */
static const char *rule_name(fpk_special sp)
{
    switch (sp) {
    case FPK_SPECIAL_IEEE: return "IEEE";
    case FPK_SPECIAL_FN: return "FN";
    case FPK_SPECIAL_FNUZ: return "FNUZ";
    case FPK_SPECIAL_NONE: return "NONE";
    case FPK_SPECIAL_E8M0: return "E8M0";
    }
    return "?";
}

/* The text the page must show for F under column COL: "none" for what F
 * does not have (E8M0 has no subnormals and no sign, FNUZ no -0, NONE no
 * NaN). */
static void expected(char *buf, size_t len, const fpk_format *f, const char *col)
{
    if (strcmp(col, "width") == 0)
        snprintf(buf, len, "%d", f->width);
    else if (strcmp(col, "exp") == 0)
        snprintf(buf, len, "%d", f->exp_bits);
    else if (strcmp(col, "man") == 0)
        snprintf(buf, len, "%d", f->man_bits);
    else if (strcmp(col, "bias") == 0)
        snprintf(buf, len, "%d", f->bias);
    else if (strcmp(col, "specials") == 0)
        snprintf(buf, len, "%s", rule_name(f->special));
    else if (strcmp(col, "aliases") == 0)
        snprintf(buf, len, "%s", *f->aliases ? f->aliases : "none");
    else if (strcmp(col, "emin") == 0)
        snprintf(buf, len, "%d", f->emin);
    else if (strcmp(col, "emax") == 0)
        snprintf(buf, len, "%d", f->emax);
    else if (strcmp(col, "min subnormal") == 0 && f->special == FPK_SPECIAL_E8M0)
        snprintf(buf, len, "none");
    else if (strcmp(col, "min subnormal") == 0)
        snprintf(buf, len, "2^%d", f->emin - f->man_bits);
    else if (strcmp(col, "min normal") == 0)
        snprintf(buf, len, "2^%d", f->emin);
    else if (strcmp(col, "max finite") == 0) {
        /* Decoded from the descriptor's encoding; every step is exact. */
        fpk_bits a = f->max_finite;
        int e = (int)((a & f->exp_mask) >> f->man_bits) - f->bias - f->man_bits;
        double v = (double)((a & f->man_mask) | ((fpk_bits)1 << f->man_bits));
        for (; e > 0; e--)
            v *= 2;
        for (; e < 0; e++)
            v /= 2;
        snprintf(buf, len, "%.5g", v);
    } else if (strcmp(col, "+1") == 0)
        hex(buf, len, f, (fpk_bits)f->bias << f->man_bits);
    else if (strcmp(col, "+max") == 0)
        hex(buf, len, f, f->max_finite);
    else if (strcmp(col, "-0") == 0 && (f->special == FPK_SPECIAL_FNUZ || !f->sign_mask))
        snprintf(buf, len, "none");
    else if (strcmp(col, "-0") == 0)
        hex(buf, len, f, f->sign_mask);
    else if (strcmp(col, "+inf") == 0 || strcmp(col, "-inf") == 0) {
        if (f->inf == 0)
            snprintf(buf, len, "none");
        else
            hex(buf, len, f, f->inf | (col[0] == '-' ? f->sign_mask : 0));
    } else if (f->special == FPK_SPECIAL_NONE)
        snprintf(buf, len, "none");
    else
        hex(buf, len, f, f->nan);
}

/* Roff text to plain text in place: "\-" becomes "-", a leading "Sy " or
 * "Li " goes, surrounding blanks go, and in an aliases cell every blank. */
static void plain(char *s, bool no_blanks)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] == '-')
            r++;
        if (!(no_blanks && *r == ' '))
            *w++ = *r;
    }
    *w = '\0';
    char *p = s;
    while (*p == ' ')
        p++;
    if (strncmp(p, "Sy ", 3) == 0 || strncmp(p, "Li ", 3) == 0)
        p += 3;
    memmove(s, p, strlen(p) + 1);
    for (size_t n = strlen(s); n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'); n--)
        s[n - 1] = '\0';
}

/* Splits the mdoc column row LINE (after ".It ") at " Ta " into CELLS. */
static int split_row(char *line, char *cells[MAX_CELLS])
{
    int n = 0;
    char *p = line;
    while (n < MAX_CELLS) {
        cells[n++] = p;
        char *ta = strstr(p, " Ta ");
        if (!ta)
            break;
        *ta = '\0';
        p = ta + 4;
    }
    return n;
}

static const char *man_path(void)
{
    static char path[4096];
    const char *srcdir = getenv("srcdir");
    snprintf(path, sizeof path, "%s/man/fpkit-formats.7", srcdir && *srcdir ? srcdir : ".");
    return path;
}

START_TEST(page_matches_descriptors)
{
    size_t nformats = 0;
    while (fpk_formats[nformats])
        nformats++;
    ck_assert_uint_le(nformats, MAX_FORMATS);

    const char *path = man_path();
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "cannot open %s", path);

    counts n = {0, 0};
    int rows[MAX_TABLES][MAX_FORMATS] = {{0}};
    bool column_seen[NCOLUMNS] = {false};
    char header[MAX_CELLS][64];
    int nheader = 0, table = -1, lineno = 0;
    bool in_table = false;
    char line[1024];
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (strncmp(line, ".Bl -column", 11) == 0) {
            ck_assert_int_lt(table + 1, MAX_TABLES);
            table++;
            nheader = 0;
            in_table = true;
            continue;
        }
        if (strncmp(line, ".El", 3) == 0)
            in_table = false;
        if (strncmp(line, ".It ", 4) != 0 || !in_table)
            continue;
        char *cells[MAX_CELLS];
        int ncells = split_row(line + 4, cells);
        plain(cells[0], false);
        if (strcmp(cells[0], "name") == 0) {
            nheader = ncells;
            for (int i = 0; i < ncells; i++) {
                plain(cells[i], false);
                snprintf(header[i], sizeof header[i], "%s", cells[i]);
            }
            continue;
        }
        size_t fi = 0;
        while (fi < nformats && strcmp(fpk_formats[fi]->name, cells[0]) != 0)
            fi++;
        if (fi == nformats) {
            mismatch(&n, lineno, "row names \"%s\", which is not a built-in format", cells[0]);
            continue;
        }
        rows[table][fi]++;
        if (ncells != nheader)
            mismatch(&n, lineno, "%s: %d cells under %d column headers", cells[0], ncells, nheader);
        for (int i = 1; i < ncells && i < nheader; i++) {
            size_t c = 0;
            while (c < NCOLUMNS && strcmp(columns[c], header[i]) != 0)
                c++;
            if (c == NCOLUMNS)
                continue;
            column_seen[c] = true;
            bool aliases = strcmp(header[i], "aliases") == 0;
            char want[256];
            expected(want, sizeof want, fpk_formats[fi], header[i]);
            plain(cells[i], aliases);
            if (strcmp(want, cells[i]) != 0)
                mismatch(&n, lineno, "%s %s: page says \"%s\", descriptor gives \"%s\"",
                         cells[0], header[i], cells[i], want);
            else
                n.cases++;
        }
    }
    fclose(fp);

    ck_assert_msg(table >= 0, "%s holds no column list", path);
    for (int t = 0; t <= table; t++)
        for (size_t fi = 0; fi < nformats; fi++)
            if (rows[t][fi] != 1)
                mismatch(&n, 0, "table %d has %d rows for %s, not 1", t + 1, rows[t][fi],
                         fpk_formats[fi]->name);
    for (size_t c = 0; c < NCOLUMNS; c++)
        if (!column_seen[c])
            mismatch(&n, 0, "no table has the column \"%s\"", columns[c]);

    printf("check_manformats: %zu formats, %d tables, %lu cells compared, %lu mismatches\n",
           nformats, table + 1, n.cases, n.mismatches);
    ck_assert_uint_eq(n.mismatches, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("manformats");
    TCase *tc = tcase_create("page");
    tcase_add_test(tc, page_matches_descriptors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
