/*
 * The tensor-core decode's instantiations (decode_mma.cu) as seen by the plan (decode.cu).
 */
#ifndef FC_CUDA_DECODE_MMA_H
#define FC_CUDA_DECODE_MMA_H

#include "decode_mma_kernel.cuh"

namespace fc_cuda {

typedef void (*MmaFn)(const fc_problem, const MmaLaunch);

/* One instantiation: the kernel and its dynamic shared memory at 3 and 2 stages per warp. */
struct MmaKernel {
    MmaFn fn;
    size_t smem3, smem2, stage_bytes2; /* stage_bytes2: the stages' bytes at 2 stages (merge weights) */
};

/* The kernel for key/value dtype kv (fp16, bf16, int8), head-dim class 64/128/256 and rows ≤ 8
 * (one n tile of Oᵀ) or ≤ 16 (two); variant: bits of kMmaLinearIssue | kMmaWideMerge |
 * kMmaPositionsM | kMmaIntK (0: the default kernel). */
MmaKernel mma_kernel(fc_dtype kv, int dclass, int rows, int variant);

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_MMA_H */
