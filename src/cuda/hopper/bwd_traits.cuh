/*
 * The Hopper backward's static shape: per CTA a kv tile of BN = 128 keys (64 per MMA warpgroup),
 * query tiles of BM = 64 rows streamed through a ring of STAGES, the shared-memory layouts (the
 * forward's 128-byte-swizzled K-major atoms, as the bulk copies write them; dS stored MN-major)
 * and the wgmma tilings of the five products, all from shared memory:
 *     S = Q·Kᵀ, dP = dO·Vᵀ             (the warpgroups split the keys: each thread holds two query
 *                                       rows, so two rows' statistics)
 *     dV += Pᵀ·dO, dK += dSᵀ·Q         (P and dS stored transposed, keys contiguous; the warpgroups
 *                                       split the keys)
 *     dQ partial = dS·K                 (the same dS bytes read K-major; the warpgroups split the features)
 * Compile-time facts, checked by static_asserts; the kernel is bwd_kernel.cuh.
 */
#ifndef FC_CUDA_HOPPER_BWD_TRAITS_CUH
#define FC_CUDA_HOPPER_BWD_TRAITS_CUH

#define FC_CUDA_BWD_SINK_ELSEWHERE /* the dsink kernel is backward.cu's alone */
#include "../backward_common.cuh"
#include "bwd.h"
#include "fwd_traits.cuh"

namespace fc_hopper {

/* A query row's facts for one step, in shared memory: its visible columns, the statistics as one
 * exp2 offset — P = exp2(s·scale·log2 e − lse2), lse2 = max·log2 e + log2 sum (one value per row
 * where max and 1/sum were two: the MMA threads hold two rows' worth) — D, and whether it sees
 * every column of the kv tile (or is not a row of the batch). */
struct BwdRow {
    int4 span;
    float lse2, dsum;
    int cover, pad;
};

template <typename T, int D_> struct BwdTraits {
    using E = typename CuteOf<T>::type;
    static constexpr int D = D_, BN = kBwdKvRows, BM = kBwdQRows, STAGES = 2;
    static constexpr int MMA_WG = 2, THREADS = 128 * (MMA_WG + 1), MMA_THREADS = 128 * MMA_WG;
    static constexpr int CHUNK = 64; /* features per 128-byte swizzle row */
    /* setmaxnreg: the producer warpgroup (TMA, the row facts, edge zeroing) keeps few; the MMA
     * warpgroups hold dK and dV (D/2 floats each), S and dP (BN/4 each) or the dQ partial (D/4) */
    static constexpr int REGS_PRODUCER = 56, REGS_MMA = 224;

    static_assert(D == 64 || D == 128, "head-dim classes 64 and 128");
    static_assert(BN == 64 * MMA_WG, "64 kv rows per MMA warpgroup");
    static_assert(BM == 64 && BN <= 256, "64 query rows (one wgmma M), one TMA box per tile and feature chunk");
    static_assert(128 * REGS_PRODUCER + MMA_THREADS * REGS_MMA <= 65536, "register file");

    using Atom = cute::GMMA::Layout_K_SW128_Atom<E>;
    using LayoutKV = decltype(cute::tile_to_shape(Atom{}, cute::Shape<cute::Int<BN>, cute::Int<D>>{}));
    /* one stage of the Q and dO rings (the kernel offsets the pointer: operand descriptors made
     * per step, not one per stage held in registers) */
    using LayoutQ = decltype(cute::tile_to_shape(Atom{}, cute::Shape<cute::Int<BM>, cute::Int<D>>{}));
    /* Q and dO as the B operand of dK and dV (features × query rows), K as dQ's (features × kv
     * rows): the same bytes read MN-major */
    using LayoutQt = decltype(cute::composition(
        LayoutQ{}, cute::make_layout(cute::Shape<cute::Int<D>, cute::Int<BM>>{}, cute::Stride<cute::Int<BM>, cute::_1>{})));
    using LayoutKt = decltype(cute::composition(
        LayoutKV{}, cute::make_layout(cute::Shape<cute::Int<D>, cute::Int<BN>>{}, cute::Stride<cute::Int<BN>, cute::_1>{})));
    /* Pᵀ and dSᵀ (kv rows × query rows), kv rows contiguous: the A operands of dV and dK (MN-major);
     * dS (query rows × kv rows): the same bytes as dQ's A operand, K-major */
    using LayoutPt = decltype(cute::tile_to_shape(cute::GMMA::Layout_MN_SW128_Atom<E>{},
                                                  cute::Shape<cute::Int<BN>, cute::Int<BM>>{}));
    using LayoutDS = decltype(cute::composition(
        LayoutPt{}, cute::make_layout(cute::Shape<cute::Int<BM>, cute::Int<BN>>{}, cute::Stride<cute::Int<BN>, cute::_1>{})));

    using MmaSdP = decltype(cute::make_tiled_mma(
        cute::GMMA::ss_op_selector<E, E, float, cute::Shape<cute::_64, cute::Int<BN / MMA_WG>, cute::Int<D>>>(),
        cute::Layout<cute::Shape<cute::_1, cute::Int<MMA_WG>, cute::_1>>{}));
    using MmaDKV = decltype(cute::make_tiled_mma(
        cute::GMMA::ss_op_selector<E, E, float, cute::Shape<cute::_64, cute::Int<D>, cute::Int<BM>>, cute::GMMA::Major::MN,
                                   cute::GMMA::Major::MN>(),
        cute::Layout<cute::Shape<cute::Int<MMA_WG>, cute::_1, cute::_1>>{}));
    using MmaDQ = decltype(cute::make_tiled_mma(
        cute::GMMA::ss_op_selector<E, E, float, cute::Shape<cute::_64, cute::Int<D / MMA_WG>, cute::Int<BN>>, cute::GMMA::Major::K,
                                   cute::GMMA::Major::MN>(),
        cute::Layout<cute::Shape<cute::_1, cute::Int<MMA_WG>, cute::_1>>{}));

    static constexpr int Q_BOX = BM * CHUNK * 2, KV_BOX = BN * CHUNK * 2;
    static constexpr int Q_BYTES = BM * D * 2, KV_BYTES = BN * D * 2;
    static_assert(Q_BOX % 1024 == 0 && KV_BOX % 1024 == 0, "every box starts on a swizzle period (1024 bytes)");

    struct Smem {
        alignas(1024) E k[BN * D];
        alignas(1024) E v[BN * D];
        alignas(1024) E q[STAGES * BM * D];
        alignas(1024) E dout[STAGES * BM * D];
        alignas(1024) E p[BN * BM];
        alignas(1024) E ds[BN * BM];
        BwdRow facts[STAGES][BM];            /* the step's query rows */
        int full[STAGES];                    /* every row of the step sees the whole kv tile: no mask */
        int unit[2];                         /* the claimed units, in claim order */
        int64_t turn_p, turn_a;              /* MMA thread 0's turn search: the unit's prefix tiles, A(qt) */
        uint64_t unit_full[2], unit_empty[2];
        uint64_t kv_full, kv_ready, kv_empty;
        uint64_t q_full[STAGES], q_ready[STAGES], q_empty[STAGES];
    };
    static constexpr size_t SMEM = sizeof(Smem) + 1024; /* + the slack that aligns the dynamic base */
    static_assert(SMEM <= 227 * 1024, "Hopper's shared memory per block");
};

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_BWD_TRAITS_CUH */
