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

#include "backward_dq.cuh"

namespace fc_cuda {

constexpr int kBwdKvRows = 16 * kWarps; /* BN of the dK/dV kernel */

/* ES: bytes per tile element (2; 4 for kFeatF32's fp32 tiles). */
template <int D, int BMQ, int ES = 2> struct BwdKvSmem {
    static constexpr size_t kv = (size_t)kBwdKvRows * D * ES, q = (size_t)BMQ * D * ES;
    static constexpr size_t facts = 2 * BMQ * sizeof(RowFacts);
    static constexpr size_t bytes = 2 * kv + 4 * q + facts;
    static constexpr size_t scratch = 2 * (size_t)kBwdKvRows * (BMQ + 8) * sizeof(float); /* + with L.terms */
};

/* One unit of dK/dV work: kv tile (item u / (Nkv·parts)), kv head, feature part.  D: the
 * feature class (Dqk, Dv ≤ D); DC: the features of dK/dV (and, FUSED, of dQ) one unit
 * accumulates.  FUSED: the query tiles are whole tiles of BMQ rows (dq_order.h), and each step
 * also adds its dQ partial in turn (backward_dq.cuh); else they start at the first row that may
 * see the tile, and dQ is the dQ kernel's.  FEAT: features.cuh's (kFeatF32: T = float tiles,
 * every product 3×TF32 through the scratch tiles, which such a launch always has; not FUSED). */
template <typename T, int D, int DC, int BMQ, bool FUSED, int FEAT = 0>
__device__ __forceinline__ void dkv_unit(const fc_problem &p, const BwdLaunch &L, unsigned u, unsigned char *smem_raw,
                                         fc_batch *s_bt = nullptr, int64_t *s_arow0 = nullptr)
{
    constexpr int BN = kBwdKvRows, NQ = BMQ / 8, DT = DC / 8;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    constexpr int kAbtUnroll = FUSED ? 4 : 8; /* sm_80: the fused kernel fits 255 registers with half the unroll */
#else
    constexpr int kAbtUnroll = 8;
#endif
    constexpr bool F32 = (FEAT & kFeatF32) != 0;
    static_assert(F32 == (sizeof(T) == 4) && !(F32 && (FUSED || (FEAT & kFeatRope))), "fp32 tiles: the kFeatF32 dK/dV kernel");
    using Smem = BwdKvSmem<D, BMQ, (int)sizeof(T)>;
    using DqSmem = BwdDqSmem<BN, BMQ, DC>;
    using Split = DqSplit<BMQ, DC>;
    T *sK = reinterpret_cast<T *>(smem_raw), *sV = reinterpret_cast<T *>(smem_raw + Smem::kv);
    T *sQ = reinterpret_cast<T *>(smem_raw + 2 * Smem::kv), *sO = reinterpret_cast<T *>(smem_raw + 2 * Smem::kv + 2 * Smem::q);
    RowFacts *sF = reinterpret_cast<RowFacts *>(smem_raw + 2 * Smem::kv + 4 * Smem::q);
    unsigned char *dq_smem = smem_raw + Smem::bytes; /* FUSED: the dQ stage, then (L.terms) the scratch */
    float *sA = reinterpret_cast<float *>(dq_smem + (FUSED ? DqSmem::bytes : 0)), *sB = sA + BN * (BMQ + 8);
    T *sdS = reinterpret_cast<T *>(dq_smem);
    float *sPart = reinterpret_cast<float *>(dq_smem + DqSmem::ds), *sAcc = sPart + BMQ * DqSmem::ldp;

    const unsigned per_item = (unsigned)(p.Nkv * L.parts);
    const int2 item = L.items[u / per_item];
    const int64_t b = item.x, n2 = (u % per_item) / L.parts;
    const int part = u % L.parts, f0 = part * DC; /* first feature of this unit's dK/dV (and dQ) */
    /* FUSED: the batch's facts in shared memory (s_bt, s_arow0: fused_units'), once per unit — its
     * per-step fences invalidate L1 (CCTL.IVALL), after which every look at p.batch[b] or
     * L.arow0[b] went to L2 again, some of them in chains (the row facts' offsets, the turn
     * search).  A barrier orders the copy before every use; fused_units' barrier after a unit
     * orders the previous unit's uses before it. */
    if (FUSED) {
        if (threadIdx.x == 0)
            *s_bt = p.batch[b], *s_arow0 = L.arow0[b];
        __syncthreads();
    }
    const fc_batch &bt = FUSED ? *s_bt : p.batch[b];
    const int j0 = item.y * BN, live = clamp_rows(BN, bt.skv - j0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

    int64_t q_first = 0; /* the unit's query tiles: n_qt of BMQ rows each from q_first */
    int n_qt = 0;
    if (FUSED) {
        int64_t qa, qz;
        fc_dq_visits(&bt, item.y, BN, BMQ, &qa, &qz);
        q_first = qa * BMQ, n_qt = (int)(qz - qa);
    } else if (live > 0) {
        int64_t i_hi;
        fc_col_rows(&bt, j0, j0 + live, &q_first, &i_hi);
        n_qt = (int)((i_hi - q_first + BMQ - 1) / BMQ);
    }
    const int n_steps = n_qt * (int)p.G;

    /* Step s: query head n2·G + s / n_qt, rows from q_first + (s mod n_qt)·BMQ, into buffer c. */
    auto load_step = [&](int s, int c) {
        const int64_t n1 = n2 * p.G + s / n_qt, i0 = q_first + (int64_t)(s % n_qt) * BMQ;
        const int valid = clamp_rows(BMQ, bt.sq - i0);
        load_qk<FEAT, T, D, BMQ>(sQ + c * BMQ * D, p, p.q, fc_view_row(&p.q, ebytes<FEAT>(p.q), b, bt.q_tok, n1, 0), p.q_rope, b,
                                 bt.q_tok, n1, i0, valid, L.vec_q);
        load_rows<FEAT, T, D, BMQ>(sO + c * BMQ * D, p.dout, fc_view_row(&p.dout, ebytes<FEAT>(p.dout), b, bt.q_tok, n1, 0), i0,
                                   valid, (int)p.Dv, L.vec_do);
        if (tid < BMQ)
            row_facts(p, L, bt, b, n1, i0 + tid, j0, j0 + BN, sF[c * BMQ + tid]);
    };

    /* FUSED: step s's accumulator tile and turn counter; thread 0's turn search (dq_order.h). */
    auto acc_tile = [&](int s) {
        const int64_t n1 = n2 * p.G + s / n_qt, r = *s_arow0 + q_first + (int64_t)(s % n_qt) * BMQ;
        return L.dq_acc + (n1 * L.arows + r) * L.dq_ld + f0;
    };
    auto turn_ctr = [&](int s) {
        const int64_t n1 = n2 * p.G + s / n_qt, qt = (*s_arow0 + q_first) / BMQ + s % n_qt;
        return L.turns + (n1 * (L.arows / BMQ) + qt) * L.parts + part;
    };
    __shared__ int64_t s_P, s_A0, s_A; /* thread 0's turn search (in shared memory: no registers) */
    __shared__ unsigned s_turn, s_prev_turn;
    unsigned seen = 0;                  /* thread 0's first look at the counter */
    auto lean = [&] { return L.dq_sync == kDqSyncLean; }; /* read where used: no register held */
    if (FUSED && tid == 0 && n_qt > 0) {
        s_P = fc_dq_prefix_tiles(&bt, BN);
        s_A0 = item.y >= s_P ? fc_dq_first_sharer(&bt, s_P, item.y, q_first / BMQ, BN, BMQ) : 0;
    }

    float dk[DT][4], dv[DT][4];
#pragma unroll
    for (int d = 0; d < DT; d++)
#pragma unroll
        for (int x = 0; x < 4; x++)
            dk[d][x] = dv[d][x] = 0.0f;

    if (n_steps > 0) {
        load_qk<FEAT, T, D, BN>(sK, p, p.k, fc_view_row(&p.k, ebytes<FEAT>(p.k), b, bt.kv_tok, n2, 0), p.k_rope, b, bt.kv_tok, n2, j0,
                                live, L.vec_k);
        load_rows<FEAT, T, D, BN>(sV, p.v, fc_view_row(&p.v, ebytes<FEAT>(p.v), b, bt.kv_tok, n2, 0), j0, live, (int)p.Dv, L.vec_v);
        load_step(0, 0);
    }
    cp_async_commit();

    for (int s = 0, c = 0; s < n_steps; s++, c ^= 1) {
        cp_async_wait_all();
        /* Q, dO (and K, V) of step s arrived; every warp is done with buffer c ^ 1; FUSED: thread 0
         * acquired step s − 1's turn */
        const bool full = __syncthreads_and(tid >= BMQ || sF[c * BMQ + tid].cover);
        if (s + 1 < n_steps)
            load_step(s + 1, c ^ 1);
        if (FUSED && s > 0) /* the accumulator tile of step s − 1, behind this step's products */
            acc_load<BMQ, DC, DqSmem::ldp>(sAcc, acc_tile(s - 1), L.dq_ld, tid);
        cp_async_commit();
        if (FUSED && tid == 0) { /* step s's turn, and a first look at its counter */
            const int64_t qt = q_first / BMQ + s % n_qt, A = s % n_qt == 0 ? s_A0 : s_A;
            s_A = item.y >= s_P ? fc_dq_first_sharer(&bt, A, item.y, qt, BN, BMQ) : 0;
            s_turn = (unsigned)fc_dq_turn(item.y, s_P, s_A);
            seen = ld_relaxed_gpu(turn_ctr(s));
        }
        const T *q = sQ + c * BMQ * D, *o = sO + c * BMQ * D;
        const RowFacts *F = sF + c * BMQ;
        const int64_t n1 = n2 * p.G + s / n_qt, i0 = q_first + (int64_t)(s % n_qt) * BMQ;

        /* Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ: rows = this warp's 16 kv rows, columns = the BMQ query rows. */
        float st[NQ][4], dp[NQ][4];
        tile_abt<T, D, NQ, kAbtUnroll>(st, sK, q, warp, lane);
        tile_abt<T, D, NQ, kAbtUnroll>(dp, sV, o, warp, lane);

        /* Pd into st, dS into dp: tile element (kv row r, query column x). */
        grad_tile<NQ, FEAT>(p, bt, L, n1, full, st, dp, sA, sB, warp, lane,
                      [&](int r, int x, int64_t &i, int &j, const RowFacts *&f) { i = i0 + x, j = j0 + r, f = F + x; });
        /* dV += Pdᵀ·dO and dK += dSᵀ·Q over this unit's features (FUSED: dS through shared
         * memory, where the dQ stage reads it too; the warp's own rows, the same rounding). */
        if constexpr (F32) {
            tile_acc_ab_f32<D, BMQ, DT>(dv, st, sA, o, f0, warp, lane);
            tile_acc_ab_f32<D, BMQ, DT>(dk, dp, sB, q, f0, warp, lane);
        } else {
            if (FUSED) {
                stash_ds<T, NQ, DqSmem::lds>(sdS, dp, warp, lane);
                __syncwarp();
            }
            tile_acc_ab<T, D, BMQ, DT>(dv, st, o, f0 / 8, lane);
            if (FUSED)
                tile_sab<T, D, BMQ, DT, DqSmem::lds, false>(dk, sdS, warp * 16, q, f0 / 8, lane);
            else
                tile_acc_ab<T, D, BMQ, DT>(dk, dp, q, f0 / 8, lane);
        }

        if constexpr (FUSED) {
            const int ft = tid, fw = warp, fl = lane;
            cp_async_wait_all(); /* this thread's chunks of step s − 1's accumulator tile */
            __syncthreads();     /* dS complete; the accumulator tile visible to every thread */
            if (s > 0)
                acc_store<BMQ, DC, DqSmem::ldp>(acc_tile(s - 1), L.dq_ld, sAcc, sPart, ft);
            float dq[Split::NT][4] = {}; /* step s's partial: dQ = dS·K over this unit's features */
            tile_sab<T, D, BN, Split::NT, DqSmem::lds, true>(dq, sdS, Split::row0(fw), sK, f0 / 8 + Split::col0(fw) / 8, fl);
            if (!lean())
                __threadfence(); /* release, first half: this thread's stores of step s − 1 */
            __syncthreads(); /* every thread fenced and done with sAcc and sPart */
            if (ft == 0) {
                if (s > 0)
                    st_release_gpu(turn_ctr(s - 1), s_prev_turn + 1);
                wait_turn(turn_ctr(s), s_turn, seen, lean());
                s_prev_turn = s_turn;
            }
            stash_partial<Split::NT, DqSmem::ldp>(sPart, dq, Split::row0(fw), Split::col0(fw), fl);
        }
    }
    if (FUSED && n_steps > 0) { /* the last step's add, as the loop's */
        __syncthreads(); /* the partial in sPart; thread 0 acquired the turn */
        acc_load<BMQ, DC, DqSmem::ldp>(sAcc, acc_tile(n_steps - 1), L.dq_ld, tid);
        cp_async_commit();
        cp_async_wait_all();
        __syncthreads();
        acc_store<BMQ, DC, DqSmem::ldp>(acc_tile(n_steps - 1), L.dq_ld, sAcc, sPart, tid);
        if (!lean())
            __threadfence();
        __syncthreads();
        if (tid == 0)
            st_release_gpu(turn_ctr(n_steps - 1), s_prev_turn + 1);
    }
    cp_async_wait_all();

    /* Every kv row of the tile below kv_rows is written (rows no query sees: zeros). */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int64_t j = j0 + warp * 16 + lane / 4 + 8 * h;
        if (j >= bt.kv_rows)
            continue;
        if constexpr ((FEAT & kFeatRope) != 0)
            store_rope_grad_row<T, DT>(p, p.dk, p.dk_rope, b, bt.kv_tok, n2, j, f0, dk, h, lane, p.scale);
        else
            store_grad_row<DT>(fc_view_row(&p.dk, fc_dtype_bytes(p.dk.dtype), b, bt.kv_tok, n2, j), p.dk, p.Dqk, f0, dk, h, lane,
                               p.scale);
        store_grad_row<DT>(fc_view_row(&p.dv, fc_dtype_bytes(p.dv.dtype), b, bt.kv_tok, n2, j), p.dv, p.Dv, f0, dv, h, lane,
                           1.0f);
    }
}

/* The dK/dV kernel of the dq-recompute path: one CTA per unit, in launch order. */
template <typename T, int D, int DC, int BMQ>
__global__ void __launch_bounds__(kThreads) bwd_dkv_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    dkv_unit<T, D, DC, BMQ, false>(p, L, blockIdx.x, smem_raw);
}

/* The same with the features FEAT (kFeat*; the plain kernel above keeps its code). */
template <typename T, int D, int DC, int BMQ, int FEAT>
__global__ void __launch_bounds__(kThreads) bwd_dkv_feat_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    dkv_unit<T, D, DC, BMQ, false, FEAT>(p, L, blockIdx.x, smem_raw);
}

/* The fused kernel's loop: each CTA claims units from the ticket until none are left (the order
 * the no-deadlock argument needs). */
template <typename T, int D, int DC, int BMQ, int FEAT>
__device__ __forceinline__ void fused_units(const fc_problem &p, const BwdLaunch &L)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __shared__ int s_unit;
    __shared__ fc_batch s_bt;
    __shared__ int64_t s_arow0;
    for (;;) {
        if (threadIdx.x == 0)
            s_unit = (int)atomicAdd(L.ticket, 1u);
        __syncthreads();
        const unsigned u = (unsigned)s_unit;
        if (u >= (unsigned)L.units)
            return;
        dkv_unit<T, D, DC, BMQ, true, FEAT>(p, L, u, smem_raw, &s_bt, &s_arow0);
        __syncthreads(); /* every thread read s_unit and is done with the unit's shared memory */
    }
}

/* The fused kernel: dK/dV and the dQ partials (backward_dq.cuh), any grid size. */
template <typename T, int D, int DC, int BMQ>
__global__ void __launch_bounds__(kThreads) bwd_fused_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    fused_units<T, D, DC, BMQ, 0>(p, L);
}

/* The same with the features FEAT. */
template <typename T, int D, int DC, int BMQ, int FEAT>
__global__ void __launch_bounds__(kThreads) bwd_fused_feat_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    fused_units<T, D, DC, BMQ, FEAT>(p, L);
}

} // namespace fc_cuda

#endif /* FC_CUDA_BACKWARD_KERNEL_CUH */
