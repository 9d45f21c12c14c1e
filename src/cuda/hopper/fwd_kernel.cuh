/*
 * The Hopper forward kernel (sm_90a): warp-specialised FlashAttention on TMA and wgmma.
 *
 * A persistent CTA of three warpgroups takes work items w = blockIdx.x, + gridDim.x, ...; an
 * item is one query head × BM query rows of one batch.  Roles:
 *   - producer (warp 0): per item, the query tile once, then the visible key and value tiles,
 *     each by bulk tensor copies (one 64-feature box per chunk) into a ring of STAGES buffers
 *     guarded by full/empty mbarriers;
 *   - edge fixer (warp 1): a value tile that reaches past the batch's last key into rows the map
 *     still covers (the next packed batch, or padding) gets those rows zeroed before P·V reads
 *     them, so that what lies there (NaN included) never meets a zero probability; in a tile
 *     that hides pairs (a row does not see all of it) an inf or NaN value is taken out of P·V
 *     the same way, after recording what it does to the rows that see it (the poison table,
 *     which the consumers' epilogue adds back).  When a run has such batches or tiles, every
 *     value tile passes the fixer in ring order (v_full, then v_fixed): a parity wait is only
 *     right within one phase of the barrier, and a fixer that skipped to an item's last tile
 *     could be a phase early — it zeroed a tile still in flight;
 *   - two consumer warpgroups of 64 query rows: S = Q·Kᵀ by wgmma from shared memory, the
 *     online softmax in registers (exp2, the scale folded into its FMA), O += P·V by wgmma with
 *     P in registers; the next tile's Q·Kᵀ is issued before this tile's P·V, so the softmax of
 *     one tile runs while the tensor cores work on the other.
 * Visibility comes from the one model (core/visibility.h): each item's kv range is the union of
 * its rows' spans, and tiles every written row sees whole skip the mask.  Every output row is
 * produced by one item, whichever CTA runs it, in a fixed order: results repeat bit for bit for
 * any grid.
 */
#ifndef FC_CUDA_HOPPER_FWD_KERNEL_CUH
#define FC_CUDA_HOPPER_FWD_KERNEL_CUH

#include <float.h>
#include <limits.h>

#include "../../core/problem.h"
#include "../../core/visibility.h"
#include "../decode_common.cuh"
#include "../nonfinite.cuh"
#include "../ptx.cuh"
#include "fwd_args.h"
#include "fwd_traits.cuh"
#include "sync.cuh"

namespace fc_hopper {

constexpr float kLog2e = 1.4426950408889634f;

/* One work item: batch, query head and first query row. */
struct Work {
    int b, n1, m0;
};

/* Work w in the launch order: head groups outermost, then the (batch, query tile) items heaviest
 * first, then the heads of the group — so the CTAs running at once share the group's K/V in L2. */
__device__ __forceinline__ Work work_at(const fc_problem &p, const FwdArgs &a, int w, int bm)
{
    const int hg = a.head_group, per_group = a.n_items * hg;
    const int g = w / per_group, within = w - g * per_group;
    const int heads = min(hg, (int)p.Nq - g * hg);
    const int2 it = a.items[within / heads];
    return Work{it.x, g * hg + within % heads, it.y * bm};
}

/* The kv tiles [t0, t1) an item visits and [full_lo, full_hi), those every written row sees
 * whole (no mask).  Computed by a whole warp from the rows' spans; every role computes it the
 * same way, so producer, fixer and consumers agree on the tile sequence without talking. */
struct KvTiles {
    int t0, t1, full_lo, full_hi;
};

template <int BM, int BN> __device__ __forceinline__ KvTiles kv_tiles(const fc_batch &bt, int m0, int lane)
{
    const int64_t rows = bt.q_rows - m0 < BM ? bt.q_rows - m0 : BM;
    int lo = INT_MAX, hi = 0, flo = 0, fhi = INT_MAX, gaps = 0;
    for (int r = lane; r < rows; r += 32) {
        int64_t sp[4];
        fc_row_spans(&bt, m0 + r, sp);
        const bool seen = sp[0] < sp[1] || sp[2] < sp[3];
        const bool one = sp[1] <= sp[0] || sp[3] <= sp[2] || sp[1] == sp[2]; /* one run of columns */
        const int a = (int)(sp[1] > sp[0] ? sp[0] : sp[2]), z = (int)(sp[3] > sp[2] ? sp[3] : sp[1]);
        if (seen)
            lo = min(lo, a), hi = max(hi, z);
        gaps |= !one;
        /* rows seeing nothing (padding rows included) must be masked in every tile */
        flo = max(flo, seen ? (a + BN - 1) / BN : INT_MAX);
        fhi = min(fhi, seen ? z / BN : 0);
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
        lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
        flo = max(flo, __shfl_xor_sync(0xffffffffu, flo, o));
        fhi = min(fhi, __shfl_xor_sync(0xffffffffu, fhi, o));
        gaps |= __shfl_xor_sync(0xffffffffu, gaps, o);
    }
    if (lo >= hi)
        return KvTiles{0, 0, 0, 0};
    if (gaps) /* a row with a prefix gap: its full tiles are not one range; mask every tile */
        flo = fhi = 0;
    return KvTiles{lo / BN, (hi + BN - 1) / BN, flo, fhi};
}

/* Whether kv tile t of the batch loads rows past its last key that the map still covers (PAGED:
 * rows past the last key always hold something, page_seg's or another key's slots). */
template <int BN, bool PAGED = false> __device__ __forceinline__ bool needs_fix(const fc_batch &bt, const FwdArgs &a, int t)
{
    if constexpr (PAGED)
        return (int64_t)(t + 1) * BN > bt.skv;
    else
        return (int64_t)(t + 1) * BN > bt.skv && bt.kv_tok + bt.skv < a.kv_extent;
}

/* Where rows [t·BN + seg·R, + R) of batch b lie in the page pool (R = a.page_rows divides the block
 * size, so they are one page's): (block, first slot).  A segment past the batch's last key reads
 * the last one holding keys instead — its entry is one the run's check covered, entries past the
 * batch's length are never read; what such rows hold is masked in the scores and zeroed in the
 * values by the edge fixer. */
template <int BN> __device__ __forceinline__ int2 page_seg(const fc_problem &p, const FwdArgs &a, const fc_batch &bt, int b, int t, int seg)
{
    const fc_pages &pg = p.k.pages;
    const int r = a.page_rows, skv = (int)bt.skv; /* positions stay below 2^30 (fwd_unsupported) */
    const int bs = pg.block_size < (1 << 30) ? (int)pg.block_size : (1 << 30); /* larger blocks act alike */
    int pos = t * BN + seg * r;
    pos = pos < skv ? pos : (skv - 1) / r * r;
    const int page = pos / bs;
    return make_int2(pg.table[b * pg.table_stride + page], pos - page * bs);
}

/* A ring slot: the n-th kv tile of the CTA lives in stage n mod STAGES, phase (n / STAGES) mod 2. */
template <int STAGES> struct Slot {
    int stage;
    uint32_t phase;
    __device__ __forceinline__ explicit Slot(uint32_t n) : stage((int)(n % STAGES)), phase((n / STAGES) & 1u) {}
};

/* One warpgroup GEMM batch: c (+)= a·b over the k-blocks, committed as one wgmma group (A_REGS:
 * a is a register operand, fenced like the accumulator). */
template <bool ZERO, bool A_REGS, class Mma, class TA, class TB, class TC>
__device__ __forceinline__ void wg_gemm(Mma &mma, TA &a, const TB &b, TC &c)
{
    if constexpr (A_REGS)
        cute::warpgroup_fence_operand(a);
    cute::warpgroup_fence_operand(c);
    cute::warpgroup_arrive();
    if constexpr (ZERO)
        mma.accumulate_ = cute::GMMA::ScaleOut::Zero;
    CUTE_UNROLL
    for (int k = 0; k < cute::size<2>(a); ++k) {
        cute::gemm(mma, a(cute::_, cute::_, k), b(cute::_, cute::_, k), c);
        mma.accumulate_ = cute::GMMA::ScaleOut::One;
    }
    cute::warpgroup_commit_batch();
    cute::warpgroup_fence_operand(c);
    if constexpr (A_REGS)
        cute::warpgroup_fence_operand(a);
}

using fc_cuda::span_has; /* (tile.cuh) */

/* The paged producer's key and value tiles of one item (the whole warp): lane i < BN / R issues the
 * bulk copies of rows [i·R, + R) of each tile, from the page its block-table entry names (read
 * before the stage is free); lane 0 waits for the stage and sets the expected bytes first. */
template <class Tr>
__device__ __forceinline__ void produce_pages(const fc_problem &p, const FwdArgs &a, typename Tr::Smem &s, const fc_batch &bt, int b,
                                              int n2, const KvTiles &kt, uint32_t kv_n, int lane)
{
    constexpr int BN = Tr::BN, CH = Tr::CHUNK, NC = Tr::D / CH;
    const int r = a.page_rows, mine = lane < BN / r;
    for (int t = kt.t0; t < kt.t1; t++) {
        const Slot<Tr::STAGES> sl(kv_n + (uint32_t)(t - kt.t0));
        const int2 at = mine ? page_seg<BN>(p, a, bt, b, t, lane) : make_int2(0, 0);
        const int off = sl.stage * BN * Tr::D + (mine ? lane * r * CH : 0); /* idle lanes: inside the stage (UBSan) */
        auto copy = [&](const CUtensorMap *map, uint64_t *full, uint64_t *empty, typename Tr::E *dst) {
            if (lane == 0) {
                mbar_wait(empty, sl.phase ^ 1u);
                mbar_arrive_tx(full, Tr::KV_BYTES);
            }
            __syncwarp();
            if (mine)
#pragma unroll
                for (int c = 0; c < NC; c++)
                    tma_load_4d(map, full, dst + c * BN * CH, c * CH, at.y, n2, at.x);
        };
        copy(&a.k, &s.k_full[sl.stage], &s.k_empty[sl.stage], s.k + off);
        copy(&a.v, &s.v_full[sl.stage], &s.v_empty[sl.stage], s.v + off);
    }
}

/* The producer warp: Q once per item, then K and V of each visible tile through the ring.  Q_LATE
 * (the TMA-store epilogue, whose consumers release Q's stage only after storing through it): the
 * item's first key tile goes before Q, so one load is in flight while the epilogue ends.  PAGED:
 * the tiles through produce_pages. */
template <class Tr, bool Q_LATE, bool PAGED = false>
__device__ __forceinline__ void produce(const fc_problem &p, const FwdArgs &a, typename Tr::Smem &s, int lane)
{
    static_assert(!(Q_LATE && PAGED), "the paged kernels store from registers");
    constexpr int BM = Tr::BM, BN = Tr::BN, CH = Tr::CHUNK, NC = Tr::D / CH;
    uint32_t q_n = 0, kv_n = 0;
    for (int w = blockIdx.x; w < a.n_work; w += gridDim.x) {
        const Work wk = work_at(p, a, w, BM);
        const fc_batch &bt = p.batch[wk.b];
        const KvTiles kt = kv_tiles<BM, BN>(bt, wk.m0, lane);
        if (kt.t0 >= kt.t1)
            continue; /* nothing visible: the consumers write empty rows without Q */
        if (lane == 0) {
            const int n2 = (int)(wk.n1 / p.G), qb = a.q_batched ? wk.b : 0, kb = a.kv_batched ? wk.b : 0;
            auto load_q = [&]() {
                mbar_wait(&s.q_empty, (q_n & 1u) ^ 1u);
                mbar_arrive_tx(&s.q_full, Tr::Q_BYTES);
#pragma unroll
                for (int c = 0; c < NC; c++)
                    tma_load_4d(&a.q, &s.q_full, s.q + c * BM * CH, c * CH, (int)bt.q_tok + wk.m0, wk.n1, qb);
            };
            if constexpr (!Q_LATE)
                load_q();
            for (int t = kt.t0; t < kt.t1 && !PAGED; t++) {
                const Slot<Tr::STAGES> sl(kv_n + (uint32_t)(t - kt.t0));
                const int row = (int)bt.kv_tok + t * BN;
                typename Tr::E *k = s.k + sl.stage * BN * Tr::D, *v = s.v + sl.stage * BN * Tr::D;
                mbar_wait(&s.k_empty[sl.stage], sl.phase ^ 1u);
                mbar_arrive_tx(&s.k_full[sl.stage], Tr::KV_BYTES);
#pragma unroll
                for (int c = 0; c < NC; c++)
                    tma_load_4d(&a.k, &s.k_full[sl.stage], k + c * BN * CH, c * CH, row, n2, kb);
                if constexpr (Q_LATE)
                    if (t == kt.t0)
                        load_q();
                mbar_wait(&s.v_empty[sl.stage], sl.phase ^ 1u);
                mbar_arrive_tx(&s.v_full[sl.stage], Tr::KV_BYTES);
#pragma unroll
                for (int c = 0; c < NC; c++)
                    tma_load_4d(&a.v, &s.v_full[sl.stage], v + c * BN * CH, c * CH, row, n2, kb);
            }
        }
        __syncwarp();
        if constexpr (PAGED)
            produce_pages<Tr>(p, a, s, bt, wk.b, (int)(wk.n1 / p.G), kt, kv_n, lane);
        q_n++;
        kv_n += (uint32_t)(kt.t1 - kt.t0);
    }
}

/* The edge-fixer warp, a stage of the value ring when the run has short batches or tiles that hide
 * pairs (a.edge_fixes): per tile in ring order it waits for the copy, zeroes the rows past the
 * batch's last key in an item's last tile when they hold other data, takes an inf or NaN out of a
 * tile that hides pairs (fc_cuda::poison_mark into the item's poison table, which it takes once
 * the consumers are done with the table's previous item), and releases the tile to the
 * consumers on v_fixed.
 * Never a phase early: tile n − STAGES of the stage was seen complete before, and the stage's
 * next copy needs the consumers, who wait here first. */
template <class Tr, bool PAGED = false>
__device__ __forceinline__ void fix_edges(const fc_problem &p, const FwdArgs &a, typename Tr::Smem &s, int lane)
{
    constexpr int BM = Tr::BM, BN = Tr::BN, CH = Tr::CHUNK, NC = Tr::D / CH;
    if (!a.edge_fixes)
        return;
    uint32_t kv_n = 0, item_n = 0; /* tiles and items with tiles so far */
    for (int w = blockIdx.x; w < a.n_work; w += gridDim.x) {
        const Work wk = work_at(p, a, w, BM);
        const fc_batch &bt = p.batch[wk.b];
        const KvTiles kt = kv_tiles<BM, BN>(bt, wk.m0, lane);
        if (kt.t0 >= kt.t1)
            continue;
        const int par = (int)(item_n & 1u);
        uint32_t *poison = s.poison[par];
        if (item_n >= 2) /* the consumers' epilogue of item_n − 2, which read this table */
            mbar_wait(&s.epi_done[par], ((item_n >> 1) - 1) & 1u);
        if (lane == 0)
            s.poisoned[par] = 0u; /* the table is zeroed when the item first marks it */
        __syncwarp();
        item_n++;
        const int rows = (int)min((int64_t)BM, bt.q_rows - wk.m0);
        for (int t = kt.t0; t < kt.t1; t++, kv_n++) {
            const Slot<Tr::STAGES> sl(kv_n);
            mbar_wait(&s.v_full[sl.stage], sl.phase);
            if (t == kt.t1 - 1 && needs_fix<BN, PAGED>(bt, a, t)) {
                const int valid = (int)(bt.skv - (int64_t)t * BN);
                /* a row of a chunk is 128 contiguous bytes whatever the swizzle: 8 pieces of 16 */
                char *base = reinterpret_cast<char *>(s.v + sl.stage * BN * Tr::D) + (lane % 8) * 16;
#pragma unroll 1
                for (int c = 0; c < NC; c++)
                    for (int r = valid + lane / 8; r < BN; r += 4)
                        *reinterpret_cast<uint4 *>(base + (c * BN + r) * 128) = make_uint4(0, 0, 0, 0);
                fence_async_smem();
            }
            __syncwarp();
            using TC = typename Tr::Cuda;
            TC *vt = reinterpret_cast<TC *>(s.v + sl.stage * BN * Tr::D);
            const bool hides = t < kt.full_lo || t >= kt.full_hi;
            if (__any_sync(0xffffffffu, hides && fc_cuda::tile_nonfinite<TC, Tr::D, BN, 32>(vt, lane))) {
                if (!s.poisoned[par])
                    for (int x = lane; x < BM * Tr::D / 16; x += 32)
                        poison[x] = 0u;
                __syncwarp();
                fc_cuda::poison_mark<TC, Tr::D, BN, 32, true>(vt, poison, rows, lane, [&](int r, int j) {
                    int64_t sp[4];
                    fc_row_spans(&bt, wk.m0 + r, sp);
                    const int64_t c = (int64_t)t * BN + j;
                    return (c >= sp[0] && c < sp[1]) || (c >= sp[2] && c < sp[3]);
                });
                fence_async_smem(); /* the zeros, before P·V reads the tile through the async proxy */
                __syncwarp();
                if (lane == 0)
                    s.poisoned[par] = 1u;
            }
            __syncwarp();
            if (lane == 0)
                mbar_arrive(&s.v_fixed[sl.stage]);
        }
    }
}

/* S → P (in place) for one tile: the rows' online-softmax step (semantics §2.6), per row h of
 * the thread's two; alpha receives each row's rescale factor.  The positive scale is folded into
 * the exponent (scale·log2 e), so the maximum is taken over the raw products. */
template <class TS>
__device__ __forceinline__ void softmax_step(TS &sc, float (&m)[2], float (&l)[2], float (&alpha)[2], float scale)
{
    constexpr int NV = cute::size(TS{});
    const float xl2 = scale * kLog2e;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float mx = -INFINITY;
#pragma unroll
        for (int k = 0; k < NV / 4; k++)
            mx = fc_cuda::max_nan(mx, fc_cuda::max_nan(sc(4 * k + 2 * h), sc(4 * k + 2 * h + 1)));
        mx = fc_cuda::max_nan(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fc_cuda::max_nan(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fc_cuda::max_nan(m[h], mx * scale);
        const float ref2 = (m_new == -INFINITY ? 0.0f : m_new) * kLog2e;
        alpha[h] = fc_cuda::fast_exp2(m[h] * kLog2e - ref2);
        m[h] = m_new;
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < NV / 4; k++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
                float &x = sc(4 * k + 2 * h + c);
                x = fc_cuda::fast_exp2(fmaf(x, xl2, -ref2));
                sum += x;
            }
        l[h] = fmaf(l[h], alpha[h], sum);
    }
}

/* The kernel's body; TMA_OUT: the TMA-store epilogue (a variant, FLASHC_CUDA_FWD_EPILOGUE=tma) —
 * a warpgroup's 64 output rows are written into its rows of Q's stage (CuTe's layout of Q, the
 * 128-byte swizzle the store's map reads), fenced for the async proxy, and stored by one thread
 * as one box per 64 features; Q's stage is released after the store has read it.  PAGED: key and
 * value from a page pool (produce_pages, FwdArgs::page_rows); a run whose block-table check found
 * a bad entry writes nothing, its first CTA reports the entry. */
template <typename T, int D, int WG, bool TMA_OUT, bool PAGED = false>
__device__ __forceinline__ void fwd_body(const fc_problem &p, const FwdArgs &a)
{
    using Tr = FwdTraits<T, D, WG>;
    using E = typename Tr::E;
    constexpr int BM = Tr::BM, BN = Tr::BN, STAGES = Tr::STAGES;
    extern __shared__ char smem_raw[];
    typename Tr::Smem &s = *reinterpret_cast<typename Tr::Smem *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~(uintptr_t)1023);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if constexpr (PAGED) {
        const unsigned long long fault = *a.fault;
        if (fault >> 32) {
            if (blockIdx.x == 0 && threadIdx.x == 0)
                fc_cuda::dec_report(a.report, p, nullptr, fault, true);
            return;
        }
    }

    if (threadIdx.x == 0) {
        mbar_init(&s.q_full, 1);
        mbar_init(&s.q_empty, Tr::MMA_THREADS);
        mbar_init(&s.epi_done[0], Tr::MMA_THREADS / 32), mbar_init(&s.epi_done[1], Tr::MMA_THREADS / 32);
        s.poisoned[0] = s.poisoned[1] = 0u;
        for (int i = 0; i < STAGES; i++) {
            mbar_init(&s.k_full[i], 1), mbar_init(&s.v_full[i], 1), mbar_init(&s.v_fixed[i], 1);
            mbar_init(&s.k_empty[i], Tr::MMA_THREADS), mbar_init(&s.v_empty[i], Tr::MMA_THREADS);
        }
        mbar_init_fence();
    }
    if (warp == 0 && lane == 0) {
        tma_prefetch_map(&a.q), tma_prefetch_map(&a.k), tma_prefetch_map(&a.v);
        if (TMA_OUT && a.o_tma)
            tma_prefetch_map(&a.o);
    }
    __syncthreads();

    if (warp < 4) { /* the producer warpgroup */
        regs_shrink<Tr::REGS_PRODUCER>();
        if (warp == 0)
            produce<Tr, TMA_OUT, PAGED>(p, a, s, lane);
        else if (warp == 1)
            fix_edges<Tr, PAGED>(p, a, s, lane);
        return;
    }
    regs_grow<Tr::REGS_MMA>();

    /* the consumer warpgroups */
    const int ct = threadIdx.x - 128;
    typename Tr::MmaQK mma_qk;
    typename Tr::MmaPV mma_pv;
    auto thr_qk = mma_qk.get_thread_slice(ct);
    auto thr_pv = mma_pv.get_thread_slice(ct);
    cute::Tensor sQ = cute::make_tensor(cute::make_smem_ptr(s.q), typename Tr::LayoutQ{});
    cute::Tensor sK = cute::make_tensor(cute::make_smem_ptr(s.k), typename Tr::LayoutKV{});
    cute::Tensor sVt = cute::make_tensor(cute::make_smem_ptr(s.v), typename Tr::LayoutVt{});
    cute::Tensor tSrQ = thr_qk.partition_fragment_A(sQ);  /* (MMA, 1, D/16) descriptors */
    cute::Tensor tSrK = thr_qk.partition_fragment_B(sK);  /* (MMA, 1, D/16, STAGES) */
    cute::Tensor tOrV = thr_pv.partition_fragment_B(sVt); /* (MMA, 1, BN/16, STAGES) */
    cute::Tensor tSrS = cute::partition_fragment_C(mma_qk, cute::Shape<cute::Int<BM>, cute::Int<BN>>{});
    cute::Tensor tOrO = cute::partition_fragment_C(mma_pv, cute::Shape<cute::Int<BM>, cute::Int<D>>{});
    cute::Tensor tOrP = cute::make_tensor<E>(cute::partition_shape_A(mma_pv, cute::Shape<cute::Int<BM>, cute::Int<BN>>{}));
    /* The accumulators' (row, column) pairs (wgmma's m64nNk16 layout, checked against CuTe's on
     * the host by tests/cuda/test_hopper_layouts): value i = c + 2h + 4k of a thread is row
     * 64·wg + 16·(warp % 4) + lane / 4 + 8h, column 8k + 2·(lane % 4) + c — for S, for O, and
     * for P as the A operand of P·V, so P is S converted value by value. */
    static_assert(decltype(cute::size(typename decltype(tSrS)::layout_type{}))::value == BN / 2 &&
                      decltype(cute::size(typename decltype(tOrP)::layout_type{}))::value == BN / 2 &&
                      decltype(cute::size(typename decltype(tOrO)::layout_type{}))::value == D / 2,
                  "two rows per thread: BN/2 scores, D/2 outputs");
    const int row0 = 16 * (ct / 32) + lane / 4, col0 = 2 * (lane % 4);
    const int row_in_tile[2] = {row0, row0 + 8};

    /* Ping-pong (a.pingpong): the consumer warpgroups take turns issuing their GEMMs in a ring,
     * each waiting on its named barrier (1 + wg) for the previous one's arrival, so that one's
     * softmax runs under the others' products.  Each barrier joins two warpgroups (one arrives,
     * one waits).  All issue the same number of batches (every item's tiles), so the turns stay
     * in step; the last warpgroup lets warpgroup 0 start, which leaves one arrival on barrier 1
     * at the end, harmless at exit. */
    const int wg = ct / 128;
    const int next_wg = WG == 2 ? wg ^ 1 : (wg + 1) % WG;
    const bool pingpong = a.pingpong != 0;
    auto my_turn = [&]() {
        if (pingpong)
            named_sync(1 + wg, 256);
    };
    auto their_turn = [&]() {
        if (pingpong)
            named_arrive(1 + next_wg, 256);
    };
    if (pingpong && wg == WG - 1)
        named_arrive(1, 256);

    /* items with Q loaded, kv tiles consumed */
    uint32_t q_n = 0, kv_n = 0;
    for (int w = blockIdx.x; w < a.n_work; w += gridDim.x) {
        const Work wk = work_at(p, a, w, BM);
        const fc_batch &bt = p.batch[wk.b];
        const KvTiles kt = kv_tiles<BM, BN>(bt, wk.m0, lane);
        int4 span[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int64_t sp[4];
            fc_row_spans(&bt, wk.m0 + row_in_tile[h], sp);
            span[h] = make_int4((int)sp[0], (int)sp[1], (int)sp[2], (int)sp[3]);
        }
        float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, alpha[2];
        cute::clear(tOrO);
        const int par = (int)(q_n & 1u); /* the item's poison table (items with tiles count) */

        /* S of tile t: wait for K, multiply; the mask on tiles not every row sees whole */
        auto mask = [&](int t) {
            if (t >= kt.full_lo && t < kt.full_hi)
                return;
#pragma unroll
            for (int i = 0; i < cute::size(tSrS); i++) {
                const int j = t * BN + col0 + 8 * (i / 4) + i % 2;
                tSrS(i) = span_has(span[(i / 2) % 2], j) ? tSrS(i) : -INFINITY;
            }
        };
        auto to_p = [&]() { /* P rounded to the operand dtype for P·V */
            auto p32 = cute::recast<uint32_t>(tOrP);
#pragma unroll
            for (int i = 0; i < cute::size(p32); i++)
                p32(i) = fc_cuda::Elem<T>::pack(tSrS(2 * i), tSrS(2 * i + 1));
        };
        auto rescale = [&]() {
#pragma unroll
            for (int i = 0; i < cute::size(tOrO); i++)
                tOrO(i) *= alpha[(i / 2) % 2];
        };
        auto wait_v = [&](const Slot<STAGES> &sl) {
            mbar_wait(&s.v_full[sl.stage], sl.phase);
            if (a.edge_fixes) /* the fixer's release of the tile: one phase per tile, like v_full */
                mbar_wait(&s.v_fixed[sl.stage], sl.phase);
        };

        if (kt.t0 < kt.t1 && !Tr::OVERLAP) { /* one tile at a time: fewer live registers (D = 256) */
            mbar_wait(&s.q_full, q_n & 1u);
            for (int t = kt.t0; t < kt.t1; t++) {
                const Slot<STAGES> cur(kv_n + (uint32_t)(t - kt.t0));
                mbar_wait(&s.k_full[cur.stage], cur.phase);
                my_turn();
                wg_gemm<true, false>(mma_qk, tSrQ, tSrK(cute::_, cute::_, cute::_, cur.stage), tSrS);
                their_turn();
                cute::warpgroup_wait<0>();
                mbar_arrive(&s.k_empty[cur.stage]);
                if (!TMA_OUT && t == kt.t1 - 1)
                    mbar_arrive(&s.q_empty);
                mask(t);
                softmax_step(tSrS, m, l, alpha, p.scale);
                rescale();
                to_p();
                wait_v(cur);
                my_turn();
                wg_gemm<false, true>(mma_pv, tOrP, tOrV(cute::_, cute::_, cute::_, cur.stage), tOrO);
                their_turn();
                cute::warpgroup_wait<0>();
                mbar_arrive(&s.v_empty[cur.stage]);
            }
            q_n++;
            kv_n += (uint32_t)(kt.t1 - kt.t0);
        } else if (kt.t0 < kt.t1) { /* the next tile's Q·Kᵀ issued before this tile's P·V */
            mbar_wait(&s.q_full, q_n & 1u);
            Slot<STAGES> sl(kv_n);
            mbar_wait(&s.k_full[sl.stage], sl.phase);
            my_turn();
            wg_gemm<true, false>(mma_qk, tSrQ, tSrK(cute::_, cute::_, cute::_, sl.stage), tSrS);
            their_turn();
            cute::warpgroup_wait<0>();
            mbar_arrive(&s.k_empty[sl.stage]);
            mask(kt.t0);
            softmax_step(tSrS, m, l, alpha, p.scale);
            to_p();
            for (int t = kt.t0 + 1; t < kt.t1; t++) {
                const Slot<STAGES> prev(kv_n + (uint32_t)(t - 1 - kt.t0)), cur(kv_n + (uint32_t)(t - kt.t0));
                mbar_wait(&s.k_full[cur.stage], cur.phase);
                wait_v(prev);
                my_turn();
                wg_gemm<true, false>(mma_qk, tSrQ, tSrK(cute::_, cute::_, cute::_, cur.stage), tSrS);
                wg_gemm<false, true>(mma_pv, tOrP, tOrV(cute::_, cute::_, cute::_, prev.stage), tOrO);
                their_turn();
                cute::warpgroup_wait<1>(); /* S(t) is ready; P(t − 1)·V(t − 1) may still run */
                mbar_arrive(&s.k_empty[cur.stage]);
                mask(t);
                softmax_step(tSrS, m, l, alpha, p.scale);
                cute::warpgroup_wait<0>();
                mbar_arrive(&s.v_empty[prev.stage]);
                rescale();
                to_p();
            }
            if constexpr (!TMA_OUT)
                mbar_arrive(&s.q_empty); /* every Q·Kᵀ of the item has completed */
            const Slot<STAGES> last(kv_n + (uint32_t)(kt.t1 - 1 - kt.t0));
            wait_v(last);
            my_turn();
            wg_gemm<false, true>(mma_pv, tOrP, tOrV(cute::_, cute::_, cute::_, last.stage), tOrO);
            their_turn();
            cute::warpgroup_wait<0>();
            mbar_arrive(&s.v_empty[last.stage]);
            q_n++;
            kv_n += (uint32_t)(kt.t1 - kt.t0);
        }

        /* One division per row, then O and the statistics (semantics §2.6, §2.8); rows past the
         * batch's written rows are never stored; first the values the fixer took out of P·V added
         * back to O. */
        const int rows_here = (int)min((int64_t)BM, bt.q_rows - wk.m0);
        if (a.edge_fixes && kt.t0 < kt.t1 && s.poisoned[par] != 0u) {
#pragma unroll
            for (int i = 0; i < cute::size(tOrO); i++) /* an empty row stays zeros: its O is not stored */
                tOrO(i) = fc_cuda::poisoned<D>(s.poison[par], row_in_tile[(i / 2) % 2], col0 + 8 * (i / 4) + i % 2, tOrO(i));
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float sum = l[h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            l[h] = sum;
        }
        /* The TMA store takes a warpgroup's whole 64-row tile when the batch has every row of it, or
         * the map clips the rows it lacks (the last rows of the tensor); else rows go from
         * registers (a packed batch's neighbour, padding rows).  Items without visible keys
         * loaded no Q: registers too. */
        bool staged = false;
        if constexpr (TMA_OUT) {
            const int mine = rows_here - 64 * wg;
            staged = a.o_tma && kt.t0 < kt.t1 && mine > 0 && (mine >= 64 || bt.q_tok + wk.m0 + rows_here >= a.q_extent);
            if (staged) {
                /* Q's layout: [64-feature chunk][row][128 bytes], 16-byte piece j of row r at piece
                 * j ^ (r % 8) (the 128-byte swizzle); value pair k of a thread is piece k % 8 of
                 * chunk k / 8, and both its rows have r % 8 = lane / 4 */
                char *base = reinterpret_cast<char *>(s.q) + row_in_tile[0] * 128 + 2 * col0;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const bool empty = l[h] == 0.0f; /* a NaN sum (NaN or +inf logit) leaves the row NaN (§0.3) */
                    const float f = empty ? 0.0f : 1.0f / l[h];
#pragma unroll
                    for (int k = 0; k < cute::size(tOrO) / 4; k++) { /* an empty row is zeros whatever O holds */
                        const float x0 = empty ? 0.0f : tOrO(4 * k + 2 * h) * f, x1 = empty ? 0.0f : tOrO(4 * k + 2 * h + 1) * f;
                        *reinterpret_cast<uint32_t *>(base + (k / 8) * BM * 128 + h * 8 * 128 + ((k % 8) ^ (lane / 4)) * 16) =
                            fc_cuda::Elem<T>::pack(x0, x1);
                    }
                }
                fence_async_smem(); /* each writer's, before the barrier: the store reads through the async proxy */
                named_sync(1 + WG + wg, 128);
                if (ct % 128 == 0) {
                    const int pos = (int)bt.q_tok + wk.m0 + 64 * wg, ob = a.o_batched ? wk.b : 0;
                    for (int c = 0; c * Tr::CHUNK < p.Dv; c++)
                        tma_store_4d(&a.o, s.q + (c * BM + 64 * wg) * Tr::CHUNK, c * Tr::CHUNK, pos, wk.n1, ob);
                    bulk_commit();
                    bulk_wait_read<0>(); /* before this thread's release of Q's stage */
                }
            }
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = row_in_tile[h];
            if (r >= rows_here)
                continue;
            const int64_t i = wk.m0 + r;
            const bool empty = l[h] == 0.0f; /* a NaN sum (NaN or +inf logit) leaves the row NaN (§0.3) */
            const float f = empty ? 0.0f : 1.0f / l[h];
            char *row = fc_view_row(&p.out, 2, wk.b, bt.q_tok, wk.n1, i);
#pragma unroll
            for (int k = 0; k < cute::size(tOrO) / 4 && !staged; k++) {
                const int e = col0 + 8 * k;
                if (e >= p.Dv)
                    break;
                const float x0 = empty ? 0.0f : tOrO(4 * k + 2 * h) * f, x1 = empty ? 0.0f : tOrO(4 * k + 2 * h + 1) * f;
                if (a.pair_out && e + 1 < p.Dv) {
                    *reinterpret_cast<uint32_t *>(row + e * 2) = fc_cuda::Elem<T>::pack(x0, x1);
                } else {
                    *reinterpret_cast<T *>(row + e * p.out.se * 2) = T(x0);
                    if (e + 1 < p.Dv)
                        *reinterpret_cast<T *>(row + (e + 1) * p.out.se * 2) = T(x1);
                }
            }
            if (p.stats.max && lane % 4 == 0)
                fc_stat_store(&p.stats, fc_stat_offset(&p, &bt, wk.n1, i), empty ? -FLT_MAX : m[h], empty ? FLT_MAX : l[h]);
        }
        if constexpr (TMA_OUT)
            if (kt.t0 < kt.t1)
                mbar_arrive(&s.q_empty);
        if (a.edge_fixes && kt.t0 < kt.t1) { /* this warp is done with the item's poison table */
            __syncwarp();
            if (lane == 0)
                mbar_arrive(&s.epi_done[par]);
        }
    }
}

template <typename T, int D, int WG>
__global__ void __launch_bounds__(FwdTraits<T, D, WG>::THREADS, 1)
    fwd_hopper_kernel(const __grid_constant__ fc_problem p, const __grid_constant__ FwdArgs a)
{
    fwd_body<T, D, WG, false>(p, a);
}

/* The paged key/value variant (two consumer warpgroups, register stores). */
template <typename T, int D>
__global__ void __launch_bounds__(FwdTraits<T, D, 2>::THREADS, 1)
    fwd_hopper_kernel_paged(const __grid_constant__ fc_problem p, const __grid_constant__ FwdArgs a)
{
    fwd_body<T, D, 2, false, true>(p, a);
}

/* The TMA-store epilogue's variant (two consumer warpgroups). */
template <typename T, int D>
__global__ void __launch_bounds__(FwdTraits<T, D, 2>::THREADS, 1)
    fwd_hopper_kernel_tma_store(const __grid_constant__ fc_problem p, const __grid_constant__ FwdArgs a)
{
    fwd_body<T, D, 2, true>(p, a);
}

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_FWD_KERNEL_CUH */
