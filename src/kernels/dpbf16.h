/*
 * amx.h's GEMM for the avx512bf16 set (CPUs with AVX512-BF16 but no AMX): the same operands and
 * contract,
 *
 *     C[M×N] (+)= A[M×K] · B[K×N]   bf16 products, fp32 accumulation
 *
 * (A bf16 rows; B in the pair-interleaved form; M and N multiples of 16, K of 32), so that
 * amx_pack.h, amx_rows.h and amx_bwd.h run unchanged on either set.  One vdpbf16ps multiplies a
 * broadcast pair of A, (A(m, k), A(m, k + 1)), with 16 of B's pairs, one dword per column, and adds
 * both exact products to 16 fp32 sums; the register tile is mr rows × nv vectors of 16 columns, 16
 * sums where N allows (enough independent chains to cover the instruction's latency).
 *
 * Precision: as the tiles (amx_pack.h): bf16 products are exact in fp32, each k pair adds to the
 * sum in a fixed order (the result depends on M, N, K and the operands only, never on threads).
 */
#ifndef FC_KERNELS_DPBF16_H
#define FC_KERNELS_DPBF16_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* No tile state to configure: the calls stay so that the callers are those of the amx set. */
static inline void fc_amx_begin(void) {}
static inline void fc_amx_end(void) {}

/* An mr × (16·nv) block of C over the whole K axis (mr, nv compile-time constants after inlining). */
FC_INLINE void fc_dpbf16_block(const int mr, const int nv, int K, int kb, const uint16_t *A, size_t lda,
                               const uint16_t *B, size_t ldb, float *C, size_t ldc, bool accumulate)
{
    __m512 c[16][4];
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            c[i][v] = accumulate ? _mm512_loadu_ps(C + i * ldc + 16 * v) : _mm512_setzero_ps();
    for (int k = 0, kk = 0; k < K; k += 2, kk = kk + 2 == kb ? 0 : kk + 2) {
        const uint16_t *b = B + (size_t)(kk / 2) * ldb;
        __m512bh bv[4];
        for (int v = 0; v < nv; v++)
            bv[v] = (__m512bh)_mm512_loadu_si512(b + 32 * v);
        for (int i = 0; i < mr; i++) {
            int32_t pair;
            memcpy(&pair, A + i * lda + k, sizeof pair);
            const __m512bh a = (__m512bh)_mm512_set1_epi32(pair);
            for (int v = 0; v < nv; v++)
                c[i][v] = _mm512_dpbf16_ps(c[i][v], a, bv[v]);
        }
    }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            _mm512_storeu_ps(C + i * ldc + 16 * v, c[i][v]);
}

/* All rows of C for columns [n0, n0 + 16·nv): 16 / mr row blocks per 16 rows (M is a multiple of 16). */
FC_INLINE void fc_dpbf16_cols(const int mr, const int nv, int M, int n0, int K, int kb, const uint16_t *A, size_t lda,
                              const uint16_t *B, size_t ldb, float *C, size_t ldc, bool accumulate)
{
    for (int m0 = 0; m0 < M; m0 += mr)
        fc_dpbf16_block(mr, nv, K, kb, A + (size_t)m0 * lda, lda, B + (size_t)n0 * 2, ldb, C + (size_t)m0 * ldc + n0,
                        ldc, accumulate);
}

static inline void fc_amx_gemm_wrap(int M, int N, int K, int kb, const uint16_t *A, size_t lda, const uint16_t *B,
                                    size_t ldb, float *C, size_t ldc, bool accumulate)
{
    int n0 = 0;
    for (; n0 + 64 <= N; n0 += 64) /* the B panel of 64 columns stays in L1 across the row blocks */
        fc_dpbf16_cols(4, 4, M, n0, K, kb, A, lda, B, ldb, C, ldc, accumulate);
    switch ((N - n0) / 16) {
    case 3:
        fc_dpbf16_cols(4, 3, M, n0, K, kb, A, lda, B, ldb, C, ldc, accumulate);
        break;
    case 2:
        fc_dpbf16_cols(8, 2, M, n0, K, kb, A, lda, B, ldb, C, ldc, accumulate);
        break;
    case 1:
        fc_dpbf16_cols(16, 1, M, n0, K, kb, A, lda, B, ldb, C, ldc, accumulate);
        break;
    default:
        break;
    }
}

static inline void fc_amx_gemm(int M, int N, int K, const uint16_t *A, size_t lda, const uint16_t *B, size_t ldb,
                               float *C, size_t ldc, bool accumulate)
{
    fc_amx_gemm_wrap(M, N, K, K, A, lda, B, ldb, C, ldc, accumulate);
}

#endif /* FC_KERNELS_DPBF16_H */
