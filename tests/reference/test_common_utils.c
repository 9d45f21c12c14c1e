/* The shared utilities checked against values worked out by hand from the IEEE formats. */
#include <math.h>
#include <stdio.h>

#include "common/check.h"
#include "common/halfconv.h"
#include "common/rng.h"
#include "common/tolerance.h"

static void f16_known_values(void)
{
    tc_context("f16 known values");
    const struct { double x; unsigned bits; } cases[] = {
        {1.0, 0x3C00}, {-2.0, 0xC000}, {0.5, 0x3800}, {65504.0, 0x7BFF}, {65519.0, 0x7BFF},
        {65520.0, 0x7C00},                      /* halfway to 2^16 rounds to inf */
        {0x1p-14, 0x0400},                      /* smallest normal */
        {0x1p-24, 0x0001},                      /* smallest subnormal */
        {0x1p-25, 0x0000},                      /* tie between 0 and 2^-24: even is 0 */
        {0x1.8p-25, 0x0001},                    /* 0.75 quanta */
        {0x3p-25, 0x0002},                      /* 1.5 quanta: tie to even 2 */
        {1023 * 0x1p-24, 0x03FF},               /* largest subnormal */
        {1.0 + 0x1p-11, 0x3C00},                /* tie: even mantissa */
        {1.0 + 0x3p-11, 0x3C02},                /* tie: up to even */
        {1.0 + 0x1p-11 + 0x1p-40, 0x3C01},      /* one rounding from double, not two */
        {-0.0, 0x8000}, {INFINITY, 0x7C00}, {-INFINITY, 0xFC00}, {1e10, 0x7C00},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        TC_CHECK(tc_f16_encode(cases[k].x) == cases[k].bits, "encode(%a) = 0x%04X, want 0x%04X", cases[k].x,
                 tc_f16_encode(cases[k].x), cases[k].bits);
    TC_CHECK(tc_f16_decode(0x3555) == 0x1.554p-2, "decode 0x3555 = %a", tc_f16_decode(0x3555));
    TC_CHECK(tc_f16_decode(0x8001) == -0x1p-24, "decode 0x8001");
    const uint16_t nan = tc_f16_encode(NAN);
    TC_CHECK((nan & 0x7C00) == 0x7C00 && (nan & 0x3FF) != 0, "NaN encodes as NaN: 0x%04X", nan);
}

static void bf16_known_values(void)
{
    tc_context("bf16 known values");
    const struct { double x; unsigned bits; } cases[] = {
        {1.0, 0x3F80}, {-1.5, 0xBFC0}, {1.0 + 0x1p-8, 0x3F80}, {1.0 + 0x3p-8, 0x3F82},
        {0x1.fep127, 0x7F7F},                 /* largest finite */
        {0x1.ffp127, 0x7F80},                 /* halfway above it: odd mantissa rounds up to inf */
        {0x1p-126, 0x0080}, {0x1p-133, 0x0001}, {0x1p-134, 0x0000}, {-0.0, 0x8000},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        TC_CHECK(tc_bf16_encode(cases[k].x) == cases[k].bits, "encode(%a) = 0x%04X, want 0x%04X", cases[k].x,
                 tc_bf16_encode(cases[k].x), cases[k].bits);
    TC_CHECK(tc_bf16_decode(0x4049) == 3.140625, "decode 0x4049");
}

/* Every finite bit pattern decodes and re-encodes to itself. */
static void round_trips(void)
{
    tc_context("round trips");
    int bad16 = 0, badbf = 0;
    for (unsigned h = 0; h < 65536; h++) {
        if ((h & 0x7C00) != 0x7C00 && tc_f16_encode(tc_f16_decode((uint16_t)h)) != h)
            bad16++;
        if ((h & 0x7F80) != 0x7F80 && tc_bf16_encode(tc_bf16_decode((uint16_t)h)) != h)
            badbf++;
    }
    TC_CHECK(bad16 == 0, "%d f16 patterns do not round-trip", bad16);
    TC_CHECK(badbf == 0, "%d bf16 patterns do not round-trip", badbf);
    TC_CHECK(tc_round(TC_F16, 0.1) == tc_f16_decode(0x2E66), "round f16 0.1 = %a", tc_round(TC_F16, 0.1));
    TC_CHECK(tc_round(TC_F32, 0.1) == (double)0.1f, "round f32 0.1");
    char buf[8];
    tc_store(TC_BF16, buf, 1, -1.5);
    TC_CHECK(tc_load(TC_BF16, buf, 1) == -1.5, "store/load bf16");
}

static void rng(void)
{
    tc_context("rng");
    tc_rng a = tc_rng_seed(42), b = tc_rng_seed(42), c = tc_rng_seed(43);
    int same = 1, differ = 0, in_range = 1;
    for (int k = 0; k < 1000; k++) {
        const uint64_t x = tc_rng_u64(&a);
        same &= x == tc_rng_u64(&b);
        differ |= x != tc_rng_u64(&c);
    }
    for (int k = 0; k < 1000; k++) {
        const int64_t r = tc_rng_int(&a, -3, 5);
        const double u = tc_rng_unit(&a);
        in_range &= r >= -3 && r <= 5 && u >= 0 && u < 1;
    }
    TC_CHECK(same, "same seed, same sequence");
    TC_CHECK(differ, "different seeds differ");
    TC_CHECK(in_range, "ranges respected");
}

static void tolerance(void)
{
    tc_context("tolerance");
    const tc_tol t = tc_tol_out(TC_F32);
    TC_CHECK(tc_close(1.0 + 1e-4, 1.0, t, 1), "inside: 1e-5 + 1e-4·1");
    TC_CHECK(!tc_close(1.0 + 2e-4, 1.0, t, 1), "outside");
    TC_CHECK(tc_close(0, 9e-6, t, 1) && !tc_close(0, 2e-5, t, 1), "atol near zero");
    TC_CHECK(tc_close(10 + 2e-4, 10, tc_tol_out(TC_F32), 10), "M scales atol for gradients");
    TC_CHECK(!tc_close(NAN, 0, tc_tol_out(TC_BF16), 1), "NaN never passes");
    TC_CHECK(tc_grad_scale((const double[]){0.5, -3, 2}, 3) == 3, "M = max(1, max|r|)");
    TC_CHECK(tc_f32_bits(-3.4028234663852886e38f) == TC_NEG_FLT_MAX_BITS, "-FLT_MAX bits");
}

int main(void)
{
    f16_known_values();
    bf16_known_values();
    round_trips();
    rng();
    tolerance();
    return tc_summary("common_utils");
}
