/* The portable Hadamard-transform kernel: rht-body.h compiled with the
 * library's own flags. */
#include "kernel-sets.h"
#include "rht-body.h"

size_t fpki_rht16_c(const uint32_t *x, size_t n, uint16_t signs, int prec, uint32_t *z,
                    uint8_t *redo)
{
    return fpki_rht16_generic(x, n, signs, prec, z, redo);
}
