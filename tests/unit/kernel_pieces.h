/*
 * The kernels' shared inline pieces (src/kernels/gemm.h, softmax.h, simd.h's v_exp, v_exp2 and
 * v_exp2_nonpositive, amx.h, amx_bwd.h), exported once per kernel set: kernel_pieces_isa.c is
 * compiled with each set's own flags (the same as flashc_kernels_<isa>), so a unit test calls
 * exactly the code that set's kernels inline.
 */
#ifndef FLASHC_TESTS_UNIT_KERNEL_PIECES_H
#define FLASHC_TESTS_UNIT_KERNEL_PIECES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct unit_pieces {
    const char *isa;
    int lanes;       /* FC_W */
    int tile_rows;   /* FC_MR: register-tile rows of fc_gemm */
    int tile_cols;   /* FC_NR: register-tile columns (FC_NV vectors) */
    /* fc_gemm: C[M×N] (+)= A[M×K]·B[K×N]; A(m, k) = A[m·a_rs + k·a_ks], B(k, n) = B[k·ldb + n] */
    void (*gemm)(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B, ptrdiff_t ldb,
                 float *C, ptrdiff_t ldc, bool accumulate);
    /* fc_gemm_visible: C[M×N] += Σ over k with vis(m, k) != 0 of A(m, k)·B(k, n); C rows whole vectors */
    void (*gemm_visible)(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *vis,
                         const float *B, ptrdiff_t ldb, float *C, ptrdiff_t ldc);
    /* fc_transpose: dst[c·ldd + r] = src[r·lds + c] for r < rows, c < cols */
    void (*transpose)(const float *src, ptrdiff_t lds, float *dst, ptrdiff_t ldd, int rows, int cols);
    /* fc_dot: Σ a[e]·b[e] in fp32; fc_all_finite: whether n rows of width values are all finite */
    float (*dot)(const float *a, const float *b, int n);
    bool (*all_finite)(const float *a, int n, ptrdiff_t ld, int width);
    /* v_exp, v_exp2, v_exp2_nonpositive over x[0..n) (n a multiple of lanes) */
    void (*exp)(const float *x, float *y, int n);
    void (*exp2)(const float *x, float *y, int n);
    void (*exp2_nonpositive)(const float *x, float *y, int n);
    /* fc_gemm with the epilogue fc_gemm_colmax {max, scale, scaled} */
    void (*gemm_colmax)(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B,
                        ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate, float *max, float scale, bool scaled);
    /* fc_softmax_step, fc_softmax_step_raw: Rp a multiple of lanes; tmax the rows' maxima or NULL */
    bool (*softmax_step)(float *S, const float *tmax, int jn, int Rp, float scale, float *m, float *l, float *alpha);
    bool (*softmax_step_raw)(float *S, const float *tmax, int jn, int Rp, float scale, float *m, float *l, float *alpha);
    /* fc_amx_gemm inside fc_amx_begin/fc_amx_end (NULL outside the amx, avx512bf16 and neonbf16
     * sets, whose GEMM is on tiles / vdpbf16ps / BFDOT): bf16 A rows (lda), B in
     * the pair-interleaved form (ldb), fp32 C (ldc); M, N multiples of 16, K of 32 (neonbf16: any
     * M, N a multiple of 4, K even) */
    void (*amx_gemm)(int M, int N, int K, const uint16_t *A, size_t lda, const uint16_t *B, size_t ldb, float *C,
                     size_t ldc, bool accumulate);
    /* fc_amx_pack_b of Y, then fc_amx_bwd_product (amx set only): C[M×n] += X[M×K]·Y[K×n] from
     * fp32 rows, X split into bf16 hi and lo, Y bf16 (parts 2) or split too (3); operands padded to
     * the tiles, C written over M and n rounded up to 16 (padding gets 0 added) */
    void (*amx_product)(int parts, int M, int K, int n, const float *X, int64_t ldx, const float *Y, int64_t ldy,
                        float *C, int64_t ldc);
} unit_pieces;

/* main() of a unit test of the set named argv[1]: TC_SKIP (77) after printing why where this build
 * lacks it or this CPU does not run it; else the set is pinned (so that amx has its tile
 * permission), body runs, and tc_summary("unit_<piece>[<isa>]") is returned. */
int unit_main(int argc, char **argv, const char *piece, void (*body)(const unit_pieces *));

#endif /* FLASHC_TESTS_UNIT_KERNEL_PIECES_H */
