/* The rounding context and the stochastic-rounding generator. */
#include "config.h"

#include <strings.h>

#include "core-impl.h"
#include "sr-hash.h"

static const char *const round_names[FPK_ROUND_COUNT] = {
    [FPK_RNE] = "rne", [FPK_RNA] = "rna", [FPK_RTZ] = "rtz", [FPK_RUP] = "rup",
    [FPK_RDN] = "rdn", [FPK_ROD] = "rod", [FPK_SR] = "sr",
};

const char *fpk_round_name(fpk_round mode)
{
    return (unsigned)mode < FPK_ROUND_COUNT ? round_names[mode] : "?";
}

bool fpk_round_lookup(const char *name, fpk_round *mode)
{
    for (int m = 0; name && m < FPK_ROUND_COUNT; m++)
        if (strcasecmp(name, round_names[m]) == 0) {
            *mode = (fpk_round)m;
            return true;
        }
    return false;
}

fpk_ctx fpk_ctx_default(void)
{
    return (fpk_ctx){.round = FPK_RNE, .sr_bits = 32};
}

uint64_t fpk_sr_hash(uint64_t seed, uint64_t counter)
{
    return fpki_sr_hash(seed, counter);
}

const char *fpk_version(void)
{
    return PACKAGE_STRING;
}
