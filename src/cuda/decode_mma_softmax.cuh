/*
 * The tensor-core decode's online-softmax step on one warp tile of S (decode_mma_kernel.cuh), for
 * both layouts of S's accumulators.  A lane (g = lane / 4, c = lane % 4) holds s[j][e], e < 4, in
 * two row slots:
 *   - positions as N (default): slot e >> 1 is row g + 8·slot, at position 8j + 2c + (e & 1); the
 *     lanes of a row differ in c (xor offsets 1, 2);
 *   - positions as M (kMmaPositionsM): slot e & 1 is row 2c + slot, at position 16j + g + 8(e >> 1);
 *     the lanes of a row differ in g (xor offsets 4, 8, 16).
 * The step is the same in both; only these maps differ.
 */
#ifndef FC_CUDA_DECODE_MMA_SOFTMAX_CUH
#define FC_CUDA_DECODE_MMA_SOFTMAX_CUH

#include "ptx.cuh"
#include "tile.cuh"

namespace fc_cuda {

template <bool PM> struct MmaSLayout {
    static constexpr int kShflLo = PM ? 4 : 1, kShflEnd = PM ? 32 : 4; /* a row's lanes: xor offsets [lo, end) by doubling */
    static constexpr int kRow0a = 0, kRow0b = PM ? 2 : 1, kRow1a = PM ? 1 : 2, kRow1b = 3; /* each slot's elements */
    static __device__ __forceinline__ bool slot1(int e) { return PM ? (e & 1) != 0 : e >= 2; }
    static __device__ __forceinline__ int row(int slot, int g, int c) { return PM ? 2 * c + slot : g + 8 * slot; }
    static __device__ __forceinline__ int position(int j0, int j, int e, int g, int c)
    {
        return PM ? j0 + 16 * j + g + 8 * (e >> 1) : j0 + 8 * j + 2 * c + (e & 1);
    }
};

/* What one step hands to O. */
struct MmaStep {
    float al0, al1; /* O's rescale of each slot's row */
    float wt0, wt1; /* IPV: the tile's weights e^(tile max − m), 1 otherwise */
};

/* One tile's step on s (the raw products q·k) and a lane's two rows' running max m and sum l:
 * logits by each row's scale and offset, −inf at the positions the row's spans hide (only at a
 * tile's edges: !full), the row maxima (NaN-propagating) over the row's lanes, the new running
 * maxima, P = e^(logit − max) in place, and l rescaled plus the sums.  IPV: P against the tile's
 * own max (the integer P·V's scale), its sums weighted into l by wt. */
template <bool PM, bool IPV, int SN>
__device__ __forceinline__ MmaStep mma_softmax_step(float (&s)[SN][4], float &m0, float &m1, float &l0, float &l1, float qs0,
                                                    float ks0, float qs1, float ks1, bool full, const int4 *spans,
                                                    int j0, int g, int c)
{
    using Lay = MmaSLayout<PM>;
    MmaStep out;
    out.wt0 = 1.0f, out.wt1 = 1.0f;
#pragma unroll
    for (int j = 0; j < SN; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            s[j][e] = !Lay::slot1(e) ? fmaf(s[j][e], qs0, ks0) : fmaf(s[j][e], qs1, ks1);
    if (!full) {
        const int4 sp0 = spans[Lay::row(0, g, c)], sp1 = spans[Lay::row(1, g, c)];
#pragma unroll
        for (int j = 0; j < SN; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                if (!span_has(!Lay::slot1(e) ? sp0 : sp1, Lay::position(j0, j, e, g, c)))
                    s[j][e] = -INFINITY;
    }
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < SN; j++) {
        mx0 = max_nan(mx0, max_nan(s[j][Lay::kRow0a], s[j][Lay::kRow0b]));
        mx1 = max_nan(mx1, max_nan(s[j][Lay::kRow1a], s[j][Lay::kRow1b]));
    }
#pragma unroll
    for (int off = Lay::kShflLo; off < Lay::kShflEnd; off *= 2) {
        mx0 = max_nan(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
        mx1 = max_nan(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
    }
    const float mn0 = max_nan(m0, mx0), mn1 = max_nan(m1, mx1);
    const float ref0 = (mn0 == -INFINITY ? 0.0f : mn0) * kLog2e, ref1 = (mn1 == -INFINITY ? 0.0f : mn1) * kLog2e;
    out.al0 = fast_exp2(fmaf(m0, kLog2e, -ref0)), out.al1 = fast_exp2(fmaf(m1, kLog2e, -ref1));
    m0 = mn0, m1 = mn1;
    float pr0 = ref0, pr1 = ref1;
    if constexpr (IPV) {
        pr0 = (mx0 == -INFINITY ? 0.0f : mx0) * kLog2e, pr1 = (mx1 == -INFINITY ? 0.0f : mx1) * kLog2e;
        out.wt0 = fast_exp2(fmaf(mx0, kLog2e, -ref0)), out.wt1 = fast_exp2(fmaf(mx1, kLog2e, -ref1));
    }
    float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
    for (int j = 0; j < SN; j++) {
#pragma unroll
        for (int e = 0; e < 4; e++)
            s[j][e] = fast_exp2(fmaf(s[j][e], kLog2e, !Lay::slot1(e) ? -pr0 : -pr1));
        sum0 += s[j][Lay::kRow0a] + s[j][Lay::kRow0b];
        sum1 += s[j][Lay::kRow1a] + s[j][Lay::kRow1b];
    }
    if constexpr (IPV)
        sum0 *= out.wt0, sum1 *= out.wt1;
    l0 = fmaf(l0, out.al0, sum0), l1 = fmaf(l1, out.al1, sum1);
    return out;
}

} // namespace fc_cuda

#endif
