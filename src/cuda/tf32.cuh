/*
 * fp32 products at fp32's accuracy on tf32 tensor cores (3×TF32): each factor x splits into
 * hi = tf32(x) and lo = tf32(x − hi), which together carry about 21 of fp32's 24 significand
 * bits, and a·b ≈ lo_a·hi_b + hi_a·lo_b + hi_a·hi_b (the small terms first; lo_a·lo_b, below
 * fp32's rounding, is left out).  A non-finite x rides in the low part: hi = 0, lo = x, so that
 * inf stays inf (not inf − inf = NaN) and never meets a partner's zero low part (inf · 0 = NaN):
 * a·b of an infinite a and a finite b is then lo_a·hi_b = ±inf, the other two terms 0 (semantics
 * §0.3; only two infinite factors of one product become NaN, not ±inf).  Then the tile products
 * of the fp32 kernels (the forward's S = Q·Kᵀ and O += P·V; the backward's five take the same two
 * forms).
 */
#ifndef FC_CUDA_TF32_CUH
#define FC_CUDA_TF32_CUH

#include "tile.cuh"

namespace fc_cuda {

struct Tf32Split {
    uint32_t hi, lo;
};

/* hi's magnitude is clamped to tf32's largest finite value, so that a finite x within half a tf32
 * step of FLT_MAX (whose rounding overflows) keeps a finite hi and an exact remainder.  A
 * non-finite x leaves r = x − hi non-finite: hi = 0 and lo = tf32(r), ±inf, or a NaN computed by
 * the subtraction, quiet, whose top payload bits survive the tensor cores' dropping of the low 13
 * (x's own payload might lie only there: cvt's NaN result is not pinned down). */
__device__ __forceinline__ Tf32Split tf32_split(float x)
{
    const uint32_t u = __float_as_uint(x), mag = min(tf32_rna(x) & 0x7FFFFFFFu, 0x7F7FE000u);
    const uint32_t hi = (u & 0x80000000u) | mag;
    const float r = x - __uint_as_float(hi);
    return Tf32Split{fabsf(r) < INFINITY ? hi : 0u, tf32_rna(r)};
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

/* fp32 S += Q·Kᵀ over the warp's rows: per 8 features, Q's A fragment and K's B fragments come
 * straight from ldmatrix (an 8 × 4 matrix of 32-bit words is m16n8k8's tf32 fragment layout, in
 * the same lanes as the 16-bit kernels' 8 × 8 of 16-bit ones).  The feature loop stays rolled:
 * unrolled, ptxas hoists the loads and splits of every step and spills. */
template <int D, int MT, int NT>
__device__ __forceinline__ void qk_3xtf32(float (&s)[MT][NT][4], const float *sQ, const float *sK, int warp, int lane)
{
#pragma unroll 1
    for (int ks = 0; ks < D / 8; ks++) {
        Tf32A a[MT];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            uint32_t w[4];
            ldsm_x4(w, sQ + swz<D, 4>(warp * 16 * MT + mt * 16 + lane % 16, ks * 2 + lane / 16));
            a[mt] = tf32_split_a(__uint_as_float(w[0]), __uint_as_float(w[1]), __uint_as_float(w[2]), __uint_as_float(w[3]));
        }
#pragma unroll
        for (int nt = 0; nt < NT; nt += 2) {
            uint32_t bk[4];
            ldsm_x4(bk, sK + swz<D, 4>(nt * 8 + lane % 8 + (lane / 16) * 8, ks * 2 + (lane / 8) % 2));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma_3xtf32(s[mt][nt], a[mt], __uint_as_float(bk[0]), __uint_as_float(bk[1]));
                mma_3xtf32(s[mt][nt + 1], a[mt], __uint_as_float(bk[2]), __uint_as_float(bk[3]));
            }
        }
    }
}

/* fp32 O += P·V: one k-step per 8 score columns, whose accumulators are the A fragment when the
 * step's k order pairs column 2c with k = c and 2c + 1 with k = c + 4; each lane reads V's rows
 * 2·(lane % 4) and + 1 in that order (column lane / 4 of each 8 features; the swizzle keeps the 32
 * reads on 32 banks).  P goes through the warp's rows of the scratch tile sS so that the column
 * loop can stay rolled (unrolled, ptxas spills).  acc covers the DT · 8 features of V from f0 (the
 * backward's feature parts). */
template <int D, int MT, int NT, int BN, int DT = D / 8>
__device__ __forceinline__ void pv_3xtf32(float (&acc)[MT][DT][4], float (&s)[MT][NT][4], float *sS, const float *sV, int warp,
                                          int lane, int f0 = 0)
{
    stage<true, MT, NT, BN>(s, sS, warp, lane);
    __syncwarp();
#pragma unroll 1
    for (int nt = 0; nt < NT; nt++) {
        Tf32A a[MT];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            const float *r = sS + (warp * 16 * MT + mt * 16 + lane / 4) * (BN + 8) + nt * 8 + (lane % 4) * 2;
            const float2 x = *reinterpret_cast<const float2 *>(r), y = *reinterpret_cast<const float2 *>(r + 8 * (BN + 8));
            a[mt] = tf32_split_a(x.x, y.x, x.y, y.y);
        }
        const int j = nt * 8 + (lane % 4) * 2;
#pragma unroll
        for (int d = 0; d < DT; d++) {
            const int f = f0 + d * 8 + lane / 4;
            const float b0 = sV[swz<D, 4>(j, f / 4) + f % 4], b1 = sV[swz<D, 4>(j + 1, f / 4) + f % 4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                mma_3xtf32(acc[mt][d], a[mt], b0, b1);
        }
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_TF32_CUH */
