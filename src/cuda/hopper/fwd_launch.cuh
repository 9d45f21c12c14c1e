/* The launch of one Hopper forward instantiation (included by the fwd_<dtype>_d<class>.cu files). */
#ifndef FC_CUDA_HOPPER_FWD_LAUNCH_CUH
#define FC_CUDA_HOPPER_FWD_LAUNCH_CUH

#include "fwd.h"
#include "fwd_kernel.cuh"

namespace fc_hopper {

template <typename T, int D, int WG> cudaError_t fwd_launch(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s)
{
    using Tr = FwdTraits<T, D, WG>;
    auto kernel = fwd_hopper_kernel<T, D, WG>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Tr::SMEM);
    if (err != cudaSuccess)
        return err;
    kernel<<<grid, Tr::THREADS, Tr::SMEM, s>>>(p, a);
    return cudaGetLastError();
}

} // namespace fc_hopper

#define FC_HOPPER_FWD_INSTANCE(dt, T, d)                                                                            \
    cudaError_t fc_hopper::fwd_launch_##dt##_d##d(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s) \
    {                                                                                                               \
        return fwd_launch<T, d, 2>(p, a, grid, s);                                                                  \
    }
/* a variant with wg consumer warpgroups (fwd_traits.cuh) */
#define FC_HOPPER_FWD_VARIANT(dt, T, d, wg)                                                                                \
    cudaError_t fc_hopper::fwd_launch_##dt##_d##d##_wg##wg(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s) \
    {                                                                                                                      \
        return fwd_launch<T, d, wg>(p, a, grid, s);                                                                        \
    }

#endif /* FC_CUDA_HOPPER_FWD_LAUNCH_CUH */
