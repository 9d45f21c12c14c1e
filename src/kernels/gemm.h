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

#ifndef FC_MR
#if FC_W == 16
#define FC_MR 6
#define FC_NV 4
#elif FC_W == 8
#define FC_MR 6
#define FC_NV 2
#elif FC_W == 4 /* NEON: gemm_neon.h's tile, 16 accumulators and A from vector lanes */
#define FC_MR 8
#define FC_NV 2
#else
#define FC_MR 4
#define FC_NV 4
#endif
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

/* What a product may do to each register tile of C right after storing it, while the tile is in
 * L1: multiply it by `scale` in place (when `scaled`), and fold its columns' maxima into max[n]
 * (round_up(N, FC_W) floats, set by the caller; a NaN element is dropped, as v_max(x, m) drops
 * it).  The forward's score tile S = K·Qᵀ gives its softmax step the rows' maxima this way,
 * instead of the step reading S back from L2 for them. */
typedef struct fc_gemm_colmax {
    float *max;
    float scale;
    bool scaled;
} fc_gemm_colmax;

FC_INLINE void fc_colmax_tile(const fc_gemm_colmax *cm, float *C, ptrdiff_t ldc, int mr, int nv, float *max)
{
    const fvec c = v_set1(cm->scale);
    for (int v = 0; v < nv; v++) {
        fvec mx = v_load(max + v * FC_W);
        for (int m = 0; m < mr; m++) {
            float *at = C + m * ldc + v * FC_W;
            fvec x = v_load(at);
            if (cm->scaled) {
                x = v_mul(x, c);
                v_store(at, x);
            }
            mx = v_max(x, mx);
        }
        v_store(max + v * FC_W, mx);
    }
}

/* The full FC_MR × FC_NV tile, the hot path, spelled out so that every accumulator is a named
 * register variable (compilers otherwise tend to split or spill the array form). */
#define FC_VECS1(X, m) X(m, 0)
#define FC_VECS2(X, m) FC_VECS1(X, m) X(m, 1)
#define FC_VECS3(X, m) FC_VECS2(X, m) X(m, 2)
#define FC_VECS4(X, m) FC_VECS3(X, m) X(m, 3)
#define FC_VECS(X, m) FC_PASTE(FC_VECS, FC_NV)(X, m)
#define FC_ROWS1(X, a) X(0, a)
#define FC_ROWS2(X, a) FC_ROWS1(X, a) X(1, a)
#define FC_ROWS3(X, a) FC_ROWS2(X, a) X(2, a)
#define FC_ROWS4(X, a) FC_ROWS3(X, a) X(3, a)
#define FC_ROWS5(X, a) FC_ROWS4(X, a) X(4, a)
#define FC_ROWS6(X, a) FC_ROWS5(X, a) X(5, a)
#define FC_ROWS7(X, a) FC_ROWS6(X, a) X(6, a)
#define FC_ROWS8(X, a) FC_ROWS7(X, a) X(7, a)
#define FC_ROWS(X, a) FC_PASTE(FC_ROWS, FC_MR)(X, a)
#define FC_ACC_INIT(m, v) fvec c##m##v = accumulate ? v_load(C + m * ldc + v * FC_W) : v_zero();
#define FC_ACC_STORE(m, v) v_store(C + m * ldc + v * FC_W, c##m##v);
#define FC_B_LOAD(m, v) const fvec b##v = v_load(brow + v * FC_W);
#define FC_FMA(m, v) c##m##v = v_fma(a##m, b##v, c##m##v);
#define FC_ROW_INIT(m, _) FC_VECS(FC_ACC_INIT, m)
#define FC_ROW_STORE(m, _) FC_VECS(FC_ACC_STORE, m)
#define FC_ROW_FMA(m, _) { const fvec a##m = v_bcast(acol + m * a_rs); FC_VECS(FC_FMA, m) }
#define FC_ACC_SCALE(m, v) c##m##v = v_mul(c##m##v, cs);
#define FC_ROW_SCALE(m, _) FC_VECS(FC_ACC_SCALE, m)
#define FC_MAX_LOAD(m, v) fvec mx##v = v_load(max + v * FC_W);
#define FC_MAX_STORE(m, v) v_store(max + v * FC_W, mx##v);
#define FC_ACC_MAX(m, v) mx##v = v_max(c##m##v, mx##v);
#define FC_ROW_MAX(m, _) FC_VECS(FC_ACC_MAX, m)

/* cm (or NULL): fc_colmax_tile's epilogue on the accumulators before they are stored. */
FC_INLINE void fc_micro_full(int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B, ptrdiff_t ldb,
                             float *C, ptrdiff_t ldc, bool accumulate, const fc_gemm_colmax *cm, float *max)
{
    FC_ROWS(FC_ROW_INIT, _)
    const float *brow = B, *acol = A;
    int k = 0;
    for (; k + 2 <= K; k += 2) {
        {
            FC_VECS(FC_B_LOAD, _)
            FC_ROWS(FC_ROW_FMA, _)
        }
        brow += ldb, acol += a_ks;
        {
            FC_VECS(FC_B_LOAD, _)
            FC_ROWS(FC_ROW_FMA, _)
        }
        brow += ldb, acol += a_ks;
    }
    for (; k < K; k++, brow += ldb, acol += a_ks) {
        FC_VECS(FC_B_LOAD, _)
        FC_ROWS(FC_ROW_FMA, _)
    }
    if (cm) {
        const fvec cs = v_set1(cm->scale);
        if (cm->scaled) {
            FC_ROWS(FC_ROW_SCALE, _)
        }
        FC_VECS(FC_MAX_LOAD, _)
        FC_ROWS(FC_ROW_MAX, _)
        FC_VECS(FC_MAX_STORE, _)
    }
    FC_ROWS(FC_ROW_STORE, _)
}

#undef FC_VECS
#undef FC_ROWS
#undef FC_ACC_INIT
#undef FC_ACC_STORE
#undef FC_B_LOAD
#undef FC_FMA
#undef FC_ROW_INIT
#undef FC_ROW_STORE
#undef FC_ROW_FMA
#undef FC_ACC_SCALE
#undef FC_ROW_SCALE
#undef FC_MAX_LOAD
#undef FC_MAX_STORE
#undef FC_ACC_MAX
#undef FC_ROW_MAX

#if FC_W == 4
#include "gemm_neon.h" /* fc_full_tile */
#endif
#ifndef FC_HAVE_FULL_TILE /* a set without a tile of its own: the spelled-out one above */
FC_INLINE void fc_full_tile(int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B, ptrdiff_t ldb,
                            float *C, ptrdiff_t ldc, bool accumulate, const fc_gemm_colmax *cm, float *max)
{
    fc_micro_full(K, A, a_rs, a_ks, B, ldb, C, ldc, accumulate, cm, max);
}
#endif

/* Edge tiles: the loop form with compile-time extents, one instantiation per (rows, vectors). */
#define FC_EDGE(MR_, NV_)                                                                              \
    do {                                                                                               \
        if (tail)                                                                                      \
            fc_micro_tile(MR_, NV_, tail, K, a, a_rs, a_ks, b, ldb, c, ldc, accumulate);               \
        else                                                                                           \
            fc_micro_tile(MR_, NV_, 0, K, a, a_rs, a_ks, b, ldb, c, ldc, accumulate);                  \
    } while (0)
#if FC_NV >= 4
#define FC_EDGE_NV4(MR_) case 4: FC_EDGE(MR_, 4); break;
#else
#define FC_EDGE_NV4(MR_)
#endif
#if FC_NV >= 3
#define FC_EDGE_NV3(MR_) case 3: FC_EDGE(MR_, 3); break;
#else
#define FC_EDGE_NV3(MR_)
#endif
#define FC_EDGE_NV(MR_)                                                                                \
    case MR_:                                                                                          \
        switch (nv) {                                                                                  \
        case 1: FC_EDGE(MR_, 1); break;                                                                \
        case 2: FC_EDGE(MR_, 2); break;                                                                \
        FC_EDGE_NV3(MR_) FC_EDGE_NV4(MR_)                                                              \
        }                                                                                              \
        break;

/* Rows of an operand that a later product reads (`rows` rows of `lines` cache lines, `stride`
 * bytes apart), asked for a few lines before each register tile of this product, so that they
 * arrive from L3 or DRAM while it runs (fc_kv_tile's next tile).  rows 0: none. */
typedef struct fc_prefetch_rows {
    const char *base;
    ptrdiff_t stride;
    int rows, lines;
} fc_prefetch_rows;

/* Where fc_prefetch_some goes on: row and line, stepped rather than divided out of a running
 * count (an integer division per line was 5 % of the product's samples in perf). */
typedef struct fc_prefetch_at {
    int row, line, left;
} fc_prefetch_at;

FC_INLINE void fc_prefetch_some(const fc_prefetch_rows *pf, fc_prefetch_at *at, int n)
{
    const int take = n < at->left ? n : at->left;
    at->left -= take;
    for (int i = 0; i < take; i++) {
        __builtin_prefetch(pf->base + (ptrdiff_t)at->row * pf->stride + (ptrdiff_t)at->line * 64, 0, 3);
        if (++at->line == pf->lines)
            at->line = 0, at->row++;
    }
}

/* C[M×N] (+)= A[M×K]·B[K×N] with the layouts described at the top of this file; pf (or NULL):
 * rows to prefetch on the way (fc_prefetch_rows); cm (or NULL): the stored tiles' epilogue
 * (fc_gemm_colmax). */
static inline void fc_gemm_pf(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B,
                              ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate, const fc_prefetch_rows *pf,
                              const fc_gemm_colmax *cm)
{
    const int tiles = ((N + FC_NR - 1) / FC_NR) * ((M + FC_MR - 1) / FC_MR);
    const int lines = pf ? pf->rows * pf->lines : 0, per = lines && tiles ? (lines + tiles - 1) / tiles : 0;
    fc_prefetch_at pf_at = {0, 0, per ? lines : 0};
    for (int n0 = 0; n0 < N; n0 += FC_NR) {
        const int nn = N - n0 < FC_NR ? N - n0 : FC_NR;
        const int nv = (nn + FC_W - 1) / FC_W;
        const int tail = nn % FC_W;
        const float *b = B + n0;
        for (int m0 = 0; m0 < M; m0 += FC_MR) {
            const float *a = A + (ptrdiff_t)m0 * a_rs;
            float *c = C + (ptrdiff_t)m0 * ldc + n0;
            const int mr = M - m0 < FC_MR ? M - m0 : FC_MR;
            if (per)
                fc_prefetch_some(pf, &pf_at, per);
            if (mr == FC_MR && nv == FC_NV && !tail) {
                fc_full_tile(K, a, a_rs, a_ks, b, ldb, c, ldc, accumulate, cm, cm ? cm->max + n0 : NULL);
                continue;
            }
            switch (mr) {
                FC_EDGE_NV(1) FC_EDGE_NV(2) FC_EDGE_NV(3)
#if FC_MR >= 4
                FC_EDGE_NV(4)
#endif
#if FC_MR >= 5
                FC_EDGE_NV(5)
#endif
#if FC_MR >= 6
                FC_EDGE_NV(6)
#endif
#if FC_MR >= 7
                FC_EDGE_NV(7)
#endif
#if FC_MR >= 8
                FC_EDGE_NV(8)
#endif
            }
            if (cm)
                fc_colmax_tile(cm, c, ldc, mr, nv, cm->max + n0);
        }
    }
}

static inline void fc_gemm(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B,
                           ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate)
{
    fc_gemm_pf(M, N, K, A, a_rs, a_ks, B, ldb, C, ldc, accumulate, NULL, NULL);
}

/* C[M×N] += A[M×K]·B[K×N] over the terms whose vis(m, k) (stored with A's strides) is nonzero
 * only: a hidden position takes no part even where its B row is not finite (0·NaN is NaN, so
 * the plain product would let it in; semantics §0.2, §0.3).  The rare path of tiles that hold a
 * non-finite operand and a hidden position; rows of C are whole vectors as in fc_gemm. */
static inline void fc_gemm_visible(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks,
                                   const float *vis, const float *B, ptrdiff_t ldb, float *C, ptrdiff_t ldc)
{
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++) {
            const ptrdiff_t at = (ptrdiff_t)m * a_rs + (ptrdiff_t)k * a_ks;
            if (vis[at] == 0.0f)
                continue;
            const fvec a = v_set1(A[at]);
            const float *brow = B + (ptrdiff_t)k * ldb;
            float *crow = C + (ptrdiff_t)m * ldc;
            for (int n = 0; n < N; n += FC_W) {
                const fvec b = N - n < FC_W ? v_load_n(brow + n, N - n) : v_load(brow + n);
                v_store(crow + n, v_fma(a, b, v_load(crow + n)));
            }
        }
}

#undef FC_EDGE
#undef FC_EDGE_NV
#undef FC_EDGE_NV3
#undef FC_EDGE_NV4

#endif /* FC_KERNELS_GEMM_H */
