/*
 * Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), the
 * counter-based generator behind generated dropout masks (flashc.h fc_dropout.generate).
 * Element e of the keep-bit enumeration is kept iff word (e mod 4) of
 * Philox(counter = offset + e/4 as (lo, hi, 0, 0), key = seed as (lo, hi)) < threshold.
 * One definition for both compilers (hd.h): the CPU kernels walk it as a stream (a block per four
 * elements), the CUDA kernels ask element by element (fc_philox_keep_at); integer arithmetic
 * only, so the bits agree wherever it runs (tests/unit/test_philox.c).
 */
#ifndef FC_CORE_PHILOX_H
#define FC_CORE_PHILOX_H

#include <stdbool.h>
#include <stdint.h>

#include "hd.h"

static inline FC_HD void fc_philox4x32_10(const uint32_t ctr[4], uint32_t k0, uint32_t k1, uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int round = 0; round < 10; round++) {
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1, c3 = (uint32_t)p0, c0 = n0, c2 = n2;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* The four words of block `block` (elements 4·block .. 4·block + 3). */
static inline FC_HD void fc_philox_block(uint64_t seed, uint64_t offset, uint64_t block, uint32_t out[4])
{
    const uint64_t c = offset + block;
    const uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
    fc_philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32), out);
}

/* Whether element e is kept, alone (the device's form: the word is picked without indexing the
 * array at run time, which would put it in local memory). */
static inline FC_HD bool fc_philox_keep_at(uint64_t seed, uint64_t offset, uint64_t threshold, uint64_t e)
{
    uint32_t w[4];
    fc_philox_block(seed, offset, e / 4, w);
    const uint32_t x = (e & 2) ? ((e & 1) ? w[3] : w[2]) : ((e & 1) ? w[1] : w[0]);
    return x < threshold;
}

/* Keep decisions along increasing e, one Philox block per four elements. */
typedef struct fc_philox_stream {
    uint64_t seed, offset, threshold, block; /* block: e/4 of words[], UINT64_MAX = none yet */
    uint32_t words[4];
} fc_philox_stream;

static inline fc_philox_stream fc_philox_stream_init(uint64_t seed, uint64_t offset, uint64_t threshold)
{
    fc_philox_stream s = {seed, offset, threshold, UINT64_MAX, {0, 0, 0, 0}};
    return s;
}

static inline bool fc_philox_keep(fc_philox_stream *s, uint64_t e)
{
    if (e / 4 != s->block) {
        s->block = e / 4;
        fc_philox_block(s->seed, s->offset, s->block, s->words);
    }
    return s->words[e % 4] < s->threshold;
}

#endif /* FC_CORE_PHILOX_H */
