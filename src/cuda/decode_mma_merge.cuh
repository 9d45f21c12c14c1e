/*
 * The tensor-core decode's merge (decode_mma_kernel.cuh): the CTA that arrives last at a (batch, kv
 * head)'s counter folds the partial (O, m, l) of every block of the row in block order with the
 * sink, divides once and writes the rows and statistics.  int8 values take their scale and offset
 * here, once per output feature.
 */
#ifndef FC_CUDA_DECODE_MMA_MERGE_CUH
#define FC_CUDA_DECODE_MMA_MERGE_CUH

#include "decode_mma_common.cuh"

namespace fc_cuda {

/* Rows of batch b, kv head n2 (R of them, nblk blocks); sW: [nblk][R] floats of idle stage memory
 * for the block weights; sInv, sEmpty, sKs: per-row shared arrays (sKs, the int8 keys' constant,
 * is free by now and holds the positions' share of l for int8 values). */
template <bool I8, int DC, int V>
__device__ __forceinline__ void dec_mma_merge(const fc_problem &p, const MmaLaunch &L, const fc_batch &bt, int64_t b,
                                              int64_t n2, int R, int nblk, int tid, int warp, int lane, float *sW,
                                              float *sInv, float *sEmpty, float *sKs)
{
    const float *part = L.partial + ((int64_t)b * p.Nkv + n2) * L.maxblk * (int64_t)R * (DC + 2);
    const int64_t pslot = (int64_t)R * (DC + 2);
    /* Row r's statistics once folded: 1 / l (0 for an empty row) and the written statistics. */
    auto row_done = [&](int r, int64_t i, int64_t n1, bool live, float m, float l) {
        const bool empty = !live || l == 0.0f;
        sInv[r] = empty ? 0.0f : 1.0f / l, sEmpty[r] = empty;
        if (p.stats.max && i < bt.q_rows)
            fc_stat_store(&p.stats, fc_stat_offset(&p, &bt, n1, i), empty ? -FLT_MAX : m, empty ? FLT_MAX : l);
    };
    if (V & kMmaWideMerge) { /* a warp per row: lanes stride over the blocks, a fixed tree joins them */
        for (int r = warp; r < R; r += kMmaWarps) {
            const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
            const bool live = i < bt.sq;
            const float sink = live && p.sink ? fc_sink_at(&p, n1) : -INFINITY;
            float m = -INFINITY, l = 0.0f;
#pragma unroll 4
            for (int k = lane; k < nblk; k += 32)
                m = max_nan(m, __ldcg(part + k * pslot + R * DC + r));
#pragma unroll
            for (int off = 16; off > 0; off /= 2)
                m = max_nan(m, __shfl_xor_sync(0xffffffffu, m, off));
            m = max_nan(sink, __shfl_sync(0xffffffffu, m, 0));
            const float ref = (m == -INFINITY ? 0.0f : m) * kLog2e;
#pragma unroll 4
            for (int k = lane; k < nblk; k += 32) {
                const float w = exp2f(fmaf(__ldcg(part + k * pslot + R * DC + r), kLog2e, -ref));
                sW[k * R + r] = w;
                l = fmaf(__ldcg(part + k * pslot + R * DC + R + r), w, l);
            }
#pragma unroll
            for (int off = 16; off > 0; off /= 2)
                l += __shfl_xor_sync(0xffffffffu, l, off);
            const float lv = l; /* the positions' share, without the sink */
            l += sink == -INFINITY ? 0.0f : exp2f(fmaf(sink, kLog2e, -ref));
            if (lane == 0) {
                row_done(r, i, n1, live, m, l);
                if constexpr (I8)
                    sKs[r] = l > 0.0f ? lv / l : 0.0f;
            }
        }
    } else if (tid < R) {
        const int r = tid;
        const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
        const bool live = i < bt.sq;
        const float sink = live && p.sink ? fc_sink_at(&p, n1) : -INFINITY;
        float m = sink;
        for (int k = 0; k < nblk; k++)
            m = max_nan(m, __ldcg(part + k * pslot + R * DC + r));
        const float ref = (m == -INFINITY ? 0.0f : m) * kLog2e;
        float l = sink == -INFINITY ? 0.0f : exp2f(fmaf(sink, kLog2e, -ref));
        const float ls = l;
        for (int k = 0; k < nblk; k++) {
            const float w = exp2f(fmaf(__ldcg(part + k * pslot + R * DC + r), kLog2e, -ref));
            sW[k * R + r] = w;
            l = fmaf(__ldcg(part + k * pslot + R * DC + R + r), w, l);
        }
        row_done(r, i, n1, live, m, l);
        if constexpr (I8) /* the positions' share, without the sink */
            sKs[r] = l > 0.0f ? (l - ls) / l : 0.0f;
    }
    __syncthreads();
    const int Dv = (int)p.Dv;
    const int64_t oes = fc_dtype_bytes(p.out.dtype);
    const fc_affine_view &va = p.v.dequant;
    const int64_t vae = I8 ? fc_dtype_bytes(va.dtype) : 0;
    /* Output feature e of row r from its folded sum; int8 values: Σ p·(v + offset)·scale / l, the
     * offset weighted by the positions' share of l (sKs, now free: a sink takes the rest). */
    auto store = [&](int r, int e, int64_t i, int64_t n1, float acc) {
        const bool empty = sEmpty[r] != 0.0f;
        float y = acc * sInv[r];
        if (I8) {
            const int64_t at = (n2 * va.sn + (int64_t)e * va.se) * vae;
            y = (y + (va.offset ? load_any(va.offset + at, va.dtype) * sKs[r] : 0.0f)) * load_any(va.scale + at, va.dtype);
        }
        dec_store(p, fc_view_row(&p.out, oes, b, bt.q_tok, n1, i), n1, e, empty ? 0.0f : y, empty);
    };
    if (V & kMmaWideMerge) { /* feature pairs (r, e, e + 1), two per thread, blocks in order, loads ahead */
        for (int x0 = tid; x0 < R * DC / 2; x0 += 2 * kMmaThreads) {
            float2 acc[2] = {make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f)};
            int at[2];
#pragma unroll
            for (int u = 0; u < 2; u++) {
                const int x = x0 + u * kMmaThreads;
                at[u] = x < R * DC / 2 ? x / (DC / 2) * DC + 2 * (x % (DC / 2)) : -1; /* -1: none */
            }
#pragma unroll 8
            for (int k = 0; k < nblk; k++)
#pragma unroll
                for (int u = 0; u < 2; u++)
                    if (at[u] >= 0) {
                        const float2 v = __ldcg(reinterpret_cast<const float2 *>(part + k * pslot + at[u]));
                        const float w = sW[k * R + at[u] / DC];
                        acc[u].x = fmaf(v.x, w, acc[u].x), acc[u].y = fmaf(v.y, w, acc[u].y);
                    }
#pragma unroll
            for (int u = 0; u < 2; u++) {
                const int r = at[u] / DC, e = at[u] % DC;
                const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
                if (at[u] >= 0 && i < bt.q_rows) {
                    if (e < Dv)
                        store(r, e, i, n1, acc[u].x);
                    if (e + 1 < Dv)
                        store(r, e + 1, i, n1, acc[u].y);
                }
            }
        }
    } else {
        for (int x = tid; x < R * Dv; x += kMmaThreads) {
            const int r = x / Dv, e = x % Dv;
            const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
            if (i >= bt.q_rows)
                continue;
            float acc = 0.0f;
            for (int k = 0; k < nblk; k++)
                acc = fmaf(__ldcg(part + k * pslot + r * DC + e), sW[k * R + r], acc);
            store(r, e, i, n1, acc);
        }
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_MMA_MERGE_CUH */
