/* The tools' plots through gnuplot: finding it and the plot scripts, and
 * running a script on data written to a temporary directory, the picture
 * written whole through a temporary file beside its destination. */
#ifndef FPKIT_GNUPLOT_H
#define FPKIT_GNUPLOT_H

#include <stdbool.h>
#include <stdio.h>

/* The gnuplot to run, or NULL if it cannot be found: $FPKIT_GNUPLOT (a
 * path, or a name looked up in PATH) if set, else the one configure found,
 * else "gnuplot" from PATH. */
const char *gp_program(void);

/* The plot script NAME: $FPKIT_PLOTDIR/NAME if that is set, else the
 * installed one, else the source tree's (free it); dies with status 3 if it
 * cannot be read. */
char *gp_script(const char *name);

/* Dies with status 3, naming PATH, unless gnuplot is found and the plot
 * script NAME can be read. */
void gp_check(const char *path, const char *name);

/* Whether PATH ends in .png or .svg (case-insensitively). */
bool gp_ext_ok(const char *path);

/* S as a gnuplot single-quoted string, quotes doubled (free it). */
char *gp_quote(const char *s);

/* A plot under way: gp_begin, the data written to DATA, then gp_end. */
typedef struct gp_plot {
    FILE *data;       /* what the script reads as datafile */
    const char *path; /* the picture, .png or .svg */
    const char *program;
    char *script, *dir, *datafile, *err;
} gp_plot;

/* Starts P, a plot into PATH by the plot script NAME: gp_check, then a
 * temporary directory "PROG.XXXXXX" (PROG the tool's name) in $TMPDIR or
 * /tmp with the data file open in P->data.  Dies with status 3 on failure. */
void gp_begin(gp_plot *p, const char *path, const char *name);

/* Closes P's data and runs gnuplot on the script with the -e assignments
 * datafile, out (a temporary file beside P->path), term ('png' or 'svg', by
 * P->path's extension) and then VARS; moves the picture into place and
 * removes the temporary directory.  Dies with status 3, naming P->path, if
 * the data could not be written or gnuplot fails (with its first line of
 * complaint) or writes nothing. */
void gp_end(gp_plot *p, const char *vars);

#endif
