/* A seeded generator (xoshiro256**, seeded through splitmix64): same seed, same sequence, on any
 * platform, so every randomized sweep is reproducible from the seed it prints. */
#ifndef FLASHC_TESTS_RNG_H
#define FLASHC_TESTS_RNG_H

#include <stdint.h>

typedef struct tc_rng {
    uint64_t s[4];
} tc_rng;

tc_rng tc_rng_seed(uint64_t seed);
uint64_t tc_rng_u64(tc_rng *r);
double tc_rng_unit(tc_rng *r);                  /* [0, 1) */
double tc_rng_uniform(tc_rng *r, double lo, double hi);
int64_t tc_rng_int(tc_rng *r, int64_t lo, int64_t hi); /* [lo, hi] inclusive */
int tc_rng_bool(tc_rng *r, double p_true);

#endif
