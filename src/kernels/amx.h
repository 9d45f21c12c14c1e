/*
 * AMX (Intel Advanced Matrix Extensions) bf16 tiles: one tile configuration and the one tile GEMM
 *
 *     C[M×N] (+)= A[M×K] · B[K×N]   bf16 products, fp32 accumulation (tdpbf16ps)
 *
 *  - A: bf16 rows, A(m, k) = A[m·lda + k]  (lda in elements, even);
 *  - B: the pair-interleaved ("VNNI") form, B(k, n) = B[(k/2)·ldb + 2n + k%2]  (ldb in bf16 elements);
 *  - C: fp32 rows, C(m, n) = C[m·ldc + n];
 *  - M and N multiples of 16, K a multiple of 32 (the callers pad their operands with zeros);
 *  - fc_amx_gemm_wrap: B's K axis repeats every kb rows (a multiple of 32 dividing K), B(k, n) =
 *    B(k mod kb, n): one chain of products over A's parts against the parts B holds once.
 *
 * Only compiled into the amx kernel set (FC_AMX); isa.c has asked the kernel for the tile state
 * (arch_prctl) before this set is ever chosen.  Each kernel call configures the tiles of its own
 * thread (fc_amx_begin) and releases them when done (fc_amx_end).  The avx512bf16 set (FC_DPBF16)
 * gets the same functions from dpbf16.h, on vdpbf16ps.
 */
#ifndef FC_KERNELS_AMX_H
#define FC_KERNELS_AMX_H

#if FC_DPBF16
#include "dpbf16.h"
#else

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every tile 16 rows × 64 bytes: tmm0–3 accumulators, tmm4–5 A, tmm6–7 B. */
static inline void fc_amx_begin(void)
{
    struct {
        uint8_t palette, start_row, reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } __attribute__((aligned(64))) cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    _tile_loadconfig(&cfg);
}

static inline void fc_amx_end(void) { _tile_release(); }

/* One 32×32 block of C (or 16-wide where M or N ends): two A and two B tiles per K step. */
FC_INLINE void fc_amx_block(bool m2, bool n2, int K, int kb, const uint16_t *A, size_t lda, const uint16_t *B,
                            size_t ldb, float *C, size_t ldc, bool accumulate)
{
    const size_t sa = lda * 2, sb = ldb * 2, sc = ldc * 4;
    if (accumulate) {
        _tile_loadd(0, C, sc);
        if (n2)
            _tile_loadd(1, C + 16, sc);
        if (m2)
            _tile_loadd(2, C + 16 * ldc, sc);
        if (m2 && n2)
            _tile_loadd(3, C + 16 * ldc + 16, sc);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (int k = 0, kk = 0; k < K; k += 32, kk = kk + 32 == kb ? 0 : kk + 32) { /* all loads first: tiles
                                         * are not renamed, so a load between products waits for the
                                         * products before it */
        _tile_loadd(4, A + k, sa);
        if (m2)
            _tile_loadd(5, A + 16 * lda + k, sa);
        _tile_loadd(6, B + (size_t)(kk / 2) * ldb, sb);
        if (n2)
            _tile_loadd(7, B + (size_t)(kk / 2) * ldb + 32, sb);
        _tile_dpbf16ps(0, 4, 6);
        if (n2)
            _tile_dpbf16ps(1, 4, 7);
        if (m2)
            _tile_dpbf16ps(2, 5, 6);
        if (m2 && n2)
            _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, C, sc);
    if (n2)
        _tile_stored(1, C + 16, sc);
    if (m2)
        _tile_stored(2, C + 16 * ldc, sc);
    if (m2 && n2)
        _tile_stored(3, C + 16 * ldc + 16, sc);
}

static inline void fc_amx_gemm_wrap(int M, int N, int K, int kb, const uint16_t *A, size_t lda, const uint16_t *B,
                                    size_t ldb, float *C, size_t ldc, bool accumulate)
{
    for (int m0 = 0; m0 < M; m0 += 32) {
        const bool m2 = m0 + 16 < M;
        for (int n0 = 0; n0 < N; n0 += 32)
            fc_amx_block(m2, n0 + 16 < N, K, kb, A + (size_t)m0 * lda, lda, B + (size_t)n0 * 2, ldb,
                         C + (size_t)m0 * ldc + n0, ldc, accumulate);
    }
}

static inline void fc_amx_gemm(int M, int N, int K, const uint16_t *A, size_t lda, const uint16_t *B, size_t ldb,
                               float *C, size_t ldc, bool accumulate)
{
    fc_amx_gemm_wrap(M, N, K, K, A, lda, B, ldb, C, ldc, accumulate);
}

#endif /* FC_DPBF16 */
#endif /* FC_KERNELS_AMX_H */
