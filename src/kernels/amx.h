/*
 * AMX (Intel Advanced Matrix Extensions) bf16 tiles: one tile configuration and the one tile GEMM
 *
 *     C[M×N] (+)= A[M×K] · B[K×N]   bf16 products, fp32 accumulation (tdpbf16ps)
 *
 *  - A: bf16 rows, A(m, k) = A[m·lda + k]  (lda in elements, even);
 *  - B: the pair-interleaved ("VNNI") form, B(k, n) = B[(k/2)·ldb + 2n + k%2]  (ldb in bf16 elements);
 *  - C: fp32 rows, C(m, n) = C[m·ldc + n];
 *  - M and N multiples of 16, K a positive multiple of 32 (the callers pad their operands with zeros);
 *  - or anywhere else amx_layout.h can say (fc_amx_gemm_at).
 *
 * Only compiled into the amx kernel set (FC_AMX); isa.c has asked the kernel for the tile state
 * (arch_prctl) before this set is ever chosen.  Each kernel call configures the tiles of its own
 * thread (fc_amx_begin) and releases them when done (fc_amx_end).  The avx512bf16 set (FC_DPBF16)
 * gets the same functions from dpbf16.h, on vdpbf16ps; the neonbf16 set (FC_BFDOT) fc_amx_gemm
 * from gemm_bfdot.h, on BFDOT.
 */
#ifndef FC_KERNELS_AMX_H
#define FC_KERNELS_AMX_H

#include "amx_layout.h"

#if FC_BFDOT
#include "gemm_bfdot.h" /* fc_amx_gemm on row-major operands only (the column-major forward's) */
#else

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
FC_INLINE void fc_amx_block(bool m2, bool n2, int K, const uint16_t *A, fc_amx_layout la, const uint16_t *B,
                            fc_amx_layout lb, float *C, fc_amx_layout lc, bool accumulate)
{
    const size_t sa = la.ld * 2, sb = lb.ld * 2, sc = lc.ld * 4;
    float *C1 = C + lc.half, *C2 = C + lc.group, *C3 = C + lc.group + lc.half;
    if (accumulate) {
        _tile_loadd(0, C, sc);
        if (n2)
            _tile_loadd(1, C1, sc);
        if (m2)
            _tile_loadd(2, C2, sc);
        if (m2 && n2)
            _tile_loadd(3, C3, sc);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    /* Tiles are not renamed: a load waits for the products that read its tile before it.  So each
     * K step's operands are loaded as the products of the step before free their tiles (A0 after
     * the two products that read it, B0 after the third, A1 and B1 last), and the unit has a
     * product to run while a load is in flight. */
    const uint16_t *A1 = A + la.group, *B1 = B + lb.half;
    _tile_loadd(4, A, sa);
    _tile_loadd(6, B, sb);
    if (n2)
        _tile_loadd(7, B1, sb);
    if (m2)
        _tile_loadd(5, A1, sa);
    for (int k = 32;; k += 32) {
        const bool more = k < K;
        const size_t ka = fc_amx_kstep(la, k / 32), kb = fc_amx_kstep(lb, k / 32);
        _tile_dpbf16ps(0, 4, 6);
        if (n2)
            _tile_dpbf16ps(1, 4, 7);
        if (more)
            _tile_loadd(4, A + ka, sa);
        if (m2)
            _tile_dpbf16ps(2, 5, 6);
        if (more)
            _tile_loadd(6, B + kb, sb);
        if (m2 && n2)
            _tile_dpbf16ps(3, 5, 7);
        if (!more)
            break;
        if (m2)
            _tile_loadd(5, A1 + ka, sa);
        if (n2)
            _tile_loadd(7, B1 + kb, sb);
    }
    _tile_stored(0, C, sc);
    if (n2)
        _tile_stored(1, C1, sc);
    if (m2)
        _tile_stored(2, C2, sc);
    if (m2 && n2)
        _tile_stored(3, C3, sc);
}

/* C (+)= A·B with the operands where their layouts say (amx_layout.h). */
static inline void fc_amx_gemm_at(int M, int N, int K, const uint16_t *A, fc_amx_layout la, const uint16_t *B,
                                  fc_amx_layout lb, float *C, fc_amx_layout lc, bool accumulate)
{
    for (int m0 = 0; m0 < M; m0 += 32) {
        const bool m2 = m0 + 16 < M;
        for (int n0 = 0; n0 < N; n0 += 32)
            fc_amx_block(m2, n0 + 16 < N, K, A + (size_t)(m0 / 16) * la.group, la, B + (size_t)(n0 / 32) * lb.block,
                         lb, C + (size_t)(m0 / 16) * lc.group + (size_t)(n0 / 32) * lc.block, lc, accumulate);
    }
}

#endif /* FC_DPBF16 */

/* C (+)= A·B, all three row-major (B in pair form), rows lda, ldb, ldc elements apart. */
static inline void fc_amx_gemm(int M, int N, int K, const uint16_t *A, size_t lda, const uint16_t *B, size_t ldb,
                               float *C, size_t ldc, bool accumulate)
{
    fc_amx_gemm_at(M, N, K, A, fc_amx_rows(lda), B, fc_amx_pairs(ldb), C, fc_amx_rows(ldc), accumulate);
}

#endif /* FC_BFDOT */

#endif /* FC_KERNELS_AMX_H */
