/* Element types of tensor dumps, and their names. */
#include <string.h>
#include <strings.h>

#include "fpkit-tensor.h"

/* One row per fpk_dtype, in enum order. */
static const struct {
    const char *name;
    const fpk_format *format;
    size_t size;
    const char *safetensors; /* the dtype in a safetensors header */
    const char *numpy;       /* the little-endian NumPy descr, as .npy headers
                                hold it (ml_dtypes' for bf16 and e5m2) */
    const char *numpy_name;  /* the NumPy or ml_dtypes type name */
} dtypes[FPK_DTYPE_COUNT] = {
    [FPK_DTYPE_F64] = {"f64", &fpk_fp64, 8, "F64", "<f8", "float64"},
    [FPK_DTYPE_F32] = {"f32", &fpk_fp32, 4, "F32", "<f4", "float32"},
    [FPK_DTYPE_F16] = {"f16", &fpk_fp16, 2, "F16", "<f2", "float16"},
    [FPK_DTYPE_BF16] = {"bf16", &fpk_bf16, 2, "BF16", "<V2", "bfloat16"},
    [FPK_DTYPE_E4M3] = {"e4m3", &fpk_e4m3, 1, "F8_E4M3", NULL, "float8_e4m3fn"},
    [FPK_DTYPE_E5M2] = {"e5m2", &fpk_e5m2, 1, "F8_E5M2", "<f1", "float8_e5m2"},
};

static bool valid(fpk_dtype t)
{
    return (unsigned)t < FPK_DTYPE_COUNT;
}

const char *fpk_dtype_name(fpk_dtype t)
{
    return valid(t) ? dtypes[t].name : NULL;
}

const fpk_format *fpk_dtype_format(fpk_dtype t)
{
    return valid(t) ? dtypes[t].format : NULL;
}

size_t fpk_dtype_size(fpk_dtype t)
{
    return valid(t) ? dtypes[t].size : 0;
}

/* NumPy descrs are compared exactly: case matters there ("<F4" is complex)
 * and a '>' descr would need the byte order, which a dtype does not carry.
 * The other names are compared case-insensitively, as format names are. */
bool fpk_dtype_lookup(const char *name, fpk_dtype *t)
{
    if (!name)
        return false;
    const fpk_format *f = fpk_format_lookup(name);
    for (int i = 0; i < FPK_DTYPE_COUNT; i++) {
        bool numpy = dtypes[i].numpy && strcmp(name, dtypes[i].numpy) == 0;
        if (numpy || dtypes[i].format == f || strcasecmp(name, dtypes[i].name) == 0 ||
            strcasecmp(name, dtypes[i].safetensors) == 0 ||
            strcasecmp(name, dtypes[i].numpy_name) == 0) {
            if (t)
                *t = (fpk_dtype)i;
            return true;
        }
    }
    return false;
}
