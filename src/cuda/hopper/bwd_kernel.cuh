/*
 * The Hopper backward kernel (sm_90a): dK, dV and the dQ partials of one kv tile per unit, on
 * TMA, wgmma and mbarrier rings (the forward's vocabulary: sync.cuh, fwd_kernel.cuh's helpers).
 *
 * A persistent CTA of three warpgroups claims units from the ticket (one at a time, in
 * increasing order: the order backward_dq.cuh's no-deadlock argument needs) — a unit is one kv
 * tile of BN keys of one (batch, kv head), and its steps are the query tiles of BM rows that may
 * see it (dq_order.h), for each query head of the group in turn.  Roles:
 *   - producer (warp 0, one lane): claims units and posts them through a two-slot ring; per unit
 *     K and V by bulk tensor copies (one buffer, released by the MMA warpgroups at the unit's
 *     end), then per step Q and dO through a ring of STAGES buffers;
 *   - preparer (warp 1): per unit zeroes the K and V rows past the batch's last key, per step the
 *     Q and dO rows past its last query (what the maps still cover there — the next packed batch,
 *     padding, NaN included — must never meet a zero probability in a product), and writes the
 *     step's row facts (spans, statistics in the exp2 frame, D: bwd_traits.cuh's BwdRow)
 *     and whether every row sees the whole kv tile (then no mask); it releases each to the MMA
 *     warpgroups on the *_ready barriers;
 *   - two MMA warpgroups: S = Q·Kᵀ and dP = dO·Vᵀ by wgmma from shared memory (each warpgroup 64
 *     of the keys), P and dS per element in registers (two query rows per thread: two rows'
 *     statistics), stored transposed to shared memory; dV += Pᵀ·dO and dK += dSᵀ·Q (each warpgroup
 *     its 64 kv rows) and the dQ partial dS·K (each warpgroup half the features) by wgmma from
 *     shared memory; the partial is added into the query tile's
 *     fp32 accumulator behind its turn counter, in kv tile order (backward_dq.cuh's protocol:
 *     wait for the turn, load, add, store, fence, release turn + 1).
 * Every sum runs in a fixed order whatever the grid and schedule: results repeat bit for bit.
 */
#ifndef FC_CUDA_HOPPER_BWD_KERNEL_CUH
#define FC_CUDA_HOPPER_BWD_KERNEL_CUH

#define FC_CUDA_BWD_SINK_ELSEWHERE /* the dsink kernel is backward.cu's alone */
#include "../backward_dq.cuh"
#include "bwd_args.h"
#include "bwd_traits.cuh"
#include "fwd_kernel.cuh"

namespace fc_hopper {

/* One unit: kv tile t of batch b and kv head n2; its steps visit the query tiles [qa, qa + n_qt)
 * of each of the group's query heads. */
struct BwdUnit {
    int b, n2, t, qa, n_qt, steps;
};

__device__ __forceinline__ BwdUnit bwd_unit(const fc_problem &p, const fc_cuda::BwdLaunch &L, int u)
{
    const int nkv = (int)p.Nkv;
    const int2 it = L.items[u / nkv];
    int64_t qa, qz;
    fc_dq_visits(&p.batch[it.x], it.y, kBwdKvRows, kBwdQRows, &qa, &qz);
    return BwdUnit{it.x, u % nkv, it.y, (int)qa, (int)(qz - qa), (int)(qz - qa) * (int)p.G};
}

/* Step st of unit w: its query head and first query row. */
__device__ __forceinline__ int step_head(const fc_problem &p, const BwdUnit &w, int st) { return w.n2 * (int)p.G + st / w.n_qt; }
__device__ __forceinline__ int step_row(const BwdUnit &w, int st) { return (w.qa + st % w.n_qt) * kBwdQRows; }

/* One warp zeroes rows [from, ROWS) of a tile of NC feature chunks (a row of a chunk is 128
 * contiguous bytes whatever the swizzle: 8 pieces of 16). */
template <int ROWS, int NC> __device__ __forceinline__ void zero_rows(void *tile, int from, int lane)
{
    char *base = reinterpret_cast<char *>(tile) + (lane % 8) * 16;
#pragma unroll 1
    for (int c = 0; c < NC; c++)
        for (int r = max(from, 0) + lane / 8; r < ROWS; r += 4)
            *reinterpret_cast<uint4 *>(base + (c * ROWS + r) * 128) = make_uint4(0, 0, 0, 0);
}

/* p, as far as the compiler knows, a new pointer each time (keeps values derived from it from
 * being hoisted out of a loop and held in registers). */
template <class P> __device__ __forceinline__ P *opaque(P *p)
{
    asm volatile("" : "+l"(p));
    return p;
}
__device__ __forceinline__ int opaque(int x)
{
    asm volatile("" : "+r"(x));
    return x;
}

/* Query row i's facts (backward_common.cuh's row_facts for what this kernel takes: no ALiBi
 * frame), the statistics found from the kv head n2 and group member g (no 64-bit division in the
 * preparer's code); cover for columns [a, z). */
__device__ __forceinline__ void step_row_facts(const fc_problem &p, const fc_cuda::BwdLaunch &L, const fc_batch &bt, int b, int n2,
                                               int g, int64_t i, int a, int z, BwdRow &f)
{
    const bool live = i < bt.sq;
    int64_t sp[4] = {0, 0, 0, 0};
    if (live)
        fc_row_spans(&bt, i, sp);
    const int4 s = make_int4((int)sp[0], (int)sp[1], (int)sp[2], (int)sp[3]);
    f.span = s;
    f.lse2 = INFINITY, f.dsum = 0.0f; /* not a row of the batch: P = exp2(−∞) = 0 (its Q and dO rows are zeroed) */
    if (live) {
        const fc_stats_view &sv = p.stats; /* fc_stat_offset with n1 / G and n1 mod G given */
        const int64_t at = bt.stat_row0 * sv.s_row0 + n2 * (sv.sn2 + bt.q_rows * sv.sn2_rows) + g * (sv.sg + bt.q_rows * sv.sg_rows) +
                           i * sv.si;
        f.lse2 = p.stats.max[at] * kLog2e + log2f(p.stats.sum[at]);
        f.dsum = L.dsum[((int64_t)n2 * p.G + g) * L.rows + L.row0[b] + i];
    }
    f.cover = !live || (s.x <= a && z <= s.y) || (s.z <= a && z <= s.w);
}

/* fc_view_row of a view neither paged nor a tensor list (the gradients: fc_cuda_bwd_unsupported),
 * 16-bit elements: no page-table division in the code. */
__device__ __forceinline__ char *flat_row(const fc_view &v, int64_t b, int64_t tok, int64_t n, int64_t s)
{
    return (char *)v.data + (b * v.sb + (tok + s) * v.ss + n * v.sn) * 2;
}

/* The n-th claimed unit's slot of the unit ring and its phase. */
__device__ __forceinline__ int unit_slot(uint32_t n) { return (int)(n & 1u); }
__device__ __forceinline__ uint32_t unit_phase(uint32_t n) { return (n >> 1) & 1u; }

/* The next unit for the preparer and the MMA threads (each arrives on the slot's empty barrier). */
template <class Tr> __device__ __forceinline__ int take_unit(typename Tr::Smem &s, uint32_t n)
{
    mbar_wait(&s.unit_full[unit_slot(n)], unit_phase(n));
    const int u = s.unit[unit_slot(n)];
    mbar_arrive(&s.unit_empty[unit_slot(n)]);
    return u;
}

/* f(n, unit, its batch's facts) for each unit the producer claimed, in claim order, until the
 * ticket runs out: the preparer's and the MMA threads' loop. */
template <class Tr, class F>
__device__ __forceinline__ void each_unit(const fc_problem &p, const fc_cuda::BwdLaunch &L, typename Tr::Smem &s, F f)
{
    for (uint32_t n = 0;; n++) {
        const int u = take_unit<Tr>(s, n);
        if (u >= L.units)
            return;
        const BwdUnit w = bwd_unit(p, L, u);
        f(n, w, p.batch[w.b]);
    }
}

/* The producer (one lane): claims units in ticket order, then copies K, V and each step's Q, dO. */
template <class Tr>
__device__ __forceinline__ void bwd_produce(const fc_problem &p, const fc_cuda::BwdLaunch &L, const BwdArgs &a, typename Tr::Smem &s)
{
    constexpr int BM = Tr::BM, BN = Tr::BN, D = Tr::D, CH = Tr::CHUNK, NC = D / CH;
    uint32_t q_n = 0;
    for (uint32_t n = 0;; n++) {
        const int u = (int)atomicAdd(L.ticket, 1u);
        mbar_wait(&s.unit_empty[unit_slot(n)], unit_phase(n) ^ 1u);
        s.unit[unit_slot(n)] = u;
        mbar_arrive(&s.unit_full[unit_slot(n)]);
        if (u >= L.units)
            return;
        const BwdUnit w = bwd_unit(p, L, u);
        const fc_batch &bt = p.batch[w.b];
        const int kb = a.kv_batched ? w.b : 0, qb = a.q_batched ? w.b : 0, row = (int)bt.kv_tok + w.t * BN;
        mbar_wait(&s.kv_empty, (n & 1u) ^ 1u);
        mbar_arrive_tx(&s.kv_full, 2 * Tr::KV_BYTES);
#pragma unroll
        for (int c = 0; c < NC; c++) {
            tma_load_4d(&a.k, &s.kv_full, s.k + c * BN * CH, c * CH, row, w.n2, kb);
            tma_load_4d(&a.v, &s.kv_full, s.v + c * BN * CH, c * CH, row, w.n2, kb);
        }
        for (int st = 0; st < w.steps; st++, q_n++) {
            const Slot<Tr::STAGES> sl(q_n);
            const int n1 = step_head(p, w, st), qrow = (int)bt.q_tok + step_row(w, st);
            mbar_wait(&s.q_empty[sl.stage], sl.phase ^ 1u);
            mbar_arrive_tx(&s.q_full[sl.stage], 2 * Tr::Q_BYTES);
            typename Tr::E *q = s.q + sl.stage * BM * D, *o = s.dout + sl.stage * BM * D;
#pragma unroll
            for (int c = 0; c < NC; c++) {
                tma_load_4d(&a.q, &s.q_full[sl.stage], q + c * BM * CH, c * CH, qrow, n1, qb);
                tma_load_4d(&a.dout, &s.q_full[sl.stage], o + c * BM * CH, c * CH, qrow, n1, qb);
            }
        }
    }
}

/* The preparer warp: edges zeroed, the steps' row facts written, each released on *_ready. */
template <class Tr>
__device__ __forceinline__ void bwd_prepare(const fc_problem &p, const fc_cuda::BwdLaunch &L, typename Tr::Smem &s, int lane)
{
    constexpr int BM = Tr::BM, BN = Tr::BN, D = Tr::D, NC = D / Tr::CHUNK;
    uint32_t q_n = 0;
    each_unit<Tr>(p, L, s, [&](uint32_t n, const BwdUnit &w, const fc_batch &bt) {
        const int j0 = w.t * BN;
        mbar_wait(&s.kv_full, n & 1u);
        if (j0 + BN > bt.skv) {
            zero_rows<BN, NC>(s.k, (int)(bt.skv - j0), lane);
            zero_rows<BN, NC>(s.v, (int)(bt.skv - j0), lane);
            fence_async_smem();
        }
        __syncwarp();
        if (lane == 0)
            mbar_arrive(&s.kv_ready);
        for (int st = 0; st < w.steps; st++, q_n++) {
            const Slot<Tr::STAGES> sl(q_n);
            const int i0 = step_row(w, st);
            mbar_wait(&s.q_full[sl.stage], sl.phase);
            bool cover = true;
            for (int r = lane; r < BM; r += 32) {
                BwdRow &f = s.facts[sl.stage][r];
                step_row_facts(p, L, bt, w.b, w.n2, st / w.n_qt, i0 + r, j0, j0 + BN, f);
                cover = cover && f.cover;
            }
            cover = __all_sync(0xffffffffu, cover);
            if (lane == 0)
                s.full[sl.stage] = cover;
            if (i0 + BM > bt.sq) {
                zero_rows<BM, NC>(s.q + sl.stage * BM * D, (int)(bt.sq - i0), lane);
                zero_rows<BM, NC>(s.dout + sl.stage * BM * D, (int)(bt.sq - i0), lane);
                fence_async_smem();
            }
            __syncwarp();
            if (lane == 0)
                mbar_arrive(&s.q_ready[sl.stage]);
        }
    });
}

template <typename T, int D>
__global__ void __launch_bounds__(BwdTraits<T, D>::THREADS, 1)
    bwd_hopper_kernel(const __grid_constant__ fc_problem p, const __grid_constant__ fc_cuda::BwdLaunch L,
                      const __grid_constant__ BwdArgs a)
{
    using Tr = BwdTraits<T, D>;
    using E = typename Tr::E;
    constexpr int BM = Tr::BM, BN = Tr::BN, STAGES = Tr::STAGES, MMA_THREADS = Tr::MMA_THREADS;
    extern __shared__ char smem_raw[];
    typename Tr::Smem &s = *reinterpret_cast<typename Tr::Smem *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~(uintptr_t)1023);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    if (threadIdx.x == 0) {
        for (int i = 0; i < 2; i++)
            mbar_init(&s.unit_full[i], 1), mbar_init(&s.unit_empty[i], MMA_THREADS + 32);
        mbar_init(&s.kv_full, 1), mbar_init(&s.kv_ready, 1), mbar_init(&s.kv_empty, MMA_THREADS);
        for (int i = 0; i < STAGES; i++)
            mbar_init(&s.q_full[i], 1), mbar_init(&s.q_ready[i], 1), mbar_init(&s.q_empty[i], MMA_THREADS);
        mbar_init_fence();
    }
    if (warp == 0 && lane == 0) {
        tma_prefetch_map(&a.q), tma_prefetch_map(&a.dout), tma_prefetch_map(&a.k), tma_prefetch_map(&a.v);
    }
    __syncthreads();

    if (warp < 4) { /* the producer warpgroup */
        regs_shrink<Tr::REGS_PRODUCER>();
        if (warp == 0 && lane == 0)
            bwd_produce<Tr>(p, L, a, s);
        else if (warp == 1)
            bwd_prepare<Tr>(p, L, s, lane);
        return;
    }
    regs_grow<Tr::REGS_MMA>();

    /* the MMA warpgroups */
    using namespace cute;
    const int ct = threadIdx.x - 128; /* lane: threadIdx.x % 32 */
    typename Tr::MmaSdP mma_sdp;
    typename Tr::MmaDKV mma_dkv;
    typename Tr::MmaDQ mma_dq;
    auto thr_sdp = mma_sdp.get_thread_slice(ct);
    auto thr_dkv = mma_dkv.get_thread_slice(ct);
    auto thr_dq = mma_dq.get_thread_slice(ct);
    Tensor sPt = make_tensor(make_smem_ptr(s.p), typename Tr::LayoutPt{});
    Tensor sdSt = make_tensor(make_smem_ptr(s.ds), typename Tr::LayoutPt{});
    Tensor tSrS = partition_fragment_C(mma_sdp, Shape<Int<BM>, Int<BN>>{});
    Tensor tSrdP = partition_fragment_C(mma_sdp, Shape<Int<BM>, Int<BN>>{});
    Tensor tVrdV = partition_fragment_C(mma_dkv, Shape<Int<BN>, Int<D>>{});
    Tensor tKrdK = partition_fragment_C(mma_dkv, Shape<Int<BN>, Int<D>>{});
    Tensor tQrdQ = partition_fragment_C(mma_dq, Shape<Int<BM>, Int<D>>{});
    /* The accumulators' (row, column) of value i = c + 2h + 4k (wgmma's m64nNk16 layout; checked
     * against CuTe's partition by tests/cuda/test_hopper_layouts): S and dP at query row
     * 16·(warp % 4) + lane / 4 + 8h, key (BN/2)·wg + 8k + 2·(lane % 4) + c; dK and dV at kv row
     * 64·wg + 16·(warp % 4) + lane / 4 + 8h, feature 8k + 2·(lane % 4) + c; the dQ partial at query
     * row 16·(warp % 4) + lane / 4 + 8h, feature (D/2)·wg + 8k + 2·(lane % 4) + c. */
    struct Coords { /* made from ct opaque per use: short work, and held across the loops they spilled */
        int wg, row0, col0;
        __device__ explicit Coords(int t) : wg(t / 128), row0(16 * ((t / 32) % 4) + (t % 32) / 4), col0(2 * (t % 4)) {}
    };
    static_assert(decltype(size(typename decltype(tSrS)::layout_type{}))::value == BN / 4 &&
                      decltype(size(typename decltype(tVrdV)::layout_type{}))::value == D / 2 &&
                      decltype(size(typename decltype(tQrdQ)::layout_type{}))::value == D / 4,
                  "per thread: BN/4 scores, D/2 of dK and of dV, D/4 of the dQ partial");

    uint32_t q_n = 0;
    each_unit<Tr>(p, L, s, [&](uint32_t n, const BwdUnit &w, const fc_batch &bt) {
        const int j0 = w.t * BN;
        if (ct == 0) /* thread 0's turn search (dq_order.h), in shared memory: no registers held */
            s.turn_p = fc_dq_prefix_tiles(&bt, BN);
        clear(tVrdV);
        clear(tKrdK);
        /* the TMA's own barrier, then the preparer's: the tensor cores read what the copy wrote
         * by an observed completion of its barrier (as the forward's consumers do), not only
         * through the preparer's relay.  Neither can be a phase ahead: kv_full's next needs kv_empty. */
        mbar_wait(&s.kv_full, n & 1u);
        mbar_wait(&s.kv_ready, n & 1u);

        for (int st = 0; st < w.steps; st++, q_n++) {
            const Slot<STAGES> sl(q_n);
            const int n1 = step_head(p, w, st), i0 = step_row(w, st);
            const Coords co(opaque(ct));
            const int wg = co.wg, row0 = co.row0, col0 = co.col0;
            mbar_wait(&s.q_full[sl.stage], sl.phase); /* as kv_full above; the stage's next needs q_empty */
            mbar_wait(&s.q_ready[sl.stage], sl.phase);
            /* the operand descriptors, made here from pointers the compiler cannot see through: held
             * across the loop they would take some 160 registers */
            E *k = opaque(s.k), *v = opaque(s.v), *q = opaque(s.q + sl.stage * BM * D), *o = opaque(s.dout + sl.stage * BM * D);
            Tensor tSrQ = thr_sdp.partition_fragment_A(make_tensor(make_smem_ptr(q), typename Tr::LayoutQ{})); /* (MMA, 1, D/16) */
            Tensor tSrdO = thr_sdp.partition_fragment_A(make_tensor(make_smem_ptr(o), typename Tr::LayoutQ{}));
            Tensor tSrK = thr_sdp.partition_fragment_B(make_tensor(make_smem_ptr(k), typename Tr::LayoutKV{}));
            Tensor tSrV = thr_sdp.partition_fragment_B(make_tensor(make_smem_ptr(v), typename Tr::LayoutKV{}));
            wg_gemm<true, false>(mma_sdp, tSrQ, tSrK, tSrS);
            wg_gemm<true, false>(mma_sdp, tSrdO, tSrV, tSrdP);
            warpgroup_wait<0>();

            /* P into tSrS, dS into tSrdP (grad_at's plain path: hidden elements give 0 and 0), then
             * both to shared memory transposed: a pair of adjacent keys is one 32-bit store */
            const bool full = s.full[sl.stage] != 0;
            const float scale_log2 = p.scale * kLog2e;
            const BwdRow &f0 = s.facts[sl.stage][row0], &f1 = s.facts[sl.stage][row0 + 8];
#pragma unroll
            for (int i = 0; i < size(tSrS) / 2; i++) { /* values 2i, 2i + 1: row r, keys j, j + 1 (each pair stored as made) */
                const BwdRow &f = i % 2 ? f1 : f0;
                const int j = (BN / 2) * wg + 8 * (i / 2) + col0, r = row0 + 8 * (i % 2);
                float pr[2], ds[2];
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const bool seen = full || span_has(f.span, j0 + j + c);
                    const float x = fc_cuda::fast_exp2(fmaf(tSrS(2 * i + c), scale_log2, -f.lse2));
                    pr[c] = seen ? x : 0.0f;
                    ds[c] = seen ? x * (tSrdP(2 * i + c) - f.dsum) : 0.0f;
                }
                *reinterpret_cast<uint32_t *>(&sPt(j, r)) = fc_cuda::Elem<T>::pack(pr[0], pr[1]);
                *reinterpret_cast<uint32_t *>(&sdSt(j, r)) = fc_cuda::Elem<T>::pack(ds[0], ds[1]);
            }
            fence_async_smem();
            named_sync(1, MMA_THREADS); /* both warpgroups' P and dS in shared memory */

            E *pt = opaque(s.p), *dst = opaque(s.ds);
            Tensor tVrP = thr_dkv.partition_fragment_A(make_tensor(make_smem_ptr(pt), typename Tr::LayoutPt{})); /* (MMA, 1, BM/16) */
            Tensor tKrdS = thr_dkv.partition_fragment_A(make_tensor(make_smem_ptr(dst), typename Tr::LayoutPt{}));
            Tensor tVrdO = thr_dkv.partition_fragment_B(make_tensor(make_smem_ptr(o), typename Tr::LayoutQt{}));
            Tensor tKrQ = thr_dkv.partition_fragment_B(make_tensor(make_smem_ptr(q), typename Tr::LayoutQt{}));
            Tensor tQrdS = thr_dq.partition_fragment_A(make_tensor(make_smem_ptr(dst), typename Tr::LayoutDS{})); /* (MMA, 1, BN/16) */
            Tensor tQrK = thr_dq.partition_fragment_B(make_tensor(make_smem_ptr(k), typename Tr::LayoutKt{}));
            wg_gemm<false, false>(mma_dkv, tVrP, tVrdO, tVrdV);
            wg_gemm<false, false>(mma_dkv, tKrdS, tKrQ, tKrdK);
            wg_gemm<true, false>(mma_dq, tQrdS, tQrK, tQrdQ);
            warpgroup_wait<0>();
            mbar_arrive(&s.q_empty[sl.stage]);

            /* the partial into the accumulator, in turn (backward_dq.cuh) */
            const int64_t arow0 = __ldg(L.arow0 + w.b), tile = (arow0 + i0) / BM;
            unsigned *ctr = L.turns + (int64_t)n1 * (L.arows / BM) + tile;
            unsigned turn = 0;
            if (ct == 0) {
                const int qt = w.qa + st % w.n_qt;
                const int64_t P = s.turn_p;
                if (w.t >= P)
                    s.turn_a = fc_dq_first_sharer(&bt, st % w.n_qt == 0 ? P : s.turn_a, w.t, qt, BN, BM);
                turn = (unsigned)fc_dq_turn(w.t, P, s.turn_a);
                fc_cuda::wait_turn(ctr, turn, fc_cuda::ld_relaxed_gpu(ctr), false);
            }
            named_sync(1, MMA_THREADS);
            float *acc = L.dq_acc + ((int64_t)n1 * L.arows + arow0 + i0) * L.dq_ld;
#pragma unroll
            for (int i = 0; i < size(tQrdQ); i += 2) {
                const int r = row0 + 8 * ((i / 2) % 2), e = (D / 2) * wg + 8 * (i / 4) + col0;
                float2 *g = reinterpret_cast<float2 *>(acc + (int64_t)r * L.dq_ld + e);
                float2 v = __ldcg(g);
                v.x += tQrdQ(i), v.y += tQrdQ(i + 1);
                __stcg(g, v);
            }
            __threadfence(); /* release, first half: this thread's stores */
            named_sync(1, MMA_THREADS);
            if (ct == 0)
                fc_cuda::st_release_gpu(ctr, turn + 1);
        }
        mbar_arrive(&s.kv_empty); /* every product reading K and V has completed */

        /* dK = scale·Σ dSᵀ·Q and dV; every kv row of the tile below kv_rows (rows no query sees: zeros) */
        /* (the gradients have the operands' dtype T: bwd_unsupported) */
        const Coords co(opaque(ct));
        const int wg = co.wg, row0 = co.row0, col0 = co.col0;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t j = j0 + 64 * wg + row0 + 8 * h;
            if (j >= bt.kv_rows)
                continue;
            char *dk = flat_row(p.dk, w.b, bt.kv_tok, w.n2, j), *dv = flat_row(p.dv, w.b, bt.kv_tok, w.n2, j);
#pragma unroll
            for (int k = 0; k < D / 8; k++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const int e = 8 * k + col0 + c, i = 4 * k + 2 * h + c;
                    if (e < p.Dqk)
                        *reinterpret_cast<T *>(dk + e * p.dk.se * 2) = T(tKrdK(i) * p.scale);
                    if (e < p.Dv)
                        *reinterpret_cast<T *>(dv + e * p.dv.se * 2) = T(tVrdV(i));
                }
        }
    });
}

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_BWD_KERNEL_CUH */
