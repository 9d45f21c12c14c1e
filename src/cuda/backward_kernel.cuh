/*
 * The dK/dV kernel of the backward (FlashAttention-2 structure on mma.sync): one CTA = one kv
 * head × one tile of BN = 64 key/value rows of one batch × one part of the features (heads above
 * 128 features split the accumulators over `parts` CTAs, each recomputing the scores).  4 warps,
 * each owning 16 kv rows.  K and V stay in shared memory; the query heads of the group, then the
 * query tiles of BMQ rows that may see the tile (visibility.h), stream through a double buffer
 * (Q, dO and the rows' facts, cp.async).  Per step, transposed so that every product keeps its
 * operand in registers:
 *     Sᵀ = K·Qᵀ,  dPᵀ = V·dOᵀ,  (Pd, dS) per element (backward_common.cuh),
 *     dV += Pdᵀ·dO,  dK += dSᵀ·Q
 * The group's heads and the query tiles are summed in one fixed order inside the CTA, so dK and dV
 * are bitwise repeatable (no atomics).
 */
#ifndef FC_CUDA_BACKWARD_KERNEL_CUH
#define FC_CUDA_BACKWARD_KERNEL_CUH

#include "backward_common.cuh"

namespace fc_cuda {

constexpr int kBwdKvRows = 16 * kWarps; /* BN of the dK/dV kernel */

template <int D, int BMQ> struct BwdKvSmem {
    static constexpr size_t kv = (size_t)kBwdKvRows * D * 2, q = (size_t)BMQ * D * 2;
    static constexpr size_t facts = 2 * BMQ * sizeof(RowFacts);
    static constexpr size_t bytes = 2 * kv + 4 * q + facts;
    static constexpr size_t scratch = 2 * (size_t)kBwdKvRows * (BMQ + 8) * sizeof(float); /* + with L.terms */
};

/* D: the feature class (Dqk, Dv ≤ D); DC: the features of dK/dV one CTA accumulates. */
template <typename T, int D, int DC, int BMQ>
__global__ void __launch_bounds__(kThreads) bwd_dkv_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    constexpr int BN = kBwdKvRows, NQ = BMQ / 8, DT = DC / 8;
    using Smem = BwdKvSmem<D, BMQ>;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sK = reinterpret_cast<T *>(smem_raw), *sV = reinterpret_cast<T *>(smem_raw + Smem::kv);
    T *sQ = reinterpret_cast<T *>(smem_raw + 2 * Smem::kv), *sO = reinterpret_cast<T *>(smem_raw + 2 * Smem::kv + 2 * Smem::q);
    RowFacts *sF = reinterpret_cast<RowFacts *>(smem_raw + 2 * Smem::kv + 4 * Smem::q);
    float *sA = reinterpret_cast<float *>(smem_raw + Smem::bytes), *sB = sA + BN * (BMQ + 8);

    const int per_item = (int)p.Nkv * L.parts;
    const int2 item = L.items[blockIdx.x / per_item];
    const int64_t b = item.x, n2 = (blockIdx.x % per_item) / L.parts;
    const int part = blockIdx.x % L.parts, f0 = part * DC; /* first feature of this CTA's dK/dV */
    const fc_batch &bt = p.batch[b];
    const int j0 = item.y * BN, live = clamp_rows(BN, bt.skv - j0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

    int64_t i_lo = 0, i_hi = 0;
    if (live > 0)
        fc_col_rows(&bt, j0, j0 + live, &i_lo, &i_hi);
    const int n_qt = (int)((i_hi - i_lo + BMQ - 1) / BMQ), n_steps = n_qt * (int)p.G;

    /* Step s: query head n2·G + s / n_qt, rows from i_lo + (s mod n_qt)·BMQ, into buffer c. */
    auto load_step = [&](int s, int c) {
        const int64_t n1 = n2 * p.G + s / n_qt, i0 = i_lo + (int64_t)(s % n_qt) * BMQ;
        const int valid = clamp_rows(BMQ, bt.sq - i0);
        load_tile<T, D, BMQ>(sQ + c * BMQ * D, p.q, fc_view_row(&p.q, 2, b, bt.q_tok, n1, 0), i0, valid, (int)p.Dqk, L.vec_q);
        load_tile<T, D, BMQ>(sO + c * BMQ * D, p.dout, fc_view_row(&p.dout, 2, b, bt.q_tok, n1, 0), i0, valid, (int)p.Dv,
                             L.vec_do);
        if (tid < BMQ)
            row_facts(p, L, bt, b, n1, i0 + tid, j0, j0 + BN, sF[c * BMQ + tid]);
    };

    float dk[DT][4], dv[DT][4];
#pragma unroll
    for (int d = 0; d < DT; d++)
#pragma unroll
        for (int x = 0; x < 4; x++)
            dk[d][x] = dv[d][x] = 0.0f;

    if (n_steps > 0) {
        load_tile<T, D, BN>(sK, p.k, fc_view_row(&p.k, 2, b, bt.kv_tok, n2, 0), j0, live, (int)p.Dqk, L.vec_k);
        load_tile<T, D, BN>(sV, p.v, fc_view_row(&p.v, 2, b, bt.kv_tok, n2, 0), j0, live, (int)p.Dv, L.vec_v);
        load_step(0, 0);
    }
    cp_async_commit();

    for (int s = 0, c = 0; s < n_steps; s++, c ^= 1) {
        cp_async_wait_all();
        /* Q, dO (and K, V) of step s arrived; every warp is done with buffer c ^ 1 */
        const bool full = __syncthreads_and(tid >= BMQ || sF[c * BMQ + tid].cover);
        if (s + 1 < n_steps)
            load_step(s + 1, c ^ 1);
        cp_async_commit();
        const T *q = sQ + c * BMQ * D, *o = sO + c * BMQ * D;
        const RowFacts *F = sF + c * BMQ;
        const int64_t n1 = n2 * p.G + s / n_qt, i0 = i_lo + (int64_t)(s % n_qt) * BMQ;

        /* Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ: rows = this warp's 16 kv rows, columns = the BMQ query rows. */
        float st[NQ][4], dp[NQ][4];
        tile_abt<T, D, NQ>(st, sK, q, warp, lane);
        tile_abt<T, D, NQ>(dp, sV, o, warp, lane);

        /* Pd into st, dS into dp: tile element (kv row r, query column x). */
        grad_tile<NQ>(p, bt, L, n1, full, st, dp, sA, sB, warp, lane,
                      [&](int r, int x, int64_t &i, int &j, const RowFacts *&f) { i = i0 + x, j = j0 + r, f = F + x; });

        /* dV += Pdᵀ·dO and dK += dSᵀ·Q over this CTA's features. */
        tile_acc_ab<T, D, BMQ, DT>(dv, st, o, f0 / 8, lane);
        tile_acc_ab<T, D, BMQ, DT>(dk, dp, q, f0 / 8, lane);
    }
    cp_async_wait_all();

    /* Every kv row of the tile below kv_rows is written (rows no query sees: zeros). */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int64_t j = j0 + warp * 16 + lane / 4 + 8 * h;
        if (j >= bt.kv_rows)
            continue;
        store_grad_row<DT>(fc_view_row(&p.dk, fc_dtype_bytes(p.dk.dtype), b, bt.kv_tok, n2, j), p.dk, p.Dqk, f0, dk, h, lane,
                           p.scale);
        store_grad_row<DT>(fc_view_row(&p.dv, fc_dtype_bytes(p.dv.dtype), b, bt.kv_tok, n2, j), p.dv, p.Dv, f0, dv, h, lane,
                           1.0f);
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_BACKWARD_KERNEL_CUH */
