// fpk-hwcheck's device side: the GPU's own conversions, half-precision
// arithmetic and matrix products on inputs the host chose (hwcheck.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<cuda_fp6.h>) && __has_include(<cuda_fp4.h>)
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#define HW_HAVE_FP6_FP4 1
#else
#define HW_HAVE_FP6_FP4 0
#endif

#include "hwcheck.h"

namespace {

int fail(cudaError_t rc, const char *what, char *msg, size_t len)
{
    snprintf(msg, len, "%s: %s", what, cudaGetErrorString(rc));
    return -1;
}

size_t grid_for(size_t n, int threads)
{
    size_t b = (n + threads - 1) / threads;
    return b < 65536 ? b : 65536;
}

// The conversions this code has for the device it runs on.
__global__ void features_kernel(unsigned *out)
{
    unsigned f = 1u << HW_FP16 | 1u << HW_BF16 | 1u << HW_E4M3 | 1u << HW_E5M2;
#if HW_HAVE_FP6_FP4
    f |= 1u << HW_E2M3 | 1u << HW_E3M2 | 1u << HW_E2M1;
#endif
#if __CUDA_ARCH__ >= 800
    f |= 1u << HW_TF32_RNA | HW_AMPERE;
#endif
#if __CUDA_ARCH__ >= 890
    f |= HW_FP8;
#endif
#if __CUDA_ARCH__ >= 900
    f |= 1u << HW_TF32_RN | 1u << HW_TF32_RZ;
#endif
    *out = f;
}

struct conv_bufs {
    void *p[HW_NCONV];
};

template <typename T> __device__ void put(const conv_bufs &b, int k, size_t i, T v)
{
    if (b.p[k])
        static_cast<T *>(b.p[k])[i] = v;
}

__global__ void conv_kernel(uint32_t first, size_t n, conv_bufs b)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float x = __uint_as_float(first + (uint32_t)i);
        put<unsigned short>(b, HW_FP16, i, __half_as_ushort(__float2half_rn(x)));
        put<unsigned short>(b, HW_BF16, i, __bfloat16_as_ushort(__float2bfloat16_rn(x)));
#if __CUDA_ARCH__ >= 800
        unsigned t;
        asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(t) : "f"(x));
        put<unsigned>(b, HW_TF32_RNA, i, t);
#endif
#if __CUDA_ARCH__ >= 900
        asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(t) : "f"(x));
        put<unsigned>(b, HW_TF32_RN, i, t);
        asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(t) : "f"(x));
        put<unsigned>(b, HW_TF32_RZ, i, t);
#endif
        put<unsigned char>(b, HW_E4M3, i, __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
        put<unsigned char>(b, HW_E5M2, i, __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2));
#if HW_HAVE_FP6_FP4
        put<unsigned char>(b, HW_E2M3, i, __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest));
        put<unsigned char>(b, HW_E3M2, i, __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest));
        put<unsigned char>(b, HW_E2M1, i, __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest));
#endif
    }
}

// The 16-bit types' bits (bf16 arithmetic from compute capability 8.0).
__device__ __half from_bits(unsigned short u, __half) { return __ushort_as_half(u); }
__device__ unsigned short to_bits(__half v) { return __half_as_ushort(v); }
#if __CUDA_ARCH__ >= 800
__device__ __nv_bfloat16 from_bits(unsigned short u, __nv_bfloat16)
{
    return __ushort_as_bfloat16(u);
}
__device__ unsigned short to_bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
#endif

struct arith_bufs {
    unsigned short *p[HW_NOPS];
    unsigned short c[HW_NFMA_C];
};

template <typename T> __device__ void arith_body(unsigned long long first, size_t n, arith_bufs b)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long pair = first + i;
        T x = from_bits((unsigned short)(pair >> 16), T()), y = from_bits((unsigned short)pair, T());
        b.p[HW_ADD][i] = to_bits(__hadd(x, y));
        b.p[HW_MUL][i] = to_bits(__hmul(x, y));
        for (int k = 0; k < HW_NFMA_C; k++)
            b.p[HW_FMA0 + k][i] = to_bits(__hfma(x, y, from_bits(b.c[k], T())));
    }
}

__global__ void arith_fp16_kernel(unsigned long long first, size_t n, arith_bufs b)
{
    arith_body<__half>(first, n, b);
}

__global__ void arith_bf16_kernel(unsigned long long first, size_t n, arith_bufs b)
{
#if __CUDA_ARCH__ >= 800
    arith_body<__nv_bfloat16>(first, n, b);
#endif
}

using namespace nvcuda;

// One warp per tile: D = A * B + C, A row-major 16 x K, B column-major,
// fragments of element type F (E in memory).
template <typename F, int K, typename E>
__device__ void mma_tile(size_t nt, const E *a, const E *b, const float *c, float *d)
{
    size_t tile = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (tile >= nt)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, K, F, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, K, F, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, K, float> fc;
    wmma::load_matrix_sync(fa, a + tile * 16 * K, K);
    wmma::load_matrix_sync(fb, b + tile * 16 * K, K);
    wmma::load_matrix_sync(fc, c + tile * 256, 16, wmma::mem_row_major);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d + tile * 256, fc, 16, wmma::mem_row_major);
}

__global__ void mma_fp16_kernel(size_t nt, const __half *a, const __half *b, const float *c,
                                float *d)
{
    mma_tile<__half, 16>(nt, a, b, c, d);
}

// bf16 and tf32 (binary32 containers) from compute capability 8.0.
__global__ void mma_bf16_kernel(size_t nt, const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                                const float *c, float *d)
{
#if __CUDA_ARCH__ >= 800
    mma_tile<__nv_bfloat16, 16>(nt, a, b, c, d);
#endif
}

__global__ void mma_tf32_kernel(size_t nt, const float *a, const float *b, const float *c,
                                float *d)
{
#if __CUDA_ARCH__ >= 800
    mma_tile<wmma::precision::tf32, 8>(nt, a, b, c, d);
#endif
}

// Independent dot products through the matrix units: a warp takes a group
// of them, dot r in row r of A and column r of B (A row-major and B
// column-major with the dot's N products as leading dimension, so both
// read the same layout), its c at C[r][r], its result D[r][r]; the other
// elements of the tile are sums of no interest.  The chain of K-wide
// instructions along N keeps D in the accumulator fragment.
template <typename F, int K, typename E>
__device__ void dots_tile(int n, size_t groups, const E *a, const E *b, const float *c, float *d)
{
    __shared__ float tiles[8][256]; // a tile per warp of a block of 256 threads
    size_t g = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (g >= groups)
        return; // the whole warp
    float *s = tiles[threadIdx.x / 32];
    int lane = threadIdx.x % 32;
    for (int i = lane; i < 256; i += 32)
        s[i] = i % 17 == 0 ? c[g * 16 + i / 17] : 0.0f;
    __syncwarp();
    wmma::fragment<wmma::accumulator, 16, 16, K, float> fc;
    wmma::load_matrix_sync(fc, s, 16, wmma::mem_row_major);
    const E *ga = a + g * 16 * (size_t)n, *gb = b + g * 16 * (size_t)n;
    for (int j = 0; j < n; j += K) {
        wmma::fragment<wmma::matrix_a, 16, 16, K, F, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, K, F, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, ga + j, n);
        wmma::load_matrix_sync(fb, gb + j, n);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    __syncwarp();
    wmma::store_matrix_sync(s, fc, 16, wmma::mem_row_major);
    __syncwarp();
    if (lane < 16)
        d[g * 16 + lane] = s[lane * 17];
}

__global__ void dots_fp16_kernel(int n, size_t groups, const __half *a, const __half *b,
                                 const float *c, float *d)
{
    dots_tile<__half, 16>(n, groups, a, b, c, d);
}

__global__ void dots_bf16_kernel(int n, size_t groups, const __nv_bfloat16 *a,
                                 const __nv_bfloat16 *b, const float *c, float *d)
{
#if __CUDA_ARCH__ >= 800
    dots_tile<__nv_bfloat16, 16>(n, groups, a, b, c, d);
#endif
}

__global__ void dots_tf32_kernel(int n, size_t groups, const float *a, const float *b,
                                 const float *c, float *d)
{
#if __CUDA_ARCH__ >= 800
    dots_tile<wmma::precision::tf32, 8>(n, groups, a, b, c, d);
#endif
}

// D = A * B + C by mma.sync m16n8k32 with FP8 inputs (compute capability
// 8.9 on): A 16 x 32 row-major, B 32 x 8 column-major, C and D 16 x 8
// binary32, in the PTX ISA's fragment layout.
template <bool E5M2>
__device__ void mma_fp8(float x[4], const uint32_t a[4], const uint32_t b[2])
{
#if __CUDA_ARCH__ >= 890
    if (E5M2)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// FP8 dots, 8 a warp: dot r in row r of A (rows 8 to 15 zero) and column r
// of B, its c and result at (r, r).  Lane l holds A's row l / 4, columns
// 4 (l % 4) + 0..3 and 16 + 4 (l % 4) + 0..3 (registers 0 and 2), B's
// column l / 4, rows the same, and the accumulator's columns 2 (l % 4) and
// 2 (l % 4) + 1 of rows l / 4 (registers 0, 1) and l / 4 + 8 (2, 3).
// With PROMOTE, every PROMOTE products a chain from +0 whose result is
// added to the accumulator by a binary32 addition.
template <bool E5M2>
__device__ void dots_fp8(int n, int promote, size_t groups, const uint8_t *a, const uint8_t *b,
                         const float *c, float *d)
{
    size_t g = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (g >= groups)
        return;
    int lane = threadIdx.x % 32, row = lane / 4, quad = lane % 4;
    const uint8_t *ra = a + (g * 8 + row) * (size_t)n, *cb = b + (g * 8 + row) * (size_t)n;
    bool diag = quad == row / 2; /* this lane holds (row, row) in register row % 2 */
    float acc[4] = {0, 0, 0, 0}, part[4];
    if (diag)
        acc[row % 2] = c[g * 8 + row];
    int span = promote ? promote : n;
    for (int base = 0; base < n; base += span) {
        float *x = promote ? part : acc;
        for (int v = 0; promote && v < 4; v++)
            part[v] = 0.0f;
        for (int j = base; j < base + span && j < n; j += 32) {
            uint32_t ua[4] = {*(const uint32_t *)(ra + j + 4 * quad), 0,
                              *(const uint32_t *)(ra + j + 16 + 4 * quad), 0};
            uint32_t ub[2] = {*(const uint32_t *)(cb + j + 4 * quad),
                              *(const uint32_t *)(cb + j + 16 + 4 * quad)};
            mma_fp8<E5M2>(x, ua, ub);
        }
        for (int v = 0; promote && v < 4; v++)
            acc[v] = __fadd_rn(acc[v], part[v]);
    }
    if (diag)
        d[g * 8 + row] = acc[row % 2];
}

__global__ void dots_e4m3_kernel(int n, int promote, size_t groups, const uint8_t *a,
                                 const uint8_t *b, const float *c, float *d)
{
    dots_fp8<false>(n, promote, groups, a, b, c, d);
}

__global__ void dots_e5m2_kernel(int n, int promote, size_t groups, const uint8_t *a,
                                 const uint8_t *b, const float *c, float *d)
{
    dots_fp8<true>(n, promote, groups, a, b, c, d);
}

} // namespace

extern "C" int hw_dev_dots(hw_tc_input which, int n, size_t count, const fpk_bits *a,
                           const fpk_bits *b, const uint32_t *c, uint32_t *d, char *msg,
                           size_t len)
{
    const hw_tc_desc *tc = &hw_tcs[which];
    bool fp8 = tc->in == &fpk_e4m3 || tc->in == &fpk_e5m2, tf32 = tc->in == &fpk_tf32;
    size_t per = fp8 ? 8 : 16; /* dots a warp */
    size_t groups = (count + per - 1) / per, padded = groups * per;
    size_t size = fp8 ? 1 : tf32 ? 4 : 2, ab = padded * (size_t)n * size;
    /* the inputs as the device takes them, padded with zeros to whole groups */
    unsigned char *ha = (unsigned char *)calloc(2, ab);
    float *hc = (float *)calloc(padded, sizeof(float));
    if (!ha || !hc) {
        free(ha);
        free(hc);
        snprintf(msg, len, "out of memory for %zu dot products", count);
        return -1;
    }
    unsigned char *hb = ha + ab;
    for (size_t i = 0; i < count * (size_t)n; i++) {
        if (fp8) {
            ha[i] = (unsigned char)a[i];
            hb[i] = (unsigned char)b[i];
        } else if (tf32) {
            uint32_t x = (uint32_t)a[i] << 13, y = (uint32_t)b[i] << 13;
            memcpy(ha + 4 * i, &x, 4);
            memcpy(hb + 4 * i, &y, 4);
        } else {
            uint16_t x = (uint16_t)a[i], y = (uint16_t)b[i];
            memcpy(ha + 2 * i, &x, 2);
            memcpy(hb + 2 * i, &y, 2);
        }
    }
    memcpy(hc, c, count * sizeof *c);
    unsigned char *da = NULL;
    float *dc = NULL, *dd = NULL;
    cudaError_t rc;
    if ((rc = cudaMalloc(&da, 2 * ab)) == cudaSuccess &&
        (rc = cudaMalloc(&dc, padded * sizeof(float))) == cudaSuccess &&
        (rc = cudaMalloc(&dd, padded * sizeof(float))) == cudaSuccess &&
        (rc = cudaMemcpy(da, ha, 2 * ab, cudaMemcpyHostToDevice)) == cudaSuccess &&
        (rc = cudaMemcpy(dc, hc, padded * sizeof(float), cudaMemcpyHostToDevice)) == cudaSuccess) {
        unsigned grid = (unsigned)((groups * 32 + 255) / 256);
        const unsigned char *db = da + ab;
        switch (which) {
        case HW_TC_FP16:
            dots_fp16_kernel<<<grid, 256>>>(n, groups, (const __half *)da, (const __half *)db, dc,
                                            dd);
            break;
        case HW_TC_BF16:
            dots_bf16_kernel<<<grid, 256>>>(n, groups, (const __nv_bfloat16 *)da,
                                            (const __nv_bfloat16 *)db, dc, dd);
            break;
        case HW_TC_TF32:
            dots_tf32_kernel<<<grid, 256>>>(n, groups, (const float *)da, (const float *)db, dc,
                                            dd);
            break;
        default:
            if (tc->in == &fpk_e5m2)
                dots_e5m2_kernel<<<grid, 256>>>(n, tc->promote, groups, da, db, dc, dd);
            else
                dots_e4m3_kernel<<<grid, 256>>>(n, tc->promote, groups, da, db, dc, dd);
            break;
        }
        if ((rc = cudaGetLastError()) == cudaSuccess)
            rc = cudaMemcpy(hc, dd, padded * sizeof(float), cudaMemcpyDeviceToHost);
    }
    if (rc == cudaSuccess)
        memcpy(d, hc, count * sizeof *d);
    cudaFree(da);
    cudaFree(dc);
    cudaFree(dd);
    free(ha);
    free(hc);
    char what[64];
    snprintf(what, sizeof what, "the %s dot products", tc->name);
    return rc == cudaSuccess ? 0 : fail(rc, what, msg, len);
}

extern "C" int hw_dev_open(int ordinal, hw_device *d, char *msg, size_t len)
{
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    /* a machine without a GPU has no driver either: the runtime finds
     * the driver "insufficient"; any other failure is a broken setup */
    if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver ||
        (rc == cudaSuccess && count == 0)) {
        snprintf(msg, len, "no CUDA device (%s)",
                 rc != cudaSuccess ? cudaGetErrorString(rc) : "none found");
        return 1;
    }
    if (rc != cudaSuccess)
        return fail(rc, "counting the CUDA devices", msg, len);
    if (ordinal >= count) {
        snprintf(msg, len, "no CUDA device %d (there are %d)", ordinal, count);
        return 1;
    }
    cudaDeviceProp p;
    if ((rc = cudaSetDevice(ordinal)) != cudaSuccess ||
        (rc = cudaGetDeviceProperties(&p, ordinal)) != cudaSuccess)
        return fail(rc, "opening the device", msg, len);
    snprintf(d->name, sizeof d->name, "%s", p.name);
    d->major = p.major;
    d->minor = p.minor;
    unsigned *f;
    if ((rc = cudaMalloc(&f, sizeof *f)) != cudaSuccess)
        return fail(rc, "allocating", msg, len);
    features_kernel<<<1, 1>>>(f);
    rc = cudaGetLastError();
    if (rc == cudaSuccess)
        rc = cudaMemcpy(&d->features, f, sizeof *f, cudaMemcpyDeviceToHost);
    cudaFree(f);
    d->ampere = (d->features & HW_AMPERE) != 0;
    d->fp8 = (d->features & HW_FP8) != 0;
    d->features &= ~(HW_AMPERE | HW_FP8);
    return rc == cudaSuccess ? 0 : fail(rc, "running the feature probe", msg, len);
}

extern "C" int hw_dev_conv(uint32_t first, size_t n, void *const out[HW_NCONV], char *msg,
                           size_t len)
{
    conv_bufs b = {};
    cudaError_t rc = cudaSuccess;
    for (int k = 0; k < HW_NCONV && rc == cudaSuccess; k++)
        if (out[k])
            rc = cudaMalloc(&b.p[k], n * (size_t)hw_convs[k].bytes);
    if (rc == cudaSuccess) {
        conv_kernel<<<(unsigned)grid_for(n, 256), 256>>>(first, n, b);
        rc = cudaGetLastError();
    }
    for (int k = 0; k < HW_NCONV && rc == cudaSuccess; k++)
        if (out[k])
            rc = cudaMemcpy(out[k], b.p[k], n * (size_t)hw_convs[k].bytes, cudaMemcpyDeviceToHost);
    for (int k = 0; k < HW_NCONV; k++)
        cudaFree(b.p[k]);
    return rc == cudaSuccess ? 0 : fail(rc, "the conversions", msg, len);
}

extern "C" int hw_dev_arith(int fmt, uint64_t first, size_t n, uint16_t *const out[HW_NOPS],
                            char *msg, size_t len)
{
    arith_bufs b = {};
    for (int k = 0; k < HW_NFMA_C; k++)
        b.c[k] = (unsigned short)hw_fma_c[fmt][k];
    cudaError_t rc = cudaSuccess;
    for (int k = 0; k < HW_NOPS && rc == cudaSuccess; k++)
        rc = cudaMalloc(&b.p[k], n * sizeof(unsigned short));
    if (rc == cudaSuccess) {
        unsigned grid = (unsigned)grid_for(n, 256);
        if (fmt)
            arith_bf16_kernel<<<grid, 256>>>(first, n, b);
        else
            arith_fp16_kernel<<<grid, 256>>>(first, n, b);
        rc = cudaGetLastError();
    }
    for (int k = 0; k < HW_NOPS && rc == cudaSuccess; k++)
        rc = cudaMemcpy(out[k], b.p[k], n * sizeof(unsigned short), cudaMemcpyDeviceToHost);
    for (int k = 0; k < HW_NOPS; k++)
        cudaFree(b.p[k]);
    return rc == cudaSuccess ? 0 : fail(rc, "the arithmetic", msg, len);
}

extern "C" int hw_dev_mma(const fpk_format *in, size_t nt, const void *a, const void *b,
                          const float *c, float *d, char *msg, size_t len)
{
    bool tf32 = in == &fpk_tf32;
    size_t ab = nt * (tf32 ? 128 * sizeof(float) : 256 * sizeof(unsigned short));
    size_t cd = nt * 256 * sizeof(float);
    void *da = NULL, *db = NULL;
    float *dc = NULL, *dd = NULL;
    cudaError_t rc;
    if ((rc = cudaMalloc(&da, ab)) == cudaSuccess && (rc = cudaMalloc(&db, ab)) == cudaSuccess &&
        (rc = cudaMalloc(&dc, cd)) == cudaSuccess && (rc = cudaMalloc(&dd, cd)) == cudaSuccess &&
        (rc = cudaMemcpy(da, a, ab, cudaMemcpyHostToDevice)) == cudaSuccess &&
        (rc = cudaMemcpy(db, b, ab, cudaMemcpyHostToDevice)) == cudaSuccess &&
        (rc = cudaMemcpy(dc, c, cd, cudaMemcpyHostToDevice)) == cudaSuccess) {
        unsigned grid = (unsigned)((nt * 32 + 255) / 256);
        if (tf32)
            mma_tf32_kernel<<<grid, 256>>>(nt, (const float *)da, (const float *)db, dc, dd);
        else if (in == &fpk_bf16)
            mma_bf16_kernel<<<grid, 256>>>(nt, (const __nv_bfloat16 *)da,
                                           (const __nv_bfloat16 *)db, dc, dd);
        else
            mma_fp16_kernel<<<grid, 256>>>(nt, (const __half *)da, (const __half *)db, dc, dd);
        if ((rc = cudaGetLastError()) == cudaSuccess)
            rc = cudaMemcpy(d, dd, cd, cudaMemcpyDeviceToHost);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dd);
    return rc == cudaSuccess ? 0 : fail(rc, "the matrix products", msg, len);
}

extern "C" void *hw_dev_host_alloc(size_t bytes)
{
    void *p = NULL;
    return cudaMallocHost(&p, bytes) == cudaSuccess ? p : NULL;
}

extern "C" void hw_dev_host_free(void *p)
{
    cudaFreeHost(p);
}
