/* The Hopper forward's instantiations of head-dim class 64, fp16 and bf16, with their variants.  One
 * file per class, not per instantiation: CuTe's headers take about 30 s of nvcc's front ends per
 * file and an instantiation about 8, so on CI's two cores fewer files build faster. */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_INSTANCE(bf16, __nv_bfloat16, 64)
FC_HOPPER_FWD_TMA_VARIANT(bf16, __nv_bfloat16, 64)
FC_HOPPER_FWD_PAGED_VARIANT(bf16, __nv_bfloat16, 64)
FC_HOPPER_FWD_VARIANT(bf16, __nv_bfloat16, 64, 3)
FC_HOPPER_FWD_INSTANCE(f16, __half, 64)
FC_HOPPER_FWD_TMA_VARIANT(f16, __half, 64)
FC_HOPPER_FWD_PAGED_VARIANT(f16, __half, 64)
FC_HOPPER_FWD_VARIANT(f16, __half, 64, 3)
