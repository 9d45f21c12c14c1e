#include "kvcache.h"

#include <math.h>

#include "common/halfconv.h"

void ref_page_of(const int32_t *table, int64_t table_stride, int64_t block_size, int b, int64_t t, int64_t *block,
                 int64_t *slot)
{
    *block = table[(int64_t)b * table_stride + t / block_size];
    *slot = t % block_size;
}

void ref_gather_pages(const double *cache, int64_t st_block, int64_t st_slot, int64_t st_head, int64_t st_dim,
                      const int32_t *table, int64_t table_stride, int64_t block_size, int B, int N, int E,
                      const int *S2, int S2cap, double *dst)
{
    for (int b = 0; b < B; b++)
        for (int64_t t = 0; t < S2[b]; t++) {
            int64_t blk, slot;
            ref_page_of(table, table_stride, block_size, b, t, &blk, &slot);
            for (int n = 0; n < N; n++)
                for (int e = 0; e < E; e++)
                    dst[(((int64_t)b * N + n) * S2cap + t) * E + e] =
                        cache[blk * st_block + slot * st_slot + n * st_head + e * st_dim];
        }
}

double ref_dequant(int8_t x, double scale, double offset) { return ((double)x + offset) * scale; }

int8_t ref_quant_i8(double out, double scale, double offset)
{
    const float v = (float)((float)out * (float)scale + (float)offset); /* the fp32 affine of §4.6 */
    const double h = tc_f16_decode(tc_f16_encode(v));
    if (isnan(h))
        return 0;
    if (h >= 127)
        return 127;
    if (h <= -128)
        return -128;
    /* round half to even, independent of the current rounding mode */
    double r = floor(h);
    const double frac = h - r;
    if (frac > 0.5 || (frac == 0.5 && fmod(r, 2) != 0))
        r += 1;
    return (int8_t)r;
}
