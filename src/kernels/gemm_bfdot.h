/*
 * The bf16 GEMM of the neonbf16 set (Arm BFDOT): amx.h's contract for row-major operands,
 *
 *     C[M×N] (+)= A[M×K] · B[K×N]   bf16 products, fp32 sums
 *
 * in units of feature pairs: A(m, p) = A[m·a_rs + p·a_ks] is the pair (k = 2p, 2p + 1) of row m, one
 * 32-bit word; B(p, n) = B[p·ldb + n] the pair of column n (amx_layout.h's pair form); C rows of
 * N floats, N a multiple of 4 (whole vectors are stored).  One BFDOT adds the two products of a
 * pair of A, taken from a vector lane, and of B's pairs for 4 columns to 4 sums: 8 FLOPs an
 * instruction where FMLA does 8 over twice the operand bytes.  The full tile is neon_tile.h's,
 * 8 rows × 2 vectors, in its two forms, an entry one pair: A by columns (a_rs = 1: P's pairs, 4
 * rows a vector) and A by rows (a_ks = 1: key rows, 4 pairs a vector); edges broadcast A's pair.
 *
 * Precision: a product of two bf16 values is exact in fp32.  BFDOT (FEAT_BF16 without EBF16)
 * ignores the FPCR: it adds the pair's two products, then that sum to the accumulator, each add
 * rounded to odd, with subnormal inputs and results flushed to zero.  Every element takes its
 * pairs one BFDOT each in p order in every tile form, so the result depends on the operands only.
 */
#ifndef FC_KERNELS_GEMM_BFDOT_H
#define FC_KERNELS_GEMM_BFDOT_H

#include <arm_neon.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "neon_tile.h"

FC_INLINE bfloat16x8_t fc_bf_load(const uint32_t *p) { return vreinterpretq_bf16_u32(vld1q_u32(p)); }
FC_INLINE bfloat16x8_t fc_bf_dup(const uint32_t *p) { return vreinterpretq_bf16_u32(vld1q_dup_u32(p)); }

/* An mr × nv-vector block, A's pair broadcast (the edges, and the full tile where neither stride is 1). */
FC_INLINE void fc_bfdot_block(const int mr, const int nv, int P, const uint32_t *A, ptrdiff_t a_rs, ptrdiff_t a_ks,
                              const uint32_t *B, ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate)
{
    float32x4_t c[8][2];
#pragma GCC unroll 8
    for (int m = 0; m < mr; m++)
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            c[m][v] = accumulate ? vld1q_f32(C + m * ldc + 4 * v) : vdupq_n_f32(0.0f);
    for (int p = 0; p < P; p++) {
        bfloat16x8_t b[2];
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            b[v] = fc_bf_load(B + p * ldb + 4 * v);
#pragma GCC unroll 8
        for (int m = 0; m < mr; m++) {
            const bfloat16x8_t a = fc_bf_dup(A + m * a_rs + p * a_ks);
#pragma GCC unroll 2
            for (int v = 0; v < nv; v++)
                c[m][v] = vbfdotq_f32(c[m][v], b[v], a);
        }
    }
#pragma GCC unroll 8
    for (int m = 0; m < mr; m++)
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            vst1q_f32(C + m * ldc + 4 * v, c[m][v]);
}

#define FC_NT_ENTRY uint32_t
#define FC_NT_VEC bfloat16x8_t
#define FC_NT_LOAD(p) fc_bf_load(p)
#define FC_NT_DUP(p) fc_bf_dup(p)
#define FC_NT_MLA(c, b, a, l) vbfdotq_laneq_f32(c, b, a, l)
FC_NEON_TILES(fc_bfdot_tile_cols, fc_bfdot_tile_rows)
#undef FC_NT_ENTRY
#undef FC_NT_VEC
#undef FC_NT_LOAD
#undef FC_NT_DUP
#undef FC_NT_MLA

#define FC_BFDOT_EDGE(MR_)                                                                             \
    case MR_:                                                                                          \
        if (nv == 2)                                                                                   \
            fc_bfdot_block(MR_, 2, P, a, a_rs, a_ks, b, ldb, c, ldc, accumulate);                      \
        else                                                                                           \
            fc_bfdot_block(MR_, 1, P, a, a_rs, a_ks, b, ldb, c, ldc, accumulate);                      \
        break;

/* C[M×N] (+)= A·B over P feature pairs, the operands as described at the top of this file. */
static inline void fc_bfdot_gemm(int M, int N, int P, const uint32_t *A, ptrdiff_t a_rs, ptrdiff_t a_ks,
                                 const uint32_t *B, ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate)
{
    for (int n0 = 0; n0 < N; n0 += 8) {
        const int nv = N - n0 >= 8 ? 2 : 1;
        const uint32_t *b = B + n0;
        for (int m0 = 0; m0 < M; m0 += 8) {
            const uint32_t *a = A + (ptrdiff_t)m0 * a_rs;
            float *c = C + (ptrdiff_t)m0 * ldc + n0;
            const int mr = M - m0 < 8 ? M - m0 : 8;
            if (mr == 8 && nv == 2 && a_rs == 1) {
                fc_bfdot_tile_cols(P, a, a_ks, b, ldb, c, ldc, accumulate);
                continue;
            }
            if (mr == 8 && nv == 2 && a_ks == 1) {
                fc_bfdot_tile_rows(P, a, a_rs, b, ldb, c, ldc, accumulate);
                continue;
            }
            switch (mr) {
                FC_BFDOT_EDGE(1) FC_BFDOT_EDGE(2) FC_BFDOT_EDGE(3) FC_BFDOT_EDGE(4)
                FC_BFDOT_EDGE(5) FC_BFDOT_EDGE(6) FC_BFDOT_EDGE(7) FC_BFDOT_EDGE(8)
            }
        }
    }
}

#undef FC_BFDOT_EDGE

/* No tile state: the calls stay so that the callers are those of the amx set. */
static inline void fc_amx_begin(void) {}
static inline void fc_amx_end(void) {}

/* amx.h's fc_amx_gemm: A bf16 rows (lda even), B in pair form (ldb bf16 elements between pair
 * rows), C fp32 rows; K even, N a multiple of 4. */
static inline void fc_amx_gemm(int M, int N, int K, const uint16_t *A, size_t lda, const uint16_t *B, size_t ldb,
                               float *C, size_t ldc, bool accumulate)
{
    fc_bfdot_gemm(M, N, K / 2, (const uint32_t *)(const void *)A, (ptrdiff_t)lda / 2, 1,
                  (const uint32_t *)(const void *)B, (ptrdiff_t)ldb / 2, C, (ptrdiff_t)ldc, accumulate);
}

#endif /* FC_KERNELS_GEMM_BFDOT_H */
