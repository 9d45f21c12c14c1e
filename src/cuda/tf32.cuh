/*
 * fp32 products at fp32's accuracy on tf32 tensor cores (3×TF32): each factor x splits into
 * hi = tf32(x) and lo = tf32(x − hi), which together carry about 21 of fp32's 24 significand
 * bits, and a·b ≈ lo_a·hi_b + hi_a·lo_b + hi_a·hi_b (the small terms first; lo_a·lo_b, below
 * fp32's rounding, is left out).  A non-finite x keeps lo = 0, so that inf stays inf rather than
 * becoming inf − inf = NaN in the low part.
 */
#ifndef FC_CUDA_TF32_CUH
#define FC_CUDA_TF32_CUH

#include "ptx.cuh"

namespace fc_cuda {

struct Tf32Split {
    uint32_t hi, lo;
};

__device__ __forceinline__ Tf32Split tf32_split(float x)
{
    const uint32_t hi = tf32_rna(x);
    const float r = x - __uint_as_float(hi);
    return Tf32Split{hi, tf32_rna(r == r ? r : 0.0f)};
}

/* An A fragment (4 words of m16n8k8) split once for several products. */
struct Tf32A {
    uint32_t hi[4], lo[4];
};

__device__ __forceinline__ Tf32A tf32_split_a(float a0, float a1, float a2, float a3)
{
    const float a[4] = {a0, a1, a2, a3};
    Tf32A s;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const Tf32Split x = tf32_split(a[i]);
        s.hi[i] = x.hi, s.lo[i] = x.lo;
    }
    return s;
}

/* d += a·b (m16n8k8) at fp32 accuracy: b0, b1 are this lane's fp32 B elements. */
__device__ __forceinline__ void mma_3xtf32(float d[4], const Tf32A &a, float b0, float b1)
{
    const Tf32Split x = tf32_split(b0), y = tf32_split(b1);
    mma1688_tf32(d, a.lo, x.hi, y.hi);
    mma1688_tf32(d, a.hi, x.lo, y.lo);
    mma1688_tf32(d, a.hi, x.hi, y.hi);
}

} // namespace fc_cuda

#endif /* FC_CUDA_TF32_CUH */
