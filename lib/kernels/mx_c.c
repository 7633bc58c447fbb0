/* The portable block-scaling kernels: mx-body.h compiled with the
 * library's own flags. */
#include "kernel-sets.h"
#include "mx-body.h"

uint64_t fpki_mx_amax_c(const uint32_t *x, size_t n)
{
    return fpki_mx_amax_generic(x, n);
}

bool fpki_mx_scale_down_c(const fpki_mx_span *s, const uint32_t *x, uint32_t *xs, size_t n,
                          uint8_t *odd)
{
    return fpki_mx_scale_down_generic(s, x, xs, n, odd);
}

bool fpki_mx_scale_up_c(const fpki_mx_span *s, const uint32_t *q, const uint32_t *xs, uint32_t *y,
                        size_t n, uint32_t counts[2])
{
    return fpki_mx_scale_up_generic(s, q, xs, y, n, counts);
}
