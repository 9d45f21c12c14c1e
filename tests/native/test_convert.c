/* The public fp16 / bf16 conversions (flashc.h) against the tests' own encoders (common/halfconv,
 * written from the formats in double, no code shared with the library): every 16-bit pattern both
 * ways, every rounding tie and its neighbours, overflow and underflow edges, and a scan over the
 * whole fp32 range. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <flashc.h>

#include "common/check.h"
#include "common/halfconv.h"

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static bool is_nan16(uint16_t h, int mant)
{
    const uint16_t inf = mant == 10 ? 0x7c00u : 0x7f80u;
    return (h & inf) == inf && (h & ((1u << mant) - 1u)) != 0;
}

/* Every pattern decodes exactly, and encoding the result gives the pattern back (NaN stays NaN). */
static void decode_all(void)
{
    int bad16 = 0, bad_bf = 0;
    for (uint32_t u = 0; u <= 0xffffu; u++) {
        const uint16_t h = (uint16_t)u;
        const float a = fc_f16_to_f32(h), b = fc_bf16_to_f32(h);
        const double ra = tc_f16_decode(h), rb = tc_bf16_decode(h);
        if (is_nan16(h, 10))
            bad16 += !(isnan(a) && is_nan16(fc_f32_to_f16(a), 10));
        else
            bad16 += !((double)a == ra && !signbit(a) == !signbit(ra) && fc_f32_to_f16(a) == h);
        if (is_nan16(h, 7))
            bad_bf += !(isnan(b) && is_nan16(fc_f32_to_bf16(b), 7));
        else
            bad_bf += !((double)b == rb && !signbit(b) == !signbit(rb) && fc_f32_to_bf16(b) == h);
    }
    TC_CHECK(bad16 == 0, "%d fp16 patterns decode or round-trip wrongly", bad16);
    TC_CHECK(bad_bf == 0, "%d bf16 patterns decode or round-trip wrongly", bad_bf);
}

static int mismatches;

static void encode_one(float f)
{
    const uint16_t h = fc_f32_to_f16(f), b = fc_f32_to_bf16(f);
    if (isnan(f)) {
        mismatches += !is_nan16(h, 10) + !is_nan16(b, 7);
        return;
    }
    const uint16_t rh = tc_f16_encode(f), rb = tc_bf16_encode(f);
    if ((h != rh || b != rb) && mismatches++ < 5)
        TC_CHECK(false, "fp32 %a: fp16 0x%04x want 0x%04x, bf16 0x%04x want 0x%04x", f, h, rh, b, rb);
}

/* Exact midpoints between neighbouring 16-bit values (ties go to the even one) and one fp32 ulp
 * either side, for every fp16 and bf16 pattern; then every 509th fp32 pattern. */
static void encode_ties_and_scan(void)
{
    for (uint32_t u = 0; u < 0x7fffu; u++) {
        for (int sign = 0; sign < 2; sign++) {
            const double s = sign ? -1.0 : 1.0;
            const double lo16 = tc_f16_decode((uint16_t)u), hi16 = tc_f16_decode((uint16_t)(u + 1));
            const double lob = tc_bf16_decode((uint16_t)u), hib = tc_bf16_decode((uint16_t)(u + 1));
            const double mids[2] = {(lo16 + hi16) / 2, (lob + hib) / 2};
            for (int k = 0; k < 2; k++) {
                if (!isfinite(mids[k]))
                    continue;
                const float m = (float)(s * mids[k]); /* exact: a midpoint has few significant bits */
                encode_one(m);
                encode_one(nextafterf(m, 0.0f));
                encode_one(nextafterf(m, s * INFINITY));
            }
        }
    }
    for (uint64_t u = 0; u <= 0xffffffffu; u += 509)
        encode_one(f32_of((uint32_t)u));
    const float edges[] = {65504.0f, 65519.99f, 65520.0f, 1e9f, INFINITY, -INFINITY, 0x1p-24f, 0x1p-25f,
                           0x1.8p-25f, 0x1p-26f, 0x1p-149f, 0.0f, -0.0f, 3.3895314e38f, FLT_MAX};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        encode_one(edges[i]), encode_one(-edges[i]);
    TC_CHECK(mismatches == 0, "%d fp32 values encode differently from the round-to-nearest-even reference", mismatches);
    /* the named cases, spelled out */
    TC_CHECK(fc_f32_to_f16(65520.0f) == 0x7c00u && fc_f32_to_f16(65519.99f) == 0x7bffu, "fp16 overflow edge");
    TC_CHECK(fc_f32_to_f16(0x1p-25f) == 0 && fc_f32_to_f16(0x1.8p-25f) == 1, "fp16 smallest subnormal tie");
    TC_CHECK(fc_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80u && fc_f32_to_bf16(1.0f + 0x3p-8f) == 0x3f82u,
             "bf16 ties to even");
    TC_CHECK(fc_f32_to_f16(-INFINITY) == 0xfc00u && fc_f32_to_bf16(INFINITY) == 0x7f80u, "infinities");
    TC_CHECK(is_nan16(fc_f32_to_f16(f32_of(0x7f800001u)), 10) && is_nan16(fc_f32_to_bf16(f32_of(0xff800001u)), 7),
             "a signalling-NaN payload that would truncate to zero still gives a NaN");
}

int main(void)
{
    decode_all();
    encode_ties_and_scan();
    return tc_summary("native_convert");
}
