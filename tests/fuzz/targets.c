/* The fuzz targets (fuzz.h).  Beyond not crashing, each checks what its
 * parser promises: an accepted dump's tensors lie inside the file and read
 * back whole; a rejected input leaves an error code and a message and no
 * output; parsed numbers fit their format and their shortest text parses
 * back to them; accepted statistics survive writing and reading again. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "fpkit-tensor.h"
#include "fuzz.h"

/* The directory holding the files the dump targets write, made once. */
static char *scratch_dir;
#define NSCRATCH 7
static char scratch_files[NSCRATCH][320];

static void remove_scratch(void)
{
    for (int i = 0; i < NSCRATCH; i++)
        if (scratch_files[i][0])
            unlink(scratch_files[i]);
    if (scratch_dir)
        rmdir(scratch_dir);
}

/* DATA written to the scratch file named NAME (slot SLOT); its path. */
static const char *write_scratch(int slot, const char *name, const uint8_t *data, size_t size)
{
    static char dir[256];
    if (!scratch_dir) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fpkit-fuzz.XXXXXX", t && *t ? t : "/tmp");
        fuzz_check(mkdtemp(dir) != NULL, "cannot make a scratch directory in $TMPDIR");
        scratch_dir = dir;
        atexit(remove_scratch);
    }
    char *path = scratch_files[slot];
    snprintf(path, sizeof scratch_files[slot], "%s/%s", scratch_dir, name);
    /* Overwritten, then cut to size: ext4 flushes a file truncated to
     * zero and written again when it is closed, which would make every
     * input wait on the disk. */
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    fuzz_check(fd >= 0, "cannot write the scratch file");
    for (size_t done = 0; done < size;) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        fuzz_check(n > 0, "cannot write the scratch file");
        done += (size_t)n;
    }
    fuzz_check(ftruncate(fd, (off_t)size) == 0, "cannot write the scratch file");
    close(fd);
    return path;
}

/* The tensors of D, opened from a file of SIZE bytes: those stored plainly
 * inside their file (the input, or a shard), the safetensors ones apart,
 * every element readable, reads past the end refused; the skipped ones
 * named. */
static void check_dump(fpk_dump *d, uint64_t size)
{
    static double buf[512];
    fpk_error err;
    size_t n = fpk_dump_ntensors(d);
    fuzz_check(fpk_dump_kind(d) && fpk_dump_path(d), "a dump without kind or path");
    (void)fpk_dump_metadata(d, "step");
    (void)fpk_dump_metadata(d, NULL);
    bool apart = strcmp(fpk_dump_kind(d), "safetensors") == 0;
    for (size_t i = 0; i < fpk_dump_nskipped(d); i++) {
        const fpk_skipped *k = fpk_dump_skipped(d, i);
        fuzz_check(k && k->name && k->dtype && k->why, "a skipped tensor without a name");
    }
    for (size_t i = 0; i < n; i++) {
        const fpk_tensor *t = fpk_dump_tensor(d, i);
        fuzz_check(t && t->name && t->file, "a tensor without a name or file");
        fuzz_check(t->ndim >= 0 && t->ndim <= FPK_MAX_DIMS, "ndim out of range");
        fuzz_check((unsigned)t->dtype < FPK_DTYPE_COUNT, "dtype out of range");
        fuzz_check((t->layout == FPK_LAYOUT_DECODED) == (t->encoding != NULL),
                   "a decoded tensor without its encoding, or the reverse");
        uint64_t count = 1, bytes;
        bool zero = false;
        for (int k = 0; k < t->ndim; k++)
            zero |= t->shape[k] == 0;
        for (int k = 0; k < t->ndim && !zero; k++)
            fuzz_check(!__builtin_mul_overflow(count, t->shape[k], &count),
                       "the shape's product overflows");
        count = zero ? 0 : count;
        fuzz_check(count == t->count, "count is not the product of the shape");
        uint64_t fsize = size;
        struct stat st;
        if (strcmp(t->file, fpk_dump_path(d)) != 0)
            fsize = stat(t->file, &st) == 0 ? (uint64_t)st.st_size : 0;
        fuzz_check(!__builtin_mul_overflow(count, fpk_dtype_size(t->dtype), &bytes),
                   "a tensor's bytes overflow");
        if (t->layout == FPK_LAYOUT_PLAIN)
            fuzz_check(t->offset <= fsize && bytes <= fsize - t->offset,
                       "a tensor's data lies outside its file");
        if (t->layout == FPK_LAYOUT_STRIDED)
            fuzz_check(t->offset < fsize, "a view's first element lies outside its file");
        for (size_t j = 0; apart && j < i && bytes > 0; j++) {
            const fpk_tensor *u = fpk_dump_tensor(d, j);
            uint64_t ubytes = u->count * fpk_dtype_size(u->dtype);
            fuzz_check(u->layout != FPK_LAYOUT_PLAIN || t->layout != FPK_LAYOUT_PLAIN ||
                           ubytes == 0 || u->offset + ubytes <= t->offset ||
                           t->offset + bytes <= u->offset,
                       "two tensors overlap");
        }
        for (uint64_t first = 0; first < count;) {
            size_t k = count - first < 512 ? (size_t)(count - first) : 512;
            fuzz_check(fpk_dump_read(d, i, first, k, buf, &err) == FPK_OK,
                       "an accepted tensor does not read back");
            first += k;
        }
        fuzz_check(fpk_dump_read(d, i, count, 1, buf, &err) == FPK_ERANGE && err.msg[0],
                   "a read past a tensor's end is not refused");
    }
    fuzz_check(fpk_dump_read(d, n, 0, 0, buf, &err) == FPK_ERANGE && err.msg[0],
               "a read of a tensor past the last is not refused");
}

/* Opens PATH (SIZE bytes) with RAW (NULL: by its contents) and checks it. */
static int open_and_check(const char *path, uint64_t size, const fpk_raw_spec *raw)
{
    fpk_dump *d = NULL;
    fpk_error err = {.code = -1};
    int rc = fpk_dump_open(path, raw, &d, &err);
    if (rc != FPK_OK) {
        fuzz_check(d == NULL && err.code == rc && err.msg[0], "a failed open without a message");
        return 0;
    }
    fuzz_check(d != NULL, "a successful open without a dump");
    check_dump(d, size);
    fpk_dump_close(d);
    return 0;
}

int fuzz_npy(const uint8_t *data, size_t size)
{
    return open_and_check(write_scratch(0, "in.npy", data, size), size, NULL);
}

int fuzz_safetensors(const uint8_t *data, size_t size)
{
    return open_and_check(write_scratch(1, "in.safetensors", data, size), size, NULL);
}

int fuzz_shape(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t tlen = nl ? (size_t)(nl - data) : size;
    char *text = malloc(tlen + 1);
    fuzz_check(text != NULL, "out of memory");
    memcpy(text, data, tlen);
    text[tlen] = '\0';
    fpk_raw_spec raw;
    char why[256];
    why[0] = '\0';
    bool ok = cli_shape_parse(text, &raw, why, sizeof why);
    if (!ok) {
        fuzz_check(why[0] != '\0', "a rejected shape without a reason");
    } else {
        /* Written back in plain decimal, it reads the same. */
        fuzz_check(raw.ndim >= 1 && raw.ndim <= FPK_MAX_DIMS, "ndim out of range");
        char again[FPK_MAX_DIMS * 21 + 1];
        size_t used = 0;
        for (int k = 0; k < raw.ndim; k++)
            used += (size_t)snprintf(again + used, sizeof again - used, "%s%llu",
                                     k ? "," : "", (unsigned long long)raw.shape[k]);
        fpk_raw_spec back;
        fuzz_check(cli_shape_parse(again, &back, why, sizeof why) && back.ndim == raw.ndim &&
                       memcmp(back.shape, raw.shape, (size_t)raw.ndim * sizeof raw.shape[0]) == 0,
                   "a parsed shape does not read back");
    }
    free(text);
    if (!ok || !nl || (size_t)(nl - data) + 2 > size)
        return 0;
    /* One more than the dtypes, to see an invalid one refused. */
    uint8_t pick = nl[1];
    raw.dtype = (fpk_dtype)(pick % (FPK_DTYPE_COUNT + 1));
    raw.big_endian = pick & 0x80;
    if (pick & 0x40)
        raw.ndim = 0;
    const uint8_t *body = nl + 2;
    size_t blen = size - (size_t)(body - data);
    return open_and_check(write_scratch(2, "in.raw", body, blen), blen, &raw);
}

int fuzz_torch(const uint8_t *data, size_t size)
{
    return open_and_check(write_scratch(3, "in.pt", data, size), size, NULL);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c >> 1 ^ (0xedb88320u & -(c & 1));
    }
    return ~c;
}

static size_t put_le(uint8_t *p, uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(x >> (8 * i));
    return (size_t)n;
}

/* A stored zip member NAME of DATA at *AT of OUT, its local header
 * first; its central directory entry into CD at *CDAT. */
static void zip_member(uint8_t *out, size_t *at, uint8_t *cd, size_t *cdat, const char *name,
                       const uint8_t *data, size_t size)
{
    size_t nlen = strlen(name), local = *at;
    uint32_t crc = crc32_of(data, size);
    uint8_t *p = out + *at;
    p += put_le(p, 0x04034b50, 4), p += put_le(p, 20, 2), p += put_le(p, 0, 2);
    p += put_le(p, 0, 2), p += put_le(p, 0, 4), p += put_le(p, crc, 4);
    p += put_le(p, size, 4), p += put_le(p, size, 4), p += put_le(p, nlen, 2);
    p += put_le(p, 0, 2);
    memcpy(p, name, nlen), p += nlen;
    memcpy(p, data, size), p += size;
    *at = (size_t)(p - out);
    uint8_t *c = cd + *cdat;
    c += put_le(c, 0x02014b50, 4), c += put_le(c, 20, 2), c += put_le(c, 20, 2);
    c += put_le(c, 0, 2), c += put_le(c, 0, 2), c += put_le(c, 0, 4), c += put_le(c, crc, 4);
    c += put_le(c, size, 4), c += put_le(c, size, 4), c += put_le(c, nlen, 2);
    c += put_le(c, 0, 2), c += put_le(c, 0, 2), c += put_le(c, 0, 2), c += put_le(c, 0, 2);
    c += put_le(c, 0, 4), c += put_le(c, local, 4);
    memcpy(c, name, nlen), c += nlen;
    *cdat = (size_t)(c - cd);
}

int fuzz_pickle(const uint8_t *data, size_t size)
{
    static const uint8_t storage[64];
    size_t cap = size + 512;
    uint8_t *out = malloc(cap), *cd = malloc(512);
    fuzz_check(out && cd, "out of memory");
    size_t at = 0, cdat = 0;
    zip_member(out, &at, cd, &cdat, "archive/data.pkl", data, size);
    zip_member(out, &at, cd, &cdat, "archive/data/0", storage, sizeof storage);
    size_t cdstart = at;
    memcpy(out + at, cd, cdat), at += cdat;
    uint8_t *p = out + at;
    p += put_le(p, 0x06054b50, 4), p += put_le(p, 0, 4), p += put_le(p, 2, 2);
    p += put_le(p, 2, 2), p += put_le(p, cdat, 4), p += put_le(p, cdstart, 4);
    p += put_le(p, 0, 2);
    at = (size_t)(p - out);
    int rc = open_and_check(write_scratch(4, "pickle.pt", out, at), at, NULL);
    free(out);
    free(cd);
    return rc;
}

int fuzz_index(const uint8_t *data, size_t size)
{
    /* the shard the index may name: two tensors, "a" and "b" */
    static const char shard[] = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[8,10]}}";
    uint8_t file[8 + sizeof shard - 1 + 10] = {0};
    put_le(file, sizeof shard - 1, 8);
    memcpy(file + 8, shard, sizeof shard - 1);
    if (!scratch_files[5][0])
        write_scratch(5, "shard.safetensors", file, sizeof file);
    return open_and_check(write_scratch(6, "in.safetensors.index.json", data, size), size, NULL);
}

char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    fuzz_check(s != NULL, "out of memory");
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

static bool same_format(const fpk_format *a, const fpk_format *b)
{
    return a->exp_bits == b->exp_bits && a->man_bits == b->man_bits && a->bias == b->bias &&
           a->special == b->special;
}

int fuzz_format_lookup(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    const fpk_format *f = fpk_format_lookup(s);
    if (f) {
        fuzz_check(f->name && f->name[0] && f->exp_bits >= 1 && f->exp_bits <= 11 &&
                       f->man_bits >= 0 && f->man_bits <= 52 &&
                       f->width == (f->sign_mask != 0) + f->exp_bits + f->man_bits,
                   "a format found with impossible fields");
        const fpk_format *g = fpk_format_lookup(f->name);
        fuzz_check(g && same_format(f, g), "a format's own name finds another format");
        /* Names are compared case-insensitively. */
        for (char *p = s; *p; p++)
            *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        fuzz_check(fpk_format_lookup(s) == f, "the upper-case name finds another format");
    }
    free(s);
    return 0;
}

/* The formats fuzz_parse picks from after the built-ins: eXmY corners. */
static const char *const corner_formats[] = {"e1m0", "e1m1", "e2m0", "e3m1", "e11m0", "e1m52",
                                             "e6m9", "e9m2"};
#define NCORNERS (sizeof corner_formats / sizeof corner_formats[0])

int fuzz_parse(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t nbuiltin = 0;
    while (fpk_formats[nbuiltin])
        nbuiltin++;
    size_t pick = data[0] % (nbuiltin + NCORNERS);
    const fpk_format *f =
        pick < nbuiltin ? fpk_formats[pick] : fpk_format_lookup(corner_formats[pick - nbuiltin]);
    fuzz_check(f != NULL, "a listed format is not found");
    fpk_ctx c = fpk_ctx_default();
    c.round = (fpk_round)((data[1] & 7) % 7);
    c.ftz = data[1] & 8;
    c.daz = data[1] & 16;
    c.saturate = data[1] & 32;
    c.tiny_before = data[1] & 64;
    char *s = fuzz_string(data + 2, size - 2);
    const fpk_bits untouched = UINT64_C(0x5a5a5a5a5a5a5a5a);
    fpk_bits z = untouched;
    fpk_error err = {.code = -1};
    int rc = fpk_parse(f, s, &z, &c, &err);
    if (rc != FPK_OK) {
        fuzz_check(rc == FPK_ESYNTAX && err.code == rc && err.msg[0] && z == untouched &&
                       c.flags == 0,
                   "a rejected text without a message, or with output");
    } else {
        fuzz_check(err.code == FPK_OK && !err.msg[0], "an accepted text with an error");
        fuzz_check(f->width == 64 || z >> f->width == 0, "a result wider than its format");
        fuzz_check((c.flags & ~31u) == 0, "flags outside the five");
        /* The shortest text of the result parses back to it under RNE. */
        char text[64];
        size_t need = fpk_format_shortest(f, z, text, sizeof text);
        fuzz_check(need < sizeof text, "a shortest text over 63 characters");
        fpk_bits back = untouched;
        fuzz_check(fpk_parse(f, text, &back, NULL, NULL) == FPK_OK && back == z,
                   "the shortest text does not parse back to the value");
    }
    free(s);
    return 0;
}

int fuzz_stats_json(const uint8_t *data, size_t size)
{
    char *text = fuzz_string(data, size);
    static fpk_stats s, t, before;
    memset(&s, 0xab, sizeof s);
    before = s;
    fpk_error err = {.code = -1};
    int rc = fpk_stats_from_json(&s, text, &err);
    if (rc != FPK_OK) {
        fuzz_check(rc == FPK_EFORMAT && err.code == rc && err.msg[0] &&
                       memcmp(&s, &before, sizeof s) == 0,
                   "rejected statistics without a message, or with output");
    } else {
        char *json = fpk_stats_to_json(&s);
        fuzz_check(json != NULL, "accepted statistics cannot be written");
        fuzz_check(fpk_stats_from_json(&t, json, &err) == FPK_OK && memcmp(&s, &t, sizeof s) == 0,
                   "written statistics do not read back the same");
        free(json);
    }
    free(text);
    return 0;
}

const fuzz_target fuzz_targets[] = {
    {"npy", fuzz_npy},
    {"safetensors", fuzz_safetensors},
    {"shape", fuzz_shape},
    {"format_lookup", fuzz_format_lookup},
    {"parse", fuzz_parse},
    {"stats_json", fuzz_stats_json},
    {"torch", fuzz_torch},
    {"pickle", fuzz_pickle},
    {"index", fuzz_index},
    {"recipe", fuzz_recipe},
    {"recipe_stats_json", fuzz_recipe_stats_json},
    {NULL, NULL},
};
