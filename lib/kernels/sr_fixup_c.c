/* The portable stochastic-rounding fix-up of the statistics:
 * sr-fixup-body.h compiled with the library's own flags. */
#include "kernel-sets.h"
#include "sr-fixup-body.h"

void fpki_sr_fixup_c(const fpki_sr_fixup_plan *p, const uint32_t *x, size_t n, uint64_t index,
                     int64_t (*delta)[4])
{
    fpki_sr_fixup_generic(p, x, n, index, delta);
}
