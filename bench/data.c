/* Benchmark inputs.  The conversions are our own (the bench uses only the public API). */
#include "data.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define BENCH_HUGE_PAGE ((size_t)2 << 20)

static bool huge_pages;

bool bench_alloc_huge_pages(void)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    huge_pages = true;
#endif
    return huge_pages;
}

void *bench_alloc(size_t bytes)
{
    const size_t align = huge_pages && bytes >= BENCH_HUGE_PAGE ? BENCH_HUGE_PAGE : 64;
    const size_t size = bytes ? (bytes + align - 1) / align * align : align; /* aligned_alloc wants a multiple */
    void *p = aligned_alloc(align, size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && align == BENCH_HUGE_PAGE)
        (void)madvise(p, size, MADV_HUGEPAGE); /* a hint: refused, the pages stay 4 KB */
#endif
    if (p)
        memset(p, 0, size);
    return p;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Round to nearest even; the inputs here are small normal numbers, but stay exact anyway for
 * zero and values that become fp16 subnormals. */
static uint16_t f32_to_f16(float f)
{
    const uint32_t u = f32_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a >= 0x477ff000u) /* overflow, inf, NaN: inputs never get here */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u)
        return (uint16_t)(sign | ((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
    /* subnormal or zero: fp32 addition does the rounding for us */
    const float magic = bits_f32(0x3f000000u); /* 0.5: its ulp is the fp16 subnormal step 2^-24 */
    return (uint16_t)(sign | (f32_bits(bits_f32(a) + magic) - 0x3f000000u));
}

static float f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f)
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp != 0)
        return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    const float v = (float)mant * (1.0f / 16777216.0f);
    return sign ? -v : v;
}

static uint16_t f32_to_bf16(float f)
{
    const uint32_t u = f32_bits(f);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

void bench_fill_random(void *data, fc_dtype dtype, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17; /* xorshift64 */
        const float x = (float)(s >> 40) * (2.0f / 16777216.0f) - 1.0f;
        if (dtype == FC_F16)
            ((uint16_t *)data)[i] = f32_to_f16(x);
        else if (dtype == FC_BF16)
            ((uint16_t *)data)[i] = f32_to_bf16(x);
        else if (dtype == FC_I8)
            ((int8_t *)data)[i] = (int8_t)(x * 127.0f);
        else
            ((float *)data)[i] = x;
    }
}

void bench_to_f32(const void *src, fc_dtype dtype, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i++) {
        if (dtype == FC_F16)
            dst[i] = f16_to_f32(((const uint16_t *)src)[i]);
        else if (dtype == FC_BF16)
            dst[i] = bf16_to_f32(((const uint16_t *)src)[i]);
        else
            dst[i] = ((const float *)src)[i];
    }
}
