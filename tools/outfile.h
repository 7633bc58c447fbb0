/* Output files written whole or not at all: the text goes to a temporary
 * file beside the destination, which replaces the destination only when it
 * is complete.  A temporary file left by an error exit or by SIGINT, SIGTERM
 * or SIGHUP is removed. */
#ifndef FPKIT_OUTFILE_H
#define FPKIT_OUTFILE_H

#include <stdio.h>

typedef struct outfile {
    char *path; /* the destination; "-" is stdout */
    char *tmp;  /* the temporary file, NULL for stdout */
    FILE *fp;
} outfile;

/* Creates the temporary file for PATH ("-": standard output).  Dies with
 * status 1 and a message naming PATH if it cannot be created. */
void outfile_open(outfile *o, const char *path);

/* A temporary file beside PATH for a program that writes it itself (gnuplot):
 * the returned name (free it) is registered for removal, and
 * outfile_rename moves it into place. */
char *outfile_tmpname(const char *path);

/* Flushes, closes and renames O into place (stdout is flushed only); dies
 * with status 1 and a message naming the file if any of it fails. */
void outfile_commit(outfile *o);

/* Moves TMP (from outfile_tmpname) to PATH; dies with status 1 on failure. */
void outfile_rename(const char *tmp, const char *path);

/* Removes TMP (from outfile_tmpname) and forgets it. */
void outfile_discard(const char *tmp);

#endif
