/* The tensor dump readers (lib/tensor/: dtype.c, dump.c, dump_read.c,
 * npy.c, safetensors.c, walk.c).  Fixtures written by NumPy, ml_dtypes and safetensors
 * (tests/data, made by make-fixtures.py) must read as those libraries read
 * them; every 8- and 16-bit encoding, and samples of the wider ones, must
 * read through each container and byte order as the MPFR reference
 * converts them; hand-made headers of every accepted form must open;
 * malformed files of every kind must fail with their name in the message;
 * chunked reads must equal whole ones; directory walks must be sorted and
 * stop at loops; under FPK_EXHAUSTIVE a 2 GiB file must read in bounded
 * memory. */
#include <stdint.h> /* before mpfr.h (through ref.h) */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define SUITE "check_dump"

#ifndef FPK_TEST_DATA
#error "FPK_TEST_DATA must name the directory of the fixtures"
#endif

static uint64_t seed;
static tu_report rep;
static char tmpdir[1024];

/* Counts a case that holds; a failed one is printed by tu_fail. */
static bool expect(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool expect(bool ok, const char *fmt, ...)
{
    if (ok) {
        rep.cases++;
        rep.total_cases++;
        return true;
    }
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tu_fail(&rep, "%s", what);
    return false;
}

/* Mismatches when the current test began. */
static uint64_t test_start;

static void begin_test(void)
{
    test_start = rep.total_mismatches;
}

/* Prints the count line of the test's last group and fails the test on
 * any mismatch since it began. */
static void end_group(const char *label)
{
    tu_report_line(&rep, "%s", label);
    ck_assert_uint_eq(rep.total_mismatches - test_start, 0);
}

static bool is_nan_bits(uint64_t b)
{
    return (b & UINT64_C(0x7ff0000000000000)) == UINT64_C(0x7ff0000000000000) &&
           (b & UINT64_C(0x000fffffffffffff)) != 0;
}

static uint64_t double_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* A growing byte string. */
typedef struct buf {
    unsigned char *p;
    size_t n;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->n + n + 1);
    ck_assert_ptr_nonnull(b->p);
    if (n)
        memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_le(buf *b, uint64_t x, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)(x >> (8 * i));
        put(b, &c, 1);
    }
}

/* An element: SIZE bytes of BITS in the byte order asked for. */
static void put_elem(buf *b, uint64_t bits, size_t size, bool big)
{
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)(bits >> (8 * (big ? size - 1 - i : i)));
        put(b, &c, 1);
    }
}

/* An .npy file of VERSION whose header is HDR padded with spaces and a
 * newline to a multiple of 64 bytes, as NumPy writes it, then DATA. */
static buf npy(int version, const char *hdr, const buf *data)
{
    buf b = {0};
    put(&b, "\x93NUMPY", 6);
    unsigned char v[2] = {(unsigned char)version, 0};
    put(&b, v, 2);
    size_t prefix = version == 1 ? 10 : 12, len = strlen(hdr);
    size_t hlen = (prefix + len + 1 + 63) / 64 * 64 - prefix;
    put_le(&b, hlen, prefix - 8);
    put(&b, hdr, len);
    for (size_t i = len; i + 1 < hlen; i++)
        put(&b, " ", 1);
    put(&b, "\n", 1);
    if (data)
        put(&b, data->p, data->n);
    return b;
}

/* A safetensors file: the length of JSON, JSON, then DATA. */
static buf safetensors(const char *json, const buf *data)
{
    buf b = {0};
    put_le(&b, strlen(json), 8);
    put(&b, json, strlen(json));
    if (data)
        put(&b, data->p, data->n);
    return b;
}

static void tmp_path(char *path, size_t len, const char *name)
{
    snprintf(path, len, "%s/%s", tmpdir, name);
}

/* A new file each time: rewriting one in place makes ext4 flush it on
 * close (auto_da_alloc), which is slow. */
static void write_file(const char *path, const void *p, size_t n)
{
    unlink(path);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    if (n > 0)
        ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Writes B (freeing it) to NAME in the temporary directory; the path into
 * PATH. */
static void write_tmp(char *path, size_t len, const char *name, buf *b)
{
    tmp_path(path, len, name);
    write_file(path, b->p, b->n);
    free(b->p);
    b->p = NULL;
    b->n = 0;
}

/* Opening PATH (as raw with SPEC if not NULL) fails with CODE and a
 * message that starts with the path and contains WANT. */
static void expect_open_error(const char *path, const fpk_raw_spec *spec, int code,
                              const char *want)
{
    fpk_dump *d = (fpk_dump *)&d; /* must be reset to NULL */
    fpk_error err = {0, ""};
    int rc = fpk_dump_open(path, spec, &d, &err);
    size_t plen = strlen(path);
    bool named = strncmp(err.msg, path, plen) == 0 && err.msg[plen] == ':';
    if (!expect(rc == code && err.code == code && d == NULL && named && strstr(err.msg, want),
                "open %s: expected code %d and \"%s\", got %d: %s", path, code, want, rc,
                err.msg))
        fpk_dump_close(rc == FPK_OK ? d : NULL);
}

/* Writes B to NAME and expects it to fail to open as expect_open_error. */
static void expect_bad(const char *name, buf b, int code, const char *want)
{
    char path[1200];
    write_tmp(path, sizeof path, name, &b);
    expect_open_error(path, NULL, code, want);
    unlink(path);
}

/* Opens PATH, which must succeed. */
static fpk_dump *must_open(const char *path, const fpk_raw_spec *spec)
{
    fpk_dump *d = NULL;
    fpk_error err = {0, ""};
    int rc = fpk_dump_open(path, spec, &d, &err);
    ck_assert_msg(rc == FPK_OK && d != NULL, "%s: open failed (%d): %s", path, rc, err.msg);
    return d;
}

/* Tensor I of D must hold WANT[0..N-1] (the bits of doubles; any NaN
 * matches any NaN unless EXACT_NAN). */
static void expect_values(fpk_dump *d, size_t i, const uint64_t *want, uint64_t n,
                          bool exact_nan, const char *what)
{
    double *got = malloc((n ? n : 1) * sizeof *got);
    ck_assert_ptr_nonnull(got);
    fpk_error err = {0, ""};
    int rc = fpk_dump_read(d, i, 0, (size_t)n, got, &err);
    if (expect(rc == FPK_OK, "%s: read failed: %s", what, err.msg))
        for (uint64_t j = 0; j < n; j++) {
            uint64_t g = double_bits(got[j]);
            if (!exact_nan && is_nan_bits(want[j]) && is_nan_bits(g))
                g = want[j];
            tu_check(&rep, &fpk_fp64, (ref_result){want[j], 0}, g, 0, "%s element %" PRIu64,
                     what, j);
        }
    /* The raw read: the stored encodings in host order, which widen to
     * the same doubles, bit for bit. */
    fpk_dtype t = fpk_dump_tensor(d, i)->dtype;
    size_t size = fpk_dtype_size(t);
    unsigned char *raw = malloc((n ? n : 1) * size);
    ck_assert_ptr_nonnull(raw);
    rc = fpk_dump_read_raw(d, i, 0, (size_t)n, raw, &err);
    if (expect(rc == FPK_OK, "%s: raw read failed: %s", what, err.msg))
        for (uint64_t j = 0; j < n; j++) {
            uint64_t bits = 0;
            if (size == 1)
                bits = raw[j];
            else if (size == 2)
                bits = ((uint16_t *)(void *)raw)[j];
            else if (size == 4)
                bits = ((uint32_t *)(void *)raw)[j];
            else
                bits = ((uint64_t *)(void *)raw)[j];
            fpk_ctx c = fpk_ctx_default();
            uint64_t w = fpk_convert(&fpk_fp64, fpk_dtype_format(t), bits, &c);
            /* fpk_dump_read keeps NaN payloads as the raw encoding does */
            tu_check(&rep, &fpk_fp64, (ref_result){double_bits(got[j]), 0},
                     is_nan_bits(w) && is_nan_bits(double_bits(got[j])) ? double_bits(got[j]) : w,
                     0, "%s raw element %" PRIu64, what, j);
        }
    /* The view: the same bytes in place, given wherever the elements are
     * stored aligned and in host order. */
    const fpk_tensor *tt = fpk_dump_tensor(d, i);
    const void *view = &view;
    rc = fpk_dump_view(d, i, 0, (size_t)n, &view, &err);
    bool host_big = false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    host_big = true;
#endif
    bool viewable = n > 0 && tt->offset % size == 0 && (size == 1 || tt->big_endian == host_big);
    if (expect(rc == FPK_OK, "%s: view failed: %s", what, err.msg))
        expect(viewable ? view && memcmp(view, raw, (size_t)n * size) == 0 : view == NULL,
               "%s: view %s (offset %" PRIu64 ", %s-endian)", what,
               view ? "differs from the raw read" : "not given", tt->offset,
               tt->big_endian ? "big" : "little");
    free(raw);
    free(got);
}

static int exhaustive_or(int normal, int exhaustive)
{
    return tu_exhaustive() ? exhaustive : normal;
}

START_TEST(test_dtypes)
{
    begin_test();
    static const struct {
        fpk_dtype t;
        const char *name;
        const fpk_format *f;
        size_t size;
    } table[] = {
        {FPK_DTYPE_F64, "f64", &fpk_fp64, 8}, {FPK_DTYPE_F32, "f32", &fpk_fp32, 4},
        {FPK_DTYPE_F16, "f16", &fpk_fp16, 2}, {FPK_DTYPE_BF16, "bf16", &fpk_bf16, 2},
        {FPK_DTYPE_E4M3, "e4m3", &fpk_e4m3, 1}, {FPK_DTYPE_E5M2, "e5m2", &fpk_e5m2, 1},
    };
    ck_assert_int_eq(sizeof table / sizeof table[0], FPK_DTYPE_COUNT);
    for (size_t i = 0; i < FPK_DTYPE_COUNT; i++) {
        expect(strcmp(fpk_dtype_name(table[i].t), table[i].name) == 0, "name of %s", table[i].name);
        expect(fpk_dtype_format(table[i].t) == table[i].f, "format of %s", table[i].name);
        expect(fpk_dtype_size(table[i].t) == table[i].size, "size of %s", table[i].name);
    }
    expect(fpk_dtype_name((fpk_dtype)FPK_DTYPE_COUNT) == NULL, "name of a bad dtype");
    expect(fpk_dtype_size((fpk_dtype)-1) == 0, "size of a bad dtype");

    static const struct {
        const char *name;
        int t; /* -1: unknown */
    } names[] = {
        {"f64", FPK_DTYPE_F64}, {"fp64", FPK_DTYPE_F64}, {"float64", FPK_DTYPE_F64},
        {"double", FPK_DTYPE_F64}, {"F64", FPK_DTYPE_F64}, {"<f8", FPK_DTYPE_F64},
        {"f32", FPK_DTYPE_F32}, {"FP32", FPK_DTYPE_F32}, {"float32", FPK_DTYPE_F32},
        {"single", FPK_DTYPE_F32}, {"<f4", FPK_DTYPE_F32}, {"F32", FPK_DTYPE_F32},
        {"f16", FPK_DTYPE_F16}, {"half", FPK_DTYPE_F16}, {"binary16", FPK_DTYPE_F16},
        {"float16", FPK_DTYPE_F16}, {"<f2", FPK_DTYPE_F16}, {"F16", FPK_DTYPE_F16},
        {"bf16", FPK_DTYPE_BF16}, {"bfloat16", FPK_DTYPE_BF16}, {"BF16", FPK_DTYPE_BF16},
        {"<V2", FPK_DTYPE_BF16}, {"e4m3", FPK_DTYPE_E4M3}, {"e4m3fn", FPK_DTYPE_E4M3},
        {"E4M3FN", FPK_DTYPE_E4M3}, {"F8_E4M3", FPK_DTYPE_E4M3},
        {"float8_e4m3fn", FPK_DTYPE_E4M3}, {"e5m2", FPK_DTYPE_E5M2},
        {"F8_E5M2", FPK_DTYPE_E5M2}, {"float8_e5m2", FPK_DTYPE_E5M2}, {"<f1", FPK_DTYPE_E5M2},
        {"tf32", -1}, {">f4", -1}, {"<F4", -1}, {"I64", -1}, {"", -1}, {"e3m4", -1},
        {"float8", -1}, {"<V1", -1},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fpk_dtype t = (fpk_dtype)99;
        bool found = fpk_dtype_lookup(names[i].name, &t);
        expect(names[i].t < 0 ? !found : found && (int)t == names[i].t,
               "lookup \"%s\": found %d, dtype %d, expected %d", names[i].name, found, (int)t,
               names[i].t);
    }
    expect(!fpk_dtype_lookup(NULL, NULL), "lookup NULL");
    end_group("dtype table and names");
}
END_TEST

/* One fixture's .txt: what NumPy, ml_dtypes or safetensors hold in it. */
typedef struct expected_tensor {
    char name[128];
    fpk_dtype dtype;
    int big, fortran, ndim;
    uint64_t shape[FPK_MAX_DIMS];
    uint64_t count;
    uint64_t *bits;
} expected_tensor;

typedef struct expected_dump {
    char kind[32];
    size_t ntensors, nmeta;
    expected_tensor t[16];
    char meta[8][2][64];
} expected_dump;

static void read_expected(const char *path, expected_dump *e)
{
    memset(e, 0, sizeof *e);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    char line[512];
    expected_tensor *t = NULL;
    uint64_t k = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        if (t && k < t->count) {
            t->bits[k++] = strtoull(line, NULL, 16);
            continue;
        }
        char dtype[32];
        int used = 0;
        if (sscanf(line, "kind %31s", e->kind) == 1)
            continue;
        if (strncmp(line, "meta ", 5) == 0) {
            ck_assert_uint_lt(e->nmeta, 8);
            ck_assert_int_eq(sscanf(line, "meta %63s %63s", e->meta[e->nmeta][0],
                                    e->meta[e->nmeta][1]),
                             2);
            e->nmeta++;
            continue;
        }
        ck_assert_uint_lt(e->ntensors, 16);
        t = &e->t[e->ntensors++];
        ck_assert_int_eq(sscanf(line, "tensor %127s %31s %d %d %d%n", t->name, dtype, &t->big,
                                &t->fortran, &t->ndim, &used),
                         5);
        ck_assert(fpk_dtype_lookup(dtype, &t->dtype));
        const char *p = line + used;
        for (int i = 0; i < t->ndim; i++)
            t->shape[i] = strtoull(p, (char **)&p, 10);
        t->count = strtoull(p, NULL, 10);
        t->bits = malloc((t->count ? t->count : 1) * sizeof *t->bits);
        ck_assert_ptr_nonnull(t->bits);
        k = 0;
    }
    fclose(f);
    ck_assert_msg(!t || k == t->count, "%s is incomplete", path);
}

START_TEST(test_fixtures)
{
    begin_test();
    static const char *const files[] = {
        "f16.npy",          "f32-be-fortran.npy", "f64-v2.npy",        "f32-v3-scalar.npy",
        "bf16.npy",         "e5m2.npy",           "f16-be-empty.npy",  "model.safetensors",
        "f16-be.raw",
    };
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        char path[1200], txt[1300];
        snprintf(path, sizeof path, "%s/%s", FPK_TEST_DATA, files[fi]);
        snprintf(txt, sizeof txt, "%s.txt", path);
        expected_dump e;
        read_expected(txt, &e);
        fpk_raw_spec spec = {0};
        bool raw = strcmp(e.kind, "raw") == 0;
        if (raw) {
            spec.dtype = e.t[0].dtype;
            spec.big_endian = e.t[0].big;
            spec.ndim = e.t[0].ndim;
            memcpy(spec.shape, e.t[0].shape, sizeof spec.shape);
        }
        fpk_dump *d = must_open(path, raw ? &spec : NULL);
        expect(strcmp(fpk_dump_kind(d), e.kind) == 0, "%s: kind %s", files[fi], fpk_dump_kind(d));
        expect(strcmp(fpk_dump_path(d), path) == 0, "%s: path", files[fi]);
        expect(fpk_dump_ntensors(d) == e.ntensors, "%s: %zu tensors, expected %zu", files[fi],
               fpk_dump_ntensors(d), e.ntensors);
        for (size_t m = 0; m < e.nmeta; m++) {
            const char *v = fpk_dump_metadata(d, e.meta[m][0]);
            expect(v && strcmp(v, e.meta[m][1]) == 0, "%s: metadata %s", files[fi], e.meta[m][0]);
        }
        expect(fpk_dump_metadata(d, "absent") == NULL, "%s: absent metadata", files[fi]);
        expect(fpk_dump_tensor(d, e.ntensors) == NULL, "%s: tensor past the end", files[fi]);
        for (size_t i = 0; i < e.ntensors && i < fpk_dump_ntensors(d); i++) {
            const fpk_tensor *t = fpk_dump_tensor(d, i);
            const expected_tensor *w = &e.t[i];
            bool same = strcmp(t->name, w->name) == 0 && t->dtype == w->dtype &&
                        t->big_endian == (w->big != 0) && t->fortran_order == (w->fortran != 0) &&
                        t->ndim == w->ndim && t->count == w->count &&
                        memcmp(t->shape, w->shape, (size_t)w->ndim * sizeof w->shape[0]) == 0;
            expect(same, "%s: tensor %zu is %s %s ndim %d count %" PRIu64 ", expected %s %s",
                   files[fi], i, t->name, fpk_dtype_name(t->dtype), t->ndim, t->count, w->name,
                   fpk_dtype_name(w->dtype));
            char what[300];
            snprintf(what, sizeof what, "%s %s", files[fi], w->name);
            expect_values(d, i, w->bits, w->count, false, what);
        }
        fpk_dump_close(d);
        for (size_t i = 0; i < e.ntensors; i++)
            free(e.t[i].bits);
    }
    end_group("fixtures written by numpy, ml_dtypes and safetensors");
}
END_TEST

/* A set of encodings of F to write and what the reference reads them as. */
typedef struct sample {
    const fpk_format *f;
    size_t size, n;
    uint64_t *enc, *want;
} sample;

/* Every encoding of an 8- or 16-bit format; tu_gen samples of the wider. */
static sample make_sample(fpk_dtype t, tu_rng *rng)
{
    sample s = {fpk_dtype_format(t), fpk_dtype_size(t), 0, NULL, NULL};
    s.n = s.size <= 2 ? (size_t)1 << (8 * s.size) : (size_t)exhaustive_or(4096, 1 << 20);
    s.enc = malloc(s.n * sizeof *s.enc);
    s.want = malloc(s.n * sizeof *s.want);
    ck_assert(s.enc && s.want);
    fpk_ctx c = fpk_ctx_default();
    for (size_t i = 0; i < s.n; i++) {
        s.enc[i] = s.size <= 2 ? i : tu_gen(s.f, NULL, rng);
        s.want[i] = ref_convert(&fpk_fp64, s.f, s.enc[i], &c).bits;
    }
    return s;
}

static void free_sample(sample *s)
{
    free(s->enc);
    free(s->want);
}

static buf sample_data(const sample *s, bool big)
{
    buf b = {0};
    for (size_t i = 0; i < s->n; i++)
        put_elem(&b, s->enc[i], s->size, big);
    return b;
}

START_TEST(test_encodings)
{
    begin_test();
    tu_rng rng;
    tu_rng_init(&rng, seed);
    sample s[FPK_DTYPE_COUNT];
    for (int t = 0; t < FPK_DTYPE_COUNT; t++)
        s[t] = make_sample((fpk_dtype)t, &rng);
    char path[1200], label[64];

    /* .npy: every descr read, both byte orders where there are two. */
    static const struct {
        const char *descr;
        fpk_dtype t;
        bool big;
    } descrs[] = {
        {"<f8", FPK_DTYPE_F64, false},  {">f8", FPK_DTYPE_F64, true},
        {"<f4", FPK_DTYPE_F32, false},  {">f4", FPK_DTYPE_F32, true},
        {"<f2", FPK_DTYPE_F16, false},  {">f2", FPK_DTYPE_F16, true},
        {"<V2", FPK_DTYPE_BF16, false}, {">V2", FPK_DTYPE_BF16, true},
        {"<f1", FPK_DTYPE_E5M2, false}, {"|f1", FPK_DTYPE_E5M2, false},
    };
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++) {
        const sample *x = &s[descrs[i].t];
        char hdr[128];
        snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                 descrs[i].descr, x->n);
        buf data = sample_data(x, descrs[i].big);
        buf b = npy(1 + (int)(i % 3), hdr, &data);
        free(data.p);
        write_tmp(path, sizeof path, "enc.npy", &b);
        fpk_dump *d = must_open(path, NULL);
        const fpk_tensor *t = fpk_dump_tensor(d, 0);
        expect(t->dtype == descrs[i].t && t->big_endian == descrs[i].big && t->count == x->n &&
                   t->ndim == 1 && !t->fortran_order && strcmp(t->name, "enc.npy") == 0,
               "descr %s: tensor fields", descrs[i].descr);
        snprintf(label, sizeof label, ".npy %s", descrs[i].descr);
        expect_values(d, 0, x->want, x->n, true, label);
        fpk_dump_close(d);
        tu_report_line(&rep, "%s %s through .npy '%s' (version %d)",
                       x->size <= 2 ? "every encoding of" : "samples of", x->f->name,
                       descrs[i].descr, 1 + (int)(i % 3));
    }

    /* safetensors: all six dtypes in one file, with a gap between two. */
    static const char *const st_names[FPK_DTYPE_COUNT] = {"F64", "F32", "F16", "BF16", "F8_E4M3",
                                                          "F8_E5M2"};
    buf data = {0}, json = {0};
    put(&json, "{", 1);
    for (int t = 0; t < FPK_DTYPE_COUNT; t++) {
        size_t begin = data.n;
        buf one = sample_data(&s[t], false);
        put(&data, one.p, one.n);
        free(one.p);
        char entry[200];
        snprintf(entry, sizeof entry,
                 "%s\"t%d\": {\"dtype\": \"%s\", \"shape\": [%zu], \"data_offsets\": [%zu, %zu]}",
                 t ? ", " : "", t, st_names[t], s[t].n, begin, data.n);
        put(&json, entry, strlen(entry));
        if (t == 2)
            put(&data, "gap", 3);
    }
    put(&json, "}", 2);
    buf b = safetensors((char *)json.p, &data);
    free(json.p);
    free(data.p);
    write_tmp(path, sizeof path, "enc.safetensors", &b);
    fpk_dump *d = must_open(path, NULL);
    expect(fpk_dump_ntensors(d) == FPK_DTYPE_COUNT, "safetensors: tensor count");
    for (int t = 0; t < FPK_DTYPE_COUNT; t++) {
        const fpk_tensor *x = fpk_dump_tensor(d, (size_t)t);
        char name[16];
        snprintf(name, sizeof name, "t%d", t);
        expect(x && strcmp(x->name, name) == 0 && x->dtype == (fpk_dtype)t && !x->big_endian &&
                   x->count == s[t].n,
               "safetensors %s: tensor fields", st_names[t]);
        snprintf(label, sizeof label, "safetensors %s", st_names[t]);
        expect_values(d, (size_t)t, s[t].want, s[t].n, true, label);
    }
    fpk_dump_close(d);
    tu_report_line(&rep, "every 8/16-bit encoding, samples of f32/f64, through safetensors");

    /* raw: every dtype in both byte orders, one dimension and two. */
    for (int t = 0; t < FPK_DTYPE_COUNT; t++)
        for (int big = 0; big < 2; big++) {
            buf raw = sample_data(&s[t], big);
            write_tmp(path, sizeof path, "enc.raw", &raw);
            fpk_raw_spec spec = {.dtype = (fpk_dtype)t, .big_endian = big};
            if (big) {
                spec.ndim = 2;
                spec.shape[0] = 2;
                spec.shape[1] = s[t].n / 2;
            }
            d = must_open(path, &spec);
            const fpk_tensor *x = fpk_dump_tensor(d, 0);
            expect(strcmp(fpk_dump_kind(d), "raw") == 0 && x->dtype == (fpk_dtype)t &&
                       x->big_endian == big && x->ndim == (big ? 2 : 1) && x->count == s[t].n &&
                       x->shape[0] == (big ? 2 : s[t].n) && x->offset == 0,
                   "raw %s: tensor fields", fpk_dtype_name((fpk_dtype)t));
            snprintf(label, sizeof label, "raw %s %s", fpk_dtype_name((fpk_dtype)t),
                     big ? "big-endian" : "little-endian");
            expect_values(d, 0, s[t].want, s[t].n, true, label);
            fpk_dump_close(d);
        }
    for (int t = 0; t < FPK_DTYPE_COUNT; t++)
        free_sample(&s[t]);
    unlink(path);
    tmp_path(path, sizeof path, "enc.npy");
    unlink(path);
    tmp_path(path, sizeof path, "enc.safetensors");
    unlink(path);
    end_group("every 8/16-bit encoding, samples of f32/f64, raw in both byte orders");
}
END_TEST

/* Header forms NumPy and other writers produce, each opened and read. */
START_TEST(test_npy_headers)
{
    begin_test();
    static const struct {
        int version;
        const char *hdr;
        int ndim;
        uint64_t shape[3];
        bool fortran;
    } forms[] = {
        {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", 2, {2, 3}, false},
        {2, "{'descr': '<f2', 'fortran_order': True, 'shape': (2, 3), }", 2, {2, 3}, true},
        {3, "{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": (6,)}", 1, {6}, false},
        {1, "{'shape': (1, 2, 3), 'fortran_order': False, 'descr': '<f2'}", 3, {1, 2, 3}, false},
        {1, "{'descr':'<f2','fortran_order':False,'shape':(6,),}", 1, {6}, false},
        {1, "{\t'descr' :\t'<f2' , 'fortran_order' : False , 'shape' : ( 3L , 2L ) }", 2, {3, 2},
         false},
        {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3, 2,), }", 2, {3, 2}, false},
        {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (6, ), }", 1, {6}, false},
        {1, "{'descr': '<f2',\n 'fortran_order': False,\r\n 'shape': (\n3,\n2)\n}", 2, {3, 2},
         false},
    };
    /* 1, -0, 2^-24, inf, 65504, NaN as fp16, and the doubles they are. */
    static const uint64_t enc[6] = {0x3c00, 0x8000, 0x0001, 0x7c00, 0x7bff, 0x7e00};
    static const uint64_t want[6] = {0x3ff0000000000000, 0x8000000000000000, 0x3e70000000000000,
                                     0x7ff0000000000000, 0x40effc0000000000, 0x7ff8000000000000};
    char path[1200];
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        buf data = {0};
        for (int j = 0; j < 6; j++)
            put_elem(&data, enc[j], 2, false);
        buf b = npy(forms[i].version, forms[i].hdr, &data);
        uint64_t offset = b.n - data.n;
        free(data.p);
        write_tmp(path, sizeof path, "form.npy", &b);
        fpk_dump *d = must_open(path, NULL);
        const fpk_tensor *t = fpk_dump_tensor(d, 0);
        expect(fpk_dump_ntensors(d) == 1 && t->ndim == forms[i].ndim && t->count == 6 &&
                   memcmp(t->shape, forms[i].shape, (size_t)t->ndim * sizeof t->shape[0]) == 0 &&
                   t->fortran_order == forms[i].fortran && t->dtype == FPK_DTYPE_F16 &&
                   t->offset == offset &&
                   strcmp(fpk_dump_kind(d), "npy") == 0 && fpk_dump_metadata(d, "descr") == NULL,
               "header %s: fields", forms[i].hdr);
        expect_values(d, 0, want, 6, true, forms[i].hdr);
        fpk_dump_close(d);
    }

    /* A header padded without the newline, one with only the newline (not
     * 64-aligned: old NumPy aligned to 16), and a 0-d array. */
    const char *unpadded = "{'descr': '>f2', 'fortran_order': False, 'shape': (), }  ";
    buf b = {0};
    put(&b, "\x93NUMPY\x01\x00", 8);
    put_le(&b, strlen(unpadded), 2);
    put(&b, unpadded, strlen(unpadded));
    put_elem(&b, 0x3c00, 2, true);
    write_tmp(path, sizeof path, "scalar.npy", &b);
    fpk_dump *d = must_open(path, NULL);
    const fpk_tensor *t = fpk_dump_tensor(d, 0);
    expect(t->ndim == 0 && t->count == 1 && t->big_endian, "0-d unpadded: fields");
    expect_values(d, 0, want, 1, true, "0-d unpadded");
    fpk_dump_close(d);
    unlink(path);

    /* Zero-size: (0, 3) with no data, and an empty tuple dimension. */
    b = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 18446744073709551615), }",
            NULL);
    write_tmp(path, sizeof path, "empty.npy", &b);
    d = must_open(path, NULL);
    t = fpk_dump_tensor(d, 0);
    expect(t->count == 0 && t->shape[1] == UINT64_MAX, "zero-size with a huge dimension");
    double x;
    fpk_error err;
    expect(fpk_dump_read(d, 0, 0, 0, &x, &err) == FPK_OK, "empty read of a zero-size tensor");
    fpk_dump_close(d);
    unlink(path);
    tmp_path(path, sizeof path, "form.npy");
    unlink(path);
    end_group("hand-made .npy headers");
}
END_TEST

START_TEST(test_safetensors_headers)
{
    begin_test();
    /* 1, 2^-9, 448, NaN, -0 as e4m3, then 2^-133 and -inf as bf16. */
    buf data = {0};
    static const uint64_t e4m3[5] = {0x38, 0x01, 0x7e, 0x7f, 0x80};
    static const uint64_t want[5] = {0x3ff0000000000000, 0x3f60000000000000, 0x407c000000000000,
                                     0x7ff8000000000000, 0x8000000000000000};
    for (int i = 0; i < 5; i++)
        put_elem(&data, e4m3[i], 1, false);
    put_elem(&data, 0x0001, 2, false);
    put_elem(&data, 0xff80, 2, false);
    static const uint64_t want_bf16[2] = {0x37a0000000000000, 0xfff0000000000000};
    /* Keys in any order, metadata between tensors, an empty tensor, space
     * padding after the JSON. */
    const char *valid =
        "{\"z\": {\"shape\": [2], \"data_offsets\": [5, 9], \"dtype\": \"BF16\"},"
        " \"__metadata__\": {\"step\": \"12\", \"format\": \"pt\", \"\": \"e\"},"
        " \"a\": {\"dtype\": \"F8_E4M3\", \"shape\": [5], \"data_offsets\": [0, 5]},"
        " \"s\": {\"dtype\": \"F32\", \"shape\": [0, 4], \"data_offsets\": [5, 5]}}"
        "      ";
    char path[1200];
    buf b = safetensors(valid, &data);
    write_tmp(path, sizeof path, "h.safetensors", &b);
    fpk_dump *d = must_open(path, NULL);
    uint64_t data_start = 8 + strlen(valid);
    expect(fpk_dump_ntensors(d) == 3 && strcmp(fpk_dump_kind(d), "safetensors") == 0,
           "safetensors: 3 tensors");
    const fpk_tensor *z = fpk_dump_tensor(d, 0), *a = fpk_dump_tensor(d, 1),
                     *s = fpk_dump_tensor(d, 2);
    expect(strcmp(z->name, "z") == 0 && strcmp(a->name, "a") == 0 && strcmp(s->name, "s") == 0,
           "safetensors: names in file order");
    expect(z->dtype == FPK_DTYPE_BF16 && z->offset == data_start + 5 && z->count == 2 &&
               a->dtype == FPK_DTYPE_E4M3 && a->offset == data_start && a->count == 5 &&
               s->count == 0 && s->ndim == 2,
           "safetensors: fields");
    const char *step = fpk_dump_metadata(d, "step"), *empty = fpk_dump_metadata(d, "");
    expect(step && strcmp(step, "12") == 0 && empty && strcmp(empty, "e") == 0 &&
               fpk_dump_metadata(d, "steps") == NULL,
           "safetensors: metadata");
    expect_values(d, 1, want, 5, true, "safetensors e4m3");
    expect_values(d, 0, want_bf16, 2, true, "safetensors bf16");
    fpk_dump_close(d);

    unlink(path);

    /* No tensors at all, and only metadata. */
    b = safetensors("{}", NULL);
    write_tmp(path, sizeof path, "none.safetensors", &b);
    d = must_open(path, NULL);
    expect(fpk_dump_ntensors(d) == 0, "empty safetensors");
    fpk_dump_close(d);
    b = safetensors("{\"__metadata__\": {}}", NULL);
    write_tmp(path, sizeof path, "none.safetensors", &b);
    d = must_open(path, NULL);
    expect(fpk_dump_ntensors(d) == 0 && fpk_dump_metadata(d, "x") == NULL, "metadata only");
    fpk_dump_close(d);
    unlink(path);
    free(data.p);
    end_group("hand-made safetensors headers");
}
END_TEST

/* Every proper prefix of the file at PATH is refused with the file named
 * (every section boundary is among them); with LONGER, so is the file with
 * one byte more. */
static void expect_prefixes_refused(const char *path, const char *name, bool longer)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char whole[4096];
    size_t n = fread(whole, 1, sizeof whole - 1, f);
    fclose(f);
    ck_assert_uint_lt(n, sizeof whole - 1);
    char tmp[1200];
    tmp_path(tmp, sizeof tmp, name);
    for (size_t k = 0; k < n; k++) {
        write_file(tmp, whole, k);
        expect_open_error(tmp, NULL, FPK_EFORMAT, "");
    }
    if (longer) {
        whole[n] = 0;
        write_file(tmp, whole, n + 1);
        expect_open_error(tmp, NULL, FPK_EFORMAT, "long by 1");
    }
    unlink(tmp);
}

START_TEST(test_truncated)
{
    begin_test();
    static const char *const files[] = {"f16.npy", "f32-v3-scalar.npy", "bf16.npy",
                                        "model.safetensors"};
    static const char *const names[][2] = {{"t.npy", "t-npy"},
                                           {"t.npy", "t-npy"},
                                           {"t.npy", "t-npy"},
                                           {"t.safetensors", "t-safetensors"}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", FPK_TEST_DATA, files[i]);
        for (int j = 0; j < 2; j++)
            expect_prefixes_refused(path, names[i][j], i < 3);
    }
    end_group("every truncation of the fixtures, and .npy one byte long");
}
END_TEST

/* Random corruptions of the fixtures: each either opens, and then every
 * element of every tensor reads, or fails with EFORMAT and the file named. */
START_TEST(test_corrupt)
{
    begin_test();
    static const char *const files[] = {"f16.npy", "f64-v2.npy", "f32-be-fortran.npy",
                                        "model.safetensors"};
    static const char tokens[] = "{}[](),:'\" 0123456789-+eEL.\n\\TrueFalse";
    tu_rng rng;
    tu_rng_init(&rng, seed + 1);
    int rounds = exhaustive_or(400, 40000);
    uint64_t opened = 0, refused = 0;
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        char src[1200], path[1200];
        snprintf(src, sizeof src, "%s/%s", FPK_TEST_DATA, files[fi]);
        FILE *f = fopen(src, "rb");
        ck_assert_ptr_nonnull(f);
        unsigned char whole[2048], bytes[2049];
        size_t n = fread(whole, 1, sizeof whole, f);
        fclose(f);
        ck_assert_uint_lt(n, sizeof whole);
        tmp_path(path, sizeof path, strstr(files[fi], ".npy") ? "c.npy" : "c.safetensors");
        size_t header = fi < 3 ? 128 : n - 300; /* mostly hit the header */
        for (int r = 0; r < rounds; r++) {
            memcpy(bytes, whole, n);
            size_t len = n;
            size_t at = (size_t)tu_rng_below(&rng, header);
            switch (tu_rng_below(&rng, 4)) {
            case 0: /* a random byte */
                bytes[at] = (unsigned char)tu_rng_below(&rng, 256);
                break;
            case 1: /* a token character */
                bytes[at] = (unsigned char)tokens[tu_rng_below(&rng, sizeof tokens - 1)];
                break;
            case 2: /* a byte removed */
                memmove(bytes + at, bytes + at + 1, n - at - 1);
                len--;
                break;
            default: /* a byte repeated */
                memmove(bytes + at + 1, bytes + at, n - at);
                len++;
                break;
            }
            write_file(path, bytes, len);
            fpk_dump *d = NULL;
            fpk_error err = {0, ""};
            int rc = fpk_dump_open(path, NULL, &d, &err);
            if (rc != FPK_OK) {
                refused++;
                expect(rc == FPK_EFORMAT && d == NULL && strstr(err.msg, path) == err.msg,
                       "corrupt %s: %d %s", files[fi], rc, err.msg);
                continue;
            }
            opened++;
            bool ok = true;
            for (size_t i = 0; i < fpk_dump_ntensors(d) && ok; i++) {
                const fpk_tensor *t = fpk_dump_tensor(d, i);
                ok = t->count <= len && t->offset + t->count * fpk_dtype_size(t->dtype) <= len;
                double x[64];
                for (uint64_t first = 0; first < t->count && ok; first += 64) {
                    size_t k = t->count - first < 64 ? (size_t)(t->count - first) : 64;
                    ok = fpk_dump_read(d, i, first, k, x, &err) == FPK_OK;
                }
            }
            expect(ok, "corrupt %s opened but does not read: %s", files[fi], err.msg);
            fpk_dump_close(d);
        }
        unlink(path);
    }
    printf("%s: corrupted fixtures: %" PRIu64 " opened and read, %" PRIu64 " refused\n", SUITE,
           opened, refused);
    end_group("random corruptions of the fixtures");
}
END_TEST

START_TEST(test_bad_npy)
{
    begin_test();
    static const struct {
        const char *hdr;
        const char *want;
    } bad[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, -1), }",
         "header shape (3, -1) is not valid"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", "(N,)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,,), }", "header shape (3,,)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }", "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (03,), }", "leading zero"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,), }", "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0x10,), }", "not valid"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [3], }", "tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,", "not valid"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,), }",
         "2^64-1"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': "
         "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }",
         "more than 32 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
         "exceeds 2^64 bytes"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }",
         "exceeds 2^64 bytes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }",
         "header promises 4398046511104 bytes of data from byte"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", "'<i4' is not a supported"},
        {"{'descr': '<F4', 'fortran_order': False, 'shape': (1,), }", "'<F4' is not a supported"},
        {"{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", "no byte order"},
        {"{'descr': '=f2', 'fortran_order': False, 'shape': (1,), }", "no byte order"},
        {"{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }", "no byte order"},
        {"{'descr': '<V1', 'fortran_order': False, 'shape': (1,), }", "ml_dtypes"},
        {"{'descr': '', 'fortran_order': False, 'shape': (1,), }", "'' is not a supported"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "structured"},
        {"{'descr': '<f4', 'fortran_order': False, }", "no 'shape' key"},
        {"{'fortran_order': False, 'shape': (1,), }", "no 'descr' key"},
        {"{'descr': '<f4', 'shape': (1,), }", "no 'fortran_order' key"},
        {"{}", "no 'descr' key"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
         "'descr' appears twice"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1, }", "'extra' is not"},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,), }", "True or False"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }", "True or False"},
        {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,), }", "True or False"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }", "'<f4, ' is not a supported"},
        {"{'descr': '<f4\", 'fortran_order': False, 'shape': (1,), }", "is not a supported"},
        {"{'descr': '<\tf4', 'fortran_order': False, 'shape': (1,), }", "closing quote"},
        {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,), }", "no escapes"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,), }", "',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,), }", "expected ':'"},
        {"{descr: '<f4', 'fortran_order': False, 'shape': (1,), }", "quoted key"},
        {"{,}", "quoted key"},
        {" {'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x", "only padding"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }}", "only padding"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ", "quoted key or '}'"},
        {"", "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n{", "only padding"},
        {"{'descr': 'a very long descr that goes on and on', 'fortran_order': False, }",
         "string too long"},
        {"{'descr': '<f\xc3\xa9', 'fortran_order': False, 'shape': (1,), }", "closing quote"},
    };
    char name[32];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf data = {0};
        put_le(&data, 0x3f800000, 4);
        snprintf(name, sizeof name, "bad%zu.npy", i);
        expect_bad(name, npy(1 + (int)(i % 3), bad[i].hdr, &data), FPK_EFORMAT, bad[i].want);
        free(data.p);
    }
    /* Exact messages for the examples in the documentation. */
    char path[1200];
    buf b = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -1), }", NULL);
    write_tmp(path, sizeof path, "grads.npy", &b);
    fpk_dump *d;
    fpk_error err;
    char want[1400];
    expect(fpk_dump_open(path, NULL, &d, &err) == FPK_EFORMAT, "grads.npy: code");
    snprintf(want, sizeof want, "%s: header shape (3, -1) is not valid: expected a non-negative "
             "integer at byte 64", path);
    expect(strcmp(err.msg, want) == 0, "message \"%s\", expected \"%s\"", err.msg, want);
    unlink(path);

    buf data = {0};
    for (int i = 0; i < 9; i++)
        put_le(&data, 0, 4);
    b = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1024,), }", &data);
    write_tmp(path, sizeof path, "x.npy", &b);
    expect(fpk_dump_open(path, NULL, &d, &err) == FPK_EFORMAT, "x.npy: code");
    snprintf(want, sizeof want, "%s: file is 164 bytes, header promises 4096 bytes of data from "
             "byte 128 (short by 4060)", path);
    expect(strcmp(err.msg, want) == 0, "message \"%s\", expected \"%s\"", err.msg, want);
    unlink(path);
    free(data.p);

    /* The prefix: magic, version, header length. */
    struct {
        const char *bytes;
        size_t n;
        const char *want;
    } prefixes[] = {
        {"\x93NUMPX\x01\x00\x10\x00", 10, "no .npy magic"},
        {"\x93NUMPY\x04\x00\x10\x00", 10, "version 4.0"},
        {"\x93NUMPY\x00\x00\x10\x00", 10, "version 0.0"},
        {"\x93NUMPY\x01\x01\x10\x00", 10, "version 1.1"},
        {"\x93NUMPY\x02\x00\x00\x00\x20\x00", 12, "exceeds the limit of 1048576"},
        {"\x93NUMPY\x02\x00\xff\xff\xff\xff", 12, "exceeds the limit"},
        {"\x93NUMPY\x01\x00\xff\xff", 10, "header runs to byte 65545"},
        {"\x93NUMPY\x03\x00\x00\x00\x10\x00", 12, "header runs to byte 1048588"},
        {"\x93NUMPY\x01\x00\x00\x00", 10, "expected '{'"},
        {"\x93NUMPY\x01\x00\x01\x00\x00", 11, "byte 0x00"},
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        buf p = {0};
        put(&p, prefixes[i].bytes, prefixes[i].n);
        snprintf(name, sizeof name, "prefix%zu.npy", i);
        expect_bad(name, p, FPK_EFORMAT, prefixes[i].want);
    }
    /* Data one element long and one byte long. */
    buf one = {0};
    put_le(&one, 0, 5);
    buf b1 = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &one);
    expect_bad("long.npy", b1, FPK_EFORMAT, "long by 1");
    free(one.p);
    end_group("malformed .npy");
}
END_TEST

START_TEST(test_bad_safetensors)
{
    begin_test();
    static const struct {
        const char *json;
        size_t data; /* bytes of data after the header */
        const char *want;
    } bad[] = {
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 12]}}", 16,
         "tensor \"w\" has data_offsets [0, 12] but shape [2, 2] x 4 bytes needs 16"},
        {"{\"w\": {\"dtype\": \"F6_E2M3\", \"shape\": [2], \"data_offsets\": [0, 16]}}", 16,
         "tensor \"w\" has dtype \"F6_E2M3\""},
        {"{\"w\": {\"dtype\": \"f32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 16,
         "dtype \"f32\""},
        {"{\"w\": {\"dtype\": 4, \"shape\": [2], \"data_offsets\": [0, 8]}}", 16, "no string"},
        {"{\"w\": {\"shape\": [2], \"data_offsets\": [0, 8]}}", 16, "no string \"dtype\""},
        {"{\"w\": {\"dtype\": \"F32\", \"data_offsets\": [0, 8]}}", 16, "no \"shape\" list"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": 2, \"data_offsets\": [0, 8]}}", 16,
         "no \"shape\" list"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2, -1], \"data_offsets\": [0, 8]}}", 16,
         "dimension 1 not a non-negative integer"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2.0], \"data_offsets\": [0, 8]}}", 16,
         "dimension 0"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [\"2\"], \"data_offsets\": [0, 8]}}", 16,
         "dimension 0"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
         "1,1,1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 4]}}",
         16, "33 dimensions"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], \"data_offsets\": [0, "
         "8]}}",
         16, "over 2^64 bytes"},
        {"{\"w\": {\"dtype\": \"F64\", \"shape\": [2305843009213693952], \"data_offsets\": [0, "
         "8]}}",
         16, "over 2^64 bytes"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2]}}", 16, "needs \"data_offsets\""},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0]}}", 16,
         "needs \"data_offsets\""},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8, 9]}}", 16,
         "needs \"data_offsets\""},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [-8, 0]}}", 16,
         "needs \"data_offsets\""},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [8, 0]}}", 16,
         "needs \"data_offsets\""},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": {\"0\": 8}}}", 16,
         "needs \"data_offsets\""},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [12, 20]}}", 16,
         "data_offsets [12, 20] past the end of the data: 16 bytes"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2305843009213693950], \"data_offsets\": [0, "
         "9223372036854775800]}}",
         16, "past the end of the data"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, \"b\": "
         "{\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [6, 14]}}",
         16, "tensors \"a\" [0, 8] and \"b\" [6, 14] overlap"},
        {"{\"b\": {\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [4, 12]}, \"a\": "
         "{\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}",
         16, "overlap"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, \"b\": "
         "{\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}",
         16, "overlap"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8], \"extra\": 1}}",
         16, "unknown field \"extra\""},
        {"{\"w\": [1, 2]}", 16, "tensor \"w\" is not a JSON object"},
        {"{\"__metadata__\": {\"step\": 3}}", 0, "__metadata__ \"step\" is not a string"},
        {"{\"__metadata__\": [\"step\"]}", 0, "__metadata__ is not a JSON object"},
        {"[1, 2]", 0, "not a JSON object"},
        {"{\"w\": ", 0, "header JSON at byte"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}", 16,
         "header JSON at byte"},
        {"{\"w\": {}, \"w\": {}}", 0, "duplicate"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [99999999999999999999], \"data_offsets\": [0, "
         "8]}}",
         16, "header JSON"},
        {"{\"w\": NaN}", 0, "header JSON"},
        {"{} trailing", 0, "header JSON"},
        {"{\"a\\u0000b\": {}}", 0, "header JSON"},
        {"{\"\x01\xff\": {\"dtype\": \"X\"}}", 0, "header JSON"},
        {"{\"\\u0001q\": {\"dtype\": \"X\"}}", 0, "tensor \"?q\" has dtype \"X\""},
        {"{\"\x01q\": {\"dtype\": \"X\"}}", 0, "header JSON"},
    };
    char name[32];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf data = {0};
        for (size_t j = 0; j < bad[i].data; j++)
            put(&data, "\0", 1);
        snprintf(name, sizeof name, "bad%zu.safetensors", i);
        expect_bad(name, safetensors(bad[i].json, &data), FPK_EFORMAT, bad[i].want);
        free(data.p);
    }
    /* Header lengths: zero, over the limit, past the end of the file. */
    struct {
        uint64_t n;
        const char *want;
    } lengths[] = {
        {0, "header length 0 at byte 0 is not between 1 and 100000000"},
        {100000001, "header length 100000001"},
        {UINT64_MAX, "header length 18446744073709551615"},
        {64, "header runs to byte 72"},
    };
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        buf b = {0};
        put_le(&b, lengths[i].n, 8);
        put(&b, "{}", 2);
        snprintf(name, sizeof name, "len%zu.safetensors", i);
        expect_bad(name, b, FPK_EFORMAT, lengths[i].want);
    }
    end_group("malformed safetensors");
}
END_TEST

START_TEST(test_bad_raw)
{
    begin_test();
    char path[1200];
    buf b = {0};
    put_le(&b, 0, 6);
    write_tmp(path, sizeof path, "six.raw", &b);
    fpk_raw_spec spec = {.dtype = FPK_DTYPE_F32};
    expect_open_error(path, &spec, FPK_EFORMAT, "not a whole number of 4-byte f32 elements");
    spec.dtype = FPK_DTYPE_F16;
    spec.ndim = 2;
    spec.shape[0] = 2;
    spec.shape[1] = 2;
    expect_open_error(path, &spec, FPK_EFORMAT, "raw shape [2, 2] does not hold the file's 3 f16");
    spec.shape[0] = UINT64_C(1) << 32;
    spec.shape[1] = UINT64_C(1) << 32;
    expect_open_error(path, &spec, FPK_EFORMAT, "does not hold");
    spec.shape[0] = 3;
    spec.shape[1] = 1;
    fpk_dump *d = must_open(path, &spec);
    fpk_dump_close(d);
    spec.ndim = FPK_MAX_DIMS + 1;
    expect_open_error(path, &spec, FPK_ERANGE, "dimensions");
    spec.ndim = -1;
    expect_open_error(path, &spec, FPK_ERANGE, "dimensions");
    spec.ndim = 0;
    spec.dtype = (fpk_dtype)FPK_DTYPE_COUNT;
    expect_open_error(path, &spec, FPK_ERANGE, "not a dtype");
    unlink(path);

    /* An empty raw file is a tensor of no elements. */
    write_tmp(path, sizeof path, "empty.raw", &b);
    spec = (fpk_raw_spec){.dtype = FPK_DTYPE_E4M3};
    d = must_open(path, &spec);
    expect(fpk_dump_tensor(d, 0)->count == 0 && fpk_dump_tensor(d, 0)->shape[0] == 0,
           "empty raw file");
    fpk_dump_close(d);
    unlink(path);
    end_group("raw specs");
}
END_TEST

/* Not files, empty files, unknown contents, files that shrink. */
START_TEST(test_not_dumps)
{
    begin_test();
    char path[1200];
    static const char *const empties[] = {"empty.npy", "empty.safetensors", "empty"};
    for (size_t i = 0; i < 3; i++) {
        buf b = {0};
        write_tmp(path, sizeof path, empties[i], &b);
        expect_open_error(path, NULL, FPK_EFORMAT, "file is empty");
        unlink(path);
    }
    buf b = {0};
    put(&b, "hello, world\n", 13);
    write_tmp(path, sizeof path, "hello.txt", &b);
    expect_open_error(path, NULL, FPK_EFORMAT, "neither a .npy file");
    unlink(path);
    put(&b, "hello, world\n", 13);
    write_tmp(path, sizeof path, "hello.npy", &b);
    expect_open_error(path, NULL, FPK_EFORMAT, "no .npy magic");
    unlink(path);
    put(&b, "hello, world\n", 13);
    write_tmp(path, sizeof path, "hello.safetensors", &b);
    expect_open_error(path, NULL, FPK_EFORMAT, "header length");
    unlink(path);

    tmp_path(path, sizeof path, "missing.npy");
    expect_open_error(path, NULL, FPK_EIO, "No such file");
    expect_open_error(tmpdir, NULL, FPK_EIO, "is a directory");
    expect_open_error("/dev/null", NULL, FPK_EIO, "not a regular file");
    fpk_raw_spec spec = {.dtype = FPK_DTYPE_F32};
    expect_open_error("/dev/null", &spec, FPK_EIO, "not a regular file");
    tmp_path(path, sizeof path, "fifo.npy");
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    alarm(60); /* opening a FIFO must not wait for a writer */
    expect_open_error(path, NULL, FPK_EIO, "not a regular file");
    alarm(0);
    unlink(path);

    /* A file that shrinks after it was opened: reads fail, nothing worse. */
    char src[1200];
    snprintf(src, sizeof src, "%s/f16.npy", FPK_TEST_DATA);
    FILE *f = fopen(src, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char bytes[512];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    tmp_path(path, sizeof path, "shrink.npy");
    write_file(path, bytes, n);
    fpk_dump *d = must_open(path, NULL);
    ck_assert_int_eq(truncate(path, (off_t)(n - 3)), 0);
    double x[15];
    fpk_error err = {0, ""};
    int rc = fpk_dump_read(d, 0, 0, 15, x, &err);
    expect(rc == FPK_EIO && err.code == FPK_EIO && strstr(err.msg, path) == err.msg &&
               strstr(err.msg, "file ends at byte"),
           "read of a shrunk file: %d %s", rc, err.msg);
    expect(fpk_dump_read(d, 0, 0, 13, x, &err) == FPK_OK, "the part still there reads");
    uint16_t raw[15];
    rc = fpk_dump_read_raw(d, 0, 0, 15, raw, &err);
    expect(rc == FPK_EIO && strstr(err.msg, path) == err.msg && strstr(err.msg, "file ends at byte"),
           "raw read of a shrunk file: %d %s", rc, err.msg);
    expect(fpk_dump_read_raw(d, 0, 0, 13, raw, &err) == FPK_OK, "the part still there reads raw");
    fpk_dump_close(d);
    unlink(path);
    /* A view of a file cut short within its first page is given (its pages
     * are not read then), but reading it in a later page raises SIGBUS, as
     * fpkit.h says: in a child. */
    buf data = {0};
    for (int i = 0; i < 8192; i++)
        put_elem(&data, (uint64_t)i, 2, false);
    buf big = npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (8192,), }", &data);
    free(data.p);
    write_tmp(path, sizeof path, "shrink-view.npy", &big);
    d = must_open(path, NULL);
    const void *view = NULL;
    expect(fpk_dump_view(d, 0, 0, 8192, &view, &err) == FPK_OK && view, "view of a dump");
    ck_assert_int_eq(truncate(path, 1000), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        signal(SIGBUS, SIG_DFL);
        volatile uint16_t sink = ((const volatile uint16_t *)view)[8000];
        (void)sink;
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
           "reading a view past the end of a shrunk file: status 0x%x, not SIGBUS", status);
    fpk_dump_close(d);
    unlink(path);
    fpk_dump_close(NULL);
    end_group("not dumps: empty, unknown, missing, directory, device, FIFO, shrunk");
}
END_TEST

/* Element ranges: odd-sized chunks equal a whole read; bad ranges fail. */
START_TEST(test_chunks)
{
    begin_test();
    char path[1200];
    buf data = {0};
    const size_t n = 7 * 10001; /* more than the readers' internal chunk */
    for (size_t i = 0; i < n; i++)
        put_elem(&data, (i * 40503) & 0xffff, 2, true);
    buf b = npy(1, "{'descr': '>f2', 'fortran_order': True, 'shape': (7, 10001), }", &data);
    free(data.p);
    write_tmp(path, sizeof path, "chunks.npy", &b);
    fpk_dump *d = must_open(path, NULL);
    double *whole = malloc(n * sizeof *whole), *part = malloc(n * sizeof *part);
    ck_assert(whole && part);
    fpk_error err = {0, ""};
    ck_assert_int_eq(fpk_dump_read(d, 0, 0, n, whole, &err), FPK_OK);
    fpk_ctx c = fpk_ctx_default();
    for (size_t i = 0; i < n; i++)
        tu_check(&rep, &fpk_fp64,
                 (ref_result){ref_convert(&fpk_fp64, &fpk_fp16, (i * 40503) & 0xffff, &c).bits, 0},
                 double_bits(whole[i]), 0, "whole read, element %zu", i);
    static const size_t sizes[] = {1, 2, 3, 7, 4093, 8191, 8192, 8193, 65535, 70000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        memset(part, 0xff, n * sizeof *part);
        for (size_t first = 0; first < n; first += sizes[si]) {
            size_t k = n - first < sizes[si] ? n - first : sizes[si];
            ck_assert_int_eq(fpk_dump_read(d, 0, first, k, part + first, &err), FPK_OK);
        }
        expect(memcmp(part, whole, n * sizeof *part) == 0, "chunks of %zu differ from a whole read",
               sizes[si]);
    }
    tu_rng rng;
    tu_rng_init(&rng, seed);
    for (int r = 0; r < 200; r++) {
        size_t first = (size_t)tu_rng_below(&rng, n + 1);
        size_t k = (size_t)tu_rng_below(&rng, n - first + 1);
        ck_assert_int_eq(fpk_dump_read(d, 0, first, k, part, &err), FPK_OK);
        expect(memcmp(part, whole + first, k * sizeof *part) == 0, "elements %zu..+%zu", first, k);
    }
    /* Out of range. */
    struct {
        size_t i;
        uint64_t first;
        size_t k;
    } out[] = {{1, 0, 1},  {0, n, 1},          {0, n + 1, 0},
               {0, 1, n}, {0, UINT64_MAX, 2}, {0, 5, SIZE_MAX}};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        err = (fpk_error){0, ""};
        int rc = fpk_dump_read(d, out[i].i, out[i].first, out[i].k, part, &err);
        expect(rc == FPK_ERANGE && err.code == FPK_ERANGE && strstr(err.msg, path) == err.msg &&
                   strstr(err.msg, "requested"),
               "read %zu %" PRIu64 " %zu: %d %s", out[i].i, out[i].first, out[i].k, rc, err.msg);
    }
    /* Raw reads: the same elements as stored, in host order, and the same
     * range checks. */
    uint16_t *raw = malloc(n * sizeof *raw), *rawpart = malloc(n * sizeof *rawpart);
    ck_assert(raw && rawpart);
    ck_assert_int_eq(fpk_dump_read_raw(d, 0, 0, n, raw, &err), FPK_OK);
    for (size_t i = 0; i < n; i++)
        expect(raw[i] == ((i * 40503) & 0xffff), "raw element %zu: 0x%04x", i, raw[i]);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        memset(rawpart, 0xff, n * sizeof *rawpart);
        for (size_t first = 0; first < n; first += sizes[si]) {
            size_t k = n - first < sizes[si] ? n - first : sizes[si];
            ck_assert_int_eq(fpk_dump_read_raw(d, 0, first, k, rawpart + first, &err), FPK_OK);
        }
        expect(memcmp(raw, rawpart, n * sizeof *raw) == 0, "raw chunks of %zu differ", sizes[si]);
    }
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        err = (fpk_error){0, ""};
        int rc = fpk_dump_read_raw(d, out[i].i, out[i].first, out[i].k, rawpart, &err);
        expect(rc == FPK_ERANGE && strstr(err.msg, path) == err.msg && strstr(err.msg, "requested"),
               "raw read %zu %" PRIu64 " %zu: %d %s", out[i].i, out[i].first, out[i].k, rc,
               err.msg);
    }
    expect(fpk_dump_read_raw(d, 0, n, 0, rawpart, NULL) == FPK_OK, "empty raw read at the end");
    /* Views: none of these big-endian elements; of the same elements
     * stored little-endian, any range in place; the same range checks. */
    const void *v = &v;
    ck_assert_int_eq(fpk_dump_view(d, 0, 0, n, &v, &err), FPK_OK);
    expect(v == NULL, "a view of big-endian elements");
    buf le = {0};
    for (size_t i = 0; i < n; i++)
        put_elem(&le, (i * 40503) & 0xffff, 2, false);
    b = npy(1, "{'descr': '<f2', 'fortran_order': True, 'shape': (7, 10001), }", &le);
    free(le.p);
    char le_path[1200];
    write_tmp(le_path, sizeof le_path, "chunks-le.npy", &b);
    fpk_dump *dl = must_open(le_path, NULL);
    for (int r = 0; r < 200; r++) {
        size_t first = (size_t)tu_rng_below(&rng, n + 1);
        size_t k = (size_t)tu_rng_below(&rng, n - first + 1);
        ck_assert_int_eq(fpk_dump_view(dl, 0, first, k, &v, &err), FPK_OK);
        expect(k == 0 ? v == NULL : v && memcmp(v, raw + first, k * sizeof *raw) == 0,
               "view of elements %zu..+%zu", first, k);
        /* given back, its pages map again when read */
        fpk_dump_unview(dl, v, k * sizeof *raw);
        expect(k == 0 || memcmp(v, raw + first, k * sizeof *raw) == 0,
               "view of elements %zu..+%zu, given back", first, k);
    }
    fpk_dump_unview(dl, raw, n * sizeof *raw); /* not a view: left alone */
    expect(raw[n / 2] == ((n / 2 * 40503) & 0xffff), "memory not a view's given back");
    fpk_dump_unview(d, NULL, 0);
    fpk_dump_close(dl);
    unlink(le_path);
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        err = (fpk_error){0, ""};
        const void *v = &v;
        int rc = fpk_dump_view(d, out[i].i, out[i].first, out[i].k, &v, &err);
        expect(rc == FPK_ERANGE && v == NULL && strstr(err.msg, path) == err.msg &&
                   strstr(err.msg, "requested"),
               "view %zu %" PRIu64 " %zu: %d %s", out[i].i, out[i].first, out[i].k, rc, err.msg);
    }
    free(raw);
    free(rawpart);
    expect(fpk_dump_read(d, 0, n, 0, part, NULL) == FPK_OK, "empty read at the end");
    expect(fpk_dump_read(d, 1, 0, 0, part, NULL) == FPK_ERANGE, "no error buffer");
    fpk_dump_close(d);
    free(whole);
    free(part);
    unlink(path);
    end_group("chunked reads");
}
END_TEST

/* Writes an empty file or makes a directory or link under the temporary
 * directory. */
static void touch(const char *rel)
{
    char path[1200];
    tmp_path(path, sizeof path, rel);
    write_file(path, "", 0);
}

static void mkdir_tmp(const char *rel)
{
    char path[1200];
    tmp_path(path, sizeof path, rel);
    ck_assert_int_eq(mkdir(path, 0700), 0);
}

static void symlink_tmp(const char *target, const char *rel)
{
    char path[1200];
    tmp_path(path, sizeof path, rel);
    ck_assert_int_eq(symlink(target, path), 0);
}

typedef struct visits {
    char files[32][256];
    int n, stop_at, stop_code;
} visits;

static int record(const char *file, void *arg)
{
    visits *v = arg;
    if (v->n < 32)
        snprintf(v->files[v->n], sizeof v->files[0], "%s", file);
    v->n++;
    return v->n == v->stop_at ? v->stop_code : 0;
}

START_TEST(test_walk)
{
    begin_test();
    mkdir_tmp("w");
    touch("w/b.npy");
    touch("w/a.safetensors");
    touch("w/notes.txt");
    touch("w/.npy");
    mkdir_tmp("w/sub");
    touch("w/sub/c.npy");
    mkdir_tmp("w/sub/deeper");
    touch("w/sub/deeper/d.npy");
    mkdir_tmp("w/dir.npy");
    touch("w/dir.npy/e.npy");
    symlink_tmp("sub", "w/link");
    symlink_tmp("self", "w/self");
    symlink_tmp("b.npy", "w/B.npy");
    char path[1200];
    tmp_path(path, sizeof path, "w/fifo.npy");
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    static const char *const order[] = {
        "B.npy", "a.safetensors", "b.npy", "dir.npy/e.npy", "link/c.npy", "link/deeper/d.npy",
        "sub/c.npy", "sub/deeper/d.npy",
    };
    const int norder = (int)(sizeof order / sizeof order[0]);
    char root[1200];
    tmp_path(root, sizeof root, "w");
    for (int slash = 0; slash < 2; slash++) {
        visits v = {.stop_at = -1};
        fpk_error err = {0, ""};
        char start[1300];
        snprintf(start, sizeof start, "%s%s", root, slash ? "/" : "");
        int rc = fpk_dump_walk(start, record, &v, &err);
        expect(rc == FPK_OK && v.n == norder, "walk %s: %d, %d files: %s", start, rc, v.n, err.msg);
        for (int i = 0; i < v.n && i < norder; i++) {
            char want[1300];
            snprintf(want, sizeof want, "%s/%s", root, order[i]);
            expect(strcmp(v.files[i], want) == 0, "walk file %d: %s, expected %s", i, v.files[i],
                   want);
        }
    }
    /* VISIT's nonzero return stops the walk and is returned. */
    visits v = {.stop_at = 3, .stop_code = 42};
    expect(fpk_dump_walk(root, record, &v, NULL) == 42 && v.n == 3, "walk stops at 42");
    /* A file is visited whatever its name; a missing path fails. */
    tmp_path(path, sizeof path, "w/notes.txt");
    v = (visits){.stop_at = -1};
    expect(fpk_dump_walk(path, record, &v, NULL) == 0 && v.n == 1 && strcmp(v.files[0], path) == 0,
           "walk of a file");
    fpk_error err = {0, ""};
    tmp_path(path, sizeof path, "nowhere");
    int rc = fpk_dump_walk(path, record, &v, &err);
    expect(rc == FPK_EIO && strstr(err.msg, path) == err.msg && strstr(err.msg, "No such file"),
           "walk of a missing path: %d %s", rc, err.msg);

    /* A loop through a link to an ancestor. */
    mkdir_tmp("loop");
    mkdir_tmp("loop/x");
    touch("loop/x/a.npy");
    symlink_tmp("..", "loop/x/up");
    tmp_path(root, sizeof root, "loop");
    v = (visits){.stop_at = -1};
    err = (fpk_error){0, ""};
    rc = fpk_dump_walk(root, record, &v, &err);
    tmp_path(path, sizeof path, "loop/x/up");
    expect(rc == FPK_EIO && err.code == FPK_EIO && strstr(err.msg, path) == err.msg &&
               strstr(err.msg, "symbolic link loop") && v.n == 1,
           "walk into a loop: %d %s", rc, err.msg);
    /* A loop through a link to the directory itself. */
    mkdir_tmp("loop2");
    symlink_tmp(".", "loop2/again");
    tmp_path(root, sizeof root, "loop2");
    err = (fpk_error){0, ""};
    rc = fpk_dump_walk(root, record, &v, &err);
    expect(rc == FPK_EIO && strstr(err.msg, "loop"), "walk into a self loop: %d %s", rc, err.msg);
    /* A dangling link named like a dump. */
    mkdir_tmp("dangling");
    symlink_tmp("nowhere", "dangling/gone.npy");
    tmp_path(root, sizeof root, "dangling");
    err = (fpk_error){0, ""};
    rc = fpk_dump_walk(root, record, &v, &err);
    tmp_path(path, sizeof path, "dangling/gone.npy");
    expect(rc == FPK_EIO && strstr(err.msg, path) == err.msg, "walk to a dangling link: %d %s", rc,
           err.msg);
    end_group("directory walks");
}
END_TEST

/* A 2 GiB + 1 MiB float32 .npy of zeros, sparse, read in chunks with the
 * peak resident set staying under 200 MB. */
START_TEST(test_memory)
{
    begin_test();
    if (!tu_exhaustive()) {
        printf("%s: 2 GiB memory test skipped (set FPK_EXHAUSTIVE=1)\n", SUITE);
        return;
    }
    const uint64_t count = (UINT64_C(1) << 29) + (UINT64_C(1) << 18);
    char hdr[128], path[1200];
    snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%" PRIu64 ",), }",
             count);
    buf b = npy(1, hdr, NULL);
    size_t header = b.n;
    write_tmp(path, sizeof path, "big.npy", &b);
    ck_assert_int_eq(truncate(path, (off_t)(header + 4 * count)), 0);
    fpk_dump *d = must_open(path, NULL);
    static double chunk[1 << 16];
    uint64_t nonzero = 0;
    fpk_error err;
    for (uint64_t first = 0; first < count; first += 1 << 16) {
        size_t k = count - first < (1 << 16) ? (size_t)(count - first) : (size_t)1 << 16;
        ck_assert_int_eq(fpk_dump_read(d, 0, first, k, chunk, &err), FPK_OK);
        for (size_t i = 0; i < k; i++)
            nonzero += double_bits(chunk[i]) != 0;
    }
    fpk_dump_close(d);
    unlink(path);
    struct rusage ru;
    ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
    printf("%s: read %" PRIu64 " elements (%" PRIu64 " bytes), peak RSS %ld KiB\n", SUITE, count,
           header + 4 * count, ru.ru_maxrss);
    expect(nonzero == 0, "%" PRIu64 " nonzero elements in a file of zeros", nonzero);
    expect(ru.ru_maxrss < 200 * 1024, "peak RSS %ld KiB", ru.ru_maxrss);
    end_group("2 GiB file in bounded memory");
}
END_TEST

/* Removes PATH and everything under it, without following links. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        if (dir) {
            struct dirent *e;
            while ((e = readdir(dir)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                char child[2048];
                snprintf(child, sizeof child, "%s/%s", path, e->d_name);
                remove_tree(child);
            }
            closedir(dir);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static Suite *dump_suite(void)
{
    Suite *s = suite_create("dump");
    TCase *tc = tcase_create("dump");
    tcase_add_test(tc, test_dtypes);
    tcase_add_test(tc, test_fixtures);
    tcase_add_test(tc, test_encodings);
    tcase_add_test(tc, test_npy_headers);
    tcase_add_test(tc, test_safetensors_headers);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_corrupt);
    tcase_add_test(tc, test_bad_npy);
    tcase_add_test(tc, test_bad_safetensors);
    tcase_add_test(tc, test_bad_raw);
    tcase_add_test(tc, test_not_dumps);
    tcase_add_test(tc, test_chunks);
    tcase_add_test(tc, test_walk);
    tcase_add_test(tc, test_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    seed = tu_seed(SUITE);
    tu_report_init(&rep, SUITE);
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/check_dump.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        printf("%s: cannot make a temporary directory under %s\n", SUITE,
               base && *base ? base : "/tmp");
        return 1;
    }
    SRunner *sr = srunner_create(dump_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    remove_tree(tmpdir);
    return failed == 0 && tu_report_done(&rep) == 0 ? 0 : 1;
}
