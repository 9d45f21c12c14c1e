/* The Hopper forward's instantiations of head-dim class 128, fp16 and bf16, with their variants (one
 * file per class: fwd_d64.cu says why). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_INSTANCE(bf16, __nv_bfloat16, 128)
FC_HOPPER_FWD_TMA_VARIANT(bf16, __nv_bfloat16, 128)
FC_HOPPER_FWD_PAGED_VARIANT(bf16, __nv_bfloat16, 128)
FC_HOPPER_FWD_INSTANCE(f16, __half, 128)
FC_HOPPER_FWD_TMA_VARIANT(f16, __half, 128)
FC_HOPPER_FWD_PAGED_VARIANT(f16, __half, 128)
