/* The element types files store (fpki_stype): their names in safetensors
 * headers and in torch, their sizes, and the fpkit dtype or format their
 * values read as. */
#include <string.h>

#include "dump-impl.h"

/* One row per fpki_stype, in enum order.  Torch names its typed storages
 * after the dtype (torch/storage.py: _pickle_storage_type); dtypes newer
 * than typed storages are saved with an untyped storage and the dtype
 * (torch._utils._rebuild_tensor_v3), so they have no storage name. */
static const fpki_stype_info stypes[FPKI_ST_COUNT] = {
    [FPKI_ST_F64] = {"f64", "F64", "float64", "DoubleStorage", 64, FPK_DTYPE_F64, &fpk_fp64},
    [FPKI_ST_F32] = {"f32", "F32", "float32", "FloatStorage", 32, FPK_DTYPE_F32, &fpk_fp32},
    [FPKI_ST_F16] = {"f16", "F16", "float16", "HalfStorage", 16, FPK_DTYPE_F16, &fpk_fp16},
    [FPKI_ST_BF16] = {"bf16", "BF16", "bfloat16", "BFloat16Storage", 16, FPK_DTYPE_BF16,
                      &fpk_bf16},
    [FPKI_ST_E4M3] = {"e4m3", "F8_E4M3", "float8_e4m3fn", "Float8_e4m3fnStorage", 8,
                      FPK_DTYPE_E4M3, &fpk_e4m3},
    [FPKI_ST_E5M2] = {"e5m2", "F8_E5M2", "float8_e5m2", "Float8_e5m2Storage", 8, FPK_DTYPE_E5M2,
                      &fpk_e5m2},
    [FPKI_ST_E4M3FNUZ] = {"e4m3fnuz", NULL, "float8_e4m3fnuz", "Float8_e4m3fnuzStorage", 8, -1,
                          &fpk_e4m3fnuz},
    [FPKI_ST_E5M2FNUZ] = {"e5m2fnuz", NULL, "float8_e5m2fnuz", "Float8_e5m2fnuzStorage", 8, -1,
                          &fpk_e5m2fnuz},
    [FPKI_ST_E8M0] = {"e8m0", "F8_E8M0", "float8_e8m0fnu", NULL, 8, -1, &fpk_e8m0},
    [FPKI_ST_F4] = {"e2m1", "F4", NULL, NULL, 4, -1, &fpk_e2m1},
    [FPKI_ST_F4X2] = {"e2m1x2", NULL, "float4_e2m1fn_x2", NULL, 8, -1, &fpk_e2m1},
    [FPKI_ST_BOOL] = {"bool", "BOOL", "bool", "BoolStorage", 8, -1, NULL},
    [FPKI_ST_U8] = {"u8", "U8", "uint8", "ByteStorage", 8, -1, NULL},
    [FPKI_ST_I8] = {"i8", "I8", "int8", "CharStorage", 8, -1, NULL},
    [FPKI_ST_U16] = {"u16", "U16", "uint16", NULL, 16, -1, NULL},
    [FPKI_ST_I16] = {"i16", "I16", "int16", "ShortStorage", 16, -1, NULL},
    [FPKI_ST_U32] = {"u32", "U32", "uint32", NULL, 32, -1, NULL},
    [FPKI_ST_I32] = {"i32", "I32", "int32", "IntStorage", 32, -1, NULL},
    [FPKI_ST_U64] = {"u64", "U64", "uint64", NULL, 64, -1, NULL},
    [FPKI_ST_I64] = {"i64", "I64", "int64", "LongStorage", 64, -1, NULL},
    [FPKI_ST_C32] = {"c32", NULL, "complex32", "ComplexHalfStorage", 32, -1, NULL},
    [FPKI_ST_C64] = {"c64", "C64", "complex64", "ComplexFloatStorage", 64, -1, NULL},
    [FPKI_ST_C128] = {"c128", NULL, "complex128", "ComplexDoubleStorage", 128, -1, NULL},
    [FPKI_ST_OTHER] = {"other", NULL, NULL, NULL, 8, -1, NULL},
};

const fpki_stype_info *fpki_stype_of(fpki_stype t)
{
    return (unsigned)t < FPKI_ST_COUNT ? &stypes[t] : &stypes[FPKI_ST_OTHER];
}

bool fpki_stype_lookup(const char *name, bool safetensors, fpki_stype *t)
{
    for (int i = 0; i < FPKI_ST_OTHER; i++) {
        const char *n = safetensors ? stypes[i].safetensors : stypes[i].torch;
        if (n && strcmp(n, name) == 0) {
            *t = (fpki_stype)i;
            return true;
        }
    }
    return false;
}

/* The quantised integer storages (QInt8Storage, ...) have no fpki_stype:
 * they are listed as "other". */
bool fpki_stype_of_storage(const char *storage, fpki_stype *t)
{
    for (int i = 0; i < FPKI_ST_OTHER; i++)
        if (stypes[i].storage && strcmp(stypes[i].storage, storage) == 0) {
            *t = (fpki_stype)i;
            return true;
        }
    static const char *const quantised[] = {"QInt8Storage", "QUInt8Storage", "QInt32Storage",
                                            "QUInt4x2Storage", "QUInt2x4Storage"};
    for (size_t i = 0; i < sizeof quantised / sizeof quantised[0]; i++)
        if (strcmp(quantised[i], storage) == 0) {
            *t = FPKI_ST_OTHER;
            return true;
        }
    return false;
}

bool fpki_stype_is_float(fpki_stype t)
{
    return fpki_stype_of(t)->format != NULL;
}

uint64_t fpki_stype_bytes(fpki_stype t, uint64_t count)
{
    unsigned bits = fpki_stype_of(t)->bits;
    return bits == 4 ? count / 2 + count % 2 : count * (bits / 8);
}
