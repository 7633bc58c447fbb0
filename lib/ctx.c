/* The rounding context and the stochastic-rounding generator. */
#include "config.h"

#include "fpkit-impl.h"

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
