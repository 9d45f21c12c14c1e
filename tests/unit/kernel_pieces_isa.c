/* The shared kernel pieces of one kernel set, exported for the unit tests (kernel_pieces.h).  Compiled
 * once per set with that set's flags; simd.h names the set (FC_ISA). */
#include "kernel_pieces.h"

#include "kernels/gemm.h"
#include "kernels/softmax.h"
#if FC_BF16_PRODUCTS
#include "kernels/amx.h"
#endif
#if FC_AMX
#include <stdlib.h>

#include "kernels/amx_bwd.h"
#endif

static void gemm(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B, ptrdiff_t ldb,
                 float *C, ptrdiff_t ldc, bool accumulate)
{
    fc_gemm(M, N, K, A, a_rs, a_ks, B, ldb, C, ldc, accumulate);
}

static void gemm_colmax(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *B,
                        ptrdiff_t ldb, float *C, ptrdiff_t ldc, bool accumulate, float *max, float scale, bool scaled)
{
    const fc_gemm_colmax cm = {max, scale, scaled};
    fc_gemm_pf(M, N, K, A, a_rs, a_ks, B, ldb, C, ldc, accumulate, NULL, &cm);
}

static void gemm_visible(int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks, const float *vis,
                         const float *B, ptrdiff_t ldb, float *C, ptrdiff_t ldc)
{
    fc_gemm_visible(M, N, K, A, a_rs, a_ks, vis, B, ldb, C, ldc);
}

static void exp_all(const float *x, float *y, int n)
{
    for (int k = 0; k < n; k += FC_W)
        v_store(y + k, v_exp(v_load(x + k)));
}

static void exp2_all(const float *x, float *y, int n)
{
    for (int k = 0; k < n; k += FC_W)
        v_store(y + k, v_exp2(v_load(x + k)));
}

static void exp2_nonpositive_all(const float *x, float *y, int n)
{
    for (int k = 0; k < n; k += FC_W)
        v_store(y + k, v_exp2_nonpositive(v_load(x + k)));
}

#if FC_BF16_PRODUCTS
static void amx_gemm(int M, int N, int K, const uint16_t *A, size_t lda, const uint16_t *B, size_t ldb, float *C,
                     size_t ldc, bool accumulate)
{
    fc_amx_begin();
    fc_amx_gemm(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
    fc_amx_end();
}
#endif

#if FC_AMX /* the backward's bf16 products (2 or 3 parts: see fc_bf16_products_pay) are amx's only */
static void amx_product(int parts, int M, int K, int n, const float *X, int64_t ldx, const float *Y, int64_t ldy,
                        float *C, int64_t ldc)
{
    const size_t Mp = (size_t)fc_round_up(M, 16), Kp = (size_t)fc_round_up(K, 32), np = (size_t)fc_round_up(n, 16);
    fc_amx_bwd a = {0};
    a.a = malloc(Mp * (size_t)parts * Kp * sizeof(uint16_t));
    uint16_t *B = malloc((size_t)parts * Kp * np * sizeof(uint16_t));
    fc_amx_pack_b(B, Y, ldy, K, (int)Kp, n, (int)np, parts);
    fc_amx_begin();
    fc_amx_bwd_product(&a, parts, M, K, X, ldx, B, (int)np, C, ldc);
    fc_amx_end();
    free(a.a), free(B);
}
#endif

const unit_pieces FC_ISA_FN(unit_pieces) = {
    .isa = FC_STR(FC_ISA),
    .lanes = FC_W,
    .tile_rows = FC_MR,
    .tile_cols = FC_NR,
    .gemm = gemm,
    .gemm_colmax = gemm_colmax,
    .gemm_visible = gemm_visible,
    .transpose = fc_transpose,
    .dot = fc_dot,
    .all_finite = fc_all_finite,
    .exp = exp_all,
    .exp2 = exp2_all,
    .exp2_nonpositive = exp2_nonpositive_all,
    .softmax_step = fc_softmax_step,
    .softmax_step_raw = fc_softmax_step_raw,
#if FC_BF16_PRODUCTS
    .amx_gemm = amx_gemm,
#endif
#if FC_AMX
    .amx_product = amx_product,
#endif
};
