/*
 * The micro-GEMM's full tile on NEON (gemm.h's contract, FC_MR × FC_NV = 8 rows × 2 vectors):
 * neon_tile.h's two forms with FMLA by element, an entry one k.  Each C element still takes one
 * fused multiply-add per k, in k order: the same sums as the generic tile.
 */
#ifndef FC_KERNELS_GEMM_NEON_H
#define FC_KERNELS_GEMM_NEON_H

#include "neon_tile.h"

#define FC_NT_ENTRY float
#define FC_NT_VEC float32x4_t
#define FC_NT_LOAD(p) vld1q_f32(p)
#define FC_NT_DUP(p) vld1q_dup_f32(p)
#define FC_NT_MLA(c, b, a, l) vfmaq_laneq_f32(c, b, a, l)
FC_NEON_TILES(fc_neon_tile_cols, fc_neon_tile_rows)
#undef FC_NT_ENTRY
#undef FC_NT_VEC
#undef FC_NT_LOAD
#undef FC_NT_DUP
#undef FC_NT_MLA

/* The full tile in the form A's layout allows (the generic one where neither stride is 1). */
#define FC_HAVE_FULL_TILE 1
FC_INLINE void fc_full_tile(int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B, ptrdiff_t ldb,
                            float *C, ptrdiff_t ldc, bool accumulate, const fc_gemm_colmax *cm, float *max)
{
    if (a_rs == 1)
        fc_neon_tile_cols(K, A, a_ks, B, ldb, C, ldc, accumulate);
    else if (a_ks == 1)
        fc_neon_tile_rows(K, A, a_rs, B, ldb, C, ldc, accumulate);
    else
        fc_micro_full(K, A, a_rs, a_ks, B, ldb, C, ldc, accumulate, NULL, NULL);
    if (cm) /* every form's epilogue on the stored tile, from L1 */
        fc_colmax_tile(cm, C, ldc, FC_MR, FC_NV, max);
}

#endif /* FC_KERNELS_GEMM_NEON_H */
