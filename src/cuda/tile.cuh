/*
 * Device pieces shared by the CUDA kernels (forward and backward): the CTA shape, swizzled tile
 * loads from strided views, the score terms of one element (semantics §2.4) and the register
 * tile's round trip through a shared scratch tile for per-element work that is not unrolled.
 */
#ifndef FC_CUDA_TILE_CUH
#define FC_CUDA_TILE_CUH

#include <float.h>

#include "../core/terms.h"
#include "../core/visibility.h"
#include "ptx.cuh"

namespace fc_cuda {

constexpr int kWarps = 4, kThreads = 32 * kWarps;
constexpr float kLog2e = 1.4426950408889634f;

/* Element (row, 16-byte feature chunk c of E elements: 8 of 16 bits, 4 of fp32) of a [rows][D]
 * tile, chunks XOR-swizzled by row so that ldmatrix's 8 rows hit 8 different bank groups. */
template <int D, int E = 8> __device__ __forceinline__ int swz(int row, int c) { return row * D + (c ^ (row & 7)) * E; }

/* Elements of T in a 16-byte chunk. */
template <typename T> constexpr int kChunk = 16 / (int)sizeof(T);

/* Loads rows [s0, s0 + ROWS) of one (batch, head) slice into a swizzled tile: rows ≥ valid and
 * features ≥ dvalid become zeros.  row0 is the slice's row 0 (fc_view_row at s = 0, computed once
 * per CTA: the views the CUDA kernels take are neither paged nor per-batch lists, so row s lies
 * s·ss elements further).  vec: each thread copies a fixed 16-byte feature chunk of every
 * (THREADS / C)-th row with cp.async, the loop unrolled with constant strides; else element loads
 * (any strides). */
/* One thread's cp.async share of a tile: feature chunk c of rows r0, r0 + STEP, … from src (rs bytes
 * from one row to the next); zeros where !feat or the row is ≥ valid (any: a valid address). */
template <typename T, int D, int ROWS, int STEP>
__device__ __forceinline__ void cp_chunk_rows(T *tile, const char *src, int64_t rs, int c, int r0, bool feat, int valid,
                                              const char *any)
{
#pragma unroll
    for (int i = 0; i < ROWS / STEP; i++, src += STEP * rs) {
        const int row = r0 + i * STEP;
        const bool in = feat && row < valid;
        cp_async16(tile + swz<D, kChunk<T>>(row, c), in ? src : any, in ? 16 : 0);
    }
}

template <typename T, int D, int ROWS, int THREADS = kThreads>
__device__ __forceinline__ void load_tile(T *tile, const fc_view &v, const char *row0, int64_t s0, int valid, int dvalid,
                                          bool vec)
{
    constexpr int E = kChunk<T>, C = D / E, STEP = THREADS / C;
    static_assert(THREADS % C == 0 && ROWS % STEP == 0, "tile rows must split evenly over the threads");
    const int64_t rs = v.ss * (int)sizeof(T); /* bytes from one row to the next */
    if (vec) {
        const int c = threadIdx.x % C, r0 = threadIdx.x / C;
        const bool feat = c * E < dvalid;
        const char *src = row0 + (s0 + r0) * rs + c * 16;
        cp_chunk_rows<T, D, ROWS, STEP>(tile, src, rs, c, r0, feat, valid, v.data);
        return;
    }
#pragma unroll 1
    for (int x = threadIdx.x; x < ROWS * C; x += THREADS) {
        const int row = x / C, c = x % C;
        T *dst = tile + swz<D, E>(row, c);
        const char *src = row0 + (s0 + row) * rs;
        for (int k = 0; k < E; k++) {
            const int e = c * E + k;
            dst[k] = row < valid && e < dvalid ? *(const T *)(src + e * v.se * (int)sizeof(T)) : T(0.0f);
        }
    }
}

__device__ __forceinline__ float pse_at(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int64_t j)
{
    return load_any(p.pse.data + fc_pse_offset(&p.pse, &bt, n1, i, j) * (p.pse.dtype == FC_F32 ? 4 : 2), p.pse.dtype);
}

/* min(cap, x) for a count of rows that may be negative (→ 0). */
__device__ __forceinline__ int clamp_rows(int64_t cap, int64_t x) { return (int)(x < 0 ? 0 : x < cap ? x : cap); }

__device__ __forceinline__ bool span_has(int4 s, int j) { return (j >= s.x && j < s.y) || (j >= s.z && j < s.w); }

/* Row i's visible spans (empty unless live) and its ALiBi slope and frame (core/terms.h: the
 * logits drop the constant aoff, which the statistics carry). */
__device__ __forceinline__ int4 row_frame(const fc_problem &p, const fc_batch &bt, int64_t b, int64_t n1, int64_t i,
                                          bool live, float &slope, float &apos, double &aoff)
{
    int64_t sp[4] = {0, 0, 0, 0};
    if (live)
        fc_row_spans(&bt, i, sp);
    slope = 0.0f, apos = 0.0f, aoff = 0.0;
    if (p.alibi.slopes) {
        slope = p.alibi.slopes[b * p.alibi.sb + n1 * p.alibi.sn];
        fc_alibi_frame(&bt, i, slope, p.alibi.sqrt_distance, &apos, &aoff);
    }
    return make_int4((int)sp[0], (int)sp[1], (int)sp[2], (int)sp[3]);
}

/* Whether the explicit mask hides (i, j) (semantics §2.5). */
__device__ __forceinline__ bool mask_hides(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int64_t j)
{
    return p.mask.data && p.mask.data[bt.mask_base + n1 * p.mask.sn + i * p.mask.si + j * p.mask.sj];
}

/* The score terms of one visible-or-not element (semantics §2.4): pse, scale, softcap, ALiBi,
 * visibility, explicit mask.  gcap (backward) receives softcap's derivative 1 − tanh²(y/cap). */
__device__ __forceinline__ float score_terms(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int j, float x,
                                          int4 span, float slope, float apos, float *gcap = nullptr)
{
    if (!span_has(span, j))
        return -INFINITY;
    if (p.pse.data && p.pse.before_scale)
        x += pse_at(p, bt, n1, i, j);
    x *= p.scale;
    if (p.softcap > 0.0f) {
        const float th = tanhf(x / p.softcap);
        x = p.softcap * th;
        if (gcap)
            *gcap = 1.0f - th * th;
    }
    if (p.pse.data && !p.pse.before_scale)
        x += pse_at(p, bt, n1, i, j);
    if (p.alibi.slopes) {
        const float dist = fabsf((float)j - apos);
        x -= slope * (p.alibi.sqrt_distance ? sqrtf(dist) : dist);
    }
    if (mask_hides(p, bt, n1, i, j))
        return -INFINITY;
    return x;
}

/* The register score tile of a warp to (OUT) or from its rows of the scratch tile [BM][BN + 8]. */
template <bool OUT, int MT, int NT, int BN> __device__ __forceinline__ void stage(float (&s)[MT][NT][4], float *sS, int warp, int lane)
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const int r = warp * 16 * MT + mt * 16 + lane / 4 + 8 * h, c = nt * 8 + (lane % 4) * 2;
                float2 *at = reinterpret_cast<float2 *>(sS + r * (BN + 8) + c);
                if (OUT) {
                    *at = make_float2(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]);
                } else {
                    const float2 v = *at;
                    s[mt][nt][2 * h] = v.x, s[mt][nt][2 * h + 1] = v.y;
                }
            }
}

/* v = f(v, row, column in tile) for every element of the warp's score rows, through the scratch
 * tile in a loop that is not unrolled (so that f costs no registers of the unrolled tile). */
template <int MT, int NT, int BN, typename F>
__device__ __forceinline__ void through_scratch(float (&s)[MT][NT][4], float *sS, int warp, int lane, F f)
{
    stage<true, MT, NT, BN>(s, sS, warp, lane);
    __syncwarp();
#pragma unroll 1
    for (int x = lane; x < 16 * MT * BN; x += 32) {
        const int r = warp * 16 * MT + x / BN;
        float &v = sS[r * (BN + 8) + x % BN];
        v = f(v, r, x % BN);
    }
    __syncwarp();
    stage<false, MT, NT, BN>(s, sS, warp, lane);
}

/* f(a, b, row, column in tile) on two register tiles of the same shape at once (two scratch
 * tiles [BM][BN + 8] at sA and sB), as through_scratch. */
template <int MT, int NT, int BN, typename F>
__device__ __forceinline__ void through_scratch2(float (&a)[MT][NT][4], float (&b)[MT][NT][4], float *sA, float *sB, int warp,
                                                 int lane, F f)
{
    stage<true, MT, NT, BN>(a, sA, warp, lane);
    stage<true, MT, NT, BN>(b, sB, warp, lane);
    __syncwarp();
#pragma unroll 1
    for (int x = lane; x < 16 * MT * BN; x += 32) {
        const int r = warp * 16 * MT + x / BN, at = r * (BN + 8) + x % BN;
        f(sA[at], sB[at], r, x % BN);
    }
    __syncwarp();
    stage<false, MT, NT, BN>(a, sA, warp, lane);
    stage<false, MT, NT, BN>(b, sB, warp, lane);
}

} // namespace fc_cuda

#endif /* FC_CUDA_TILE_CUH */
