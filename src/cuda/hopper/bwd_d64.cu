/* The Hopper backward's instantiations of head-dim class 64, fp16 and bf16 (one file per class, as
 * the forward's: fwd_d64.cu says why). */
#include "bwd_launch.cuh"

FC_HOPPER_BWD_INSTANCE(bf16, __nv_bfloat16, 64)
FC_HOPPER_BWD_INSTANCE(f16, __half, 64)
