#include "halfconv.h"

#include <math.h>
#include <string.h>

/*
 * A binary format with `mant` stored mantissa bits, exponent bias `bias` and an all-ones exponent
 * for inf/NaN.  Normal numbers are (1 + f/2^mant)·2^(E − bias) with 1 ≤ E ≤ 2·bias; subnormals
 * f·2^(1 − bias − mant).
 */
static uint16_t encode(double x, int mant, int bias)
{
    const uint16_t sign = signbit(x) ? (uint16_t)(1u << 15) : 0;
    const uint16_t inf = (uint16_t)(((2 * bias + 1) << mant));
    if (isnan(x))
        return (uint16_t)(inf | (1u << (mant - 1))); /* quiet NaN */
    const double a = fabs(x);
    if (isinf(a))
        return sign | inf;
    if (a == 0)
        return sign;
    int e2;
    frexp(a, &e2);                  /* a = f·2^e2, f in [0.5, 1): the leading bit weighs 2^(e2−1) */
    int E = (e2 - 1) + bias;        /* biased exponent if normal */
    if (E < 1)
        E = 1;                      /* subnormal: the quantum of the smallest normal binade */
    const int q = E - bias - mant;  /* the quantum of that binade is 2^q */
    double n = rint(ldexp(a, -q));  /* integer significand, rounded to nearest even */
    /* n in [2^mant, 2^(mant+1)] for normals, [0, 2^mant] for subnormals; carry into the exponent. */
    if (n >= ldexp(1.0, mant + 1)) {
        n /= 2;
        E += 1;
    }
    if (n < ldexp(1.0, mant)) /* subnormal (or rounded to zero): exponent field 0 */
        return (uint16_t)(sign | (uint16_t)n);
    if (E > 2 * bias)
        return sign | inf;
    return (uint16_t)(sign | (E << mant) | ((uint16_t)(n - ldexp(1.0, mant))));
}

static double decode(uint16_t h, int mant, int bias)
{
    const int E = (h >> mant) & ((1 << (15 - mant)) - 1);
    const int f = h & ((1 << mant) - 1);
    const double s = (h >> 15) ? -1.0 : 1.0;
    if (E == 2 * bias + 1)
        return f ? NAN : s * INFINITY;
    if (E == 0)
        return s * ldexp((double)f, 1 - bias - mant);
    return s * ldexp((double)(f + (1 << mant)), E - bias - mant);
}

uint16_t tc_f16_encode(double x) { return encode(x, 10, 15); }
double tc_f16_decode(uint16_t h) { return decode(h, 10, 15); }
uint16_t tc_bf16_encode(double x) { return encode(x, 7, 127); }
double tc_bf16_decode(uint16_t h) { return decode(h, 7, 127); }

size_t tc_dtype_size(tc_dtype t) { return t == TC_F32 ? 4 : 2; }

const char *tc_dtype_name(tc_dtype t) { return t == TC_F32 ? "f32" : t == TC_F16 ? "f16" : "bf16"; }

double tc_round(tc_dtype t, double x)
{
    switch (t) {
    case TC_F16: return tc_f16_decode(tc_f16_encode(x));
    case TC_BF16: return tc_bf16_decode(tc_bf16_encode(x));
    default: return (double)(float)x;
    }
}

void tc_store(tc_dtype t, void *base, int64_t k, double x)
{
    if (t == TC_F32) {
        const float f = (float)x;
        memcpy((char *)base + 4 * k, &f, 4);
    } else {
        const uint16_t h = t == TC_F16 ? tc_f16_encode(x) : tc_bf16_encode(x);
        memcpy((char *)base + 2 * k, &h, 2);
    }
}

double tc_load(tc_dtype t, const void *base, int64_t k)
{
    if (t == TC_F32) {
        float f;
        memcpy(&f, (const char *)base + 4 * k, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, (const char *)base + 2 * k, 2);
    return t == TC_F16 ? tc_f16_decode(h) : tc_bf16_decode(h);
}
