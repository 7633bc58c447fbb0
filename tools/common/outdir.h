/* Output directories written whole (fpgrad --report): the new directory is
 * built beside the destination under a temporary name, and swapped into
 * place only when complete, the old one (stale files and all) then
 * removed; an error exit or a signal removes the half-built one and leaves
 * the old one as it was. */
#ifndef FPKIT_OUTDIR_H
#define FPKIT_OUTDIR_H

typedef struct outdir {
    char *path; /* the destination */
    char *tmp;  /* the directory being built */
} outdir;

/* Dies with status 2 if PATH exists and is not a directory, or holds a
 * protected input (outfile_protect) anywhere below it: replacing it would
 * remove the input. */
void outdir_check(const char *path);

/* Creates the temporary directory for PATH; dies with status 3 if it
 * cannot. */
void outdir_open(outdir *d, const char *path);

/* D->tmp's path of NAME ("index.html", "tensors/0001.png"), malloc'd. */
char *outdir_file(const outdir *d, const char *name);

/* Puts D in place of its destination and removes the old one; dies with
 * status 3 if it cannot. */
void outdir_commit(outdir *d);

#endif
