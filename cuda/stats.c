/* The device statistics' C API (fpkit_cuda.h): checks, the plan, the
 * kernel's launch and its counters turned into an fpk_stats. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit_cuda.h"
#include "stats_launch.h"

static int fail(fpk_error *err, int code, const char *fmt, const char *arg)
{
    if (err) {
        err->code = code;
        snprintf(err->msg, sizeof err->msg, fmt, arg);
    }
    return code;
}

/* FPK_ENOMEM for device memory running out, FPK_EIO for the rest. */
static int cuda_fail(fpk_error *err, cudaError_t rc, const char *what)
{
    int code = rc == cudaErrorMemoryAllocation ? FPK_ENOMEM : FPK_EIO;
    if (err) {
        err->code = code;
        snprintf(err->msg, sizeof err->msg, "device statistics: %s: %s", what,
                 cudaGetErrorString(rc));
    }
    return code;
}

/* Runs the plan over the N elements at DEV into the host counters K: the
 * table image and the counters in one device allocation. */
static int run(const fpki_ds_plan *p, const void *dev, size_t n, uint64_t *k,
               cudaStream_t stream, fpk_error *err)
{
    size_t image = p->k.table_bytes, bytes = fpki_ds_ncounters(p) * sizeof *k;
    unsigned char *buf = NULL;
    cudaError_t rc = cudaMallocAsync((void **)&buf, image + bytes, stream);
    if (rc != cudaSuccess)
        return cuda_fail(err, rc, "allocating the counters");
    unsigned long long *dk = (unsigned long long *)(buf + image);
    const char *what = "copying the tables";
    rc = cudaMemcpyAsync(buf, p->image, image, cudaMemcpyHostToDevice, stream);
    if (rc == cudaSuccess) {
        what = "zeroing the counters";
        rc = cudaMemsetAsync(dk, 0, bytes, stream);
    }
    if (rc == cudaSuccess) {
        what = "launching the kernel";
        rc = fpki_ds_launch(&p->k, buf, dev, n, dk, stream);
    }
    if (rc == cudaSuccess) {
        what = "reading the counters";
        rc = cudaMemcpyAsync(k, dk, bytes, cudaMemcpyDeviceToHost, stream);
    }
    cudaError_t rc_free = cudaFreeAsync(buf, stream);
    cudaError_t rc_sync = cudaStreamSynchronize(stream);
    if (rc == cudaSuccess && (rc = rc_free) != cudaSuccess)
        what = "releasing the counters";
    if (rc == cudaSuccess && (rc = rc_sync) != cudaSuccess)
        what = "running the kernel";
    return rc == cudaSuccess ? FPK_OK : cuda_fail(err, rc, what);
}

/* fpk_cuda_stats_add of N > 0 elements, planned as P. */
static int add_planned(fpk_stats *s, const fpki_ds_plan *p, const void *dev, size_t n,
                       fpk_dtype dtype, cudaStream_t stream, fpk_error *err)
{
    int rc;
    if ((uintptr_t)dev % (uintptr_t)p->k.width != 0)
        return fail(err, FPK_EFORMAT,
                    "device statistics: the data's address is not aligned to its %s elements",
                    fpk_dtype_name(dtype));
    struct cudaPointerAttributes a;
    cudaError_t ce = cudaPointerGetAttributes(&a, dev);
    if (ce != cudaSuccess)
        return cuda_fail(err, ce, "the data's address");
    if (a.type == cudaMemoryTypeUnregistered)
        return fail(err, FPK_EIO, "device statistics: %s",
                    "the data's address is not memory the device can read");
    uint64_t *k = malloc(fpki_ds_ncounters(p) * sizeof *k);
    if (!k)
        return fail(err, FPK_ENOMEM, "device statistics: %s", "out of memory");
    /* The kernel runs on the device that holds the data (another runtime,
     * PyTorch's, may have made another one current for itself). */
    int cur = a.device;
    if (a.type != cudaMemoryTypeHost && (ce = cudaGetDevice(&cur)) == cudaSuccess &&
        cur != a.device)
        ce = cudaSetDevice(a.device);
    rc = ce != cudaSuccess ? cuda_fail(err, ce, "choosing the device")
                           : run(p, dev, n, k, stream, err);
    if (cur != a.device)
        cudaSetDevice(cur);
    if (rc == FPK_OK)
        fpki_ds_finish(s, p, dtype, k, n);
    free(k);
    return rc;
}

int fpk_cuda_stats_add(fpk_stats *s, const void *dev, size_t n, fpk_dtype dtype,
                       cudaStream_t stream, fpk_error *err)
{
    fpki_ds_plan *p = malloc(sizeof *p);
    if (!p)
        return fail(err, FPK_ENOMEM, "device statistics: %s", "out of memory");
    int rc = fpki_ds_plan_init(p, s, dtype, err);
    if (rc == FPK_OK && n > 0)
        rc = add_planned(s, p, dev, n, dtype, stream, err);
    free(p);
    return rc;
}

int fpk_cuda_stats(const void *dev, size_t n, fpk_dtype dtype, const fpk_format *const *formats,
                   int nformats, double scale, const fpk_ctx *c, fpk_stats *out,
                   cudaStream_t stream, fpk_error *err)
{
    if (nformats < 0 || nformats > FPK_STATS_MAX_FORMATS)
        return fail(err, FPK_EFORMAT, "device statistics: %s", "the format count is not 0 to 16");
    fpk_ctx dflt = fpk_ctx_default();
    fpk_stats_init(out, formats, nformats, scale, c ? c : &dflt);
    return fpk_cuda_stats_add(out, dev, n, dtype, stream, err);
}

/* LIST's formats, comma-separated, into F; their count, or -1 with ERR. */
static int parse_formats(const char *list, const fpk_format **f, fpk_error *err)
{
    int n = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        char name[64];
        if (len == 0 || len >= sizeof name) {
            fail(err, FPK_ESYNTAX, "device statistics: the format list \"%s\" is not valid", list);
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        const fpk_format *g = fpk_format_lookup(name);
        if (!g) {
            fail(err, FPK_ESYNTAX, "device statistics: unknown format \"%s\"", name);
            return -1;
        }
        for (int j = 0; j < n; j++)
            if (f[j] == g) {
                fail(err, FPK_ESYNTAX, "device statistics: the format \"%s\" is listed twice",
                     name);
                return -1;
            }
        if (n == FPK_STATS_MAX_FORMATS) {
            fail(err, FPK_ESYNTAX, "device statistics: the format list \"%s\" has more than 16",
                 list);
            return -1;
        }
        f[n++] = g;
        p += len;
        if (*p == ',' && !*++p) { /* "fp16,": an empty last name */
            fail(err, FPK_ESYNTAX, "device statistics: the format list \"%s\" is not valid", list);
            return -1;
        }
    }
    return n;
}

char *fpk_cuda_stats_json(const void *dev, size_t n, const char *dtype, const char *formats,
                          double scale, const char *round, bool ftz, bool saturate,
                          cudaStream_t stream, fpk_error *err)
{
    fpk_dtype t;
    fpk_ctx c = fpk_ctx_default();
    const fpk_format *f[FPK_STATS_MAX_FORMATS];
    if (!fpk_dtype_lookup(dtype, &t)) {
        fail(err, FPK_ESYNTAX, "device statistics: unknown element type \"%s\"",
             dtype ? dtype : "(null)");
        return NULL;
    }
    if (!fpk_round_lookup(round, &c.round)) {
        fail(err, FPK_ESYNTAX, "device statistics: unknown rounding mode \"%s\"",
             round ? round : "(null)");
        return NULL;
    }
    int nf = parse_formats(formats ? formats : "", f, err);
    if (nf < 0)
        return NULL;
    c.ftz = ftz;
    c.saturate = saturate;
    fpk_stats *s = malloc(sizeof *s);
    char *text = NULL;
    if (!s)
        fail(err, FPK_ENOMEM, "device statistics: %s", "out of memory");
    else if (fpk_cuda_stats(dev, n, t, f, nf, scale, &c, s, stream, err) == FPK_OK &&
             !(text = fpk_stats_to_json(s)))
        fail(err, FPK_ENOMEM, "device statistics: %s", "out of memory");
    free(s);
    return text;
}

void fpk_cuda_free(void *p)
{
    free(p);
}
