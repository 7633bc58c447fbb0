/* Zip archives, as torch.save writes them, read with libzip: the central
 * directory, the members' names, sizes, methods and checksums are
 * libzip's to parse and check (ZIP_CHECKCONS compares every local header
 * with the central one).  libzip reads the file through a source of ours
 * over the dump's descriptor (pread).  Small members (the pickle) are read
 * whole through libzip; tensor data, stored uncompressed, are read in
 * place: libzip gives no member's offset in the archive, but the window
 * it reads a stored member through seeks our source to the member's first
 * byte, which is recorded (and checked against the bytes libzip read). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "dump-impl.h"
#include "zip-impl.h"

struct fpki_zip {
    fpk_dump *d;
    uint32_t k; /* the file's index in d->files */
    zip_t *za;
    zip_error_t error; /* the source's */
    uint64_t pos;      /* the source's position */
    uint64_t read_at;  /* where the last read began */
    int fd;
};

/* libzip's source: the file behind D, read with pread. */
static zip_int64_t source(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
    fpki_zip *z = ud;
    uint64_t size = z->d->files[z->k].size;
    switch (cmd) {
    case ZIP_SOURCE_OPEN:
        z->pos = 0;
        return 0;
    case ZIP_SOURCE_READ: {
        uint64_t n = z->pos < size ? size - z->pos : 0;
        if (len < n)
            n = len;
        z->read_at = z->pos;
        unsigned char *p = data;
        for (uint64_t done = 0; done < n;) {
            ssize_t got = pread(z->fd, p + done, (size_t)(n - done), (off_t)(z->pos + done));
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                zip_error_set(&z->error, ZIP_ER_READ, got < 0 ? errno : EIO);
                return -1;
            }
            done += (uint64_t)got;
        }
        z->pos += n;
        return (zip_int64_t)n;
    }
    case ZIP_SOURCE_CLOSE:
    case ZIP_SOURCE_FREE:
        return 0;
    case ZIP_SOURCE_STAT: {
        if (len < sizeof(zip_stat_t)) {
            zip_error_set(&z->error, ZIP_ER_INVAL, 0);
            return -1;
        }
        zip_stat_t *st = data;
        zip_stat_init(st);
        st->size = size;
        st->valid |= ZIP_STAT_SIZE;
        return sizeof *st;
    }
    case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&z->error, data, len);
    case ZIP_SOURCE_SEEK: {
        zip_int64_t at = zip_source_seek_compute_offset(z->pos, size, data, len, &z->error);
        if (at < 0)
            return -1;
        z->pos = (uint64_t)at;
        return 0;
    }
    case ZIP_SOURCE_TELL:
        return (zip_int64_t)z->pos;
    case ZIP_SOURCE_SUPPORTS:
        return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                              ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE,
                                              ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
                                              ZIP_SOURCE_SUPPORTS, -1);
    default:
        zip_error_set(&z->error, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
}

/* libzip's message for ERROR, with what was being done. */
static int zip_fail(fpki_zip *z, zip_error_t *error, const char *what, fpk_error *err)
{
    return fpki_file_error(err, FPK_EFORMAT, z->d, z->k, "%s: %s", what,
                           zip_error_strerror(error));
}

int fpki_zip_open(fpk_dump *d, uint32_t k, fpki_zip **zp, fpk_error *err)
{
    *zp = NULL;
    fpki_zip *z = calloc(1, sizeof *z);
    if (!z)
        return fpki_dump_error(err, FPK_ENOMEM, d, "out of memory");
    z->d = d;
    z->k = k;
    z->fd = d->files[k].fd;
    zip_error_init(&z->error);
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t *src = zip_source_function_create(source, z, &error);
    if (!src) {
        int rc = zip_fail(z, &error, "not a zip archive libzip can read", err);
        zip_error_fini(&error);
        fpki_zip_close(z);
        return rc;
    }
    z->za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (!z->za) {
        zip_source_free(src);
        int rc = zip_fail(z, &error, "not a valid zip archive", err);
        zip_error_fini(&error);
        fpki_zip_close(z);
        return rc;
    }
    zip_error_fini(&error);
    *zp = z;
    return FPK_OK;
}

void fpki_zip_close(fpki_zip *z)
{
    if (!z)
        return;
    if (z->za)
        zip_discard(z->za);
    zip_error_fini(&z->error);
    free(z);
}

size_t fpki_zip_count(fpki_zip *z)
{
    zip_int64_t n = zip_get_num_entries(z->za, 0);
    return n > 0 ? (size_t)n : 0;
}

const char *fpki_zip_name(fpki_zip *z, size_t i)
{
    return zip_get_name(z->za, i, ZIP_FL_ENC_RAW);
}

int64_t fpki_zip_find(fpki_zip *z, const char *name)
{
    return zip_name_locate(z->za, name, ZIP_FL_ENC_RAW);
}

/* Member I's status, checked: not encrypted, of a method libzip reads. */
static int member_stat(fpki_zip *z, size_t i, zip_stat_t *st, fpk_error *err)
{
    if (zip_stat_index(z->za, i, 0, st) != 0)
        return zip_fail(z, zip_get_error(z->za), "a member's entry", err);
    const char *name = st->valid & ZIP_STAT_NAME ? st->name : "?";
    if ((st->valid & ZIP_STAT_ENCRYPTION_METHOD) && st->encryption_method != ZIP_EM_NONE)
        return fpki_file_error(err, FPK_EFORMAT, z->d, z->k, "zip member \"%s\" is encrypted",
                               fpki_quote(name).s);
    if (!(st->valid & ZIP_STAT_COMP_METHOD) || !(st->valid & ZIP_STAT_SIZE) ||
        !(st->valid & ZIP_STAT_COMP_SIZE))
        return fpki_file_error(err, FPK_EFORMAT, z->d, z->k,
                               "zip member \"%s\" has no method or size", fpki_quote(name).s);
    if (st->comp_method != ZIP_CM_STORE && !zip_compression_method_supported(st->comp_method, 0))
        return fpki_file_error(err, FPK_EFORMAT, z->d, z->k,
                               "zip member \"%s\" is compressed with method %d, which libzip "
                               "does not read",
                               fpki_quote(name).s, (int)st->comp_method);
    return FPK_OK;
}

int fpki_zip_read(fpki_zip *z, size_t i, uint64_t limit, char **buf, size_t *len,
                  fpk_error *err)
{
    *buf = NULL;
    *len = 0;
    zip_stat_t st;
    int rc = member_stat(z, i, &st, err);
    if (rc != FPK_OK)
        return rc;
    if (st.size > limit)
        return fpki_file_error(err, FPK_EFORMAT, z->d, z->k,
                               "zip member \"%s\" is %" PRIu64 " bytes, over the limit of %" PRIu64,
                               fpki_quote(st.name).s, (uint64_t)st.size, limit);
    zip_file_t *f = zip_fopen_index(z->za, i, 0);
    if (!f)
        return zip_fail(z, zip_get_error(z->za), "opening a zip member", err);
    char *p = malloc((size_t)st.size + 1);
    if (!p) {
        zip_fclose(f);
        return fpki_file_error(err, FPK_ENOMEM, z->d, z->k, "out of memory");
    }
    /* one byte more than declared: a member that inflates past its size
     * is refused, not read on */
    uint64_t got = 0;
    for (;;) {
        zip_int64_t n = zip_fread(f, p + got, st.size + 1 - got);
        if (n < 0) {
            rc = zip_fail(z, zip_file_get_error(f), "reading a zip member", err);
            break;
        }
        if (n == 0)
            break;
        got += (uint64_t)n;
        if (got > st.size) {
            rc = fpki_file_error(err, FPK_EFORMAT, z->d, z->k,
                                 "zip member \"%s\" inflates past its declared %" PRIu64 " bytes",
                                 fpki_quote(st.name).s, (uint64_t)st.size);
            break;
        }
    }
    zip_fclose(f);
    if (rc == FPK_OK && got != st.size)
        rc = fpki_file_error(err, FPK_EFORMAT, z->d, z->k,
                             "zip member \"%s\" holds %" PRIu64 " bytes, not the %" PRIu64
                             " declared",
                             fpki_quote(st.name).s, got, (uint64_t)st.size);
    if (rc != FPK_OK) {
        free(p);
        return rc;
    }
    p[got] = '\0';
    *buf = p;
    *len = (size_t)got;
    return FPK_OK;
}

int fpki_zip_stored(fpki_zip *z, size_t i, uint64_t *offset, uint64_t *size, fpk_error *err)
{
    zip_stat_t st;
    int rc = member_stat(z, i, &st, err);
    if (rc != FPK_OK)
        return rc;
    if (st.comp_method != ZIP_CM_STORE || st.comp_size != st.size)
        return fpki_file_error(err, FPK_EFORMAT, z->d, z->k,
                               "zip member \"%s\" is compressed; torch.save stores tensor data "
                               "uncompressed, and fpkit reads it only so",
                               fpki_quote(st.name).s);
    *size = st.size;
    *offset = 0;
    if (st.size == 0)
        return FPK_OK;
    zip_file_t *f = zip_fopen_index(z->za, i, ZIP_FL_COMPRESSED);
    if (!f)
        return zip_fail(z, zip_get_error(z->za), "opening a zip member", err);
    unsigned char first[16], again[16];
    size_t want = st.size < sizeof first ? (size_t)st.size : sizeof first;
    z->read_at = UINT64_MAX;
    zip_int64_t n = zip_fread(f, first, want);
    uint64_t at = z->read_at;
    zip_fclose(f);
    uint64_t fsize = z->d->files[z->k].size;
    if (n != (zip_int64_t)want || at == UINT64_MAX || at > fsize || st.size > fsize - at ||
        pread(z->fd, again, want, (off_t)at) != (ssize_t)want || memcmp(first, again, want) != 0)
        return fpki_file_error(err, FPK_EFORMAT, z->d, z->k,
                               "zip member \"%s\": its data cannot be located in the file",
                               fpki_quote(st.name).s);
    *offset = at;
    return FPK_OK;
}
