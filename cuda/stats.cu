// The device statistics kernel: one pass over the elements, grid-stride,
// 16-byte loads; per thread, counts in registers; per block, a histogram in
// shared memory fed by warp-aggregated atomics; one merge per block into
// the call's counters (devstats.h lays them out, stats.c turns them into
// an fpk_stats).
#include <cuda_runtime.h>

#include "stats_launch.h"

namespace {

const int threads = 256;

// Elements of 16 bytes' worth, or of one slot past the vector body.
template <typename T> struct slot {
    static const int n = 16 / sizeof(T);
    T v[n];
};

template <typename T> __device__ slot<T> load_vec(const T *p)
{
    uint4 w = *reinterpret_cast<const uint4 *>(p);
    slot<T> s;
    memcpy(s.v, &w, sizeof w);
    return s;
}

__device__ unsigned long long warp_sum(unsigned long long v)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__device__ unsigned long long warp_max(unsigned long long v)
{
    for (int d = 16; d > 0; d >>= 1) {
        unsigned long long o = __shfl_down_sync(0xffffffffu, v, d);
        v = o > v ? o : v;
    }
    return v;
}

// Slots as fpki_ds_slot numbers them: nvec vectors of V elements, 16-byte
// aligned from data + head, then the head's and the tail's elements.
// Every thread of a block runs the same number of iterations, so the
// warp-wide operations see all 32 lanes.  The plan is
// read where the launch put it (__grid_constant__: no copy per thread).
template <typename T>
__global__ void __launch_bounds__(threads)
stats_kernel(const T *data, unsigned long long n, unsigned long long head,
             unsigned long long nvec, const __grid_constant__ fpki_ds_plan p,
             unsigned long long *out)
{
    const int V = slot<T>::n;
    extern __shared__ unsigned int hist[];
    __shared__ unsigned long long block[FPKI_DS_HIST];
    for (int i = threadIdx.x; i < p.nbins; i += blockDim.x)
        hist[i] = 0;
    for (int i = threadIdx.x; i < FPKI_DS_HIST; i += blockDim.x)
        block[i] = 0;
    __syncthreads();

    unsigned int zeros = 0, nonfinite = 0;
    unsigned long long amax = 0;
    unsigned int cnt[FPK_STATS_MAX_FORMATS][3] = {};
    const unsigned long long nslots = nvec + head + (n - head - nvec * V);
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const int lane = threadIdx.x & 31;
    for (unsigned long long s0 = (unsigned long long)blockIdx.x * blockDim.x; s0 < nslots;
         s0 += stride) {
        uint64_t first; // index of e.v[0]
        int valid = fpki_ds_slot(s0 + threadIdx.x, n, head, nvec, (int)sizeof(T), &first);
        slot<T> e;
        if (valid == V)
            e = load_vec(data + first);
        else if (valid)
            e.v[0] = data[first];
#pragma unroll
        for (int i = 0; i < V; i++) {
            int bin = -1;
            if (i < valid) {
                unsigned long long bits = e.v[i];
                unsigned long long mag = bits & ~p.sign_mask;
                if (mag == 0) {
                    zeros++;
                } else if (mag >= p.nonfinite_min) {
                    nonfinite++;
                } else {
                    amax = mag > amax ? mag : amax;
                    bin = fpki_ds_log2(&p, mag) - p.hist_lo;
                    bool neg = (bits & p.sign_mask) != 0;
#pragma unroll
                    for (int j = 0; j < FPK_STATS_MAX_FORMATS; j++)
                        if (j < p.nformats) {
                            int c = fpki_ds_class(&p, j, mag, neg, first + i);
                            cnt[j][0] += c == FPKI_DS_ZERO;
                            cnt[j][1] += c == FPKI_DS_SUBNORMAL;
                            cnt[j][2] += c == FPKI_DS_OVERFLOW;
                        }
                }
            }
            // The lanes that share a bin add once, through their lowest lane.
            unsigned int peers = __match_any_sync(0xffffffffu, bin);
            if (bin >= 0 && lane == __ffs(peers) - 1)
                atomicAdd(&hist[bin], (unsigned int)__popc(peers));
        }
    }

    unsigned long long v = warp_sum(zeros);
    if (lane == 0 && v)
        atomicAdd(&block[FPKI_DS_ZEROS], v);
    v = warp_sum(nonfinite);
    if (lane == 0 && v)
        atomicAdd(&block[FPKI_DS_NONFINITE], v);
    v = warp_max(amax);
    if (lane == 0 && v)
        atomicMax(&block[FPKI_DS_AMAX], v);
#pragma unroll
    for (int j = 0; j < FPK_STATS_MAX_FORMATS; j++)
        if (j < p.nformats)
#pragma unroll
            for (int k = 0; k < 3; k++) {
                v = warp_sum(cnt[j][k]);
                if (lane == 0 && v)
                    atomicAdd(&block[FPKI_DS_FMT + 3 * j + k], v);
            }
    __syncthreads();

    for (int i = threadIdx.x; i < FPKI_DS_HIST; i += blockDim.x)
        if (block[i])
            i == FPKI_DS_AMAX ? atomicMax(&out[i], block[i]) : atomicAdd(&out[i], block[i]);
    for (int i = threadIdx.x; i < p.nbins; i += blockDim.x)
        if (hist[i])
            atomicAdd(&out[FPKI_DS_HIST + i], (unsigned long long)hist[i]);
}

// Launches at most 2^31 elements at a time, so that no 32-bit count (of a
// thread, a warp, a block's histogram bin) can wrap.
template <typename T>
cudaError_t launch(const fpki_ds_plan *p, const T *data, size_t n, unsigned long long *out,
                   cudaStream_t stream)
{
    int dev, sms, per_sm;
    size_t shmem = (size_t)p->nbins * sizeof(unsigned int);
    cudaError_t rc;
    if ((rc = cudaGetDevice(&dev)) != cudaSuccess ||
        (rc = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stats_kernel<T>, threads,
                                                            shmem)) != cudaSuccess)
        return rc;
    const size_t V = slot<T>::n, most = (size_t)1 << 31;
    fpki_ds_plan q = *p;
    for (size_t done = 0; done < n; done += most) {
        size_t m = n - done < most ? n - done : most;
        const T *d = data + done;
        uint64_t head, nvec;
        fpki_ds_split(m, (uintptr_t)d, (int)sizeof(T), &head, &nvec);
        size_t nslots = nvec + (m - nvec * V);
        size_t blocks = (nslots + threads - 1) / threads;
        size_t full = (size_t)sms * (per_sm > 0 ? per_sm : 1);
        q.base = p->base + done;
        stats_kernel<T><<<(unsigned)(blocks < full ? blocks : full), threads, shmem, stream>>>(
            d, m, head, nvec, q, out);
        if ((rc = cudaGetLastError()) != cudaSuccess)
            return rc;
    }
    return cudaSuccess;
}

} // namespace

extern "C" cudaError_t fpki_ds_launch(const fpki_ds_plan *p, const void *data, size_t n,
                                      unsigned long long *out, cudaStream_t stream)
{
    switch (p->width) {
    case 8: return launch(p, static_cast<const unsigned long long *>(data), n, out, stream);
    case 4: return launch(p, static_cast<const unsigned int *>(data), n, out, stream);
    case 2: return launch(p, static_cast<const unsigned short *>(data), n, out, stream);
    default: return launch(p, static_cast<const unsigned char *>(data), n, out, stream);
    }
}
