/*
 * Non-finite operands at hidden pairs in the backward's tile products (semantics §0.3: a position a
 * row does not see never reaches that row's arithmetic).  The products multiply every row of one
 * operand by every row of the other, a hidden pair by its 0, and 0·inf = NaN: a query or d_out row
 * with an inf or NaN reaches dK and dV of every key in the tiles it is multiplied with, a key row
 * dQ of every query row in its tiles (the dq-recompute path's dQ kernel keeps keys out itself,
 * nonfinite.cuh).  Recording and zeroing those values inside the products costs the hot kernels
 * registers they do not have, so the backward mends the few gradient rows afterwards instead:
 *   1. bwd_nf_scan_*: one byte per query row (kBadQ, kBadDout) and per key row (kBadK), and a flag
 *      for the run when any is set — a read of Q, dO and K beside the backward's own;
 *   2. bwd_nf_dkv_kernel: per kv tile, when the flag is set and a bad query row that some path's
 *      products meet with the tile hides a pair from it, dK and dV of the whole tile again;
 *   3. bwd_nf_dq_kernel (the fused and sm_90a paths): per query tile, likewise for bad keys.
 * Both recompute in fp32 on CUDA cores, a warp per gradient row, straight from the formula over
 * the visible pairs only (grad_at: the same score terms, dropout and statistics as the tiles),
 * in a fixed order: bitwise repeatable, and exact IEEE arithmetic for what the row does see.
 * Without an inf or NaN anywhere the two kernels return at their first load.  "Meets": the
 * products take a kv tile with the query rows the visibility hull of its columns covers, widened
 * to whole query tiles (≤ 128 rows, aligned) — kHullPad covers every path's tiles.
 */
#ifndef FC_CUDA_BACKWARD_FIXUP_CUH
#define FC_CUDA_BACKWARD_FIXUP_CUH

#include "backward_dq_kernel.cuh" /* kBwdQRows: the query tiles of every list */
#include "rope_split.h"

namespace fc_cuda {

/* The mend's state in the workspace and the facts it needs beyond BwdLaunch (a struct of its own:
 * the tiled kernels' parameters keep their layout). */
struct BwdMend {
    unsigned *flag;        /* set when a query, d_out or key row holds an inf or NaN */
    unsigned char *q_bad;  /* per (n1, query row): kBadQ | kBadDout at q_bad[n1·L.rows + L.row0[b] + i] */
    unsigned char *k_bad;  /* per (n2, key row): kBadK at k_bad[n2·krows + krow0[b] + j] */
    const int64_t *krow0;  /* per batch: Σ kv_rows before it */
    int64_t krows;         /* Σ kv_rows */
    int kv_tile;           /* kv rows per item of the kv tile list */
    const int2 *kv_items;  /* the kv tile list (the query kernels take L.items: the query tiles) */
};

constexpr unsigned char kBadQ = 1, kBadDout = 2, kBadK = 4;
constexpr int kFixMaxD = 256; /* Dqk + Dr and Dv of every CUDA backward (fc_cuda_bwd_unsupported refuses more) */
constexpr int64_t kHullPad = 128; /* every path's query tiles (16–64 rows; dK/dV steps from any row) */

/* Feature f of row s (head n) of a query or key operand with its rope features after the first
 * dqk (rope_split.h's joint row). */
__device__ __forceinline__ float joint_at(const fc_problem &p, const fc_view &v, const fc_view &vr, int64_t b, int64_t tok, int64_t n,
                                          int64_t s, int f)
{
    int64_t off;
    const fc_view *w = fc_rope_elem(&v, &vr, (int)p.Dqk, (int)p.Dr, f, &off);
    return load_any(fc_view_row(w, fc_dtype_bytes(w->dtype), b, tok, n, s) + off, w->dtype);
}

/* Feature e of row s of a d_out or value operand. */
__device__ __forceinline__ float plain_at(const fc_view &v, int64_t b, int64_t tok, int64_t n, int64_t s, int e)
{
    const int64_t es = fc_dtype_bytes(v.dtype);
    return load_any(fc_view_row(&v, es, b, tok, n, s) + e * v.se * es, v.dtype);
}

/* Stores x as feature f of a gradient row with rope features (dq / dk and their rope parts). */
__device__ __forceinline__ void joint_store(const fc_problem &p, const fc_view &g, const fc_view &gr, int64_t b, int64_t tok, int64_t n,
                                            int64_t s, int f, float x)
{
    int64_t off;
    const fc_view *w = fc_rope_elem(&g, &gr, (int)p.Dqk, (int)p.Dr, f, &off);
    store_any(fc_view_row(w, fc_dtype_bytes(w->dtype), b, tok, n, s) + off, w->dtype, x);
}

/* Query rows [lo, hi) that some path's products may meet with kv columns [j0, j1) (j1 ≤ skv). */
__device__ __forceinline__ void met_rows(const fc_batch &bt, int64_t j0, int64_t j1, int64_t &lo, int64_t &hi)
{
    lo = hi = 0;
    if (j0 >= j1)
        return;
    fc_col_rows(&bt, j0, j1, &lo, &hi);
    if (lo >= hi)
        return;
    lo = lo / kHullPad * kHullPad;
    hi = (hi + 2 * kHullPad - 1) / kHullPad * kHullPad;
    hi = hi < bt.q_rows ? hi : bt.q_rows;
}

/* Bytes for the rows of query heads (one CTA per item of L.items × Nq, kBwdQRows rows). */
__global__ void __launch_bounds__(kThreads) bwd_nf_scan_q_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L, const BwdMend M)
{
    each_query_row<kBwdQRows>(p, L, [&](int64_t b, int64_t n1, const fc_batch &bt, int64_t i, int lane) {
        unsigned char bad = 0;
        if (i < bt.sq) {
            const int64_t eq = fc_dtype_bytes(p.q.dtype);
            if (row_has_nonfinite(fc_view_row(&p.q, eq, b, bt.q_tok, n1, i), p.q, p.Dqk, lane) ||
                (p.Dr > 0 && row_has_nonfinite(fc_view_row(&p.q_rope, fc_dtype_bytes(p.q_rope.dtype), b, bt.q_tok, n1, i), p.q_rope,
                                               p.Dr, lane)))
                bad |= kBadQ;
            if (row_has_nonfinite(fc_view_row(&p.dout, fc_dtype_bytes(p.dout.dtype), b, bt.q_tok, n1, i), p.dout, p.Dv, lane))
                bad |= kBadDout;
        }
        if (lane == 0) {
            M.q_bad[n1 * L.rows + L.row0[b] + i] = bad;
            if (bad)
                *M.flag = 1u; /* every writer writes 1 */
        }
    });
}

/* Bytes for the key rows (one CTA per item of M.kv_items × Nkv, M.kv_tile rows). */
__global__ void __launch_bounds__(kThreads) bwd_nf_scan_k_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L, const BwdMend M)
{
    const int nkv = (int)p.Nkv;
    const int2 item = M.kv_items[blockIdx.x / nkv];
    const int64_t b = item.x, n2 = blockIdx.x % nkv;
    const fc_batch &bt = p.batch[b];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t j0 = (int64_t)item.y * M.kv_tile, jz = j0 + M.kv_tile < bt.kv_rows ? j0 + M.kv_tile : bt.kv_rows;
    for (int64_t j = j0 + warp; j < jz; j += kWarps) {
        unsigned char bad = 0;
        if (j < bt.skv &&
            (row_has_nonfinite(fc_view_row(&p.k, fc_dtype_bytes(p.k.dtype), b, bt.kv_tok, n2, j), p.k, p.Dqk, lane) ||
             (p.Dr > 0 && row_has_nonfinite(fc_view_row(&p.k_rope, fc_dtype_bytes(p.k_rope.dtype), b, bt.kv_tok, n2, j), p.k_rope,
                                            p.Dr, lane))))
            bad = kBadK;
        if (lane == 0) {
            M.k_bad[n2 * M.krows + M.krow0[b] + j] = bad;
            if (bad)
                *M.flag = 1u;
        }
    }
}

/* One pair's (Pd, dS) from the raw score s and the raw dP (grad_at over the visible pairs; the
 * dropout bits as the problem has them: kFeatF32's run-time choice). */
__device__ __forceinline__ void fix_grad(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int j, const RowFacts &f,
                                         float &s, float &dp)
{
    grad_at<true, kFeatF32>(p, bt, n1, i, j, f, false, s, dp);
}

/* dK and dV of one kv tile again (M.kv_items × Nkv, M.kv_tile rows), where a bad query or d_out row
 * that the products meet with the tile hides a pair from it. */
__global__ void __launch_bounds__(kThreads) bwd_nf_dkv_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L, const BwdMend M)
{
    if (*M.flag == 0u)
        return;
    __shared__ float s_k[kWarps][kFixMaxD], s_v[kWarps][kFixMaxD], s_dk[kWarps][kFixMaxD], s_dv[kWarps][kFixMaxD];
    const int nkv = (int)p.Nkv;
    const int2 item = M.kv_items[blockIdx.x / nkv];
    const int64_t b = item.x, n2 = blockIdx.x % nkv;
    const fc_batch &bt = p.batch[b];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t j0 = (int64_t)item.y * M.kv_tile, jz = j0 + M.kv_tile < bt.kv_rows ? j0 + M.kv_tile : bt.kv_rows;
    const int64_t jl = jz < bt.skv ? jz : bt.skv; /* rows with keys */
    int64_t lo, hi;
    met_rows(bt, j0, jl, lo, hi);
    /* Affected: a bad row among those met hides one of the tile's rows (below kv_rows). */
    bool hit = false;
    for (int64_t n1 = n2 * p.G; n1 < (n2 + 1) * p.G; n1++)
        for (int64_t i = lo + tid; !hit && i < hi; i += kThreads) {
            if (!M.q_bad[n1 * L.rows + L.row0[b] + i])
                continue;
            RowFacts f;
            row_facts(p, L, bt, b, n1, i, 0, 0, f);
            for (int64_t j = j0; !hit && j < jz; j++)
                hit = !sees(p, bt, n1, f.span, i, (int)j);
        }
    if (!__syncthreads_or(hit))
        return;
    const int dqk = (int)(p.Dqk + p.Dr), dv = (int)p.Dv;
    int64_t ilo = 0, ihi = 0; /* the rows that see any of the tile */
    if (j0 < jl)
        fc_col_rows(&bt, j0, jl, &ilo, &ihi);
    for (int64_t j = j0 + warp; j < jz; j += kWarps) {
        float *k = s_k[warp], *v = s_v[warp], *gk = s_dk[warp], *gv = s_dv[warp];
        for (int e = lane; e < kFixMaxD; e += 32) {
            k[e] = j < bt.skv && e < dqk ? joint_at(p, p.k, p.k_rope, b, bt.kv_tok, n2, j, e) : 0.0f;
            v[e] = j < bt.skv && e < dv ? plain_at(p.v, b, bt.kv_tok, n2, j, e) : 0.0f;
            gk[e] = gv[e] = 0.0f;
        }
        __syncwarp();
        for (int64_t n1 = n2 * p.G; j < bt.skv && n1 < (n2 + 1) * p.G; n1++)
            for (int64_t i = ilo; i < ihi; i++) {
                RowFacts f;
                row_facts(p, L, bt, b, n1, i, 0, 0, f);
                if (!sees(p, bt, n1, f.span, i, (int)j))
                    continue; /* a hidden pair: not in the arithmetic at all */
                float s = 0.0f, dp = 0.0f;
                for (int e = lane; e < dqk; e += 32)
                    s = fmaf(joint_at(p, p.q, p.q_rope, b, bt.q_tok, n1, i, e), k[e], s);
                for (int e = lane; e < dv; e += 32)
                    dp = fmaf(plain_at(p.dout, b, bt.q_tok, n1, i, e), v[e], dp);
                s = warp_sum(s), dp = warp_sum(dp);
                fix_grad(p, bt, n1, i, (int)j, f, s, dp); /* s: Pd, dp: dS */
                for (int e = lane; e < dv; e += 32)
                    gv[e] = fmaf(s, plain_at(p.dout, b, bt.q_tok, n1, i, e), gv[e]);
                for (int e = lane; e < dqk; e += 32)
                    gk[e] = fmaf(dp, joint_at(p, p.q, p.q_rope, b, bt.q_tok, n1, i, e), gk[e]);
            }
        for (int e = lane; e < dqk; e += 32)
            joint_store(p, p.dk, p.dk_rope, b, bt.kv_tok, n2, j, e, gk[e] * p.scale);
        const int64_t es = fc_dtype_bytes(p.dv.dtype);
        for (int e = lane; e < dv; e += 32)
            store_any(fc_view_row(&p.dv, es, b, bt.kv_tok, n2, j) + e * p.dv.se * es, p.dv.dtype, gv[e]);
        __syncwarp();
    }
}

/* dQ of one query tile again (L.items × Nq, kBwdQRows rows; the fused and sm_90a paths), where a
 * bad key that the products meet with one of its rows is hidden from that row. */
__global__ void __launch_bounds__(kThreads) bwd_nf_dq_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L, const BwdMend M)
{
    if (*M.flag == 0u)
        return;
    __shared__ float s_q[kWarps][kFixMaxD], s_o[kWarps][kFixMaxD], s_dq[kWarps][kFixMaxD];
    const int nq = (int)p.Nq;
    const int2 item = L.items[blockIdx.x / nq];
    const int64_t b = item.x, n1 = blockIdx.x % nq, n2 = n1 / p.G;
    const fc_batch &bt = p.batch[b];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t m0 = (int64_t)item.y * kBwdQRows, mz = m0 + kBwdQRows < bt.q_rows ? m0 + kBwdQRows : bt.q_rows;
    bool hit = false;
    for (int j = tid; !hit && j < bt.skv; j += kThreads) { /* (kv rows fit an int: the tile lists count them so) */
        if (!M.k_bad[n2 * M.krows + M.krow0[b] + j])
            continue;
        const int64_t t0 = j / M.kv_tile * M.kv_tile, t1 = t0 + M.kv_tile < bt.skv ? t0 + M.kv_tile : bt.skv;
        int64_t lo, hi;
        met_rows(bt, t0, t1, lo, hi);
        lo = lo > m0 ? lo : m0, hi = hi < mz ? hi : mz;
        for (int64_t i = lo; !hit && i < hi; i++) {
            RowFacts f;
            row_facts(p, L, bt, b, n1, i, 0, 0, f);
            hit = !sees(p, bt, n1, f.span, i, (int)j);
        }
    }
    if (!__syncthreads_or(hit))
        return;
    const int dqk = (int)(p.Dqk + p.Dr), dv = (int)p.Dv;
    for (int64_t i = m0 + warp; i < mz; i += kWarps) {
        float *q = s_q[warp], *o = s_o[warp], *g = s_dq[warp];
        for (int e = lane; e < kFixMaxD; e += 32) {
            q[e] = i < bt.sq && e < dqk ? joint_at(p, p.q, p.q_rope, b, bt.q_tok, n1, i, e) : 0.0f;
            o[e] = i < bt.sq && e < dv ? plain_at(p.dout, b, bt.q_tok, n1, i, e) : 0.0f;
            g[e] = 0.0f;
        }
        __syncwarp();
        RowFacts f;
        row_facts(p, L, bt, b, n1, i, 0, 0, f);
        const int4 sp = f.span; /* the columns of both spans, each checked (a gap between them, the mask) */
        const int ja = sp.x < sp.y && (sp.z >= sp.w || sp.x < sp.z) ? sp.x : sp.z, jz = sp.y > sp.w ? sp.y : sp.w;
        for (int j = ja; j < jz; j++) {
            if (!sees(p, bt, n1, sp, i, j))
                continue;
            float s = 0.0f, dp = 0.0f;
            for (int e = lane; e < dqk; e += 32)
                s = fmaf(q[e], joint_at(p, p.k, p.k_rope, b, bt.kv_tok, n2, j, e), s);
            for (int e = lane; e < dv; e += 32)
                dp = fmaf(o[e], plain_at(p.v, b, bt.kv_tok, n2, j, e), dp);
            s = warp_sum(s), dp = warp_sum(dp);
            fix_grad(p, bt, n1, i, j, f, s, dp); /* dp: dS */
            for (int e = lane; e < dqk; e += 32)
                g[e] = fmaf(dp, joint_at(p, p.k, p.k_rope, b, bt.kv_tok, n2, j, e), g[e]);
        }
        for (int e = lane; e < dqk; e += 32)
            joint_store(p, p.dq, p.dq_rope, b, bt.q_tok, n1, i, e, g[e] * p.scale);
        __syncwarp();
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_BACKWARD_FIXUP_CUH */
