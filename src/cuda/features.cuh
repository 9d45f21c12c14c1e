/*
 * Features compiled into the 16-bit kernels only where a problem has them: template FEAT bits on
 * separate *_feat_kernel instantiations, so that the kernels that run by default keep their code
 * (tools/sass-plain.sh checks their SASS).
 */
#ifndef FC_CUDA_FEATURES_CUH
#define FC_CUDA_FEATURES_CUH

#include "../core/terms.h"

namespace fc_cuda {

constexpr int kFeatPhilox = 1; /* dropout generated on the device from a seed and offset (core/philox.h) */

/* The FEAT bits a problem needs. */
inline int feat_bits(const fc_problem &p) { return p.drop_philox ? kFeatPhilox : 0; }

/* Whether a problem drops elements, as a kernel with FEAT sees it. */
template <int FEAT> __device__ __forceinline__ bool drops(const fc_problem &p)
{
    return (FEAT & kFeatPhilox) || p.drop_bits;
}

/* Whether element (n1, i, j) is kept: the caller's keep bit, or (kFeatPhilox) the generated one,
 * the CPU's very bit (core/terms.h fc_dropout_keeps). */
template <int FEAT>
__device__ __forceinline__ bool keeps(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int64_t j)
{
    if (FEAT & kFeatPhilox)
        return fc_dropout_keeps(&p, &bt, n1, i, j);
    return fc_keep_bit(p.drop_bits, fc_keep_bit_index(&bt, n1, i, j));
}

} // namespace fc_cuda

#endif /* FC_CUDA_FEATURES_CUH */
