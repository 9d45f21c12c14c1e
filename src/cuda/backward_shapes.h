/*
 * The backward kernels' tile shapes per head-dim class (backward.cu launches them; the emulated
 * tests run the same instantiations).
 */
#ifndef FC_CUDA_BACKWARD_SHAPES_H
#define FC_CUDA_BACKWARD_SHAPES_H

#include <type_traits>

#include "features.cuh"

namespace fc_cuda {

/* Tile shapes per head-dim class: the query tile of a dK/dV step (BMQ), the kv tile of a dQ
 * step (BN) and the features one dK/dV CTA accumulates (DC) — the largest that ptxas fits in
 * 255 registers without spills (docs/PERFORMANCE.md). */
template <int D> struct BwdShape;
template <> struct BwdShape<64> { static constexpr int BMQ = 64, BN = 64, DC = 64; };
template <> struct BwdShape<128> { static constexpr int BMQ = 32, BN = 64, DC = 128; };
template <> struct BwdShape<256> { static constexpr int BMQ = 32, BN = 32, DC = 128; };

/* The fused kernel's: its query tile (BMQ, also the accumulators' row padding) and features per
 * unit (DC); at D = 256 sixteen-row steps keep it inside 255 registers on sm_90a. */
template <int D> struct FusedShape;
template <> struct FusedShape<64> { static constexpr int BMQ = 64, DC = 64; };
template <> struct FusedShape<128> { static constexpr int BMQ = 32, DC = 128; };
template <> struct FusedShape<256> { static constexpr int BMQ = 16, DC = 128; };

/* The kFeatF32 kernels' (fp32 tiles, twice the bytes): smaller query steps (dK/dV) and kv tiles (dQ)
 * at classes 128 and 256, so that a CTA's shared memory stays within 227 KB (fc_bwd_f32_smem). */
template <int D> struct BwdShapeF32;
template <> struct BwdShapeF32<64> { static constexpr int BMQ = 64, BN = 64, DC = 64; };
template <> struct BwdShapeF32<128> { static constexpr int BMQ = 32, BN = 32, DC = 128; };
template <> struct BwdShapeF32<256> { static constexpr int BMQ = 16, BN = 16, DC = 128; };

/* The shapes of the kernels with features FEAT. */
template <int D, int FEAT> using BwdShapeFor = std::conditional_t<(FEAT & kFeatF32) != 0, BwdShapeF32<D>, BwdShape<D>>;

static_assert(BwdShape<64>::DC == BwdShapeF32<64>::DC && BwdShape<128>::DC == BwdShapeF32<128>::DC &&
                  BwdShape<256>::DC == BwdShapeF32<256>::DC,
              "the fp32 kernels split the features into the same parts");
static_assert(BwdShape<64>::DC == FusedShape<64>::DC && BwdShape<128>::DC == FusedShape<128>::DC &&
                  BwdShape<256>::DC == FusedShape<256>::DC,
              "both paths split the features into the same parts");

} // namespace fc_cuda

#endif /* FC_CUDA_BACKWARD_SHAPES_H */
