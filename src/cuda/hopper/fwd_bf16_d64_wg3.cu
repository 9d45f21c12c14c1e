/* The Hopper forward for bf16 operands, head-dim class 64, three consumer warpgroups (a variant: FLASHC_CUDA_FWD_D64=wg3). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_VARIANT(bf16, __nv_bfloat16, 64, 3)
