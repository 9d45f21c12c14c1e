/*
 * Scalar fp16 / bf16 <-> fp32 conversions, round-to-nearest-even, exact for every input
 * (subnormals, infinities, NaN).  Used by the portable kernel path, the faces and the runtime;
 * src/native/convert.c exports them as the public fc_f32_to_f16() and friends.
 */
#ifndef FC_CORE_HALF_H
#define FC_CORE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t fc_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float fc_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float fc_f16_to_f32_inline(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) /* inf / NaN */
        return fc_bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp != 0)
        return fc_bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0)
        return fc_bits_f32(sign);
    /* subnormal: value = mant · 2^-24 */
    const float v = (float)mant * (1.0f / 16777216.0f);
    return sign ? -v : v;
}

static inline uint16_t fc_f32_to_f16_inline(float f)
{
    const uint32_t u = fc_f32_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) /* inf / NaN (keep NaN quiet and non-zero) */
        return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0));
    if (a >= 0x477ff000u) /* rounds to >= 65536 -> inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) { /* normal half */
        const uint32_t mant_rounded = a + 0xfffu + ((a >> 13) & 1u);
        return (uint16_t)(sign | ((mant_rounded - 0x38000000u) >> 13));
    }
    /* subnormal half (or zero): scale so that the integer part is the half mantissa */
    const uint32_t shift = 113u - (a >> 23); /* >= 1 */
    if (shift > 11) /* below half the smallest subnormal: rounds to zero */
        return sign;
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t q = m >> (shift + 13);
    const uint32_t rem = m & ((1u << (shift + 13)) - 1u);
    const uint32_t half = 1u << (shift + 12);
    const uint32_t r = q + (rem > half || (rem == half && (q & 1u)));
    return (uint16_t)(sign | r);
}

static inline float fc_bf16_to_f32_inline(uint16_t h)
{
    return fc_bits_f32((uint32_t)h << 16);
}

static inline uint16_t fc_f32_to_bf16_inline(float f)
{
    const uint32_t u = fc_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it a quiet NaN */
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#endif /* FC_CORE_HALF_H */
