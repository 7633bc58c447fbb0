/* The portable conversion and widening kernels: convert-body.h compiled
 * with the library's own flags. */
#include "convert-body.h"
#include "kernel-sets.h"

static void store_plain_c(void *z, size_t i, const uint32_t *block, size_t n, size_t size,
                          bool stream)
{
    (void)stream;
    fpki_store_plain(z, i, block, n, size);
}

unsigned fpki_convert_c(const fpki_conv_plan *p, const uint32_t *x, void *z, size_t n,
                        uint64_t index, bool stream)
{
    (void)stream;
    return fpki_convert_generic(p, x, z, n, index, false, store_plain_c);
}

void fpki_widen_c(fpki_kformat from, const void *x, uint32_t *z, size_t n, bool daz)
{
    fpki_widen_generic(from, x, z, n, daz);
}
