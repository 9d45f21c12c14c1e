/*
 * The CUDA decode's work split (src/cuda/decode_split.h), host-side and pure: blocks of a range,
 * each CTA's run of blocks (the runs tile [0, nblk) in order for every split count, so each
 * block's partial is the same whatever the count), and the split count (within its bounds,
 * minimal cost against a brute-force search, the smallest on ties, the same for the same inputs).
 */
#include <stdio.h>

#include "common/check.h"
#include "common/rng.h"
#include "cuda/decode_split.h"

static void blocks(void)
{
    TC_CHECK(fc_dec_blocks(0) == 0 && fc_dec_blocks(-3) == 0, "no blocks for an empty range");
    TC_CHECK(fc_dec_blocks(1) == 1 && fc_dec_blocks(FC_DEC_BLOCK) == 1 && fc_dec_blocks(FC_DEC_BLOCK + 1) == 2,
             "blocks round up");
}

static void ranges(tc_rng *r)
{
    for (int n = 0; n < 2000; n++) {
        const int64_t nblk = tc_rng_int(r, 0, 3000), nsplit = tc_rng_int(r, 1, FC_DEC_MAX_SPLITS);
        int64_t next = 0, per = 0;
        bool ok = true;
        for (int64_t s = 0; s < nsplit; s++) {
            int64_t k0, k1;
            fc_dec_split_range(nblk, nsplit, s, &k0, &k1);
            ok &= k0 == next && k1 >= k0 && k1 <= nblk;
            if (s == 0)
                per = k1 - k0;
            ok &= k1 - k0 <= per;
            next = k1;
        }
        ok &= next == nblk;
        if (!ok) {
            TC_CHECK(false, "the runs of %lld splits tile [0, %lld) in order", (long long)nsplit, (long long)nblk);
            return;
        }
    }
    TC_CHECK(true, "split runs tile every range in order");
}

static int64_t cost(int64_t rows, int64_t maxblk, int64_t slots, int64_t n)
{
    return (rows * n + slots - 1) / slots * ((maxblk + n - 1) / n);
}

static void counts(tc_rng *r)
{
    for (int k = 0; k < 3000; k++) {
        const int64_t rows = tc_rng_int(r, 1, 4096), maxblk = tc_rng_int(r, 0, 2048), slots = tc_rng_int(r, 1, 528);
        const int n = fc_dec_split_count(rows, maxblk, slots);
        const int64_t cap = maxblk < 1 ? 1 : maxblk < FC_DEC_MAX_SPLITS ? maxblk : FC_DEC_MAX_SPLITS;
        bool ok = n >= 1 && n <= cap && n == fc_dec_split_count(rows, maxblk, slots);
        for (int64_t m = 1; ok && maxblk > 1 && m <= cap; m++)
            ok = m < n ? cost(rows, maxblk, slots, m) > cost(rows, maxblk, slots, n) : cost(rows, maxblk, slots, m) >= cost(rows, maxblk, slots, n);
        if (!ok) {
            TC_CHECK(false, "split count %d for rows %lld, %lld blocks, %lld slots", n, (long long)rows, (long long)maxblk,
                     (long long)slots);
            return;
        }
    }
    TC_CHECK(fc_dec_split_count(512, 4, 132) == 1, "many rows, short ranges: one CTA per row");
    TC_CHECK(fc_dec_split_count(8, 128, 132) == 16, "8 rows of 128 blocks on 132 slots: 16 CTAs per row");
    TC_CHECK(fc_dec_split_count(0, 100, 132) == 1 && fc_dec_split_count(5, 1, 132) == 1, "nothing to split: 1");
}

int main(void)
{
    tc_rng r = tc_rng_seed(20261128u);
    blocks();
    ranges(&r);
    counts(&r);
    return tc_summary("test_unit_decode_split");
}
