/*
 * The micro-GEMM every kernel uses:  C[M×N] (+)= A[M×K] · B[K×N]   in fp32.
 *
 *  - A is read one element at a time and broadcast: A(m, k) = A[m*a_rs + k*a_ks], any strides, so
 *    an operand can be used in place whether it is stored by rows or by columns;
 *  - B rows are read as vectors: B(k, n) = B[k*ldb + n]; loads past column N are masked;
 *  - C rows C[m*ldc ...] must hold round_up(N, FC_W) floats: whole vectors are stored.
 *
 * The register tile is FC_MR rows × FC_NV vectors; edge tiles use the same code with smaller
 * compile-time extents (the switch below instantiates each one), so there is one loop nest only.
 */
#ifndef FC_KERNELS_GEMM_H
#define FC_KERNELS_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "simd.h"

#if FC_W == 16
#define FC_MR 6
#define FC_NV 4
#elif FC_W == 8
#define FC_MR 6
#define FC_NV 2
#else
#define FC_MR 4
#define FC_NV 4
#endif
#define FC_NR (FC_NV * FC_W)

/* One register tile: mr × nv vectors over the whole K; `tail` lanes are valid in the last vector
 * (0 = all of them). */
FC_INLINE void fc_micro_tile(const int mr, const int nv, const int tail, int K, const float *A, ptrdiff_t a_rs,
                             ptrdiff_t a_ks, const float *B, ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate)
{
    fvec c[FC_MR][FC_NV];
#pragma GCC unroll 8
    for (int m = 0; m < mr; m++)
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            c[m][v] = accumulate ? v_load(C + m * ldc + v * FC_W) : v_zero();

    for (int k = 0; k < K; k++) {
        const float *brow = B + (ptrdiff_t)k * ldb;
        fvec b[FC_NV];
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            b[v] = (tail && v == nv - 1) ? v_load_n(brow + v * FC_W, tail) : v_load(brow + v * FC_W);
        const float *acol = A + (ptrdiff_t)k * a_ks;
#pragma GCC unroll 8
        for (int m = 0; m < mr; m++) {
            const fvec a = v_bcast(acol + m * a_rs);
#pragma GCC unroll 8
            for (int v = 0; v < nv; v++)
                c[m][v] = v_fma(a, b[v], c[m][v]);
        }
    }

#pragma GCC unroll 8
    for (int m = 0; m < mr; m++)
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            v_store(C + m * ldc + v * FC_W, c[m][v]);
}

#define FC_TILE(MR_, NV_)                                                                              \
    do {                                                                                               \
        if (tail)                                                                                      \
            fc_micro_tile(MR_, NV_, tail, K, a, a_rs, a_ks, b, ldb, c, ldc, accumulate);               \
        else                                                                                           \
            fc_micro_tile(MR_, NV_, 0, K, a, a_rs, a_ks, b, ldb, c, ldc, accumulate);                  \
    } while (0)

#if FC_NV == 4
#define FC_TILE_NV(MR_)                                                                                \
    switch (nv) {                                                                                      \
    case 1: FC_TILE(MR_, 1); break;                                                                    \
    case 2: FC_TILE(MR_, 2); break;                                                                    \
    case 3: FC_TILE(MR_, 3); break;                                                                    \
    default: FC_TILE(MR_, 4); break;                                                                   \
    }
#else
#define FC_TILE_NV(MR_)                                                                                \
    switch (nv) {                                                                                      \
    case 1: FC_TILE(MR_, 1); break;                                                                    \
    default: FC_TILE(MR_, 2); break;                                                                   \
    }
#endif

/* C[M×N] (+)= A[M×K]·B[K×N] with the layouts described at the top of this file. */
static inline void fc_gemm(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B,
                           ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate)
{
    for (int n0 = 0; n0 < N; n0 += FC_NR) {
        const int nn = N - n0 < FC_NR ? N - n0 : FC_NR;
        const int nv = (nn + FC_W - 1) / FC_W;
        const int tail = nn % FC_W;
        const float *b = B + n0;
        for (int m0 = 0; m0 < M; m0 += FC_MR) {
            const float *a = A + (ptrdiff_t)m0 * a_rs;
            float *c = C + (ptrdiff_t)m0 * ldc + n0;
            switch (M - m0 < FC_MR ? M - m0 : FC_MR) {
            case 1: FC_TILE_NV(1); break;
            case 2: FC_TILE_NV(2); break;
            case 3: FC_TILE_NV(3); break;
#if FC_MR == 6
            case 4: FC_TILE_NV(4); break;
            case 5: FC_TILE_NV(5); break;
            default: FC_TILE_NV(6); break;
#else
            default: FC_TILE_NV(4); break;
#endif
            }
        }
    }
}

#undef FC_TILE
#undef FC_TILE_NV

#endif /* FC_KERNELS_GEMM_H */
