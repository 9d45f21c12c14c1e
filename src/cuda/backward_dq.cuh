/*
 * The fused backward's dQ (five tile products per visible pair instead of seven): the dK/dV
 * kernel, which already holds dS for a (kv tile, query tile) pair, also forms that pair's dQ
 * partial dS·K and adds it to the query tile's fp32 accumulator in the workspace — in kv tile
 * order, behind the query tile's turn counter (dq_order.h) — and one conversion kernel then
 * writes dQ = scale·accumulator in the gradient's dtype and strides.  No atomics on data, no
 * O(S²) workspace, and every accumulator sums the same partials in the same order whatever the
 * grid size and schedule: bitwise repeatable.
 *
 * Per step of a unit (its kv tile × one query tile of BMQ rows), after dV and dK:
 *     dS (rounded to T, as dK's product rounds it) → shared, transposed;
 *     partial = dS·K over this unit's features (warps split the query rows and features);
 *     the accumulator tile: wait for the turn, load it (cp.async, hidden behind the next step's
 *     products), add the partial, store, fence, release the counter with turn + 1.
 *
 * Memory order: the adder's threads store (st.cg) and each fences (membar.gl); a barrier; its
 * thread 0 stores the counter with st.release.gpu.  The next adder's thread 0 reads the counter
 * (ld.relaxed.gpu) until it holds its turn, fences (acquire), a barrier; then its threads load
 * the tile with cp.async.cg (L2, never a stale L1 line).  kDqSyncLean (FLASHC_CUDA_BWD_SYNC=lean)
 * drops the per-thread fences: a barrier orders every thread's stores before thread 0's
 * st.release.gpu, and a PTX release is cumulative (the pattern of cooperative groups' grid
 * barrier: a CTA barrier, then one thread's fence and flag); the acquire side fences with
 * fence.acq_rel.gpu instead of the sequentially consistent membar.gl.  Same sums, same order.
 *
 * No deadlock, for any grid size and any order in which the hardware starts CTAs: a CTA claims
 * units from a ticket counter (atomicAdd) one at a time, so units are claimed in increasing
 * order, each by a CTA that is resident and runs it to the end before claiming another.  A unit
 * waits only on units of the same (batch, kv head, part) with smaller kv tiles (its turn counts
 * exactly those), and the plan orders each batch's kv tiles increasingly (dq_order.h), so it
 * waits only on units with smaller indices — all claimed, hence on running CTAs.  Suppose some
 * claimed unit never finished; take the smallest such u.  Every unit u waits on is smaller, so
 * finishes and releases each counter u waits on up to u's turn (no other unit moves a counter from
 * u's turn: only u adds at it); so u's waits end and u finishes — a contradiction.  Claimed units
 * all finish, so CTAs keep claiming until none are left.  The waits only need resident CTAs to
 * progress, which the GPU guarantees; a wait past kTurnTimeoutNs (a bug) traps instead of hanging.
 * The sm_90a kernel (hopper/bwd_kernel.cuh) keeps the argument: its producer lane claims the next
 * unit while the CTA's MMA warpgroups still run the current one, so a CTA may hold two claimed
 * units — but it runs them in claim order, and the one waiting to start is larger than the running
 * one.  Take again the smallest claimed unit u that never finishes: its CTA's earlier units are
 * smaller, so they finished, so the CTA runs u; everything u waits on is smaller and finishes.
 */
#ifndef FC_CUDA_BACKWARD_DQ_CUH
#define FC_CUDA_BACKWARD_DQ_CUH

#include "backward_common.cuh"
#include "dq_order.h"

namespace fc_cuda {

/* Shared memory of the dQ stage (after the dK/dV kernel's own): dS [BN kv rows][BMQ + 8] in T,
 * then two fp32 tiles [BMQ][DC + 8]: this unit's partial and the accumulator's tile (the pads
 * spread ldmatrix and float2 accesses over the banks; rows stay 16-byte aligned). */
template <int BN, int BMQ, int DC> struct BwdDqSmem {
    static constexpr int lds = BMQ + 8, ldp = DC + 8;
    static constexpr size_t ds = (size_t)BN * lds * 2, tile = (size_t)BMQ * ldp * sizeof(float);
    static constexpr size_t bytes = ds + 2 * tile;
};

constexpr unsigned long long kTurnTimeoutNs = 10ull * 1000 * 1000 * 1000;

/* BwdLaunch::dq_sync: how an adder publishes its accumulator tile (see above). */
constexpr int kDqSyncFence = 0, kDqSyncLean = 1;

/* (FC_CUDA_DQ_SYNC_EMULATED: a host test's CTA emulator brings its own, tests/unit/cta_emu_sm90.h) */
#ifndef FC_CUDA_DQ_SYNC_EMULATED
__device__ __forceinline__ unsigned ld_relaxed_gpu(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void st_release_gpu(unsigned *p, unsigned v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;\n" ::: "memory"); }
__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

/* Thread 0 of the adder: waits until *ctr == turn (seen: a read issued earlier), then acquires
 * (lean: with fence.acq_rel.gpu). */
__device__ __forceinline__ void wait_turn(const unsigned *ctr, unsigned turn, unsigned seen, bool lean)
{
    if (seen != turn) {
        const unsigned long long t0 = global_ns();
        while ((seen = ld_relaxed_gpu(ctr)) != turn) {
            __nanosleep(64);
            if (global_ns() - t0 > kTurnTimeoutNs)
                __trap(); /* cannot happen (backward_dq.cuh's argument); an error beats a hang */
        }
    }
    if (lean)
        fence_acq_rel_gpu();
    else
        __threadfence();
}
#endif

/* The warp's dS tile (16 kv rows × BMQ query columns as tile_abt and grad_tile leave it) into
 * sdS[kv row][query column], each pair rounded to T as tile_acc_ab rounds it for dK. */
template <typename T, int NQ, int LDS>
__device__ __forceinline__ void stash_ds(T *sdS, const float (&ds)[NQ][4], int warp, int lane)
{
#pragma unroll
    for (int nt = 0; nt < NQ; nt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = warp * 16 + lane / 4 + 8 * h, c = nt * 8 + (lane % 4) * 2;
            *reinterpret_cast<uint32_t *>(sdS + r * LDS + c) = Elem<T>::pack(ds[nt][2 * h], ds[nt][2 * h + 1]);
        }
}

/* acc[16 × 8·NT] += A·B: A = rows m0..m0+15 of a [M][K] matrix in shared memory, row-major
 * (A(m, k) at a[m·LDA + k], ldmatrix) or stored transposed (TRANS: at a[k·LDA + m],
 * ldmatrix.trans); B = K rows of the swizzled tile b from feature chunk c0 (ldmatrix.trans). */
template <typename T, int D, int K, int NT, int LDA, bool TRANS>
__device__ __forceinline__ void tile_sab(float (&acc)[NT][4], const T *a, int m0, const T *b, int c0, int lane)
{
    static_assert(NT % 2 == 0 && K % 16 == 0 && LDA % 8 == 0, "whole ldmatrix tiles");
#pragma unroll
    for (int ks = 0; ks < K / 16; ks++) {
        uint32_t fa[4];
        if (TRANS)
            ldsm_x4_t(fa, a + (ks * 16 + (lane / 16) * 8 + lane % 8) * LDA + m0 + ((lane / 8) % 2) * 8);
        else
            ldsm_x4(fa, a + (m0 + lane % 16) * LDA + ks * 16 + (lane / 16) * 8);
#pragma unroll
        for (int d = 0; d < NT; d += 2) {
            uint32_t fb[4];
            ldsm_x4_t(fb, b + swz<D>(ks * 16 + lane % 8 + ((lane / 8) % 2) * 8, c0 + d + lane / 16));
            mma16816<T>(acc[d], fa, fb[0], fb[1]);
            mma16816<T>(acc[d + 1], fa, fb[2], fb[3]);
        }
    }
}

/* The dQ stage's warp split of the partial [BMQ × DC]: MQ m-tiles of 16 rows, the features in
 * kWarps / MQ column groups of NT 8-wide tiles. */
template <int BMQ, int DC> struct DqSplit {
    static constexpr int MQ = BMQ / 16, WN = kWarps / MQ, NT = DC / 8 / WN;
    static_assert(kWarps % MQ == 0 && (DC / 8) % WN == 0 && NT % 2 == 0, "the dQ partial splits evenly over the warps");
    static __device__ __forceinline__ int row0(int warp) { return (warp % MQ) * 16; }
    static __device__ __forceinline__ int col0(int warp) { return (warp / MQ) * NT * 8; }
};

/* The warp's partial (rows m0.., columns c0.. of the tile) into sPart[row][column]. */
template <int NT, int LDP>
__device__ __forceinline__ void stash_partial(float *sPart, const float (&acc)[NT][4], int m0, int c0, int lane)
{
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = m0 + lane / 4 + 8 * h, c = c0 + nt * 8 + (lane % 4) * 2;
            *reinterpret_cast<float2 *>(sPart + r * LDP + c) = make_float2(acc[nt][2 * h], acc[nt][2 * h + 1]);
        }
}

/* The accumulator tile [BMQ][DC] at g (rows ld floats apart) → sAcc (cp.async, L2). */
template <int BMQ, int DC, int LDP>
__device__ __forceinline__ void acc_load(float *sAcc, const float *g, int ld, int tid)
{
    constexpr int C = DC / 4; /* 16-byte chunks a row */
    static_assert(BMQ * C % kThreads == 0, "whole chunks per thread");
#pragma unroll
    for (int k = 0; k < BMQ * C / kThreads; k++) {
        const int x = tid + k * kThreads, r = x / C, c = (x % C) * 4;
        cp_async16(sAcc + r * LDP + c, g + (int64_t)r * ld + c, 16);
    }
}

/* g = sAcc + sPart over the tile (rows past the batch's query rows are the batch's own padding in
 * the accumulator, and their partials are exact zeros). */
template <int BMQ, int DC, int LDP>
__device__ __forceinline__ void acc_store(float *g, int ld, const float *sAcc, const float *sPart, int tid)
{
    constexpr int C = DC / 4;
#pragma unroll
    for (int k = 0; k < BMQ * C / kThreads; k++) {
        const int x = tid + k * kThreads, r = x / C, c = (x % C) * 4;
        const float4 a = *reinterpret_cast<const float4 *>(sAcc + r * LDP + c);
        const float4 q = *reinterpret_cast<const float4 *>(sPart + r * LDP + c);
        __stcg(reinterpret_cast<float4 *>(g + (int64_t)r * ld + c), make_float4(a.x + q.x, a.y + q.y, a.z + q.z, a.w + q.w));
    }
}

/* dQ = scale · accumulator for the BM query rows of one (item, head): lanes over the features, in
 * the gradient's dtype and strides; every row below q_rows is written. */
template <int BM>
__global__ void __launch_bounds__(kThreads) bwd_dq_convert_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    each_query_row<BM>(p, L, [&](int64_t b, int64_t n1, const fc_batch &bt, int64_t i, int lane) {
        const int64_t es = fc_dtype_bytes(p.dq.dtype);
        const float *a = L.dq_acc + (n1 * L.arows + L.arow0[b] + i) * L.dq_ld;
        char *row = fc_view_row(&p.dq, es, b, bt.q_tok, n1, i);
        for (int64_t e = lane; e < p.Dqk; e += 32)
            store_any(row + e * p.dq.se * es, p.dq.dtype, __ldcg(a + e) * p.scale);
    });
}

/* The same for rope-split heads (kFeatRope): the accumulator's features from Dqk on go to dq_rope. */
template <int BM>
__global__ void __launch_bounds__(kThreads) bwd_dq_convert_rope_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    each_query_row<BM>(p, L, [&](int64_t b, int64_t n1, const fc_batch &bt, int64_t i, int lane) {
        const float *a = L.dq_acc + (n1 * L.arows + L.arow0[b] + i) * L.dq_ld;
        char *row = fc_view_row(&p.dq, fc_dtype_bytes(p.dq.dtype), b, bt.q_tok, n1, i);
        char *rrow = fc_view_row(&p.dq_rope, fc_dtype_bytes(p.dq_rope.dtype), b, bt.q_tok, n1, i);
        for (int e = lane; e < p.Dqk + p.Dr; e += 32) {
            int f;
            const bool rope = fc_rope_part(e, (int)p.Dqk, (int)p.Dr, &f) == 1;
            const fc_view &w = rope ? p.dq_rope : p.dq;
            store_any((rope ? rrow : row) + (int64_t)f * w.se * fc_dtype_bytes(w.dtype), w.dtype, __ldcg(a + e) * p.scale);
        }
    });
}

} // namespace fc_cuda

#endif /* FC_CUDA_BACKWARD_DQ_CUH */
