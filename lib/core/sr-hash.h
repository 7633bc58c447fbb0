/* The stochastic-rounding hash, the one definition of fpk_sr_hash: pure C
 * without globals or library calls, so that ctx.c, the bulk kernels and
 * the CUDA device code (cuda/devstats.h) all inline the same function.
 *
 * hash(seed, counter) = mix(mix(seed) ^ (counter * GOLDEN + OFFSET)), where
 * mix is SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijection of
 * 64 bits with full avalanche, so consecutive counters give unrelated
 * outputs.  A caller hashing many counters with one seed mixes the seed
 * once (fpki_sr_hash_mixed). */
#ifndef FPKIT_SR_HASH_H
#define FPKIT_SR_HASH_H

#include <stdint.h>

/* Functions callable from host and device code alike. */
#ifdef __CUDACC__
#define FPKI_SR_HASH_FN static inline __host__ __device__
#else
#define FPKI_SR_HASH_FN static inline
#endif

#define FPKI_SR_MIX1 UINT64_C(0xbf58476d1ce4e5b9)   /* the finaliser's multipliers */
#define FPKI_SR_MIX2 UINT64_C(0x94d049bb133111eb)
#define FPKI_SR_GOLDEN UINT64_C(0x9e3779b97f4a7c15) /* the counter's multiplier */
#define FPKI_SR_OFFSET UINT64_C(0x632be59bd9b4e019) /* and what is added to the product */

/* SplitMix64's finaliser. */
FPKI_SR_HASH_FN uint64_t fpki_sr_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * FPKI_SR_MIX1;
    z = (z ^ (z >> 27)) * FPKI_SR_MIX2;
    return z ^ (z >> 31);
}

/* fpk_sr_hash(seed, COUNTER), SEED_MIX being fpki_sr_mix(seed). */
FPKI_SR_HASH_FN uint64_t fpki_sr_hash_mixed(uint64_t seed_mix, uint64_t counter)
{
    return fpki_sr_mix(seed_mix ^ (counter * FPKI_SR_GOLDEN + FPKI_SR_OFFSET));
}

/* fpk_sr_hash(SEED, COUNTER). */
FPKI_SR_HASH_FN uint64_t fpki_sr_hash(uint64_t seed, uint64_t counter)
{
    return fpki_sr_hash_mixed(fpki_sr_mix(seed), counter);
}

#endif
