/*
 * The sparse backward's non-finite mend (semantics §0.3; the dense one is backward_fixup.cuh).
 * sparse_dkv_kernel multiplies every pair of a block's bucket by every key of the block, a key
 * past the pair's token's causal cut by its 0, so an inf or NaN in that token's query or d_out
 * row reached dK and dV of keys it does not see (0·inf = NaN).  dQ has no such pair: the G query
 * heads of a token share the token's selected positions.  So, around the run:
 *   1. sfag_nf_scan_kernel: one byte per (query head, row) whose query or d_out holds an inf or
 *      NaN, and a flag for the run when any does;
 *   2. sfag_nf_dkv_kernel (after the dK/dV kernel): per block and kv head, when the flag is set
 *      and a bad pair of the block's bucket is cut off before the block's last row, dK and dV of
 *      the whole block again on CUDA cores — a warp per key, the bucket's pairs in its order (the
 *      kernel's), the pairs that see the key only, from the dQ kernel's row facts.
 * Without an inf or NaN the second kernel returns at its first load.
 */
#ifndef FC_CUDA_SPARSE_FIXUP_CUH
#define FC_CUDA_SPARSE_FIXUP_CUH

#include "nonfinite.cuh"
#include "rope_split.h"
#include "sparse_bwd_kernel.cuh"

namespace fc_cuda {

/* The mend's state in the workspace. */
struct SfagMend {
    unsigned *flag;       /* set when a query or d_out row holds an inf or NaN */
    unsigned char *q_bad; /* per (n1, problem row r): 1 when bad, at q_bad[n1·L.rows + r] */
    int64_t rows;         /* the run's problem rows (fc_sfa_rows) */
};

constexpr int kSfagFixMaxK = FC_SFA_MLA_DK, kSfagFixMaxV = 512; /* Dqk + Dr and Dv of every sparse class */

/* Feature f of a row with rope features after the first dqk (rope_split.h's joint row; the main
 * part at row, the rope part at rope; null rows: zeros). */
__device__ __forceinline__ float sfag_joint_at(const char *row, const char *rope, const fc_view &v, const fc_view &vr, int dqk, int dr, int f)
{
    int64_t off;
    const fc_view *w = fc_rope_elem(&v, &vr, dqk, dr, f, &off);
    const char *at = w == &v ? row : rope;
    return at ? load_any(at + off, w->dtype) : 0.0f;
}

/* The bytes of rows [0, M.rows) × every query head: a warp per row (kWarps rows per CTA). */
__global__ void __launch_bounds__(kThreads) sfag_nf_scan_kernel(const __grid_constant__ fc_problem p, const SfagLaunch L,
                                                                 const SfagMend M)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t r = (int64_t)blockIdx.x * kWarps + warp;
    if (r >= M.rows)
        return;
    int64_t b, i;
    fc_sfa_token(p.batch, p.B, r, &b, &i);
    const fc_batch &bt = p.batch[b];
    for (int64_t n1 = 0; n1 < p.Nq; n1++) {
        bool bad = false;
        if (i < bt.sq) {
            bad = row_has_nonfinite(sfag_query_row(p.q, b, bt.q_tok, n1, i), p.q, p.Dqk, lane) ||
                  row_has_nonfinite(sfag_query_row(p.dout, b, bt.q_tok, n1, i), p.dout, p.Dv, lane) ||
                  (p.Dr > 0 && row_has_nonfinite(sfag_query_row(p.q_rope, b, bt.q_tok, n1, i), p.q_rope, p.Dr, lane));
        }
        if (lane == 0) {
            M.q_bad[n1 * L.rows + r] = bad;
            if (bad)
                *M.flag = 1u; /* every writer writes 1 */
        }
    }
}

/* dK and dV of one selection block × kv head (grid: the run's blocks × Nkv) again, where a bad
 * pair of its bucket is cut off before the block's last written row. */
__global__ void __launch_bounds__(kThreads) sfag_nf_dkv_kernel(const __grid_constant__ fc_problem p, const SfagLaunch L,
                                                                const SfagMend M)
{
    if (*M.flag == 0u)
        return;
    __shared__ float s_k[kWarps][kSfagFixMaxK], s_v[kWarps][kSfagFixMaxV], s_dk[kWarps][kSfagFixMaxK], s_dv[kWarps][kSfagFixMaxV];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t g = blockIdx.x, n2 = blockIdx.y;
    const int64_t b = fc_sfag_block_batch(L.X.blk0, p.B, g);
    const fc_batch &bt = p.batch[b];
    const int64_t bs = p.sparse.block_size, kb = g - L.X.blk0[b];
    if (kb >= L.X.blk0[b + 1] - L.X.blk0[b])
        return;
    const int64_t j0 = kb * bs, jz = j0 + bs < bt.kv_rows ? j0 + bs : bt.kv_rows; /* the rows the kernel writes */
    const int32_t e0 = L.X.start[n2 * L.X.nb + g], entries = L.X.start[n2 * L.X.nb + g + 1] - e0;
    const int G = (int)p.G;
    bool hit = false;
    for (int64_t t = tid; !hit && t < (int64_t)entries * G; t += kThreads) {
        const int64_t r = L.X.list[e0 + t / G], n1 = n2 * G + t % G;
        hit = M.q_bad[n1 * L.rows + r] && fc_sparse_threshold(&p.sparse, &bt, r - bt.stat_row0) < jz;
    }
    if (!__syncthreads_or(hit))
        return;
    const int dqk = (int)p.Dqk, dr = (int)p.Dr, dk_all = dqk + dr, dv = (int)p.Dv;
    const float scale = p.scale;
    for (int64_t j = j0 + warp; j < jz; j += kWarps) {
        float *k = s_k[warp], *v = s_v[warp], *gk = s_dk[warp], *gv = s_dv[warp];
        const bool in = j < bt.skv;
        const char *krow = in ? sfa_kv_row(p.k, b, bt.kv_tok, n2, j) : nullptr, *vrow = in ? sfa_kv_row(p.v, b, bt.kv_tok, n2, j) : nullptr;
        const char *krope = in && p.Dr > 0 ? sfa_kv_row(p.k_rope, b, bt.kv_tok, n2, j) : nullptr;
        for (int e = lane; e < kSfagFixMaxK; e += 32) {
            k[e] = e < dk_all ? sfag_joint_at(krow, krope, p.k, p.k_rope, dqk, dr, e) : 0.0f;
            gk[e] = 0.0f;
        }
        for (int e = lane; e < kSfagFixMaxV; e += 32) {
            v[e] = e < dv && vrow ? load_any(vrow + (int64_t)e * p.v.se * 2, p.v.dtype) : 0.0f;
            gv[e] = 0.0f;
        }
        __syncwarp();
        for (int64_t t = 0; t < (int64_t)entries * G; t++) {
            const int64_t r = L.X.list[e0 + t / G], n1 = n2 * G + t % G, i = r - bt.stat_row0;
            if (j >= fc_sparse_threshold(&p.sparse, &bt, i))
                continue; /* past the token's cut: not in the arithmetic at all */
            const char *q = sfag_query_row(p.q, b, bt.q_tok, n1, i), *o = sfag_query_row(p.dout, b, bt.q_tok, n1, i);
            const char *qr = p.Dr > 0 ? sfag_query_row(p.q_rope, b, bt.q_tok, n1, i) : nullptr;
            float s = 0.0f, dp = 0.0f;
            for (int e = lane; e < dk_all; e += 32)
                s = fmaf(sfag_joint_at(q, qr, p.q, p.q_rope, dqk, dr, e), k[e], s);
            for (int e = lane; e < dv; e += 32)
                dp = fmaf(load_any(o + (int64_t)e * p.dout.se * 2, p.dout.dtype), v[e], dp);
            s = warp_sum(s), dp = warp_sum(dp);
            const float *rf = L.rowf + (n1 * L.rows + r) * 4; /* m·log2 e, 1/l, D */
            const float P = fast_exp2(fmaf(s * scale, kLog2e, -rf[0])) * rf[1], dS = P * (dp - rf[2]);
            for (int e = lane; e < dv; e += 32)
                gv[e] = fmaf(P, load_any(o + (int64_t)e * p.dout.se * 2, p.dout.dtype), gv[e]);
            for (int e = lane; e < dk_all; e += 32)
                gk[e] = fmaf(dS, sfag_joint_at(q, qr, p.q, p.q_rope, dqk, dr, e), gk[e]);
        }
        char *dkrow = fc_view_row(&p.dk, 2, b, bt.kv_tok, n2, j), *dvrow = fc_view_row(&p.dv, 2, b, bt.kv_tok, n2, j);
        char *dkrope = p.Dr > 0 ? fc_view_row(&p.dk_rope, 2, b, bt.kv_tok, n2, j) : nullptr;
        for (int e = lane; e < dk_all; e += 32) {
            int64_t off;
            const fc_view *w = fc_rope_elem(&p.dk, &p.dk_rope, dqk, dr, e, &off);
            store_any((w == &p.dk ? dkrow : dkrope) + off, w->dtype, gk[e] * scale);
        }
        for (int e = lane; e < dv; e += 32)
            store_any(dvrow + (int64_t)e * p.dv.se * 2, p.dv.dtype, gv[e]);
        __syncwarp();
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_SPARSE_FIXUP_CUH */
