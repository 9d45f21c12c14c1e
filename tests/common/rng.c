#include "rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

tc_rng tc_rng_seed(uint64_t seed)
{
    tc_rng r;
    for (int k = 0; k < 4; k++)
        r.s[k] = splitmix64(&seed);
    return r;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t tc_rng_u64(tc_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double tc_rng_unit(tc_rng *r) { return (double)(tc_rng_u64(r) >> 11) * 0x1.0p-53; }

double tc_rng_uniform(tc_rng *r, double lo, double hi) { return lo + (hi - lo) * tc_rng_unit(r); }

int64_t tc_rng_int(tc_rng *r, int64_t lo, int64_t hi)
{
    const uint64_t span = (uint64_t)(hi - lo) + 1;
    return span == 0 ? (int64_t)tc_rng_u64(r) : lo + (int64_t)(tc_rng_u64(r) % span);
}

int tc_rng_bool(tc_rng *r, double p_true) { return tc_rng_unit(r) < p_true; }
