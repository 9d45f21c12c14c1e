/*
 * int8 keys on the integer tensor cores (decode_mma_kernel.cuh's variant kMmaIntK, with
 * kMmaPositionsM: rows ≤ 8, int8 caches): Sᵀ = K·Qᵀ by mma.sync m16n8k32 .s8.s8.s32, K's bytes going
 * from shared memory into the MMA by ldmatrix as they are, no conversion (the K stages take a
 * swizzle of their own, imma_chunk).
 *
 * q (times the key scale, fp32: q'_f = q_f·scale_f, so per-channel scales fold in as before) is
 * stored per row r as integers x_f = rint(q'_f·2^(22 − e_r)), e_r the exponent of the row's largest
 * |q'| (max |q'| in [2^(e_r − 1), 2^e_r)), so |x_f| ≤ 2^22 and |q'_f − x_f·2^(e_r − 22)| ≤
 * 2^(e_r − 23) ≤ 2^-22·max|q'|.  x = hi·2^16 + mid·2^8 + lo with hi, mid, lo int8 (hi in [−64, 64]):
 * three MMAs per k step give Σ hi·k, Σ mid·k, Σ lo·k exactly in s32; the score is
 * fl(2^16·Σhi·k + fl(2^8·Σmid·k + Σlo·k))·τ·2^(e_r − 22) + τ·Σ q'·offset (the offset's constant as
 * before).  Error bounds and why two parts fail: docs/ARCHITECTURE.md (the decode section).
 * kMmaIntPV (with kMmaIntK) takes P·V onto the integer tensor cores too (imma_pv below).
 */
#ifndef FC_CUDA_DECODE_IMMA_CUH
#define FC_CUDA_DECODE_IMMA_CUH

#include "decode_common.cuh"

namespace fc_cuda {

constexpr int kImmaShift = 22, kImmaParts = 3;

/* The row's q' (sO [16][DC], fp32, zero past Dqk) as its three int8 parts, sQ8 [part][16][DC] in
 * feature order; sQs[r] (the softmax scale times 2^e_r) times 2^-22, NaN for a row with a
 * non-finite q' (its scores become NaN, as the 16-bit parts' would).  One warp of WARPS per row
 * of ROWS. */
template <int DC, int ROWS, int WARPS>
__device__ __forceinline__ void imma_q_parts(const float *sO, int8_t *sQ8, float *sQs, const int *sExp, int warp, int lane)
{
    for (int r = warp; r < ROWS; r += WARPS) {
        bool finite = true;
        for (int f = lane; f < DC; f += 32) {
            const float v = ldexpf(sO[r * DC + f], kImmaShift - sExp[r]);
            finite &= fabsf(v) <= FLT_MAX;
            const int x = fabsf(v) < 8388608.0f ? (int)rintf(v) : 0; /* |x| ≤ 2^22 for a finite row */
            const int t = (x + 128) >> 8, hi = (t + 128) >> 8;      /* floor divisions: lo, mid in [−128, 127] */
            sQ8[r * DC + f] = (int8_t)hi;
            sQ8[(ROWS + r) * DC + f] = (int8_t)(t - 256 * hi);
            sQ8[(2 * ROWS + r) * DC + f] = (int8_t)(x - 256 * t);
        }
        finite = __all_sync(0xffffffffu, finite);
        if (lane == 0)
            sQs[r] = finite ? ldexpf(sQs[r], -kImmaShift) : NAN;
    }
}

/* Lane (g = lane/4, c = lane%4)'s B fragments, k step u (features 32u..32u + 31 in order): row g's
 * bytes 32u + 4c.. (b0) and 32u + 16 + 4c.. (b1) of each part. */
template <int DC> struct ImmaQ {
    uint32_t w[kImmaParts][DC / 32][2];
};
template <int DC, int ROWS> __device__ __forceinline__ ImmaQ<DC> imma_q_frags(const int8_t *sQ8, int lane)
{
    ImmaQ<DC> q;
#pragma unroll
    for (int p = 0; p < kImmaParts; p++)
#pragma unroll
        for (int u = 0; u < DC / 32; u++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                q.w[p][u][h] = *reinterpret_cast<const uint32_t *>(sQ8 + (p * ROWS + lane / 4) * DC + 32 * u + 16 * h + 4 * (lane % 4));
    return q;
}

/* The K stage's chunk of (row, ch) for ldmatrix (8 rows of a matrix in 8 bank groups). */
__device__ __forceinline__ int imma_chunk(int row, int ch) { return ch ^ (row & 7); }

/* The lane's ldmatrix row address in a K stage for k step u: matrices (positions 0–7, chunk 2u),
 * (8–15, 2u), (0–7, 2u + 1), (8–15, 2u + 1), so that its words are A's a0..a3 at positions g, g + 8
 * and features 32u + 4c.., 32u + 16 + 4c.. (16j more positions: 16j·DC bytes on, the swizzle
 * repeats every 8 rows). */
template <int DC> __device__ __forceinline__ int imma_kofs(int lane, int u)
{
    const int row = lane % 8 + 8 * ((lane / 8) & 1);
    return row * DC + imma_chunk(row, 2 * u + lane / 16) * 16;
}

/* Sᵀ of a warp tile before scale and offset: s[j][e] is position 16j + g + 8(e >> 1), row
 * 2c + (e & 1); per k step one ldmatrix and an MMA per part; S = fl(2^16·Σhi·k + fl(2^8·Σmid·k +
 * Σlo·k)) (each sum exact in s32; |2^8·Σmid·k + Σlo·k| < 2^31 for DC ≤ 256). */
template <int DC, int SN>
__device__ __forceinline__ void imma_scores(float (&s)[SN][4], const unsigned char *tk, const int *kofs, const ImmaQ<DC> &q)
{
#pragma unroll
    for (int j = 0; j < SN; j++) {
        int acc[kImmaParts][4] = {};
#pragma unroll
        for (int u = 0; u < DC / 32; u++) {
            uint32_t a[4];
            ldsm_x4(a, tk + kofs[u] + 16 * j * DC);
#pragma unroll
            for (int p = 0; p < kImmaParts; p++)
                mma16832_s8(acc[p], a, q.w[p][u][0], q.w[p][u][1]);
        }
#pragma unroll
        for (int e = 0; e < 4; e++)
            s[j][e] = fmaf((float)acc[0][e], 65536.0f, (float)(acc[1][e] * 256 + acc[2][e]));
    }
}

/* Integer P·V (kMmaIntPV): Oᵀ += Vᵀ·Pᵀ on mma.sync m16n8k32 .s8.u8.s32, V's bytes as they are and P
 * as 16-bit integers in two u8 parts.  In a tile a row's P is taken from the tile's own max m_t
 * (p_j = e^(s_j − m_t) in [0, 1], 1 at the max) as x_j = rint(65535·p_j) = hi·256 + lo — one fma
 * with 2^23 rounds it into a float's low 16 bits, whose bytes become the B fragments; the MMAs
 * give X = Σ x_j·v_j exactly in s32 (the hi sums times 256 first: |X| < 64·65535·128 < 2^30), and
 * O += fl(X)·w_t/65535 with w_t = e^(m_t − m), m the row's running max, while l adds w_t·Σ p_j
 * (the fp32 p's).  Error: |x_j/65535 − p_j| ≤ 1/131070, so the tile's sum is off by at most
 * n_t·max|v|/131070 (n_t ≤ 64 positions it sees) times w_t; l ≥ Σ_t w_t (each tile's max enters
 * with p = 1), so Σp·v/l is off by at most 64·max|v|/131070 < 2^-11·max|v| before V's scale —
 * the bound of fp16 P (u = 2^-11 on each p), reached only when every other p of a tile sits near
 * 2^-17; the errors are independent roundings 2^5 finer than fp16's near p = 1, so typically
 * about 2^-17·max|v|·(Σ_j w_j²)^½/l. */
constexpr float kImmaPvScale = 65535.0f;

/* The V stage's chunk of (row, ch) with kMmaIntPV: ldmatrix's 8 rows of a matrix in 8 bank groups. */
__device__ __forceinline__ int imma_vchunk(int row, int ch) { return ch ^ (row & 7); }

/* Oᵀ += Vᵀ·Pᵀ of one WN-position tile, P (s[j][e]: position 16j + g + 8(e >> 1), row 2c + (e & 1),
 * in [0, 1]) as above.  k slots 4c + i (+ 16) of a 32-position step are positions 2c, 2c + 1,
 * 2c + 8, 2c + 9 (+ 16) — P's by one movmatrix per 8 × 8 of 16-bit x, then one permute per part;
 * V's by ldmatrix.trans of 16-bit pairs (lane: features 2g, 2g + 1 of two positions per matrix),
 * then one permute per fragment word.  Oᵀ's tile mt, m row g (+ 8) is feature 16mt + 2g (+ 1);
 * vofs[mt]: the lane's ldmatrix row (position lane, chunk mt); wq0, wq1: rows 2c, 2c + 1's w_t/65535. */
template <int DC, int WN>
__device__ __forceinline__ void imma_pv(float (&o)[DC / 16][1][4], const unsigned char *tv, const int (&vofs)[DC / 16],
                                        const float (&s)[WN / 16][4], float wq0, float wq1)
{
    constexpr int SN = WN / 16;
    static_assert(SN % 2 == 0, "whole 32-position k steps");
    uint32_t ph[SN], pl[SN];
#pragma unroll
    for (int j = 0; j < SN; j++) {
        uint32_t x[4];
#pragma unroll
        for (int e = 0; e < 4; e++)
            /* p ≤ 1 clamped: at a tile's max p is e^(s·log2e − fl(m·log2e)), the product's rounding,
             * up to 1 + 2^-15 once |m·log2e| ≥ 512, and 65535·p would round to 65536, whose low
             * 16 bits are 0 (a NaN p: its row's weight wq is NaN too) */
            x[e] = __float_as_uint(fmaf(fminf(s[j][e], 1.0f), kImmaPvScale, 8388608.0f));
        const uint32_t a = movm_t(prmt(x[0], x[1], 0x5410u)), b = movm_t(prmt(x[2], x[3], 0x5410u));
        ph[j] = prmt(a, b, 0x7531u), pl[j] = prmt(a, b, 0x6420u);
    }
#pragma unroll
    for (int mt = 0; mt < DC / 16; mt++) {
        uint32_t a[SN / 2][4];
#pragma unroll
        for (int t = 0; t < SN / 2; t++) {
            uint32_t r[4]; /* positions 32t + 2c, 2c + 1 (+ 8, + 16, + 24) of features 16mt + 2g, 2g + 1 */
            ldsm_x4_t(r, tv + vofs[mt] + 32 * t * DC);
            a[t][0] = prmt(r[0], r[1], 0x6420u), a[t][1] = prmt(r[0], r[1], 0x7531u);
            a[t][2] = prmt(r[2], r[3], 0x6420u), a[t][3] = prmt(r[2], r[3], 0x7531u);
        }
        int acc[4] = {0, 0, 0, 0};
#pragma unroll
        for (int t = 0; t < SN / 2; t++)
            mma16832_s8u8(acc, a[t], ph[2 * t], ph[2 * t + 1]);
#pragma unroll
        for (int e = 0; e < 4; e++)
            acc[e] *= 256;
#pragma unroll
        for (int t = 0; t < SN / 2; t++)
            mma16832_s8u8(acc, a[t], pl[2 * t], pl[2 * t + 1]);
#pragma unroll
        for (int e = 0; e < 4; e++)
            o[mt][0][e] = fmaf((float)acc[e], e & 1 ? wq1 : wq0, o[mt][0][e]);
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_IMMA_CUH */
