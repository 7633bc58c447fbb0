/* The rounding context and the stochastic-rounding generator. */
#include "config.h"

#include <strings.h>

#include "core-impl.h"

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

/* SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijection of 64 bits
 * with full avalanche, so consecutive counters give unrelated outputs. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t fpk_sr_hash(uint64_t seed, uint64_t counter)
{
    return mix64(mix64(seed) ^ (counter * 0x9e3779b97f4a7c15u + 0x632be59bd9b4e019u));
}

const char *fpk_version(void)
{
    return PACKAGE_STRING;
}
