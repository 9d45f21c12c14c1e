/* Decode helpers by hand: page gathering (§4.3), int8 dequantisation (§4.5) and output
 * quantisation with its fp16 step, ties to even, saturation and NaN (§4.6, §8.11). */
#include <math.h>
#include <string.h>

#include "common/check.h"
#include "reference/kvcache.h"

static void pages(void)
{
    tc_context("pages");
    /* 3 physical blocks of 2 slots, one head, E = 1; cache value = 10·block + slot */
    double cache[3 * 2];
    for (int blk = 0; blk < 3; blk++)
        for (int s = 0; s < 2; s++)
            cache[blk * 2 + s] = 10 * blk + s;
    const int32_t table[2 * 3] = {2, 0, 99, 1, 1, 2}; /* batch 0: blocks 2, 0; batch 1: 1, 1, 2 */
    const int S2[2] = {3, 5};
    double dst[2 * 5];
    for (int t = 0; t < 10; t++)
        dst[t] = -1;
    ref_gather_pages(cache, 2, 1, 0, 0, table, 3, 2, 2, 1, 1, S2, 5, dst);
    const double want[10] = {20, 21, 0, -1, -1, 10, 11, 10, 11, 20};
    TC_CHECK(memcmp(dst, want, sizeof want) == 0, "gathered %g %g %g | %g %g %g %g %g", dst[0], dst[1], dst[2], dst[5],
             dst[6], dst[7], dst[8], dst[9]);
    int64_t blk, slot;
    ref_page_of(table, 3, 2, 1, 4, &blk, &slot);
    TC_CHECK(blk == 2 && slot == 0, "token 4 of batch 1: block 2 slot 0");
}

static void quant(void)
{
    tc_context("dequant / quant");
    TC_CHECK(ref_dequant(-3, 0.5, 1) == -1, "(x + offset)·scale");
    TC_CHECK(ref_dequant(127, 2, 0) == 254, "no offset");
    const struct { double v; int8_t want; } c[] = {
        {0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {0.4, 0}, {0.6, 1},
        {127.4, 127}, {126.6, 127}, {300, 127}, {-128.4, -128}, {-1000, -128}, {1e6, 127}, {-1e6, -128},
        {INFINITY, 127}, {-INFINITY, -128}, {NAN, 0},
        {0.49999, 0},  /* fp16(0.49999) = 0.5 → ties to even → 0 */
        {2.4997, 2},   /* fp16 → 2.5 → 2 (not 2) */
        {3.4995, 4},   /* fp16 → 3.5 → 4, although the fp32 value rounds to 3 */
        {70000, 127},  /* fp16 overflow → inf → 127 */
    };
    for (unsigned t = 0; t < sizeof c / sizeof c[0]; t++)
        TC_CHECK(ref_quant_i8(c[t].v, 1, 0) == c[t].want, "quant(%g) = %d, want %d", c[t].v, ref_quant_i8(c[t].v, 1, 0),
                 c[t].want);
    TC_CHECK(ref_quant_i8(3, 0.5, 0.25) == 2, "3·0.5 + 0.25 = 1.75 → 2");
    TC_CHECK(ref_quant_i8(-3, 0.5, -0.5) == -2, "-3·0.5 - 0.5 = -2");
}

int main(void)
{
    pages();
    quant();
    return tc_summary("reference_kvcache");
}
