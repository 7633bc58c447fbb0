/* The tools' HTML reports: text escaped for HTML, and the page around a
 * report: its style, and a small inline script that sorts a table by the
 * column whose header is clicked (no network, no library). */
#ifndef FPKIT_HTML_H
#define FPKIT_HTML_H

#include <stdio.h>

/* S on OUT with &, <, >, " and ' escaped. */
void html_text(FILE *out, const char *s);

/* The page's start: doctype, head with TITLE (escaped) and the style, and
 * <body>.  Tables of class "sortable" sort by a clicked column (numerically
 * where a cell says data-v); td.name cells are left-aligned monospace;
 * td.lo, td.mid and td.hi shade a cell. */
void html_head(FILE *out, const char *title);

/* The page's end: the sorting script, </body> and </html>.
 * index.html?sort=K sorts by column K when the page opens, descending
 * with ?sort=-K. */
void html_tail(FILE *out);

#endif
