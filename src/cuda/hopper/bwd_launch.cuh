/* The launch of one Hopper backward instantiation (included by the bwd_<dtype>_d<class>.cu files). */
#ifndef FC_CUDA_HOPPER_BWD_LAUNCH_CUH
#define FC_CUDA_HOPPER_BWD_LAUNCH_CUH

#include "bwd_kernel.cuh"

namespace fc_hopper {

template <typename T, int D>
cudaError_t bwd_launch(const fc_problem &p, const fc_cuda::BwdLaunch &L, const BwdArgs &a, int grid, cudaStream_t s)
{
    using Tr = BwdTraits<T, D>;
    auto kernel = bwd_hopper_kernel<T, D>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Tr::SMEM);
    if (err != cudaSuccess)
        return err;
    kernel<<<grid, Tr::THREADS, Tr::SMEM, s>>>(p, L, a);
    return cudaGetLastError();
}

} // namespace fc_hopper

#define FC_HOPPER_BWD_INSTANCE(dt, T, d)                                                                                   \
    cudaError_t fc_hopper::bwd_launch_##dt##_d##d(const fc_problem &p, const fc_cuda::BwdLaunch &L, const BwdArgs &a, int grid, \
                                                  cudaStream_t s)                                                         \
    {                                                                                                                      \
        return bwd_launch<T, d>(p, L, a, grid, s);                                                                         \
    }

#endif /* FC_CUDA_HOPPER_BWD_LAUNCH_CUH */
