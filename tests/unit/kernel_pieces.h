/*
 * The kernels' shared inline pieces (src/kernels/gemm.h, softmax.h, simd.h's v_exp, amx.h, amx_bwd.h), exported
 * once per kernel set: kernel_pieces_isa.c is compiled with each set's own flags (the same as
 * flashc_kernels_<isa>), so a unit test calls exactly the code that set's kernels inline.
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
    /* v_exp over x[0..n) (n a multiple of lanes) */
    void (*exp)(const float *x, float *y, int n);
    /* fc_softmax_step: Rp a multiple of lanes */
    bool (*softmax_step)(float *S, int jn, int Rp, float scale, float *m, float *l, float *alpha);
    /* fc_amx_gemm inside fc_amx_begin/fc_amx_end (NULL outside the amx set): bf16 A rows (lda), B in
     * the pair-interleaved form (ldb), fp32 C (ldc); M, N multiples of 16, K of 32 */
    void (*amx_gemm)(int M, int N, int K, const uint16_t *A, size_t lda, const uint16_t *B, size_t ldb, float *C,
                     size_t ldc, bool accumulate);
    /* fc_amx_bwd_product (amx set only): C[M×n] += X[M×K]·Y[K×n] from fp32 rows, X split into bf16 hi
     * and lo, Y bf16 (parts 2) or split too (3); operands padded to the tiles, C written over M and
     * n rounded up to 16 (padding gets 0 added) */
    void (*amx_product)(int parts, int M, int K, int n, const float *X, int64_t ldx, const float *Y, int64_t ldy,
                        float *C, int64_t ldc);
} unit_pieces;

/* The table of the set named argv[1] when this build has it and this CPU runs it (pinned, so that
 * the amx set has its tile permission); NULL after printing why not (the test then skips, 77). */
const unit_pieces *unit_pieces_open(int argc, char **argv);

#endif /* FLASHC_TESTS_UNIT_KERNEL_PIECES_H */
