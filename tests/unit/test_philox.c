/*
 * The generated dropout mask's one definition (core/philox.h, core/terms.h), as both backends use
 * it: the CUDA kernels ask element by element (fc_philox_keep_at through fc_dropout_keeps, FC_HD:
 * the same source nvcc compiles for the device), the CPU kernels walk a row as a stream
 * (fc_philox_keep from the row's first element, as kernels/dropout.h does).  Checked here: the two
 * forms bit for bit over rows of every alignment, counters that wrap, seeds with both halves set,
 * the threshold's ends (0 and 2^32) and the caller-bits path of fc_dropout_keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "core/terms.h"

static uint64_t lcg = 0x9E3779B97F4A7C15ull;
static uint64_t next64(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return lcg ^ (lcg >> 29);
}

/* n elements from e0 by the stream and one by one: every decision equal. */
static int64_t compare_row(uint64_t seed, uint64_t offset, uint64_t threshold, uint64_t e0, int n)
{
    fc_philox_stream st = fc_philox_stream_init(seed, offset, threshold);
    int64_t bad = 0, kept = 0;
    for (int j = 0; j < n; j++) {
        const bool a = fc_philox_keep(&st, e0 + (uint64_t)j), b = fc_philox_keep_at(seed, offset, threshold, e0 + (uint64_t)j);
        bad += a != b;
        kept += a;
    }
    if (threshold == 0)
        bad += kept != 0; /* nothing is below 0 */
    if (threshold == 4294967296ull)
        bad += kept != n; /* every word is below 2^32 */
    return bad;
}

static void stream_and_element(void)
{
    const uint64_t thresholds[] = {0, 1, 429496730ull /* 0.1 */, 2147483648ull, 3865470566ull /* 0.9 */, 4294967295ull,
                                   4294967296ull};
    int64_t bad = 0, rows = 0;
    for (int t = 0; t < (int)(sizeof thresholds / sizeof thresholds[0]); t++)
        for (int r = 0; r < 200; r++) {
            const uint64_t seed = next64(), e0 = r < 100 ? next64() >> (r % 40) : (uint64_t)r;
            const uint64_t offset = r % 7 == 0 ? UINT64_MAX - (uint64_t)(r % 5) : next64() >> 3; /* wraps at r % 7 == 0 */
            bad += compare_row(seed, offset, thresholds[t], e0, 1 + r % 67);
            rows++;
        }
    TC_CHECK(bad == 0, "stream and element-wise keep decisions: %lld differ over %lld rows", (long long)bad, (long long)rows);
}

/* fc_dropout_keeps against the CPU kernels' walk (kernels/dropout.h: the row's first bit, then a
 * stream), for generated bits and for caller bits. */
static void problem_elements(void)
{
    fc_problem p;
    memset(&p, 0, sizeof p);
    fc_batch bt;
    memset(&bt, 0, sizeof bt);
    bt.sq = 13, bt.skv = 29, bt.drop_bit0 = 12345;
    p.drop_philox = true, p.drop_seed = 0x0123456789abcdefull, p.drop_offset = 77, p.drop_threshold = 3006477107ull;
    static uint8_t bits[8192];
    for (size_t k = 0; k < sizeof bits; k++)
        bits[k] = (uint8_t)next64();
    int64_t bad = 0, kept = 0, n = 0;
    for (int mode = 0; mode < 2; mode++) {
        p.drop_philox = mode == 0, p.drop_bits = mode == 0 ? NULL : bits;
        for (int64_t n1 = 0; n1 < 3; n1++)
            for (int64_t i = 0; i < bt.sq; i++) {
                const int64_t e0 = fc_keep_bit_index(&bt, n1, i, 0);
                fc_philox_stream st = fc_philox_stream_init(p.drop_seed, p.drop_offset, p.drop_threshold);
                for (int64_t j = 0; j < bt.skv; j++, n++) {
                    const bool cpu = mode == 0 ? fc_philox_keep(&st, (uint64_t)(e0 + j)) : fc_keep_bit(bits, e0 + j);
                    const bool dev = fc_dropout_keeps(&p, &bt, n1, i, j);
                    bad += cpu != dev;
                    kept += dev;
                }
            }
    }
    TC_CHECK(bad == 0, "fc_dropout_keeps against the CPU's walk: %lld of %lld differ", (long long)bad, (long long)n);
    TC_CHECK(kept > n / 4 && kept < n, "keep rate plausible: %lld of %lld kept", (long long)kept, (long long)n);
}

int main(void)
{
    stream_and_element();
    problem_elements();
    return tc_summary("unit_philox");
}
