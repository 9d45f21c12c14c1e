/*
 * The dQ kernel of the backward: one CTA = one query head × one tile of BM = 64 query rows of one
 * batch (4 warps of 16 rows), walking the kv tiles its rows see as the forward does (tiles no row
 * sees are never loaded), K and V double-buffered through cp.async.  Per kv tile:
 *     S = Q·Kᵀ,  dP = dO·Vᵀ,  dS per element (backward_common.cuh),  dQ += dS·K
 * recomputing the scores rather than sharing them with the dK/dV kernel, so that every dQ row has
 * one owner that sums its kv tiles in order: bitwise repeatable, no atomics, no O(S²) workspace.
 */
#ifndef FC_CUDA_BACKWARD_DQ_KERNEL_CUH
#define FC_CUDA_BACKWARD_DQ_KERNEL_CUH

#include "backward_common.cuh"

namespace fc_cuda {

constexpr int kBwdQRows = 16 * kWarps; /* BM of the dQ kernel */

/* ES: bytes per tile element (2; 4 for kFeatF32's fp32 tiles). */
template <int D, int BN, int ES = 2> struct BwdQSmem {
    static constexpr size_t q = (size_t)kBwdQRows * D * ES, kv = (size_t)BN * D * ES;
    static constexpr size_t facts = kBwdQRows * sizeof(RowFacts);
    static constexpr size_t bytes = 2 * q + 4 * kv + facts;
    static constexpr size_t scratch = 2 * (size_t)kBwdQRows * (BN + 8) * sizeof(float); /* + with L.terms */
};

template <typename T, int D, int BN, int FEAT>
__device__ __forceinline__ void dq_tile(const fc_problem &p, const BwdLaunch &L)
{
    constexpr int BM = kBwdQRows, NT = BN / 8, DT = D / 8;
    constexpr bool F32 = (FEAT & kFeatF32) != 0; /* fp32 tiles, 3×TF32 (the scratch tiles always there) */
    static_assert(F32 == (sizeof(T) == 4) && !(F32 && (FEAT & kFeatRope)), "fp32 tiles: the kFeatF32 dQ kernel");
    using Smem = BwdQSmem<D, BN, (int)sizeof(T)>;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw), *sO = reinterpret_cast<T *>(smem_raw + Smem::q);
    T *sK = reinterpret_cast<T *>(smem_raw + 2 * Smem::q), *sV = reinterpret_cast<T *>(smem_raw + 2 * Smem::q + 2 * Smem::kv);
    RowFacts *sF = reinterpret_cast<RowFacts *>(smem_raw + 2 * Smem::q + 4 * Smem::kv);
    float *sA = reinterpret_cast<float *>(smem_raw + Smem::bytes), *sB = sA + BM * (BN + 8);
    __shared__ int s_kv_lo, s_kv_hi;
    __shared__ uint32_t s_terms[BM * D / 16]; /* what K's inf and NaN give the rows that see them (nonfinite.cuh) */
    __shared__ int s_terms_live;

    const int nq = (int)p.Nq, g = (int)p.G; /* 32-bit index math: the grid fits an int */
    const int2 item = L.items[blockIdx.x / nq];
    const int64_t b = item.x, n1 = blockIdx.x % nq, n2 = (int)n1 / g;
    const fc_batch &bt = p.batch[b];
    const int m0 = item.y * BM, rows_here = clamp_rows(BM, bt.q_rows - m0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

    if (tid == 0) {
        s_kv_lo = INT_MAX, s_kv_hi = 0, s_terms_live = 0;
    }
    clear_table(s_terms, BM * D / 16, tid, kThreads);
    __syncthreads();
    if (tid < BM) {
        row_facts(p, L, bt, b, n1, m0 + tid, 0, 0, sF[tid]);
        const int4 sp = sF[tid].span;
        if (sp.x < sp.y || sp.z < sp.w) {
            atomicMin(&s_kv_lo, sp.y > sp.x ? sp.x : sp.z);
            atomicMax(&s_kv_hi, sp.w > sp.z ? sp.w : sp.y);
        }
    }
    const int q_valid = clamp_rows(BM, bt.sq - m0);
    load_qk<FEAT, T, D, BM>(sQ, p, p.q, fc_view_row(&p.q, ebytes<FEAT>(p.q), b, bt.q_tok, n1, 0), p.q_rope, b, bt.q_tok, n1, m0,
                            q_valid, L.vec_q);
    load_rows<FEAT, T, D, BM>(sO, p.dout, fc_view_row(&p.dout, ebytes<FEAT>(p.dout), b, bt.q_tok, n1, 0), m0, q_valid, (int)p.Dv,
                              L.vec_do);
    __syncthreads();
    const int kv_lo = s_kv_lo, kv_hi = s_kv_hi;

    auto touches = [&](int t) { /* some live row sees a column of tile t */
        const int4 s = sF[tid].span;
        const int a = t * BN, z = a + BN;
        return (s.x < z && a < s.y) || (s.z < z && a < s.w);
    };
    auto covers = [&](int t) { /* this row sees every column of tile t, or is not live */
        const int4 s = sF[tid].span;
        const int a = t * BN, z = a + BN;
        return m0 + tid >= bt.sq || (s.x <= a && z <= s.y) || (s.z <= a && z <= s.w);
    };
    const int t_end = kv_lo < kv_hi ? (kv_hi + BN - 1) / BN : 0;
    auto next_tile = [&](int t) {
        while (t < t_end && !__syncthreads_or(tid < BM && touches(t)))
            t++;
        return t;
    };
    const char *k_row0 = fc_view_row(&p.k, ebytes<FEAT>(p.k), b, bt.kv_tok, n2, 0),
               *v_row0 = fc_view_row(&p.v, ebytes<FEAT>(p.v), b, bt.kv_tok, n2, 0);
    auto load_kv = [&](int t, int c) {
        const int valid = clamp_rows(BN, bt.skv - (int64_t)t * BN);
        load_qk<FEAT, T, D, BN>(sK + c * BN * D, p, p.k, k_row0, p.k_rope, b, bt.kv_tok, n2, (int64_t)t * BN, valid, L.vec_k);
        load_rows<FEAT, T, D, BN>(sV + c * BN * D, p.v, v_row0, (int64_t)t * BN, valid, (int)p.Dv, L.vec_v);
    };

    float dq[DT][4];
#pragma unroll
    for (int d = 0; d < DT; d++)
        dq[d][0] = dq[d][1] = dq[d][2] = dq[d][3] = 0.0f;

    int t = next_tile(kv_lo / BN);
    if (t < t_end)
        load_kv(t, 0);
    cp_async_commit();
    for (int c = 0; t < t_end; c ^= 1) {
        cp_async_wait_all();
        /* K, V of tile t (and Q, dO) arrived; every warp is done with buffer c ^ 1 */
        const bool full = __syncthreads_and(tid >= BM || covers(t));
        /* a tile that hides pairs: K's inf and NaN, recorded here for the rows that see them, are
         * kept out of dQ's product (zeros after S) */
        const bool nf = (!full || p.mask.data) && __syncthreads_or(tile_nonfinite<T, D, BN, kThreads>(sK + c * BN * D, tid));
        if (nf) {
            poison_record<T, D, BN, kThreads>(sK + c * BN * D, s_terms, BM, tid,
                                                    [&](int r, int x) { return sees(p, bt, n1, sF[r].span, m0 + r, t * BN + x); });
            if (tid == 0)
                s_terms_live = 1;
        }
        const int t_next = next_tile(t + 1);
        if (t_next < t_end)
            load_kv(t_next, c ^ 1);
        cp_async_commit();
        const T *k = sK + c * BN * D, *v = sV + c * BN * D;
        const int j0 = t * BN;

        /* S = Q·Kᵀ and dP = dO·Vᵀ: rows = this warp's 16 query rows, columns = the BN kv rows. */
        float s[NT][4], dp[NT][4];
        tile_abt<T, D, NT>(s, sQ, k, warp, lane);
        tile_abt<T, D, NT>(dp, sO, v, warp, lane);

        /* dS into dp: tile element (query row r, kv column x). */
        grad_tile<NT, FEAT>(p, bt, L, n1, full, s, dp, sA, sB, warp, lane,
                      [&](int r, int x, int64_t &i, int &j, const RowFacts *&f) { i = m0 + r, j = j0 + x, f = sF + r; });

        /* dQ += dS·K */
        if (nf) {
            __syncthreads(); /* every warp done with K's values */
            zero_nonfinite<T, D, BN, kThreads>(sK + c * BN * D, tid);
            __syncthreads();
        }
        if constexpr (F32)
            tile_acc_ab_f32<D, BN, DT>(dq, dp, sA, k, 0, warp, lane);
        else
            tile_acc_ab<T, D, BN, DT>(dq, dp, k, 0, lane);
        t = t_next;
    }
    cp_async_wait_all();
    if (s_terms_live) /* (written before the last cold block's barrier) */
        add_recorded<D>(dq, s_terms, warp * 16, 0, lane);

#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = warp * 16 + lane / 4 + 8 * h;
        if (r < rows_here) {
            if constexpr ((FEAT & kFeatRope) != 0)
                store_rope_grad_row<T, DT>(p, p.dq, p.dq_rope, b, bt.q_tok, n1, m0 + r, 0, dq, h, lane, p.scale);
            else
                store_grad_row<DT>(fc_view_row(&p.dq, fc_dtype_bytes(p.dq.dtype), b, bt.q_tok, n1, m0 + r), p.dq, p.Dqk, 0, dq, h,
                                   lane, p.scale);
        }
    }
}

template <typename T, int D, int BN>
__global__ void __launch_bounds__(kThreads) bwd_dq_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    dq_tile<T, D, BN, 0>(p, L);
}

/* The same with the features FEAT (kFeat*; the plain kernel above keeps its code). */
template <typename T, int D, int BN, int FEAT>
__global__ void __launch_bounds__(kThreads) bwd_dq_feat_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    dq_tile<T, D, BN, FEAT>(p, L);
}

} // namespace fc_cuda

#endif /* FC_CUDA_BACKWARD_DQ_KERNEL_CUH */
