// The device statistics kernel (devstats.h describes the work): one pass
// over the elements in 16-byte loads, two in flight per thread; the call's
// tables copied into shared memory; each warp's band counts in a histogram
// of its own there (warps share one where the bands are too many for a
// histogram each); the largest magnitude and the SR moves in registers;
// one merge per block into the call's counters (stats_plan.c turns them
// into an fpk_stats).
#include <cuda_runtime.h>

#include "stats_launch.h"

namespace {

const int threads = 256, warps = threads / 32;
// Shared memory a block takes before it would need the device's opt-in.
const size_t default_shared = 48 * 1024;

// 16 bytes, read once: streamed past the caches.
__device__ void load16(const unsigned char *p, uint32_t w[4])
{
    uint4 v = __ldcs(reinterpret_cast<const uint4 *>(p));
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
}

// One element of W bytes, in the low bytes of w.
template <int W> __device__ void load1(const unsigned char *p, uint32_t w[4])
{
    if (W == 8) {
        unsigned long long x = *reinterpret_cast<const unsigned long long *>(p);
        w[0] = (uint32_t)x;
        w[1] = (uint32_t)(x >> 32);
    } else {
        w[0] = W == 4 ? *reinterpret_cast<const uint32_t *>(p)
               : W == 2 ? *reinterpret_cast<const unsigned short *>(p)
                        : *p;
    }
}

template <int W, bool SR>
__device__ void add_vector(const fpki_ds_params &p, const fpki_ds_tables &t, const uint32_t w[4],
                           uint64_t first, fpki_ds_acc &acc)
{
#pragma unroll
    for (int i = 0; i < 16 / W; i++)
        fpki_ds_add(&p, &t, W, SR, fpki_ds_lane(w, W, i), first + i, &acc);
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

// Slots as fpki_ds_slot numbers them: NVEC vectors of 16 / W elements,
// 16-byte aligned from data + head, then the head's and the tail's
// elements.  Shared memory holds the table image (P.table_bytes) and
// COPIES histograms of every band.  The plan is read where the launch put
// it (__grid_constant__: no copy per thread).
template <int W, bool SR>
__global__ void __launch_bounds__(threads)
stats_kernel(const unsigned char *data, unsigned long long n, unsigned long long head,
             unsigned long long nvec, const __grid_constant__ fpki_ds_params p,
             const uint4 *image, int copies, unsigned long long *out)
{
    extern __shared__ uint4 shared[];
    const int nimage = (int)(p.table_bytes / 16), nb = p.nsides * p.nbands;
    for (int i = threadIdx.x; i < nimage; i += blockDim.x)
        shared[i] = image[i];
    unsigned *hist = reinterpret_cast<unsigned *>(shared + nimage);
    for (int i = threadIdx.x; i < copies * nb; i += blockDim.x)
        hist[i] = 0;
    __syncthreads();

    const fpki_ds_tables t = fpki_ds_tables_at(&p, shared);
    fpki_ds_acc acc = {};
    acc.hist = hist + (int)(threadIdx.x / 32) % copies * nb;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long me = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned long long s = me; s < nvec; s += 2 * stride) {
        uint64_t first0, first1 = 0;
        uint32_t w0[4], w1[4];
        fpki_ds_slot(s, n, head, nvec, W, &first0);
        load16(data + first0 * W, w0);
        bool two = s + stride < nvec;
        if (two) {
            fpki_ds_slot(s + stride, n, head, nvec, W, &first1);
            load16(data + first1 * W, w1);
        }
        add_vector<W, SR>(p, t, w0, first0, acc);
        if (two)
            add_vector<W, SR>(p, t, w1, first1, acc);
    }
    uint64_t first;
    for (unsigned long long s = nvec + me; fpki_ds_slot(s, n, head, nvec, W, &first); s += stride) {
        uint32_t w[4];
        load1<W>(data + first * W, w);
        fpki_ds_add(&p, &t, W, SR, fpki_ds_lane(w, W, 0), first, &acc);
    }

    const int lane = threadIdx.x & 31;
    unsigned long long v = warp_max(acc.amax);
    if (lane == 0 && v)
        atomicMax(&out[FPKI_DS_AMAX], v);
    if (SR) {
#pragma unroll
        for (int j = 0; j < FPK_STATS_MAX_FORMATS; j++)
            if (j < p.nformats)
#pragma unroll
                for (int m = 0; m < FPKI_DS_MAX_MOVES; m++) {
                    v = warp_sum(acc.moved[j][m]);
                    if (lane == 0 && v)
                        atomicAdd(&out[FPKI_DS_MOVED + FPKI_DS_MAX_MOVES * j + m], v);
                }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nb; i += blockDim.x) {
        unsigned long long sum = 0;
        for (int c = 0; c < copies; c++)
            sum += hist[c * nb + i];
        if (sum)
            atomicAdd(&out[FPKI_DS_BANDS + i], sum);
    }
}

// Launches at most 2^31 elements at a time, so that no 32-bit count (of a
// thread, of a band in a block's histogram) can wrap.
template <int W, bool SR>
cudaError_t launch(const fpki_ds_params *p, const void *image, const unsigned char *data, size_t n,
                   unsigned long long *out, cudaStream_t stream)
{
    auto kernel = stats_kernel<W, SR>;
    size_t hist = (size_t)p->nsides * (size_t)p->nbands * sizeof(unsigned);
    int copies = warps;
    while (copies > 1 && p->table_bytes + copies * hist > default_shared)
        copies--;
    size_t shmem = p->table_bytes + copies * hist;
    int dev, sms, per_sm;
    cudaError_t rc;
    if ((rc = cudaGetDevice(&dev)) != cudaSuccess ||
        (rc = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
        return rc;
    if (shmem > default_shared &&
        (rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)shmem)) != cudaSuccess)
        return rc;
    if ((rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shmem)) !=
        cudaSuccess)
        return rc;
    const size_t most = (size_t)1 << 31;
    fpki_ds_params q = *p;
    for (size_t done = 0; done < n; done += most) {
        size_t m = n - done < most ? n - done : most;
        const unsigned char *d = data + done * W;
        uint64_t head, nvec;
        fpki_ds_split(m, (uintptr_t)d, W, &head, &nvec);
        // two vectors a thread an iteration; the head's and the tail's
        // elements (fewer than 32) fit in the first block's threads
        size_t want = (nvec + 2 * threads - 1) / (2 * threads);
        size_t full = (size_t)sms * (per_sm > 0 ? per_sm : 1);
        unsigned blocks = (unsigned)(want < 1 ? 1 : want < full ? want : full);
        q.base = p->base + done;
        kernel<<<blocks, threads, shmem, stream>>>(d, m, head, nvec, q,
                                                  static_cast<const uint4 *>(image), copies, out);
        if ((rc = cudaGetLastError()) != cudaSuccess)
            return rc;
    }
    return cudaSuccess;
}

template <int W>
cudaError_t launch_mode(const fpki_ds_params *p, const void *image, const void *data, size_t n,
                        unsigned long long *out, cudaStream_t stream)
{
    const unsigned char *d = static_cast<const unsigned char *>(data);
    return p->sr ? launch<W, true>(p, image, d, n, out, stream)
                 : launch<W, false>(p, image, d, n, out, stream);
}

} // namespace

extern "C" cudaError_t fpki_ds_launch(const fpki_ds_params *p, const void *image,
                                      const void *data, size_t n, unsigned long long *out,
                                      cudaStream_t stream)
{
    switch (p->width) {
    case 8: return launch_mode<8>(p, image, data, n, out, stream);
    case 4: return launch_mode<4>(p, image, data, n, out, stream);
    case 2: return launch_mode<2>(p, image, data, n, out, stream);
    default: return launch_mode<1>(p, image, data, n, out, stream);
    }
}
