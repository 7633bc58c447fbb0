/* The portable statistics kernel: stats-body.h compiled with the
 * library's own flags. */
#include "kernel-sets.h"
#include "stats-body.h"

void fpki_stats_c(const fpki_stats_keys *k, const uint32_t *x, size_t n, fpki_stats_totals *t)
{
    fpki_stats_generic(k, x, n, t);
}
