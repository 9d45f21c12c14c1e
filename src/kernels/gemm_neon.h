/*
 * The micro-GEMM's full tile on NEON (gemm.h's contract, FC_MR × FC_NV = 8 rows × 2 vectors): the
 * FMAs take A from a vector lane (FMLA by element), so A costs a quarter of a load per row and k
 * where a broadcast costs one.  Two forms, by where A's values lie:
 *  - a_rs == 1 (A by columns: P·V, the backward's dS·K and Pᵀ·dO): the 8 rows of one k are two
 *    vectors, lanes 0..3 of each the rows;
 *  - a_ks == 1 (A by rows: S = K·Qᵀ, dPᵀ = V·dOᵀ): each row's next 4 k are one vector, its lanes
 *    the 4 steps (and one broadcast per row for the last K % 4).
 * Each C element still takes one fused multiply-add per k, in k order: the same sums as the
 * generic tile.  16 accumulators, 8 or 2 A vectors and 2 B vectors: 26 of the 32 registers.
 */
#ifndef FC_KERNELS_GEMM_NEON_H
#define FC_KERNELS_GEMM_NEON_H

#include "simd.h"

#define FC_N8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define FC_N8_DECL(m) float32x4_t c##m##0, c##m##1;
#define FC_N8_INIT(m)                                                                                  \
    c##m##0 = accumulate ? vld1q_f32(C + m * ldc) : vdupq_n_f32(0.0f);                                 \
    c##m##1 = accumulate ? vld1q_f32(C + m * ldc + 4) : vdupq_n_f32(0.0f);
#define FC_N8_STORE(m) vst1q_f32(C + m * ldc, c##m##0); vst1q_f32(C + m * ldc + 4, c##m##1);
/* row m's accumulators += b0, b1 times lane l of vector a */
#define FC_N8_FMA(m, a, l) c##m##0 = vfmaq_laneq_f32(c##m##0, b0, a, l); c##m##1 = vfmaq_laneq_f32(c##m##1, b1, a, l);

FC_INLINE void fc_neon_tile_cols(int K, const float *A, ptrdiff_t a_ks, const float *B, ptrdiff_t ldb, float *C,
                                 ptrdiff_t ldc, bool accumulate)
{
    FC_N8_ROWS(FC_N8_DECL)
    FC_N8_ROWS(FC_N8_INIT)
    /* two k a pass (the loop's own adds and branch: a fifth of its instructions at one), counting
     * down (one compare fewer a pass) */
#pragma GCC unroll 2
    for (int k = K; k > 0; k--, A += a_ks, B += ldb) {
        const float32x4_t b0 = vld1q_f32(B), b1 = vld1q_f32(B + 4);
        const float32x4_t lo = vld1q_f32(A), hi = vld1q_f32(A + 4);
        FC_N8_FMA(0, lo, 0) FC_N8_FMA(1, lo, 1) FC_N8_FMA(2, lo, 2) FC_N8_FMA(3, lo, 3)
        FC_N8_FMA(4, hi, 0) FC_N8_FMA(5, hi, 1) FC_N8_FMA(6, hi, 2) FC_N8_FMA(7, hi, 3)
    }
    FC_N8_ROWS(FC_N8_STORE)
}

#define FC_N8_AROW(m) const float32x4_t a##m = vld1q_f32(A + m * a_rs + k);
#define FC_N8_ABCAST(m) const float32x4_t a##m = vld1q_dup_f32(A + m * a_rs + k);
#define FC_N8_STEP(l)                                                                                  \
    {                                                                                                  \
        const float32x4_t b0 = vld1q_f32(B + (k + l) * ldb), b1 = vld1q_f32(B + (k + l) * ldb + 4);    \
        FC_N8_FMA(0, a0, l) FC_N8_FMA(1, a1, l) FC_N8_FMA(2, a2, l) FC_N8_FMA(3, a3, l)                \
        FC_N8_FMA(4, a4, l) FC_N8_FMA(5, a5, l) FC_N8_FMA(6, a6, l) FC_N8_FMA(7, a7, l)                \
    }

FC_INLINE void fc_neon_tile_rows(int K, const float *A, ptrdiff_t a_rs, const float *B, ptrdiff_t ldb, float *C,
                                 ptrdiff_t ldc, bool accumulate)
{
    FC_N8_ROWS(FC_N8_DECL)
    FC_N8_ROWS(FC_N8_INIT)
    int k = 0;
    for (; k + 4 <= K; k += 4) {
        FC_N8_ROWS(FC_N8_AROW)
        FC_N8_STEP(0) FC_N8_STEP(1) FC_N8_STEP(2) FC_N8_STEP(3)
    }
    for (; k < K; k++) {
        FC_N8_ROWS(FC_N8_ABCAST)
        FC_N8_STEP(0)
    }
    FC_N8_ROWS(FC_N8_STORE)
}

#undef FC_N8_ROWS
#undef FC_N8_DECL
#undef FC_N8_INIT
#undef FC_N8_STORE
#undef FC_N8_FMA
#undef FC_N8_AROW
#undef FC_N8_ABCAST
#undef FC_N8_STEP

/* The full tile in the form A's layout allows (the generic one where neither stride is 1). */
#define FC_HAVE_FULL_TILE 1
FC_INLINE void fc_full_tile(int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B, ptrdiff_t ldb,
                            float *C, ptrdiff_t ldc, bool accumulate)
{
    if (a_rs == 1)
        fc_neon_tile_cols(K, A, a_ks, B, ldb, C, ldc, accumulate);
    else if (a_ks == 1)
        fc_neon_tile_rows(K, A, a_rs, B, ldb, C, ldc, accumulate);
    else
        fc_micro_full(K, A, a_rs, a_ks, B, ldb, C, ldc, accumulate);
}

#endif /* FC_KERNELS_GEMM_NEON_H */
