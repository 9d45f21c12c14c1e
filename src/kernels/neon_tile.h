/*
 * The full register tile of the NEON GEMMs, written once for gemm_neon.h (fp32, FMLA by element)
 * and gemm_bfdot.h (bf16 pairs, BFDOT by element): C's 8 rows × 2 vectors, the multiply-adds
 * taking A from a vector lane, so A costs a quarter of a load per row and step where a broadcast
 * costs one.  Two forms, by where A's entries lie (an entry: one k, or one pair of k):
 *  - cols (a_rs == 1: P·V, the backward's dS·K and Pᵀ·dO): the 8 rows of one step are two
 *    vectors, lanes 0..3 of each the rows; two steps a pass, counting down (the loop's adds,
 *    compare and branch were a fifth of its instructions at one step and counting up);
 *  - rows (a_ks == 1: S = K·Qᵀ, dPᵀ = V·dOᵀ): each row's next 4 steps are one vector, its lanes
 *    the steps (and one broadcast per row for the last K % 4).
 * Each C element takes its steps one multiply-add each in step order in both forms.  16
 * accumulators, 8 or 2 A vectors and 2 B vectors: 26 of the 32 registers.
 *
 * FC_NEON_TILES(cols, rows) defines the two functions, with these defined around it:
 *   FC_NT_ENTRY   A's and B's entry type;   FC_NT_VEC  their vector type (4 entries)
 *   FC_NT_LOAD(p) 4 entries from p;         FC_NT_DUP(p) the entry at p in every lane
 *   FC_NT_MLA(c, b, a, l)  c + (B's entries b) × (A's entry in lane l of a), 4 fp32 sums
 */
#ifndef FC_KERNELS_NEON_TILE_H
#define FC_KERNELS_NEON_TILE_H

#include "simd.h"

#define FC_NT_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define FC_NT_DECL(m) float32x4_t c##m##0, c##m##1;
#define FC_NT_INIT(m)                                                                                  \
    c##m##0 = accumulate ? vld1q_f32(C + m * ldc) : vdupq_n_f32(0.0f);                                 \
    c##m##1 = accumulate ? vld1q_f32(C + m * ldc + 4) : vdupq_n_f32(0.0f);
#define FC_NT_STORE(m) vst1q_f32(C + m * ldc, c##m##0); vst1q_f32(C + m * ldc + 4, c##m##1);
/* row m's sums += b0, b1 times lane l of vector a */
#define FC_NT_STEP1(m, a, l) c##m##0 = FC_NT_MLA(c##m##0, b0, a, l); c##m##1 = FC_NT_MLA(c##m##1, b1, a, l);
#define FC_NT_AROW(m) const FC_NT_VEC a##m = FC_NT_LOAD(A + m * a_rs + k);
#define FC_NT_ADUP(m) const FC_NT_VEC a##m = FC_NT_DUP(A + m * a_rs + k);
#define FC_NT_STEP(l)                                                                                  \
    {                                                                                                  \
        const FC_NT_VEC b0 = FC_NT_LOAD(B + (k + l) * ldb), b1 = FC_NT_LOAD(B + (k + l) * ldb + 4);    \
        FC_NT_STEP1(0, a0, l) FC_NT_STEP1(1, a1, l) FC_NT_STEP1(2, a2, l) FC_NT_STEP1(3, a3, l)        \
        FC_NT_STEP1(4, a4, l) FC_NT_STEP1(5, a5, l) FC_NT_STEP1(6, a6, l) FC_NT_STEP1(7, a7, l)        \
    }

#define FC_NEON_TILES(cols, rows)                                                                      \
    FC_INLINE void cols(int K, const FC_NT_ENTRY *A, ptrdiff_t a_ks, const FC_NT_ENTRY *B, ptrdiff_t ldb, \
                        float *C, ptrdiff_t ldc, bool accumulate)                                      \
    {                                                                                                  \
        FC_NT_ROWS(FC_NT_DECL)                                                                         \
        FC_NT_ROWS(FC_NT_INIT)                                                                         \
        _Pragma("GCC unroll 2") for (int k = K; k > 0; k--, A += a_ks, B += ldb)                       \
        {                                                                                              \
            const FC_NT_VEC b0 = FC_NT_LOAD(B), b1 = FC_NT_LOAD(B + 4);                                \
            const FC_NT_VEC lo = FC_NT_LOAD(A), hi = FC_NT_LOAD(A + 4);                                \
            FC_NT_STEP1(0, lo, 0) FC_NT_STEP1(1, lo, 1) FC_NT_STEP1(2, lo, 2) FC_NT_STEP1(3, lo, 3)    \
            FC_NT_STEP1(4, hi, 0) FC_NT_STEP1(5, hi, 1) FC_NT_STEP1(6, hi, 2) FC_NT_STEP1(7, hi, 3)    \
        }                                                                                              \
        FC_NT_ROWS(FC_NT_STORE)                                                                        \
    }                                                                                                  \
    FC_INLINE void rows(int K, const FC_NT_ENTRY *A, ptrdiff_t a_rs, const FC_NT_ENTRY *B, ptrdiff_t ldb, \
                        float *C, ptrdiff_t ldc, bool accumulate)                                      \
    {                                                                                                  \
        FC_NT_ROWS(FC_NT_DECL)                                                                         \
        FC_NT_ROWS(FC_NT_INIT)                                                                         \
        int k = 0;                                                                                     \
        for (; k + 4 <= K; k += 4) {                                                                   \
            FC_NT_ROWS(FC_NT_AROW)                                                                     \
            FC_NT_STEP(0) FC_NT_STEP(1) FC_NT_STEP(2) FC_NT_STEP(3)                                    \
        }                                                                                              \
        for (; k < K; k++) {                                                                           \
            FC_NT_ROWS(FC_NT_ADUP)                                                                     \
            FC_NT_STEP(0)                                                                              \
        }                                                                                              \
        FC_NT_ROWS(FC_NT_STORE)                                                                        \
    }

#endif /* FC_KERNELS_NEON_TILE_H */
