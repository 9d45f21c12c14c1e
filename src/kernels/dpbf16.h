/*
 * amx.h's GEMM for the avx512bf16 set (CPUs with AVX512-BF16 but no AMX): the same operands,
 * layouts (amx_layout.h) and contract,
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

#include "amx_layout.h"

/* No tile state to configure: the calls stay so that the callers are those of the amx set. */
static inline void fc_amx_begin(void) {}
static inline void fc_amx_end(void) {}

/* An mr × (16·nv) block of C from row m0 and column n0 over the whole K axis (mr, nv compile-time
 * constants after inlining; mr divides 16, so the block's rows lie in one 16-row group). */
FC_INLINE void fc_dpbf16_block(const int mr, const int nv, int K, const uint16_t *A, fc_amx_layout la, const uint16_t *B,
                               fc_amx_layout lb, float *C, fc_amx_layout lc, int m0, int n0, bool accumulate)
{
    const uint16_t *a = A + (size_t)(m0 / 16) * la.group + (size_t)(m0 % 16) * la.ld, *b[4];
    float *c[4];
    for (int v = 0; v < nv; v++) {
        const int n = n0 + 16 * v;
        b[v] = B + (size_t)(n / 32) * lb.block + (size_t)(n % 32 / 16) * lb.half;
        c[v] = C + (size_t)(m0 / 16) * lc.group + (size_t)(m0 % 16) * lc.ld + (size_t)(n / 32) * lc.block +
               (size_t)(n % 32 / 16) * lc.half;
    }
    __m512 acc[16][4];
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            acc[i][v] = accumulate ? _mm512_loadu_ps(c[v] + i * lc.ld) : _mm512_setzero_ps();
    for (int k0 = 0; k0 < K; k0 += 32) {
        const uint16_t *ak = a + fc_amx_kstep(la, k0 / 32);
        const size_t bk = fc_amx_kstep(lb, k0 / 32);
        for (int k = 0; k < 32; k += 2) {
            __m512bh bv[4];
            for (int v = 0; v < nv; v++)
                bv[v] = (__m512bh)_mm512_loadu_si512(b[v] + bk + (size_t)(k / 2) * lb.ld);
            for (int i = 0; i < mr; i++) {
                int32_t pair;
                memcpy(&pair, ak + i * la.ld + k, sizeof pair);
                const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
                for (int v = 0; v < nv; v++)
                    acc[i][v] = _mm512_dpbf16_ps(acc[i][v], av, bv[v]);
            }
        }
    }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            _mm512_storeu_ps(c[v] + i * lc.ld, acc[i][v]);
}

/* All rows of C for columns [n0, n0 + 16·nv): 16 / mr row blocks per 16 rows (M is a multiple of 16). */
FC_INLINE void fc_dpbf16_cols(const int mr, const int nv, int M, int n0, int K, const uint16_t *A, fc_amx_layout la,
                              const uint16_t *B, fc_amx_layout lb, float *C, fc_amx_layout lc, bool accumulate)
{
    for (int m0 = 0; m0 < M; m0 += mr)
        fc_dpbf16_block(mr, nv, K, A, la, B, lb, C, lc, m0, n0, accumulate);
}

/* amx.h's fc_amx_gemm_at: the same operands where their layouts say (amx_layout.h). */
static inline void fc_amx_gemm_at(int M, int N, int K, const uint16_t *A, fc_amx_layout la, const uint16_t *B,
                                  fc_amx_layout lb, float *C, fc_amx_layout lc, bool accumulate)
{
    int n0 = 0;
    for (; n0 + 64 <= N; n0 += 64) /* the B panel of 64 columns stays in L1 across the row blocks */
        fc_dpbf16_cols(4, 4, M, n0, K, A, la, B, lb, C, lc, accumulate);
    switch ((N - n0) / 16) {
    case 3:
        fc_dpbf16_cols(4, 3, M, n0, K, A, la, B, lb, C, lc, accumulate);
        break;
    case 2:
        fc_dpbf16_cols(8, 2, M, n0, K, A, la, B, lb, C, lc, accumulate);
        break;
    case 1:
        fc_dpbf16_cols(16, 1, M, n0, K, A, la, B, lb, C, lc, accumulate);
        break;
    default:
        break;
    }
}

#endif /* FC_KERNELS_DPBF16_H */
