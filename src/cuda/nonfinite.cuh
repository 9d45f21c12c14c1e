/*
 * Non-finite operands at hidden pairs (semantics §0.3: a position a row does not see never
 * reaches that row's arithmetic).  The tile products multiply every row of one operand by every
 * row of the other, a hidden pair by its 0 — and 0·inf = NaN.  So a tile that hides pairs is
 * checked for inf and NaN (cheap: its loaded chunks, once), and when it holds one the kernels
 * take those values out of the product and put back only what the visible pairs make of them:
 *   - the forwards (P ≥ 0): poison_mark records per (row, feature) the +inf, −inf or NaN a value
 *     gives every row that sees it, zeroes it, and the epilogue adds the record (poison table);
 *   - the backward's dQ += dS·K (the dq-recompute path's dQ kernel): a tile whose keys hold one
 *     records at the step's start what each does to the query rows that see it (poison_record:
 *     NaN), zeroes them after the scores (zero_nonfinite), and adds the record to dQ before it is
 *     stored (add_recorded).  The dK/dV, fused and sm_90a kernels have no registers to spare
 *     for a record: backward_fixup.cuh mends their gradients after the run.
 * The products keep their code and registers; all of it is cold code behind one flag per tile.
 */
#ifndef FC_CUDA_NONFINITE_CUH
#define FC_CUDA_NONFINITE_CUH

#include "../core/dtype.h"
#include "tile.cuh"

namespace fc_cuda {

/* Whether a 16-byte chunk of T elements holds an inf or NaN (an exponent field of all ones);
 * any |= for each of its words. */
template <typename T> __device__ __forceinline__ void chunk_nonfinite(uint4 c, uint32_t &any)
{
    constexpr fc_dtype dt = Elem<T>::dtype;
    constexpr uint32_t ex = dt == FC_F32 ? 0x7F800000u : dt == FC_BF16 ? 0x7F807F80u : 0x7C007C00u; /* exponent fields */
    constexpr uint32_t lo = dt == FC_F32 ? 0xFFFFFFFFu : 0x0000FFFFu, hi = dt == FC_F32 ? 0xFFFFFFFFu : 0xFFFF0000u;
    const uint32_t w[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
    for (int k = 0; k < 4; k++) { /* a field of all ones: that element's bits of (w & ex) ^ ex are zero */
        const uint32_t f = (w[k] & ex) ^ ex;
        any |= (f & lo) == 0 || (f & hi) == 0;
    }
}

/* Whether this thread's share (16-byte chunks tid, tid + THREADS, …) of a loaded tile [ROWS][D]
 * holds an inf or NaN.  The swizzle moves chunks within their row, so the raw chunks are the
 * whole tile. */
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ bool tile_nonfinite(const T *tile, int tid)
{
    constexpr int E = kChunk<T>, CH = ROWS * D / E;
    uint32_t any = 0;
#pragma unroll 4 /* (a warp's share of a whole tile is 64 chunks: unrolled, its loads would want registers) */
    for (int x = tid; x < CH; x += THREADS)
        chunk_nonfinite<T>(*reinterpret_cast<const uint4 *>(tile + x * E), any);
    return any != 0;
}

/* ---- the forwards: the poison table ------------------------------------------------------- */

/* 2 bits per (row, feature) of a table [rows][D / 16]: what the values taken out of P·V give that
 * output — +inf, −inf or NaN (both bits) whatever else it holds (P > 0 at a visible pair). */
constexpr uint32_t kPoisonPos = 1u, kPoisonNeg = 2u;

__device__ __forceinline__ float poison_value(uint32_t cls)
{
    return cls == kPoisonPos ? INFINITY : cls == kPoisonNeg ? -INFINITY : NAN;
}

/* Each inf or NaN of a loaded tile of ROWS rows × D features (each thread, tid of THREADS, its own
 * 16-byte chunks), recorded for the rows r of a poison table that see its row j (visible(r, j)) as
 * its value (NAN_CLASS: as NaN); ZERO: then replaced by 0.  The tile's layout: [ROWS][D], a row's
 * chunks swizzled by j & 7 (the sm_80 kernels); CHUNK64: [D / 64][ROWS][64], the sm_90a kernels'
 * TMA boxes of 64 features, 128-byte rows swizzled the same way. */
template <typename T, int D, int ROWS, int THREADS, bool NAN_CLASS, bool ZERO, bool CHUNK64 = false, class Visible>
__device__ __forceinline__ void poison_walk(T *tile, uint32_t *poison, int rows, int tid, Visible visible)
{
    constexpr int E = kChunk<T>, C = D / E;
    static_assert(!CHUNK64 || (E * 8 == 64 && D % 64 == 0), "CHUNK64: 16-bit elements, 128-byte rows of 64 features");
#pragma unroll 1
    for (int x = tid; x < ROWS * C; x += THREADS) {
        int j, c; /* the chunk's kv row and its logical feature chunk (swz) */
        if constexpr (CHUNK64) {
            const int in = x % (ROWS * 8);
            j = in / 8, c = (x / (ROWS * 8)) * 8 + ((in % 8) ^ (j & 7));
        } else {
            j = x / C, c = (x % C) ^ (j & 7);
        }
#pragma unroll 1
        for (int k = 0; k < E; k++) {
            T *at = tile + x * E + k;
            const uint32_t u = __float_as_uint(Elem<T>::load(at));
            if ((u & 0x7F800000u) != 0x7F800000u)
                continue; /* finite */
            const uint32_t cls = NAN_CLASS || (u & 0x007FFFFFu) ? kPoisonPos | kPoisonNeg : (u >> 31) ? kPoisonNeg : kPoisonPos;
            const int f = c * E + k;
#pragma unroll 1
            for (int r = 0; r < rows; r++)
                if (visible(r, j))
                    atomicOr(&poison[r * (D / 16) + f / 16], cls << (2 * (f % 16)));
            if (ZERO)
                *at = T(0.0f);
        }
    }
}

/* The forwards' value tile of kv rows (layout: poison_walk's): each inf or NaN recorded for the
 * rows that see it, as its value (P > 0 at a visible pair), and replaced by 0. */
template <typename T, int D, int ROWS, int THREADS, bool CHUNK64 = false, class Visible>
__device__ __forceinline__ void poison_mark(T *tile, uint32_t *poison, int rows, int tid, Visible visible)
{
    poison_walk<T, D, ROWS, THREADS, false, true, CHUNK64>(tile, poison, rows, tid, visible);
}

/* The bits of a row stored empty (semantics §2.6: its output is 0 whatever it saw). */
template <int D> __device__ __forceinline__ void poison_clear_row(uint32_t *poison, int r)
{
#pragma unroll 1
    for (int w = 0; w < D / 16; w++)
        poison[r * (D / 16) + w] = 0u;
}

/* An output value of row r, feature f with the recorded value added (rows stored one by one). */
template <int D> __device__ __forceinline__ float poisoned(const uint32_t *poison, int r, int f, float x)
{
    const uint32_t cls = (poison[r * (D / 16) + f / 16] >> (2 * (f % 16))) & 3u;
    return cls == 0u ? x : x + poison_value(cls);
}

/* The stored outputs of rows [0, rows) with the recorded values added (features < dv; row r at
 * row0 + r·rs bytes, feature stride se elements), each thread (tid of threads) whole words of the
 * table.  Out of line: it runs after every store, with nothing else live. */
template <typename T, int D>
__device__ __noinline__ void poison_outputs(const uint32_t *poison, int rows, int dv, char *row0, int64_t rs, int64_t se, int tid,
                                            int threads)
{
#pragma unroll 1
    for (int x = tid; x < rows * (D / 16); x += threads) {
        const uint32_t w = poison[x];
        if (w == 0u)
            continue;
        char *row = row0 + (x / (D / 16)) * rs;
#pragma unroll 1
        for (int k = 0; k < 16; k++) {
            const uint32_t cls = (w >> (2 * k)) & 3u;
            const int f = (x % (D / 16)) * 16 + k;
            if (cls == 0u || f >= dv)
                continue;
            T *at = reinterpret_cast<T *>(row + f * se * (int64_t)sizeof(T));
            *at = T(Elem<T>::load(at) + poison_value(cls));
        }
    }
}

/* ---- the backwards ----------------------------------------------------------------------- */

/* Whether query row i of head n1 (visible spans span) sees key j: the spans and the mask tensor
 * (what hides a pair; every other term keeps it in the arithmetic, with its P). */
__device__ __forceinline__ bool sees(const fc_problem &p, const fc_batch &bt, int64_t n1, int4 span, int64_t i, int j)
{
    return span_has(span, j) && !mask_hides(p, bt, n1, i, j);
}

/* A loaded key tile's inf and NaN recorded, as NaN, for the query rows that see them (poison_walk
 * without the zeros: the step's first products still need the values).  A visible pair with a
 * non-finite k element has a ±inf or NaN logit, so dS = 0 or NaN — 0 also under softcap, whose
 * derivative vanishes there — and dS·k is NaN. */
template <typename T, int D, int ROWS, int THREADS, class Visible>
__device__ __forceinline__ void poison_record(const T *tile, uint32_t *poison, int rows, int tid, Visible visible)
{
    poison_walk<T, D, ROWS, THREADS, true, false>(const_cast<T *>(tile), poison, rows, tid, visible);
}

/* Writes 0 over each inf and NaN of this thread's chunks of a tile [ROWS][D]. */
template <typename T, int D, int ROWS, int THREADS> __device__ __forceinline__ void zero_nonfinite(T *tile, int tid)
{
    constexpr int E = kChunk<T>;
#pragma unroll 1
    for (int x = tid; x < ROWS * D / E; x += THREADS)
#pragma unroll 1
        for (int k = 0; k < E; k++)
            if (!isfinite(Elem<T>::load(tile + x * E + k)))
                tile[x * E + k] = T(0.0f);
}

/* acc (this lane's rows m0 + lane/4 + 8h, features f0 + 8d + 2·(lane mod 4) + c) with the values
 * a poison table [rows][D / 16] recorded added (before scaling and storing). */
template <int D, int DT>
__device__ __forceinline__ void add_recorded(float (&acc)[DT][4], const uint32_t *table, int m0, int f0, int lane)
{
#pragma unroll
    for (int d = 0; d < DT; d++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int c = 0; c < 2; c++)
                acc[d][2 * h + c] = poisoned<D>(table, m0 + lane / 4 + 8 * h, f0 + d * 8 + (lane % 4) * 2 + c, acc[d][2 * h + c]);
}

/* Zeroes words [0, n) of a table, each thread (tid of threads) its share. */
__device__ __forceinline__ void clear_table(uint32_t *table, int n, int tid, int threads)
{
#pragma unroll 1
    for (int x = tid; x < n; x += threads)
        table[x] = 0u;
}

/* ---- the backwards' mends (backward_fixup.cuh, sparse_fixup.cuh): rows checked one by one -- */

/* Whether any of the n elements of a row (feature stride v.se) is an inf or NaN: the warp's
 * lanes side by side, one vote. */
__device__ __forceinline__ bool row_has_nonfinite(const char *row, const fc_view &v, int64_t n, int lane)
{
    const int64_t es = fc_dtype_bytes(v.dtype);
    bool bad = false;
    for (int64_t e = lane; e < n; e += 32)
        bad |= !isfinite(load_any(row + e * v.se * es, v.dtype));
    return __any_sync(0xffffffffu, bad);
}

/* Σ over the lanes, a fixed xor tree. */
__device__ __forceinline__ float warp_sum(float x)
{
#pragma unroll
    for (int k = 16; k > 0; k /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, k);
    return x;
}

} // namespace fc_cuda

#endif /* FC_CUDA_NONFINITE_CUH */
