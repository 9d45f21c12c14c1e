/*
 * The Hopper forward's static shape: tile sizes per head-dim class, the shared-memory layouts
 * (CuTe's 128-byte-swizzled K-major atoms, the layout the bulk tensor copies write), the two
 * wgmma tilings (S = Q·Kᵀ from shared memory, O += P·V with P in registers) and the
 * shared-memory plan.  Everything here is a compile-time fact, checked by static_asserts; the
 * kernel (fwd_kernel.cuh) and its host side (fwd_host.cu) read it.
 */
#ifndef FC_CUDA_HOPPER_FWD_TRAITS_CUH
#define FC_CUDA_HOPPER_FWD_TRAITS_CUH

/* the 8-column-multiple wgmma widths (80, 176, ...) the tile table may pick */
#ifndef CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cute/arch/mma_sm90.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/tensor.hpp>

namespace fc_hopper {

/* CuTe's name for each 16-bit element type (the same bits). */
template <typename T> struct CuteOf;
template <> struct CuteOf<__half> { using type = cute::half_t; };
template <> struct CuteOf<__nv_bfloat16> { using type = cute::bfloat16_t; };

/* Tile sizes per head-dim class (Dqk and Dv ≤ D, features past them load as zeros): kv rows per
 * tile BN and the depth of the K and V rings.  Query rows: 64 per consumer warpgroup, two of
 * them.  Experiment builds try other widths with -DFC_HOPPER_TRY_BN64=.. / _BN128 / _BN256
 * (a second library built that way is compared with the default in the same GPU call). */
#ifndef FC_HOPPER_TRY_BN64
#define FC_HOPPER_TRY_BN64 128
#endif
#ifndef FC_HOPPER_TRY_BN128
#define FC_HOPPER_TRY_BN128 128
#endif
#ifndef FC_HOPPER_TRY_BN256
#define FC_HOPPER_TRY_BN256 64
#endif
template <int D> struct FwdTile;
template <> struct FwdTile<64> { static constexpr int BN = FC_HOPPER_TRY_BN64, STAGES = 2; };
template <> struct FwdTile<128> { static constexpr int BN = FC_HOPPER_TRY_BN128, STAGES = 2; };
template <> struct FwdTile<256> { static constexpr int BN = FC_HOPPER_TRY_BN256, STAGES = 2; };

/* WG_ consumer warpgroups of 64 query rows: two by default; three (192-row items) is a variant of
 * head-dim class 64, where the softmax weighs most against the products (FLASHC_CUDA_FWD_D64). */
template <typename T, int D_, int WG_ = 2> struct FwdTraits {
    using E = typename CuteOf<T>::type;
    using Cuda = T; /* the operand type as the CUDA headers name it */
    static constexpr int D = D_, BN = FwdTile<D>::BN, STAGES = FwdTile<D>::STAGES;
    static constexpr int MMA_WG = WG_, BM = 64 * MMA_WG;          /* consumer warpgroups × 64 query rows */
    static constexpr int THREADS = 128 * (MMA_WG + 1);            /* + the producer warpgroup */
    static constexpr int MMA_THREADS = 128 * MMA_WG;
    static constexpr int CHUNK = 64;                              /* features per 128-byte swizzle row */
    /* the next tile's Q·Kᵀ overlaps this tile's softmax and P·V where S, P and O fit the
     * registers together (D ≤ 128); D = 256 takes one tile at a time */
    static constexpr bool OVERLAP = D <= 128 && MMA_WG == 2; /* three warpgroups: registers for one tile */
    /* setmaxnreg: what the producer warpgroup keeps (its code fits without spills: with the edge
     * fixer's poison_mark, 56 / 56 / 64 where 40 / 48 / 56 did before) and the consumers take;
     * 128·producer + 128·MMA_WG·consumer ≤ 64 K registers */
    static constexpr int REGS_PRODUCER = MMA_WG == 3 ? 56 : D <= 128 ? 56 : 64;
    static constexpr int REGS_MMA = MMA_WG == 3 ? 152 : D <= 128 ? 224 : 216;
    static_assert(MMA_WG == 2 || (MMA_WG == 3 && D <= 64), "three consumer warpgroups: head-dim class 64 only (registers)");

    static_assert(D % CHUNK == 0, "head-dim classes are whole 128-byte rows");
    static_assert(BN % 16 == 0 && BN <= 256, "kv tile: whole wgmma k-steps of P·V, one TMA box");
    static_assert(BM <= 256, "one TMA box of query rows");
    static_assert(128 * REGS_PRODUCER + MMA_THREADS * REGS_MMA <= 65536, "register file");

    /* Shared-memory layouts: [feature chunk][row][64 features], each 8-row × 128-byte block
     * XOR-swizzled as the TMA's 128-byte mode writes it (so one TMA box per chunk). */
    using Atom = cute::GMMA::Layout_K_SW128_Atom<E>;
    using LayoutQ = decltype(cute::tile_to_shape(Atom{}, cute::Shape<cute::Int<BM>, cute::Int<D>>{}));
    using LayoutKV = decltype(cute::tile_to_shape(Atom{}, cute::Shape<cute::Int<BN>, cute::Int<D>, cute::Int<STAGES>>{}));
    /* V as P·V's B operand (features × kv rows × stage): the same bytes read MN-major */
    using LayoutVt = decltype(cute::composition(
        LayoutKV{}, cute::make_layout(cute::Shape<cute::Int<D>, cute::Int<BN>, cute::Int<STAGES>>{},
                                      cute::Stride<cute::Int<BN>, cute::_1, cute::Int<BN * D>>{})));

    /* Each consumer warpgroup multiplies its 64 query rows. */
    using MmaQK = decltype(cute::make_tiled_mma(
        cute::GMMA::ss_op_selector<E, E, float, cute::Shape<cute::_64, cute::Int<BN>, cute::Int<D>>>(),
        cute::Layout<cute::Shape<cute::Int<MMA_WG>, cute::_1, cute::_1>>{}));
    using MmaPV = decltype(cute::make_tiled_mma(
        cute::GMMA::rs_op_selector<E, E, float, cute::Shape<cute::_64, cute::Int<D>, cute::Int<BN>>, cute::GMMA::Major::K,
                                   cute::GMMA::Major::MN>(),
        cute::Layout<cute::Shape<cute::Int<MMA_WG>, cute::_1, cute::_1>>{}));

    /* Bytes of one TMA box (a feature chunk of a tile) and of whole tiles. */
    static constexpr int Q_BOX = BM * CHUNK * 2, KV_BOX = BN * CHUNK * 2;
    static constexpr int Q_BYTES = BM * D * 2, KV_BYTES = BN * D * 2;
    static_assert(Q_BOX % 1024 == 0 && KV_BOX % 1024 == 0, "every box starts on a swizzle period (1024 bytes)");

    struct Smem {
        alignas(1024) E q[BM * D];
        alignas(1024) E k[STAGES * BN * D];
        alignas(1024) E v[STAGES * BN * D];
        uint64_t q_full, q_empty;
        /* v_fixed: the edge fixer has released the stage's value tile (one phase per tile, when the
         * run has short batches) */
        uint64_t k_full[STAGES], k_empty[STAGES], v_full[STAGES], v_empty[STAGES], v_fixed[STAGES];
        /* Values the edge fixer took out of P·V (an inf or NaN in a tile that hides pairs), per
         * parity of the CTA's items with tiles: 2 bits per (row, feature) (fc_cuda::poison_mark's
         * classes), whether any is set, and the consumers' end of each item's epilogue (one arrival
         * per consumer warp), after which the fixer may clear that parity for a later item. */
        uint32_t poison[2][BM * D / 16];
        uint32_t poisoned[2];
        uint64_t epi_done[2];
    };
    static constexpr size_t SMEM = sizeof(Smem) + 1024; /* + the slack that aligns the dynamic base */
    static_assert(SMEM <= 227 * 1024, "Hopper's shared memory per block");
};

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_FWD_TRAITS_CUH */
