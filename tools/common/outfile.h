/* Output files written whole or not at all: the text goes to a temporary
 * file beside the destination, which replaces the destination only when it
 * is complete.  A destination that is a symbolic link has the file it
 * leads to replaced (created, if the link dangles), the link kept; one
 * that is a device, a FIFO or a socket (/dev/null) is written in place,
 * never replaced; one that is an input (outfile_protect) is refused.  A
 * temporary file left by an error exit or by SIGINT,
 * SIGTERM, SIGHUP or SIGPIPE is removed (a signal the tool was started
 * with ignored stays ignored); so are the other temporary paths registered
 * here, after the child process registered, if any, is killed. */
#ifndef FPKIT_OUTFILE_H
#define FPKIT_OUTFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct outfile {
    char *path; /* the destination; "-" is stdout */
    char *tmp;  /* the temporary file, NULL for stdout or a device */
    FILE *fp;
    bool direct; /* written in place: a device, a FIFO or a socket */
} outfile;

/* Marks the file PATH as an input: outfile_open, outfile_tmpname and
 * outfile_check die with status 2 and a message naming the output rather
 * than write over it. */
void outfile_protect(const char *path);

/* Dies with status 2 if one of OUTS[0..N-1], the outputs a run will
 * write (NULL and "-" are none), is a protected input or the same file as
 * another (a device, /dev/null, may take several): called once the inputs
 * are protected and before the work, which is then never done in vain. */
void outfile_check(const char *const *outs, size_t n);

/* Creates the temporary file for PATH ("-": standard output).  Dies with
 * status 3 and a message naming PATH if it cannot be created. */
void outfile_open(outfile *o, const char *path);

/* A temporary file beside PATH for a program that writes it itself (gnuplot):
 * the returned name (free it) is registered for removal, and
 * outfile_rename moves it into place. */
char *outfile_tmpname(const char *path);

/* Flushes, closes and renames O into place (stdout is flushed only); dies
 * with status 3 and a message naming the file if any of it fails. */
void outfile_commit(outfile *o);

/* Writes the JSON J to PATH as the tools write their reports: indented,
 * keys in order, reals to 17 significant digits, a final newline; whole or
 * not at all.  J's reference is dropped.  Dies with status 3 and a message
 * naming PATH and the reason (J NULL: out of memory making it). */
void outfile_json(const char *path, json_t *j);

/* outfile_json for a JSON object ROOT whose member KEY (present in ROOT,
 * its value a placeholder) is an array of N items, made by ITEM(I, ARG)
 * and dropped once written: the same bytes, in the memory of a batch of
 * items, however many there are.  THREADS threads make and format the
 * items of a batch at once (ITEM is called from any of them: it must only
 * read what it shares); one writes them in order. */
void outfile_json_items(const char *path, json_t *root, const char *key, size_t n,
                        json_t *(*item)(size_t i, void *arg), void *arg, int threads);

/* Moves TMP (from outfile_tmpname) to PATH; dies with status 3 on failure. */
void outfile_rename(const char *tmp, const char *path);

/* Removes TMP (from outfile_tmpname) and forgets it. */
void outfile_discard(const char *tmp);

/* Registers PATH, a temporary file (DIR false) or an empty-once-its-files-
 * are-gone directory (DIR true) that the caller made or is about to make,
 * for removal at exit or on a signal; the string must stay valid until
 * outfile_forget(PATH), which must come before it is freed.  Dies with
 * status 3 if too many are registered. */
void outfile_track(const char *path, bool dir);
void outfile_forget(const char *path);

/* Registers PATH, a temporary directory tree, for removal with all it
 * holds at exit or on a signal (until outfile_forget(PATH)). */
void outfile_track_tree(const char *path);

/* Removes the directory tree PATH (8 levels deep at most), with the system
 * calls alone. */
void outfile_remove_tree(const char *path);

/* Dies with status 2 if DEST, where the output PATH is written, is one of
 * the protected inputs. */
void outfile_refuse_input(const char *path, const char *dest);

/* Removes every registered temporary file now (after killing the child,
 * if any), as an exit or a signal would: for a way out that skips both,
 * MPI_Abort.  Async-signal-safe. */
void outfile_cleanup(void);

/* PID (0: none) is a child writing a registered temporary file: a signal
 * kills it, and waits for it, before the files are removed, so that it
 * cannot write one again after. */
void outfile_child(pid_t pid);

#endif
