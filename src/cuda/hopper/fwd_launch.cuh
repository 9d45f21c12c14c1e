/* The launch of one Hopper forward instantiation (included by the fwd_<dtype>_d<class>.cu files). */
#ifndef FC_CUDA_HOPPER_FWD_LAUNCH_CUH
#define FC_CUDA_HOPPER_FWD_LAUNCH_CUH

#include "fwd.h"
#include "fwd_kernel.cuh"

namespace fc_hopper {

template <class Tr> cudaError_t fwd_start(void (*kernel)(fc_problem, FwdArgs), const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s)
{
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Tr::SMEM);
    if (err != cudaSuccess)
        return err;
    kernel<<<grid, Tr::THREADS, Tr::SMEM, s>>>(p, a);
    return cudaGetLastError();
}

template <typename T, int D, int WG, bool TMA_OUT = false, bool PAGED = false>
cudaError_t fwd_launch(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s)
{
    if constexpr (PAGED)
        return fwd_start<FwdTraits<T, D, 2>>(fwd_hopper_kernel_paged<T, D>, p, a, grid, s);
    else if constexpr (TMA_OUT)
        return fwd_start<FwdTraits<T, D, 2>>(fwd_hopper_kernel_tma_store<T, D>, p, a, grid, s);
    else
        return fwd_start<FwdTraits<T, D, WG>>(fwd_hopper_kernel<T, D, WG>, p, a, grid, s);
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

/* the TMA-store epilogue's variant (FLASHC_CUDA_FWD_EPILOGUE=tma) */
#define FC_HOPPER_FWD_TMA_VARIANT(dt, T, d)                                                                             \
    cudaError_t fc_hopper::fwd_launch_##dt##_d##d##_tma(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s) \
    {                                                                                                                   \
        return fwd_launch<T, d, 2, true>(p, a, grid, s);                                                                \
    }

/* the paged key/value variant (fwd_<dtype>_d<class>_paged.cu) */
#define FC_HOPPER_FWD_PAGED_VARIANT(dt, T, d)                                                                             \
    cudaError_t fc_hopper::fwd_launch_##dt##_d##d##_paged(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s) \
    {                                                                                                                     \
        return fwd_launch<T, d, 2, false, true>(p, a, grid, s);                                                           \
    }

#endif /* FC_CUDA_HOPPER_FWD_LAUNCH_CUH */
